"""The in-memory ``FactStore`` passes the fact store's contract."""

from __future__ import annotations

import pytest

from forms.storage.facts import FactStore, InMemoryFactStore
from forms.storage.facts_contract import FactStoreContract


class TestInMemoryFactStore(FactStoreContract):
    @pytest.fixture
    def facts(self) -> FactStore:
        return InMemoryFactStore()
