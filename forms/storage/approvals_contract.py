"""The behaviour every ``ApprovalIndex`` adapter must show, as a reusable pytest suite.

Subclass ``ApprovalIndexContract`` in a test module (its name must start with ``Test``) and
override the ``store`` fixture to return a fresh, empty store that is both the ``FormStore``
and its ``ApprovalIndex``::

    class TestMemoryApprovalIndex(ApprovalIndexContract):
        @pytest.fixture
        def store(self) -> IndexedStore:
            return InMemoryFormStore()

Instances are written through the ``FormStore`` port (create, commit) and found through the
index's ``owed`` and ``settled`` only.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

import pytest

from forms.instance import Commit, FormInstance, InstanceState, OutboxEntry
from forms.storage.approvals import MAX_PAGE, ApprovalIndex
from forms.storage.contract import T0, at, make_instance
from forms.storage.contract_builders import page_ids as ids
from forms.storage.port import FormStore


class IndexedStore(Protocol):
    """A form store that is also its own approval index (both adapters are)."""

    def create(self, instance: FormInstance, call: Any = None) -> None: ...
    def commit(self, commit: Commit) -> FormInstance: ...
    def get(self, instance_id: str) -> FormInstance: ...
    def owed(self, tenant: str | None, *, limit: int = ..., after: str | None = ...) -> Any: ...
    def settled(self, tenant: str | None, *, limit: int = ..., after: str | None = ...) -> Any: ...


def approval(
    instance_id: str,
    n: int = 1,
    *,
    deadline: datetime | None = None,
    status: str = "pending",
    error: str | None = None,
    finished_at: datetime | None = None,
) -> OutboxEntry:
    """Approval entry ``n`` of ``instance_id``, keyed as the engine keys it."""
    key = f"{instance_id}:checkpoint.approve:{n}"
    return OutboxEntry.model_validate(
        {
            "key": key,
            "hook_id": "checkpoint.approve",
            "occurrence": n,
            "kind": "approval",
            "deadline": deadline,
            "status": status,
            "error": error,
            "created_at": T0,
            "finished_at": finished_at,
            "subject": {"amount": 7200},
        }
    )


def owing(*entries: OutboxEntry, status: str = "open") -> InstanceState:
    return InstanceState.model_validate(
        {"updated_at": T0, "status": status, "outbox": {e.key: e for e in entries}}
    )


def waiting(
    instance_id: str, principal: str = "acme/alice", deadline: datetime | None = None
) -> FormInstance:
    """An instance of ``principal`` owing one approval due at ``deadline``."""
    return make_instance(
        instance_id,
        principal=principal,
        conversation_id=f"conv-{instance_id}",
        state=owing(approval(instance_id, deadline=deadline)),
    )


def settle(store: IndexedStore, instance_id: str, when: datetime, **entry: Any) -> None:
    """Commit the instance's approval as done at ``when`` (decided, unless ``error``)."""
    current = store.get(instance_id)
    done = approval(instance_id, status="done", finished_at=when, **entry)
    state = current.state.model_copy(update={"outbox": {done.key: done}, "updated_at": when})
    store.commit(Commit(instance_id=instance_id, expected_version=current.version, state=state))


