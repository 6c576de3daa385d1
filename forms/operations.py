"""The write-side moves of answers, as pure functions over a compiled form and an instance.

Each returns field changes (revisions to append, cursors to move) and a per-field account of
what happened; ``forms.engine.transition`` then turns them into a commit. Nothing here touches
storage, the clock or ids: the caller passes ``now`` and the author of the write. What an
executor's effects amount to is planned in ``forms.effect_plans``, on top of these.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, get_args

from forms.compiled import CompiledForm
from forms.errors import BadRequest, CannotRevise, UnknownField
from forms.instance import (
    FieldChange,
    FormInstance,
    Revision,
    RevisionKind,
    Source,
)
from forms.marked import built, constructed
from forms.schema import Accepted, json_depth

MAX_VALUE_BYTES = 16_384
"""A single answer, as compact JSON. Forms collect answers, not documents."""
MAX_VALUE_DEPTH = 6
"""Nesting of lists/objects inside one answer."""
MAX_PATCH_FIELDS = 100
"""Fields in one fill."""

_DECIDERS = frozenset({"approver", "operator", "migration"})
"""Sources that may write a field declared ``decided_by_approver``."""

RETRACT_HINT = 'to clear an answer, call form_revise with action "retract"; never write "" or null'


@dataclass(frozen=True, slots=True)
class Author:
    """Who is writing: the provenance stamped on every revision of this call."""

    source: Source
    actor: str | None = None
    tool_call_id: str | None = None


@dataclass(frozen=True, slots=True)
class ValueRejection:
    field: str
    message: str
    hint: str | None


@dataclass(frozen=True, slots=True)
class Unknown:
    sent: str
    did_you_mean: tuple[str, ...]


_NO_VALUE: Any = object()
"""``unknown_id``'s default: the id came without a value (a decline)."""


def unknown_id(form: CompiledForm, sent: str, value: Any = _NO_VALUE) -> Unknown:
    """An id naming no field: what was sent (cut to 64 characters) and the fields it most
    likely meant. Only fields the agent may write are offered and, when a value came with the
    id, only those whose type takes it: ``incident_kind: "premises"`` is not offered
    ``incident_date``. A suggestion the value would be refused under costs a round trip, or
    invites the wrong field when followed blindly."""
    shown = sent if len(sent) <= 64 else sent[:63] + "…"
    offered = [c for c in form.suggest_fields(sent[:128], 6) if form.fields[c].offered]
    if value is not _NO_VALUE and not is_blank(value):
        offered = [c for c in offered if isinstance(form.fields[c].type.accept(value), Accepted)]
    return Unknown(shown, tuple(offered[:3]))


@dataclass
class FillPlan:
    """What a fill will do, field by field, before it is committed."""

    changes: dict[str, FieldChange] = field(default_factory=dict)
    captured: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    rejected: list[ValueRejection] = field(default_factory=list)
    unknown: list[Unknown] = field(default_factory=list)
    resolved: dict[str, str] = field(default_factory=dict)
    replaced: dict[str, Any] = field(default_factory=dict)
    """Fields whose earlier answer this write replaces, with that earlier answer."""
    coerced: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Fields whose value came in another unambiguous encoding: ``{"sent": "yes", "stored":
    true}``, what the call carried and what was validated and kept (see ``FieldType.accept``)."""
    declined: list[str] = field(default_factory=list)
    """Fields this call declined ("prefers not to say", or "no preference"), among captured."""
    confirmed: list[str] = field(default_factory=list)
    """Fields whose answer from memory this call confirmed (the same value sent again): the
    answer is the writer's now, among captured."""
    dismissed: list[str] = field(default_factory=list)
    """Fields whose offer from memory this call dropped (``clear_memory``): nothing was
    written to them; the offer is no longer shown."""


def _revision(kind: RevisionKind, value: Any, author: Author, now: datetime, prev: int) -> Revision:
    """A new entry; not validated again when every part already has its type (a scalar of
    validated JSON, a known source, a time), so anything else is refused as it always was."""
    parts = {
        "kind": kind,
        "value": value,
        "by": author.source,
        "actor": author.actor,
        "tool_call_id": author.tool_call_id,
        "at": now,
        "prev": prev,
        "note": None,
    }
    if (
        type(value) in _SCALARS
        and author.source in _SOURCES
        and type(author.actor) in _TEXT
        and type(author.tool_call_id) in _TEXT
        and type(now) is datetime
    ):
        return built(Revision, parts)
    return Revision(**parts)


_SCALARS = frozenset({str, int, float, bool, type(None)})
_TEXT = frozenset({str, type(None)})
_SOURCES = frozenset(get_args(Source))


_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
_SHORT_TEXT = MAX_VALUE_BYTES // 6 - 2
"""Text this long or shorter fits whatever it holds (a character takes at most six bytes of
JSON, as an escape), so its size needs no encoding to check."""


def check_value_size(value: object) -> str | None:
    """Why ``value`` is too large or deep to store as one answer, or None when it fits."""
    kind = type(value)
    if (
        value is None
        or kind is bool
        or kind is float
        or (kind is str and len(value) <= _SHORT_TEXT)  # type: ignore[arg-type]
        or (kind is int and value.bit_length() < 10_000)  # type: ignore[attr-defined]
    ):
        return None  # a scalar that fits: nothing nests, nothing to measure
    try:
        encoded = _COMPACT.encode(value)
    except (TypeError, ValueError):
        return "the value is not plain JSON"
    if len(encoded.encode()) > MAX_VALUE_BYTES:
        return f"the value is over {MAX_VALUE_BYTES} bytes of JSON"
    if json_depth(value) > MAX_VALUE_DEPTH:
        return f"the value nests deeper than {MAX_VALUE_DEPTH} levels"
    return None


