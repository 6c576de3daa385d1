"""Handing a conversation over to another form, with what was already said.

A handover closes one instance (the *source*) as ``handed_over`` and starts another (the
*target*, an instance of another form, or of the same one) in the same conversation, carrying
the source's answers across. It is one move with two triggers: a checkpoint's ``HandOver``
effect (a rule decides) and ``form_start`` with ``from`` (the agent, when the user changed
their mind). Both plan it here, purely; the app commits both halves in one storage operation
(``FormStore.hand_over``), so neither lands without the other.

What travels, per source field with something in force (``carry``):

- the target field is the source field's id, or what the source's declared mapping renames it
  to (``FormDef.hands_over_to``; ``None`` leaves the field behind); a field with no
  counterpart on the target is not carried;
- a value is validated by the target field's type (``FieldType.validate``, strict); a value
  the target refuses is not carried, and the handover reports why;
- a decline (declined, or "no preference") travels as a decline when the target field may
  be declined, and is reported otherwise; a retraction in force carries nothing;
- an answer held on the source (its field does not apply there) travels as the answer it is;
  the target decides on its own rules whether it applies;
- fields an approver decides on the target are never written by a handover.

A carried answer is a new revision on the target, ``by="handover"``, whose ``actor`` is the
source instance's id and whose ``note`` names the source form, field and revision index
(``from travel-claim fi_1 field mode revision 2``). The source keeps its whole history; it
can be read after, and its status names the target (``InstanceState.handed_to``), as the
target's names the source (``handed_from``).

The target's id is derived from what caused the handover (``target_id``: the outbox entry's
key, or the source and the tool call's id), so a re-fired checkpoint or a retried call can
only ever name the same instance.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from forms.compiled import CompiledField, CompiledForm
from forms.engine import Transition, transition
from forms.instance import (
    FieldChange,
    FormInstance,
    HandoverLink,
    InstanceState,
    Revision,
)
from forms.marked import replaced
from forms.schema import Accepted

HANDED_OVER = "handed_over"

_PURPOSE = b"formwork handover target v1\n"


def target_id(cause: str) -> str:
    """The target instance's id for a handover caused by ``cause`` (an outbox entry's key, or
    ``<source id>:<tool call id>``): the same cause always names the same instance."""
    return "fi_" + hashlib.sha256(_PURPOSE + cause.encode()).hexdigest()[:20]


@dataclass(frozen=True, slots=True)
class Carried:
    """What a handover carries and what it leaves: per target field, the revision to write;
    per source field, why it was not carried."""

    revisions: dict[str, Revision] = field(default_factory=dict)
    """Target field id -> the revision carrying the source's answer (or decline)."""
    sources: dict[str, str] = field(default_factory=dict)
    """Target field id -> the source field it came from."""
    dropped: dict[str, str] = field(default_factory=dict)
    """Source field id -> why it was not carried."""


@dataclass(frozen=True, slots=True)
class Handover:
    """Both halves of a handover, planned: the source's closing transition and the target's
    starting one (its ``after`` is the instance to create)."""

    close: Transition
    start: Transition
    carried: Carried


def renames_for(source: CompiledForm, target_form_id: str) -> Mapping[str, str | None] | None:
    """The mapping ``source`` declares for handing over to ``target_form_id``; None when it
    declares none (a checkpoint may then not hand over there; the tool carries same ids)."""
    declared = source.definition.hands_over_to
    return declared.get(target_form_id) if target_form_id in declared else None


def carry(
    source: CompiledForm,
    instance: FormInstance,
    target: CompiledForm,
    renames: Mapping[str, str | None],
    now: datetime,
) -> Carried:
    """What of ``instance`` (of ``source``) travels to a new instance of ``target``."""
    carried = Carried()
    for source_field in source.fields:
        log = instance.history.get(source_field)
        revision = log.in_force() if log is not None else None
        if log is None or revision is None or revision.kind == "retraction":
            continue
        to = renames.get(source_field, source_field)
        if to is None:
            carried.dropped[source_field] = f"the handover to {target.id} leaves it behind"
            continue
        why = _refusal(target.fields.get(to), revision, to, target)
        if why is not None:
            carried.dropped[source_field] = why
            continue
        compiled = target.fields[to]
        value: Any = None
        if revision.kind == "value":
            checked = compiled.type.validate(revision.value)
            assert isinstance(checked, Accepted)  # _refusal checked it
            value = checked.json_value
        note = f"from {source.id} {instance.id} field {source_field} revision {log.cursor}"
        carried.revisions[to] = Revision(
            kind=revision.kind, value=value, by="handover", actor=instance.id, at=now, note=note
        )
        carried.sources[to] = source_field
    return carried


def _refusal(
    compiled: CompiledField | None, revision: Revision, to: str, target: CompiledForm
) -> str | None:
    """Why ``revision`` cannot travel to ``compiled`` (None: it can)."""
    if compiled is None:
        return f"{target.id} has no field {to!r}"
    if compiled.decided_by_approver:
        return f"{to!r} is decided by an approver on {target.id}"
    if revision.kind == "decline":
        return None if compiled.declinable else f"{to!r} cannot be declined on {target.id}"
    checked = compiled.type.validate(revision.value)
    if isinstance(checked, Accepted):
        return None
    return f"{target.id} refuses it for {to!r}: {checked.message}"


