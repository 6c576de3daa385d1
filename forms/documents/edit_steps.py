"""The form and step tools: create (or rebuild) the form and update its own keys; add, update
(rename included), delete and move a step.

``create_form`` is for an empty canvas or an explicit rebuild (``replace: true``), and takes
the structure only: a title, the steps, and a few fields at most (``MAX_CREATE_ITEMS``). A
create carrying a whole form is the old "print the document" contract wearing a tool name; it
is refused, so forms are built in small calls the person can watch and the model can recover
from one at a time.
"""

from __future__ import annotations

from forms.documents.edit_arguments import (
    MAX_CREATE_ITEMS,
    AddStep,
    CreateForm,
    DeleteStep,
    Limits,
    MoveStep,
    Selection,
    StepInput,
    UpdateForm,
    UpdateStep,
)
from forms.documents.edit_checks import readers
from forms.documents.edit_draft import (
    Data,
    Notes,
    WorkingCopy,
    finish,
    plan_limit,
    sent_updates,
    slot,
)
from forms.documents.edit_errors import EditError
from forms.documents.edit_fields import new_item, read_item_rule, sent_layout
from forms.documents.edit_layout import derive_id, merge, pack, unique_id
from forms.documents.edit_rename import rename_step, renamed_to
from forms.documents.field_types import index_document
from forms.documents.model import BLOCK_KINDS, FormDocument


def is_empty(document: FormDocument) -> bool:
    """An empty canvas: one step at most, no fields or blocks, no checkpoints."""
    return (
        len(document.steps) <= 1
        and not any(step.items for step in document.steps)
        and not document.checkpoints
    )


def create_form(
    current: FormDocument | None, args: CreateForm, notes: Notes, limits: Limits
) -> tuple[Data, str]:
    """The data of a new draft, and the sentence; the form keeps its id on a rebuild."""
    _may_create(current, args, limits)
    form_id = args.id or (current.id if current is not None else derive_id(args.title, "form", "-"))
    step_ids: set[str] = set()
    item_ids: set[str] = set()
    steps = [_new_step(step, step_ids, item_ids, notes) for step in args.steps or []]
    if not steps:
        steps.append({"id": derive_id(args.title, "step"), "title": args.title, "items": []})
    document: Data = {"id": form_id, "title": args.title, "steps": steps}
    if args.description:
        document["description"] = args.description
    if any("when" in item for step in steps for item in step["items"]):
        known = index_document(finish(document)).known
        for n, made in enumerate(steps):
            for m, item in enumerate(made["items"]):
                read_item_rule(item, known, f"steps.{n}.items.{m}", notes)
    verb = "Rebuilt" if current is not None and not is_empty(current) else "Created"
    fields = sum(1 for s in steps for i in s["items"] if i["kind"] not in BLOCK_KINDS)
    if fields > limits.max_fields:
        raise plan_limit("fields", limits.max_fields)
    return document, (
        f'{verb} form "{args.title}" ({form_id}) with {_count(len(steps), "step")} '
        f"({', '.join(s['id'] for s in steps)}) and {_count(fields, 'field')}."
    )


def _may_create(current: FormDocument | None, args: CreateForm, limits: Limits) -> None:
    """``EditError`` for a create_form that carries too much, would replace a draft with
    content without ``replace``, or has more steps than the limit."""
    carried = sum(len(step.items) for step in args.steps)
    if carried > MAX_CREATE_ITEMS:
        raise EditError(
            "too_large",
            f"create_form carries {carried} fields and blocks; it takes the structure and at "
            f"most {MAX_CREATE_ITEMS}.",
            "Call create_form with the title and the steps (titles only, or a few fields), then "
            "add each field with add_field: the person sees the form assemble, and one bad "
            "field costs one call.",
        )
    if current is not None and not is_empty(current) and not args.replace:
        fields = sum(1 for s in current.steps for i in s.items if i.kind not in BLOCK_KINDS)
        raise EditError(
            "not_empty",
            f'The draft "{current.title}" already has {_count(len(current.steps), "step")} and '
            f"{_count(fields, 'field')}; create_form would replace all of them.",
            "Change it with add_step, add_field, update_field, ...; send replace: true only "
            "if the person asked to start over.",
        )
    if len(args.steps) > limits.max_steps:
        raise plan_limit("steps", limits.max_steps)


