"""The DynamoDB delivery log on moto's server: the delivery log contract, then DynamoDB's own.

DynamoDB-specific behaviour: the items and keys ``docs/webhooks.md`` (Storage) documents, with
``expires_at`` as the TTL attribute in whole seconds; each primitive costs one request, a lost
compare-and-set included (the stored item comes back with the failure); and the log shares the
forms table with instances without touching them.
"""

from __future__ import annotations

from typing import Any

import pytest

from forms.storage.contract import make_instance
from formwork.bootstrap import App
from formwork.webhooks import DeliveryConflict, DeliveryLog, DynamoDBDeliveryLog
from formwork.webhooks.contract import SIGNED, DeliveryLogContract, at, bind, delivery_record
from tests.integration.conftest import Requests


class TestDynamoDBDeliveryLog(DeliveryLogContract):
    @pytest.fixture
    def log(self, dynamodb: Any, table: str) -> DeliveryLog:
        return DynamoDBDeliveryLog(dynamodb, table)


@pytest.fixture
def log(dynamodb: Any, table: str) -> DynamoDBDeliveryLog:
    return DynamoDBDeliveryLog(dynamodb, table)


def items(client: Any, table: str) -> dict[tuple[str, str], dict[str, Any]]:
    """Every item of the table by (pk, sk), read consistently."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    request: dict[str, Any] = {"TableName": table, "ConsistentRead": True}
    while True:
        page = client.scan(**request)
        for item in page["Items"]:
            found[(item["pk"]["S"], item["sk"]["S"])] = item
        if "LastEvaluatedKey" not in page:
            return found
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def test_the_items_are_the_documented_ones_with_a_ttl_in_whole_seconds(
    log: DynamoDBDeliveryLog, dynamodb: Any, table: str
) -> None:
    # GIVEN one delivery record and one binding
    record = delivery_record(metadata={"crm_contact": "C-1187"})
    log.put(record, None)
    bind(log, "d-1", 0)
    # THEN the table holds exactly the two documented items
    stored = items(dynamodb, table)
    assert set(stored) == {("W#crm#d-1", "DELIVERY"), (f"W#crm#S#{SIGNED}", "SIGNATURE")}
    delivery = stored[("W#crm#d-1", "DELIVERY")]
    assert delivery["version"] == {"N": "1"}
    assert delivery["expires_at"] == {"N": str(int(record.expires_at.timestamp()))}
    assert delivery["record"]["S"] == record.model_dump_json()
    signature = stored[(f"W#crm#S#{SIGNED}", "SIGNATURE")]
    assert signature["delivery"] == {"S": "d-1"}
    assert signature["expires_at"] == {"N": str(int(at(360).timestamp()))}


def test_each_primitive_is_one_request_and_a_lost_write_reads_nothing_more(
    log: DynamoDBDeliveryLog, dynamodb: Any
) -> None:
    requests = Requests(dynamodb)
    record = delivery_record()
    # WHEN a record is put, read, and put again by a writer that lost
    log.put(record, None)
    assert log.get("crm", "d-1") == record
    with pytest.raises(DeliveryConflict) as conflict:
        log.put(delivery_record(digest="B"), None)
    # THEN each was one request: the stored item came back with the failed condition
    assert conflict.value.current == record
    assert requests.take() == ["PutItem", "GetItem", "PutItem"]
    # AND a bind, taken or refused, is one request too
    assert bind(log, "d-1", 0) == "d-1"
    assert bind(log, "d-2", 0) == "d-1"
    assert requests.take() == ["PutItem", "PutItem"]


def test_the_log_shares_the_forms_table_without_touching_instances(app: App) -> None:
    # GIVEN a deployment on the table: its App keeps the delivery log beside the instances
    store, log = app.store, app.delivery_log
    assert isinstance(log, DynamoDBDeliveryLog)
    # AND an instance in the table
    store.create(make_instance("d-1"))
    before = store.get("d-1")
    # WHEN a delivery and a binding of the same name are written beside it
    log.put(delivery_record("d-1"), None)
    bind(log, "d-1", 0)
    # THEN the instance reads as before, and so does the conversation
    assert store.get("d-1") == before
    assert [i.id for i in store.list_conversation("alice", "conv-1")] == ["d-1"]
