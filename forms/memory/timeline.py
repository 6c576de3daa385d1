"""A key's timeline: how revisions fold into the periods of world time each value held.

``holding`` and ``renewed`` pick one period of a timeline (the one recall weighs, the one a
confirmation renews); ``next_change`` is where a statement with no period stops holding; the
private folds are what ``forms.memory.facts``'s ``apply_revision`` and ``FactHistory`` run (its
docstring says what each kind of revision does to the periods, and why a head's kept suffix
folds as the whole timeline does).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from forms.memory.fact_models import Fact, FactRevision


def holding(periods: Sequence[Fact], when: datetime) -> Fact | None:
    """Of one key's ``periods``, the one holding at ``when`` (world time), else the latest:
    what recall weighs for the key (a move planned for next month does not hide where the
    user lives today). None when there are none."""
    now_true = (period for period in periods if period.holds_at(when))
    return next(now_true, None) or latest_period(periods)


def renewed(periods: Sequence[Fact], at: datetime, recorded_at: datetime) -> Fact | None:
    """The period a confirmation at ``at`` (world time), recorded at ``recorded_at``, renews:
    the one holding at ``at`` if it is still open when recorded (Lyon today, while a move to
    Berlin is planned), else the latest. ``periods`` by start; None when there are none."""
    still_open = (p for p in periods if p.holds_at(at) and is_open(p, recorded_at))
    return next(still_open, None) or latest_period(periods)


def latest_period(periods: Sequence[Fact]) -> Fact | None:
    """The period that starts last (None: there are none)."""
    return max(periods, key=lambda period: period.since, default=None)


def fold(periods: list[Fact], revision: FactRevision) -> list[Fact]:
    """The timeline after one revision (``periods`` by start, none overlapping)."""
    if revision.change == "deleted":
        return []
    if revision.change == "stated":
        if revision.valid_from is None and revision.valid_until is None:
            # no period given: true from stated_at until the next change we know of
            assert revision.stated_at is not None  # a stated revision has one
            new = _fact(revision, valid_until=next_change(periods, revision.stated_at))
        else:
            new = _fact(revision)
        return _ordered([*_punch(periods, new.since, new.valid_until), new])
    latest = latest_period(periods)
    if latest is None:
        raise ValueError(f"fact {revision.key!r}: no value in force to be {revision.change}")
    if revision.change == "confirmed":
        return _confirm(periods, revision, latest)
    # corrected: the value in force when it was said (the period a confirmation then renews:
    # today's city while a move is planned, else the latest), over that period unless the
    # correction says otherwise
    assert revision.stated_at is not None  # a corrected revision has one
    wrong = renewed(periods, revision.stated_at, revision.recorded_at) or latest
    rest = [period for period in periods if period is not wrong]
    start = revision.valid_from or wrong.since
    until = revision.valid_until if revision.valid_until is not None else wrong.valid_until
    if revision.valid_until is not None and revision.valid_until <= wrong.since:
        raise ValueError(f"fact {revision.key!r}: a correction cannot end before the fact starts")
    fixed = _fact(revision, valid_from=start, valid_until=until)
    return _ordered([*_punch(rest, fixed.since, fixed.valid_until), fixed])


def next_change(periods: Sequence[Fact], stated_at: datetime) -> datetime | None:
    """Where a statement with no period, made at ``stated_at``, stops holding: the start of
    the first period that starts after it (None: none does, it holds with no end)."""
    return min((p.since for p in periods if p.since > stated_at), default=None)


def _confirm(periods: list[Fact], revision: FactRevision, latest: Fact) -> list[Fact]:
    """The timeline with ``confirmed_at`` moved on (never back: a confirmation recorded late
    does not make a value older) for the period the confirmation renews (``renewed``), or
    else for the latest one, which is what confirmations planned before heads kept open
    periods renewed; its value must be the confirmed one."""
    assert revision.confirmed_at is not None  # a confirmed revision has one
    target = renewed(periods, revision.confirmed_at, revision.recorded_at)
    if target is None or target.value != revision.value:
        target = latest
    if target.value != revision.value:
        raise ValueError(f"fact {revision.key!r}: a confirmation confirms the value in force")
    seen = max(target.confirmed_at or revision.confirmed_at, revision.confirmed_at)
    again = target.model_copy(update={"confirmed_at": seen})
    return _ordered([again if period is target else period for period in periods])


def is_open(period: Fact, at: datetime) -> bool:
    """Whether ``period`` has not ended by ``at``."""
    return period.valid_until is None or period.valid_until > at


def _fact(
    revision: FactRevision,
    *,
    valid_from: datetime | None = None,
    valid_until: datetime | None = None,
) -> Fact:
    assert revision.stated_at is not None  # a stated or corrected revision has one
    fact = Fact(
        key=revision.key,
        value=revision.value,
        words=revision.words,
        derivation=revision.derivation,
        source=revision.source,
        stated_at=revision.stated_at,
        valid_from=valid_from or revision.valid_from,
        valid_until=valid_until or revision.valid_until,
        recorded_at=revision.recorded_at,
        revision=revision.seq,
        erased=revision.erased,
    )
    if fact.valid_until is not None and fact.valid_until <= fact.since:
        raise ValueError(
            f"fact {revision.key!r}: its period ends before it starts (a period that ended "
            "before it was stated needs valid_from)"
        )
    return fact


def _punch(periods: Sequence[Fact], start: datetime, end: datetime | None) -> list[Fact]:
    """``periods`` with ``[start, end)`` cut out: a period it covers goes, one it overlaps is
    closed at ``start`` (the contradicted value's validity ends there) or starts at ``end``."""
    kept: list[Fact] = []
    for period in periods:
        before = end is not None and end <= period.since
        after = period.valid_until is not None and period.valid_until <= start
        if before or after:
            kept.append(period)
            continue
        if period.since < start:
            kept.append(period.model_copy(update={"valid_until": start}))
        if end is not None and (period.valid_until is None or end < period.valid_until):
            kept.append(period.model_copy(update={"valid_from": end}))
    return kept


def _ordered(periods: list[Fact]) -> list[Fact]:
    return sorted(periods, key=lambda period: period.since)
