"""Memory over HTTP, end to end: the local stack as ``make dev`` runs it.

One ``LocalStack`` for the module (AWS's DynamoDB Local, the table from ``template.yaml``, the
real handler in local execution environments, the local gateway routing by the template's
events), on free ports. A chatbot backend states alice's facts with plain ``urllib`` calls and
dev tokens (``Bearer dev:acme:alice``); alice reads them with their history, corrects one,
confirms one, deletes one, exports everything and turns her memory off; what the table holds is
then read directly. Bob, of the same tenant, and an alice of another tenant find none of it.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from forms.storage.dynamodb_facts import DynamoDBFactStore
from infra.local.dynamodb_local import DynamoDBLocal
from infra.local.stack import LocalStack

WEIGHT = "/memory/facts/person.weight_kg"
HEIGHT = "/memory/facts/person.height_cm"


@pytest.fixture(scope="module")
def stack(dynamodb_local: DynamoDBLocal) -> Iterator[LocalStack]:
    with LocalStack(
        api_port=0,
        max_environments=2,
        dynamodb=dynamodb_local,
        table_name=f"formwork-{uuid.uuid4().hex[:12]}",
    ) as running:
        yield running


class Http:
    """A minimal HTTP client of the memory routes, as one principal (a dev token)."""

    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url, token

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {self.token}"}
        data = None
        if body is not None:
            headers["Content-Type"] = "application/json"
            data = json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data, headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def ok(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        status, answer = self.request(method, path, body)
        assert status == 200, answer
        assert isinstance(answer, dict)
        return answer


@pytest.fixture
def tenant() -> str:
    """A tenant of the test's own, so tests sharing the module's table never meet."""
    return f"t{uuid.uuid4().hex[:8]}"


def as_(stack: LocalStack, tenant: str, sub: str) -> Http:
    return Http(stack.api_url, f"dev:{tenant}:{sub}")


def test_facts_are_stated_read_corrected_confirmed_deleted_and_exported_over_http(
    stack: LocalStack, tenant: str
) -> None:
    alice = as_(stack, tenant, "alice")
    # GIVEN the chatbot backend states alice's height in her words and her weight
    height = alice.ok("PUT", HEIGHT, {"words": "5'8\""})
    assert height["derivation"] == {"rule": "feet_inches_to_cm", "words": "5'8\""}
    assert height["fact"]["value"] == 173
    alice.ok("PUT", WEIGHT, {"value": 70, "words": "70 kg", "user_id": "bob"})
    # WHEN alice lists her facts
    listed = alice.ok("GET", "/memory/facts")
    # THEN the height would fill a form and the weight be offered
    assert listed["memory_enabled"] is True
    assert [(f["key"], f["use"]) for f in listed["facts"]] == [
        ("person.height_cm", "fill"),
        ("person.weight_kg", "offer"),
    ]
    # WHEN she corrects her weight, then confirms it
    corrected = alice.ok("PUT", WEIGHT, {"value": 72.5, "correction": True})
    assert (corrected["change"], corrected["fact"]["value"]) == ("corrected", "72.5")
    confirmed = alice.ok("POST", f"{WEIGHT}/confirm", {})
    assert confirmed["change"] == "confirmed" and "confirmed_at" in confirmed["fact"]
    # THEN the weight reads with its whole history, and as believed before the correction
    read = alice.ok("GET", WEIGHT)
    assert [(r["change"], r.get("value")) for r in read["history"]] == [
        ("stated", "70"),
        ("corrected", "72.5"),
        ("confirmed", "72.5"),
    ]
    first = read["history"][0]["recorded_at"]
    then = alice.ok("GET", f"{WEIGHT}?as_of={first.replace('+00:00', 'Z')}")
    assert then["believed"]["value"] == "70"
    # WHEN she deletes the weight
    deleted = alice.ok("DELETE", WEIGHT)
    assert (deleted["revision"], deleted["erased"]) == (3, 3)
    # THEN it is gone from her facts, its history keeps no value, and a second delete is 404
    assert [f["key"] for f in alice.ok("GET", "/memory/facts")["facts"]] == ["person.height_cm"]
    assert all("value" not in r for r in alice.ok("GET", WEIGHT)["history"])
    status, refused = alice.request("DELETE", WEIGHT)
    assert (status, refused["error"]) == (404, "no_fact")
    # AND her export holds both keys, with every revision
    export = alice.ok("GET", "/memory/export")
    assert export["principal"] == f"{tenant}/alice"
    assert [(k["key"], len(k["history"])) for k in export["facts"]] == [
        ("person.height_cm", 1),
        ("person.weight_kg", 4),
    ]
    # AND the table holds them in alice's partition, read back by the DynamoDB fact store
    facts = DynamoDBFactStore(stack.dynamodb_client(), stack.table_name)
    assert [fact.key for fact in facts.current(f"{tenant}/alice")] == ["person.height_cm"]
    assert len(facts.history(f"{tenant}/alice", "person.weight_kg")) == 4
    assert facts.export(f"{tenant}/bob") == []


def test_memory_off_refuses_new_facts_and_keeps_the_old_ones_readable(
    stack: LocalStack, tenant: str
) -> None:
    alice = as_(stack, tenant, "alice")
    alice.ok("PUT", HEIGHT, {"value": 173})
    # WHEN alice turns her memory off
    switched = alice.ok("PUT", "/memory/settings", {"enabled": False})
    assert (switched["enabled"], switched["deployment_enabled"]) == (False, True)
    # THEN a new fact is refused, and nothing is written
    status, refused = alice.request("PUT", WEIGHT, {"value": 70})
    assert (status, refused["error"]) == (409, "memory_off")
    assert alice.request("GET", WEIGHT)[0] == 404
    # AND her height stays listed, marked as not used
    listed = alice.ok("GET", "/memory/facts")
    assert listed["memory_enabled"] is False
    assert [(f["key"], f["use"]) for f in listed["facts"]] == [("person.height_cm", "none")]
    # AND the switch is stored: read back, and on again
    assert alice.ok("GET", "/memory/settings")["enabled"] is False
    assert alice.ok("PUT", "/memory/settings", {"enabled": True})["enabled"] is True
    assert alice.request("PUT", WEIGHT, {"value": 70})[0] == 200


def test_another_principal_and_another_tenant_find_none_of_it(
    stack: LocalStack, tenant: str
) -> None:
    # GIVEN alice's weight
    alice = as_(stack, tenant, "alice")
    alice.ok("PUT", WEIGHT, {"value": 70})
    bob = as_(stack, tenant, "bob")
    elsewhere = as_(stack, f"{tenant}x", "alice")
    nobody = as_(stack, tenant, "nobody")
    expected = [
        nobody.request("GET", WEIGHT),
        nobody.request("POST", f"{WEIGHT}/confirm", {}),
        nobody.request("DELETE", WEIGHT),
    ]
    assert expected[0][0] == 404
    for outsider in (bob, elsewhere):
        # WHEN bob, or an alice of another tenant, reads, confirms or deletes it
        seen = [
            outsider.request("GET", WEIGHT),
            outsider.request("POST", f"{WEIGHT}/confirm", {}),
            outsider.request("DELETE", WEIGHT),
        ]
        # THEN every answer is the one of a principal who has no weight
        assert seen == expected
        # AND their lists and exports are empty
        assert outsider.ok("GET", "/memory/facts")["facts"] == []
        assert outsider.ok("GET", "/memory/export")["facts"] == []
    # AND alice's weight is as she stated it
    assert alice.ok("GET", WEIGHT)["current"]["value"] == "70"
    # AND what bob states is his alone
    bob.ok("PUT", WEIGHT, {"value": 90})
    assert alice.ok("GET", WEIGHT)["current"]["value"] == "70"
    assert bob.ok("GET", WEIGHT)["current"]["value"] == "90"
