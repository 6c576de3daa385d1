"""Planning a revision: what a statement, a confirmation or a deletion appends, or why not.

The fact store appends revisions; these pure functions decide which one. Each takes the key's
head as read (None: never stated) and returns the ``FactRevision`` to append, planned on that
head's version, or a ``Refusal``: data an API returns as it is (``code``, ``message``,
``hint``, ``did_you_mean``), never an exception. A refused statement writes nothing.

``plan_statement`` goes, in order:

1. The key must be in the vocabulary (``unknown_fact_key``, with the likely keys) and storable:
   a ``do_not_store`` key is refused (``not_stored``) and never written.
2. The value: the one given, or else the one a derivation rule reads from the words
   (``forms.memory.derivations``). No value and no words is ``no_value``; words no rule reads
   is ``no_rule``: memory is extractive, it never guesses. A value the key's type refuses is
   ``invalid_value``. When both a value and words come, and a rule reads the words, the two
   must agree (``words_disagree`` otherwise) and a conversion is recorded as the derivation.
3. The period: ``valid_until`` must come after the start (``valid_from``, else the time it
   was stated: a period that ended before it was stated needs its start), ``invalid_period``.
4. The kind of change: the same value as the period holding when it was said, with no period
   given, is a ``confirmed`` (its age starts again; the original words and ``stated_at``
   stay), provided that period already runs until the next change known, which is as far as
   the statement would hold; with ``correction`` set and a value in force, a ``corrected``;
   anything else ``stated`` (a contradiction closes the old value's period where the new one
   starts, and an undated one ends at the next change known: ``forms.memory.facts``).

Revisions are recorded in order: ``recorded_at`` is ``now``, or the head's last change if a
clock behind it planned the revision.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from forms.memory.derivations import DEFAULT_DERIVATIONS, Derivations
from forms.memory.facts import (
    Change,
    Derivation,
    Fact,
    FactHead,
    FactRevision,
    FactValue,
    Source,
    Words,
    next_change,
    renewed,
)
from forms.schema import Accepted
from forms.vocabulary import FactKey, UnknownFactKey, Vocabulary

RefusalCode = Literal[
    "unknown_fact_key",
    "not_stored",
    "no_value",
    "no_rule",
    "invalid_value",
    "words_disagree",
    "invalid_period",
    "no_fact",
]


class Statement(BaseModel):
    """A fact as it comes in (the API's ``PUT /memory/facts/{key}``, an answer to a field
    mapped to a key): a value, or the words to read it from, or both."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: Annotated[str, Field(min_length=1, max_length=200)]
    value: FactValue | None = None
    words: Words | None = None
    source: Source
    stated_at: AwareDatetime | None = None
    """When it was said (None: now)."""
    valid_from: AwareDatetime | None = None
    valid_until: AwareDatetime | None = None
    correction: bool = False
    """The value in force was wrong (not changed in the world): correct it."""


class Refusal(BaseModel):
    """Why nothing was appended; nothing was written."""

    model_config = ConfigDict(frozen=True)

    code: RefusalCode
    message: str
    hint: str | None = None
    did_you_mean: tuple[str, ...] = ()


def plan_statement(
    statement: Statement,
    head: FactHead | None,
    *,
    vocabulary: Vocabulary,
    now: datetime,
    derivations: Derivations = DEFAULT_DERIVATIONS,
) -> FactRevision | Refusal:
    """The revision ``statement`` appends to the key's history (``head``), or a refusal."""
    _same_key(head, statement.key)
    key = _stored_key(statement, vocabulary)
    if isinstance(key, Refusal):
        return key
    read = _value(key, statement, derivations)
    if isinstance(read, Refusal):
        return read
    value, derivation = read
    stated_at = statement.stated_at or now
    start = statement.valid_from or stated_at
    if statement.valid_until is not None and statement.valid_until <= start:
        return Refusal(
            code="invalid_period",
            message="valid_until must come after the start of the period",
            hint="a period that ended before it was stated needs valid_from",
        )
    current = head.fact if head is not None else None
    recorded_at = _recorded_at(head, now)
    dated = statement.valid_from is not None or statement.valid_until is not None
    repeated = None if dated else _repeated(key, head, value, stated_at, recorded_at)
    change: Change = "stated"
    if repeated is not None:
        change = "confirmed"
    elif current is not None and head is not None and statement.correction:
        change = "corrected"
        wrong = renewed(head.periods, stated_at, recorded_at) or current
        refusal = _correction_period(statement, wrong)
        if refusal is not None:
            return refusal
    return FactRevision(
        key=key.key,
        seq=head.version if head is not None else 0,
        change=change,
        value=repeated.value if repeated is not None else value,
        words=statement.words,
        derivation=None if repeated is not None else derivation,
        source=statement.source,
        stated_at=None if repeated is not None else stated_at,
        confirmed_at=stated_at if repeated is not None else None,
        valid_from=statement.valid_from,
        valid_until=statement.valid_until,
        recorded_at=recorded_at,
    )


def _stored_key(statement: Statement, vocabulary: Vocabulary) -> FactKey | Refusal:
    """The vocabulary's key ``statement`` names, or why no fact is kept under it."""
    try:
        key = vocabulary.get(statement.key)
    except UnknownFactKey as unknown:
        hint = "use a key of the memory vocabulary"
        return Refusal(
            code="unknown_fact_key",
            message=str(unknown),
            hint=hint,
            did_you_mean=unknown.did_you_mean,
        )
    if not key.storable:
        return Refusal(
            code="not_stored",
            message=f"{key.label} ({key.key}) is never kept as a fact: it goes stale within days",
        )
    return key


