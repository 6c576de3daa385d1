"""The handler answers what its OpenAPI document says, and the document says what it answers.

Requests are generated from the document (``formwork.aws.api.openapi_json``): for every operation,
path parameters, query, body and headers that fit its schemas, then some of them broken (a
parameter or body that does not fit, a key sent twice, another method, a random path, a bad
content type or signature, no token, an oversized or base64 body). Each goes through
``lambda_handler`` as an API Gateway payload v2 event, and every answer is checked against the
document: the status is one the operation lists (or, for a path or method the document does not
have, one of the checks every request goes through), the body is JSON matching the schema listed
for that status, it is never a 5xx, and a refused request stored nothing.

The converse is example-based: every status the document lists for an operation is answered by
some request (``test_every_documented_status_is_answered``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import event as note
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from forms import FormService
from forms.app.builder import BUILDER_ARGUMENTS
from forms.app.operations import InMemoryFailureQueue
from forms.app.service import new_instance_id
from forms.surface.tools import TOOLS
from formwork.aws.api import openapi_json
from formwork.aws.http import BODY_METHODS
from formwork.config import Settings
from formwork.webhooks import (
    DELIVERY_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    SecretsUnavailable,
    StaticSecrets,
    sign,
)
from tests.functional.conftest import (
    ALICE,
    BOB,
    T0,
    Api,
    RecordingStore,
    Response,
    build_event,
    make_service,
)

DOCUMENT: dict[str, Any] = json.loads(openapi_json())
COMPONENTS: dict[str, Any] = DOCUMENT["components"]
METHODS = ("get", "put", "post", "delete", "patch", "head", "options")

FINANCE: dict[str, Any] = {"sub": "bob", "tenant": "acme", "roles": "[finance]"}
PUBLISHER: dict[str, Any] = {"sub": "cy", "tenant": "acme", "roles": "[form_publisher]"}
OUTSIDER: dict[str, Any] = {"sub": "bo", "tenant": "globex", "roles": "[form_publisher]"}
FORGETFUL: dict[str, Any] = {"sub": "dora", "tenant": "acme"}
"""A principal who turned her memory off."""
SECRET = "crm-secret-0123456789"
NOW = int(T0.timestamp())
BIG = {"item": "Laser cutter", "supplier": "Acme", "amount": "7200.00"}
UNMATCHED = {400, 401, 404, 413, 415}
"""What a method and path the document does not list can answer: the checks every request goes
through (principal, content type, size, JSON), then 404 ``route_not_found`` (``unknown_tool``
on a tool-call route: ``TOOL_ROUTE``)."""
TOOL_ROUTE = re.compile(r"/(conversations|builder/forms)/[^/]+/tools/[^/]+")
FORM_TOOLS = [tool.name for tool in TOOLS]

CONFORMANCE = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

URL_TEXT = st.characters(exclude_categories=["Cs"])
"""Characters a URL can carry: a lone surrogate has no UTF-8 form, so no request holds one."""


# ---------------------------------------------------------------------------- the document


@dataclass(frozen=True)
class Operation:
    method: str
    template: str
    pattern: re.Pattern[str]
    path_params: dict[str, dict[str, Any]]
    query: dict[str, dict[str, Any]]
    body: dict[str, Any] | None
    responses: dict[int, dict[str, Any]]

    @property
    def key(self) -> str:
        return f"{self.method} {self.template}"


def _operations() -> list[Operation]:
    found = []
    for template, item in DOCUMENT["paths"].items():
        for method in METHODS:
            op = item.get(method)
            if op is None:
                continue
            params = op.get("parameters", [])
            body = op.get("requestBody", {}).get("content", {}).get("application/json")
            found.append(
                Operation(
                    method=method.upper(),
                    template=template,
                    pattern=re.compile(re.sub(r"\\{[^}]+\\}", "[^/]+", re.escape(template))),
                    path_params={p["name"]: p["schema"] for p in params if p["in"] == "path"},
                    query={p["name"]: p["schema"] for p in params if p["in"] == "query"},
                    body=body["schema"] if body else None,
                    responses={int(s): r for s, r in op["responses"].items()},
                )
            )
    return found


OPERATIONS = _operations()
BY_KEY = {op.key: op for op in OPERATIONS}


def resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = COMPONENTS["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def validator(schema: dict[str, Any]) -> Draft202012Validator:
    """A validator for a schema of the document, its ``#/components/...`` refs resolvable."""
    return Draft202012Validator({**schema, "components": COMPONENTS})


def matching(method: str, path: str) -> Operation | None:
    """The operation a request reaches: a route without parameters before one with them
    (``POST /approvals/page-links`` before ``POST /approvals/{approval_id}``), as API Gateway
    and the resolver choose."""
    found = [op for op in OPERATIONS if op.method == method.upper() and op.pattern.fullmatch(path)]
    return min(found, key=lambda op: len(op.path_params), default=None)


def operation_of(event: dict[str, Any]) -> Operation | None:
    context = event.get("requestContext")
    http = context.get("http") if isinstance(context, dict) else None
    method = http.get("method") if isinstance(http, dict) else None
    path = event.get("rawPath")
    if isinstance(method, str) and isinstance(path, str):
        return matching(method, path)
    return None


def assert_conforms(event: dict[str, Any], response: Response, *, outage: bool = False) -> None:
    """The answer is one the document lists for the request's operation, in that shape; never
    a 5xx, unless ``outage`` (a documented 503: something below the function is down)."""
    assert outage or response.status < 500, response
    op = operation_of(event)
    media = response.headers.get("content-type", "")
    assert response.headers.get("cache-control") == "no-store", response.headers
    assert media == "application/json", (media, response)
    body = json.loads(response.text)
    if response.status >= 400:
        # the function's own refusals all have one shape (API Gateway's {"message"} is not its)
        assert isinstance(body.get("error"), str) and isinstance(body.get("message"), str), body
    if op is None:
        assert response.status in UNMATCHED, response
        if response.status == 404:
            # a tool-call route answers a name that is not one of its tools (the document
            # shows one operation per tool) as unknown_tool
            method = str(event["requestContext"]["http"]["method"]).upper()
            tool_route = method == "POST" and TOOL_ROUTE.fullmatch(str(event.get("rawPath")))
            assert body["error"] == ("unknown_tool" if tool_route else "route_not_found"), body
        return
    assert response.status in op.responses, (op.key, response)
    schema = op.responses[response.status]["content"]["application/json"]["schema"]
    errors = sorted(validator(schema).iter_errors(body), key=str)
    assert not errors, (op.key, response.status, [e.message for e in errors[:3]], body)