class ApprovalIndexContract:
    @pytest.fixture
    def store(self) -> IndexedStore:
        raise NotImplementedError("override the store fixture in the adapter's test module")

    def test_the_adapter_is_both_a_store_and_an_index(self, store: IndexedStore) -> None:
        assert isinstance(store, FormStore) and isinstance(store, ApprovalIndex)

    def test_an_empty_store_owes_nothing(self, store: IndexedStore) -> None:
        assert ids(store.owed("acme")) == [] and store.owed("acme").next is None
        assert ids(store.settled("acme")) == [] and ids(store.owed(None)) == []

    def test_an_approval_owed_at_creation_is_listed_with_the_instance_as_stored(
        self, store: IndexedStore
    ) -> None:
        store.create(make_instance("quiet", principal="acme/alice"))
        store.create(waiting("w1", deadline=at(3600)))
        (listed,) = store.owed("acme").instances
        assert listed == store.get("w1")

    def test_an_approval_owed_by_a_commit_appears(self, store: IndexedStore) -> None:
        store.create(make_instance("w1", principal="acme/alice"))
        assert ids(store.owed("acme")) == []
        state = owing(approval("w1", deadline=at(60)))
        store.commit(Commit(instance_id="w1", expected_version=0, state=state))
        assert ids(store.owed("acme")) == ["w1"]

    def test_a_decided_or_expired_approval_leaves_owed_for_settled(
        self, store: IndexedStore
    ) -> None:
        store.create(waiting("w1", deadline=at(60)))
        store.create(waiting("w2", deadline=at(120)))
        settle(store, "w1", at(10))  # decided
        settle(store, "w2", at(130))  # its timeout outcome (the store cannot tell them apart)
        assert ids(store.owed("acme")) == []
        assert ids(store.settled("acme")) == ["w2", "w1"]  # the latest first

    def test_a_withdrawn_approval_is_neither_owed_nor_settled(self, store: IndexedStore) -> None:
        store.create(waiting("w1", deadline=at(60)))
        settle(store, "w1", at(10), error="withdrawn: the form closed")
        assert ids(store.owed("acme")) == [] and ids(store.settled("acme")) == []

    def test_a_closed_form_owes_nothing_even_with_an_entry_left_pending(
        self, store: IndexedStore
    ) -> None:
        store.create(waiting("w1", deadline=at(60)))
        current = store.get("w1")
        closed = current.state.model_copy(update={"status": "terminated"})
        store.commit(Commit(instance_id="w1", expected_version=current.version, state=closed))
        assert ids(store.owed("acme")) == []

    def test_a_new_approval_after_a_settled_one_is_owed_again(self, store: IndexedStore) -> None:
        store.create(waiting("w1", deadline=at(60)))
        settle(store, "w1", at(10))
        current = store.get("w1")
        state = owing(
            approval("w1", status="done", finished_at=at(10)), approval("w1", 2, deadline=at(90))
        )
        store.commit(Commit(instance_id="w1", expected_version=current.version, state=state))
        assert ids(store.owed("acme")) == ["w1"] and ids(store.settled("acme")) == []

    def test_tenants_never_see_each_others_approvals(self, store: IndexedStore) -> None:
        store.create(waiting("a1", "acme/alice", at(60)))
        store.create(waiting("g1", "globex/alice", at(30)))
        store.create(waiting("n1", "alice", at(10)))  # a tenant-less principal
        store.create(waiting("h1", "ac#me/alice", at(10)))  # a tenant that escapes
        assert ids(store.owed("acme")) == ["a1"]
        assert ids(store.owed("globex")) == ["g1"]
        assert ids(store.owed(None)) == ["n1"]
        assert ids(store.owed("ac#me")) == ["h1"]
        assert ids(store.owed("acm")) == [] and ids(store.owed("")) == []

    def test_the_earliest_deadline_comes_first_and_none_comes_last(
        self, store: IndexedStore
    ) -> None:
        store.create(waiting("late", deadline=at(3000)))
        store.create(waiting("never"))
        store.create(waiting("soon", deadline=at(100)))
        two = make_instance(
            "two",
            principal="acme/bob",
            conversation_id="conv-two",
            state=owing(approval("two", deadline=at(5000)), approval("two", 2, deadline=at(50))),
        )
        store.create(two)  # its earliest pending deadline counts
        assert ids(store.owed("acme")) == ["two", "soon", "late", "never"]

    def test_pages_are_bounded_and_the_cursor_reads_on(self, store: IndexedStore) -> None:
        for n in range(5):
            store.create(waiting(f"w{n}", deadline=at(100 * (5 - n))))
        first = store.owed("acme", limit=2)
        assert ids(first) == ["w4", "w3"] and first.next is not None
        second = store.owed("acme", limit=2, after=first.next)
        assert ids(second) == ["w2", "w1"] and second.next is not None
        last = store.owed("acme", limit=2, after=second.next)
        assert ids(last) == ["w0"] and last.next is None
        exact = store.owed("acme", limit=5)
        assert len(exact.instances) == 5 and exact.next is None

    def test_a_cursor_names_no_instance(self, store: IndexedStore) -> None:
        for n in range(3):
            store.create(waiting(f"fi_secret{n}", deadline=at(100 + n)))
        cursor = store.owed("acme", limit=1).next
        assert cursor is not None and "fi_secret" not in cursor
        assert ids(store.owed("acme", limit=5, after=cursor)) == ["fi_secret1", "fi_secret2"]

    def test_settled_pages_read_on_from_the_latest(self, store: IndexedStore) -> None:
        for n in range(3):
            store.create(waiting(f"w{n}", deadline=at(1000)))
            settle(store, f"w{n}", at(10 * n))
        first = store.settled("acme", limit=2)
        assert ids(first) == ["w2", "w1"] and first.next is not None
        assert ids(store.settled("acme", limit=2, after=first.next)) == ["w0"]

    @pytest.mark.parametrize("limit", [0, -1, MAX_PAGE + 1])
    def test_a_page_size_out_of_bounds_is_refused(self, store: IndexedStore, limit: int) -> None:
        with pytest.raises(ValueError, match="page"):
            store.owed("acme", limit=limit)

    @pytest.mark.parametrize(
        "cursor", ["", "w1", "2024-05-01#w1", "~#", "~#a#b", "1" * 300, "~#w1\n"]
    )
    def test_a_cursor_it_did_not_hand_out_is_refused(
        self, store: IndexedStore, cursor: str
    ) -> None:
        with pytest.raises(ValueError, match="cursor"):
            store.owed("acme", after=cursor)
