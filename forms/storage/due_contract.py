"""The behaviour every ``DueIndex`` adapter must show, as a reusable pytest suite.

Subclass ``DueIndexContract`` in a test module (its name must start with ``Test``) and
override the ``store`` fixture to return a fresh, empty store that is both the ``FormStore``
and its ``DueIndex``. Instances are written through the ``FormStore`` port (create, commit)
and found through ``due`` only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any, Protocol

import pytest

from forms.instance import Commit, FormInstance, InstanceState, OutboxEntry
from forms.storage.contract import T0, at, make_instance
from forms.storage.contract_builders import put_state
from forms.storage.due import DUE_SHARDS, DueIndex, due_place, shard


class DueStore(Protocol):
    """A form store that is also its own due index (both adapters are)."""

    def create(self, instance: FormInstance, call: Any = None) -> None: ...
    def commit(self, commit: Commit) -> FormInstance: ...
    def get(self, instance_id: str) -> FormInstance: ...
    def due(
        self, now: datetime, keep_going: Callable[[], bool] | None = None
    ) -> Iterator[FormInstance]: ...


def entry(
    instance_id: str,
    name: str = "notify",
    *,
    kind: str = "executor",
    status: str = "pending",
    created: datetime = T0,
    dispatched: datetime | None = None,
    deadline: datetime | None = None,
) -> OutboxEntry:
    """An outbox entry of ``instance_id``, keyed as the engine keys it."""
    return OutboxEntry.model_validate(
        {
            "key": f"{instance_id}:{name}:1",
            "hook_id": name,
            "occurrence": 1,
            "kind": kind,
            "status": status,
            "created_at": created,
            "dispatched_at": dispatched,
            "deadline": deadline,
            "finished_at": None if status == "pending" else created,
        }
    )


def holding(*entries: OutboxEntry, status: str = "open") -> InstanceState:
    return InstanceState.model_validate(
        {"updated_at": T0, "status": status, "outbox": {e.key: e for e in entries}}
    )


def with_outbox(instance_id: str, *entries: OutboxEntry, status: str = "open") -> FormInstance:
    return make_instance(
        instance_id,
        principal=f"t{len(instance_id) % 3}/alice",  # the index is across tenants
        conversation_id=f"conv-{instance_id}",
        state=holding(*entries, status=status),
    )


def due_ids(store: DueStore, now: datetime) -> list[str]:
    return sorted(instance.id for instance in store.due(now))


class DueIndexContract:
    """Tests every due index must pass; subclasses provide ``store``."""

    @pytest.fixture
    def store(self) -> DueStore:
        raise NotImplementedError("override the store fixture")

    def test_the_store_is_a_due_index(self, store: DueStore) -> None:
        assert isinstance(store, DueIndex)

    def test_idle_instances_are_not_read(self, store: DueStore) -> None:
        store.create(with_outbox("idle"))
        store.create(with_outbox("done", entry("done", status="done")))
        store.create(with_outbox("failed", entry("failed", status="failed")))
        store.create(with_outbox("waits", entry("waits", kind="approval")))  # no deadline
        assert due_ids(store, at(10**6)) == []

    def test_a_pending_hook_is_due_from_when_it_was_raised(self, store: DueStore) -> None:
        store.create(with_outbox("a", entry("a", created=at(60))))
        assert due_ids(store, at(59)) == []
        assert due_ids(store, at(60)) == ["a"]

    def test_a_dispatched_hook_is_due_from_its_dispatch(self, store: DueStore) -> None:
        store.create(with_outbox("a", entry("a", created=at(0), dispatched=at(30))))
        assert due_ids(store, at(29)) == [] and due_ids(store, at(30)) == ["a"]

    def test_an_approval_is_due_at_its_deadline(self, store: DueStore) -> None:
        store.create(with_outbox("a", entry("a", kind="approval", deadline=at(3600))))
        assert due_ids(store, at(3599)) == [] and due_ids(store, at(3600)) == ["a"]

    def test_the_earliest_entry_decides(self, store: DueStore) -> None:
        store.create(
            with_outbox(
                "a",
                entry("a", "late", kind="approval", deadline=at(3600)),
                entry("a", "soon", created=at(5)),
            )
        )
        assert due_ids(store, at(5)) == ["a"]

    def test_an_instance_leaves_when_nothing_is_due_and_moves_when_dispatched(
        self, store: DueStore
    ) -> None:
        store.create(with_outbox("a", entry("a", created=at(0))))
        put_state(store, "a", holding(entry("a", created=at(0), dispatched=at(100))))
        assert due_ids(store, at(99)) == [] and due_ids(store, at(100)) == ["a"]
        put_state(store, "a", holding(entry("a", status="done")))
        assert due_ids(store, at(10**6)) == []

    def test_a_hook_raised_after_the_form_closed_is_due(self, store: DueStore) -> None:
        store.create(with_outbox("a", entry("a", "on_complete"), status="completed"))
        assert due_ids(store, at(1)) == ["a"]

    def test_every_shard_is_read_and_each_instance_once(self, store: DueStore) -> None:
        ids = [f"fi_{n}" for n in range(4 * DUE_SHARDS)]
        assert len({shard(i) for i in ids}) == DUE_SHARDS  # the ids spread over every shard
        for n, instance_id in enumerate(ids):
            store.create(with_outbox(instance_id, entry(instance_id, created=at(n))))
        found = [instance.id for instance in store.due(at(10**6))]
        assert sorted(found) == sorted(ids)
        assert due_ids(store, at(len(ids) // 2 - 1)) == sorted(ids[: len(ids) // 2])

    def test_what_is_yielded_is_the_instance_as_stored(self, store: DueStore) -> None:
        store.create(with_outbox("a", entry("a")))
        (found,) = store.due(at(1))
        assert found == store.get("a") and due_place(found) is not None

    def test_a_sweep_stops_when_told(self, store: DueStore) -> None:
        for n in range(3 * DUE_SHARDS):
            store.create(with_outbox(f"fi_{n}", entry(f"fi_{n}")))
        found = list(store.due(at(1), keep_going=lambda: False))
        assert 1 <= len(found) < 3 * DUE_SHARDS  # the first page only
