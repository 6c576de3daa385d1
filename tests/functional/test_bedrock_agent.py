"""The form tools as a Bedrock Agents action group: recorded-shape Bedrock Agent events in
(``tests/events/bedrock_agent_*.json``), Bedrock's response out, over the in-memory App.

The handler (``formwork.aws.bedrock_agent.lambda_handler``) runs as Lambda runs it, served by the
App of ``conftest`` (``SETTINGS``: the tenant claim is ``tenant``), so a principal here is
``tenant/sub`` as it is over HTTP. The last part checks the action group's OpenAPI schema
(``formwork.aws.bedrock_schema``) against the rules Bedrock states, against the handler's own
routes, and against its checked-in copy.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openapi_spec_validator import OpenAPIV30SpecValidator

from forms.surface.tools import TOOLS
from formwork.aws import bedrock_agent, bedrock_schema
from formwork.aws.bedrock_agent import lambda_handler, tool_call_id
from formwork.aws.bedrock_schema import (
    SCHEMA_DESCRIPTION,
    SCHEMA_TITLE,
    action_group_schema,
    for_bedrock,
    main,
    schema_json,
)
from formwork.aws.local import LocalContext
from formwork.bootstrap import App
from formwork.config import Settings
from tests.functional.conftest import ALICE, Api, RecordingStore, load_event, make_service
from tests.support import app_for

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "infra" / "bedrock-agent" / "openapi.json"


def invoke(app: App, event: dict[str, Any]) -> dict[str, Any]:
    response: dict[str, Any] = lambda_handler(event, LocalContext(), app=app)
    return response


def result_of(response: dict[str, Any]) -> dict[str, Any]:
    """The JSON body of the response (and the response has Bedrock's shape)."""
    assert set(response) == {"messageVersion", "response"}
    assert response["messageVersion"] == "1.0"
    inner = response["response"]
    assert set(inner) == {"actionGroup", "apiPath", "httpMethod", "httpStatusCode", "responseBody"}
    assert list(inner["responseBody"]) == ["application/json"]
    body = inner["responseBody"]["application/json"]["body"]
    assert isinstance(body, str)
    decoded: dict[str, Any] = json.loads(body)
    return decoded


def status_of(response: dict[str, Any]) -> int:
    status: int = response["response"]["httpStatusCode"]
    return status


def event(name: str, **changes: Any) -> dict[str, Any]:
    """A recorded event, with top-level keys replaced (``sessionAttributes=...``)."""
    loaded = copy.deepcopy(load_event(f"bedrock_agent_{name}"))
    loaded.update(changes)
    return loaded


def with_properties(base: dict[str, Any], api_path: str, **properties: str) -> dict[str, Any]:
    """``base`` for another operation, with these requestBody properties (string values)."""
    changed = copy.deepcopy(base)
    changed["apiPath"] = api_path
    changed["requestBody"] = {
        "content": {
            "application/json": {
                "properties": [
                    {"name": name, "type": "string", "value": value}
                    for name, value in properties.items()
                ]
            }
        }
    }
    return changed


# ---------------------------------------------------------------------------- tool calls


def test_a_form_start_answers_in_bedrocks_shape_and_stores_the_instance(
    app: App, store: RecordingStore
) -> None:
    # GIVEN the event Bedrock sends when the agent starts the travel claim
    start = event("form_start")
    # WHEN the function handles it
    response = invoke(app, start)
    # THEN Bedrock gets its response shape back, naming the same action, with a 200
    assert response["response"]["actionGroup"] == "formwork-forms"
    assert response["response"]["apiPath"] == "/form_start"
    assert response["response"]["httpMethod"] == "POST"
    assert status_of(response) == 200
    # AND the body is the tool's result, as the HTTP API gives it
    result = result_of(response)
    assert result["ok"] is True
    assert result["summary"].startswith("Started Travel expense claim; saved 2")
    assert result["status_line"].startswith('[form: travel-claim] step 1/4 "Claimant"')
    # AND the instance is the session user's, in the session's conversation, with the values
    # the model sent as JSON text, recorded under the id derived from the invocation
    instance = store.get(result["instance"])
    assert (instance.principal, instance.conversation_id) == ("acme/alice", "chat-9")
    destination = instance.field("destination").in_force()
    assert destination is not None and destination.value == "Lisbon"
    assert destination.tool_call_id == tool_call_id(start)
    assert destination.tool_call_id.startswith("bedrock-")


def test_a_form_fill_decodes_json_text_and_booleans(app: App, store: RecordingStore) -> None:
    # GIVEN a started claim
    invoke(app, event("form_start"))
    # WHEN the agent fills three answers (values as JSON text, submit as Bedrock's "false")
    result = result_of(invoke(app, event("form_fill")))
    # THEN all three are saved and the form is not submitted
    assert result["ok"] is True
    assert result["summary"].startswith("Saved 3 (staff_id, departure_date, return_date)")
    assert "closed" not in result
    instance = store.get("fi_1")
    staff = instance.field("staff_id").in_force()
    assert staff is not None and staff.value == "AB1234"
    assert instance.state.status == "open"


def test_a_retried_invocation_replays_the_first_result_and_writes_nothing(
    app: App, store: RecordingStore
) -> None:
    # GIVEN the first form_start was applied (and its answer lost on the way back)
    first = result_of(invoke(app, event("form_start")))
    stored = store.get("fi_1")
    # WHEN Bedrock sends the same invocation again: the same turn, operation and arguments,
    # although in another order and with the prompt attributes the backend has updated since
    retry = event("form_start_retry")
    assert tool_call_id(retry) == tool_call_id(event("form_start"))
    again = result_of(invoke(app, retry))
    # THEN it is the first result, marked replayed, and nothing was applied twice: one claim,
    # as the first call left it
    assert again.pop("replayed") is True
    assert again == first
    assert [i.id for i in store.list_conversation("acme/alice", "chat-9")] == ["fi_1"]
    assert store.get("fi_1").version == stored.version
    assert len(store.get("fi_1").field("destination").revisions) == 1


def test_the_same_call_in_another_turn_is_a_new_call(app: App, store: RecordingStore) -> None:
    # GIVEN a claim filled in one turn
    invoke(app, event("form_start"))
    fill = event("form_fill")
    invoke(app, fill)
    # WHEN the agent sends the same fill in the next turn (the backend's next turn id)
    later = event(
        "form_fill", sessionAttributes={**fill["sessionAttributes"], "formwork_turn": "t3"}
    )
    # THEN it gets another id, and is answered as a call of its own (nothing to change)
    assert tool_call_id(later) != tool_call_id(fill)
    result = result_of(invoke(app, later))
    assert "replayed" not in result
    assert result["ok"] is True


def test_without_a_turn_id_the_users_words_mark_the_turn() -> None:
    # GIVEN a backend that sets no formwork_turn
    attributes = {"formwork_principal": "alice", "formwork_tenant": "acme"}
    first = event("form_start", sessionAttributes=attributes)
    # THEN the same invocation is the same call, and another user message another call
    assert tool_call_id(first) == tool_call_id(event("form_start", sessionAttributes=attributes))
    other = event("form_start", sessionAttributes=attributes, inputText="and another trip")
    assert tool_call_id(other) != tool_call_id(first)


def test_arguments_bedrock_could_not_carry_are_a_bad_request_and_store_nothing(
    app: App, store: RecordingStore
) -> None:
    # GIVEN a started claim
    invoke(app, event("form_start"))
    writes = store.writes
    # WHEN the model sends values that are not JSON text (a map as Java would print it)
    response = invoke(app, event("malformed_values"))
    # THEN it is a 200 whose result is a bad_request the model can act on
    assert status_of(response) == 200
    result = result_of(response)
    assert result["ok"] is False
    assert result["error"] == "bad_request"
    assert result["message"].startswith("values is not valid JSON text")
    assert result["hint"].startswith("send values as a JSON object as text")
    # AND nothing was written, nor recorded under the invocation's id
    assert store.writes == writes
    staff = store.get("fi_1").field("staff_id")
    assert staff.revisions == ()


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("values", '["staff_id"]', "values must be a JSON object"),
        ("decline", '"phone"', "decline must be a JSON array"),
        ("values", '{"a": 1, "a": 2}', "values is not valid JSON text"),
        ("values", '{"total": NaN}', "values is not valid JSON text"),
    ],
)
def test_json_text_of_the_wrong_kind_is_refused_by_name(
    app: App, name: str, text: str, message: str
) -> None:
    fill = with_properties(event("form_fill"), "/form_fill", form="travel-claim", **{name: text})
    result = result_of(invoke(app, fill))
    assert (result["ok"], result["error"]) == (False, "bad_request")
    assert result["message"].startswith(message)


