"""The in-memory ``SelectionStore`` passes the selections' storage contract."""

from __future__ import annotations

import pytest

from forms.storage.drafts import DraftStore, InMemoryDraftStore
from forms.storage.selections import InMemorySelectionStore, SelectionStore
from forms.storage.selections_contract import SelectionStoreContract


class TestInMemorySelectionStore(SelectionStoreContract):
    @pytest.fixture
    def stores(self) -> tuple[DraftStore, SelectionStore]:
        drafts = InMemoryDraftStore()
        return drafts, InMemorySelectionStore(drafts)
