"""The write-side moves of answers, as pure functions over a compiled form and an instance.

Each returns field changes (revisions to append, cursors to move) and a per-field account of
what happened; ``forms.engine.transition`` then turns them into a commit. Nothing here touches
storage, the clock or ids: the caller passes ``now`` and the author of the write. The plan
they fill, who writes and what one answer may be are ``forms.fill_plans`` (importable from here
too). What an executor's effects amount to is planned in ``forms.effect_plans``, on top of
these.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

from forms.compiled import CompiledField, CompiledForm
from forms.errors import BadRequest, CannotRevise, UnknownField
from forms.evaluation import remember_reading
from forms.fill_plans import (
    CHANGE_FIELDS,
    DECIDERS,
    MAX_PATCH_FIELDS,
    MAX_VALUE_BYTES,
    MAX_VALUE_DEPTH,
    NO_ENTRIES,
    NO_ITEMS,
    RETRACT_HINT,
    REVISION_FIELDS,
    SCALARS,
    SHORT_TEXT,
    SOURCES,
    TEXT,
    Author,
    FillPlan,
    Unknown,
    ValueRejection,
    check_value_size,
    empty_plan,
    is_blank,
    unknown_id,
)
from forms.instance import FieldChange, FieldHistory, FormInstance, Revision, RevisionKind
from forms.marked import new_model, set_extra, set_fields_set, set_model_dict, set_private
from forms.schema import Accepted, Rejected

__all__ = [
    "MAX_PATCH_FIELDS",
    "MAX_VALUE_BYTES",
    "MAX_VALUE_DEPTH",
    "RETRACT_HINT",
    "Author",
    "FillPlan",
    "RevisionAction",
    "Unknown",
    "ValueRejection",
    "check_value_size",
    "is_blank",
    "plan_clear_memory",
    "plan_declines",
    "plan_fill",
    "plan_revise",
    "resolve_field",
    "touched_steps",
    "unknown_id",
]


def plan_fill(
    form: CompiledForm,
    instance: FormInstance,
    patch: Mapping[str, Any],
    author: Author,
    now: datetime,
) -> FillPlan:
    """Validate each value on its own; one bad value never rejects the good ones beside it."""
    if len(patch) > MAX_PATCH_FIELDS:
        raise BadRequest(
            f"a fill may carry at most {MAX_PATCH_FIELDS} fields; {len(patch)} were sent",
            "split the answers over several calls",
        )
    plan = empty_plan()
    seen: dict[str, str] = {}
    fields, logs, source = form.fields, instance.history, author.source
    for sent, raw in patch.items():
        field_id = sent if sent in fields else _resolved(form, plan, sent, raw)
        if field_id is None:
            continue
        if field_id in seen:
            plan.add("rejected", _again(sent, field_id, seen[field_id]))
            continue
        seen[field_id] = sent
        compiled = fields[field_id]
        if compiled.decided_by_approver and source not in DECIDERS:
            plan.add("rejected", _decided(compiled, field_id))
            continue
        # a short text that is not blank (most answers): neither check could refuse it
        if type(raw) is not str or len(raw) > SHORT_TEXT or not raw.strip():
            unfit = _unfit(field_id, raw)
            if unfit is not None:
                plan.add("rejected", unfit)
                continue
        ftype = compiled.type
        outcome = ftype.check(raw)  # valid as sent (most answers): ``accept``'s first step
        if type(outcome) is not Accepted:
            # strict for an executor: its patch is code, and a value in the wrong encoding
            # there is a bug to report; the agent's, a webhook's or an approver's are read
            # leniently (``accept``)
            outcome = ftype.settle(outcome, lenient=source != "executor")
            if isinstance(outcome, Rejected):
                plan.add("rejected", ValueRejection(field_id, outcome.message, outcome.hint))
                continue
        stored, typed, coerced = outcome  # unpacked: each field a named tuple's read costs more
        if coerced:
            plan.put("coerced", field_id, {"sent": raw, "stored": stored})
        revision = _stage(plan, logs, field_id, "value", stored, author, now)
        if revision is not None:  # validated once: the engine reads it from the memo
            remember_reading(compiled, revision, typed)
    return plan


def _resolved(form: CompiledForm, plan: FillPlan, sent: str, raw: object) -> str | None:
    """The field ``sent`` names when it is not an id (an alias; noted in ``resolved``), or
    None when it names none (noted in ``unknown``)."""
    field_id = form.resolve_field(sent)
    if field_id is None:
        plan.add("unknown", unknown_id(form, sent, raw))
    elif field_id != sent:
        plan.put("resolved", sent, field_id)
    return field_id


def _again(sent: str, field_id: str, first: str) -> ValueRejection:
    return ValueRejection(
        sent,
        f"names {field_id} again (already sent as {first!r}); this copy was ignored",
        "send each field once",
    )


def _decided(compiled: CompiledField, field_id: str) -> ValueRejection:
    return ValueRejection(
        field_id,
        f"{compiled.label} is decided by an approver, not written",
        "tell the user it is awaiting approval; the decision will show in the form",
    )


def _unfit(field_id: str, raw: object) -> ValueRejection | None:
    """Why a value cannot be an answer whatever the field's type, or None. Only a blank points
    at retract: ``0`` or ``false`` may well be the answer ("0 bags")."""
    if is_blank(raw):
        return ValueRejection(field_id, "a blank value is not an answer", RETRACT_HINT)
    too_big = check_value_size(raw)
    if too_big is not None:
        return ValueRejection(field_id, too_big, "send a shorter answer")
    return None


def _stage(
    plan: FillPlan,
    logs: Mapping[str, FieldHistory],
    field_id: str,
    kind: RevisionKind,
    json_value: Any,
    author: Author,
    now: datetime,
) -> Revision | None:
    """Append a revision of ``kind`` to a field's log in ``logs`` unless the same is in force
    (``unchanged``; over an answer from memory, ``confirmed``). The revision, or None."""
    source, actor, tool_call_id = author  # one unpacking, where each field is a read
    log = logs.get(field_id)
    if log is None:  # never written: what an empty log answers
        current, cursor, count = None, -1, 0
    else:
        current, cursor, count = log.position()
    entry = current.__dict__ if current is not None else None  # (read: fields cost more)
    if entry is not None and entry["kind"] == kind and entry["value"] == json_value:
        if entry["by"] != "memory" or source == "memory":
            plan.add("unchanged", field_id)
            return None
        plan.add("confirmed", field_id)  # appended: the answer is the writer's now
    elif entry is not None and entry["kind"] == "value":
        if plan.replaced is NO_ENTRIES:  # ``FillPlan.put`` spelled out: every correction's
            plan.replaced = {}
        plan.replaced[field_id] = entry["value"]
    parts = {
        "kind": kind,
        "value": json_value,
        "by": source,
        "actor": actor,
        "tool_call_id": tool_call_id,
        "at": now,
        "prev": cursor,
        "note": None,
    }
    plain = type(json_value) in SCALARS and type(actor) in TEXT and type(tool_call_id) in TEXT
    if plain and source in SOURCES and type(now) is datetime:  # every part of its type
        revision = new_model(Revision)  # ``built``, spelled out (``forms.marked``)
        set_model_dict(revision, parts)
        set_fields_set(revision, REVISION_FIELDS)
        set_extra(revision, None)
        set_private(revision, None)
    else:  # anything else is validated, and refused, as it always was
        revision = Revision(**parts)
    change = new_model(FieldChange)  # and likewise
    set_model_dict(change, {"append": (revision,), "cursor": count})
    set_fields_set(change, CHANGE_FIELDS)
    set_extra(change, None)
    set_private(change, None)
    if plan.changes is NO_ENTRIES:  # as ``replaced``: every write's
        plan.changes = {}
    plan.changes[field_id] = change
    if plan.captured is NO_ITEMS:
        plan.captured = []
    plan.captured.append(field_id)
    if kind == "decline":
        plan.add("declined", field_id)
    return revision


def resolve_field(form: CompiledForm, sent: str) -> str:
    """The field id ``sent`` names, or ``UnknownField`` with suggestions (of the fields the
    agent may write: a revise is a write)."""
    field_id = form.resolve_field(sent)
    if field_id is None:
        suggestions = [c for c in form.suggest_fields(sent, 6) if form.fields[c].offered][:3]
        hint = (
            "did you mean " + ", ".join(repr(s) for s in suggestions) + "?"
            if suggestions
            else "read the form outline to see its field ids"
        )
        raise UnknownField(f"{sent!r} is not a field of form {form.id!r}", hint, suggestions)
    return field_id


RevisionAction = Literal["set", "retract", "undo", "redo", "decline", "clear_memory"]


def plan_revise(
    form: CompiledForm,
    instance: FormInstance,
    field_id: str,
    action: RevisionAction,
    value: Any,
    author: Author,
    now: datetime,
) -> FillPlan:
    """One revision move on one field. Raises ``CannotRevise`` when the move cannot apply.
    (``clear_memory`` names no field: ``plan_clear_memory``.)"""
    if action == "set":
        plan = plan_fill(form, instance, {field_id: value}, author, now)
        if plan.rejected:
            rejection = plan.rejected[0]
            expected = form.fields[field_id].type.type_string
            raise CannotRevise(
                f"{field_id}: {rejection.message}", rejection.hint or f"send {expected}"
            )
        return plan
    if value is not None:
        raise BadRequest(
            f'"value" goes only with action "set", not {action!r}',
            f'call form_revise again without "value" for {action!r}',
        )
    if action == "clear_memory":
        return plan_clear_memory(form, instance, author, now)
    if form.fields[field_id].decided_by_approver and author.source not in DECIDERS:
        raise CannotRevise(
            f"{form.fields[field_id].label} is decided by an approver; it cannot be revised here",
            "tell the user it is awaiting (or has) an approver's decision",
        )
    history = instance.field(field_id)
    current = history.in_force()
    plan = empty_plan()
    if action in ("retract", "decline"):
        label = form.fields[field_id].label
        if action == "decline" and not form.fields[field_id].declinable:
            raise CannotRevise(
                f"{label} is required, so it cannot be declined",
                "tell the user the form cannot be completed without it, or abandon the form",
            )
        if action == "retract" and (current is None or current.kind == "retraction"):
            raise CannotRevise(
                f"{label} has no answer to retract",
                "nothing to take back; read the field to see its revisions",
            )
        kind: RevisionKind = "retraction" if action == "retract" else "decline"
        _stage(plan, instance.history, field_id, kind, None, author, now)
        return plan
    target = history.undo_target() if action == "undo" else history.redo_target()
    if target is None:
        raise CannotRevise(
            f"nothing to {action} on {form.fields[field_id].label}",
            "read the field's history to see its revisions",
        )
    plan.put("changes", field_id, FieldChange(cursor=target))
    plan.add("captured", field_id)
    return plan


def plan_clear_memory(
    form: CompiledForm, instance: FormInstance, author: Author, now: datetime
) -> FillPlan:
    """Retract every answer memory filled that nobody confirmed (each one's revision still in
    force), in definition order: one move per field, each undone on its own by ``undo``. The
    offers still standing are dropped (``dismissed``: they were never answers, so nothing is
    retracted for them). ``CannotRevise`` when memory left nothing standing."""
    plan = empty_plan()
    recalled = instance.state.recalled
    for field_id in form.memory_fields:
        recollection = recalled.get(field_id)
        if recollection is None or not recollection.stands(instance.field(field_id)):
            continue
        if recollection.use == "fill":
            _stage(plan, instance.history, field_id, "retraction", None, author, now)
        else:
            plan.add("dismissed", field_id)
    if not plan.captured and not plan.dismissed:
        raise CannotRevise(
            "nothing from memory is waiting for confirmation",
            "nothing to clear; answers the user confirmed are changed one by one",
        )
    return plan


def touched_steps(
    form: CompiledForm, changes: Mapping[str, FieldChange], unchanged: Iterable[str] = ()
) -> set[str]:
    """Steps an agent's write went into, counting values resent unchanged.

    A revisit is released by the next write into the reopened step; confirming an answer by
    sending it again is such a write, even though it appends nothing.
    """
    # plain loops, not a comprehension over the two joined: every write asks, most of them
    # with one field (and ``in`` then ``[]`` on the fields' proxy: its ``get`` is a method call)
    fields, steps = form.fields, set()
    for field_id in changes:
        if field_id in fields:
            steps.add(fields[field_id].step)
    for field_id in unchanged:
        if field_id in fields:
            steps.add(fields[field_id].step)
    return steps


def plan_declines(
    form: CompiledForm,
    instance: FormInstance,
    plan: FillPlan,
    declines: Sequence[str],
    author: Author,
    now: datetime,
) -> FillPlan:
    """Add to ``plan`` the declines a fill or start carries beside its values: each field id
    the user will not answer (an optional field), or has no preference on (a field that takes
    one). Like values, each is judged on its own."""
    if len(declines) > MAX_PATCH_FIELDS:
        raise BadRequest(
            f"a fill may decline at most {MAX_PATCH_FIELDS} fields; {len(declines)} were sent",
            "split them over several calls",
        )
    if not declines:
        return plan
    valued = set(plan.captured) | set(plan.unchanged) | {r.field for r in plan.rejected}
    for sent in declines:
        field_id = form.resolve_field(sent)
        if field_id is None:
            plan.add("unknown", unknown_id(form, sent))
            continue
        if field_id != sent:
            plan.put("resolved", sent, field_id)
        compiled = form.fields[field_id]
        refusal: tuple[str, str | None] | None = None
        if field_id in valued or field_id in plan.declined:
            refusal = ("is sent twice (as a value or a decline); this decline was ignored", None)
        elif compiled.decided_by_approver:
            refusal = ("is decided by an approver, not declined", None)
        elif not compiled.declinable:
            refusal = (
                "is required, so it cannot be declined",
                "ask for it; the form cannot complete without it",
            )
        if refusal is not None:
            plan.add(
                "rejected", ValueRejection(field_id, f"{compiled.label} {refusal[0]}", refusal[1])
            )
            continue
        _stage(plan, instance.history, field_id, "decline", None, author, now)
    return plan
