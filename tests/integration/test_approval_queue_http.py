"""``GET /approvals`` end to end: the local stack as ``make dev`` runs it (DynamoDB Local, the
table and its ``approvals`` index from ``template.yaml``, the real handler, the local
gateway), with dev tokens of two tenants. The queue and the decision agree, over HTTP, on
the DynamoDB adapter."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from formwork.infra.local.dynamodb_local import DynamoDBLocal
from formwork.infra.local.gateway import dev_token
from formwork.infra.local.stack import LocalStack
from tests.integration.stacks import local_stack

BIG = {"item": "Laser cutter", "supplier": "Acme", "amount": "7200.00"}


@pytest.fixture(scope="module")
def stack(dynamodb_local: DynamoDBLocal) -> Iterator[LocalStack]:
    with local_stack(dynamodb_local) as running:
        yield running


def send(
    stack: LocalStack, method: str, path: str, authorization: str, body: Any = None
) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json", "Authorization": authorization}
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(stack.api_url.rstrip("/") + path, data, headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def file_request(stack: LocalStack, tenant: str) -> str:
    """A purchase request over the threshold by ``tenant``'s alice; its approval id."""
    conversation = f"conv-{uuid.uuid4().hex[:10]}"
    envelope = {
        "tool_call_id": f"start-{conversation}",
        "input": {"form": "purchase-request", "values": BIG},
    }
    path = f"/conversations/{conversation}/tools/form_start"
    status, result = send(stack, "POST", path, dev_token("alice", tenant), envelope)
    assert status == 200 and result["ok"], result
    (approval_id,) = result["fired"]
    return str(approval_id)


def owed(stack: LocalStack, authorization: str, **query: str) -> list[str]:
    suffix = "?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else ""
    status, body = send(stack, "GET", "/approvals" + suffix, authorization)
    assert status == 200, body
    return [row["approval_id"] for row in body["owed"]]


def test_each_tenant_sees_what_it_may_decide_and_a_decision_settles_it(stack: LocalStack) -> None:
    # GIVEN alice of acme and alice of globex, each with a request waiting for finance
    acme = file_request(stack, "acme")
    globex = file_request(stack, "globex")
    acme_finance = dev_token("bob", "acme", roles=["finance"])
    globex_finance = dev_token("bob", "globex", roles=["finance"])
    # THEN each tenant's approver sees their tenant's request only, the filler none
    assert owed(stack, acme_finance) == [acme]
    assert owed(stack, globex_finance) == [globex]
    assert owed(stack, dev_token("alice", "acme", roles=["finance"])) == []
    assert owed(stack, dev_token("carol", "acme", roles=["sales"])) == []
    # WHEN acme's approver decides from what the queue listed
    status, decided = send(
        stack, "POST", f"/approvals/{acme}", acme_finance, {"decision": "approved", "note": "ok"}
    )
    assert status == 200 and decided["ok"], decided
    # THEN it is settled, by bob, and no longer owed; globex's queue is untouched
    status, body = send(stack, "GET", "/approvals", acme_finance)
    assert status == 200 and body["owed"] == []
    (row,) = body["settled"]
    assert (row["approval_id"], row["settled"]["by"], row["settled"]["outcome"]) == (
        acme,
        "bob",
        "approved",
    )
    assert owed(stack, globex_finance) == [globex]


def test_a_cursor_not_handed_out_is_a_400(stack: LocalStack) -> None:
    status, body = send(
        stack, "GET", "/approvals?after=fi_1", dev_token("bob", "acme", roles=["finance"])
    )
    assert (status, body["error"]) == (400, "bad_request")
