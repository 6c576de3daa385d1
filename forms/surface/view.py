"""What the model reads, rebuilt on every call from the compiled form and the instance.

The model never sees a definition. It sees:

* the **status line** (tier 0): one or two lines per open instance, meant for the system prompt
  on every turn (``forms.surface.status_line``; ``status_line`` and ``show`` are re-exported
  here for the reads' callers);
* **reads** (tier 1, this module), pulled on demand: the open step, any step, a field with its
  revision log, or the whole outline, with fields gated off marked so the agent never promises a
  question a branch may skip.

Memory supplies the hedge a value cannot carry: an answer memory filled is marked as such
(``from memory, unconfirmed``) in the status line and on its row until the user confirms it,
and a value memory only offers is shown for the agent to ask about (``from memory, confirm:
Weight 70 kg, said 2026-09-03``), never as an answer.

What undo and redo would do is one line each at view level, not a flag on every row.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from forms.compiled import CompiledField, CompiledForm, CompiledStep, keep_on
from forms.evaluation import Evaluation, FieldEval, refusal
from forms.incremental import Core
from forms.instance import FieldHistory, FormInstance, Recollection, Revision
from forms.statuses import STILL_TO_ASK, FieldRowStatus, StepState
from forms.surface.plain import inline
from forms.surface.previews import cased, cased_preview
from forms.surface.recalled import memory_mark, standing
from forms.surface.status_line import form_parts, show, status_line

__all__ = [
    "DECIDED_BY",
    "closed_view",
    "field_row",
    "field_texts",
    "field_view",
    "outline_view",
    "show",
    "status_line",
    "step_state",
    "step_view",
    "undo_redo",
]

DECIDED_BY = "an approver; not asked, not written by the agent"
"""What a read's row says of a field only an approver's decision writes."""


class FieldTexts(NamedTuple):
    """What a field's row shows of its definition, each on one line (``inline``): made once
    per compiled form for the reads (``field_texts``), as every read shows the same few."""

    label: str
    type: str
    """The type string, `` (optional)`` after it for an optional field."""
    ask: str | None
    offered: bool
    head: dict[str, Any]
    """A row's first keys when it shows the type (``id``, ``label``, ``type``): ``field_row``
    starts such a row as a copy of it (never hands it out), where it set the three."""


def texts_of(field: CompiledField) -> FieldTexts:
    kind = inline(field.type.type_string) + (" (optional)" if field.optional else "")
    ask = inline(field.ask) if field.ask else None
    label = inline(field.label)
    head = {"id": field.id, "label": label, "type": kind}
    return FieldTexts(label, kind, ask, field.offered, head)


_TEXTS = "_view_field_texts"


def field_texts(form: CompiledForm) -> Mapping[str, FieldTexts]:
    """Each field's ``FieldTexts`` by id, made on the first call and kept on the form (as a
    cached property keeps its value: the compiled form is immutable)."""
    try:
        texts: Mapping[str, FieldTexts] = form._view_field_texts  # type: ignore[attr-defined]
    except AttributeError:
        texts = keep_on(form, _TEXTS, {f: texts_of(field) for f, field in form.fields.items()})
    return texts


def field_row(
    field: CompiledField,
    fe: FieldEval,
    detail: bool = True,
    closed: bool = False,
    memory: Recollection | None = None,
    texts: FieldTexts | None = None,
) -> dict[str, Any]:
    """One field as the agent sees it: id, label, type, status, and the value if any.

    On a closed instance nothing is still to ask: such a field reads ``unanswered``.
    ``memory`` is what memory filled or offered there that still stands (``standing``). A
    field only an approver decides says so (``decided_by``): it is not asked, nor written by
    the agent. ``texts``: the field's ``FieldTexts`` when the caller has them.
    """
    shown = texts if texts is not None else texts_of(field)
    asking = detail and not closed
    row: dict[str, Any] = shown.head.copy() if asking else {"id": field.id, "label": shown.label}
    status: FieldRowStatus = fe.status
    to_ask = status in STILL_TO_ASK
    row["status"] = "unanswered" if closed and to_ask else status
    revision = fe.revision
    if revision is not None and revision.kind == "value":
        row["value"] = revision.value
    if status == "invalid":
        row["reason"] = "kept from an earlier version, which accepted it; now: " + inline(
            refusal(field, revision) or ""
        )
    if memory is not None:
        row["memory"] = memory_mark(memory)
    if not shown.offered:
        row["decided_by"] = DECIDED_BY
    elif asking and shown.ask is not None and to_ask:
        row["ask"] = shown.ask
    return row


def closed_view(form: CompiledForm, instance: FormInstance, ev: Evaluation) -> dict[str, Any]:
    """A closed instance: its outcome and the answers on record, step by step; nothing is
    pending and no move is offered (every write would be refused)."""
    steps: list[dict[str, Any]] = []
    for step in form.steps.values():
        rows = [
            field_row(form.fields[f], ev.fields[f], detail=False, closed=True)
            for f in step.fields
            if ev.fields[f].status not in ("not_applicable",)
        ]
        if rows:
            steps.append({"step": step.id, "title": inline(step.title), "fields": rows})
    view: dict[str, Any] = {"outcome": instance.state.status}
    if instance.state.closed_reason:
        view["reason"] = inline(instance.state.closed_reason)
    view["steps"] = steps
    return view


_CLOSED_STATES: dict[str, StepState] = {
    "completed": "closed (completed)",
    "terminated": "closed (terminated)",
    "abandoned": "closed (abandoned)",
    "handed_over": "closed (handed_over)",
}
"""A step's state on an instance closed with each status."""


