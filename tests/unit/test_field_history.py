"""``FieldHistory`` as a data structure: shared appends, branches, and partial logs.

Logs are immutable values. Appending to the newest log of a list extends that list in place
(so a commit costs what it appends, not the history); appending to an older one branches; a
partial log (only its head in memory) reads the rest once, however many appends were made on
top of it.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from forms.instance import FieldHistory, Revision
from forms.storage.contract import seeded_log, value_revision

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def values(log: FieldHistory) -> list[object]:
    return [r.value for r in log.revisions]


def test_appends_on_one_log_share_its_entries_and_leave_every_earlier_log_as_it_was() -> None:
    # GIVEN a log of two entries, and one appended on top of it
    first = seeded_log(["a", "b"], T0)
    second = first.appended((value_revision("c", T0, prev=1),), 2)
    # WHEN the older log is appended to again (a branch: another writer planned on it)
    branch = first.appended((value_revision("x", T0, prev=1),), 2)
    # THEN each log reads as its own history, and the first is unchanged
    assert values(first) == ["a", "b"] and first.count == 2
    assert values(second) == ["a", "b", "c"]
    assert values(branch) == ["a", "b", "x"]
    # AND appending to the newer logs keeps them apart too
    third = second.appended((value_revision("d", T0, prev=2),), 3)
    assert values(third) == ["a", "b", "c", "d"] and values(branch) == ["a", "b", "x"]
    assert values(branch.appended((value_revision("y", T0, prev=2),), 3)) == ["a", "b", "x", "y"]


def test_the_same_append_made_twice_gives_equal_logs() -> None:
    # GIVEN a commit's entries applied to a log twice (planned, then stored)
    base = seeded_log(["a"], T0)
    more = (value_revision("b", T0, prev=0),)
    planned, stored = base.appended(more, 1), base.appended(more, 1)
    # THEN both read the same, and a later append on either does not show in the other
    assert planned == stored
    later = stored.appended((value_revision("c", T0, prev=1),), 2)
    assert values(planned) == ["a", "b"] and values(later) == ["a", "b", "c"]


def test_a_cursor_outside_the_new_log_is_refused() -> None:
    log = seeded_log(["a"], T0)
    with pytest.raises(ValueError, match="outside"):
        log.appended((), 1)
    with pytest.raises(ValueError, match="outside"):
        FieldHistory(log.revisions, 3)


class Loads:
    """A log's loader that counts its calls."""

    def __init__(self, log: tuple[Revision, ...]) -> None:
        self.log = log
        self.calls = 0

    def __call__(self) -> tuple[Revision, ...]:
        self.calls += 1
        return self.log


def partial_of(log: FieldHistory, loads: Loads) -> FieldHistory:
    return FieldHistory.partial(log.count, log.cursor, log.head(), log.redo_target(), loads)


def test_a_partial_log_appended_thousands_of_times_reads_its_base_once() -> None:
    # GIVEN a partial log of three entries (its head in memory)
    whole = seeded_log(["a", "b", "c"], T0)
    loads = Loads(whole.revisions)
    log = partial_of(whole, loads)
    # WHEN 3,000 entries are appended on top of it, one commit at a time
    for n in range(3_000):
        log = log.appended((value_revision(n, T0, prev=log.cursor),), log.count)
    # THEN nothing was read to do it, and the head is known
    assert loads.calls == 0 and not log.loaded
    assert log.in_force() is not None and log.in_force().value == 2_999  # type: ignore[union-attr]
    assert log.entry(log.undo_target() or 0).value == 2_998
    # AND the whole log reads its base once, however deep the appends went
    assert values(log) == ["a", "b", "c", *range(3_000)]
    assert loads.calls == 1 and log.loaded


def test_a_move_other_than_an_append_on_a_partial_log_reads_it_first() -> None:
    # GIVEN a partial log whose head says what undo and redo would do
    whole = seeded_log(["a", "b", "c"], T0).appended((), 1)  # "c" undone: redo available
    loads = Loads(whole.revisions)
    log = partial_of(whole, loads)
    assert (log.undo_target(), log.redo_target(), loads.calls) == (0, 2, 0)
    # WHEN redo moves the cursor
    redone = log.appended((), 2)
    # THEN the log was read, and the result is the whole log with the cursor moved
    assert loads.calls == 1
    assert redone == FieldHistory(whole.revisions, 2)
