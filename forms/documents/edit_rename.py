"""Renaming a field or a step: the id changes, and every part of the draft that names it is
changed with it, so no reference is left pointing at nothing.

A field is named by rules (``when`` of fields, steps and checkpoints), by checkpoints' ``set``
actions and by ``{field_id}`` placeholders in ``fail`` messages; a step by ``jump`` actions.
Layouts name no ids. ``update_field`` and ``update_step`` rename with ``updates.id``; the new
id must be free (``invalid`` otherwise, naming what has it), and the sentence names every part
that was changed with it.
"""

from __future__ import annotations

from typing import Any

from forms.compile_steps import STEP_METHODS
from forms.documents.edit_draft import Data, WorkingCopy
from forms.documents.edit_errors import EditError


def rename_field(draft: WorkingCopy, old: str, new: str) -> list[str]:
    """``old`` renamed ``new`` in every rule, ``set`` action and placeholder of ``draft``;
    the parts changed, in words. ``invalid`` when ``new`` is taken or reserved."""
    taken = draft.item_ids() - {old}
    if new in taken or new in STEP_METHODS:
        what = "another field or block" if new in taken else "every step (a reserved name)"
        raise EditError(
            "invalid",
            f'The id "{new}" is already used by {what}; ids are unique in the form.',
            "Send another id; nothing was applied.",
        )
    changed: list[str] = []
    for step in draft.steps:
        if _rule(step.get("when"), old, new):
            changed.append(f'step "{step["id"]}"')
        for item in step.get("items", []):
            if _rule(item.get("when"), old, new):
                changed.append(f'field "{item["id"]}"')
    for checkpoint in draft.data.get("checkpoints", []):
        named = _rule(checkpoint["when"], old, new)
        for action in checkpoint["then"]:
            if action["action"] == "set" and action["field"] == old:
                action["field"], named = new, True
            if action["action"] == "fail" and "{" + old + "}" in action["message"]:
                action["message"] = action["message"].replace("{" + old + "}", "{" + new + "}")
                named = True
        if named:
            changed.append(f'checkpoint "{checkpoint["id"]}"')
    return changed


def rename_step(draft: WorkingCopy, step: Data, new: str) -> list[str]:
    """``step`` renamed ``new``, and every ``jump`` to it; the parts changed, in words.
    ``invalid`` when another step has ``new``."""
    old = step["id"]
    if any(s["id"] == new for s in draft.steps if s is not step):
        raise EditError(
            "invalid",
            f'The id "{new}" is already used by another step; step ids are unique.',
            "Send another id; nothing was applied.",
        )
    changed: list[str] = []
    for checkpoint in draft.data.get("checkpoints", []):
        jumps = [a for a in checkpoint["then"] if a["action"] == "jump" and a["step"] == old]
        for action in jumps:
            action["step"] = new
        if jumps:
            changed.append(f'checkpoint "{checkpoint["id"]}"')
    step["id"] = new
    return changed


def _rule(rule: Any, old: str, new: str) -> bool:
    """Renames ``old`` in a rule (as JSON), in place; whether it named it."""
    if isinstance(rule, list):
        return any([_rule(part, old, new) for part in rule])  # every part, not the first
    if not isinstance(rule, dict):
        return False
    named = False
    if rule.get("field") == old and "op" in rule:
        rule["field"], named = new, True
    for key in ("all", "any", "not"):
        named = _rule(rule.get(key), old, new) or named
    return named


def renamed_to(new: str, changed: list[str]) -> str:
    """A rename to ``new`` and the parts it changed, as the end of a sentence."""
    also = f"; renamed where {', '.join(changed)} named it" if changed else ""
    return f' (now "{new}"{also})'
