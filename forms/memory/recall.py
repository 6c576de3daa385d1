"""Recall planning: which empty fields memory fills, which it offers, and which it leaves.

Pure: it takes the fields of a form that declare a fact key, the principal's facts in force,
the vocabulary, the decay policy and ``now``, and returns a ``RecallPlan``. Reading the facts
(and checking that memory is on) is the caller's; so is writing the fills, by a commit that
holds only while each field is still empty.

For each field, in the order given, the first rule that applies decides:

1. **An answer in force wins** (``answered``): memory never replaces what the user said in
   this conversation. Then **an explicit one-shot prefill wins** (``prefilled``: ``form_start``
   values, a webhook payload). Both are skipped: fill-empty-only.
2. **Extractive only.** No fact for the key (or a key the vocabulary lacks, or one never
   stored) gives nothing: the field id is absent from ``fills`` and ``offers``, never a
   plausible value.
3. **The type must fit** (``forms.memory.fit``), and the fact must hold now in world time
   (its period has started and not ended).
4. **Half-life, not confidence.** The decay policy decides by the fact's age (from its latest
   ``stated_at`` / ``confirmed_at``): fresh enough to fill, to offer, or too old for either.
5. **The field must accept the value** as it is (bounds, lengths, patterns): a value it
   refuses is not recalled.

A ``Fill`` is written as an answer with provenance ``memory`` (fact key, ``stated_at``, the
words it was derived from); an ``Offer`` is shown for the agent to ask about ("from memory,
confirm: Weight 70 kg, said 2026-09-03") and writes nothing. Every field left out is in
``skipped`` with its reason, for logs and counters, never for the model.

The precedence of every source of a starting value, highest first, is ``PRECEDENCE``:
what the user said in this conversation, an explicit one-shot prefill, memory, then context
defaults (locale, timezone, currency from verified claims). ``prefill_values`` applies it: one
value per empty field, from the highest source that has one. A field memory *offers* takes no
context default (memory ranks above defaults, and the user is about to be asked).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from enum import StrEnum
from typing import Any, Literal

from forms.memory.decay import DecayPolicy, Use
from forms.memory.facts import Fact, holding
from forms.schema import Accepted, FieldType
from forms.vocabulary import FactKey, Vocabulary

SkipReason = Literal[
    "answered",
    "prefilled",
    "unknown_key",
    "not_stored",
    "no_fact",
    "type_misfit",
    "not_valid_now",
    "too_old",
    "field_refuses",
]


@dataclass(frozen=True, slots=True)
class RecallField:
    """A field that declares a fact key, as recall sees it: its id, the key, its compiled
    type, its label (None: the key's), and whether it already has an answer in force or an
    explicit prefill."""

    field_id: str
    key: str
    type: FieldType
    label: str | None = None
    answered: bool = False
    prefilled: bool = False


@dataclass(frozen=True, slots=True)
class Recalled:
    """A value from memory for one field: ``value`` as the field stores it (JSON), the
    ``fact`` it came from and its ``age`` at recall."""

    field_id: str
    key: str
    value: Any
    fact: Fact
    age: timedelta
    label: str
    shown: str
    """The value as people read it, with its unit (``70 kg``)."""

    @property
    def provenance(self) -> dict[str, Any]:
        """What an answer filled from memory records about where it came from."""
        derivation = self.fact.derivation
        return {
            "source": "memory",
            "fact_key": self.key,
            "stated_at": self.fact.stated_at.isoformat(),
            "confirmed_at": self.fact.confirmed_at.isoformat() if self.fact.confirmed_at else None,
            "words": self.fact.words,
            "derived_from": derivation.words if derivation else None,
            "rule": derivation.rule if derivation else None,
        }

    def describe(self) -> str:
        """``Weight 70 kg, said 2026-09-03``; a derived value says so: ``Height 173 cm
        (derived from “5'8"”), said 2026-09-03``."""
        text = f"{self.label} {self.shown}"
        if self.fact.derivation is not None:
            text += f" (derived from “{self.fact.derivation.words}”)"
        confirmed = self.fact.confirmed_at
        if confirmed is not None and confirmed > self.fact.stated_at:
            return f"{text}, confirmed {confirmed.date().isoformat()}"
        return f"{text}, said {self.fact.stated_at.date().isoformat()}"


@dataclass(frozen=True, slots=True)
class Fill(Recalled):
    """Written into the empty field, marked as from memory until confirmed."""

    def note(self) -> str:
        return f"from memory: {self.describe()}"


@dataclass(frozen=True, slots=True)
class Offer(Recalled):
    """Shown for the agent to ask about; the field stays empty."""

    def note(self) -> str:
        return f"from memory, confirm: {self.describe()}"


@dataclass(frozen=True, slots=True)
class Skip:
    """A field recall left alone, and why."""

    field_id: str
    reason: SkipReason


@dataclass(frozen=True, slots=True)
class RecallPlan:
    """Per field id: a ``Fill``, an ``Offer``, or neither (then it is in ``skipped``)."""

    fills: Mapping[str, Fill] = field(default_factory=dict)
    offers: Mapping[str, Offer] = field(default_factory=dict)
    skipped: tuple[Skip, ...] = ()


def plan_recall(
    fields: Sequence[RecallField],
    facts: Iterable[Fact],
    *,
    vocabulary: Vocabulary,
    policy: DecayPolicy,
    now: datetime,
) -> RecallPlan:
    """What memory does for each of ``fields`` at ``now``, given the facts in force.

    ``facts`` may hold several periods of one key (a head keeps every period still open:
    Lyon today, Berlin from next month): the one holding at ``now`` is weighed, else the
    latest, which then says why nothing came of it (``not_valid_now``)."""
    periods: dict[str, list[Fact]] = {}
    for fact in facts:
        if not fact.erased:
            periods.setdefault(fact.key, []).append(fact)
    by_key = {key: holding(its, now) for key, its in periods.items()}
    fills: dict[str, Fill] = {}
    offers: dict[str, Offer] = {}
    skipped: list[Skip] = []
    for recall_field in fields:
        outcome = _recall(recall_field, by_key, vocabulary, policy, now)
        if isinstance(outcome, Fill):
            fills[recall_field.field_id] = outcome
        elif isinstance(outcome, Offer):
            offers[recall_field.field_id] = outcome
        else:
            skipped.append(Skip(recall_field.field_id, outcome))
    return RecallPlan(fills, offers, tuple(skipped))


def _recall(
    recall_field: RecallField,
    facts: Mapping[str, Fact | None],
    vocabulary: Vocabulary,
    policy: DecayPolicy,
    now: datetime,
) -> Fill | Offer | SkipReason:
    if recall_field.answered:
        return "answered"
    if recall_field.prefilled:
        return "prefilled"
    if recall_field.key not in vocabulary:
        return "unknown_key"
    key = vocabulary.get(recall_field.key)
    if not key.storable:
        return "not_stored"
    fact = facts.get(key.key)
    if fact is None or fact.value is None:
        return "no_fact"
    if not key.fit(recall_field.type):
        return "type_misfit"
    if not _true_now(fact, now):
        return "not_valid_now"
    use = policy.decide(key.decay, last_seen=fact.last_seen, now=now)
    if use is Use.NONE:
        return "too_old"
    value = _for_field(key, fact.value, recall_field.type)
    if value is None:
        return "field_refuses"
    kind = Fill if use is Use.FILL else Offer
    return kind(
        field_id=recall_field.field_id,
        key=key.key,
        value=value[0],
        fact=fact,
        age=max(fact.age(now), timedelta(0)),
        label=recall_field.label or key.label,
        shown=key.show(fact.value),
    )


def _true_now(fact: Fact, now: datetime) -> bool:
    """Whether the fact's period holds at ``now``. A period the user gave no start begins when
    it was said: a statement from a clock slightly ahead of ours still holds."""
    started = fact.valid_from is None or fact.valid_from <= now
    return started and (fact.valid_until is None or now < fact.valid_until)


def _for_field(key: FactKey, stored: Any, field_type: FieldType) -> tuple[Any] | None:
    """The fact's value as the field stores it, or None when the field refuses it.

    The stored JSON goes to the field as it is; a decimal (kept as a string such as
    ``"70.5"``) goes to a field that takes JSON numbers as the number it is. Nothing is
    rounded: a value the field refuses stays out."""
    candidates = [stored]
    typed = key.type.validate(stored)
    if isinstance(typed, Accepted) and isinstance(typed.typed, Decimal):
        number = typed.typed
        candidates.append(int(number) if number == number.to_integral_value() else float(number))
    for candidate in candidates:
        accepted = field_type.validate(candidate)
        if isinstance(accepted, Accepted):
            return (accepted.json_value,)
    return None


class Origin(StrEnum):
    """Where a field's starting value came from."""

    ANSWER = "answer"
    PREFILL = "prefill"
    MEMORY = "memory"
    DEFAULT = "default"


PRECEDENCE: tuple[Origin, ...] = (Origin.ANSWER, Origin.PREFILL, Origin.MEMORY, Origin.DEFAULT)
"""Highest first: what the user said in this conversation, an explicit one-shot prefill,
memory, context defaults."""


@dataclass(frozen=True, slots=True)
class Prefill:
    """A starting value to write into an empty field: from where, and (from memory) the fill
    with its provenance."""

    field_id: str
    origin: Origin
    value: Any
    fill: Fill | None = None


def prefill_values(
    field_ids: Sequence[str],
    *,
    answered: Collection[str] = (),
    prefill: Mapping[str, Any] | None = None,
    recall: RecallPlan | None = None,
    defaults: Mapping[str, Any] | None = None,
) -> dict[str, Prefill]:
    """One starting value per empty field, from the highest source in ``PRECEDENCE`` that
    has one; a field with an answer in force gets nothing (fill-empty-only), and so does a
    field no source has a value for. A blank value (None, empty or spaces) counts as none."""
    prefill, defaults = prefill or {}, defaults or {}
    recall = recall or RecallPlan()
    chosen: dict[str, Prefill] = {}
    for field_id in field_ids:
        if field_id in answered:
            continue
        if not _blank(prefill.get(field_id)):
            chosen[field_id] = Prefill(field_id, Origin.PREFILL, prefill[field_id])
        elif field_id in recall.fills:
            fill = recall.fills[field_id]
            chosen[field_id] = Prefill(field_id, Origin.MEMORY, fill.value, fill)
        elif field_id not in recall.offers and not _blank(defaults.get(field_id)):
            chosen[field_id] = Prefill(field_id, Origin.DEFAULT, defaults[field_id])
    return chosen


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())