def is_blank(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


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
    plan = FillPlan()
    seen: dict[str, str] = {}
    for sent, raw in patch.items():
        field_id = form.resolve_field(sent)
        if field_id is None:
            plan.unknown.append(unknown_id(form, sent, raw))
            continue
        if field_id != sent:
            plan.resolved[sent] = field_id
        if field_id in seen:
            plan.rejected.append(
                ValueRejection(
                    sent,
                    f"names {field_id} again (already sent as {seen[field_id]!r}); this copy "
                    "was ignored",
                    "send each field once",
                )
            )
            continue
        seen[field_id] = sent
        if form.fields[field_id].decided_by_approver and author.source not in _DECIDERS:
            plan.rejected.append(
                ValueRejection(
                    field_id,
                    f"{form.fields[field_id].label} is decided by an approver, not written",
                    "tell the user it is awaiting approval; the decision will show in the form",
                )
            )
            continue
        outcome = _validate(form, field_id, raw, lenient=author.source != "executor")
        if isinstance(outcome, ValueRejection):
            plan.rejected.append(outcome)
            continue
        if outcome.coerced:
            plan.coerced[field_id] = {"sent": raw, "stored": outcome.json_value}
        _stage(plan, instance, field_id, "value", outcome.json_value, author, now)
    return plan


def _validate(
    form: CompiledForm, field_id: str, raw: object, *, lenient: bool
) -> Accepted | ValueRejection:
    """Check one value. ``lenient`` reads unambiguous encodings (``"yes"`` for ``true``): the
    agent's, a webhook's or an approver's writes. An executor's patch is code, so it is strict:
    a value in the wrong encoding there is a bug to report, not to read charitably.

    Only a blank points at retract: ``0`` or ``false`` may well be the answer ("0 bags").
    """
    if is_blank(raw):
        return ValueRejection(field_id, "a blank value is not an answer", RETRACT_HINT)
    too_big = check_value_size(raw)
    if too_big is not None:
        return ValueRejection(field_id, too_big, "send a shorter answer")
    ftype = form.fields[field_id].type
    result = ftype.accept(raw) if lenient else ftype.validate(raw)
    if isinstance(result, Accepted):
        return result
    return ValueRejection(field_id, result.message, result.hint)


def _stage(
    plan: FillPlan,
    instance: FormInstance,
    field_id: str,
    kind: RevisionKind,
    json_value: Any,
    author: Author,
    now: datetime,
) -> None:
    """Append a revision of ``kind`` to a field's log, unless the same is in force already
    (then the field is ``unchanged``); an answer it replaces is noted in ``replaced``. The same
    value sent again over an answer memory filled is a confirmation: it is appended, so the
    answer in force is the writer's and no longer marked as from memory."""
    history = instance.field(field_id)
    current = history.in_force()
    if current is not None and current.kind == kind and current.value == json_value:
        if current.by != "memory" or author.source == "memory":
            plan.unchanged.append(field_id)
            return
        plan.confirmed.append(field_id)
    elif current is not None and current.kind == "value":
        plan.replaced[field_id] = current.value
    revision = _revision(kind, json_value, author, now, history.cursor)
    plan.changes[field_id] = constructed(FieldChange, append=(revision,), cursor=history.count)
    plan.captured.append(field_id)
    if kind == "decline":
        plan.declined.append(field_id)


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


Action = Literal["set", "retract", "undo", "redo", "decline", "clear_memory"]


def plan_revise(
    form: CompiledForm,
    instance: FormInstance,
    field_id: str,
    action: Action,
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
    if form.fields[field_id].decided_by_approver and author.source not in _DECIDERS:
        raise CannotRevise(
            f"{form.fields[field_id].label} is decided by an approver; it cannot be revised here",
            "tell the user it is awaiting (or has) an approver's decision",
        )
    history = instance.field(field_id)
    current = history.in_force()
    plan = FillPlan()
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
        _stage(plan, instance, field_id, kind, None, author, now)
        return plan
    target = history.undo_target() if action == "undo" else history.redo_target()
    if target is None:
        raise CannotRevise(
            f"nothing to {action} on {form.fields[field_id].label}",
            "read the field's history to see its revisions",
        )
    plan.changes[field_id] = FieldChange(cursor=target)
    plan.captured.append(field_id)
    return plan


def plan_clear_memory(
    form: CompiledForm, instance: FormInstance, author: Author, now: datetime
) -> FillPlan:
    """Retract every answer memory filled that nobody confirmed (each one's revision still in
    force), in definition order: one move per field, each undone on its own by ``undo``. The
    offers still standing are dropped (``dismissed``: they were never answers, so nothing is
    retracted for them). ``CannotRevise`` when memory left nothing standing."""
    plan = FillPlan()
    recalled = instance.state.recalled
    for field_id in form.memory_fields:
        recollection = recalled.get(field_id)
        if recollection is None or not recollection.stands(instance.field(field_id)):
            continue
        if recollection.use == "fill":
            _stage(plan, instance, field_id, "retraction", None, author, now)
        else:
            plan.dismissed.append(field_id)
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
    written = [*changes, *unchanged]
    return {form.fields[f].step for f in written if f in form.fields}


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
            plan.unknown.append(unknown_id(form, sent))
            continue
        if field_id != sent:
            plan.resolved[sent] = field_id
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
            plan.rejected.append(
                ValueRejection(field_id, f"{compiled.label} {refusal[0]}", refusal[1])
            )
            continue
        _stage(plan, instance, field_id, "decline", None, author, now)
    return plan
