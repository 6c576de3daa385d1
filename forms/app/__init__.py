"""The application layer: the one commit loop and everything built on it.

``forms.app.loop`` is the loop every write goes through (load, migrate, plan, compare-and-set,
retry); the write tools (``writes``), the read tools (``reads``), hook runs (``hooks``) and
approval decisions (``approvals``) are built on it, tool calls are recorded for replay
(``calls``), and ``service.FormService`` is the facade handlers call. It uses the core and the
model-facing surface (``forms.surface``) and reaches storage only through the port
(``forms.storage.port``).
"""
