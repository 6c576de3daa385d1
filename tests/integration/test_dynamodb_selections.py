"""The DynamoDB ``SelectionStore`` on the local endpoints passes the selections' storage
contract (beside the DynamoDB drafts, on one table)."""

from __future__ import annotations

from typing import Any

import pytest

from forms.storage.drafts import DraftStore
from forms.storage.dynamodb_drafts import DynamoDBDraftStore
from forms.storage.dynamodb_selections import DynamoDBSelectionStore
from forms.storage.selections import SelectionStore
from forms.storage.selections_contract import SelectionStoreContract


class TestDynamoDBSelectionStore(SelectionStoreContract):
    @pytest.fixture
    def stores(self, dynamodb: Any, table: str) -> tuple[DraftStore, SelectionStore]:
        return DynamoDBDraftStore(dynamodb, table), DynamoDBSelectionStore(dynamodb, table)
