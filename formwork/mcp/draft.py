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

from formwork.mcp.backends import BACKEND_UNAVAILABLE, BackendUnavailable, JsonDict

NO_DRAFT = "no_draft"
"""The builder's refusal of a read or edit on a draft its tenant does not have."""


def builder_unavailable(detail: str) -> JsonDict:
    """The result of a call the builder could not be asked, for the model to read (the code
    the forms' backend and the builder agent's use for the same case)."""
    return {
        "ok": False,
        "error": BACKEND_UNAVAILABLE,
        "message": f"The form builder did not answer ({detail}); the change may not have "
        "been applied.",
        "hint": "Tell the person the form could not be changed just now; do not repeat the "
        "call in this turn.",
    }


class _Calls(Protocol):
    async def call(
        self, tool: str, arguments: Mapping[str, Any], tool_call_id: str
    ) -> JsonDict: ...


async def draft_status(backend: _Calls) -> list[str]:
    """The draft's outline lines, read with ``inspect_form`` (a read the builder does not
    record: the id is a fresh one and nothing is written); empty when the tenant has no such
    draft (the server then shows ``formwork.mcp.surface.no_draft``'s text).
    ``BackendUnavailable`` when it cannot be read."""
    read = await backend.call("inspect_form", {}, f"mcp-status-{uuid.uuid4().hex}")
    if read.get("ok") is True:
        return outline_lines(read)
    if read.get("error") == NO_DRAFT:
        return []
    detail = read.get("message") or read.get("error") or "no answer"
    raise BackendUnavailable(f"the draft could not be read: {detail}")


def outline_lines(read: Mapping[str, Any]) -> list[str]:
    """``inspect_form``'s outline in lines: the form, each step then its items (the
    outline's own ``id: kind "Label"`` lines), then the checkpoints."""
    form = read.get("form")
    form = form if isinstance(form, Mapping) else {}
    lines = [f'Form "{form.get("title", "")}" (id {form.get("id", "")})']
    for step in _rows(form.get("steps")):
        head = f'Step {step.get("id")}: "{step.get("title")}"'
        if "when" in step:
            head += f", shown when {step['when']}"
        lines.append(head)
        items = [f"  {item}" for item in _list(step.get("items"))]
        lines += items or ["  (no fields)"]
    checkpoints = _list(form.get("checkpoints"))
    if checkpoints:
        lines.append("Checkpoints:")
        lines += [f"  {checkpoint}" for checkpoint in checkpoints]
    return lines


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _rows(value: Any) -> list[Mapping[str, Any]]:
    return [row for row in _list(value) if isinstance(row, Mapping)]