def step_state(instance: FormInstance, ev: Evaluation, step_id: str) -> StepState:
    """A step's ``state`` in a step read (and on the person's page): closed with the
    instance's status, else whether it applies, is revisited, complete or open."""
    if instance.state.status != "open":
        return _CLOSED_STATES[instance.state.status]
    if not ev.step_applies[step_id]:
        return "does not apply with the current answers"
    if ev.revisit == step_id:
        return "revisit"
    return "complete" if ev.step_complete[step_id] else "open"


def step_view(
    form: CompiledForm, instance: FormInstance, ev: Evaluation, step_id: str
) -> dict[str, Any]:
    step = form.steps[step_id]
    view: dict[str, Any] = {"step": step.id, "title": inline(step.title)}
    if instance.state.status != "open":
        view["state"] = step_state(instance, ev, step.id)
        view["fields"] = [field_row(form.fields[f], ev.fields[f], closed=True) for f in step.fields]
        return view
    position = step_position(form, ev, step)
    if position is not None:
        view["position"] = position
    view["state"] = step_state(instance, ev, step.id)
    if step.guidance:
        view["guidance"] = inline(step.guidance)
    marks, texts, fields, readings = (
        standing(form, instance, ev),
        field_texts(form),
        form.fields,
        ev.fields,
    )
    view["fields"] = [  # positional: this runs for every row of every step read
        field_row(fields[f], readings[f], True, False, marks.get(f), texts[f]) for f in step.fields
    ]
    view.update(undo_redo(form, instance))
    return view


def outline_view(form: CompiledForm, instance: FormInstance, ev: Evaluation) -> dict[str, Any]:
    """The whole form: every step with its preview, state and required progress
    (``"2/3 required"``, over required fields that apply), and every field with its status;
    gated parts marked as such."""
    steps: list[dict[str, Any]] = []
    marks, texts = standing(form, instance, ev), field_texts(form)
    for step in form.steps.values():
        entry: dict[str, Any] = {"step": step.id, "title": inline(step.title)}
        preview = step_preview(form, step, ev)
        if preview:
            entry["preview"] = preview
        state: StepState = (
            "does not apply with the current answers"
            if not ev.step_applies[step.id]
            else "complete"
            if ev.step_complete[step.id]
            else "open"
        )
        entry["state"] = state
        progress = step_progress(form, step, ev)
        if progress is not None:
            entry["progress"] = progress
        entry["fields"] = [
            field_row(form.fields[f], ev.fields[f], False, memory=marks.get(f), texts=texts[f])
            for f in step.fields
        ]
        steps.append(entry)
    return {
        "form": form.id,
        "title": inline(form.title),
        "note": "fields marked not_applicable may never be asked; don't promise them",
        "steps": steps,
        **undo_redo(form, instance),
    }


def field_view(
    form: CompiledForm, instance: FormInstance, ev: Evaluation, field_id: str
) -> dict[str, Any]:
    """One field with its whole revision log, oldest first."""
    field = form.fields[field_id]
    history = instance.field(field_id)
    closed = instance.state.status != "open"
    mark = standing(form, instance, ev).get(field_id)
    row = field_row(field, ev.fields[field_id], closed=closed, memory=mark)
    row["step"] = field.step
    row["revisions"] = [
        _revision_row(i, r, i == history.cursor) for i, r in enumerate(history.revisions)
    ]
    if not closed:
        row.update(_moves(field, history))
    return row


def _revision_row(index: int, revision: Revision, in_force: bool) -> dict[str, Any]:
    row: dict[str, Any] = {"n": index, "kind": revision.kind}
    if revision.kind == "value":
        row["value"] = revision.value
    row["by"] = revision.by
    if revision.note:
        row["note"] = inline(revision.note)
    row["at"] = revision.at.isoformat()
    if in_force:
        row["in_force"] = True
    return row


