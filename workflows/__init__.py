"""Temporal workflows, activities and the worker for durable hook dispatch.

``HookWorkflow`` runs one outbox entry (one hook occurrence), its workflow id being the entry's
idempotency key; its activity calls ``FormService.run_hook``, the code the in-process
dispatcher runs too. ``ApprovalWorkflow`` holds one pending approval (workflow id = the
approval id) on a durable timer until a decision is signalled or its deadline applies the
timeout outcome. ``formwork.temporal.worker.serve`` serves them, in the process
``python -m formwork.worker`` runs. ``docs/dispatch.md`` has the guarantees in plain words.

``formwork`` (the composition root) imports this package; this package imports nothing of
``formwork``: its settings are values of its own types (``settings``).

Modules: ``shared`` (inputs, outputs, retry policies: safe in the workflow sandbox), ``hooks``
and ``approvals`` (the workflows), ``activities``, ``starter`` (starting runs by key),
``client`` (connecting from configuration), ``settings`` (the Temporal settings), ``worker``
(serving), ``dispatch`` (the dispatcher), ``migrations`` and ``migration_starter`` (bulk
migrations), ``backlog`` (the task queue's backlog).
"""