def _sent_twice(where: str) -> dict[str, Any]:
    """The recorded form_start with its "form" property sent a second time, ``where``."""
    start = event("form_start")
    properties = start["requestBody"]["content"]["application/json"]["properties"]
    again = {"name": "form", "type": "string", "value": "purchase-request"}
    if where == "in the body":
        properties.append(again)
    elif where == "in the body, first":
        properties.insert(0, again)
    elif where == "in the parameters":
        start["parameters"] = [again]
    else:  # twice in the parameters, once in the body
        start["parameters"] = [{**again, "name": "note"}, {**again, "name": "note"}]
    return start


@pytest.mark.parametrize(
    "where",
    ["in the body", "in the body, first", "in the parameters", "twice in the parameters"],
)
def test_an_argument_sent_twice_is_refused_as_the_http_api_refuses_a_key_sent_twice(
    app: App, store: RecordingStore, where: str
) -> None:
    # GIVEN a form_start whose event names one argument twice (two values for "form")
    # WHEN the function handles it
    response = invoke(app, _sent_twice(where))
    # THEN it is a 400 duplicate_key in Bedrock's shape, naming the argument, and no form
    # was started with either value
    assert status_of(response) == 400
    result = result_of(response)
    assert (result["ok"], result["error"]) == (False, "duplicate_key")
    assert "twice" in result["message"] and result["hint"]
    assert ("'note'" if where.startswith("twice") else "'form'") in result["message"]
    assert store.writes == 0


