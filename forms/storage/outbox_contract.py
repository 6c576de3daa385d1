"""The behaviour every ``OutboxScan`` adapter must show, as a reusable pytest suite.

Subclass ``OutboxScanContract`` in a test module (its name must start with ``Test``) and
override the ``stores`` fixture to return a fresh, empty ``FormStore`` and the ``OutboxScan``
over the same storage, paging one item at a time (so several pages are read)::

    class TestMemoryOutboxScan(OutboxScanContract):
        @pytest.fixture
        def stores(self) -> tuple[FormStore, OutboxScan]:
            store = InMemoryFormStore(page_size=1)
            return store, store

Instances are written through the store's port, and found through the scan's only.
"""

from __future__ import annotations

from typing import Literal

import pytest

from forms.instance import Commit, InstanceState, OutboxEntry
from forms.storage.contract import T0, at, make_instance
from forms.storage.port import FormStore, OutboxScan

Stores = tuple[FormStore, OutboxScan]


def with_entries(*statuses: Literal["pending", "done", "failed"]) -> InstanceState:
    """A state whose outbox holds one entry per status given, keys ``h<n>:1``."""
    entries = {
        f"h{n}:1": OutboxEntry(
            key=f"h{n}:1", hook_id=f"h{n}", occurrence=1, created_at=T0, status=status
        )
        for n, status in enumerate(statuses)
    }
    return InstanceState(updated_at=T0, outbox=entries)


class OutboxScanContract:
    @pytest.fixture
    def stores(self) -> Stores:
        raise NotImplementedError("override the stores fixture in the adapter's test module")

    def test_an_empty_store_has_nothing_pending(self, stores: Stores) -> None:
        _, scan = stores
        assert list(scan.pending()) == []

    def test_only_instances_with_a_pending_entry_are_found(self, stores: Stores) -> None:
        store, scan = stores
        store.create(make_instance("quiet"))
        store.create(make_instance("settled", state=with_entries("done", "failed")))
        store.create(make_instance("waiting", state=with_entries("done", "pending")))
        found = dict(scan.pending())
        assert list(found) == ["waiting"]
        assert found["waiting"].outbox == with_entries("done", "pending").outbox

    def test_an_entry_done_since_is_no_longer_found(self, stores: Stores) -> None:
        store, scan = stores
        store.create(make_instance("waiting", state=with_entries("pending")))
        stored = store.get("waiting")
        state = with_entries("done").model_copy(update={"updated_at": at(1)})
        store.commit(Commit(instance_id="waiting", expected_version=stored.version, state=state))
        assert list(scan.pending()) == []

    def test_every_pending_instance_is_found_across_pages(self, stores: Stores) -> None:
        store, scan = stores
        ids = [f"inst-{n}" for n in range(5)]
        for n, instance_id in enumerate(ids):
            store.create(make_instance(instance_id, conversation_id=f"conv-{n}"))
            store.create(
                make_instance(
                    f"{instance_id}-w",
                    conversation_id=f"conv-{n}",
                    state=with_entries("pending"),
                )
            )
        asked: list[int] = []

        def keep_going() -> bool:
            asked.append(1)
            return True

        found = sorted(i for i, _ in scan.pending(keep_going))
        assert found == sorted(f"{i}-w" for i in ids)
        assert asked  # several pages, and the scan asked before each further one

    def test_a_scan_told_to_stop_reads_no_further_page(self, stores: Stores) -> None:
        store, scan = stores
        for n in range(5):
            store.create(make_instance(f"inst-{n}", state=with_entries("pending")))
        asked: list[int] = []

        def stop() -> bool:
            asked.append(1)
            return False

        found = list(scan.pending(stop))
        assert len(asked) == 1 and len(found) < 5