def _repeated(
    key: FactKey, head: FactHead | None, value: Any, stated_at: datetime, recorded_at: datetime
) -> Fact | None:
    """The period an undated statement of ``value`` at ``stated_at`` only repeats, or None.

    Stated, the value would hold from ``stated_at`` until the next change known
    (``next_change``). When the period holding at ``stated_at`` (still open when recorded, the
    one a confirmation then renews) has that value and already runs exactly that far, the
    statement adds nothing but the sighting: it is a confirmation of that period. Otherwise it
    is a statement of its own: a repeat of an older value said at an older time, recorded late,
    is that value's own short period before the newer one, never a confirmation of the newer
    value; and the same value said where its period has a gap after it fills the gap."""
    if head is None:
        return None
    periods = head.periods
    period = renewed(periods, stated_at, recorded_at)
    if period is None or not period.holds_at(stated_at):
        return None
    runs_on = period.valid_until == next_change(periods, stated_at)
    return period if runs_on and _same(key, period.value, value) else None


def plan_confirmation(
    head: FactHead | None,
    *,
    source: Source,
    now: datetime,
    at: datetime | None = None,
    revision: int | None = None,
) -> FactRevision | Refusal:
    """The revision confirming the value in force (the user said it is still right, at ``at``,
    by default ``now``): the period holding then, or else the latest (``renewed``: with a move
    planned for next month, confirming renews where the user lives today, and the move
    stays). ``no_fact`` when there is none, or when ``revision`` is given (the ``seq`` that
    stated the value the user was shown) and that is not the period a confirmation renews."""
    if head is None or head.fact is None:
        return _no_fact(head)
    confirmed_at, recorded_at = at or now, _recorded_at(head, now)
    period = renewed(head.periods, confirmed_at, recorded_at)
    assert period is not None  # a head with a fact has a period
    if revision is not None and period.revision != revision:
        return Refusal(
            code="no_fact",
            message=f"the fact {head.key} shown (revision {revision}) is no longer in force",
            hint="state the value instead",
        )
    return FactRevision(
        key=head.key,
        seq=head.version,
        change="confirmed",
        value=period.value,
        source=source,
        confirmed_at=confirmed_at,
        recorded_at=recorded_at,
    )


def plan_deletion(
    head: FactHead | None, *, source: Source, now: datetime
) -> FactRevision | Refusal:
    """The revision deleting the key (recall never returns it again, and every earlier
    revision's content is erased when it is appended); ``no_fact`` when nothing is in force."""
    if head is None or head.fact is None:
        return _no_fact(head)
    return FactRevision(
        key=head.key,
        seq=head.version,
        change="deleted",
        source=source,
        recorded_at=_recorded_at(head, now),
    )


def _value(
    key: FactKey, statement: Statement, derivations: Derivations
) -> tuple[Any, Derivation | None] | Refusal:
    """The value to store (as the key's type gives its JSON) and its derivation."""
    words = statement.words
    derived = derivations.derive(words, key.unit) if words is not None else None
    if statement.value is not None:
        sent: Any = statement.value
    elif derived is not None:
        sent = derived.text
    elif words is None:
        return Refusal(code="no_value", message=f"{key.key}: neither a value nor words came")
    else:
        unit = f" in {key.unit}" if key.unit else ""
        return Refusal(
            code="no_rule",
            message=f"no rule reads {words!r} as {key.label.lower()}{unit}",
            hint="send the value itself, or the words of the quantity alone (70 kg, 5'8\")",
        )
    given = key.type.accept(sent)
    if not isinstance(given, Accepted):
        return Refusal(code="invalid_value", message=f"{key.key}: {given.message}", hint=given.hint)
    if derived is None or words is None:
        return given.json_value, None
    read = key.type.accept(derived.text)
    if not isinstance(read, Accepted) or read.typed != given.typed:
        stated = key.show(given.json_value)
        return Refusal(
            code="words_disagree",
            message=f"{words!r} reads as {key.show(derived.text)} ({derived.rule}), not {stated}",
            hint="send the value the words state, or leave the value out",
        )
    return given.json_value, Derivation(
        rule=derived.rule, words=words
    ) if derived.converted else None


def _correction_period(statement: Statement, current: Fact) -> Refusal | None:
    """Why a correction's period cannot apply to the fact in force, or None. It keeps the
    fact's period unless it gives its own start or end; it must end after it starts, and after
    the corrected fact started."""
    start = statement.valid_from or current.since
    until = statement.valid_until if statement.valid_until is not None else current.valid_until
    if statement.valid_until is not None and statement.valid_until <= current.since:
        shown = current.since.date().isoformat()
        message = f"a correction fixes the value in force, which starts {shown}: it ends after"
    elif until is not None and until <= start:
        message = f"the corrected period would end ({until.date().isoformat()}) before it starts"
    else:
        return None
    return Refusal(
        code="invalid_period",
        message=message,
        hint="to record a past value, state it (not as a correction) with its period",
    )


def _same(key: FactKey, stored: Any, value: Any) -> bool:
    """Whether two stored values are one value (``"70"`` and ``"70.0"`` kg are)."""
    first, second = key.type.validate(stored), key.type.validate(value)
    return (
        isinstance(first, Accepted) and isinstance(second, Accepted) and first.typed == second.typed
    )


def _recorded_at(head: FactHead | None, now: datetime) -> datetime:
    return max(now, head.changed_at) if head is not None else now


def _same_key(head: FactHead | None, key: str) -> None:
    if head is not None and head.key != key:
        raise ValueError(f"planning {key!r} on the head of {head.key!r}")


def _no_fact(head: FactHead | None) -> Refusal:
    key = head.key if head is not None else "that key"
    return Refusal(code="no_fact", message=f"no fact {key} is in force")
