"""The DynamoDB ``FormDocumentStore`` on the local endpoints: the documents' storage contract,
and the cost of each operation in requests."""

from __future__ import annotations

from typing import Any

import pytest

from forms.storage.documents import FormDocumentStore
from forms.storage.documents_contract import T0, FormDocumentStoreContract, document
from forms.storage.dynamodb_documents import DynamoDBFormDocumentStore
from tests.integration.conftest import Requests


class TestDynamoDBFormDocumentStore(FormDocumentStoreContract):
    @pytest.fixture
    def documents(self, dynamodb: Any, table: str) -> FormDocumentStore:
        return DynamoDBFormDocumentStore(dynamodb, table)


def test_each_operation_costs_one_request_when_nobody_races(dynamodb: Any, table: str) -> None:
    store = DynamoDBFormDocumentStore(dynamodb, table)
    requests = Requests(dynamodb)
    requests.take()
    store.publish("acme", document(), by="acme/ana", at=T0)
    assert requests.take() == ["GetItem", "TransactWriteItems"]
    store.published("acme", "intake", 1)
    assert requests.take() == ["GetItem"]
    store.catalog("acme")
    assert requests.take() == ["GetItem"]