def plan_handover(
    source: CompiledForm,
    instance: FormInstance,
    target: CompiledForm,
    new_id: str,
    renames: Mapping[str, str | None],
    now: datetime,
    *,
    reason: str | None = None,
    close_state: InstanceState | None = None,
    close_changes: Mapping[str, FieldChange] | None = None,
    cause: str | None = None,
) -> Handover:
    """Plan a handover of ``instance`` to a new instance ``new_id`` of ``target``.

    ``close_state`` is the source's state to close from (an effect's plan passes the one that
    marks its entry done; default: the instance's) and ``close_changes`` field changes its
    closing commit makes too (an effect's patches), carried with the rest. The target is
    created as a start would create it, with the carried revisions in its first commit: its
    rising edges fire as any start's do.
    """
    state = instance.state if close_state is None else close_state
    changes_before = dict(close_changes or {})
    patched = (
        transition(source, instance, changes_before, now, state=state).after
        if changes_before
        else instance
    )
    carried = carry(source, patched, target, renames, now)
    base = FormInstance(
        id=new_id,
        form_id=target.id,
        form_version=target.version,
        principal=instance.principal,
        conversation_id=instance.conversation_id,
        created_at=now,
        state=InstanceState(updated_at=now),
    )
    changes = {f: FieldChange(append=(r,), cursor=0) for f, r in carried.revisions.items()}
    came_from = HandoverLink(
        instance=instance.id,
        form=source.id,
        at=now,
        carried=tuple(carried.sources[f] for f in carried.revisions),
        dropped=carried.dropped,
        reason=reason,
        chain=handover_chain(instance) + 1,
    )
    start_state = replaced(base.state, handed_from=came_from)
    start = transition(target, base, changes, now, state=start_state)
    went_to = replaced(came_from, instance=new_id, form=target.id)
    why = f"handed over to {target.id} {new_id}" + (f": {reason}" if reason else "")
    closing = replaced(state, status=HANDED_OVER, closed_reason=why, handed_to=went_to)
    close = transition(source, instance, changes_before, now, state=closing, cause=cause)
    return Handover(close=close, start=start, carried=carried)


def handover_chain(instance: FormInstance) -> int:
    """How many handovers in a row started ``instance`` (0: none did)."""
    link = instance.state.handed_from
    return link.chain if link is not None else 0


def check_handover(
    source: CompiledForm, target: CompiledForm, renames: Mapping[str, str | None]
) -> list[str]:
    """The compile check of a declared handover from ``source`` to ``target``: every renamed
    field exists on both sides, and every field that would travel (renamed, or sharing its id)
    has a type on the target that takes every value of the source's. Empty: it fits."""
    problems: list[str] = []
    where = f"hands_over_to[{target.id!r}]"
    for old, new in renames.items():
        if old not in source.fields:
            problems.append(f"{where}: {old!r} is not a field of {source.id}")
        if new is not None and new not in target.fields:
            problems.append(f"{where}: {new!r} is not a field of {target.id}")
    for source_field, compiled in source.fields.items():
        to = renames.get(source_field, source_field)
        other = target.fields.get(to) if to is not None else None
        if other is None or other.decided_by_approver:
            continue
        misfit = type_misfit(compiled, other)
        if misfit is not None:
            problems.append(f"{where}: {source_field!r} -> {to!r}: {misfit}")
    return problems


def type_misfit(source: CompiledField, target: CompiledField) -> str | None:
    """Why a value of ``source``'s type may not be one of ``target``'s (None: every one is).
    Conservative: the same schema, a plain string taking any string, an enum taking a
    subset of itself, a number taking an integer."""
    a, b = _plain(source.type.json_schema), _plain(target.type.json_schema)
    if a == b:
        return None
    if b == {"type": "string"} and a.get("type") == "string":
        return None
    if "enum" in a and "enum" in b and set(a["enum"]) <= set(b["enum"]):
        return None
    if a == {"type": "integer"} and b == {"type": "number"}:
        return None
    return f"the types differ ({source.type.type_string} -> {target.type.type_string})"


def _plain(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` without its null branch (an optional field's)."""
    branches = schema.get("anyOf")
    if isinstance(branches, list):
        rest = [b for b in branches if b != {"type": "null"}]
        if len(rest) == 1:
            return {**{k: v for k, v in schema.items() if k != "anyOf"}, **rest[0]}
    return dict(schema)


def check_declared(form: CompiledForm, find: Callable[[str], CompiledForm | None]) -> list[str]:
    """``check_handover`` for every handover ``form`` declares whose target ``find`` knows
    (``find(form_id)``: None when it is not there yet; checked when it runs then)."""
    problems: list[str] = []
    for target_id_, renames in form.definition.hands_over_to.items():
        target = find(target_id_)
        if target is not None:
            problems += check_handover(form, target, renames)
    return problems