# ---------------------------------------------------------------------------- strategies

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=12,
)


def from_schema(schema: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Values that fit a schema of the document (the subset of JSON Schema it uses); past a
    few levels, any JSON value (the builder's rules hold rules)."""
    if depth > 4:
        return json_values
    schema = resolve(schema)
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    for combinator in ("anyOf", "oneOf"):
        if combinator in schema:
            return st.one_of([from_schema(s, depth) for s in schema[combinator]])
    kind = schema.get("type")
    if kind == "string":
        if "pattern" in schema:
            return st.from_regex(schema["pattern"], fullmatch=True)
        return st.text(max_size=min(schema.get("maxLength", 40), 40))
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        return st.integers()
    if kind == "number":
        return st.floats(allow_nan=False, allow_infinity=False)
    if kind == "null":
        return st.none()
    if kind == "array":
        return st.lists(from_schema(schema.get("items", {}), depth + 1), max_size=3)
    if kind == "object":
        properties = schema.get("properties", {})
        if properties or depth > 2:
            required = set(schema.get("required", []))
            return st.fixed_dictionaries(
                {k: from_schema(v, depth + 1) for k, v in properties.items() if k in required},
                optional={
                    k: from_schema(v, depth + 1) for k, v in properties.items() if k not in required
                },
            )
        extra = schema.get("additionalProperties", {})
        values = from_schema(extra, depth + 1) if isinstance(extra, dict) else json_values
        return st.dictionaries(st.text(max_size=10), values, max_size=3)
    return json_values  # {}: any JSON value


tool_inputs = st.fixed_dictionaries(
    {},
    optional={
        "form": st.sampled_from(["travel-claim", "purchase-request", "nope"]),
        "values": st.sampled_from(
            [{"destination": "Lisbon"}, {"staff_id": "x"}, {"nights": 3}, BIG, {}]
        ),
        "field": st.sampled_from(["destination", "mode", "nope"]),
        "action": st.sampled_from(["set", "retract", "undo", "redo"]),
        "value": json_values,
        "part": st.sampled_from(["outline", "Trip", "destination"]),
        "reason": st.text(max_size=20),
    },
)
"""Inputs that reach the tools' success paths as well as their refusals, beside the ones the
document's schema of each tool's input gives."""

PATH_VALUES: dict[str, Callable[[Operation], st.SearchStrategy[str]]] = {
    "conversation_id": lambda op: (
        st.sampled_from(["conv-1", "conv-2", "conv-3"])
        | from_schema(op.path_params["conversation_id"])
    ),
    "form_id": lambda op: (
        st.sampled_from([FORM, EMPTY_FORM, "travel-claim", "nope"])
        | from_schema(op.path_params["form_id"])
    ),
    "version": lambda op: st.sampled_from(["1", "2"]) | st.integers(-3, 10**10).map(str),
    "approval_id": lambda op: (
        st.sampled_from(
            ["fi_2:checkpoint.finance_approval:1", "fi_2%3Acheckpoint.finance_approval%3A1"]
        )
        | st.sampled_from(["fi_9:checkpoint.finance_approval:1", "fi_2:checkpoint.x:1"])
        | st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,40}", fullmatch=True)
    ),
    "source": lambda op: st.sampled_from(["crm", "billing"]) | st.from_regex(r"[a-z]{1,12}"),
    "key": lambda op: (
        st.sampled_from(
            ["person.weight_kg", "person.height_cm", "work.current_project", "person.weigth"]
        )
        | from_schema(op.path_params["key"])
    ),
}
bad_segments = st.sampled_from(
    ["a*b", "bad%20id", "-x", "caf%C3%A9", "x" * 200, "%2F", "..", "conv-1%0A"]
) | st.text(
    alphabet=st.characters(exclude_characters="/?#", exclude_categories=["Cs"]),
    min_size=1,
    max_size=20,
).map(lambda s: quote(s, safe=""))
claims = st.sampled_from(
    [
        ALICE,
        BOB,
        FINANCE,
        {"sub": "alice", "tenant": "acme", "roles": "[finance]"},
        {"sub": "carol", "tenant": "acme", "roles": "[sales,finance]"},
        PUBLISHER,
        OUTSIDER,
        None,
        {},
        {"sub": "a/b"},
        {"sub": "alice", "tenant": 7},
    ]
)
content_types = st.sampled_from(
    [
        "application/json",
        "application/json; charset=utf-8",
        "application/vnd.api+json",
        "text/plain",
        "application/json; charset=latin-1",
        "",
    ]
)
MUTATIONS = (
    "method",
    "path-param",
    "random-path",
    "query",
    "body-shape",
    "body-syntax",
    "duplicate-key",
    "content-type",
    "no-content-type",
    "claims",
    "base64",
    "oversized",
    "signature",
    "headers",
)


def duplicated(body: Any) -> str:
    """``body`` as JSON text with one key of an object in it sent twice, at any depth."""
    text = json.dumps(body)
    objects = list(re.finditer(r'\{"', text))
    if not objects:
        return '{"tool_call_id": "c1", "tool_call_id": "c2"}'
    at = objects[-1].start() + 1
    return text[:at] + '"dup": 1, "dup": 2, ' + text[at:]


builder_inputs = st.sampled_from(
    [
        {},
        {"title": "Contact us", "steps": [{"title": "Contact"}]},
        {"title": "Again", "steps": [{"title": "A"}], "replace": True},
        {"field": {"kind": "email", "label": "Email"}},
        {"field": {"kind": "integer", "label": "Age", "minimum": "6"}},
        {"title": "Details"},
        {"updates": {"required": "false"}},
        {"scope": "field", "id": "email"},
        {"target": "field", "id": "email", "when": {"field": "nope", "op": "answered"}},
        {"step": "contact"},
        {"nope": 1},
    ]
)
"""Builder inputs that reach edits that apply as well as refusals (as data)."""


def body_for(op: Operation) -> st.SearchStrategy[Any]:
    if op.body is not None:
        valid = from_schema(op.body)
        if op.template.startswith("/builder/") and TOOL_ROUTE.fullmatch(op.template):
            envelope = st.fixed_dictionaries(
                {"tool_call_id": st.sampled_from(["c1", "c2"])},
                optional={
                    "input": builder_inputs,
                    "selection": st.sampled_from([{"field": "email"}, {"step": "contact"}, {}]),
                    "cancelled": st.booleans(),
                },
            )
            return envelope | valid
        if TOOL_ROUTE.fullmatch(op.template):
            envelope = st.fixed_dictionaries(
                {"tool_call_id": st.sampled_from(["c1", "c2"])}, optional={"input": tool_inputs}
            )
            return envelope | valid
        return valid
    if op.template == "/webhooks/{source}":
        return st.fixed_dictionaries(
            {
                "form": st.sampled_from(["travel-claim", "nope"]),
                "principal": st.sampled_from(["acme/alice", "bob"]),
                "conversation_id": st.sampled_from(["conv-crm", "conv-1"]),
            },
            optional={"values": st.sampled_from([{"destination": "Lisbon"}, {"nights": 2}])},
        )
    return st.none()


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    """A request fitting one operation of the document, then up to three parts of it broken."""
    op = draw(st.sampled_from(OPERATIONS))
    method = op.method
    params = {name: draw(PATH_VALUES[name](op)) for name in op.path_params}
    drawn = {name: draw(from_schema(schema)) for name, schema in op.query.items()}
    query = {name: value for name, value in drawn.items() if value is not None}  # left out
    body: Any = draw(body_for(op)) if op.method in ("POST", "PUT") else None
    text: str | None = None if body is None else json.dumps(body)
    claim: dict[str, Any] | None = draw(claims) if draw(st.integers(0, 3)) == 0 else ALICE
    if op.template.startswith("/approvals/") and claim is ALICE:
        claim = FINANCE
    if op.template.endswith("/publish") and claim is ALICE:
        claim = PUBLISHER
    if op.template == "/webhooks/{source}":
        claim = None
    content_type: str | None = "application/json"
    headers: dict[str, str] = {}
    b64, signed = False, op.template == "/webhooks/{source}"
    path: str | None = None
    for mutation in draw(st.lists(st.sampled_from(MUTATIONS), max_size=3, unique=True)):
        if mutation == "method":
            method = draw(st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH", "post"]))
        elif mutation == "path-param" and params:
            params[draw(st.sampled_from(sorted(params)))] = draw(bad_segments)
        elif mutation == "random-path":
            path = draw(
                st.sampled_from(
                    [
                        "/",
                        "/tools/",
                        "/conversations",
                        "/approvals/",
                        "/nowhere",
                        "/builder",
                        "/builder/forms/",
                        f"/builder/forms/{FORM}/tools",
                        f"/builder/forms/{FORM}/tools/form_fill",
                        "/conversations/conv-1/tools/nope",
                        "/forms/contact-us/versions",
                    ]
                )
                | st.text(URL_TEXT, max_size=30).map(lambda s: "/" + quote(s, safe="/"))
            )
        elif mutation == "query":
            query = draw(
                st.dictionaries(
                    st.sampled_from(["format", "principal"]), st.text(max_size=10), max_size=2
                )
            )
        elif mutation == "body-shape":
            text = json.dumps(draw(json_values | body_for(op).map(_without_a_key)))
        elif mutation == "body-syntax":
            text = draw(st.sampled_from(["", "{", '{"a": NaN}', "[" * 40 + "]" * 40, "\ufeff{}"]))
        elif mutation == "duplicate-key":
            text = duplicated(body if body is not None else {"tool_call_id": "c1"})
        elif mutation == "content-type":
            content_type = draw(content_types)
        elif mutation == "no-content-type":
            content_type = None
        elif mutation == "claims":
            claim = draw(claims)
        elif mutation == "base64":
            b64 = True
        elif mutation == "oversized":
            text = json.dumps({"tool_call_id": "c1", "input": {"form": "x" * 70_000}})
        elif mutation == "signature":
            signed = False
        elif mutation == "headers":
            headers = draw(
                st.dictionaries(
                    st.sampled_from(["x-user-id", "x-principal", "accept", DELIVERY_HEADER]),
                    st.text(max_size=20),
                    max_size=2,
                )
            )
    if path is None:
        path = op.template.format(**params)
    if op.template == "/webhooks/{source}" and signed:
        raw = (text or "").encode()
        headers = {
            TIMESTAMP_HEADER: str(NOW),
            SIGNATURE_HEADER: sign(SECRET, NOW, raw),
            DELIVERY_HEADER: draw(st.sampled_from(["d-1", "d-2", "bad id"])),
            **headers,
        }
    event = build_event(
        method,
        path,
        query=query or None,
        body=text,
        base64_body=b64 and text is not None,
        claims=claim,
        headers=headers,
    )
    if content_type is None:
        event["headers"].pop("content-type", None)
    else:
        event["headers"]["content-type"] = content_type
    return event


def _without_a_key(body: Any) -> Any:
    if isinstance(body, dict) and body:
        return {k: v for k, v in list(body.items())[1:]}
    return body


# ---------------------------------------------------------------------------- the world


def seeded() -> tuple[Api, RecordingStore]:
    """Alice's travel claim in conv-1 (fi_1) and her purchase request waiting for finance in
    conv-3 (fi_2, approval ``fi_2:checkpoint.finance_approval:1``); acme's draft of
    ``contact-us`` (one email field), published as version 1, and its draft of ``empty-form``
    (a step, no field: it does not compile); alice's weight and height in memory, and dora's
    memory turned off."""
    store = RecordingStore()
    api = serving(make_service(store))
    api.call("form_start", form="travel-claim", values={"destination": "Lisbon"})
    api.call("form_start", "conv-3", form="purchase-request", values=BIG)
    api.call(
        "form_fill",
        "conv-3",
        form="purchase-request",
        values={"budget_line": "BL-2041", "confirmed": True},
    )
    for form, tool, tool_input in [
        (FORM, "create_form", {"title": "Contact us", "steps": [{"title": "Contact"}]}),
        (FORM, "add_field", {"field": {"kind": "email", "label": "Email"}}),
        (EMPTY_FORM, "create_form", {"title": "Empty", "steps": [{"title": "Only"}]}),
    ]:
        envelope = {"tool_call_id": f"seed-{tool}-{form}", "input": tool_input}
        assert api.post(f"/builder/forms/{form}/tools/{tool}", envelope).json()["ok"]
    assert api.post(f"/builder/forms/{FORM}/publish", {}, claims=PUBLISHER).status == 200
    for key, fact in [
        ("person.weight_kg", {"value": 70}),
        ("person.height_cm", {"words": "5'8\""}),
    ]:
        assert api.send(_put(f"/memory/facts/{key}", json.dumps(fact))).status == 200
    off = _put("/memory/settings", '{"enabled": false}', claims=FORGETFUL)
    assert api.send(off).status == 200
    return api, store


def serving(service: FormService) -> Api:
    """The handler serving ``service``, with the inbound secret of ``crm`` (no configured
    sources, so no webhook gets past its signature check) and a fixed clock."""
    queue = InMemoryFailureQueue()
    queue.send("m0", json.dumps({"DDBStreamBatchInfo": {"shardId": "s-1", "batchSize": 25}}))
    return Api.over(
        service,
        settings=Settings(tenant_claim="tenant", platform_tenant="acme"),
        secrets=StaticSecrets({"crm": (SECRET,)}),
        clock=lambda: NOW + 5,
        failure_queue=queue,
        sweeper=StartsNothing(),
    )


class StartsNothing:
    """A sweeper that starts nothing (a redrive's sweep is tests/unit/test_operations.py's)."""

    def start(self) -> None:
        return None


def snapshot(api: Api, store: RecordingStore) -> Any:
    """What the store, the drafts, the published documents and memory hold."""
    instances = [
        [i.model_dump(mode="json") for i in store.list_conversation(p, c)]
        for p in ("acme/alice", "acme/bob", "bob")
        for c in ("conv-1", "conv-2", "conv-3", "conv-crm")
    ]
    drafts, documents = api.app.drafts, api.app.documents
    builder = [
        (
            [d.version for d in drafts.list_drafts(tenant)],
            [len(drafts.history(tenant, d.form_id)) for d in drafts.list_drafts(tenant)],
            documents.catalog(tenant),
        )
        for tenant in ("acme", "globex", "")
    ]
    facts = api.app.facts
    memory = [
        ([r.model_dump() for r in facts.export(p)], facts.settings(p))
        for p in ("acme/alice", "acme/bob", "acme/dora", "globex/bo", "bob")
    ]
    return instances, builder, memory


# ---------------------------------------------------------------------------- the checks


def test_the_document_lists_a_schema_for_every_answer() -> None:
    # GIVEN the OpenAPI document / THEN every operation lists its answers, each with a schema
    assert {op.key for op in OPERATIONS} == {
        "GET /tools",
        *[f"POST /conversations/{{conversation_id}}/tools/{name}" for name in FORM_TOOLS],
        "GET /conversations/{conversation_id}/status",
        "GET /openapi.json",
        "POST /webhooks/{source}",
        "GET /approvals",
        "POST /approvals/{approval_id}",
        "GET /builder/tools",
        *[f"POST /builder/forms/{{form_id}}/tools/{name}" for name in BUILDER_ARGUMENTS],
        "GET /builder/forms",
        "GET /builder/forms/{form_id}",
        "POST /builder/forms/{form_id}/publish",
        "GET /forms/{form_id}/versions/{version}",
        "PUT /memory/facts/{key}",
        "GET /memory/facts",
        "GET /memory/facts/{key}",
        "POST /memory/facts/{key}/confirm",
        "DELETE /memory/facts/{key}",
        "GET /memory/export",
        "GET /memory/settings",
        "PUT /memory/settings",
        "POST /conversations/{conversation_id}/page-links",
        "POST /memory/page-links",
        "POST /builder/forms/{form_id}/page-links",
        "GET /operator/hooks/failed",
        "POST /operator/hooks/{key}/retry",
        "GET /operator/relay/failures",
        "POST /operator/relay/failures/redrive",
        "POST /operator/forms/{form_id}/migrate",
        "POST /approvals/page-links",
    }
    for op in OPERATIONS:
        for status, response in op.responses.items():
            schema = response["content"]["application/json"]["schema"]
            assert resolve(schema), (op.key, status)
            Draft202012Validator.check_schema(schema)
    # AND Powertools' own 422 (HTTPValidationError), which no route answers, is gone
    assert "HTTPValidationError" not in json.dumps(DOCUMENT)
    assert 422 not in BY_KEY["GET /tools"].responses
    assert "403" not in DOCUMENT["paths"]["/approvals/{approval_id}"]["post"]["responses"]


def test_every_operation_lists_what_the_checks_before_routing_answer() -> None:
    # GIVEN the checks every request passes before it is routed (formwork.aws.http): a
    # malformed event (400), no principal (401, but on the signed webhook), and for a method
    # whose body is checked, a body sent at all: its type (415), its size (413), its JSON (400)
    # WHEN each operation's documented statuses are read / THEN each lists all that apply,
    # a route that takes no body included (one sent anyway is checked)
    missing = {}
    for op in OPERATIONS:
        checked = {400, 401} if op.key != "POST /webhooks/{source}" else {400}
        if op.method in BODY_METHODS:
            checked |= {413, 415}
        if checked - op.responses.keys():
            missing[op.key] = sorted(checked - op.responses.keys())
    assert missing == {}


def test_a_401_may_be_api_gateways_own_body() -> None:
    # GIVEN the 401 of a route behind the JWT authorizer
    schema = BY_KEY["GET /tools"].responses[401]["content"]["application/json"]["schema"]
    check = validator(schema)
    # THEN both the authorizer's body and the function's are documented
    assert check.is_valid({"message": "Unauthorized"})
    assert check.is_valid({"error": "unauthorized", "message": "no verified token"})
    assert not check.is_valid({"error": "unauthorized"})
    assert "API Gateway's JWT authorizer" in BY_KEY["GET /tools"].responses[401]["description"]
    assert '{"message": "Unauthorized"}' in DOCUMENT["info"]["description"]


@CONFORMANCE
@given(event=requests())
def test_every_answer_is_one_the_document_lists(event: dict[str, Any]) -> None:
    # GIVEN a store with a claim under way and an approval pending
    api, store = seeded()
    before, writes = snapshot(api, store), store.writes
    # WHEN a request generated from the document (valid, or broken in places) arrives
    response = api.send(event)
    op = operation_of(event)
    note(f"{op.key if op else 'unmatched'} {response.status}")
    # THEN the answer is one the document lists, in the documented shape, never a 5xx
    assert_conforms(event, response)
    # AND a refused request stored nothing
    if response.status >= 400:
        assert store.writes == writes
        assert snapshot(api, store) == before


# ---------------------------------------------------------------------------- the converse


class Scripted(FormService):
    """The example service, except that ``decide`` answers what the test says."""

    answer: dict[str, Any]

    def decide(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return dict(self.answer)


def scripted(answer: dict[str, Any]) -> FormService:
    base = make_service()
    service = Scripted(
        base.registry,
        base.store,
        base.dispatcher,
        clock=base.clock,
        new_id=new_instance_id,
        timer=base.loop.timer,
        policy=base.policy,
    )
    service.answer = answer
    return service


FORM = "contact-us"
EMPTY_FORM = "empty-form"
APPROVAL = "/approvals/fi_2:checkpoint.finance_approval:1"
STEP = json.dumps({"tool_call_id": "c9", "input": {"title": "Details"}})
PUBLISH = f"/builder/forms/{FORM}/publish"
CANVAS_LINKS = f"/builder/forms/{FORM}/page-links"
ENVELOPE = json.dumps({"tool_call_id": "c9"})
DECISION = json.dumps({"decision": "approved"})
OVERSIZED = json.dumps({"tool_call_id": "c1", "input": {"form": "x" * 70_000}})
WEIGHT = "/memory/facts/person.weight_kg"
PAGE_LINKS = "/conversations/conv-1/page-links"
APPROVAL_LINKS = "/approvals/page-links"
APPROVAL_BODY = json.dumps({"approval_id": APPROVAL.removeprefix("/approvals/")})


OPERATOR: dict[str, Any] = {"sub": "olga", "tenant": "acme", "roles": "[operator]"}
OUTSIDER_OPERATOR: dict[str, Any] = {"sub": "gus", "tenant": "globex", "roles": "[operator]"}
FAILED_HOOKS = "/operator/hooks/failed"
RETRY = "/operator/hooks/fi_1:field.destination.filled:1/retry"
RETRY_BAD = "/operator/hooks/a*b/retry"
FAILURES = "/operator/relay/failures"
REDRIVE = "/operator/relay/failures/redrive"
REDRIVE_BAD = REDRIVE + "?limit=0"
MIGRATE_KEY = "POST /operator/forms/{form_id}/migrate"
MIGRATE = "/operator/forms/travel-claim/migrate"
MIGRATE_NONE = "/operator/forms/no-such-form/migrate"


def _get(path: str, claims: dict[str, Any] | None, limit: str | None = None) -> dict[str, Any]:
    return build_event(
        "GET", path, claims=claims, query=None if limit is None else {"limit": limit}
    )


def _bare(path: str, claims: dict[str, Any] | None) -> dict[str, Any]:
    """A POST with no body (the operator's posts take none); a query string rides along."""
    path, _, query = path.partition("?")
    limit = query.removeprefix("limit=") if query else None
    return build_event(
        "POST", path, claims=claims, query=None if limit is None else {"limit": limit}
    )


def _sent(path: str, body: str, content_type: str = "application/json") -> dict[str, Any]:
    """An operator's POST that takes no body, sent one anyway: checked as any POST's body."""
    return _post(path, body, claims=OPERATOR, headers={"content-type": content_type})


def _post(path: str, body: str, **kwargs: Any) -> dict[str, Any]:
    return build_event("POST", path, body=body, **kwargs)


def _put(path: str, body: str, **kwargs: Any) -> dict[str, Any]:
    return build_event("PUT", path, body=body, **kwargs)


def _broken(event: dict[str, Any]) -> dict[str, Any]:
    event["headers"] = None  # not an event API Gateway sends
    return event


def _unsigned_webhook(body: str, **headers: str) -> dict[str, Any]:
    return build_event("POST", "/webhooks/crm", body=body, claims=None, headers=headers)


EXAMPLES: list[tuple[str, int, Callable[[], dict[str, Any]], dict[str, Any] | None]] = [
    ("GET /tools", 200, lambda: build_event("GET", "/tools"), None),
    ("GET /tools", 400, lambda: build_event("GET", "/tools", query={"format": "gemini"}), None),
    ("GET /tools", 401, lambda: build_event("GET", "/tools", claims=None), None),
    ("GET /openapi.json", 200, lambda: build_event("GET", "/openapi.json"), None),
    ("GET /openapi.json", 400, lambda: _broken(build_event("GET", "/openapi.json")), None),
    ("GET /openapi.json", 401, lambda: build_event("GET", "/openapi.json", claims={}), None),
    *[
        ("GET /conversations/{conversation_id}/status", status, make, None)
        for status, make in [
            (200, lambda: build_event("GET", "/conversations/conv-1/status")),
            (400, lambda: build_event("GET", "/conversations/a*b/status")),
            (401, lambda: build_event("GET", "/conversations/conv-1/status", claims=None)),
            (404, lambda: build_event("GET", "/conversations/conv-9/status")),
        ]
    ],
    *[
        (f"POST /conversations/{{conversation_id}}/tools/{tool}", status, make, None)
        for tool in FORM_TOOLS
        for call in [f"/conversations/conv-1/tools/{tool}"]
        for status, make in [
            (200, lambda call=call: _post(call, ENVELOPE)),
            (400, lambda call=call: _post(call, '{"tool_call_id": "c1", "tool_call_id": "c2"}')),
            (401, lambda call=call: _post(call, ENVELOPE, claims=None)),
            (413, lambda call=call: _post(call, OVERSIZED)),
            (415, lambda call=call: _post(call, ENVELOPE, headers={"content-type": "text/plain"})),
            (422, lambda call=call: _post(call, "{}")),
        ]
    ],
    *[
        (key, status, make, None)
        for key, status, make in [
            ("GET /operator/hooks/failed", 200, lambda: _get(FAILED_HOOKS, OPERATOR)),
            ("GET /operator/hooks/failed", 400, lambda: _get(FAILED_HOOKS, OPERATOR, "0")),
            ("GET /operator/hooks/failed", 401, lambda: _get(FAILED_HOOKS, None)),
            ("GET /operator/hooks/failed", 403, lambda: _get(FAILED_HOOKS, FINANCE)),
            ("POST /operator/hooks/{key}/retry", 400, lambda: _bare(RETRY_BAD, OPERATOR)),
            ("POST /operator/hooks/{key}/retry", 401, lambda: _bare(RETRY, None)),
            ("POST /operator/hooks/{key}/retry", 403, lambda: _bare(RETRY, FINANCE)),
            ("POST /operator/hooks/{key}/retry", 404, lambda: _bare(RETRY, OPERATOR)),
            ("POST /operator/hooks/{key}/retry", 413, lambda: _sent(RETRY, OVERSIZED)),
            ("POST /operator/hooks/{key}/retry", 415, lambda: _sent(RETRY, "{}", "text/plain")),
            ("GET /operator/relay/failures", 200, lambda: _get(FAILURES, OPERATOR)),
            ("GET /operator/relay/failures", 400, lambda: _get(FAILURES, OPERATOR, "0")),
            ("GET /operator/relay/failures", 401, lambda: _get(FAILURES, None)),
            ("GET /operator/relay/failures", 403, lambda: _get(FAILURES, OUTSIDER_OPERATOR)),
            ("POST /operator/relay/failures/redrive", 200, lambda: _bare(REDRIVE, OPERATOR)),
            ("POST /operator/relay/failures/redrive", 400, lambda: _bare(REDRIVE_BAD, OPERATOR)),
            ("POST /operator/relay/failures/redrive", 401, lambda: _bare(REDRIVE, None)),
            ("POST /operator/relay/failures/redrive", 413, lambda: _sent(REDRIVE, OVERSIZED)),
            (
                "POST /operator/relay/failures/redrive",
                415,
                lambda: _sent(REDRIVE, "{}", "text/xml"),
            ),
            ("POST /operator/relay/failures/redrive", 403, lambda: _bare(REDRIVE, FINANCE)),
            (MIGRATE_KEY, 200, lambda: _post(MIGRATE, "{}", claims=OPERATOR)),
            (MIGRATE_KEY, 400, lambda: _post(MIGRATE, '{"after": "x"}', claims=OPERATOR)),
            (MIGRATE_KEY, 401, lambda: _post(MIGRATE, "{}", claims=None)),
            (MIGRATE_KEY, 403, lambda: _post(MIGRATE, "{}", claims=FINANCE)),
            (MIGRATE_KEY, 404, lambda: _post(MIGRATE_NONE, "{}", claims=OPERATOR)),
            (MIGRATE_KEY, 409, lambda: _post(MIGRATE, '{"dry_run": false}', claims=OPERATOR)),
            (MIGRATE_KEY, 413, lambda: _post(MIGRATE, OVERSIZED, claims=OPERATOR)),
            (
                MIGRATE_KEY,
                415,
                lambda: _post(
                    MIGRATE, "{}", claims=OPERATOR, headers={"content-type": "text/plain"}
                ),
            ),
            (MIGRATE_KEY, 422, lambda: _post(MIGRATE, '{"dry_run": 1}', claims=OPERATOR)),
        ]
    ],
    *[
        ("GET /approvals", status, make, None)
        for status, make in [
            (200, lambda: build_event("GET", "/approvals", claims=FINANCE)),
            (400, lambda: build_event("GET", "/approvals", query={"limit": "0"}, claims=FINANCE)),
            (401, lambda: build_event("GET", "/approvals", claims=None)),
        ]
    ],
    *[
        ("POST /approvals/{approval_id}", status, make, answer)
        for status, make, answer in [
            (200, lambda: _post(APPROVAL, DECISION, claims=FINANCE), None),
            (
                200,
                lambda: _post(APPROVAL, DECISION, claims=FINANCE),
                {"ok": False, "error": "busy", "message": "the form kept changing", "hint": "x"},
            ),
            (400, lambda: _post("/approvals/bad%20id", DECISION, claims=FINANCE), None),
            (401, lambda: _post(APPROVAL, DECISION, claims=None), None),
            (404, lambda: _post(APPROVAL, DECISION, claims=BOB), None),
            (
                409,
                lambda: _post(APPROVAL, DECISION, claims=FINANCE),
                {"ok": False, "error": "form_closed", "message": "the form is abandoned"},
            ),
            (413, lambda: _post(APPROVAL, OVERSIZED, claims=FINANCE), None),
            (
                415,
                lambda: _post(APPROVAL, DECISION, claims=FINANCE, headers={"content-type": ""}),
                None,
            ),
            (422, lambda: _post(APPROVAL, '{"decision": "maybe"}', claims=FINANCE), None),
        ]
    ],
    ("GET /builder/tools", 200, lambda: build_event("GET", "/builder/tools"), None),
    (
        "GET /builder/tools",
        400,
        lambda: build_event("GET", "/builder/tools", query={"format": "gemini"}),
        None,
    ),
    ("GET /builder/tools", 401, lambda: build_event("GET", "/builder/tools", claims=None), None),
    *[
        (f"POST /builder/forms/{{form_id}}/tools/{tool}", status, make, None)
        for tool in BUILDER_ARGUMENTS
        for build in [f"/builder/forms/{FORM}/tools/{tool}"]
        for status, make in [
            (200, lambda build=build: _post(build, STEP)),
            (400, lambda build=build: _post(build.replace(FORM, "Contact"), STEP)),
            (401, lambda build=build: _post(build, STEP, claims=None)),
            (413, lambda build=build: _post(build, OVERSIZED)),
            (415, lambda build=build: _post(build, STEP, headers={"content-type": "text/x"})),
            (422, lambda build=build: _post(build, '{"input": {}}')),
        ]
    ],
    *[
        ("GET /builder/forms", status, make, None)
        for status, make in [
            (200, lambda: build_event("GET", "/builder/forms")),
            (400, lambda: _broken(build_event("GET", "/builder/forms"))),
            (401, lambda: build_event("GET", "/builder/forms", claims=None)),
        ]
    ],
    *[
        ("GET /builder/forms/{form_id}", status, make, None)
        for status, make in [
            (200, lambda: build_event("GET", f"/builder/forms/{FORM}")),
            (400, lambda: build_event("GET", "/builder/forms/Contact")),
            (401, lambda: build_event("GET", f"/builder/forms/{FORM}", claims=None)),
            (404, lambda: build_event("GET", f"/builder/forms/{FORM}", claims=OUTSIDER)),
        ]
    ],
    *[
        ("POST /builder/forms/{form_id}/publish", status, make, None)
        for status, make in [
            (200, lambda: _post(PUBLISH, "{}", claims=PUBLISHER)),
            (400, lambda: _post("/builder/forms/a_b/publish", "{}", claims=PUBLISHER)),
            (401, lambda: _post(PUBLISH, "{}", claims=None)),
            (403, lambda: _post(PUBLISH, "{}", claims=ALICE)),
            (404, lambda: _post(PUBLISH, "{}", claims=OUTSIDER)),
            (409, lambda: _post(PUBLISH, '{"expected": 0}', claims=PUBLISHER)),
            (413, lambda: _post(PUBLISH, OVERSIZED, claims=PUBLISHER)),
            (
                415,
                lambda: _post(PUBLISH, "{}", claims=PUBLISHER, headers={"content-type": "text/x"}),
            ),
            (422, lambda: _post(f"/builder/forms/{EMPTY_FORM}/publish", "{}", claims=PUBLISHER)),
            (422, lambda: _post(PUBLISH, '{"expected": "1"}', claims=PUBLISHER)),
        ]
    ],
    *[
        ("GET /forms/{form_id}/versions/{version}", status, make, None)
        for status, make in [
            (200, lambda: build_event("GET", f"/forms/{FORM}/versions/1")),
            (400, lambda: build_event("GET", f"/forms/{FORM}/versions/0")),
            (401, lambda: build_event("GET", f"/forms/{FORM}/versions/1", claims=None)),
            (404, lambda: build_event("GET", f"/forms/{FORM}/versions/1", claims=OUTSIDER)),
        ]
    ],
    *[
        ("PUT /memory/facts/{key}", status, make, None)
        for status, make in [
            (200, lambda: _put(WEIGHT, '{"value": 71}')),
            (400, lambda: _put("/memory/facts/Weight", '{"value": 71}')),
            (401, lambda: _put(WEIGHT, '{"value": 71}', claims=None)),
            (404, lambda: _put("/memory/facts/person.weigth", '{"value": 71}')),
            (409, lambda: _put(WEIGHT, '{"value": 71}', claims=FORGETFUL)),
            (413, lambda: _put(WEIGHT, json.dumps({"words": "70 kg"}) + " " * 70_000)),
            (415, lambda: _put(WEIGHT, '{"value": 71}', headers={"content-type": "text/plain"})),
            (422, lambda: _put(WEIGHT, '{"words": "about seventy"}')),
        ]
    ],
    *[
        ("GET /memory/facts", status, make, None)
        for status, make in [
            (200, lambda: build_event("GET", "/memory/facts")),
            (400, lambda: _broken(build_event("GET", "/memory/facts"))),
            (401, lambda: build_event("GET", "/memory/facts", claims=None)),
        ]
    ],
    *[
        ("GET /memory/facts/{key}", status, make, None)
        for status, make in [
            (200, lambda: build_event("GET", WEIGHT, query={"as_of": "2025-03-10T09:00:00Z"})),
            (400, lambda: build_event("GET", WEIGHT, query={"as_of": "last week"})),
            (401, lambda: build_event("GET", WEIGHT, claims=None)),
            (404, lambda: build_event("GET", WEIGHT, claims=BOB)),
        ]
    ],
    *[
        ("POST /memory/facts/{key}/confirm", status, make, None)
        for status, make in [
            (200, lambda: _post(f"{WEIGHT}/confirm", "{}")),
            (400, lambda: _post("/memory/facts/weight/confirm", "{}")),
            (401, lambda: _post(f"{WEIGHT}/confirm", "{}", claims=None)),
            (404, lambda: _post(f"{WEIGHT}/confirm", "{}", claims=OUTSIDER)),
            (409, lambda: _post(f"{WEIGHT}/confirm", "{}", claims=FORGETFUL)),
            (413, lambda: _post(f"{WEIGHT}/confirm", OVERSIZED)),
            (415, lambda: _post(f"{WEIGHT}/confirm", "{}", headers={"content-type": "text/x"})),
            (422, lambda: _post(f"{WEIGHT}/confirm", '{"value": 70}')),
        ]
    ],
    *[
        ("DELETE /memory/facts/{key}", status, make, None)
        for status, make in [
            (200, lambda: build_event("DELETE", WEIGHT)),
            (400, lambda: build_event("DELETE", "/memory/facts/person")),
            (401, lambda: build_event("DELETE", WEIGHT, claims=None)),
            (404, lambda: build_event("DELETE", WEIGHT, claims=OUTSIDER)),
        ]
    ],
    *[
        (key, status, make, None)
        for key, path in [
            ("GET /memory/export", "/memory/export"),
            ("GET /memory/settings", "/memory/settings"),
        ]
        for status, make in [
            (200, lambda path=path: build_event("GET", path)),
            (400, lambda path=path: _broken(build_event("GET", path))),
            (401, lambda path=path: build_event("GET", path, claims=None)),
        ]
    ],
    *[
        ("PUT /memory/settings", status, make, None)
        for status, make in [
            (200, lambda: _put("/memory/settings", '{"enabled": false}')),
            (400, lambda: _put("/memory/settings", '{"enabled": true, "enabled": false}')),
            (401, lambda: _put("/memory/settings", '{"enabled": false}', claims=None)),
            (413, lambda: _put("/memory/settings", '{"enabled": false}' + " " * 70_000)),
            (
                415,
                lambda: _put(
                    "/memory/settings", '{"enabled": false}', headers={"content-type": "text/x"}
                ),
            ),
            (422, lambda: _put("/memory/settings", '{"enabled": "no"}')),
        ]
    ],
    *[
        ("POST /conversations/{conversation_id}/page-links", status, make, None)
        for status, make in [
            (200, lambda: _post(PAGE_LINKS, '{"instance_id": "fi_1"}')),
            (400, lambda: _post(PAGE_LINKS, '{"instance_id": "not an id"}')),
            (401, lambda: _post(PAGE_LINKS, '{"instance_id": "fi_1"}', claims=None)),
            (404, lambda: _post(PAGE_LINKS, '{"instance_id": "fi_1"}', claims=BOB)),
            (413, lambda: _post(PAGE_LINKS, OVERSIZED)),
            (415, lambda: _post(PAGE_LINKS, "{}", headers={"content-type": "text/x"})),
            (422, lambda: _post(PAGE_LINKS, '{"instance": "fi_1"}')),
        ]
    ],
    *[
        ("POST /builder/forms/{form_id}/page-links", status, make, None)
        for status, make in [
            (200, lambda: _post(CANVAS_LINKS, "{}")),
            (400, lambda: _post("/builder/forms/a_b/page-links", "{}")),
            (401, lambda: _post(CANVAS_LINKS, "{}", claims=None)),
            (404, lambda: _post(CANVAS_LINKS, "{}", claims=OUTSIDER)),
            (413, lambda: _post(CANVAS_LINKS, OVERSIZED)),
            (415, lambda: _post(CANVAS_LINKS, "{}", headers={"content-type": "text/x"})),
            (422, lambda: _post(CANVAS_LINKS, '{"instance_id": "fi_1"}')),
        ]
    ],
    *[
        ("POST /memory/page-links", status, make, None)
        for status, make in [
            (200, lambda: _post("/memory/page-links", "{}")),
            (400, lambda: _post("/memory/page-links", '{"a": 1, "a": 2}')),
            (401, lambda: _post("/memory/page-links", "{}", claims=None)),
            (413, lambda: _post("/memory/page-links", OVERSIZED)),
            (415, lambda: _post("/memory/page-links", "{}", headers={"content-type": "text/x"})),
            (422, lambda: _post("/memory/page-links", '{"instance_id": "fi_1"}')),
        ]
    ],
    *[
        ("POST /approvals/page-links", status, make, None)
        for status, make in [
            (200, lambda: _post(APPROVAL_LINKS, "{}", claims=FINANCE)),
            (400, lambda: _post(APPROVAL_LINKS, '{"approval_id": "not an id"}', claims=FINANCE)),
            (401, lambda: _post(APPROVAL_LINKS, "{}", claims=None)),
            (404, lambda: _post(APPROVAL_LINKS, APPROVAL_BODY, claims=OUTSIDER)),
            (413, lambda: _post(APPROVAL_LINKS, OVERSIZED, claims=FINANCE)),
            (415, lambda: _post(APPROVAL_LINKS, "{}", headers={"content-type": "text/x"})),
            (422, lambda: _post(APPROVAL_LINKS, '{"instance_id": "fi_1"}', claims=FINANCE)),
        ]
    ],
    *[
        ("POST /webhooks/{source}", status, make, None)
        for status, make in [
            (400, lambda: _broken(_unsigned_webhook("{}"))),
            (401, lambda: _unsigned_webhook('{"form": "travel-claim"}')),
            (413, lambda: _unsigned_webhook(OVERSIZED)),
            (415, lambda: _unsigned_webhook("{}", **{"content-type": "text/plain"})),
        ]
    ],
]
WEBHOOK_CONFIGURED = {200, 201, 403, 409, 422}
"""Webhook answers that need a configured source: tests/functional/test_webhooks.py has them."""
OPERATOR_ELSEWHERE = {
    ("POST /operator/hooks/{key}/retry", 200),
    ("GET /operator/relay/failures", 503),
    ("POST /operator/relay/failures/redrive", 503),
    ("POST /operator/forms/{form_id}/migrate", 202),
    ("POST /operator/forms/{form_id}/migrate", 503),
}
"""A retry needs a hook that failed for good, a 503 a deployment without the relay's queue or
Temporal, a started migration a Temporal starter:
tests/functional/test_operator_api.py has them."""
LOST_RACES = {("DELETE /memory/facts/{key}", 409)}
"""A deletion that keeps losing its compare-and-set (``busy``) needs a store that always loses:
tests/functional/test_memory_api.py has it."""


@pytest.mark.parametrize(
    ("key", "status", "make", "answer"),
    EXAMPLES,
    ids=[f"{key}-{status}-{i}" for i, (key, status, _, _) in enumerate(EXAMPLES)],
)
def test_every_documented_status_is_answered(
    key: str,
    status: int,
    make: Callable[[], dict[str, Any]],
    answer: dict[str, Any] | None,
) -> None:
    # GIVEN the seeded store (or a service whose decision answers what the example says)
    api, _ = seeded()
    served = api if answer is None else serving(scripted(answer))
    # WHEN the example request is sent
    event = make()
    response = served.send(event)
    # THEN it is the documented status, in the documented shape
    assert response.status == status, response
    assert matching(event["requestContext"]["http"]["method"], event["rawPath"]) is BY_KEY[key]
    assert_conforms(event, response)


def test_the_examples_cover_every_documented_status() -> None:
    covered = {(key, status) for key, status, _, _ in EXAMPLES}
    documented = {(op.key, status) for op in OPERATIONS for status in op.responses}
    skipped = {("POST /webhooks/{source}", s) for s in WEBHOOK_CONFIGURED}
    assert covered == (
        documented - skipped - LOST_RACES - OPERATOR_ELSEWHERE - {("POST /webhooks/{source}", 503)}
    )


def test_an_unreadable_secret_store_is_the_documented_503() -> None:
    class Down:
        def keys_for(self, source: str) -> tuple[str, ...]:
            raise SecretsUnavailable("Secrets Manager is unreachable")

    api, _ = seeded()
    event = _unsigned_webhook('{"form": "travel-claim"}')
    response = api.using(secrets=Down()).send(event)
    # (a deployment that checks its sources first refuses an unknown one with 401 instead)
    assert response.status in (401, 503), response
    assert_conforms(event, response, outage=True)
