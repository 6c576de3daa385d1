"""Property-based fuzz over the handler: no input produces a 500, every answer is JSON, and a
refused request never changes what is stored."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import event as note
from hypothesis import strategies as st

from forms.surface.tools import TOOLS_BY_NAME
from tests.functional.conftest import (
    ALICE,
    BOB,
    Api,
    RecordingStore,
    build_event,
    make_service,
)
from tests.support import TRAVEL_ANSWERS

ALLOWED = {200, 202, 400, 401, 403, 404, 405, 406, 409, 413, 415, 422}
"""Every status a route documents: 202 an MCP notification, 403 publishing without the role,
405 an MCP endpoint's GET or DELETE, 406 an MCP request that accepts no JSON, 409 memory off or
busy; never 500."""
FUZZ = settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=25,
)
segments = st.sampled_from(
    [
        "conv-1",
        "conv-2",
        "form_list",
        "form_fill",
        "form_start",
        "tools",
        "status",
        "",
        "..",
        "%2F",
        "a*b",
        "conv 1",
        "caf\u00e9",
        "x" * 200,
        "-x",
        "conv-1\n",
    ]
) | st.text(max_size=20).filter(lambda s: "/" not in s)
paths = st.one_of(
    st.sampled_from(["/tools", "/openapi.json", "/swagger", "/", "", "/conversations"]),
    st.builds("/conversations/{}/tools/{}".format, segments, segments),
    st.builds("/conversations/conv-1/tools/{}".format, st.sampled_from(sorted(TOOLS_BY_NAME))),
    st.builds("/conversations/{}/status".format, segments),
    st.builds("/conversations/{}/mcp".format, segments),
    st.sampled_from(
        [
            "/memory/facts",
            "/memory/export",
            "/memory/settings",
            "/builder/tools",
            "/builder/forms",
        ]
    ),
    st.builds("/memory/facts/{}".format, segments | st.sampled_from(["person.weight_kg"])),
    st.builds("/memory/facts/{}/confirm".format, segments),
    st.builds("/builder/forms/{}".format, segments),
    st.builds("/builder/forms/{}/{}".format, segments, st.sampled_from(["publish", "mcp"])),
    st.builds("/builder/forms/{}/tools/{}".format, segments, segments),
    st.builds("/forms/{}/versions/{}".format, segments, segments),
    st.builds("/approvals/{}".format, segments),
    st.builds("/webhooks/{}".format, segments),
    st.text(max_size=60),
)
methods = st.sampled_from(["GET", "POST", "POST", "post", "PUT", "DELETE", "OPTIONS"]) | st.text(
    max_size=8
)
ids = st.sampled_from(["call_1", "toolu_01A", "c" * 128, "c" * 129, "", "a b", "x\n"]) | st.text(
    max_size=20
)
envelopes = st.fixed_dictionaries(
    {},
    optional={
        "tool_call_id": ids | json_values,
        "input": json_values,
        "principal": st.text(max_size=10),
        "user_id": st.text(max_size=10),
        "extra": json_values,
    },
)
bodies = st.one_of(
    st.none(),
    st.text(max_size=200),
    json_values.map(json.dumps),
    envelopes.map(json.dumps),
    st.integers(1, 40_000).map(lambda n: "[" * n + "]" * n),
    st.integers(1, 40_000).map(lambda n: '{"a":' * n + "1" + "}" * n),
    st.just("x" * 70_000),
    st.just(json.dumps({"tool_call_id": "c", "input": {"form": "x" * 70_000}})),
    st.sampled_from(['{"tool_call_id": "\\ud800"}', '{"a": NaN}', "\ufeff{}", "\x00"]),
    st.sampled_from(
        [
            '{"value": 70}',
            '{"value": "x", "correction": true, "valid_from": "2020-01-01"}',
            '{"words": "5\'8\\""}',
            '{"enabled": false}',
            '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}',
            '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "form_list"}}',
            '[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]',
        ]
    ),
)
content_types = st.sampled_from(
    [
        None,
        "application/json",
        "Application/JSON; charset=UTF-8",
        "text/plain",
        "",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/json;;",
    ]
) | st.text(max_size=30)
claims = st.one_of(
    st.none(),
    st.just(ALICE),
    st.just(BOB),
    st.fixed_dictionaries({"sub": st.text(max_size=140), "tenant": st.text(max_size=70)}),
    st.dictionaries(st.sampled_from(["sub", "tenant", "aud", "iss"]), json_values, max_size=4),
)
headers = st.dictionaries(
    st.sampled_from(["x-user-id", "authorization", "Content-Type", "accept", "x-principal"])
    | st.text(max_size=10),
    st.text(max_size=30),
    max_size=4,
)
queries = st.none() | st.dictionaries(
    st.sampled_from(["format", "principal", "user_id"]) | st.text(max_size=8),
    st.sampled_from(["openai", "anthropic", "bedrock", "mcp", "generic", "OPENAI", ""])
    | st.text(max_size=10),
    max_size=3,
)
breakage = st.lists(
    st.sampled_from(
        [
            "drop-headers",
            "drop-requestContext",
            "drop-http",
            "drop-rawPath",
            "null-headers",
            "list-headers",
            "int-body",
            "int-method",
            "drop-query",
            "null-query-value",
            "int-header",
            "null-claims",
            "list-claims",
            "string-authorizer",
            "b64-flag",
        ]
    ),
    min_size=1,
    max_size=2,
)


def seeded() -> tuple[Api, RecordingStore]:
    store = RecordingStore()
    return Api.over(make_service(store)), store


def snapshot(store: RecordingStore) -> Any:
    return [
        [i.model_dump(mode="json") for i in store.list_conversation(p, c)]
        for p in ("acme/alice", "acme/bob", "alice")
        for c in ("conv-1", "conv-2")
    ]


def assert_well_formed(response: Any, path: str = "") -> None:
    assert response.status != 500, response
    assert response.status in ALLOWED, response
    if response.status == 200 and response.headers["content-type"].startswith("text/html"):
        return
    body = json.loads(response.text)
    if response.status >= 400 and isinstance(body.get("error"), dict):
        # the MCP route, past the API's own refusals, answers as JSON-RPC (docs/http-api.md)
        assert body["jsonrpc"] == "2.0" and "id" in body, body
        assert isinstance(body["error"]["code"], int), body
        assert isinstance(body["error"]["message"], str), body
        assert path.endswith("/mcp"), (path, body)
    elif response.status >= 400:
        assert isinstance(body["error"], str) and isinstance(body["message"], str)
    elif isinstance(body, dict) and "ok" in body:
        # AND a tool call never hit the engine's own catch-all either
        assert body.get("error") != "internal_error", body


def break_event(event: dict[str, Any], how: list[str]) -> dict[str, Any]:
    event = copy.deepcopy(event)
    context = event.get("requestContext", {})
    for kind in how:
        if kind == "drop-headers":
            event.pop("headers", None)
        elif kind == "drop-requestContext":
            event.pop("requestContext", None)
        elif kind == "drop-http":
            context.pop("http", None)
        elif kind == "drop-rawPath":
            event.pop("rawPath", None)
        elif kind == "null-headers":
            event["headers"] = None
        elif kind == "list-headers":
            event["headers"] = [["content-type", "application/json"]]
        elif kind == "int-body":
            event["body"] = 12
        elif kind == "int-method" and isinstance(context.get("http"), dict):
            context["http"]["method"] = 7
        elif kind == "drop-query":
            event["queryStringParameters"] = ["format"]
        elif kind == "null-query-value":
            event["queryStringParameters"] = {"format": None}
        elif kind == "int-header" and isinstance(event.get("headers"), dict):
            event["headers"]["content-length"] = 12
        elif kind == "null-claims" and isinstance(context.get("authorizer"), dict):
            context["authorizer"]["jwt"]["claims"] = None
        elif kind == "list-claims" and isinstance(context.get("authorizer"), dict):
            context["authorizer"]["jwt"]["claims"] = [["sub", "alice"]]
        elif kind == "string-authorizer":
            context["authorizer"] = "alice"
        elif kind == "b64-flag":
            event["isBase64Encoded"] = True
    return event


tool_inputs = st.fixed_dictionaries(
    {},
    optional={
        "form": st.sampled_from(["travel-claim", "Travel Claim", "pi-intake", "nope", ""])
        | st.text(max_size=10),
        "instance": st.sampled_from(["fi_1", "fi_2", "fi_1\n", ""]) | st.text(max_size=10),
        "values": st.dictionaries(
            st.sampled_from(sorted(TRAVEL_ANSWERS)), st.sampled_from(list(TRAVEL_ANSWERS.values()))
        )
        | st.dictionaries(
            st.sampled_from(sorted(TRAVEL_ANSWERS)) | st.text(max_size=12),
            json_values,
            max_size=5,
        )
        | json_values,
        "field": st.sampled_from(sorted(TRAVEL_ANSWERS)) | st.text(max_size=12),
        "action": st.sampled_from(["set", "retract", "decline", "undo", "redo", "x"]),
        "value": json_values,
        "part": st.sampled_from(["outline", "Trip", "total", ""]) | st.text(max_size=12),
        "reason": st.text(max_size=40),
    },
)


MUTATIONS = (
    "method",
    "path",
    "body",
    "base64",
    "content-type",
    "claims",
    "headers",
    "query",
    "structure",
)
ROUTES = {
    "tools": ("GET", "/tools"),
    "call": ("POST", "/conversations/conv-1/tools/{tool}"),
    "status": ("GET", "/conversations/conv-1/status"),
    "openapi": ("GET", "/openapi.json"),
    "swagger": ("GET", "/swagger"),
}


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    """A valid request to a random route, then up to three parts of it replaced by anything."""
    method, path = ROUTES[draw(st.sampled_from(sorted(ROUTES)))]
    path = path.format(tool=draw(st.sampled_from(sorted(TOOLS_BY_NAME))))
    body: str | None = None
    if method == "POST":
        envelope = {"tool_call_id": draw(st.sampled_from(["c1", "c2"])), "input": draw(tool_inputs)}
        body = json.dumps(envelope)
    content_type: str | None = "application/json"
    claim: dict[str, Any] | None = draw(st.sampled_from([ALICE, BOB]))
    query: dict[str, str] | None = draw(st.none() | st.just({"format": "openai"}))
    extra_headers: dict[str, str] = {}
    b64, broken = False, []
    for mutation in draw(st.lists(st.sampled_from(MUTATIONS), max_size=3, unique=True)):
        if mutation == "method":
            method = draw(methods)
        elif mutation == "path":
            path = draw(paths)
        elif mutation == "body":
            body = draw(bodies)
        elif mutation == "base64":
            b64 = True
        elif mutation == "content-type":
            content_type = draw(content_types)
        elif mutation == "claims":
            claim = draw(claims)
        elif mutation == "headers":
            extra_headers = draw(headers)
        elif mutation == "query":
            query = draw(queries)
        else:
            broken = draw(breakage)
    request = build_event(
        method, path, body=body, base64_body=b64, claims=claim, headers=extra_headers, query=query
    )
    if content_type is None:
        request["headers"].pop("content-type", None)
    else:
        request["headers"]["content-type"] = content_type
    return break_event(request, broken)


@FUZZ
@given(request=requests())
def test_fuzzed_requests_never_fail_and_refusals_write_nothing(request: dict[str, Any]) -> None:
    # GIVEN a store holding alice's claim in conv-1
    api, store = seeded()
    api.call("form_start", form="travel-claim", values={"destination": "Lisbon"})
    before, writes = snapshot(store), store.writes
    # WHEN any request at all arrives
    response = api.send(request)
    # THEN the answer is a JSON 2xx/4xx, never a 500
    note(f"status {response.status}")
    assert_well_formed(response, str(request.get("rawPath", "")))
    # AND a refused request changed nothing that is stored
    if response.status >= 400:
        assert store.writes == writes
        assert snapshot(store) == before


@FUZZ
@given(
    calls=st.lists(
        st.tuples(
            st.sampled_from(sorted(TOOLS_BY_NAME)), st.sampled_from(["c1", "c2", "c3"]), tool_inputs
        ),
        min_size=1,
        max_size=6,
    )
)
def test_fuzzed_tool_calls_are_answered_as_data(
    calls: list[tuple[str, str, dict[str, Any]]],
) -> None:
    # GIVEN a conversation with a travel claim under way
    api, _ = seeded()
    api.call("form_start", form="travel-claim", values={"destination": "Lisbon"})
    # WHEN the model sends any sequence of well-enveloped calls with any input
    for tool, call_id, tool_input in calls:
        response = api.post(
            f"/conversations/conv-1/tools/{tool}",
            {"tool_call_id": call_id, "input": tool_input},
        )
        # THEN each is a 200 whose result leads with ok, never the engine's catch-all
        assert_well_formed(response)
        assert response.status == 200, response
        note(f"{tool} ok={response.json()['ok']}")
        assert isinstance(response.json()["ok"], bool)


def test_base64_flag_on_plain_text_is_a_400_not_a_500() -> None:
    api, store = seeded()
    event = build_event("POST", "/conversations/conv-1/tools/form_list", body="{}")
    event["isBase64Encoded"] = True
    response = api.send(event)
    assert response.status == 400
    assert store.writes == 0
