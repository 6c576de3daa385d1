"""The draft over MCP, as any builder backend reads it: its outline for the host's context,
and the result of a call the builder could not be asked (``formwork.mcp.builder`` says what
the builder's MCP server serves).

Kept apart from ``formwork.mcp.builder`` so that the backend over HTTP
(``formwork.mcp.remote``, which ``formwork mcp`` loads) never imports the builder's argument
models: the API serves their definitions. Nothing here imports the SDK.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, Protocol

from forms.surface.outline import outline_lines
from formwork.mcp.backends import JsonDict, McpBackendUnavailable

NO_DRAFT = "no_draft"
"""The builder's refusal of a read or edit on a draft its tenant does not have."""


class _Calls(Protocol):
    async def call(
        self, tool: str, arguments: Mapping[str, Any], tool_call_id: str
    ) -> JsonDict: ...


async def draft_status(backend: _Calls) -> list[str]:
    """The draft's outline lines, read with ``inspect_form`` (a read the builder does not
    record: the id is a fresh one and nothing is written); empty when the tenant has no such
    draft (the server then shows ``formwork.mcp.surface.no_draft``'s text).
    ``McpBackendUnavailable`` when it cannot be read."""
    read = await backend.call("inspect_form", {}, f"mcp-status-{uuid.uuid4().hex}")
    if read.get("ok") is True:
        form = read.get("form")
        return outline_lines(form if isinstance(form, Mapping) else {})
    if read.get("error") == NO_DRAFT:
        return []
    detail = read.get("message") or read.get("error") or "no answer"
    raise McpBackendUnavailable(f"the draft could not be read: {detail}")