def _describe_target(history: FieldHistory, target: int) -> str:
    if target < 0:
        return "no answer"
    revision = history.entry(target)
    if revision.kind == "value":
        return show(revision.value)
    return "retracted" if revision.kind == "retraction" else "declined"


def _moves(field: CompiledField, history: FieldHistory) -> dict[str, str]:
    moves: dict[str, str] = {}
    undo, redo = history.undo_target(), history.redo_target()
    if undo is not None:
        moves["undo"] = f"{field.id} back to {_describe_target(history, undo)}"
    if redo is not None:
        moves["redo"] = f"{field.id} forward to {_describe_target(history, redo)}"
    return moves


def _walk_moves(
    form: CompiledForm, instance: FormInstance
) -> tuple[tuple[Any, int, str] | None, tuple[Any, int, str] | None]:
    """The field whose answer in force is the newest and the one whose redo is, by a walk
    over every field's log: for logs the engine has kept no reading of."""
    newest: tuple[Any, int, str] | None = None
    redo_pick: tuple[Any, int, str] | None = None
    for field_id, field in form.fields.items():
        history = instance.history.get(field_id)
        if history is None:
            continue
        current = history.in_force()
        if current is not None and (newest is None or (current.at, field.index) > newest[:2]):
            newest = (current.at, field.index, field_id)
        target = history.redo_target()
        if target is not None:
            at = history.entry(target).at
            if redo_pick is None or (at, field.index) > redo_pick[:2]:
                redo_pick = (at, field.index, field_id)
    return newest, redo_pick


def undo_redo(form: CompiledForm, instance: FormInstance) -> dict[str, str]:
    """One line each: what undo would do to the field changed last, and what redo could bring back.

    Undo names the field whose answer in force is the newest; redo names the field with a
    redo available whose undone entry is the newest.
    """
    newest: tuple[Any, int, str] | None = None
    redo_pick: tuple[Any, int, str] | None = None
    core = getattr(instance.history, "derived", None)
    if isinstance(core, Core) and core.form is form:
        # what the engine keeps of the logs names both fields, without a walk over them all
        newest = core.newest
        if core.redo:
            field_id, (at, index) = max(core.redo.items(), key=lambda item: item[1])
            redo_pick = (at, index, field_id)
    else:
        newest, redo_pick = _walk_moves(form, instance)
    lines: dict[str, str] = {}
    if newest is not None:
        history = instance.history[newest[2]]
        undo = history.undo_target()
        if undo is not None:
            lines["undo"] = f"{newest[2]} back to {_describe_target(history, undo)}"
    if redo_pick is not None:
        history = instance.history[redo_pick[2]]
        target = history.redo_target()
        assert target is not None
        lines["redo"] = f"{redo_pick[2]} forward to {_describe_target(history, target)}"
    return lines


def step_position(form: CompiledForm, ev: Evaluation, step: CompiledStep) -> str | None:
    """``k/N``: the step's place among the steps that apply (None: it does not apply), from
    the evaluation's step summary (no walk over the steps)."""
    place = ev.steps.position(form.step_index[step.id])
    return None if place is None else f"{place[0]}/{place[1]}"


def step_preview(form: CompiledForm, step: CompiledStep, ev: Evaluation) -> str:
    """What a step collects, in a few words: the author's ``preview`` when there is one (the
    author owns it, and it is shown as written whatever applies), else a phrase derived from
    the labels of the step's fields that apply with the current answers, so it never names a
    field a rule has turned off. Fields only an approver writes are left out: the agent never
    collects them. Empty when nothing applies. On one line (``inline``)."""
    if step.preview:
        return inline(step.preview)
    fixed = form_parts(form).steps[step.id].fixed
    if fixed is not None and ev.step_applies[step.id]:  # the derivation below, made once
        return fixed
    fields, readings = form.fields, ev.fields
    return preview_from_labels(
        fields[f].label for f in step.fields if readings[f].applies and fields[f].offered
    )


def preview_from_labels(labels: Iterable[str]) -> str:
    """The first few labels (``cased_preview``), each lower-cased where that reads naturally
    (``cased``), and ``…`` when some are left out."""
    return cased_preview(cased(label) for label in labels)


def step_progress(form: CompiledForm, step: CompiledStep, ev: Evaluation) -> str | None:
    """``answered/total required`` over the step's required fields that apply, counted as the
    engine counts them for completion (a live answer, or "no preference" where the field takes
    one); None when none applies (a step that does not apply, or one of optional fields)."""
    required = [f for f in step.fields if ev.fields[f].applies and not form.fields[f].optional]
    if not required:
        return None
    answered = sum(1 for f in required if f in ev.live or ev.fields[f].status == "no_preference")
    return f"{answered}/{len(required)} required"
