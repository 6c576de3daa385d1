"""How the test proxy (``tests/integration/dynamodb_proxy.py``) tells a fact-store request
from the rest: on the bodies boto3 really sends, captured before they leave the client."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import boto3
from botocore.awsrequest import AWSPreparedRequest, AWSResponse, HTTPHeaders

from forms.memory.facts import MemorySettings
from forms.storage.dynamodb_facts import DynamoDBFactStore
from tests.integration.dynamodb_proxy import Request, addressed, operation


class _Raw:
    """An empty JSON answer, as urllib3 would hand it to botocore."""

    def stream(self, **_: Any) -> Any:
        yield b"{}"


def sent(call: Callable[[Any], object]) -> list[Request]:
    """The requests ``call`` makes on a boto3 DynamoDB client, as the proxy records them;
    each answered with ``{}`` without reaching any network."""
    client = boto3.client(
        "dynamodb",
        region_name="us-east-1",
        endpoint_url="http://127.0.0.1:9",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )
    seen: list[Request] = []

    def capture(request: AWSPreparedRequest, **_: Any) -> Any:  # an answer: nothing is sent
        body = request.body if isinstance(request.body, bytes) else b""
        target = request.headers.get("X-Amz-Target")  # bytes here, text on the wire's far side
        name = target.decode() if isinstance(target, bytes) else target
        seen.append(Request(operation(name), addressed(body)))
        return AWSResponse(request.url, 200, HTTPHeaders(), _Raw())

    client.meta.events.register("before-send.dynamodb.*", capture)
    call(client)
    return seen


def test_the_fact_stores_reads_and_writes_are_fact_requests_with_their_keys() -> None:
    def use(client: Any) -> None:
        facts = DynamoDBFactStore(client, "forms")
        facts.settings("acme/alice")
        facts.heads("acme/alice")
        facts.put_settings("acme/alice", MemorySettings(enabled=False))

    assert sent(use) == [
        Request("GetItem", (("M#acme/alice", "SETTINGS"),)),
        Request("Query", (("M#acme/alice", None),)),
        Request("PutItem", (("M#acme/alice", "SETTINGS"),)),
    ]
    assert all(request.facts for request in sent(use))


def test_the_form_stores_requests_are_not_fact_requests() -> None:
    def use(client: Any) -> None:
        client.get_item(TableName="forms", Key={"pk": {"S": "I#fi_1"}, "sk": {"S": "HOME"}})
        client.query(
            TableName="forms",
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues={":pk": {"S": "P#acme/alice#C#c1"}, ":prefix": {"S": "M#"}},
        )

    requests = sent(use)
    assert [(r.operation, r.partitions(), r.facts) for r in requests] == [
        ("GetItem", {"I#fi_1"}, False),
        ("Query", {"P#acme/alice#C#c1"}, False),  # a value starting M# that is no partition
    ]


def test_a_transaction_or_batch_touches_facts_when_any_of_its_items_does() -> None:
    transaction = {
        "TransactItems": [
            {"Put": {"TableName": "forms", "Item": {"pk": {"S": "I#fi_1"}, "sk": {"S": "R#1"}}}},
            {"Update": {"TableName": "forms", "Key": {"pk": {"S": "M#a"}, "sk": {"S": "H#k"}}}},
        ]
    }
    batch = {"RequestItems": {"forms": {"Keys": [{"pk": {"S": "M#a"}, "sk": {"S": "H#k"}}]}}}
    assert addressed(json.dumps(transaction).encode()) == (("I#fi_1", "R#1"), ("M#a", "H#k"))
    assert Request("BatchGetItem", addressed(json.dumps(batch).encode())).facts


def test_a_key_condition_may_name_the_partition_through_an_attribute_name() -> None:
    query = {
        "KeyConditionExpression": "#p = :v",
        "ExpressionAttributeNames": {"#p": "pk"},
        "ExpressionAttributeValues": {":v": {"S": "M#a"}},
    }
    assert addressed(json.dumps(query).encode()) == (("M#a", None),)


def test_what_is_not_a_dynamodb_body_addresses_nothing() -> None:
    assert addressed(b"") == () and addressed(b"not json") == () and addressed(b"[1]") == ()
    assert operation("DynamoDB_20120810.TransactWriteItems") == "TransactWriteItems"
    assert operation(None) == "" and not Request("ListTables").facts
