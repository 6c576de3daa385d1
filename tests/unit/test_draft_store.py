"""The in-memory ``DraftStore`` passes the drafts' storage contract."""

from __future__ import annotations

import pytest

from forms.storage.drafts import DraftStore, InMemoryDraftStore
from forms.storage.drafts_contract import DraftStoreContract


class TestInMemoryDraftStore(DraftStoreContract):
    @pytest.fixture
    def drafts(self) -> DraftStore:
        return InMemoryDraftStore()
