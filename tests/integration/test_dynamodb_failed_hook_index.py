"""The DynamoDB adapter's failed-hook index on the local endpoints (moto, DynamoDB Local): the
contract, and that only a home holding a failed hook carries the index's keys."""

from __future__ import annotations

from typing import Any

import pytest

from forms.storage.contract_builders import put_state
from forms.storage.dynamodb import DynamoDBFormStore, home_key
from forms.storage.failed_hooks_contract import (
    FailedHookIndexContract,
    FailingStore,
    broken,
    holding,
    hook,
)


class TestDynamoDBFailedHookIndex(FailedHookIndexContract):
    @pytest.fixture
    def store(self, dynamodb: Any, table: str) -> FailingStore:
        return DynamoDBFormStore(dynamodb, table)


def test_only_a_home_holding_a_failed_hook_carries_the_keys(dynamodb: Any, table: str) -> None:
    store = DynamoDBFormStore(dynamodb, table)
    store.create(broken("b1"))

    def home() -> dict[str, Any]:
        pk, sk = home_key(store.get("b1"))
        item: dict[str, Any] = dynamodb.get_item(
            TableName=table, Key={"pk": {"S": pk}, "sk": {"S": sk}}, ConsistentRead=True
        )["Item"]
        return item

    assert home()["failed_pk"] == {"S": "F#Tacme"}
    put_state(store, "b1", holding(hook("b1", status="pending")))
    assert "failed_pk" not in home() and "failed_sk" not in home()
