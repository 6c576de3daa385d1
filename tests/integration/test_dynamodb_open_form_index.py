"""The DynamoDB adapter's open-form index on the local endpoints (moto, DynamoDB Local): the
contract, and that a closed instance's home carries no keys of it."""

from __future__ import annotations

from typing import Any

import pytest

from forms.storage.dynamodb import DynamoDBFormStore, home_key
from forms.storage.open_forms_contract import OpenFormIndexContract, OpenStore, close, running


class TestDynamoDBOpenFormIndex(OpenFormIndexContract):
    @pytest.fixture
    def store(self, dynamodb: Any, table: str) -> OpenStore:
        return DynamoDBFormStore(dynamodb, table)


def test_only_an_open_home_carries_the_keys(dynamodb: Any, table: str) -> None:
    store = DynamoDBFormStore(dynamodb, table)
    store.create(running("a", 2))

    def home() -> dict[str, Any]:
        pk, sk = home_key(store.get("a"))
        item: dict[str, Any] = dynamodb.get_item(
            TableName=table, Key={"pk": {"S": pk}, "sk": {"S": sk}}, ConsistentRead=True
        )["Item"]
        return item

    assert home()["open_pk"] == {"S": "O#Tacme#claim"}
    assert home()["open_sk"]["S"].startswith("00000002#")
    close(store, "a")
    assert "open_pk" not in home() and "open_sk" not in home()
