"""Facts: append-only revisions per key, read bi-temporally.

Every change to what a principal's memory holds about a key is a ``FactRevision``, appended
to the key's history and never changed afterwards (one exception, ``deleted``, below). A
revision says what kind of change it is:

* ``stated``: a value the user stated, in ``words``, from a ``source``, at ``stated_at``. If
  the user said when it is or was true, ``valid_from`` / ``valid_until`` hold it (world time)
  and it replaces exactly that period. Otherwise it is taken as true from ``stated_at`` until
  the next change known: the start of the first period that starts after ``stated_at``, or no
  end when none does. So a statement recorded late (said before a newer one that was recorded
  first) slots in before the newer value, which stays in force, and "I live in Lyon" said
  today leaves a move planned for next month in place. A statement that contradicts the value
  holding does not erase it: the old value's validity is closed where the new one begins, so
  "what was true on 1 March" still has an answer.
* ``corrected``: the value in force was wrong, not changed in the world ("I said 70, I meant
  75"). It replaces that value over the same period; the wrong value stays in the history, so
  "what did we believe on 1 March" still has an answer too. The value in force is the period
  a confirmation said then would renew (below): the one holding at ``stated_at`` while it is
  still open, else the latest.
* ``confirmed``: a value is still right (``confirmed_at``); its age starts again. It renews
  the period holding at ``confirmed_at`` if that is still open when recorded (Lyon today,
  while Berlin is planned), else the latest (``renewed``).
* ``deleted``: forget the key. Recall never returns it again, and every earlier revision of
  the key has its content (value, words, derivation) erased in the same write, its record
  (kind, times, source) kept with ``erased=True``. A user who deletes a fact in the fact
  editor means "forget it": keeping the value in a history that every export and history read
  shows would not honour that, and the old value is worth little to an audit that still sees
  when it was stated, from where, and when it was deleted. Corrections never erase anything.

Two clocks: ``recorded_at`` is system time (when Formwork learned it; revisions are recorded
in order), ``valid_from``/``valid_until`` world time. ``FactHistory`` folds a history into a
*timeline*, the periods of world time each value held as believed at some system time:
``as_of(t)`` answers "what did we believe on date t" (the value in force as of the revisions
recorded by then) and ``valid_at(t)`` "what was true on date t" (as believed now, or as of a
system time).

A key's ``FactHead`` is what the store keeps beside the history: the number of revisions
(the compare-and-set version: a revision's ``seq`` is the version it was planned on), the
fact in force (``fact``: the latest period of the timeline, None when never stated or
deleted), ``earlier``: the other periods still open when it last changed (the value true
today is not the latest period when a change is planned) and the last period that had ended
by then, and how many revisions are erased. ``FactHead.at(t)`` is the period holding at
``t``, else the latest; recall weighs that one at ``now``.

``apply_revision`` is the one definition of what appending a revision does to a head; the
stores call it. A head keeps the timeline from the last period that had ended when it
changed on (a suffix: every period it dropped ended before the first it keeps starts), and
says whether it dropped any (``whole``). Folding a revision into the kept periods gives the
same periods the whole timeline's fold ends with, so the same latest period and the same
periods still open: a revision that reaches before the first kept period either covers it
(a period running past that start, a correction, which replaces a kept period) and then the
dropped ones it meets are past and cut the same way; or it lies wholly before it, and then
when it ended by the time it was recorded it changes nothing the head keeps (it is left
out), and when it is still open no dropped period, all of them past, can be inside it. One
revision the head cannot fold alone: an undated statement said before the first kept period
starts, when that period starts after the statement is recorded (a correction can move the
only started period into the future). It holds until the next change known, which is a
dropped period's start (so it ended in the past and changes nothing kept) or the first kept
period's (so it is still open): only the history tells, and ``apply_revision`` reads it
then, through the ``history`` its caller passes. Such a statement (said long ago, recorded
late, after a correction moved the value in force to a later start) is rare; every other
append reads no history.

The last ended period is kept, although it is past, because it makes that case rarer still:
while the head keeps a period that started by the time a statement is recorded, a statement
said before it had ended by then.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Annotated

from pydantic import AwareDatetime, BaseModel, Field, model_validator

from forms.memory.errors import FactConflict
from forms.memory.fact_models import (
    _FROZEN,
    Change,
    Derivation,
    Fact,
    FactName,
    FactRevision,
    FactValue,
    MemorySettings,
    Source,
    SourceKind,
    Words,
)
from forms.memory.timeline import fold, holding, is_open, latest_period, next_change, renewed

__all__ = [
    "Change",
    "Derivation",
    "Fact",
    "FactHead",
    "FactHistory",
    "FactName",
    "FactRevision",
    "FactValue",
    "MemorySettings",
    "Source",
    "SourceKind",
    "Words",
    "apply_revision",
    "holding",
    "next_change",
    "renewed",
]

_fold = fold
"""The fold ``apply_revision`` and ``FactHistory`` run, by the name a bench test swaps."""


class FactHead(BaseModel):
    """A key's head: ``version`` revisions appended, the ``fact`` in force (the latest period;
    None: deleted), the last revision's ``recorded_at``, ``erased``: revisions
    ``0 .. erased - 1`` have had their content erased by a deletion, and ``earlier``: the
    other periods the head keeps, by start.

    ``earlier`` holds every period that had not ended by ``changed_at`` (Lyon until a move
    to Berlin planned for next month) and the last one that had: the value true today is not
    always the latest period, and the last ended period marks where the history the head
    dropped stops, so a statement recorded late cannot stretch into it. It defaults to empty:
    heads stored before it existed kept only ``fact``.

    ``whole``: the head keeps every period of the timeline (it never dropped one). False
    by default, which is always safe: a head that is not whole reads the history for the
    one revision it cannot fold alone (see the module's docstring), so heads stored before
    the flag existed stay right."""

    model_config = _FROZEN

    key: FactName
    version: Annotated[int, Field(ge=1)]
    fact: Fact | None
    changed_at: AwareDatetime
    erased: Annotated[int, Field(ge=0)] = 0
    earlier: tuple[Fact, ...] = ()
    whole: bool = False

    @model_validator(mode="after")
    def _in_order(self) -> FactHead:
        if self.fact is None and self.earlier:
            raise ValueError("a head with no fact in force keeps no periods")
        for first, second in itertools.pairwise(self.periods):
            if first.key != self.key or first.valid_until is None:
                raise ValueError("a head's earlier periods are the key's, each closed")
            if first.valid_until > second.since:
                raise ValueError("a head's periods are in order and never overlap")
        return self

    @property
    def periods(self) -> tuple[Fact, ...]:
        """Every period the head keeps, by start: ``earlier``, then ``fact``."""
        return (*self.earlier, self.fact) if self.fact is not None else ()

    def at(self, when: datetime) -> Fact | None:
        """The period holding at ``when`` (world time), else the latest (``fact``), so that a
        caller can still say why it is of no use then (not started yet, or ended)."""
        return holding(self.periods, when)


def apply_revision(
    head: FactHead | None,
    revision: FactRevision,
    history: Callable[[], Sequence[FactRevision]] | None = None,
) -> FactHead:
    """The head after appending ``revision``: the one definition every store follows.

    ``history`` gives the key's revisions so far (at least the ``revision.seq`` the head
    stands for); it is called only for the one revision a head that dropped periods cannot
    fold alone (the module's docstring), and without it that revision is a ``ValueError``.
    ``FactConflict`` when ``revision.seq`` is not the head's version (0: no head);
    ``ValueError`` when it cannot apply (another key, recorded before the last revision, a
    correction or confirmation with no value in force, a confirmation of another value, a
    period that ends before it starts). Nothing is stored in either case."""
    version = head.version if head is not None else 0
    if revision.seq != version:
        raise FactConflict(revision.key, revision.seq, head)
    if head is not None:
        if revision.key != head.key:
            raise ValueError(f"a revision of {revision.key!r} cannot append to {head.key!r}")
        if revision.recorded_at < head.changed_at:
            raise ValueError("revisions are recorded in order: this one is older than the head")
    if head is None or head.whole or revision.change == "deleted":
        whole, periods = True, _fold(list(head.periods) if head is not None else [], revision)
    else:
        whole, folded = False, _fold_kept(list(head.periods), revision)
        if folded is None:
            if history is None:
                raise ValueError(
                    f"fact {revision.key!r}: this statement needs the key's history to fold"
                )
            whole, folded = True, FactHistory([*history()[: revision.seq], revision]).timeline()
        periods = folded
    kept = _kept(periods, revision)
    return FactHead(
        key=revision.key,
        version=version + 1,
        fact=kept[-1] if kept else None,
        changed_at=revision.recorded_at,
        erased=revision.seq if revision.change == "deleted" else (head.erased if head else 0),
        earlier=tuple(kept[:-1]),
        whole=whole and len(kept) == len(periods),
    )


class FactHistory:
    """A key's revisions, in order from 0, read bi-temporally."""

    __slots__ = ("_revisions",)

    def __init__(self, revisions: Sequence[FactRevision]) -> None:
        for expected, revision in enumerate(revisions):
            if revision.seq != expected or revision.key != revisions[0].key:
                raise ValueError("a history is one key's revisions, each seq from 0 in order")
        self._revisions = tuple(revisions)

    @property
    def revisions(self) -> tuple[FactRevision, ...]:
        return self._revisions

    def timeline(self, *, as_of: datetime | None = None) -> list[Fact]:
        """The periods of world time each value held, by start, as believed at system time
        ``as_of`` (every revision recorded by then; None: all of them)."""
        periods: list[Fact] = []
        for revision in self._revisions:
            if as_of is not None and revision.recorded_at > as_of:
                break
            periods = _fold(periods, revision)
        return periods

    def as_of(self, system_time: datetime) -> Fact | None:
        """The fact in force as believed at ``system_time``: what we believed then."""
        return latest_period(self.timeline(as_of=system_time))

    def valid_at(self, world_time: datetime, *, as_of: datetime | None = None) -> Fact | None:
        """The fact true at ``world_time`` in the world, as believed now (or at ``as_of``)."""
        return next((p for p in self.timeline(as_of=as_of) if p.holds_at(world_time)), None)

    def head(self) -> FactHead | None:
        """The head these revisions make (None for an empty history)."""
        head: FactHead | None = None
        for revision in self._revisions:
            head = apply_revision(head, revision, lambda: self._revisions)
        return head


# ---------------------------------------------------------------- a head's suffix


def _fold_kept(periods: list[Fact], revision: FactRevision) -> list[Fact] | None:
    """A head's kept periods (a suffix of the timeline, some dropped before them) after
    ``revision``, as the whole timeline's fold ends; None when only the history can tell (the
    module's docstring says why each case holds)."""
    if revision.change != "stated" or not periods:
        return _fold(periods, revision)
    first = periods[0].since
    assert revision.stated_at is not None  # a stated revision has one
    if revision.valid_from is None and revision.valid_until is None:
        if revision.stated_at >= first:
            return _fold(periods, revision)
        # it holds until a dropped period starts or until the first kept one does
        return periods if first <= revision.recorded_at else None
    until = revision.valid_until
    if until is not None and until <= first and until <= revision.recorded_at:
        return periods  # wholly among the dropped periods, and past
    return _fold(periods, revision)


def _kept(periods: list[Fact], revision: FactRevision) -> list[Fact]:
    """What a head keeps of a timeline (by start) after ``revision``: the periods from the
    last one that had ended when it was recorded on (see the module's docstring)."""
    ended = [n for n, period in enumerate(periods) if not is_open(period, revision.recorded_at)]
    return periods[ended[-1] :] if ended else periods
