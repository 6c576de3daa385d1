"""The behaviour every ``FailedHookIndex`` adapter must show, as a reusable pytest suite.

Subclass ``FailedHookIndexContract`` in a test module (its name must start with ``Test``) and
override the ``store`` fixture to return a fresh, empty store that is both the ``FormStore``
and its ``FailedHookIndex``. Instances are written through the ``FormStore`` port (create,
commit) and found through ``failed`` only.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

import pytest

from forms.instance import Commit, FormInstance, InstanceState, OutboxEntry
from forms.storage.approvals import MAX_PAGE
from forms.storage.contract import T0, at, make_instance
from forms.storage.contract_builders import page_ids as ids
from forms.storage.contract_builders import put_state
from forms.storage.failed_hooks import FailedHookIndex
from forms.storage.port import FormStore


class FailingStore(Protocol):
    """A form store that is also its own failed-hook index (both adapters are)."""

    def create(self, instance: FormInstance, call: Any = None) -> None: ...
    def commit(self, commit: Commit) -> FormInstance: ...
    def get(self, instance_id: str) -> FormInstance: ...
    def failed(self, tenant: str | None, *, limit: int = ..., after: str | None = ...) -> Any: ...


def hook(
    instance_id: str,
    n: int = 1,
    *,
    status: str = "failed",
    finished_at: datetime | None = None,
    kind: str = "executor",
) -> OutboxEntry:
    """Executor entry ``n`` of ``instance_id``, keyed as the engine keys it."""
    return OutboxEntry.model_validate(
        {
            "key": f"{instance_id}:notify:{n}",
            "hook_id": "notify",
            "occurrence": n,
            "kind": kind,
            "status": status,
            "attempts": 3 if status == "failed" else 0,
            "error": "RuntimeError: down" if status == "failed" else None,
            "created_at": T0,
            "finished_at": finished_at if status == "failed" else None,
        }
    )


def holding(*entries: OutboxEntry, status: str = "open") -> InstanceState:
    return InstanceState.model_validate(
        {"updated_at": T0, "status": status, "outbox": {e.key: e for e in entries}}
    )


def broken(instance_id: str, principal: str = "acme/alice", when: datetime = T0) -> FormInstance:
    """An instance of ``principal`` whose one hook failed for good at ``when``."""
    return make_instance(
        instance_id,
        principal=principal,
        conversation_id=f"conv-{instance_id}",
        state=holding(hook(instance_id, finished_at=when)),
    )


class FailedHookIndexContract:
    @pytest.fixture
    def store(self) -> FailingStore:
        raise NotImplementedError("override the store fixture in the adapter's test module")

    def test_the_adapter_is_both_a_store_and_an_index(self, store: FailingStore) -> None:
        assert isinstance(store, FormStore) and isinstance(store, FailedHookIndex)

    def test_an_empty_store_lists_nothing(self, store: FailingStore) -> None:
        page = store.failed("acme")
        assert ids(page) == [] and page.next is None and ids(store.failed(None)) == []

    def test_a_hook_failed_at_creation_is_listed_with_the_instance_as_stored(
        self, store: FailingStore
    ) -> None:
        store.create(make_instance("quiet", principal="acme/alice"))
        store.create(broken("b1", when=at(60)))
        (listed,) = store.failed("acme").instances
        assert listed == store.get("b1")

    def test_a_hook_failing_in_a_commit_appears_and_a_retry_takes_it_out(
        self, store: FailingStore
    ) -> None:
        store.create(
            make_instance(
                "b1",
                principal="acme/alice",
                conversation_id="c",
                state=holding(hook("b1", status="pending")),
            )
        )
        assert ids(store.failed("acme")) == []
        put_state(store, "b1", holding(hook("b1", finished_at=at(30))))
        assert ids(store.failed("acme")) == ["b1"]
        put_state(store, "b1", holding(hook("b1", status="pending")))  # an operator's retry
        assert ids(store.failed("acme")) == []

    def test_pending_done_and_approval_entries_are_not_failed_hooks(
        self, store: FailingStore
    ) -> None:
        entries = (hook("q1", status="pending"), hook("q1", 2, status="done"))
        store.create(make_instance("q1", principal="acme/alice", state=holding(*entries)))
        approval = hook("q2", kind="approval", finished_at=at(5))
        store.create(make_instance("q2", principal="acme/bob", state=holding(approval)))
        assert ids(store.failed("acme")) == []

    def test_a_closed_form_with_a_failed_hook_is_still_listed(self, store: FailingStore) -> None:
        store.create(broken("b1", when=at(10)))
        put_state(store, "b1", holding(hook("b1", finished_at=at(10)), status="completed"))
        assert ids(store.failed("acme")) == ["b1"]

    def test_tenants_never_see_each_others_failed_hooks(self, store: FailingStore) -> None:
        store.create(broken("a1", "acme/alice", at(60)))
        store.create(broken("g1", "globex/alice", at(30)))
        store.create(broken("n1", "alice", at(10)))  # a tenant-less principal
        store.create(broken("h1", "ac#me/alice", at(10)))  # a tenant that escapes
        assert ids(store.failed("acme")) == ["a1"]
        assert ids(store.failed("globex")) == ["g1"]
        assert ids(store.failed(None)) == ["n1"]
        assert ids(store.failed("ac#me")) == ["h1"]
        assert ids(store.failed("acm")) == [] and ids(store.failed("")) == []

    def test_the_latest_failure_comes_first_and_pages_read_on(self, store: FailingStore) -> None:
        for n in range(5):
            store.create(broken(f"b{n}", when=at(100 * n)))
        first = store.failed("acme", limit=2)
        assert ids(first) == ["b4", "b3"] and first.next is not None
        assert "b3" not in first.next  # a cursor names no instance
        second = store.failed("acme", limit=2, after=first.next)
        assert ids(second) == ["b2", "b1"] and second.next is not None
        last = store.failed("acme", limit=2, after=second.next)
        assert ids(last) == ["b0"] and last.next is None

    @pytest.mark.parametrize("limit", [0, -1, MAX_PAGE + 1])
    def test_a_page_size_out_of_bounds_is_refused(self, store: FailingStore, limit: int) -> None:
        with pytest.raises(ValueError, match="page"):
            store.failed("acme", limit=limit)

    @pytest.mark.parametrize("cursor", ["", "b1", "~#", "1" * 300])
    def test_a_cursor_it_did_not_hand_out_is_refused(
        self, store: FailingStore, cursor: str
    ) -> None:
        with pytest.raises(ValueError, match="cursor"):
            store.failed("acme", after=cursor)
