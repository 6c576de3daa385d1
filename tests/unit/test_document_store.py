"""The in-memory ``FormDocumentStore`` passes the documents' storage contract."""

from __future__ import annotations

import pytest

from forms.storage.documents import FormDocumentStore, InMemoryFormDocumentStore
from forms.storage.documents_contract import FormDocumentStoreContract


class TestInMemoryFormDocumentStore(FormDocumentStoreContract):
    @pytest.fixture
    def documents(self) -> FormDocumentStore:
        return InMemoryFormDocumentStore()
