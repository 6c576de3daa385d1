"""A form document's outline (``forms.documents.outline``, what the builder's ``inspect_form``
answers) as the lines a model keeps in context: the form, each step then its items (the
outline's own ``id: kind "Label"`` lines), then the checkpoints.

The builder agent's loop (``formwork.agents.context``) writes it from a draft in process, and
the MCP server's draft resource (``formwork.mcp.draft``) from ``inspect_form``'s answer over
HTTP: one rendering, so a model sees one draft the same way however it reaches the builder.
This module imports nothing of the documents, so the MCP server over stdio stays light.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from forms.surface.plain import inline


def outline_lines(form: Mapping[str, Any]) -> list[str]:
    """The lines of an outline's ``form`` (``{"id", "title", "steps", "checkpoints"?}``): one
    per step, item and checkpoint, whatever their text holds (``inline``)."""
    lines = [f'Form "{_text(form.get("title", ""))}" (id {_text(form.get("id", ""))})']
    for step in _rows(form.get("steps")):
        head = f'Step {_text(step.get("id"))}: "{_text(step.get("title"))}"'
        if "when" in step:
            head += f", shown when {_text(step['when'])}"
        lines.append(head)
        items = [f"  {_text(item)}" for item in _list(step.get("items"))]
        lines += items or ["  (no fields)"]
    checkpoints = _list(form.get("checkpoints"))
    if checkpoints:
        lines.append("Checkpoints:")
        lines += [f"  {_text(checkpoint)}" for checkpoint in checkpoints]
    return lines


def _text(value: Any) -> str:
    return inline(str(value))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _rows(value: Any) -> list[Mapping[str, Any]]:
    return [row for row in _list(value) if isinstance(row, Mapping)]
