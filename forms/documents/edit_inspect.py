"""Reading a draft for the builder: ``inspect`` (form, step or field) and the selection line.

Both read the draft as it is now, so a model that adds a field, inspects it and sets a rule on
its id in the same turn sees its own edits. What they return is compact and JSON-able: the
form scope is an outline (ids, kinds, labels, rules in words), not the document.
"""

from __future__ import annotations

from typing import Literal

from pydantic import JsonValue

from forms.documents.edit_arguments import Selection
from forms.documents.edit_checks import describe_action, describe_rule, readers
from forms.documents.edit_draft import Notes, WorkingCopy
from forms.documents.model import BLOCK_KINDS, Divider, FormDocument, Heading, Item, Paragraph

Scope = Literal["form", "step", "field"]


def inspect(
    draft: FormDocument, scope: Scope, id: str | None = None, selection: Selection | None = None
) -> dict[str, JsonValue]:
    """The draft (``form``), one step with its items in full (``step``), or one item in full
    with where it is and what reads it (``field``). ``id`` defaults to the selection;
    ``EditError`` (``not_found``, ``no_selection``) as the edits raise it."""
    if scope == "form":
        return outline(draft)
    working = WorkingCopy(draft, Notes([]))
    if scope == "step":
        step = working.step(id, selection)
        return {"step": step}
    ref = id if id is not None else selection.field if selection is not None else None
    step, item = working.locate(ref, None)
    result: dict[str, JsonValue] = {
        "field": item,
        "step": step["id"],
        "position": step["items"].index(item),
    }
    if item["kind"] not in BLOCK_KINDS:
        result["read_by"] = list(readers(draft, {item["id"]}, set()))
    return result


def outline(draft: FormDocument) -> dict[str, JsonValue]:
    """The form in a few lines: each step with its items as ``id: kind "Label"`` (``?`` for
    optional, ``memory key`` for the fact key it holds, ``when ...`` for a rule), each
    checkpoint with its rule."""
    steps: list[JsonValue] = []
    for step in draft.steps:
        row: dict[str, JsonValue] = {"id": step.id, "title": step.title}
        if step.when is not None:
            row["when"] = describe_rule(step.when)
        row["items"] = [_line(item) for item in step.items]
        steps.append(row)
    form: dict[str, JsonValue] = {"id": draft.id, "title": draft.title, "steps": steps}
    if draft.checkpoints:
        form["checkpoints"] = [
            f"{c.id}: when {describe_rule(c.when)} -> {', '.join(map(describe_action, c.then))}"
            for c in draft.checkpoints
        ]
    return {"form": form}


def _line(item: Item) -> str:
    if isinstance(item, Heading | Paragraph):
        text = item.text if len(item.text) <= 40 else item.text[:39] + "…"
        return f'{item.id}: {item.kind} "{text}"'
    if isinstance(item, Divider):
        return f"{item.id}: divider"
    line = f'{item.id}: {item.kind}{"" if item.required else "?"} "{item.label}"'
    if item.memory is not None:
        line += f" memory {item.memory}"
    if item.when is not None:
        line += f" when {describe_rule(item.when)}"
    return line


def selection_line(draft: FormDocument, selection: Selection | None) -> str:
    """What the editor has selected, as the model reads it each turn:
    ``Selected field "email": "Email" (email) in step "Contact"``, a step, or nothing."""
    working = WorkingCopy(draft, Notes([]))
    if selection is not None and selection.field is not None:
        step, item = working.locate(selection.field, None)
        name = item.get("label") or item.get("text") or item["id"]
        return f'Selected field "{item["id"]}": "{name}" ({item["kind"]}) in step "{step["title"]}"'
    if selection is not None and selection.step is not None:
        step = working.step(selection.step, None)
        return f'Selected step "{step["id"]}": "{step["title"]}"'
    return "Nothing is selected."
