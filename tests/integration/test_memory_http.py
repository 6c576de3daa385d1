"""Memory over HTTP, end to end: the local stack as ``make dev`` runs it.

One ``LocalStack`` for the module (AWS's DynamoDB Local, the table from ``template.yaml``, the
real handler in local execution environments, the local gateway routing by the template's
events), on free ports. A chatbot backend states alice's facts with plain ``urllib`` calls and
dev tokens (``Bearer dev:acme:alice``); alice reads them with their history, corrects one,
confirms one, deletes one, exports everything and turns her memory off; what the table holds is
then read directly. Bob, of the same tenant, and an alice of another tenant find none of it.

The functions reach DynamoDB Local through ``DynamoDBProxy`` (``tests/integration/
dynamodb_proxy.py``): every request goes over the network as in production, and the proxy
records which ones touch the fact store and can hold their answers. So the issue's story runs
here through the tool route as an agent drives it (``forms.examples.health_check``, whose
fields declare fact keys): what alice says in one form fills or is offered in the next, her
correction in the fact editor is offered after, memory off reads her switch and not one fact,
bob gets none of hers, and a fact store slower than the deadline does not hold the form (the
timeout is counted in the function's EMF metrics, read from its stdout) while what it answers
late is offered at the next call.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from forms.storage.dynamodb_facts import DynamoDBFactStore
from formwork.infra.local.dynamodb_local import DynamoDBLocal
from formwork.infra.local.stack import LocalStack
from tests.integration.dynamodb_proxy import DynamoDBProxy, Request

WEIGHT = "/memory/facts/person.weight_kg"
HEIGHT = "/memory/facts/person.height_cm"
BORN = "/memory/facts/person.date_of_birth"
FORM = "health-check"
DEADLINE_MS = 1000
"""The stack's recall deadline (``FORMWORK_MEMORY_DEADLINE_MS``): wider than the 200 ms
default so that a loaded machine's ordinary reads never miss it, and still far below
``HELD_SECONDS``: a late store is late by the hold, not by the machine."""
HELD_SECONDS = 4.0
"""How long the slow store holds each answer at most (released as soon as the test is done
with it): four deadlines, and under the functions' boto3 read timeout (5 s), so the fault is
a slow store, not one the client gives up on and retries."""


class FunctionLogs:
    """Every line the stack's functions write to stdout (Powertools' JSON log records and EMF
    metrics), as it comes; a test waits for the record that ends an invocation, not for time."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []
        self._arrived = threading.Condition()

    def __call__(self, function: str, line: str) -> None:
        with self._arrived:
            self.lines.append((function, line))
            self._arrived.notify_all()

    def records(self) -> list[dict[str, Any]]:
        with self._arrived:
            lines = [line for _, line in self.lines]
        found = []
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                found.append(record)
        return found

    def invocation(self, request_id: str, timeout: float = 30.0) -> list[dict[str, Any]]:
        """What the invocation behind the API request ``request_id`` wrote, up to its "tool
        call" record (its last), once that has come: from its first log record carrying the
        request id (Powertools' ``correlation_id``), with the metrics between."""

        def ended() -> bool:
            return any(_ends(record, request_id) for record in self.records())

        with self._arrived:
            assert self._arrived.wait_for(ended, timeout), f"no tool call record for {request_id}"
        records = self.records()
        first = next(i for i, r in enumerate(records) if r.get("correlation_id") == request_id)
        last = next(i for i, r in enumerate(records) if _ends(r, request_id))
        return records[first : last + 1]


def _ends(record: dict[str, Any], request_id: str) -> bool:
    return record.get("correlation_id") == request_id and record.get("message") == "tool call"


def counted(records: list[dict[str, Any]]) -> list[str]:
    """The metric names the EMF records among ``records`` count."""
    return [
        metric["Name"]
        for record in records
        for directive in record.get("_aws", {}).get("CloudWatchMetrics", [])
        for metric in directive.get("Metrics", [])
    ]


@pytest.fixture(scope="module")
def proxy(dynamodb_local: DynamoDBLocal) -> Iterator[DynamoDBProxy]:
    with DynamoDBProxy(dynamodb_local.endpoint) as running:
        yield running


@pytest.fixture(scope="module")
def logs() -> FunctionLogs:
    return FunctionLogs()


