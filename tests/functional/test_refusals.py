"""Every refusal: the right 4xx, a JSON body ``{"error", "message"}``, and nothing stored."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from formwork.aws.http import BODY_METHODS, ApiError, _check_json, parse_json_body
from formwork.aws.refusals import route_label
from formwork.config import Settings
from tests.functional.conftest import Api, RecordingStore, build_event, load_event

CALL = "/conversations/conv-1/tools/form_list"
ENVELOPE = {"tool_call_id": "call_1", "input": {}}


def assert_error(response: Any, status: int, code: str) -> None:
    assert response.status == status, response
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) >= {"error", "message"}
    assert body["error"] == code
    assert isinstance(body["message"], str) and body["message"]


@pytest.fixture(autouse=True)
def nothing_written(store: RecordingStore) -> Any:
    yield
    # THEN (every test here) no refused request reached the store
    assert store.writes == 0


# ---------------------------------------------------------------------------- 401


def test_unauthenticated_fixture_is_a_401(api: Api) -> None:
    response = api.send(load_event("unauthenticated"))
    assert_error(response, 401, "unauthorized")
    assert response.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize(
    "claims",
    [
        {},
        {"sub": ""},
        {"sub": 42},
        {"sub": ["alice"]},
        {"sub": "a/b"},
        {"sub": "alice bob"},
        {"sub": "x" * 129},
        {"sub": "alice", "tenant": "acme/evil"},
        {"sub": "alice", "tenant": ""},
        {"sub": "alice", "tenant": 7},
    ],
)
def test_missing_or_malformed_claims_are_a_401(api: Api, claims: dict[str, Any]) -> None:
    assert_error(api.get("/tools", claims=claims), 401, "unauthorized")
    assert_error(api.post(CALL, ENVELOPE, claims=claims), 401, "unauthorized")


def test_a_principal_header_is_not_a_principal(api: Api) -> None:
    # GIVEN no verified claims, but headers that name a user
    headers = {"x-user-id": "alice", "x-principal": "acme/alice"}
    # THEN the request is still unauthenticated
    assert_error(api.post(CALL, ENVELOPE, claims=None, headers=headers), 401, "unauthorized")


def test_401_comes_before_any_other_check(api: Api) -> None:
    event = build_event(
        "POST", "/nowhere", body="{", claims=None, headers={"content-type": "text/plain"}
    )
    assert_error(api.send(event), 401, "unauthorized")


# ---------------------------------------------------------------------------- 413, 415


def test_oversized_fixture_is_a_413(api: Api) -> None:
    assert_error(api.send(load_event("oversized")), 413, "payload_too_large")


def test_oversized_base64_body_is_a_413(api: Api) -> None:
    body = json.dumps({"tool_call_id": "c1", "input": {"form": "x" * 70_000}})
    assert_error(
        api.send(build_event("POST", CALL, body=body, base64_body=True)), 413, "payload_too_large"
    )


def test_bad_content_type_fixture_is_a_415(api: Api) -> None:
    assert_error(api.send(load_event("bad_content_type")), 415, "unsupported_media_type")


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "multipart/form-data; boundary=x",
        "application/xml",
        "",
        "application/json; charset=latin-1",
    ],
)
def test_non_json_content_types_are_a_415(api: Api, content_type: str) -> None:
    event = build_event(
        "POST", CALL, body=json.dumps(ENVELOPE), headers={"content-type": content_type}
    )
    assert_error(api.send(event), 415, "unsupported_media_type")


def test_missing_content_type_is_a_415(api: Api) -> None:
    event = build_event("POST", CALL, body=json.dumps(ENVELOPE))
    del event["headers"]["content-type"]
    assert_error(api.send(event), 415, "unsupported_media_type")


@pytest.mark.parametrize(
    "content_type",
    ["application/json; charset=utf-8", "Application/JSON", "application/vnd.api+json"],
)
def test_json_content_types_are_accepted(
    api: Api, store: RecordingStore, content_type: str
) -> None:
    event = build_event(
        "POST", CALL, body=json.dumps(ENVELOPE), headers={"content-type": content_type}
    )
    assert api.send(event).status == 200


# ---------------------------------------------------------------------------- 400


def test_malformed_json_fixture_is_a_400(api: Api) -> None:
    assert_error(api.send(load_event("malformed_json")), 400, "malformed_json")


@pytest.mark.parametrize(
    "body",
    [
        "",
        "   ",
        "{",
        "{'tool_call_id': 'c1'}",
        '{"tool_call_id": NaN}',
        '{"tool_call_id": "c1", "input": {"total": Infinity}}',
        '{"tool_call_id": "c1"} trailing',
        '{"tool_call_id": "\\ud800"}',
        "[" * 40 + "]" * 40,
        "[" * 100_000,
        '{"tool_call_id": "c1", "input": {"values": {"n": ' + "9" * 5000 + "}}}",
    ],
    ids=[
        "empty",
        "blank",
        "truncated",
        "single-quotes",
        "nan",
        "infinity",
        "trailing",
        "lone-surrogate",
        "too-deep",
        "very-deep",
        "huge-int",
    ],
)
def test_malformed_bodies_are_a_400(body: str, api: Api) -> None:
    # GIVEN a size limit that lets the very deep body through to the parser
    roomy = api.using(settings=Settings(tenant_claim="tenant", max_body_bytes=200_000))
    assert_error(roomy.post(CALL, body), 400, "malformed_json")


def test_invalid_utf8_is_a_400(api: Api) -> None:
    event = build_event("POST", CALL, body=b'{"tool_call_id": "\xff"}', base64_body=True)
    assert_error(api.send(event), 400, "malformed_json")


def test_invalid_base64_is_a_400(api: Api) -> None:
    event = build_event("POST", CALL, body="{}")
    event.update(body="not base64!", isBase64Encoded=True)
    assert_error(api.send(event), 400, "bad_request")


def test_base64_json_body_is_accepted(api: Api, store: RecordingStore) -> None:
    event = build_event("POST", CALL, body=json.dumps(ENVELOPE), base64_body=True)
    assert api.send(event).status == 200


@pytest.mark.parametrize(
    "path",
    [
        "/conversations/bad%20id/tools/form_list",
        "/conversations/-leading-dash/tools/form_list",
        "/conversations/" + "c" * 129 + "/tools/form_list",
        "/conversations/caf\u00e9/tools/form_list",
        "/conversations/a*b/tools/form_list",
    ],
)
def test_bad_conversation_ids_are_a_400(api: Api, path: str) -> None:
    assert_error(api.post(path, ENVELOPE), 400, "bad_request")
    status_path = path.replace("/tools/form_list", "/status")
    assert_error(api.get(status_path), 400, "bad_request")


def test_a_bad_conversation_id_is_reported_before_a_bad_envelope(api: Api) -> None:
    assert_error(api.post("/conversations/a*b/tools/form_list", {"nope": 1}), 400, "bad_request")


# ---------------------------------------------------------------------------- 404


@pytest.mark.parametrize("tool", ["form_delete", "FORM_LIST", "form_list_", "__init__"])
def test_unknown_tool_is_a_404(api: Api, tool: str) -> None:
    response = api.post(f"/conversations/conv-1/tools/{tool}", ENVELOPE)
    assert_error(response, 404, "unknown_tool")
    assert "form_fill" in response.json()["message"]


def test_unknown_tool_is_reported_before_a_bad_envelope(api: Api) -> None:
    assert_error(api.post("/conversations/conv-1/tools/nope", {"x": 1}), 404, "unknown_tool")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/"),
        ("GET", "/nowhere"),
        ("GET", "/conversations/conv-1/tools/form_list"),
        ("DELETE", "/conversations/conv-1/status"),
        ("PUT", "/tools"),
        ("GET", "/conversations/conv-1"),
        ("GET", "/conversations//status"),
    ],
)
def test_unknown_routes_are_a_404(api: Api, method: str, path: str) -> None:
    body = "{}" if method in BODY_METHODS else None  # a body no check before routing refuses
    assert_error(api.send(build_event(method, path, body=body)), 404, "route_not_found")


@pytest.mark.parametrize("method", sorted(BODY_METHODS))
def test_a_body_is_checked_before_routing_whatever_the_path(api: Api, method: str) -> None:
    # GIVEN requests of a method that carries a body, to a path no route serves
    form = build_event(method, "/tools", body="a=1", headers={"content-type": "text/plain"})
    # THEN the body is refused before the route is looked for, for PUT as for POST
    assert_error(api.send(form), 415, "unsupported_media_type")
    assert_error(api.send(build_event(method, "/tools", body='{"a": NaN}')), 400, "malformed_json")


def test_every_route_that_takes_a_body_has_it_checked_before_routing(api: Api) -> None:
    # GIVEN the OpenAPI document / THEN every method a route takes a body with is prechecked
    paths = api.get("/openapi.json").json()["paths"]
    with_body = {
        method.upper()
        for item in paths.values()
        for method, op in item.items()
        if "requestBody" in op
    }
    assert with_body == BODY_METHODS


# ---------------------------------------------------------------------------- route labels

MEMORY_LABELS = [
    ("PUT", "/memory/facts/person.weight_kg", "memory_state"),
    ("GET", "/memory/facts", "memory_list"),
    ("GET", "/memory/facts/person.weight_kg", "memory_read"),
    ("POST", "/memory/facts/person.weight_kg/confirm", "memory_confirm"),
    ("DELETE", "/memory/facts/person.weight_kg", "memory_delete"),
    ("GET", "/memory/export", "memory_export"),
    ("GET", "/memory/settings", "memory_settings_get"),
    ("PUT", "/memory/settings", "memory_settings_put"),
]


@pytest.mark.parametrize(("method", "path", "label"), MEMORY_LABELS)
def test_each_memory_route_has_its_own_label(method: str, path: str, label: str) -> None:
    assert route_label(build_event(method, path)) == label


def test_every_documented_route_has_a_label_of_its_own(api: Api) -> None:
    # GIVEN every route of the OpenAPI document, its path parameters filled in (the document
    # shows a tool-call route as one operation per tool: they are one route)
    paths = api.get("/openapi.json").json()["paths"]
    labels = {
        f"{method.upper()} {route}": route_label(
            build_event(method.upper(), re.sub(r"\{[^}]+\}", "x-1", route))
        )
        for template, item in paths.items()
        for route in [re.sub(r"/tools/[a-z_]+$", "/tools/{tool_name}", template)]
        for method in item
    }
    # THEN each is labelled (a metric dimension), and no two routes share a label
    assert "unmatched" not in labels.values(), labels
    assert len(set(labels.values())) == len(labels)
    assert route_label(build_event("PATCH", "/memory/facts/person.weight_kg")) == "unmatched"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PUT", '/memory/facts/a"b'),
        ("GET", '/memory/facts/a"b'),
        ("POST", '/memory/facts/a"b/confirm'),
        ("DELETE", "/memory/facts/a\\b"),
        ("GET", "/memory/facts/a\x01b"),
    ],
)
def test_a_memory_key_no_route_pattern_takes_is_a_400_not_a_404(
    api: Api, method: str, path: str
) -> None:
    body = "{}" if method in BODY_METHODS else None
    assert_error(api.send(build_event(method, path, body=body)), 400, "bad_request")


# ---------------------------------------------------------------------------- 422


@pytest.mark.parametrize(
    "envelope",
    [
        {},
        {"input": {}},
        {"tool_call_id": ""},
        {"tool_call_id": None},
        {"tool_call_id": 7},
        {"tool_call_id": "has space"},
        {"tool_call_id": "trailing\n"},
        {"tool_call_id": "c" * 129},
        {"tool_call_id": "c1", "input": []},
        {"tool_call_id": "c1", "input": "form_list"},
        {"tool_call_id": "c1", "extra": True},
        {"tool_call_id": "c1", "tool": "form_fill"},
        [],
        "call_1",
        7,
        None,
    ],
)
def test_envelope_validation_is_a_422(api: Api, envelope: Any) -> None:
    response = api.post(CALL, json.dumps(envelope))
    assert_error(response, 422, "invalid_request")


def test_422_says_which_field(api: Api) -> None:
    response = api.post(CALL, {"input": {}})
    assert "tool_call_id" in response.json()["message"]


# ---------------------------------------------------------------------------- duplicate keys

APPROVAL = "/approvals/fi_1:checkpoint.finance_approval:1"
FINANCE = {"sub": "bob", "tenant": "acme", "roles": "[finance]"}


@pytest.mark.parametrize(
    "body",
    [
        '{"tool_call_id": "c1", "tool_call_id": "c2"}',
        '{"tool_call_id": "c1", "input": {}, "input": {"form": "travel-claim"}}',
        '{"tool_call_id": "c1", "input": {"form": "travel-claim", "form": "pi-intake"}}',
        '{"tool_call_id": "c1", "input": {"values": {"total": "1.00", "total": "900.00"}}}',
        '{"tool_call_id": "c1", "input": {"values": {"legs": [{"to": "A", "to": "B"}]}}}',
        '{"tool_call_id": "c1", "user_id": "a", "user_id": "b"}',
        '{"tool_call_id": "c1", "a": 1, "\\u0061": 2}',
    ],
    ids=["top", "input", "tool-argument", "value", "inside-array", "ignored-key", "escaped"],
)
def test_a_key_twice_in_one_object_is_a_400_at_any_depth(api: Api, body: str) -> None:
    # GIVEN a body in which one object names a key twice (last-wins parsing would hide it)
    response = api.post("/conversations/conv-1/tools/form_start", body)
    # THEN it is refused before anything reads it
    assert_error(response, 400, "duplicate_key")
    assert "twice" in response.json()["message"]


def test_a_key_twice_in_a_base64_body_is_a_400(api: Api) -> None:
    body = '{"tool_call_id": "c1", "input": {"form": "x", "form": "y"}}'
    event = build_event("POST", CALL, body=body, base64_body=True)
    assert_error(api.send(event), 400, "duplicate_key")


def test_a_key_twice_in_an_approval_decision_is_a_400(api: Api) -> None:
    # GIVEN a decision that says both things at once
    body = '{"decision": "rejected", "decision": "approved"}'
    response = api.post(APPROVAL, body, claims=FINANCE)
    # THEN neither is taken
    assert_error(response, 400, "duplicate_key")


def test_the_same_key_in_different_objects_is_fine(api: Api, store: RecordingStore) -> None:
    body = {"tool_call_id": "c1", "input": {"form": "travel-claim", "values": {"form": "x"}}}
    assert api.post(CALL, body).status == 200


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": {"x": 1}, "b": {"x": 2}}', {"a": {"x": 1}, "b": {"x": 2}}),
        ('[{"a": 1}, {"a": 2}]', [{"a": 1}, {"a": 2}]),
        ('"text"', "text"),
    ],
)
def test_parse_json_body_returns_the_value(text: str, value: Any) -> None:
    assert parse_json_body(text) == value


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ('{"a": 1, "a": 1}', "duplicate_key"),
        ('[[{"deep": {"k": 1, "k": 2}}]]', "duplicate_key"),
        ('{"a": NaN}', "malformed_json"),
        ("", "malformed_json"),
    ],
)
def test_parse_json_body_refuses_what_precheck_refuses(text: str, code: str) -> None:
    # (the webhook route's own precheck parses its body with the same function)
    for parse in (parse_json_body, _check_json):
        with pytest.raises(ApiError) as raised:
            parse(text)
        assert (raised.value.status, raised.value.code) == (400, code)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/tools"),
        ("GET", "/builder/tools"),
        ("GET", "/conversations/conv-1/status"),
        ("GET", "/memory/facts"),
        ("POST", "/conversations/conv-1/tools/form_list"),
    ],
)
def test_a_null_query_value_is_a_400_not_a_500(api: Api, method: str, path: str) -> None:
    """API Gateway never sends one; a hand-made event that does is refused before routing."""
    event = build_event(method, path, body="{}" if method == "POST" else None)
    event["queryStringParameters"] = {"format": None}
    response = api.send(event)
    assert response.status == 400
    assert response.json()["error"] == "bad_request"


def test_an_unknown_strict_format_names_the_routes_own_choices(api: Api) -> None:
    forms_tools = api.get("/tools", query={"format": "nope"})
    builder_tools = api.get("/builder/tools", query={"format": "nope"})
    assert forms_tools.status == builder_tools.status == 400
    assert "openai-strict" in forms_tools.json()["message"]
    assert "openai-strict" not in builder_tools.json()["message"]
    assert "anthropic" in builder_tools.json()["message"]


def test_every_template_route_has_a_label_of_its_own() -> None:
    # GIVEN every route the template declares (the page routes too: they are not in the
    # OpenAPI document), its path parameters filled in
    from formwork.infra.local.dynamodb import load_template
    from formwork.infra.local.gateway import routes_from_template

    labels = {
        route.key: route_label(build_event(route.method, re.sub(r"\{[^}]+\}", "x-1", route.path)))
        for route in routes_from_template(load_template())
        if route.path != "$default"
    }
    # THEN each is labelled (a metric dimension), and no two routes share a label
    assert "unmatched" not in labels.values(), [k for k, v in labels.items() if v == "unmatched"]
    assert len(set(labels.values())) == len(labels)
