"""The field tools: add, update, delete and move a field or block, and set a ``when``.

Each takes the ``WorkingCopy`` of the draft, its parsed arguments, the editor's selection and
the plan's limits, changes the draft and returns the one sentence the model reads.
``edits.apply_edit`` checks the result (shape, references) before anything is kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, TypeAdapter

from forms.compile_steps import STEP_METHODS
from forms.documents.edit_arguments import (
    AddField,
    DeleteField,
    Limits,
    MoveField,
    Selection,
    SetConditionalLogic,
    UpdateField,
)
from forms.documents.edit_checks import describe_rule, readers
from forms.documents.edit_draft import Data, Notes, WorkingCopy, plan_limit, sent_updates, slot
from forms.documents.edit_errors import EditError, sentence
from forms.documents.edit_layout import derive_id, merge, unique_id, with_block_defaults
from forms.documents.edit_names import meant_by_rule
from forms.documents.edit_rename import rename_field, renamed_to
from forms.documents.edit_values import read_rule
from forms.documents.field_types import index_document
from forms.documents.model import BLOCK_KINDS, ITEM_MODELS, Rule, kinds_of
from forms.documents.rules import RuleError, RuleField, compile_rule

KEYS_OF_KIND: Mapping[str, frozenset[str]] = {
    kind: frozenset(model.model_fields) for model in ITEM_MODELS for kind in kinds_of(model)
}
"""The keys an item of each kind takes."""


def new_item(sent: BaseModel, taken: set[str], notes: Notes) -> Data:
    """An item as sent to ``add_field`` or ``create_form``, made whole: an id (derived from
    the label when left out, made unique, noted when rewritten) and its kind's defaults.
    ``taken`` gets the id. Its rule's values are read by ``read_item_rule``, once the fields
    it reads are known."""
    data: Data = sent.model_dump(mode="json", by_alias=True, exclude_unset=True, exclude_none=True)
    kind = str(data["kind"])
    block = kind in BLOCK_KINDS
    wanted = data.get("id") or derive_id(str(data.get("label", "")), kind if block else "field")
    final = unique_id(wanted, taken if block else taken | STEP_METHODS)
    if "id" in data and final != data["id"]:
        notes.ids[data["id"]] = final
    taken.add(final)
    return with_block_defaults({"id": final, **{k: v for k, v in data.items() if k != "id"}})


_RULE: TypeAdapter[Rule] = TypeAdapter(Rule)


def read_item_rule(item: Data, known: Mapping[str, RuleField], at: str, notes: Notes) -> None:
    """The values of ``item``'s rule (if it has one) read as the fields it reads take them
    (``edit_values``), in place, and noted at ``at``: where the item is in the call."""
    if "when" not in item:
        return
    when, read = read_rule(_RULE.validate_python(item["when"]), known, f"{at}.when")
    if read:
        item["when"] = when.model_dump(mode="json", by_alias=True, exclude_none=True)
        notes.coerced.extend(read)


def sent_layout(sent: BaseModel) -> dict[str, int]:
    """The keys of the layout an item was sent with (none: empty)."""
    layout: dict[str, int] = sent.model_dump(mode="json", exclude_none=True).get("layout", {})
    return layout


def add_field(
    draft: WorkingCopy, args: AddField, selection: Selection | None, limits: Limits
) -> str:
    position = args.position
    if args.step is None and selection is not None and selection.field and not selection.step:
        step, selected = draft.locate(selection.field, None)
        position = step["items"].index(selected) + 1 if position is None else position
    else:
        step = draft.step(args.step, selection)
    item = new_item(args.field, draft.item_ids(), draft.notes)
    if "when" in item:
        read_item_rule(item, index_document(draft.original).known, "field", draft.notes)
    kind = str(item["kind"])
    if kind not in BLOCK_KINDS and draft.field_count() >= limits.max_fields:
        raise plan_limit("fields", limits.max_fields)
    items = step["items"]
    at = slot(position, len(items), draft.notes, "field")
    items.insert(at, item)
    draft.pack(step, {item["id"]: sent_layout(args.field)})
    where = f" at position {at}" if at < len(items) - 1 else ""
    what = f'field "{item["id"]}" ({kind})' if kind not in BLOCK_KINDS else f'{kind} "{item["id"]}"'
    return f'Added {what} to step "{step["title"]}"{where}.'


def update_field(
    draft: WorkingCopy, args: UpdateField, selection: Selection | None, limits: Limits
) -> str:
    step, item = draft.locate(_field_ref(args.field, selection), args.step)
    updates = sent_updates(args.updates, '{"updates": {"required": true}}')
    if "kind" in updates and updates["kind"] is None:
        raise EditError(
            "invalid",
            "`updates.kind` cannot be null: every item has a kind.",
            "Send the new kind, or leave kind out to keep it.",
        )
    kind = str(updates.get("kind") or item["kind"])
    if (kind in BLOCK_KINDS) != (item["kind"] in BLOCK_KINDS):
        raise EditError(
            "invalid",
            f'"{item["id"]}" is a {item["kind"]}; it cannot become a {kind}.',
            f"Delete it and add a {kind} with add_field instead.",
        )
    renamed = ""
    if updates.get("id", item["id"]) != item["id"]:
        renamed = renamed_to(updates["id"], rename_field(draft, item["id"], updates["id"]))
    layout = updates.get("layout")
    merged = merge(item, updates)
    if isinstance(layout, dict):  # a new column or width without a row: packed again
        stale = {"y"} if "x" in layout else {"x", "y"} if "w" in layout else set()
        merged["layout"] = {
            k: v for k, v in merged["layout"].items() if k not in stale - set(layout)
        }
    if kind != item["kind"]:
        dropped = [k for k in merged if k not in KEYS_OF_KIND[kind]]
        draft.notes.dropped.extend(dropped)
        merged = {k: v for k, v in merged.items() if k not in dropped}
    step["items"][step["items"].index(item)] = with_block_defaults(merged)
    draft.pack(step, {merged["id"]: layout} if isinstance(layout, dict) else None)
    return f"Updated {_name(item)}: {', '.join(updates)}{renamed}."


def delete_field(
    draft: WorkingCopy, args: DeleteField, selection: Selection | None, limits: Limits
) -> str:
    step, item = draft.locate(_field_ref(args.field, selection), args.step)
    using = readers(draft.original, {item["id"]}, set())
    if using:
        raise EditError(
            "in_use",
            f"{_name(item).capitalize()} is read by {_listed(using)}; nothing was deleted.",
            "Change or clear those rules first (set_conditional_logic with when: null), "
            f'then delete "{item["id"]}".',
        )
    step["items"].remove(item)
    return f'Deleted {_name(item)} from step "{step["title"]}".'


def move_field(
    draft: WorkingCopy, args: MoveField, selection: Selection | None, limits: Limits
) -> str:
    step, item = draft.locate(_field_ref(args.field, selection), None)
    if args.to_step is None and args.position is None:
        raise EditError(
            "invalid",
            "Where to? Send `position` (0-based), `to_step`, or both.",
            'E.g. {"field": "email", "position": 0} moves it to the top of its step.',
        )
    target = draft.step(args.to_step, None) if args.to_step is not None else step
    step["items"].remove(item)
    at = slot(args.position, len(target["items"]), draft.notes, "field")
    target["items"].insert(at, item)
    if "layout" in item:
        item["layout"] = {k: v for k, v in item["layout"].items() if k in ("w", "h")}
    draft.pack(target)
    return f'Moved {_name(item)} to position {at} of step "{target["title"]}".'


def set_conditional_logic(
    draft: WorkingCopy, args: SetConditionalLogic, selection: Selection | None, limits: Limits
) -> str:
    index = index_document(draft.original)
    holder: Data
    if args.target == "field":
        _, holder = draft.locate(_field_ref(args.id, selection), None)
        if holder["kind"] in BLOCK_KINDS:
            raise EditError(
                "invalid",
                f'"{holder["id"]}" is a {holder["kind"]}; only fields and steps take a rule.',
            )
        known = index.known.get(holder["id"])
        before = known.position if known is not None else 0
        what = f'Field "{holder["id"]}"'
    else:
        holder = draft.step(args.id, selection)
        before = index.first_field[holder["id"]]
        what = f'Step "{holder["id"]}"'
    if args.when is None:
        holder.pop("when", None)
        return f"{what} now always applies."
    when, read = read_rule(args.when, index.known, "when")
    try:
        compile_rule(when, index.known, before, f"the rule of {what.lower()}")
    except RuleError as exc:
        raise EditError(
            "invalid_rule",
            sentence(str(exc)),
            _readable(draft, index.known, before),
            meant_by_rule(draft.original, when),
        ) from None
    draft.notes.coerced.extend(read)
    holder["when"] = when.model_dump(mode="json", by_alias=True, exclude_none=True)
    return f"{what} now applies only when {describe_rule(when)}."


def _readable(draft: WorkingCopy, known: Mapping[str, Any], before: int) -> str:
    """The fields a rule at ``before`` may read, with their kinds (and options)."""
    items = {str(i["id"]): i for _, i in draft.items()}
    usable = [name for name, k in known.items() if k.position < before]
    if not usable:
        return (
            "Nothing is declared before it, so its rule has nothing to read: a rule reads "
            "fields declared earlier. Move it later, or put the rule on a later field or step."
        )
    shown = []
    for name in usable[:30]:
        item = items[name]
        options = [str(o["value"]) for o in item.get("options", [])]
        shown.append(f"{name} ({item['kind']}" + (f": {', '.join(options)})" if options else ")"))
    return "It may read: " + "; ".join(shown) + "."


def _field_ref(ref: str | None, selection: Selection | None) -> str | None:
    if ref is not None:
        return ref
    return selection.field if selection is not None else None


def _name(item: Data) -> str:
    if item["kind"] in BLOCK_KINDS:
        return f'{item["kind"]} "{item["id"]}"'
    return f'field "{item["id"]}"'


def _listed(parts: list[str]) -> str:
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " and " + parts[-1]
