"""The behaviour every ``OpenFormIndex`` adapter must show, as a reusable pytest suite.

Subclass ``OpenFormIndexContract`` in a test module (its name must start with ``Test``) and
override the ``store`` fixture to return a fresh, empty store that is both the ``FormStore``
and its ``OpenFormIndex``. Instances are written through the ``FormStore`` port and found
through ``older`` only.
"""

from __future__ import annotations

from typing import Any, Protocol

import pytest

from forms.instance import Commit, FormInstance
from forms.storage.approvals import MAX_PAGE
from forms.storage.contract import make_instance
from forms.storage.contract_builders import page_ids as ids
from forms.storage.open_forms import OpenFormIndex
from forms.storage.port import FormStore


class OpenStore(Protocol):
    """A form store that is also its own open-form index (both adapters are)."""

    def create(self, instance: FormInstance, call: Any = None) -> None: ...
    def commit(self, commit: Commit) -> FormInstance: ...
    def get(self, instance_id: str) -> FormInstance: ...
    def older(
        self, tenant: str | None, form_id: str, below: int, *, limit: int = ..., after: Any = ...
    ) -> Any: ...


def running(
    instance_id: str, version: int = 1, principal: str = "acme/alice", form_id: str = "claim"
) -> FormInstance:
    return make_instance(
        instance_id,
        principal=principal,
        conversation_id=f"conv-{instance_id}",
        form_id=form_id,
        form_version=version,
    )


def close(store: OpenStore, instance_id: str) -> None:
    current = store.get(instance_id)
    state = current.state.model_copy(update={"status": "submitted"})
    store.commit(Commit(instance_id=instance_id, expected_version=current.version, state=state))


class OpenFormIndexContract:
    @pytest.fixture
    def store(self) -> OpenStore:
        raise NotImplementedError("override the store fixture in the adapter's test module")

    def test_the_adapter_is_both_a_store_and_an_index(self, store: OpenStore) -> None:
        assert isinstance(store, FormStore) and isinstance(store, OpenFormIndex)

    def test_open_instances_below_the_version_are_listed_oldest_version_first(
        self, store: OpenStore
    ) -> None:
        store.create(running("v2", 2))
        store.create(running("v1", 1))
        store.create(running("v3", 3))
        assert ids(store.older("acme", "claim", 3)) == ["v1", "v2"]
        assert ids(store.older("acme", "claim", 2)) == ["v1"]
        assert ids(store.older("acme", "claim", 1)) == []
        (listed, *_) = store.older("acme", "claim", 4).instances
        assert listed == store.get("v1")

    def test_a_closed_instance_leaves_the_index(self, store: OpenStore) -> None:
        store.create(running("a", 1))
        store.create(running("b", 1))
        close(store, "a")
        assert ids(store.older("acme", "claim", 2)) == ["b"]

    def test_tenants_and_forms_are_apart(self, store: OpenStore) -> None:
        store.create(running("a1", 1, "acme/alice"))
        store.create(running("g1", 1, "globex/alice"))
        store.create(running("n1", 1, "alice"))
        store.create(running("o1", 1, "acme/alice", form_id="other"))
        store.create(running("h1", 1, "ac#me/alice", form_id="cl#aim"))
        assert ids(store.older("acme", "claim", 2)) == ["a1"]
        assert ids(store.older("globex", "claim", 2)) == ["g1"]
        assert ids(store.older(None, "claim", 2)) == ["n1"]
        assert ids(store.older("acme", "other", 2)) == ["o1"]
        assert ids(store.older("ac#me", "cl#aim", 2)) == ["h1"]
        assert (
            ids(store.older("acm", "claim", 2)) == [] and ids(store.older("acme", "clai", 2)) == []
        )

    def test_pages_are_bounded_and_the_cursor_reads_on(self, store: OpenStore) -> None:
        for n in range(5):
            store.create(running(f"fi_{n}", 1 + n % 2))
        first = store.older("acme", "claim", 3, limit=2)
        assert len(first.instances) == 2 and first.next is not None
        assert "fi_" not in first.next  # a cursor names no instance
        second = store.older("acme", "claim", 3, limit=2, after=first.next)
        third = store.older("acme", "claim", 3, limit=2, after=second.next)
        seen = ids(first) + ids(second) + ids(third)
        assert sorted(seen) == [f"fi_{n}" for n in range(5)] and third.next is None
        versions = [i.form_version for p in (first, second, third) for i in p.instances]
        assert versions == sorted(versions)

    @pytest.mark.parametrize("limit", [0, MAX_PAGE + 1])
    def test_a_page_size_out_of_bounds_is_refused(self, store: OpenStore, limit: int) -> None:
        with pytest.raises(ValueError, match="page"):
            store.older("acme", "claim", 2, limit=limit)

    @pytest.mark.parametrize("cursor", ["", "fi_1", "1#abc", "00000001#" + "g" * 32])
    def test_a_cursor_it_did_not_hand_out_is_refused(self, store: OpenStore, cursor: str) -> None:
        with pytest.raises(ValueError, match="cursor"):
            store.older("acme", "claim", 2, after=cursor)
