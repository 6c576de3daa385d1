"""The delivery log on the forms table, through an injected low-level boto3 DynamoDB client.

Two kinds of item, beside the instances (``docs/webhooks.md``, Storage):

- a delivery: ``pk = W#<source>#<delivery>``, ``sk = DELIVERY``; ``record`` (the
  ``DeliveryRecord`` as JSON), ``version`` (compare-and-set), ``expires_at``;
- a signed request: ``pk = W#<source>#S#<sha256>``, ``sk = SIGNATURE``; ``delivery``,
  ``expires_at``.

``expires_at`` (unix seconds) is the table's TTL attribute. DynamoDB deletes expired items
within days, not at once, so nothing here relies on deletion: a read returns an expired record
as stored, and ``bind``'s condition compares ``expires_at`` itself. Delivery ids contain no
``#``, so the two kinds of key cannot collide. Each primitive is one request; a lost
compare-and-set comes back with the item as stored (``ReturnValuesOnConditionCheckFailure``),
so a conflict costs no second read.

This module does not import boto3: the client comes from ``formwork.bootstrap``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from formwork.webhooks.log import DeliveryConflict, DeliveryLog, DeliveryRecord

DELIVERY_SK = "DELIVERY"
SIGNATURE_SK = "SIGNATURE"


def delivery_key(source: str, delivery: str) -> str:
    """The partition key of a delivery's item."""
    return f"W#{source}#{delivery}"


def signature_key(source: str, signed: str) -> str:
    """The partition key of a signed request's item."""
    return f"W#{source}#S#{signed}"


class DynamoDBDeliveryLog(DeliveryLog):
    """The delivery log on the forms table, through an injected boto3 client.

    One item per delivery (the record as JSON, a ``version`` for compare-and-set) and one per
    signed request. ``expires_at`` is kept in whole seconds, as TTL wants it; ``bind`` treats
    a binding as expired from its ``expires_at`` second on, as the port says
    (``bind_signature`` always gives whole seconds).
    """

    def __init__(self, client: Any, table: str) -> None:
        self._client = client
        self._table = table

    def get(self, source: str, delivery: str) -> DeliveryRecord | None:
        response = self._client.get_item(
            TableName=self._table,
            Key=_key(delivery_key(source, delivery), DELIVERY_SK),
            ConsistentRead=True,
        )
        item = response.get("Item")
        return _record(item) if item else None

    def put(self, record: DeliveryRecord, expected_version: int | None) -> None:
        item = {
            **_key(delivery_key(record.source, record.delivery), DELIVERY_SK),
            "record": {"S": record.model_dump_json()},
            "version": {"N": str(record.version)},
            "expires_at": {"N": str(int(record.expires_at.timestamp()))},
        }
        request: dict[str, Any] = {
            "TableName": self._table,
            "Item": item,
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
        if expected_version is None:
            request["ConditionExpression"] = "attribute_not_exists(pk)"
        else:
            request["ConditionExpression"] = "#version = :expected"
            request["ExpressionAttributeNames"] = {"#version": "version"}
            request["ExpressionAttributeValues"] = {":expected": {"N": str(expected_version)}}
        try:
            self._client.put_item(**request)
        except self._client.exceptions.ConditionalCheckFailedException as exc:
            old = exc.response.get("Item")
            current = _record(old) if old else self.get(record.source, record.delivery)
            subject = f"{record.source}/{record.delivery}"
            raise DeliveryConflict(current, subject=subject, expected=expected_version) from None

    def bind(
        self, source: str, signed: str, delivery: str, *, expires_at: datetime, now: datetime
    ) -> str:
        try:
            self._client.put_item(
                TableName=self._table,
                Item={
                    **_key(signature_key(source, signed), SIGNATURE_SK),
                    "delivery": {"S": delivery},
                    "expires_at": {"N": str(int(expires_at.timestamp()))},
                },
                ConditionExpression="attribute_not_exists(pk) OR #delivery = :delivery "
                "OR #expires <= :now",
                ExpressionAttributeNames={"#delivery": "delivery", "#expires": "expires_at"},
                ExpressionAttributeValues={
                    ":delivery": {"S": delivery},
                    ":now": {"N": str(int(now.timestamp()))},
                },
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except self._client.exceptions.ConditionalCheckFailedException as exc:
            old = exc.response.get("Item") or {}
            return str(old.get("delivery", {}).get("S", ""))
        return delivery


def _key(pk: str, sk: str) -> dict[str, Any]:
    return {"pk": {"S": pk}, "sk": {"S": sk}}


def _record(item: Mapping[str, Any]) -> DeliveryRecord:
    return DeliveryRecord.model_validate_json(item["record"]["S"])
