"""The in-memory store places a committed instance again only when its place can move.

``same_places`` says a commit left the status, the definition version and the outbox as they
were; the store then keeps the instance's places in every index as they stood. That is only
right while every place is read from those alone (and the identity a commit keeps): checked
here over every pair of a set of states that differ in each of them and in what no place reads.
"""

from __future__ import annotations

import itertools
from datetime import timedelta

from forms.instance import FormInstance, InstanceState, OutboxEntry
from forms.storage.approvals import approval_place
from forms.storage.contract import T0, append_values, at, make_instance
from forms.storage.due import due_place
from forms.storage.failed_hooks import failed_place
from forms.storage.memory import InMemoryFormStore, same_places
from forms.storage.open_forms import open_place


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


def _places(instance: FormInstance) -> tuple[object, ...]:
    return (
        approval_place(instance),
        failed_place(instance),
        open_place(instance),
        due_place(instance),
    )


def test_a_commit_that_keeps_its_places_inputs_keeps_every_place() -> None:
    # GIVEN instances differing in status, version, outbox and what no place reads
    states = _states()
    # WHEN any one is committed over any other
    for before, after in itertools.product(states, repeat=2):
        # THEN same_places never holds where a place moved (equal places may still come of
        # different outboxes: then the store places the instance again, to the same place)
        if same_places(before, after):
            assert _places(before) == _places(after)
    # AND a change of what is not read (the update time alone) keeps them the same
    assert same_places(states[0], states[1])


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
