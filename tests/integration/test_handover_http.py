"""Handing a conversation over to another form (issue 27), over HTTP on the local stack.

Two forms are built with the builder's tools and published as a tenant's documents (the short
intake's checkpoint declares the handover with a ``hand_over`` action); then an agent's tool
calls hand the short intake over, by the checkpoint and by ``form_start`` with ``from``, each
call once more under its id. A failure injected in the one transaction (the target's id taken
by an item planted where its HOME pointer goes) shows neither half lands, and the same call
sent again after hands over once. What was stored is read back through ``DynamoDBFormStore``.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from forms.handover import target_id
from forms.storage.dynamodb import HOME_SK, DynamoDBFormStore, instance_key
from formwork.infra.local.dynamodb_local import DynamoDBLocal
from formwork.infra.local.stack import LocalStack
from tests.integration.stacks import local_stack

PUBLISHER = "dev:acme:cy;roles=form_publisher"
ALICE = "dev:acme:alice"


@pytest.fixture(scope="module")
def stack(dynamodb_local: DynamoDBLocal) -> Iterator[LocalStack]:
    with local_stack(dynamodb_local) as running:
        yield running


@pytest.fixture(scope="module")
def store(stack: LocalStack) -> DynamoDBFormStore:
    return DynamoDBFormStore(stack.dynamodb_client(), stack.table_name)


def request(stack: LocalStack, method: str, path: str, token: str, body: Any = None) -> Any:
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
    data = None if body is None else json.dumps(body).encode()
    sent = urllib.request.Request(stack.api_url + path, data, headers, method=method)
    try:
        with urllib.request.urlopen(sent, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def build(stack: LocalStack, form: str, calls: list[tuple[str, dict[str, Any]]]) -> None:
    """Build ``form`` with the builder's tools and publish it in acme."""
    for n, (tool, tool_input) in enumerate(calls):
        body = {"tool_call_id": f"{form}-{n}", "input": tool_input}
        status, result = request(stack, "POST", f"/builder/forms/{form}/tools/{tool}", ALICE, body)
        assert status == 200 and result["ok"], result
    status, published = request(stack, "POST", f"/builder/forms/{form}/publish", PUBLISHER)
    assert status == 200, published


@pytest.fixture(scope="module")
def forms(stack: LocalStack) -> tuple[str, str]:
    """The short intake and the long one it hands over to, published in acme."""
    tag = uuid.uuid4().hex[:6]
    short, long = f"short-{tag}", f"long-{tag}"
    item = {"kind": "short_text", "label": "Full name", "id": "full_name"}
    build(
        stack,
        long,
        [
            (
                "create_form",
                {
                    "title": "Long intake",
                    "steps": [
                        {
                            "title": "Company",
                            "items": [
                                item,
                                {"kind": "integer", "label": "Headcount", "id": "headcount"},
                                {"kind": "short_text", "label": "Sector", "id": "sector"},
                            ],
                        }
                    ],
                },
            )
        ],
    )
    employees = {"kind": "integer", "label": "Employees", "id": "employees"}
    build(
        stack,
        short,
        [
            (
                "create_form",
                {
                    "title": "Short intake",
                    "steps": [{"title": "Basics", "items": [item, employees]}],
                },
            ),
            (
                "set_checkpoint",
                {
                    "id": "too_big",
                    "when": {"field": "employees", "op": "greater_than", "value": 50},
                    "then": [
                        {
                            "action": "hand_over",
                            "form": long,
                            "reason": "over 50 employees",
                            "rename": [{"field": "employees", "to": "headcount"}],
                        }
                    ],
                },
            ),
        ],
    )
    return short, long


def call(
    stack: LocalStack, conversation: str, tool: str, call_id: str, payload: dict[str, Any]
) -> dict[str, Any]:
    body = {"tool_call_id": call_id, "input": payload}
    path = f"/conversations/{conversation}/tools/{tool}"
    status, result = request(stack, "POST", path, ALICE, body)
    assert status == 200, result
    assert isinstance(result, dict)
    return result


def conversation() -> str:
    return f"conv-{uuid.uuid4().hex[:10]}"


def carried(store: DynamoDBFormStore, instance_id: str) -> dict[str, Any]:
    target = store.get(instance_id)
    return {f: log.in_force().value for f, log in target.history.items() if log.in_force()}  # type: ignore[union-attr]