def test_a_missing_principal_is_refused_and_the_prompt_attributes_are_not_read(
    app: App, store: RecordingStore
) -> None:
    # GIVEN a session whose attributes lack formwork_principal (the prompt attributes, which
    # the model reads in its prompt, name one)
    refused = event("no_principal")
    assert refused["promptSessionAttributes"]["formwork_principal"] == "alice"
    # WHEN the function handles it
    response = invoke(app, refused)
    # THEN it is a 401 in Bedrock's shape, as data, and nothing is written for anyone
    assert status_of(response) == 401
    assert response["response"]["apiPath"] == "/form_start"
    result = result_of(response)
    assert (result["ok"], result["error"]) == (False, "unauthorized")
    assert "formwork_principal" in result["message"]
    assert store.writes == 0


@pytest.mark.parametrize(
    "attributes",
    [
        {"formwork_principal": "alice/bob", "formwork_tenant": "acme"},
        {"formwork_principal": "alice", "formwork_tenant": "ac/me"},
        {"formwork_principal": ""},
    ],
)
def test_a_malformed_principal_is_refused(
    app: App, store: RecordingStore, attributes: dict[str, str]
) -> None:
    response = invoke(app, event("form_start", sessionAttributes=attributes))
    assert status_of(response) == 401
    assert result_of(response)["error"] == "unauthorized"
    assert store.writes == 0


@pytest.mark.parametrize(
    "attributes",
    [
        {"formwork_principal": "alice"},
        {"formwork_principal": "alice", "formwork_tenant": ""},
        {"formwork_principal": "alice", "formwork_tenant": "   "},
        {"formwork_principal": "alice", "formwork_tenant": "ac me"},
        {"formwork_principal": "alice", "tenant": "acme"},  # not the attribute's name
    ],
)
def test_a_session_without_a_usable_tenant_is_refused(
    app: App, store: RecordingStore, attributes: dict[str, str]
) -> None:
    # GIVEN a deployment that names a tenant claim (SETTINGS), and a session whose backend
    # set no usable formwork_tenant
    # WHEN the agent calls a tool in it
    response = invoke(app, event("form_start", sessionAttributes=attributes))
    # THEN it is the 401 of a missing principal, in Bedrock's shape, and nothing is written
    assert status_of(response) == 401
    result = result_of(response)
    assert (result["ok"], result["error"]) == (False, "unauthorized")
    assert "formwork_tenant" in result["message"] and result["hint"]
    assert store.writes == 0


