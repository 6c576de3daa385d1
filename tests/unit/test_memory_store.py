"""The in-memory store: the storage contract, plus what is particular to keeping it in a dict."""

from __future__ import annotations

import pytest

from forms.storage import FormStore, InMemoryFormStore
from forms.storage.contract import (
    T0,
    FormStoreContract,
    append_values,
    at,
    make_instance,
    seeded_log,
)
from forms.storage.outbox_contract import OutboxScanContract, Stores


class TestInMemoryFormStore(FormStoreContract):
    @pytest.fixture
    def store(self) -> FormStore:
        return InMemoryFormStore()


class TestInMemoryOutboxScan(OutboxScanContract):
    @pytest.fixture
    def stores(self) -> Stores:
        store = InMemoryFormStore(page_size=1)
        return store, store


def test_commit_shares_untouched_logs_instead_of_copying_them() -> None:
    # GIVEN an instance with a long log on one field
    store = InMemoryFormStore()
    store.create(make_instance(history={"big": seeded_log(list(range(10_000)), T0)}))
    before = store.get("inst-1")
    # WHEN a commit touches only another field
    after = store.commit(append_values(before, "small", ["x"], at(1)))
    # THEN both snapshots share the very same immutable log: nothing was copied
    assert after.history["big"].revisions is before.history["big"].revisions
    assert store.get("inst-1").history["big"].revisions is before.history["big"].revisions


def test_reads_are_distinct_objects_with_distinct_containers() -> None:
    # GIVEN a stored instance
    store = InMemoryFormStore()
    store.create(make_instance())
    # WHEN it is read twice
    first, second = store.get("inst-1"), store.get("inst-1")
    # THEN no mutable container is shared between the reads
    assert first is not second
    assert first.history is not second.history
    assert first.state is not second.state
    assert first.state.outbox is not second.state.outbox
