"""The DynamoDB adapter's due index (the sweeper's) on the local endpoints (moto, DynamoDB
Local): the contract, and that a home carries its keys only while something is due."""

from __future__ import annotations

from typing import Any

import pytest

from forms.storage.contract import at
from forms.storage.contract_builders import put_state
from forms.storage.due_contract import (
    DueIndexContract,
    DueStore,
    entry,
    holding,
    with_outbox,
)
from forms.storage.dynamodb import DynamoDBFormStore, home_key


class TestDynamoDBDueIndex(DueIndexContract):
    @pytest.fixture
    def store(self, dynamodb: Any, table: str) -> DueStore:
        return DynamoDBFormStore(dynamodb, table)


def test_a_home_carries_the_keys_only_while_something_is_due(dynamodb: Any, table: str) -> None:
    store = DynamoDBFormStore(dynamodb, table)
    store.create(with_outbox("a", entry("a", created=at(5))))

    def home() -> dict[str, Any]:
        pk, sk = home_key(store.get("a"))
        item: dict[str, Any] = dynamodb.get_item(
            TableName=table, Key={"pk": {"S": pk}, "sk": {"S": sk}}, ConsistentRead=True
        )["Item"]
        return item

    assert home()["due_pk"]["S"].startswith("D#")
    assert home()["due_sk"]["S"].startswith("2024-05-01T09:30:05.000000Z#")
    put_state(store, "a", holding(entry("a", status="done")))
    assert "due_pk" not in home() and "due_sk" not in home()
