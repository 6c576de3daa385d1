"""Every route's happy path, a form driven to completion, replay, and the tool formats."""

from __future__ import annotations

import json

import pytest

from forms.surface.tools import TOOLS
from tests.functional.conftest import Api, RecordingStore, load_event
from tests.support import TRAVEL_ANSWERS

TOOL_NAMES = [tool.name for tool in TOOLS]


# ---------------------------------------------------------------------------- GET /tools


def test_list_tools_fixture_returns_every_tool_with_its_schema(api: Api) -> None:
    # WHEN the GET /tools fixture is sent
    response = api.send(load_event("list_tools"))
    # THEN every tool comes back, in surface order, as name + description + input schema
    assert response.status == 200
    assert response.headers["content-type"] == "application/json"
    tools = response.json()["tools"]
    assert [t["name"] for t in tools] == TOOL_NAMES
    assert all(t["description"] and t["input_schema"]["type"] == "object" for t in tools)


def test_list_tools_openai_fixture(api: Api) -> None:
    response = api.send(load_event("list_tools_openai"))
    assert response.status == 200
    assert [t["function"]["name"] for t in response.json()["tools"]] == TOOL_NAMES


@pytest.mark.parametrize(
    ("fmt", "name_of", "schema_of"),
    [
        ("generic", lambda t: t["name"], lambda t: t["input_schema"]),
        ("openai", lambda t: t["function"]["name"], lambda t: t["function"]["parameters"]),
        ("openai-responses", lambda t: t["name"], lambda t: t["parameters"]),
        ("openai-strict", lambda t: t["function"]["name"], lambda t: t["function"]["parameters"]),
        ("openai-responses-strict", lambda t: t["name"], lambda t: t["parameters"]),
        ("anthropic", lambda t: t["name"], lambda t: t["input_schema"]),
        (
            "bedrock",
            lambda t: t["toolSpec"]["name"],
            lambda t: t["toolSpec"]["inputSchema"]["json"],
        ),
        ("mcp", lambda t: t["name"], lambda t: t["inputSchema"]),
    ],
)
def test_list_tools_in_each_vendor_shape(api: Api, fmt: str, name_of, schema_of) -> None:  # type: ignore[no-untyped-def]
    # WHEN the tools are asked for in a vendor's format
    response = api.get("/tools", query={"format": fmt})
    # THEN each tool has that vendor's envelope around the same schema
    assert response.status == 200
    tools = response.json()["tools"]
    assert [name_of(t) for t in tools] == TOOL_NAMES
    assert all(schema_of(t)["type"] == "object" for t in tools)
    if fmt.startswith("openai"):
        assert all(t["type"] == "function" for t in tools)


def test_unknown_format_is_a_400(api: Api) -> None:
    response = api.get("/tools", query={"format": "gemini"})
    assert response.status == 400
    assert response.json()["error"] == "bad_request"
    assert "openai" in response.json()["message"]


# ---------------------------------------------------------------------------- tool calls


def test_call_tool_fixture_starts_a_form(api: Api, store: RecordingStore) -> None:
    # WHEN the tool-call fixture (form_start with two answers) is sent
    response = api.send(load_event("call_tool"))
    # THEN the form starts for the token's principal, in the path's conversation
    assert response.status == 200
    result = response.json()
    assert result["ok"] is True
    assert result["instance"] == "fi_1"
    stored = store.get("fi_1")
    assert (stored.principal, stored.conversation_id) == ("acme/alice", "conv-1")


def test_tool_level_failure_is_a_200_with_the_error_as_data(api: Api) -> None:
    # GIVEN a started claim
    api.call("form_start", form="travel-claim")
    # WHEN the model sends a malformed staff id and an unknown field
    response = api.call("form_fill", form="travel-claim", values={"staff_id": "x", "nights": 3})
    # THEN it is a 200 the model can read, saying what was wrong
    assert response.status == 200
    result = response.json()
    assert [r["field"] for r in result["rejected"]] == ["staff_id"]
    assert [u["sent"] for u in result["unknown"]] == ["nights"]
    # AND a call that cannot run at all is ok=false with a code and a hint, still a 200
    response = api.call("form_read", form="no-such-form")
    assert response.status == 200
    assert response.json()["ok"] is False
    assert response.json()["error"] == "unknown_form"


def test_input_may_be_omitted(api: Api) -> None:
    response = api.post("/conversations/conv-1/tools/form_list", {"tool_call_id": "call_1"})
    assert response.status == 200
    assert response.json()["ok"] is True


