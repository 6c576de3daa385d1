"""The in-memory adapter's failed-hook index passes the contract
(``forms.storage.failed_hooks``)."""

from __future__ import annotations

import pytest

from forms.storage import InMemoryFormStore
from forms.storage.failed_hooks_contract import FailedHookIndexContract, FailingStore


class TestInMemoryFailedHookIndex(FailedHookIndexContract):
    @pytest.fixture
    def store(self) -> FailingStore:
        return InMemoryFormStore()
