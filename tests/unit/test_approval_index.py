"""The in-memory adapter's approval index passes the contract (``forms.storage.approvals``)."""

from __future__ import annotations

import pytest

from forms.storage import InMemoryFormStore
from forms.storage.approvals_contract import ApprovalIndexContract, IndexedStore


class TestInMemoryApprovalIndex(ApprovalIndexContract):
    @pytest.fixture
    def store(self) -> IndexedStore:
        return InMemoryFormStore()