def test_a_single_tenant_deployment_takes_a_session_without_a_tenant(
    store: RecordingStore,
) -> None:
    # GIVEN a single-tenant deployment (TENANT_CLAIM=none)
    single = app_for(make_service(store), settings=Settings.from_env({"TENANT_CLAIM": "none"}))
    # WHEN the agent calls a tool in a session that names only the user
    start = event("form_start", sessionAttributes={"formwork_principal": "alice"})
    response = invoke(single, start)
    # THEN the call is served, for the principal the HTTP API gives the same user there
    assert status_of(response) == 200
    assert store.get(result_of(response)["instance"]).principal == "alice"


def test_a_principal_among_the_models_arguments_is_an_unknown_argument(
    app: App, store: RecordingStore
) -> None:
    # GIVEN a model that names someone else in its arguments
    start = with_properties(
        event("form_start"), "/form_start", form="travel-claim", principal="acme/bob"
    )
    # THEN the tool refuses the argument as data, as it does over HTTP, and creates nothing
    result = result_of(invoke(app, start))
    assert (result["ok"], result["error"]) == (False, "bad_request")
    assert "principal" in result["message"]
    assert store.writes == 0


def test_another_principal_in_the_same_session_sees_nothing(app: App) -> None:
    # GIVEN alice's claim in session chat-9
    invoke(app, event("form_start"))
    # WHEN bob's backend session uses the same session id
    bob = {"formwork_principal": "bob", "formwork_tenant": "acme", "formwork_turn": "b1"}
    read = with_properties(
        event("form_start", sessionAttributes=bob), "/form_read", form="travel-claim"
    )
    listed = event("form_start", sessionAttributes=bob, apiPath="/form_list")
    del listed["requestBody"]
    # THEN alice's claim is not in his conversation
    assert result_of(invoke(app, read))["error"] == "unknown_form"
    assert result_of(invoke(app, listed))["summary"].endswith("0 in this conversation.")


def test_the_conversation_attribute_shares_the_conversation_with_the_http_api(app: App) -> None:
    # GIVEN the backend names its own conversation id (the one its HTTP calls use)
    attributes = {
        "formwork_principal": "alice",
        "formwork_tenant": "acme",
        "formwork_conversation": "conv-1",
    }
    invoke(app, event("form_start", sessionAttributes=attributes))
    # THEN alice's HTTP status lines for conv-1 show the claim the agent started
    status = Api(app).status("conv-1", claims=ALICE)
    assert status.status == 200
    assert status.json()["lines"][0].startswith("[form: travel-claim]")


def test_results_and_errors_are_the_http_apis() -> None:
    # GIVEN two deployments over the same forms, one called by Bedrock, one over HTTP
    bedrock, http = (
        app_for(make_service(), settings=Settings(tenant_claim="tenant")),
        Api(app_for(make_service(), settings=Settings(tenant_claim="tenant"))),
    )
    start, fill = event("form_start"), event("form_fill")
    calls: list[tuple[dict[str, Any], str, dict[str, Any]]] = [
        (
            start,
            "form_start",
            {
                "form": "travel-claim",
                "values": {"full_name": "Alice Smith", "destination": "Lisbon"},
            },
        ),
        (
            fill,
            "form_fill",
            {
                "form": "travel-claim",
                "values": {
                    "staff_id": "AB1234",
                    "departure_date": "2025-03-03",
                    "return_date": "2025-03-07",
                },
                "submit": False,
            },
        ),
        (
            with_properties(fill, "/form_read", form="travel-claim", part="outline"),
            "form_read",
            {"form": "travel-claim", "part": "outline"},
        ),
        (
            with_properties(fill, "/form_fill", form="travel-claim", values='{"mode": "boat"}'),
            "form_fill",
            {"form": "travel-claim", "values": {"mode": "boat"}},
        ),
        (
            with_properties(fill, "/form_revise", form="travel-claim", action="undo"),
            "form_revise",
            {"form": "travel-claim", "action": "undo"},
        ),
        (
            with_properties(fill, "/form_revise", form="nope", field="x", action="set", value="3"),
            "form_revise",
            {"form": "nope", "field": "x", "action": "set", "value": 3},
        ),
        (
            with_properties(fill, "/form_fill", values='{"mode": "air"}'),
            "form_fill",
            {"values": {"mode": "air"}},
        ),
    ]
    for number, (agent_event, tool, tool_input) in enumerate(calls):
        # WHEN each call is made both ways
        over_bedrock = result_of(invoke(bedrock, agent_event))
        over_http = http.call(tool, "chat-9", tool_call_id=f"call_{number}", **tool_input).json()
        # THEN the results are the same
        assert over_bedrock == over_http, tool


