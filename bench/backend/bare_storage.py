"""The floor of a ``form_fill`` over HTTP: a Lambda handler that does only its storage work.

``bench.http_floor_perf`` serves this handler on the local stack's own gateway, beside the
tool API (a bench-only route, ``POST /bench/bare/{conversation_id}``; ``template.yaml`` does
not ship it), in an execution environment of its own like the tool API's. Each invocation
sends what a one-field ``form_fill`` sends DynamoDB, recorded from a real one
(``FORMWORK_BENCH_BARE_REQUESTS`` names the JSON file: ``{"query", "transaction"}``, the
parameters of its ``Query`` and its ``TransactWriteItems``), and nothing else:

1. the body parsed as JSON (any handler reads its request),
2. the same ``Query``, on a partition of this handler's own (``P#bench/bare#C#<conversation>``)
   that holds one home item of the recorded size,
3. the same ``TransactWriteItems``: the home item put back at the next version, conditioned
   on the version the ``Query`` read (the same compare-and-set), and every other recorded
   item put under a new key with ``attribute_not_exists(pk)`` (the call record in the
   conversation's partition, as the store puts it; the revision log's in a partition apart),
   each with the recorded attributes, so of the same size (a few bytes of key apart).

No engine, no routing, no validation, no tool result: a fixed ``{"ok":true}`` answer. The
boto3 client is the one the tool API builds (``formwork.storage.build_dynamodb_client``,
same retries and timeouts), made on the first invocation and kept, as the tool API keeps its
App's.
"""

from __future__ import annotations

import json
import os
from functools import cache
from typing import Any

REQUESTS_VARIABLE = "FORMWORK_BENCH_BARE_REQUESTS"
BARE_PRINCIPAL = "bench/bare"
_HOME_CONDITION = "#v = :expected"


@cache
def _client() -> Any:
    from formwork.bootstrap import build_dynamodb_client
    from formwork.config import Settings

    return build_dynamodb_client(Settings.from_env())


@cache
def _recorded() -> dict[str, Any]:
    with open(os.environ[REQUESTS_VARIABLE], encoding="utf-8") as file:
        recorded: dict[str, Any] = json.load(file)
    return recorded


def partition(conversation: str) -> str:
    """The bare handler's own conversation partition (the store's key shape)."""
    return f"P#{BARE_PRINCIPAL}#C#{conversation}"


def query(recorded: dict[str, Any], pk: str) -> dict[str, Any]:
    """The recorded ``Query``, on partition ``pk``."""
    params = dict(recorded["query"])
    values = dict(params["ExpressionAttributeValues"])
    values[":pk"] = {"S": pk}
    params["ExpressionAttributeValues"] = values
    return params


def transaction(recorded: dict[str, Any], pk: str, current: int, call_id: str) -> list[Any]:
    """The recorded transaction's actions, moved to partition ``pk``: the home item at version
    ``current + 1`` (conditioned on ``current``, or on its absence when there is none yet),
    the rest under keys no earlier call used."""
    actions: list[Any] = []
    version = current + 1
    conversation_pk = recorded["query"]["ExpressionAttributeValues"][":pk"]["S"]
    for action in recorded["transaction"]["TransactItems"]:
        put = dict(action["Put"])
        item = dict(put["Item"])
        if put.get("ConditionExpression") == _HOME_CONDITION:
            item["pk"] = {"S": pk}
            item["version"] = {"N": str(version)}
            if current:
                put["ExpressionAttributeValues"] = {":expected": {"N": str(current)}}
            else:
                put = {k: v for k, v in put.items() if not k.startswith(("Condition", "Expr"))}
                put["ConditionExpression"] = "attribute_not_exists(pk)"
        else:  # the call record beside the home item, the revision log in a partition apart
            own = item["pk"]["S"] == conversation_pk
            item["pk"] = {"S": pk if own else f"{pk}#{item['pk']['S'][:2]}"}
            item["sk"] = {"S": f"{item['sk']['S'][:2]}{version:010d}#{call_id[:64]}"}
        put["Item"] = item
        actions.append({"Put": put})
    return actions


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """One bare call: parse the body, the ``Query``, the ``TransactWriteItems``."""
    del context
    body = json.loads(event.get("body") or "{}")
    conversation = event["pathParameters"]["conversation_id"]
    recorded = _recorded()
    client = _client()
    pk = partition(conversation)
    items = client.query(**query(recorded, pk)).get("Items", [])
    current = int(items[0]["version"]["N"]) if items else 0
    client.transact_write_items(
        TransactItems=transaction(recorded, pk, current, str(body.get("tool_call_id", "")))
    )
    return {
        "statusCode": 200,
        "headers": {"Content-Type": "application/json"},
        "body": '{"ok":true}',
    }
