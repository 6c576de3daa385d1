"""The tool API over HTTP, end to end: the local stack as ``make dev`` runs it.

One ``LocalStack`` for the module (AWS's DynamoDB Local, the table from ``template.yaml``,
the real handler in local execution environments, the local gateway), on free ports.
Requests are plain ``urllib`` calls with dev tokens, as a chatbot backend or curl would make
them; what was stored is read back through ``DynamoDBFormStore``.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from forms.instance import FormInstance
from forms.storage.dynamodb import DynamoDBFormStore
from forms.surface.formats import FORMATS, tool_definitions
from formwork.examples import demo
from formwork.infra.local.dynamodb_local import DynamoDBLocal
from formwork.infra.local.stack import LocalStack, running_stack
from tests.integration.stacks import local_stack

WRITERS = 20


@pytest.fixture(scope="module")
def stack(dynamodb_local: DynamoDBLocal) -> Iterator[LocalStack]:
    with local_stack(dynamodb_local, max_environments=4) as running:
        yield running


@pytest.fixture(scope="module")
def store(stack: LocalStack) -> DynamoDBFormStore:
    return DynamoDBFormStore(stack.dynamodb_client(), stack.table_name)


@pytest.fixture
def conversation() -> str:
    return f"conv-{uuid.uuid4().hex[:10]}"


class Api:
    """A minimal HTTP client of the tool API."""

    def __init__(self, url: str) -> None:
        self.url = url

    def request(
        self, method: str, path: str, token: str | None = "dev:alice", body: Any = None
    ) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data, headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def call(
        self,
        conversation: str,
        tool: str,
        tool_call_id: str,
        payload: dict[str, Any],
        token: str = "dev:alice",
        **envelope: Any,
    ) -> dict[str, Any]:
        body = {"tool_call_id": tool_call_id, "input": payload, **envelope}
        path = f"/conversations/{conversation}/tools/{tool}"
        status, result = self.request("POST", path, token, body)
        assert status == 200, result
        assert isinstance(result, dict)
        return result

    def status(self, conversation: str, token: str = "dev:alice") -> tuple[int, Any]:
        return self.request("GET", f"/conversations/{conversation}/status", token)


@pytest.fixture(scope="module")
def api(stack: LocalStack) -> Api:
    return Api(stack.api_url)


def revisions(instance: FormInstance, field_id: str) -> list[Any]:
    return list(instance.field(field_id).revisions)


def revision_count(instance: FormInstance) -> int:
    return sum(len(history.revisions) for history in instance.history.values())


def start_claim(api: Api, conversation: str, token: str = "dev:alice") -> str:
    result = api.call(
        conversation,
        "form_start",
        f"start-{conversation}",
        {"form": "travel-claim", "values": {"destination": "Lisbon"}},
        token,
    )
    assert result["ok"], result
    instance: str = result["instance"]
    return instance


# ------------------------------------------------------------------------------ tools


def test_the_running_stack_is_detected(stack: LocalStack) -> None:
    assert running_stack(stack.api_url)
    assert not running_stack("http://127.0.0.1:9", timeout=0.5)


@pytest.mark.parametrize("fmt", FORMATS)
def test_tools_in_each_vendor_format(api: Api, fmt: str) -> None:
    # WHEN a chatbot backend fetches the tools in its vendor's format
    status, body = api.request("GET", f"/tools?format={fmt}")
    # THEN it gets exactly the engine's tool definitions in that shape
    assert status == 200
    assert body["tools"] == json.loads(json.dumps(tool_definitions(fmt)))  # type: ignore[arg-type]


def test_tools_default_to_the_generic_format(api: Api) -> None:
    status, body = api.request("GET", "/tools")
    assert status == 200
    assert body["tools"] == json.loads(json.dumps(tool_definitions("generic")))


def test_without_a_token_nothing_is_served(api: Api, conversation: str) -> None:
    for method, path in [
        ("GET", "/tools"),
        ("GET", f"/conversations/{conversation}/status"),
        ("POST", f"/conversations/{conversation}/tools/form_list"),
    ]:
        status, body = api.request(method, path, token=None, body={"tool_call_id": "x"})
        assert (status, body) == (401, {"message": "Unauthorized"}), path


# ------------------------------------------------------------------------------ a whole form


def test_a_travel_claim_driven_to_completion_over_http(
    api: Api, store: DynamoDBFormStore, conversation: str
) -> None:
    # GIVEN a claim started with what the user said up front
    started = api.call(
        conversation,
        "form_start",
        "call_01",
        {
            "form": "travel-claim",
            "values": {
                "destination": "Lisbon",
                "departure_date": "2025-03-03",
                "return_date": "2025-03-07",
                "purpose": "client kickoff",
                "mode": "air",
                "flight_number": "TP1234",
            },
        },
    )
    assert started["ok"], started
    claim = started["instance"]
    status, body = api.status(conversation)
    assert status == 200
    assert body["conversation_id"] == conversation
    assert 'step 1/4 "Claimant"' in body["lines"][0]

    # WHEN the agent fills the rest over a few turns
    ref = {"form": "travel-claim", "instance": claim}
    filled = api.call(
        conversation,
        "form_fill",
        "call_02",
        {**ref, "values": {"Full name": "Ana Ferreira", "staffId": "AB1234"}},
    )
    assert filled["ok"] and filled["resolved"] == {"Full name": "full_name", "staffId": "staff_id"}
    coerced = api.call(
        conversation,
        "form_fill",
        "call_03",
        {**ref, "values": {"cost_centre": "CC-104", "receipts_attached": "yes"}},
    )
    assert coerced["ok"] and coerced["coerced"] == {
        "receipts_attached": {"sent": "yes", "stored": True}
    }
    api.call(
        conversation,
        "form_fill",
        "call_04",
        {**ref, "values": {"receipts_attached": True, "total": 1950}},
    )
    read = api.call(conversation, "form_read", "call_05", {**ref, "part": "total"})
    assert read["ok"] and read["value"] == "1950"
    done = api.call(
        conversation,
        "form_fill",
        "call_06",
        {**ref, "values": {"manager_email": "joao.silva@example.com"}, "submit": True},
    )

    # THEN the claim is complete, submitted, stored with every answer, off the status lines
    assert done["closed"] == "completed", done
    stored = store.get(claim)
    assert stored.state.status == "completed"
    assert stored.principal == "local/alice"  # dev:alice names no tenant: the local one
    assert stored.conversation_id == conversation
    assert stored.field("staff_id").in_force().value == "AB1234"  # type: ignore[union-attr]
    assert stored.field("receipts_attached").in_force().value is True  # type: ignore[union-attr]
    assert api.status(conversation) == (200, {"conversation_id": conversation, "lines": []})


# ------------------------------------------------------------------------------ isolation


def test_another_principals_conversation_is_not_there(
    api: Api, store: DynamoDBFormStore, conversation: str
) -> None:
    # GIVEN alice's claim in a conversation
    claim = start_claim(api, conversation)
    before = store.get(claim)
    never_used = f"conv-{uuid.uuid4().hex[:10]}"

    # WHEN bob (or alice under a tenant, another principal) asks for its status
    for token in ("dev:bob", "dev:acme:alice"):
        status, body = api.status(conversation, token)
        # THEN it is the same 404 as a conversation that was never used
        _, nothing = api.status(never_used, token)
        assert status == 404
        assert body == json.loads(json.dumps(nothing).replace(never_used, conversation))

    # WHEN bob calls tools in alice's conversation, naming her instance, even claiming to be her
    ref = {"form": "travel-claim", "instance": claim}
    listed = api.call(conversation, "form_list", "bob-1", {}, "dev:bob")
    read = api.call(conversation, "form_read", "bob-2", ref, "dev:bob")
    filled = api.call(
        conversation,
        "form_fill",
        "bob-3",
        {**ref, "values": {"destination": "Paris"}},
        "dev:bob",
        principal="alice",
        user_id="alice",
    )
    revised = api.call(
        conversation,
        "form_revise",
        "bob-4",
        {**ref, "field": "destination", "action": "retract"},
        "dev:bob",
    )
    abandoned = api.call(
        conversation, "form_abandon", "bob-5", {**ref, "reason": "mine now"}, "dev:bob"
    )
    replayed = api.call(
        conversation,
        "form_start",
        f"start-{conversation}",
        {"form": "travel-claim", "values": {"destination": "Lisbon"}},
        "dev:bob",
    )

    # THEN he sees nothing of hers and changes nothing
    assert listed["ok"] and listed["started"] == []
    for result in (read, filled, revised, abandoned):
        assert result["ok"] is False
        assert result["error"] == "unknown_instance", result
        assert "Lisbon" not in json.dumps(result)
    assert replayed["instance"] != claim  # her tool-call id is not a key into her results
    after = store.get(claim)
    assert after.model_dump() == before.model_dump()
    status, body = api.status(conversation)
    assert status == 200 and len(body["lines"]) == 1


# ------------------------------------------------------------------------------ concurrency


def test_concurrent_writers_on_one_instance_all_land(
    api: Api, store: DynamoDBFormStore, conversation: str
) -> None:
    # GIVEN one open claim, and twenty clients lined up to write to it at once
    claim = start_claim(api, conversation)
    before = revision_count(store.get(claim))
    barrier = threading.Barrier(WRITERS)
    results: dict[int, tuple[int, Any]] = {}

    def write(n: int) -> None:
        body = {
            "tool_call_id": f"race-{n:02d}",
            "input": {
                "form": "travel-claim",
                "instance": claim,
                "values": {"purpose": f"purpose number {n}"},
            },
        }
        path = f"/conversations/{conversation}/tools/form_fill"
        barrier.wait()
        results[n] = api.request("POST", path, "dev:alice", body)

    # WHEN each writes a different value at the same moment
    threads = [threading.Thread(target=write, args=(n,)) for n in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    # THEN every call landed on its first attempt (conflicts are retried inside the service,
    # with jittered backoff), and every write is in the stored history exactly once
    assert sorted(results) == list(range(WRITERS))
    for n, (status, result) in results.items():
        assert status == 200 and result["ok"] is True, (n, result)
    stored = store.get(claim)
    assert revision_count(stored) - before == WRITERS
    ids = [r.tool_call_id for r in revisions(stored, "purpose")]
    assert sorted(ids) == [f"race-{n:02d}" for n in range(WRITERS)]
    values = {r.value for r in revisions(stored, "purpose")}
    assert values == {f"purpose number {n}" for n in range(WRITERS)}


# ------------------------------------------------------------------------------ replay


def test_a_replayed_tool_call_returns_the_first_result(
    api: Api, store: DynamoDBFormStore, conversation: str
) -> None:
    # GIVEN a write that landed
    claim = start_claim(api, conversation)
    payload = {"form": "travel-claim", "instance": claim, "values": {"purpose": "kickoff"}}
    first = api.call(conversation, "form_fill", "call_retry", payload)
    assert first["ok"], first
    # AND a later write to the same field
    api.call(
        conversation,
        "form_fill",
        "call_later",
        {**payload, "values": {"purpose": "workshop"}},
    )

    # WHEN the client retries the first request (a timeout on its side, say)
    again = api.call(conversation, "form_fill", "call_retry", payload)

    # THEN it gets the first result back, marked as a replay, and nothing is applied twice
    assert again.pop("replayed") is True
    assert again == first
    stored = store.get(claim)
    ids = [r.tool_call_id for r in revisions(stored, "purpose")]
    assert ids == ["call_retry", "call_later"]
    assert stored.field("purpose").in_force().value == "workshop"  # type: ignore[union-attr]


# ------------------------------------------------------------------------------ the demo


def test_the_demo_runs_over_http(stack: LocalStack, capsys: pytest.CaptureFixture[str]) -> None:
    # WHEN the scripted demo drives its conversations over HTTP
    assert demo.run(demo.OverHttp(stack.api_url)) == 0
    # THEN every self-check held on the real path, and the header says which path it was
    out = capsys.readouterr().out
    assert f"Formwork demo: HTTP {stack.api_url}" in out
    assert "every expected outcome seen" in out
    # AND a page link was minted and used as a browser uses it: the page's title and status
    flat = " ".join(out.split())  # the demo wraps its lines at 96 columns
    assert "POST /conversations/conv-t/page-links" in flat
    assert "(Sec-Fetch-Site: same-origin: the button) → 303" in flat
    assert "“Travel expense claim”: Complete, not submitted yet" in flat
    assert "→ 404 “This link does not open a page” (a link opens once)" in flat
    # AND the person's correction on the page reached the agent: its status line and the
    # field's history, the new revision by the user
    assert (
        "the user changed on their form page: Purpose of the trip = client kickoff and team "
        "training" in flat
    )
    assert 'revision 1: "client kickoff and team training" by user' in flat
    # AND finance decided the purchase request from its approval's page, once
    assert "POST /approvals/page-links" in flat and "“Open your approvals”" in flat
    assert "Your decision is recorded: approved. Approved by finance-" in flat
    assert "(the same form sent again) → the same 303: applied once" in flat
    # AND the person watched the job application's draft on its canvas: the builder's next
    # call moved the version its script polls, and the field it added shows on the canvas
    assert "POST /builder/forms/job-application/page-links" in flat
    assert "“Open the form you are building”" in flat
    assert "“Job application (draft)”: job-application, draft version 1; 0 fields" in flat
    assert "/version → version 1 → 2 (its script)" in flat
    assert "new on the canvas: Full name full_name · short text · required" in flat
    # AND alice corrected her weight on her fact editor page, and the next form offers it
    memory = flat[flat.index("9. Memory") :]
    assert "POST /memory/page-links" in memory and "“Open your memory”" in memory
    assert "POST /pages/memory/facts/person.weight_kg/correct → 303" in memory
    assert "Corrected. The earlier value is kept in the fact's history. Weight 71.5 kg" in memory
    assert 'history 1: corrected "71.5"' in memory
    corrected = memory.index("Weight 71.5 kg")
    assert memory.index("from memory, confirm: Weight 71.5 kg") > corrected
