"""The in-memory adapter's open-form index passes the contract (``forms.storage.open_forms``)."""

from __future__ import annotations

import pytest

from forms.storage import InMemoryFormStore
from forms.storage.open_forms_contract import OpenFormIndexContract, OpenStore


class TestInMemoryOpenFormIndex(OpenFormIndexContract):
    @pytest.fixture
    def store(self) -> OpenStore:
        return InMemoryFormStore()
