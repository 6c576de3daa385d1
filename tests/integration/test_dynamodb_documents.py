"""The DynamoDB ``FormDocumentStore`` on the local endpoints: the documents' storage contract,
and the cost of each operation in requests."""

from __future__ import annotations

from typing import Any

import pytest

from forms.errors import SizeLimit
from forms.storage.documents import FormDocumentStore
from forms.storage.documents_contract import T0, FormDocumentStoreContract, document
from forms.storage.drafts_contract import bulky
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


def test_an_item_dynamodb_refuses_as_too_large_is_the_same_size_limit(
    dynamodb: Any, table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a store whose own check lets an oversized document through (a wrong estimate)
    import forms.storage.dynamodb_documents as adapter

    monkeypatch.setattr(adapter, "document_text", lambda d: d.model_dump_json(by_alias=True))
    store = DynamoDBFormDocumentStore(dynamodb, table)
    # WHEN DynamoDB itself refuses the version as past its 400 KB
    with pytest.raises(SizeLimit) as refused:
        store.publish("acme", bulky(200), by="acme/ana", at=T0)
    # THEN that is the same refusal, at once (not retried as a lost race), storing nothing
    assert refused.value.item == "published_version" and refused.value.size > 400_000
    assert store.catalog("acme") == {}