def test_a_published_checkpoint_hands_over_once(
    stack: LocalStack, store: DynamoDBFormStore, forms: tuple[str, str]
) -> None:
    short, long = forms
    conv = conversation()
    started = call(stack, conv, "form_start", "s1", {"form": short, "values": {"full_name": "Ada"}})
    source = started["instance"]
    # WHEN an answer makes the checkpoint's rule hold
    moved = call(stack, conv, "form_fill", "f1", {"form": short, "values": {"employees": 80}})
    # THEN the short intake closed handed over, and the long one took over with the answers
    assert moved["closed"] == "handed_over", moved
    target = moved["handed_over_to"]["instance"]
    assert moved["handed_over_to"]["form"] == long
    assert target == target_id(f"{source}:checkpoint.too_big:1")
    assert moved["status_line"].startswith(f"[form: {long}]")
    assert carried(store, target) == {"full_name": "Ada", "headcount": 80}
    # AND the fill sent again is its first result, and hands nothing over twice
    again = call(stack, conv, "form_fill", "f1", {"form": short, "values": {"employees": 80}})
    assert again["replayed"] is True and again["handed_over_to"] == moved["handed_over_to"]
    listed = call(stack, conv, "form_list", "l1", {})
    assert [(i["form"], i["status"]) for i in listed["started"]] == [
        (short, "handed_over"),
        (long, "open"),
    ]
    # AND the source reads back whole, naming where it went
    read = call(stack, conv, "form_read", "r1", {"form": short, "instance": source})
    assert read["closed"] == "handed_over" and read["handed_over_to"]["instance"] == target


def test_the_agent_hands_over_and_a_failed_transaction_leaves_neither_half(
    stack: LocalStack, store: DynamoDBFormStore, forms: tuple[str, str]
) -> None:
    short, long = forms
    conv = conversation()
    started = call(stack, conv, "form_start", "s1", {"form": short, "values": {"full_name": "Ada"}})
    source = started["instance"]
    # GIVEN the target's id taken where its HOME pointer goes (the transaction's second half
    # cannot land, so DynamoDB cancels all of it)
    planted = target_id(f"{source}:h1")
    client = stack.dynamodb_client()
    key = {"pk": {"S": instance_key(planted)}, "sk": {"S": HOME_SK}}
    client.put_item(TableName=stack.table_name, Item={**key, "planted": {"S": "yes"}})
    switch = {"form": long, "from": short, "values": {"sector": "retail"}}
    # WHEN the agent hands the short intake over
    failed = call(stack, conv, "form_start", "h1", switch)
    # THEN the call failed, and neither half landed: the source open as it was, no target,
    # no record of the call
    assert failed["ok"] is False and failed["error"] == "internal_error", failed
    assert store.get(source).state.status == "open"
    assert [i.id for i in store.list_conversation("acme/alice", conv)] == [source]
    under = client.query(
        TableName=stack.table_name,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": instance_key(planted)}},
        ConsistentRead=True,
    )["Items"]
    assert under == [{**key, "planted": {"S": "yes"}}]  # the obstacle alone: no revisions
    assert store.get_call("acme/alice", conv, "h1") is None
    # WHEN the obstacle is gone and the same call is sent again
    client.delete_item(TableName=stack.table_name, Key=key)
    switched = call(stack, conv, "form_start", "h1", switch)
    # THEN it hands over, carrying what fits, beside the call's own answer
    assert switched["ok"] is True and switched["instance"] == planted, switched
    assert switched["handed_over_from"] == {"form": short, "instance": source}
    assert carried(store, planted) == {"full_name": "Ada", "sector": "retail"}
    assert store.get(source).state.status == "handed_over"
    # AND sent once more, it is replayed: one target
    replayed = call(stack, conv, "form_start", "h1", switch)
    assert replayed["replayed"] is True and replayed["instance"] == planted
    assert len(store.list_conversation("acme/alice", conv)) == 2


def test_a_code_form_hands_over_to_a_published_document(
    stack: LocalStack, store: DynamoDBFormStore, forms: tuple[str, str]
) -> None:
    _, long = forms
    conv = conversation()
    values = {"full_name": "Ada Lovelace", "destination": "Lisbon"}
    started = call(stack, conv, "form_start", "s1", {"form": "travel-claim", "values": values})
    # WHEN the user turns out to want the long intake instead of a travel claim
    switched = call(stack, conv, "form_start", "h1", {"form": long, "from": "travel-claim"})
    # THEN the claim is handed over: the name carries, the destination has nowhere to go
    assert switched["ok"] is True, switched
    assert switched["not_carried"] == {"destination": f"{long} has no field 'destination'"}
    assert carried(store, switched["instance"]) == {"full_name": "Ada Lovelace"}
    source = store.get(started["instance"])
    assert source.state.status == "handed_over"
    assert source.state.closed_reason == f"handed over to {long} {switched['instance']}"
