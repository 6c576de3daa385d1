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


def outline_lines(form: Mapping[str, Any]) -> list[str]:
    """The lines of an outline's ``form`` (``{"id", "title", "steps", "checkpoints"?}``)."""
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