def test_an_unknown_operation_is_a_404_unknown_tool(app: App) -> None:
    response = invoke(app, event("form_start", apiPath="/form_delete"))
    assert status_of(response) == 404
    result = result_of(response)
    assert (result["ok"], result["error"]) == (False, "unknown_tool")
    assert "/form_fill" in result["hint"]


@pytest.mark.parametrize(
    "received",
    [
        {"version": "2.0", "routeKey": "$default"},
        {**load_event("bedrock_agent_form_start"), "messageVersion": "2.0"},
        {**load_event("bedrock_agent_form_start"), "apiPath": None},
        {**load_event("bedrock_agent_form_start"), "sessionAttributes": ["x"]},
        {**load_event("bedrock_agent_form_fill"), "parameters": [None]},
        {**load_event("bedrock_agent_form_fill"), "parameters": [{"name": "form", "value": 7}]},
        {**load_event("bedrock_agent_form_fill"), "requestBody": {"content": ["x"]}},
        {
            **load_event("bedrock_agent_form_fill"),
            "requestBody": {"content": {"application/json": {"properties": [{"name": 1}]}}},
        },
        [],
    ],
)
def test_an_event_of_another_shape_is_a_400_in_bedrocks_shape(app: App, received: Any) -> None:
    response = invoke(app, received)
    assert status_of(response) == 400
    assert result_of(response)["error"] == "bad_request"


