"""Context defaults on the local stack, over HTTP: a dev token carrying the claims an identity
provider would (``;locale=...;zoneinfo=...;currency=...``) starts a form whose fields that
declare those keys are filled from the account, as a verified JWT's claims fill them in AWS
(``docs/memory.md``, context defaults)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from formwork.infra.local.dynamodb_local import DynamoDBLocal
from formwork.infra.local.gateway import dev_token
from formwork.infra.local.stack import LocalStack
from tests.integration.stacks import local_stack

ACCOUNT = {"locale": "pt-PT", "zoneinfo": "Europe/Lisbon", "currency": "EUR"}


@pytest.fixture(scope="module")
def stack(dynamodb_local: DynamoDBLocal) -> Iterator[LocalStack]:
    forms = {"FORMWORK_FORMS": "tests.integration.profile_forms:FORMS"}
    with local_stack(dynamodb_local, environment=forms) as running:
        yield running


def call(stack: LocalStack, token: str, conversation: str, tool: str, **given: Any) -> Any:
    body = json.dumps({"tool_call_id": f"call-{tool}", "input": given}).encode()
    request = urllib.request.Request(
        f"{stack.api_url}/conversations/{conversation}/tools/{tool}",
        body,
        {"Authorization": token, "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def test_a_dev_tokens_account_claims_fill_the_context_defaults(stack: LocalStack) -> None:
    # GIVEN a dev token carrying a locale, a time zone and a currency
    token = dev_token("alice", "acme", claims=ACCOUNT)
    # WHEN it starts a form whose fields declare those keys
    started = call(stack, token, "conv-1", "form_start", form="profile")
    read = call(stack, token, "conv-1", "form_read", form="profile")
    # THEN each of them is filled from the account, marked until confirmed
    assert started["ok"] is True, started
    assert "filled 3 from your account, unconfirmed" in started["summary"]
    rows = {row["id"]: row for row in read["fields"]}
    assert [rows[f].get("value") for f in ("language", "zone", "currency")] == [
        "pt-PT",
        "Europe/Lisbon",
        "EUR",
    ]
    assert rows["zone"]["memory"] == "from your account; unconfirmed"
    assert "value" not in rows["name"]


def test_a_dev_token_without_those_claims_fills_nothing(stack: LocalStack) -> None:
    started = call(stack, dev_token("bob", "acme"), "conv-2", "form_start", form="profile")
    read = call(stack, dev_token("bob", "acme"), "conv-2", "form_read", form="profile")
    assert started["ok"] is True and "from your account" not in started["summary"]
    assert all("value" not in row for row in read["fields"])