@pytest.fixture(scope="module")
def stack(
    dynamodb_local: DynamoDBLocal, proxy: DynamoDBProxy, logs: FunctionLogs
) -> Iterator[LocalStack]:
    """The stack on the session's DynamoDB Local (the table is created there directly), its
    functions pointed at the proxy (``environment`` overrides the endpoint the stack gives
    them), their stdout collected. Not warmed: an environment's first memory call prepares
    memory before the deadline starts, and the deadline judges the store's own time, so the
    first ``form_start`` of a fresh environment recalls like any other."""
    with LocalStack(
        api_port=0,
        max_environments=2,
        dynamodb=dynamodb_local,
        table_name=f"formwork-{uuid.uuid4().hex[:12]}",
        environment={
            "DYNAMODB_ENDPOINT_URL": proxy.endpoint,
            "FORMWORK_MEMORY_DEADLINE_MS": str(DEADLINE_MS),
        },
        function_output=logs,
    ) as running:
        yield running


class Http:
    """A minimal HTTP client of the memory routes and the tool route, as one principal (a dev
    token); ``request_id`` is the API request id of the last answer (``apigw-requestid``)."""

    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url, token
        self.request_id = ""
        self._calls = itertools.count(1)

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {self.token}"}
        data = None
        if body is not None:
            headers["Content-Type"] = "application/json"
            data = json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data, headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                self.request_id = response.headers.get("apigw-requestid", "")
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            self.request_id = error.headers.get("apigw-requestid", "")
            return error.code, json.loads(error.read())

    def ok(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        status, answer = self.request(method, path, body)
        assert status == 200, answer
        assert isinstance(answer, dict)
        return answer

    def tool(self, conversation: str, name: str, payload: dict[str, Any]) -> dict[str, Any]:
        """One tool call, as an agent's backend makes it: a fresh tool-call id each time."""
        body = {"tool_call_id": f"call-{next(self._calls)}", "input": payload}
        result = self.ok("POST", f"/conversations/{conversation}/tools/{name}", body)
        assert result["ok"] is True, result
        return result

    def status_lines(self, conversation: str) -> str:
        return "\n".join(self.ok("GET", f"/conversations/{conversation}/status")["lines"])

    def about_you(self, conversation: str, instance: str) -> dict[str, dict[str, Any]]:
        """The health check-in's first step as ``form_read`` shows it: each field's row."""
        read = {"form": FORM, "instance": instance, "part": "about_you"}
        return {row["id"]: row for row in self.tool(conversation, "form_read", read)["fields"]}


@pytest.fixture
def tenant() -> str:
    """A tenant of the test's own, so tests sharing the module's table never meet."""
    return f"t{uuid.uuid4().hex[:8]}"


def as_(stack: LocalStack, tenant: str, sub: str) -> Http:
    return Http(stack.api_url, f"dev:{tenant}:{sub}")


def recorded(client: Http, *keys: str, timeout: float = 30.0) -> None:
    """Wait until the fact editor lists ``keys``: an answer is remembered behind the call's
    answer (the recording never delays it), so a test that starts the next form at once
    waits for the recording to land first, as a person would in between."""
    done = threading.Event()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        listed = {f["key"] for f in client.ok("GET", "/memory/facts")["facts"]}
        if set(keys) <= listed:
            return
        done.wait(0.05)  # nothing signals the recording's end over HTTP: ask again shortly
    raise AssertionError(f"{keys} not recorded within {timeout} s")


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


# ------------------------------------------------------------------ the story, by tools


def facts_of(requests: list[Request], principal: str) -> list[tuple[str, tuple[str | None, ...]]]:
    """The fact-store requests among ``requests`` that address ``principal``'s partition:
    each operation, with the sort keys it names (None: a Query of the partition)."""
    partition = f"M#{principal}"
    return [
        (request.operation, tuple(sk for pk, sk in request.keys if pk == partition))
        for request in requests
        if partition in request.partitions()
    ]


def test_what_alice_says_fills_or_is_offered_later_and_never_reaches_bob_over_http(
    stack: LocalStack, proxy: DynamoDBProxy, tenant: str
) -> None:
    alice = as_(stack, tenant, "alice")
    # GIVEN alice gives her date of birth and weight while filling a health check-in
    started = alice.tool(
        "conv-1",
        "form_start",
        {"form": FORM, "values": {"date_of_birth": "1990-04-02", "weight_kg": 70}},
    )
    assert "saved 2 (date_of_birth, weight_kg)" in started["summary"]
    recorded(alice, "person.date_of_birth", "person.weight_kg")
    # WHEN, in a later conversation, a new check-in starts with nothing said
    later = alice.tool("conv-2", "form_start", {"form": FORM})
    # THEN the date of birth is filled and marked from memory, the weight only offered
    status = alice.status_lines("conv-2")
    assert "from memory, unconfirmed (resend once confirmed): Date of birth 1990-04-02" in status
    assert "from memory, confirm: Weight 70 kg" in status
    rows = alice.about_you("conv-2", later["instance"])
    assert rows["date_of_birth"]["value"] == "1990-04-02"
    assert "unconfirmed" in rows["date_of_birth"]["memory"]
    assert rows["weight_kg"]["status"] == "pending" and "value" not in rows["weight_kg"]
    assert rows["weight_kg"]["memory"].startswith("offered from memory: 70 kg")
    assert "value" not in rows["height_cm"] and "memory" not in rows["height_cm"]

    # WHEN she corrects her weight in the fact editor
    corrected = alice.ok("PUT", WEIGHT, {"value": 71.5, "correction": True})
    assert (corrected["change"], corrected["fact"]["value"]) == ("corrected", "71.5")
    # THEN the next check-in offers the new value, and still does not write it
    third = alice.tool("conv-3", "form_start", {"form": FORM})
    assert "from memory, confirm: Weight 71.5 kg" in alice.status_lines("conv-3")
    assert "value" not in alice.about_you("conv-3", third["instance"])["weight_kg"]

    # WHEN she turns her memory off, and a new check-in starts
    assert alice.ok("PUT", "/memory/settings", {"enabled": False})["enabled"] is False
    proxy.take()
    off = alice.tool("conv-4", "form_start", {"form": FORM})
    seen = facts_of(proxy.take(), f"{tenant}/alice")
    # THEN nothing is recalled
    assert "from memory" not in alice.status_lines("conv-4")
    assert all("value" not in row for row in alice.about_you("conv-4", off["instance"]).values())
    # AND the fact store was asked for her switch and nothing else: not one fact read
    assert seen == [("GetItem", ("SETTINGS",))]

    # WHEN bob, of the same tenant, starts the same form
    bob = as_(stack, tenant, "bob")
    proxy.take()
    his = bob.tool("conv-5", "form_start", {"form": FORM})
    requests = proxy.take()
    # THEN none of alice's facts are in it, and only his own partition was read
    assert "from memory" not in bob.status_lines("conv-5")
    assert all("value" not in row for row in bob.about_you("conv-5", his["instance"]).values())
    assert facts_of(requests, f"{tenant}/bob") == [("GetItem", ("SETTINGS",)), ("Query", (None,))]
    assert facts_of(requests, f"{tenant}/alice") == []


def test_a_fact_store_slower_than_the_deadline_does_not_hold_the_form_and_comes_late_over_http(
    stack: LocalStack, proxy: DynamoDBProxy, logs: FunctionLogs, tenant: str
) -> None:
    # GIVEN alice's date of birth, which a new form would fill
    alice = as_(stack, tenant, "alice")
    alice.ok("PUT", BORN, {"value": "1990-04-02"})
    listed = alice.ok("GET", "/memory/facts")["facts"]
    assert [(f["key"], f["use"]) for f in listed] == [("person.date_of_birth", "fill")]
    # WHEN a check-in starts while the fact store holds every answer far past the deadline
    with proxy.hold(HELD_SECONDS) as hold:
        started = alice.tool("conv-slow", "form_start", {"form": FORM})
        request_id = alice.request_id
        answered_when_it_opened = hold.answered
        # THEN the form opened while the store still held its answer (the switch was asked for)
        assert hold.caught(1)
        assert answered_when_it_opened == 0
        assert [(r.operation, r.keys) for r in hold.held] == [
            ("GetItem", ((f"M#{tenant}/alice", "SETTINGS"),))
        ]
    # AND it opened without memory: nothing filled, nothing offered, the recall owed
    assert started["summary"] == "Started Health check-in."
    assert "from memory" not in alice.status_lines("conv-slow")
    # AND the function logged and counted the missed deadline and the debt, and answered ok
    written = logs.invocation(request_id)
    assert any("recall missed its deadline" in r.get("message", "") for r in written)
    memory = [name for name in counted(written) if name.startswith("Memory")]
    assert memory == ["MemoryRecallTimeout", "MemoryRecallOwed"]
    assert (written[-1]["tool"], written[-1]["outcome"]) == ("form_start", "ok")
    # WHEN the agent's next call reads the form
    read = {"form": FORM, "instance": started["instance"], "part": "about_you"}
    result = alice.tool("conv-slow", "form_read", read)
    # THEN memory's late answer is there as an offer, never a fill, and the result says so
    assert result["offered_late"] == ["date_of_birth"]
    assert "memory answered late" in result["summary"]
    rows = {row["id"]: row for row in result["fields"]}
    assert "value" not in rows["date_of_birth"]
    assert rows["date_of_birth"]["memory"].startswith("offered from memory: 1990-04-02")
    assert "from memory, confirm: Date of birth 1990-04-02" in alice.status_lines("conv-slow")
    # AND once only
    assert "offered_late" not in alice.tool("conv-slow", "form_read", read)