def test_drive_a_travel_claim_to_completion_through_the_handler(api: Api) -> None:
    # GIVEN an agent that starts the claim with what the user said first
    first = {k: TRAVEL_ANSWERS[k] for k in ("full_name", "staff_id")}
    started = api.call("form_start", form="travel-claim", values=first).json()
    assert started["ok"] and "closed" not in started
    assert "Trip" in api.status().json()["lines"][0]
    # WHEN the rest arrives over a few turns
    trip = ("destination", "departure_date", "return_date")
    api.call("form_fill", form="travel-claim", values={k: TRAVEL_ANSWERS[k] for k in trip})
    travel = ("mode", "flight_number", "total")
    api.call("form_fill", form="travel-claim", values={k: TRAVEL_ANSWERS[k] for k in travel})
    approval = ("cost_centre", "manager_email", "receipts_attached")
    last = api.call(
        "form_fill", form="travel-claim", values={k: TRAVEL_ANSWERS[k] for k in approval}
    ).json()
    # THEN the claim is complete, open for corrections until the agent submits it
    assert last["ok"] is True and "closed" not in last
    assert "complete (still open for corrections)" in api.status().json()["lines"][0]
    last = api.call("form_fill", form="travel-claim", submit=True).json()
    # AND once submitted it is closed, drops out of the status lines, reads back as completed
    assert last["closed"] == "completed"
    status = api.status()
    assert status.status == 200
    assert status.json() == {"conversation_id": "conv-1", "lines": []}
    read = api.call("form_read", form="travel-claim", part="outline").json()
    assert read["closed"] == "completed"


def test_replayed_tool_call_returns_the_first_result_and_writes_nothing(
    api: Api, store: RecordingStore
) -> None:
    # GIVEN a started claim and one fill
    api.call("form_start", form="travel-claim")
    values = {"destination": "Lisbon"}
    first = api.call("form_fill", tool_call_id="call_fill", form="travel-claim", values=values)
    writes = store.writes
    revisions = len(store.get("fi_1").field("destination").revisions)
    # WHEN the same HTTP request is retried
    again = api.call("form_fill", tool_call_id="call_fill", form="travel-claim", values=values)
    # THEN it returns the first result, marked as a replay, and nothing is applied twice
    assert again.status == 200
    assert again.json() == {**first.json(), "replayed": True}
    assert store.writes == writes
    assert len(store.get("fi_1").field("destination").revisions) == revisions
    # AND the same id with a different input is refused as data
    other = api.call(
        "form_fill", tool_call_id="call_fill", form="travel-claim", values={"destination": "Porto"}
    )
    assert other.status == 200
    assert other.json()["error"] == "tool_call_conflict"


# ---------------------------------------------------------------------------- status


def test_status_fixture_lists_the_open_forms(api: Api) -> None:
    # GIVEN alice started a claim in conv-1 (the tool-call fixture)
    api.send(load_event("call_tool"))
    # WHEN the status fixture is sent
    response = api.send(load_event("status"))
    # THEN it returns the conversation's tier-0 status line
    assert response.status == 200
    body = response.json()
    assert body["conversation_id"] == "conv-1"
    assert len(body["lines"]) == 1
    assert body["lines"][0].startswith("[form: travel-claim] step 1/4")


def test_status_of_a_conversation_with_no_forms_is_a_404(api: Api) -> None:
    response = api.status("conv-empty")
    assert response.status == 404
    assert response.json() == {"error": "not_found", "message": "no conversation 'conv-empty'"}


# ---------------------------------------------------------------------------- OpenAPI


def test_openapi_document_lists_the_routes(api: Api) -> None:
    # WHEN the OpenAPI fixture is sent
    response = api.send(load_event("openapi"))
    # THEN it is a valid JSON OpenAPI 3.1 document with the routes, a tool call as one
    # operation per tool, each with its envelope
    assert response.status == 200
    assert response.headers["content-type"] == "application/json"
    document = json.loads(response.text)
    assert document["openapi"].startswith("3.1")
    paths = document["paths"]
    assert set(paths["/tools"]) == {"get"}
    assert set(paths["/conversations/{conversation_id}/status"]) == {"get"}
    calls = [p for p in paths if p.startswith("/conversations/{conversation_id}/tools/")]
    assert calls == [f"/conversations/{{conversation_id}}/tools/{name}" for name in TOOL_NAMES]
    assert [paths[p]["post"]["operationId"] for p in calls] == TOOL_NAMES
    envelope = document["components"]["schemas"]["FormFillCall"]
    assert envelope["required"] == ["tool_call_id"]
    assert envelope["additionalProperties"] is False
    assert document["security"] == [{"bearerAuth": []}]


def test_swagger_ui_is_served(api: Api) -> None:
    response = api.send(load_event("swagger"))
    assert response.status == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "swagger" in response.text.lower()


@pytest.mark.parametrize("path", ["/openapi.json", "/swagger", "/tools"])
def test_documents_are_protected_like_the_rest(api: Api, path: str) -> None:
    response = api.get(path, claims=None)
    assert response.status == 401
    assert response.json()["error"] == "unauthorized"
