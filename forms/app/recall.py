"""Recall into a form, as a pure function: what memory fills and offers in a started instance.

``plan_recall_step`` turns the principal's facts in force into one transition on the instance
as stored: each field that declares a fact key and has nothing in its log (no answer, no
decline, nothing taken back) and was not named by the call that started the form is given to
``forms.memory.plan_recall``, which decides by the fact's half-life. A ``Fill`` is appended as
a revision ``by: memory`` (the fact key as its actor, its provenance as its note); an
``Offer`` writes nothing to the field. Both are recorded in the instance state
(``InstanceState.recalled``) with their provenance, which is what marks them in reads and the
status line. Planned on the instance as started (and, for a late recall, as stored every time
the commit loop plans it), so a user's answer is never overwritten: that field is simply
skipped.

The same step writes the **context defaults**: values the caller's verified token carries for
a fact key (``Caller.context``: a locale, a time zone, a currency), the lowest rank of
``forms.memory.PRECEDENCE``. ``prefill_values`` picks, per empty field, memory's fill over a
default, and gives no default to a field memory offers (the user is about to be asked). A
default must be a value of its key (the vocabulary's type: a real zone, a tag, a code) and of
the field, as it is, or it is skipped. It is written like a fill, ``by: memory``, so it is
marked until confirmed, cleared by ``clear_memory`` and confirmed by the same value sent
again; its ``Recollection`` says it came from the account (``claim:<fact key>``, no fact
revision: ``-1``, so sending it again records a statement, never the confirmation of some
fact). It is not a fact: nothing of it is stored in memory unless the user answers the field.
Without facts (memory off, late, failed, or no memory in the deployment) the step is the
defaults alone. The start writes the step in its one write (``forms.app.writes.begun``); a
recall owed since the start is committed later, through the commit loop
(``commit_late_recall``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from forms.app.loop import CommitLoop, Outcome, Planned
from forms.compiled import CompiledForm
from forms.engine import Transition, transition
from forms.instance import FieldChange, FormInstance, RecallOwed, Recollection, Revision
from forms.marked import replaced
from forms.memory.decay import DecayPolicy
from forms.memory.facts import Fact
from forms.memory.recall import (
    Fill,
    Offer,
    Origin,
    Prefill,
    RecallField,
    RecallPlan,
    plan_recall,
    prefill_values,
)
from forms.memory.vocabulary import Vocabulary
from forms.schema import Accepted, FieldType
from forms.surface.recalled import CLAIM_PREFIX, short_label

NO_FACT_REVISION = -1
"""The ``fact_revision`` of a context default's ``Recollection``: no fact's revision is
negative, so the same value sent again is recorded as said, never as confirming a fact."""


@dataclass(frozen=True, slots=True)
class RecallStep:
    """The transition that writes what memory recalled, and the field ids it filled and
    offered, and those it filled from the caller's account (``defaulted``), in definition
    order."""

    step: Transition
    filled: tuple[str, ...]
    offered: tuple[str, ...]
    defaulted: tuple[str, ...] = ()


def recall_fields(
    form: CompiledForm, instance: FormInstance, named: Collection[str] = ()
) -> list[RecallField]:
    """The fields memory may be asked about, in definition order. A field with anything in its
    log is ``answered`` (what the user said wins, and a decline or a retraction is something
    they said too); a field the starting call named (``named``: a value it sent, even one
    refused, or a decline) is ``prefilled``."""
    fields = []
    for field_id in form.memory_fields:
        field = form.fields[field_id]
        assert field.memory is not None
        fields.append(
            RecallField(
                field_id=field_id,
                key=field.memory,
                type=field.type,
                label=short_label(field.label),
                answered=instance.field(field_id).count > 0,
                prefilled=field_id in named,
            )
        )
    return fields


def plan_recall_step(
    form: CompiledForm,
    instance: FormInstance,
    facts: Iterable[Fact],
    *,
    vocabulary: Vocabulary,
    policy: DecayPolicy | None = None,
    now: datetime,
    named: Collection[str] = (),
    tool_call_id: str | None = None,
    context: Mapping[str, Any] | None = None,
    owe: RecallOwed | None = None,
) -> RecallStep | None:
    """The transition writing memory's fills and offers, and the context defaults (fact key
    -> value, from the caller's verified claims), on ``instance``; None when neither has
    anything for any of its empty fields (then nothing is written). ``policy`` is needed
    only with facts (None: Formwork's). ``owe``: memory's read came late, so the step also
    records that the recall is owed (``plan_late_recall_step`` delivers it), even with nothing
    else to write."""
    if instance.state.status != "open" or not form.memory_fields:
        return None
    fields = recall_fields(form, instance, named)
    facts = list(facts)
    plan = (
        plan_recall(
            fields, facts, vocabulary=vocabulary, policy=policy or DecayPolicy.default(), now=now
        )
        if facts
        else RecallPlan()
    )
    defaults = _defaults(fields, context or {}, vocabulary)
    chosen = prefill_values(
        [f.field_id for f in fields],
        answered=[f.field_id for f in fields if f.answered or f.prefilled],
        recall=plan,
        defaults={f: value for f, (value, _) in defaults.items()},
    )
    if not chosen and not plan.offers and owe is None:
        return None
    labels = {f.field_id: f.label or f.key for f in fields}
    changes, recalled = _written(
        form, instance, chosen, plan, defaults, labels, now=now, tool_call_id=tool_call_id
    )
    state = replaced(instance.state, recalled=recalled)
    if owe is not None:
        state = replaced(state, recall_owed=owe)
    step = transition(form, instance, changes, now, state=state)
    filled = tuple(f for f in form.memory_fields if f in plan.fills)
    offered = tuple(f for f in form.memory_fields if f in plan.offers)
    defaulted = tuple(
        f for f in form.memory_fields if f in chosen and chosen[f].origin is Origin.DEFAULT
    )
    return RecallStep(step, filled, offered, defaulted)


def _written(
    form: CompiledForm,
    instance: FormInstance,
    chosen: Mapping[str, Prefill],
    plan: RecallPlan,
    defaults: Mapping[str, tuple[Any, str]],
    labels: Mapping[str, str],
    *,
    now: datetime,
    tool_call_id: str | None,
) -> tuple[dict[str, FieldChange], dict[str, Recollection]]:
    """What a recall writes on ``instance``: per memory field, memory's fill or the context's
    default appended as a revision by memory, and every fill, default and offer noted in the
    state's ``recalled`` (the ones already there kept)."""
    changes: dict[str, FieldChange] = {}
    recalled = dict(instance.state.recalled)
    for field_id in form.memory_fields:
        history = instance.field(field_id)
        prefill = chosen.get(field_id)
        if prefill is not None and prefill.fill is not None:
            fill = prefill.fill
            revision = _memory_revision(
                fill.value, fill.key, fill.note(), history.cursor, now, tool_call_id
            )
            changes[field_id] = FieldChange(append=(revision,), cursor=history.count)
            recalled[field_id] = _recollection(fill, "fill", history.count)
        elif prefill is not None and prefill.origin is Origin.DEFAULT:
            key = form.fields[field_id].memory
            assert key is not None
            shown = defaults[field_id][1]
            source = CLAIM_PREFIX + key
            note = f"from your account: {labels[field_id]} {shown}"
            revision = _memory_revision(
                prefill.value, source, note, history.cursor, now, tool_call_id
            )
            changes[field_id] = FieldChange(append=(revision,), cursor=history.count)
            recalled[field_id] = Recollection(
                use="fill",
                key=source,
                value=prefill.value,
                shown=shown,
                entry=history.count,
                fact_revision=NO_FACT_REVISION,
                stated_at=now,
            )
        offer = plan.offers.get(field_id)
        if offer is not None:
            recalled[field_id] = _recollection(offer, "offer", history.count)
    return changes, recalled


def _memory_revision(
    value: Any, actor: str, note: str, prev: int, at: datetime, tool_call_id: str | None
) -> Revision:
    """A value written by memory for ``actor`` (a fact key, or a claim's), on top of ``prev``."""
    return Revision(
        kind="value",
        value=value,
        by="memory",
        actor=actor,
        tool_call_id=tool_call_id,
        at=at,
        prev=prev,
        note=note,
    )


def plan_late_recall_step(
    form: CompiledForm,
    instance: FormInstance,
    facts: Iterable[Fact],
    *,
    vocabulary: Vocabulary,
    policy: DecayPolicy,
    now: datetime,
) -> RecallStep | None:
    """The transition delivering a recall owed since the form started (``recall_owed``),
    on ``instance`` as stored at a later call: every value memory has for a field still empty
    is *offered*, never written, even one it would have filled at the start (the user may
    have answered or been asked since, so a late value is put to them, not into the form),
    and the debt is cleared, with nothing to offer too. A field with anything in its log, or
    named by the starting call, is left alone. None when nothing is owed (another call
    delivered it) or the form is closed."""
    owed = instance.state.recall_owed
    if owed is None or instance.state.status != "open":
        return None
    fields = recall_fields(form, instance, owed.named)
    facts = list(facts)
    plan = (
        plan_recall(fields, facts, vocabulary=vocabulary, policy=policy, now=now)
        if facts
        else RecallPlan()
    )
    recalled = dict(instance.state.recalled)
    offered = []
    for field_id in form.memory_fields:
        found: Fill | Offer | None = plan.fills.get(field_id) or plan.offers.get(field_id)
        if found is not None:
            recalled[field_id] = _recollection(found, "offer", instance.field(field_id).count)
            offered.append(field_id)
    state = replaced(instance.state, recalled=recalled, recall_owed=None)
    return RecallStep(transition(form, instance, {}, now, state=state), (), tuple(offered))


def commit_late_recall(
    loop: CommitLoop,
    instance: FormInstance,
    facts: Iterable[Fact],
    *,
    vocabulary: Vocabulary,
    policy: DecayPolicy,
) -> Outcome[RecallStep | None]:
    """Commit ``plan_late_recall_step`` through the commit loop, planned again on the
    instance the store hands back when it loses. Raises what the loop raises."""
    facts = list(facts)

    def plan(
        form: CompiledForm, current: FormInstance, now: datetime
    ) -> Planned[RecallStep | None]:
        late = plan_late_recall_step(
            form, current, facts, vocabulary=vocabulary, policy=policy, now=now
        )
        return Planned(late, late.step if late is not None else None)

    return loop.commit(instance, plan)


def _defaults(
    fields: Iterable[RecallField], context: Mapping[str, Any], vocabulary: Vocabulary
) -> dict[str, tuple[Any, str]]:
    """Per field whose key the context holds: the value as the field stores it, and as people
    read it. Only a value its key takes (the vocabulary's type) and the field takes, as it is:
    a default is never coerced, and a refused one leaves the field empty."""
    found: dict[str, tuple[Any, str]] = {}
    for recall_field in fields:
        raw = context.get(recall_field.key)
        if raw is None or recall_field.key not in vocabulary:
            continue
        key = vocabulary.get(recall_field.key)
        if not key.storable:
            continue
        value = _accepted(key.type, raw)
        if value is None:
            continue
        stored = _accepted(recall_field.type, value[0])
        if stored is not None:
            found[recall_field.field_id] = (stored[0], key.show(value[0]))
    return found


def _accepted(field_type: FieldType, raw: Any) -> tuple[Any] | None:
    accepted = field_type.validate(raw)
    return (accepted.json_value,) if isinstance(accepted, Accepted) else None


def _recollection(recalled: Fill | Offer, use: str, entry: int) -> Recollection:
    fact = recalled.fact
    derivation = fact.derivation
    return Recollection(
        use="fill" if use == "fill" else "offer",
        key=recalled.key,
        value=recalled.value,
        shown=recalled.shown,
        entry=entry,
        fact_revision=fact.revision,
        stated_at=fact.stated_at,
        confirmed_at=fact.confirmed_at,
        derived_from=derivation.words if derivation is not None else None,
        rule=derivation.rule if derivation is not None else None,
    )