def test_a_bug_is_a_500_internal_error_not_an_exception(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a defect on the way to the service
    def broken(event: Any) -> str:
        raise RuntimeError("boom")

    monkeypatch.setattr(bedrock_agent, "tool_call_id", broken)
    # WHEN an invocation meets it
    response = invoke(app, event("form_start"))
    # THEN Bedrock still gets its shape back: a 500 internal_error, as data
    assert status_of(response) == 500
    assert result_of(response)["error"] == "internal_error"


# ---------------------------------------------------------------------------- the schema

BEDROCK_MAX_OPERATIONS = 11
"""An action group holds at most 11 API operations (Bedrock user guide, agents-lambda)."""


def walk(node: Any) -> list[dict[str, Any]]:
    """Every object in a JSON document."""
    if isinstance(node, list):
        return [found for item in node for found in walk(item)]
    if isinstance(node, dict):
        return [node, *(found for value in node.values() for found in walk(value))]
    return []


def test_the_checked_in_schema_is_the_generated_one() -> None:
    # THEN infra/bedrock-agent/openapi.json is what `python -m formwork.aws.bedrock_schema`
    # prints now (regenerate it with --write after changing a tool)
    assert bedrock_schema.SCHEMA_PATH == SCHEMA_FILE
    assert SCHEMA_FILE.read_text() == schema_json()


def test_the_schema_describes_the_handlers_own_routes() -> None:
    # the schema registers the operations on a resolver of its own; the handler's routes,
    # registered by the same function, give the same document
    served = bedrock_agent.resolver.get_openapi_json_schema(
        title=SCHEMA_TITLE, version="1.0.0", description=SCHEMA_DESCRIPTION
    )
    assert for_bedrock(json.loads(served)) == action_group_schema()


def test_the_schema_is_valid_openapi_3_0() -> None:
    document = action_group_schema()
    assert document["openapi"] == "3.0.0"
    OpenAPIV30SpecValidator(document).validate()


def test_the_schema_follows_bedrocks_rules() -> None:
    document = action_group_schema()
    operations = [
        (path, method, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
    ]
    # THEN at most 11 operations, each with a description and a unique operationId
    assert len(operations) <= BEDROCK_MAX_OPERATIONS
    ids = [operation["operationId"] for _, _, operation in operations]
    assert len(set(ids)) == len(ids)
    for path, method, operation in operations:
        assert operation["description"].strip(), path
        assert method == "post"
        assert "200" in operation["responses"]
        # AND a request body is an object of scalars, each described
        body = operation.get("requestBody")
        if body is not None:
            schema = body["content"]["application/json"]["schema"]
            assert schema["type"] == "object"
            for name, prop in schema["properties"].items():
                assert prop["type"] in ("string", "boolean", "integer", "number"), (path, name)
                assert prop["description"].strip(), (path, name)
    # AND nothing Bedrock does not take: enum, references, unions
    for node in walk(document):
        assert not {"enum", "$ref", "anyOf", "oneOf", "allOf"} & set(node), node
    assert "components" not in document


def test_every_tool_is_an_operation_with_every_argument() -> None:
    document = action_group_schema()
    for spec in TOOLS:
        operation = document["paths"][f"/{spec.name}"]["post"]
        assert operation["operationId"] == spec.name
        assert operation["description"] == spec.description
        schema = spec.input_schema()
        if not schema.get("properties"):
            assert "requestBody" not in operation
            continue
        sent = operation["requestBody"]["content"]["application/json"]["schema"]
        assert list(sent["properties"]) == list(schema["properties"])
        assert sent.get("required", []) == schema.get("required", [])


def test_the_enum_values_and_json_examples_are_in_the_descriptions() -> None:
    revise = action_group_schema()["paths"]["/form_revise"]["post"]["requestBody"]
    properties = revise["content"]["application/json"]["schema"]["properties"]
    assert (
        "One of: set, retract, decline, undo, redo, clear_memory"
        in (properties["action"]["description"])
    )
    assert "JSON text" in properties["value"]["description"]


def test_the_module_prints_the_schema() -> None:
    written: list[str] = []
    assert main([], written.append) == 0
    assert json.loads("".join(written)) == action_group_schema()
    assert main(["--schema"], written.append) == 2  # the usage


@pytest.mark.parametrize("option", ["--check", "--write"])
def test_without_the_copy_the_module_says_it_is_not_shipped_not_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, option: str
) -> None:
    # GIVEN an installed package: no infra/bedrock-agent/ beside functions/
    missing = tmp_path / "infra" / "bedrock-agent" / "openapi.json"
    monkeypatch.setattr(bedrock_schema, "SCHEMA_PATH", missing)
    said: list[str] = []
    # WHEN the copy is checked or written
    code = main([option], said.append)
    # THEN the answer is its own exit code, saying where the copy lives, never "stale"
    assert code == bedrock_schema.NO_COPY == 3
    assert "is not here" in said[-1] and "an installed package does not ship" in said[-1]
    assert "stale" not in said[-1]
    assert not missing.parent.exists()


def test_the_module_writes_the_schema_and_checks_the_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy_path = tmp_path / "openapi.json"
    monkeypatch.setattr(bedrock_schema, "SCHEMA_PATH", copy_path)
    said: list[str] = []
    # a stale copy fails the check, naming the command that fixes it
    copy_path.write_text("{}\n")
    assert main(["--check"], said.append) == 1
    assert "python -m formwork.aws.bedrock_schema --write" in said[-1]
    # --write makes it current
    assert main(["--write"], said.append) == 0
    assert copy_path.read_text() == schema_json()
    assert main(["--check"], said.append) == 0


def test_context_attributes_become_the_callers_context_defaults() -> None:
    """formwork_<claim> session attributes are read as the token's claims would be: kept when
    they are a usable string, dropped when not, and never a reason to refuse the call."""
    settings = Settings(tenant_claim=None)
    attributes = {
        "formwork_principal": "alice",
        "formwork_locale": "en-GB",
        "formwork_zoneinfo": 7,  # not a string: left out, not refused
    }
    caller = bedrock_agent.caller_of(event("form_start", sessionAttributes=attributes), settings)
    assert dict(caller.context) == {"person.locale": "en-GB"}
    without = bedrock_agent.caller_of(
        event("form_start", sessionAttributes={"formwork_principal": "alice"}), settings
    )
    assert without.context == ()


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
_FIELDS = [
    "apiPath",
    "httpMethod",
    "parameters",
    "requestBody",
    "sessionAttributes",
    "sessionId",
    "actionGroup",
    "agent",
    "inputText",
    "messageVersion",
]


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(changes=st.dictionaries(st.sampled_from(_FIELDS), _JSON, max_size=4))
def test_any_event_bedrock_could_be_sent_is_answered_never_a_500(changes: dict[str, Any]) -> None:
    # GIVEN a recorded form_fill event with any of its fields replaced by any JSON
    event = {**load_event("bedrock_agent_form_fill"), **changes}
    # WHEN the function is invoked with it
    response = invoke(app_for(make_service()), event)
    # THEN it answers in Bedrock's shape, a 2xx or 4xx, with the API's envelope
    assert status_of(response) in {200, 400, 401, 404}
    assert isinstance(result_of(response)["ok"], bool)
