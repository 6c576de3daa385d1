"""The in-memory store places a committed instance again only when its place can move.

A commit's write compares what the instance's places are read from (its status, definition
version and outbox) with what it kept of the instance before, and keeps the instance's places
in every index as they stood when those are the same. That is only right while every place is
read from those alone (and the identity a commit keeps): checked here through the listings,
over every pair of a set of states that differ in each of them and in what no place reads. A
commit from one state to another lists the instance exactly as a store that was handed the
second state at once does, in every index (the page's cursors are the places' sort keys).
"""

from __future__ import annotations

import itertools
from datetime import timedelta

from forms.instance import Commit, FormInstance, InstanceState, OutboxEntry
from forms.storage.contract import T0, append_values, at, make_instance
from forms.storage.memory import InMemoryFormStore


def _entry(key: str, **values: object) -> OutboxEntry:
    return OutboxEntry.model_validate(
        {"key": key, "hook_id": "h", "occurrence": 1, "created_at": T0, **values}
    )


OUTBOXES: list[dict[str, OutboxEntry]] = [
    {},
    {"e": _entry("e")},
    {"e": _entry("e", dispatched_at=at(5))},
    {"e": _entry("e", status="failed", finished_at=at(6))},
    {"e": _entry("e", status="done", finished_at=at(6))},
    {"a": _entry("a", kind="approval")},
    {"a": _entry("a", kind="approval", deadline=at(50))},
    {"a": _entry("a", kind="approval", status="done", finished_at=at(7))},
]


def _states() -> list[FormInstance]:
    found = []
    for status, version, outbox, later in itertools.product(
        ("open", "completed", "abandoned"), (1, 2), OUTBOXES, (False, True)
    ):
        state = InstanceState(
            updated_at=T0 + timedelta(seconds=9 if later else 0), status=status, outbox=outbox
        )
        found.append(make_instance(principal="acme/alice", form_version=version, state=state))
    return found


def _listed(store: InMemoryFormStore) -> tuple[object, ...]:
    """Where every index lists the store's instances: each page's ids, cursors and next."""
    pages = (
        store.owed("acme"),
        store.settled("acme"),
        store.failed("acme"),
        store.older("acme", "intake", 3),
    )
    due = tuple(i.id for i in store.due(at(10_000)))
    return (*((tuple(i.id for i in p.instances), p.cursors, p.next) for p in pages), due)


def test_a_commit_lists_the_instance_where_its_new_state_stands() -> None:
    # GIVEN instances differing in status, version, outbox and what no place reads, and
    # where each is listed when a store holds it from the start
    states = _states()
    listed = []
    for state in states:
        fresh = InMemoryFormStore()
        fresh.create(state)
        listed.append(_listed(fresh))
    assert len(set(listed)) > 10  # the states stand in many different places
    # WHEN any one is committed over any other
    pairs = itertools.product(zip(states, listed, strict=True), repeat=2)
    for (before, _), (after, expected) in pairs:
        store = InMemoryFormStore()
        store.create(before)
        store.commit(
            Commit(
                instance_id=before.id,
                expected_version=0,
                state=after.state,
                form_version=after.form_version,
            )
        )
        # THEN every index lists it as it lists the state committed, held from the start
        assert _listed(store) == expected


def test_a_commit_that_moves_the_instance_moves_it_in_the_index() -> None:
    # GIVEN a stored open instance, in the open-form index
    store = InMemoryFormStore()
    store.create(make_instance(principal="acme/alice"))
    assert [i.id for i in store.older("acme", "intake", 2).instances] == ["inst-1"]
    # WHEN an answer is committed (nothing a place reads changes), then the form closes
    stored = store.commit(append_values(store.get("inst-1"), "name", ["Ada"], at(1)))
    assert [i.id for i in store.older("acme", "intake", 2).instances] == ["inst-1"]
    closed = InstanceState(updated_at=at(2), status="completed")
    store.commit(append_values(stored, "name", ["Grace"], at(2), state=closed))
    # THEN it left the index with the commit that closed it
    assert store.older("acme", "intake", 2).instances == ()
