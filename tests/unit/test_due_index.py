"""The in-memory adapter's due index passes the contract (``forms.storage.due``), and the
sweeper's scan over it reads only what is due."""

from __future__ import annotations

import pytest

from forms.storage import InMemoryFormStore
from forms.storage.contract import at
from forms.storage.due import DueScan
from forms.storage.due_contract import DueIndexContract, DueStore, entry, with_outbox


class TestInMemoryDueIndex(DueIndexContract):
    @pytest.fixture
    def store(self) -> DueStore:
        return InMemoryFormStore()


def test_the_sweepers_scan_yields_what_is_due_on_its_clock() -> None:
    store = InMemoryFormStore()
    store.create(with_outbox("now", entry("now", created=at(0))))
    store.create(with_outbox("later", entry("later", kind="approval", deadline=at(600))))
    store.create(with_outbox("idle"))
    scan = DueScan(store, lambda: at(1))
    assert [instance_id for instance_id, _ in scan.pending()] == ["now"]
