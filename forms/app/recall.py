"""Recall into a form, as a pure function: what memory fills and offers in a started instance.

``plan_recall_step`` turns the principal's facts in force into one transition on the instance
as stored: each field that declares a fact key and has nothing in its log (no answer, no
decline, nothing taken back) and was not named by the call that started the form is given to
``forms.memory.plan_recall``, which decides by the fact's half-life. A ``Fill`` is appended as
a revision ``by: memory`` (the fact key as its actor, its provenance as its note); an
``Offer`` writes nothing to the field. Both are recorded in the instance state
(``InstanceState.recalled``) with their provenance, which is what marks them in reads and the
status line. Planned on the instance as stored every time the commit loop plans it, so a
user's answer that landed first is never overwritten: that field is simply skipped.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime

from forms.compiled import CompiledForm
from forms.engine import Transition, transition
from forms.instance import FieldChange, FormInstance, Recollection, Revision
from forms.marked import replaced
from forms.memory.decay import DecayPolicy
from forms.memory.facts import Fact
from forms.memory.recall import Fill, Offer, RecallField, plan_recall
from forms.memory.vocabulary import Vocabulary
from forms.surface.recalled import short_label


@dataclass(frozen=True, slots=True)
class RecallStep:
    """The transition that writes what memory recalled, and the field ids it filled and
    offered (definition order)."""

    step: Transition
    filled: tuple[str, ...]
    offered: tuple[str, ...]


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
    policy: DecayPolicy,
    now: datetime,
    named: Collection[str] = (),
    tool_call_id: str | None = None,
) -> RecallStep | None:
    """The transition writing memory's fills and offers on ``instance``; None when memory has
    nothing for any of its empty fields (then nothing is written)."""
    if instance.state.status != "open" or not form.memory_fields:
        return None
    plan = plan_recall(
        recall_fields(form, instance, named), facts, vocabulary=vocabulary, policy=policy, now=now
    )
    if not plan.fills and not plan.offers:
        return None
    changes: dict[str, FieldChange] = {}
    recalled = dict(instance.state.recalled)
    for field_id in form.memory_fields:
        history = instance.field(field_id)
        fill = plan.fills.get(field_id)
        if fill is not None:
            revision = Revision(
                kind="value",
                value=fill.value,
                by="memory",
                actor=fill.key,
                tool_call_id=tool_call_id,
                at=now,
                prev=history.cursor,
                note=fill.note(),
            )
            changes[field_id] = FieldChange(append=(revision,), cursor=history.count)
            recalled[field_id] = _recollection(fill, "fill", history.count)
        offer = plan.offers.get(field_id)
        if offer is not None:
            recalled[field_id] = _recollection(offer, "offer", history.count)
    state = replaced(instance.state, recalled=recalled)
    step = transition(form, instance, changes, now, state=state)
    filled = tuple(f for f in form.memory_fields if f in plan.fills)
    offered = tuple(f for f in form.memory_fields if f in plan.offers)
    return RecallStep(step, filled, offered)


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