def _new_step(step: StepInput, step_ids: set[str], item_ids: set[str], notes: Notes) -> Data:
    """A sent step's data: a unique id (a changed one noted), its items made and packed."""
    wanted = step.id or derive_id(step.title, "step")
    step_id = unique_id(wanted, step_ids)
    if step.id is not None and step_id != step.id:
        notes.ids[step.id] = step_id
    step_ids.add(step_id)
    data: Data = {"id": step_id, "title": step.title}
    data.update({k: v for k, v in (("preview", step.preview), ("guidance", step.guidance)) if v})
    data["items"] = [new_item(item, item_ids, notes) for item in step.items]
    pack(data["items"])
    notes.repacked(
        data["items"],
        {
            made["id"]: sent_layout(item)
            for item, made in zip(step.items, data["items"], strict=True)
        },
    )
    return data


def add_step(draft: WorkingCopy, args: AddStep, selection: Selection | None, limits: Limits) -> str:
    steps = draft.steps
    if len(steps) >= limits.max_steps:
        raise plan_limit("steps", limits.max_steps)
    position = args.position
    if position is None and selection is not None and (selection.step or selection.field):
        position = steps.index(draft.step(None, selection)) + 1
    step_id = unique_id(args.id or derive_id(args.title, "step"), {s["id"] for s in steps})
    if args.id is not None and step_id != args.id:
        draft.notes.ids[args.id] = step_id
    step: Data = {"id": step_id, "title": args.title, "items": []}
    step.update({k: v for k, v in (("preview", args.preview), ("guidance", args.guidance)) if v})
    at = slot(position, len(steps), draft.notes, "step")
    steps.insert(at, step)
    return f'Added step "{args.title}" ({step_id}) as step {at + 1} of {len(steps)}.'


def update_step(
    draft: WorkingCopy, args: UpdateStep, selection: Selection | None, limits: Limits
) -> str:
    step = draft.step(args.step, selection)
    updates = sent_updates(args.updates, '{"updates": {"title": "Contact details"}}')
    old, renamed = step["id"], ""
    if updates.get("id", old) != old:
        renamed = renamed_to(updates["id"], rename_step(draft, step, updates["id"]))
    steps = draft.steps
    steps[steps.index(step)] = merge(step, updates)
    return f'Updated step "{old}": {", ".join(updates)}{renamed}.'


def update_form(
    draft: WorkingCopy, args: UpdateForm, selection: Selection | None, limits: Limits
) -> str:
    updates = sent_updates(args.updates, '{"updates": {"closes_on_complete": true}}')
    for key in ("title", "closes_on_complete"):
        if key in updates and updates[key] is None:
            raise EditError(
                "invalid",
                f"`updates.{key}` cannot be null: every form has one.",
                f"Send the new {key}, or leave it out to keep it.",
            )
    merged = merge(draft.data, updates)  # null clears description and on_complete
    draft.data.clear()
    draft.data.update(merged)
    return f'Updated the form "{draft.data["title"]}": {", ".join(updates)}.'


def delete_step(
    draft: WorkingCopy, args: DeleteStep, selection: Selection | None, limits: Limits
) -> str:
    step = draft.step(args.step, selection)
    if len(draft.steps) == 1:
        raise EditError(
            "only_step",
            f'Step "{step["title"]}" is the only step; a form needs at least one.',
            "Add another step first, or delete the fields you do not want instead.",
        )
    fields = {str(i["id"]) for i in step["items"] if i["kind"] not in BLOCK_KINDS}
    using = readers(draft.original, fields, {step["id"]})
    if using:
        raise EditError(
            "in_use",
            f'{", ".join(using)} refer to step "{step["id"]}" or its fields; nothing was deleted.',
            "Change or clear those rules first (set_conditional_logic with when: null), or move "
            "the fields they read to another step with move_field, then delete the step.",
        )
    draft.steps.remove(step)
    return f'Deleted step "{step["title"]}" and its {_count(len(fields), "field")}.'


def move_step(
    draft: WorkingCopy, args: MoveStep, selection: Selection | None, limits: Limits
) -> str:
    step = draft.step(args.step, selection)
    steps = draft.steps
    steps.remove(step)
    at = slot(args.position, len(steps), draft.notes, "step")
    steps.insert(at, step)
    order = ", ".join(s["id"] for s in steps)
    return f'Moved step "{step["id"]}" to position {at}; the steps are now {order}.'


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
