"""The local gateway speaks API Gateway's HTTP API: events, the dev authorizer, responses.

A stand-in handler records the events it gets, so these tests pin what the gateway sends and
how it answers without the real function. Requests go over a real loopback socket
(``http.client``, so the headers are exactly the ones written here).
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import re
import socket
import struct
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from formwork.aws.routing import roles_from_claims
from formwork.infra.local.dynamodb import load_template
from formwork.infra.local.gateway import (
    DEV_ROLES_CLAIM,
    LocalGateway,
    NonLoopbackBind,
    Route,
    check_loopback,
    dev_claims,
    dev_token,
    routes_from_template,
)
from formwork.infra.local.runtime import (
    FunctionConfig,
    FunctionError,
    ProcessFunction,
    functions_from_template,
)

ALICE = {"Authorization": "Bearer dev:alice"}
TEMPLATE_ROUTES = routes_from_template(load_template())


class Recorder:
    """A stand-in Lambda handler: keeps each event and context, answers with ``reply``."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.contexts: list[Any] = []
        self.reply: Any = {"statusCode": 200, "headers": {"content-type": "application/json"}}
        self.reply["body"] = json.dumps({"ok": True})

    def __call__(self, event: dict[str, Any], context: Any) -> Any:
        self.events.append(event)
        self.contexts.append(context)
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


def echo_pid(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """A handler for ``ProcessFunction``: which process served it, with what environment."""
    body = {"pid": os.getpid(), "table": os.environ.get("TABLE_NAME")}
    return {"statusCode": 200, "body": json.dumps(body)}


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def gateway(recorder: Recorder) -> Iterator[LocalGateway]:
    with LocalGateway(recorder, port=0) as running:
        yield running


def send(
    gateway: LocalGateway,
    method: str,
    target: str,
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", gateway.port, timeout=10)
    try:
        connection.request(method, target, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def concrete(path: str) -> str:
    """A request path for a route: each ``{name}`` becomes ``name-1``."""
    return re.sub(r"\{(\w+)\+?\}", lambda m: f"{m[1]}-1", path)


# ------------------------------------------------------------------------------ routes


def test_routes_come_from_the_template() -> None:
    # GIVEN template.yaml's HttpApi events
    # WHEN the gateway reads its routes
    keys = {route.key for route in TEMPLATE_ROUTES}
    # THEN every route of the API contract is there, each bound to the tools function
    assert keys >= {
        "GET /tools",
        "POST /conversations/{conversation_id}/tools/{tool_name}",
        "GET /conversations/{conversation_id}/status",
        "GET /openapi.json",
        "GET /swagger",
        "POST /webhooks/{source}",
        "POST /approvals/{approval_id}",
    }
    assert {route.function for route in TEMPLATE_ROUTES} == {"ToolsFunction"}


@pytest.mark.parametrize("route", TEMPLATE_ROUTES, ids=lambda r: r.key)
def test_each_route_gets_the_event_api_gateway_sends(
    gateway: LocalGateway, recorder: Recorder, route: Route
) -> None:
    # GIVEN a request on the route, with a dev token
    path = concrete(route.path)
    body = b'{"tool_call_id": "c1"}' if route.method == "POST" else None
    headers = {**ALICE, "User-Agent": "tests/1.0", "X-Custom": "yes"}
    if body:
        headers["Content-Type"] = "application/json"
    # WHEN it goes through the gateway
    status, _, _ = send(gateway, route.method, path, headers, body)
    # THEN the handler got one payload-format-2.0 event for that route
    assert status == 200
    (event,) = recorder.events
    assert event["version"] == "2.0"
    assert event["routeKey"] == route.key
    assert event["rawPath"] == path
    assert event["rawQueryString"] == ""
    assert "queryStringParameters" not in event
    params = re.findall(r"\{(\w+)\}", route.path)
    if params:
        assert event["pathParameters"] == {name: f"{name}-1" for name in params}
    else:
        assert "pathParameters" not in event
    assert event["headers"]["user-agent"] == "tests/1.0"
    assert event["headers"]["x-custom"] == "yes"
    assert event["headers"]["authorization"] == "Bearer dev:alice"
    assert all(name == name.lower() for name in event["headers"])
    context = event["requestContext"]
    assert context["http"] == {
        "method": route.method,
        "path": path,
        "protocol": "HTTP/1.1",
        "sourceIp": "127.0.0.1",
        "userAgent": "tests/1.0",
    }
    assert context["routeKey"] == route.key
    assert context["stage"] == "$default"
    assert context["requestId"]
    assert re.fullmatch(r"\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d \+0000", context["time"])
    assert isinstance(context["timeEpoch"], int)
    if route.authorized:
        assert context["authorizer"]["jwt"]["claims"]["sub"] == "alice"
        assert "scopes" in context["authorizer"]["jwt"]
    else:  # Auth: NONE (webhooks): no authorizer ran, so the event carries no claims
        assert "authorizer" not in context
    if body:
        assert event["body"] == body.decode()
    assert event["isBase64Encoded"] is False


def test_query_string_cookies_and_repeated_headers(
    gateway: LocalGateway, recorder: Recorder
) -> None:
    # GIVEN a request with a repeated query parameter, an empty one, and cookies
    target = "/tools?format=openai&tag=a&tag=b&empty="
    # WHEN it goes through the gateway
    send(gateway, "GET", target, {**ALICE, "Cookie": "a=1; b=2"})
    # THEN the event carries them the way API Gateway does: raw string, joined values, cookies
    (event,) = recorder.events
    assert event["rawPath"] == "/tools"
    assert event["rawQueryString"] == "format=openai&tag=a&tag=b&empty="
    assert event["queryStringParameters"] == {"format": "openai", "tag": "a,b", "empty": ""}
    assert event["cookies"] == ["a=1", "b=2"]
    assert "cookie" not in event["headers"]


def test_path_parameters_are_decoded_and_the_raw_path_is_not(
    gateway: LocalGateway, recorder: Recorder
) -> None:
    # WHEN a path id carries a percent-encoded character
    send(gateway, "GET", "/conversations/conv%20one/status", ALICE)
    # THEN rawPath keeps what was sent and the path parameter is decoded
    (event,) = recorder.events
    assert event["rawPath"] == "/conversations/conv%20one/status"
    assert event["pathParameters"] == {"conversation_id": "conv one"}


def test_a_body_that_is_not_utf8_arrives_base64(gateway: LocalGateway, recorder: Recorder) -> None:
    # GIVEN bytes that are not UTF-8
    raw = bytes([0xFF, 0x00, 0xFE, 0x80])
    # WHEN they are posted
    send(gateway, "POST", "/conversations/c/tools/form_fill", ALICE, raw)
    # THEN the event's body is their base64, flagged as such
    (event,) = recorder.events
    assert event["isBase64Encoded"] is True
    assert base64.b64decode(event["body"]) == raw


def test_a_utf8_body_arrives_as_text(gateway: LocalGateway, recorder: Recorder) -> None:
    text = '{"input": {"values": {"destination": "São Paulo"}}}'
    send(gateway, "POST", "/conversations/c/tools/form_fill", ALICE, text.encode())
    (event,) = recorder.events
    assert event["isBase64Encoded"] is False
    assert event["body"] == text


# ------------------------------------------------------------------------------ authorizer


@pytest.mark.parametrize(
    ("token", "claims"),
    [
        # a token that names no tenant is in the local tenant: every token names one
        ("Bearer dev:alice", {"sub": "alice", "tenant": "local"}),
        ("bearer dev:alice", {"sub": "alice", "tenant": "local"}),
        ("dev:alice", {"sub": "alice", "tenant": "local"}),
        ("Bearer dev:acme:alice", {"sub": "alice", "tenant": "acme"}),
        ("Bearer dev:bob@example.com", {"sub": "bob@example.com", "tenant": "local"}),
        ("Bearer dev:bob;roles=finance", {"sub": "bob", "tenant": "local", "roles": "[finance]"}),
        (
            "Bearer dev:acme:bob;roles=finance,audit",
            {"sub": "bob", "tenant": "acme", "roles": "[finance audit]"},
        ),
    ],
)
def test_dev_tokens_become_jwt_claims(
    gateway: LocalGateway, recorder: Recorder, token: str, claims: dict[str, str]
) -> None:
    # WHEN a request carries a dev token
    status, _, _ = send(gateway, "GET", "/tools", {"Authorization": token})
    # THEN the handler sees the claims a verified JWT would give, as strings
    assert status == 200
    got = recorder.events[0]["requestContext"]["authorizer"]["jwt"]["claims"]
    assert {k: v for k, v in got.items() if k in ("sub", "tenant", "roles")} == claims
    assert all(isinstance(v, str) for v in got.values())
    assert int(got["exp"]) > int(got["iat"])


@pytest.mark.parametrize(
    "token",
    [
        None,
        "",
        "Bearer",
        "Bearer dev:",
        "Bearer dev:a:b:c",
        "Bearer dev:al ice",
        "Bearer dev::alice",
        "Bearer dev:acme/x:alice",
        "Bearer dev:bob;roles=",
        "Bearer dev:bob;roles=a,,b",
        "Bearer dev:bob;roles=a b",
        "Bearer dev:bob;roles=fin/ance",
        "Bearer dev:bob;roles=finance;roles=admin",
        # other claims: never one that names the caller or is the token's own, never twice,
        # never empty or holding a control character once decoded
        "Bearer dev:bob;sub=eve",
        "Bearer dev:bob;tenant=other",
        "Bearer dev:acme:bob;exp=9999999999",
        "Bearer dev:bob;locale=en-GB;locale=de-DE",
        "Bearer dev:bob;locale=",
        "Bearer dev:bob;locale",
        "Bearer dev:bob;=en-GB",
        "Bearer dev:bob;locale=en GB",
        "Bearer dev:bob;locale=%0Aen-GB",
        "Bearer dev:bob;locale=%E2%80%A8",
        "Bearer dev:bob;locale=%FF",
        "Bearer dev:bob;1st=x",
        "Bearer dev:bob" + "".join(f";c{n}=x" for n in range(17)),
        "Basic YWxpY2U6c2VjcmV0",
        "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.",
    ],
)
def test_no_valid_token_is_a_401_before_the_handler_runs(
    gateway: LocalGateway, recorder: Recorder, token: str | None
) -> None:
    # GIVEN a request with no token, or one that is not a dev token
    headers = {} if token is None else {"Authorization": token}
    # WHEN it reaches the gateway
    status, response_headers, body = send(gateway, "GET", "/tools", headers)
    # THEN it is refused as API Gateway's JWT authorizer refuses, and the handler never runs
    assert status == 401
    assert json.loads(body) == {"message": "Unauthorized"}
    assert response_headers["www-authenticate"].startswith("Bearer")
    assert recorder.events == []


@pytest.mark.parametrize(
    ("sub", "tenant", "roles"),
    [
        ("bob", None, ["finance"]),
        ("bob", "acme", ["finance", "audit"]),
        ("carol@example.com", None, []),
    ],
)
def test_dev_token_roles_reach_the_handler_as_the_roles_it_checks(
    sub: str, tenant: str | None, roles: list[str]
) -> None:
    # GIVEN a dev token minted with roles (the claim arrives as API Gateway sends an array
    # claim: one string, "[finance audit]")
    claims = dev_claims(dev_token(sub, tenant, roles), 0.0)
    assert claims is not None
    # WHEN the handler reads the roles claim the local stack configures (ROLES_CLAIM=roles)
    # THEN it finds exactly the roles the token was minted with
    assert roles_from_claims(claims, DEV_ROLES_CLAIM) == set(roles)
    assert (DEV_ROLES_CLAIM in claims) == bool(roles)


@pytest.mark.parametrize(
    ("token", "extra"),
    [
        (
            "Bearer dev:acme:alice;locale=pt-PT;zoneinfo=Europe/Lisbon;currency=EUR",
            {"locale": "pt-PT", "zoneinfo": "Europe/Lisbon", "currency": "EUR"},
        ),
        ("Bearer dev:bob;roles=finance;locale=en-GB", {"roles": "[finance]", "locale": "en-GB"}),
        (
            "Bearer dev:bob;https://example.com/currency=JPY",
            {"https://example.com/currency": "JPY"},
        ),
        ("Bearer dev:bob;name=Zo%C3%AB%20Quist", {"name": "Zoë Quist"}),
        ("Bearer dev:bob;role=finance", {"role": "finance"}),  # a claim of its own, not roles
    ],
)
def test_a_dev_token_carries_other_claims_as_a_jwt_would(
    gateway: LocalGateway, recorder: Recorder, token: str, extra: dict[str, str]
) -> None:
    # WHEN a dev token names claims beside its principal
    status, _, _ = send(gateway, "GET", "/tools", {"Authorization": token})
    # THEN the handler gets each of them, as strings, beside the ones that name the caller
    assert status == 200
    got = recorder.events[0]["requestContext"]["authorizer"]["jwt"]["claims"]
    assert {k: v for k, v in got.items() if k not in ("sub", "tenant", "iss", "iat", "exp")} == (
        extra
    )


@pytest.mark.parametrize(
    "claims",
    [
        {"locale": "pt-PT", "zoneinfo": "America/Sao_Paulo"},
        {"name": "Zoë; o'Brien = 100%", "https://example.com/currency": "EUR"},
    ],
)
def test_dev_token_mints_any_claims_and_the_gateway_reads_them_back(
    claims: dict[str, str],
) -> None:
    read = dev_claims(dev_token("alice", "acme", ["finance"], claims), 0.0)
    assert read is not None
    assert {k: read[k] for k in claims} == claims
    assert (read["sub"], read["tenant"], read[DEV_ROLES_CLAIM]) == ("alice", "acme", "[finance]")


def test_dev_claims_never_carry_a_principal_from_elsewhere() -> None:
    # A dev token names the principal; nothing else does.
    assert dev_claims("Bearer dev:alice", 0.0) is not None
    assert dev_claims(None, 0.0) is None
    assert dev_claims("Bearer dev:alice extra", 0.0) is None


# ------------------------------------------------------------------------------ not found


@pytest.mark.parametrize(
    ("method", "target"),
    [
        ("GET", "/nope"),
        ("GET", "/tools/extra"),
        ("DELETE", "/tools"),
        ("POST", "/conversations/c/status"),
        ("GET", "/conversations//status"),
        ("GET", "/"),
        # methods http.server has no do_ method for (it would answer an HTML 501)
        ("PROPFIND", "/tools"),
        ("TRACE", "/tools"),
        ("PATCH", "/tools"),
        ("BREW", "/nope"),
        ("MKCOL", "/conversations/c/status"),
    ],
)
def test_an_unknown_route_is_api_gateways_404(
    gateway: LocalGateway, recorder: Recorder, method: str, target: str
) -> None:
    # WHEN no template route matches (even with a good token)
    status, headers, body = send(gateway, method, target, ALICE)
    # THEN the answer is API Gateway's own 404 and the handler never runs
    assert status == 404
    assert json.loads(body) == {"message": "Not Found"}
    assert headers["content-type"] == "application/json"
    assert recorder.events == []


def test_a_route_declared_for_any_method_takes_one_http_server_does_not_know(
    recorder: Recorder,
) -> None:
    # GIVEN a route declared with Method: ANY
    routes = [Route("ANY", "/things/{thing}", "ThingsFunction")]
    with LocalGateway(recorder, routes=routes, port=0) as running:
        # WHEN a WebDAV method reaches it
        status, _, _ = send(running, "PROPFIND", "/things/t-1", ALICE)
    # THEN the function gets it, with the method as sent
    assert status == 200
    assert recorder.events[0]["requestContext"]["http"]["method"] == "PROPFIND"


def test_a_client_that_hangs_up_leaves_no_traceback(
    recorder: Recorder, capfd: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a handler still working when its client closes the connection (with a reset)
    entered, closed = threading.Event(), threading.Event()

    def slow(event: dict[str, Any], context: Any) -> dict[str, Any]:
        entered.set()
        closed.wait(10)
        return {"statusCode": 200, "body": "x" * 1_000_000}

    with LocalGateway(slow, port=0) as running:
        client = socket.create_connection(("127.0.0.1", running.port), timeout=10)
        client.sendall(
            b"GET /tools HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer dev:a\r\n\r\n"
        )
        assert entered.wait(10)
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.close()
        closed.set()
        # WHEN the gateway writes the response to the closed connection
        assert running.wait_for_hangups(1, timeout=10)
        # THEN it still serves the next client
        status, _, _ = send(running, "GET", "/tools", ALICE)
    assert status == 200
    # AND nothing was printed about the one that left
    printed = capfd.readouterr()
    assert "Traceback" not in printed.err
    assert "BrokenPipeError" not in printed.err
    assert "ConnectionResetError" not in printed.err


def test_route_matching_comes_before_the_authorizer(gateway: LocalGateway) -> None:
    # An unknown route without a token is a 404, not a 401 (as in API Gateway).
    status, _, _ = send(gateway, "GET", "/nope")
    assert status == 404


# ------------------------------------------------------------------------------ responses


def test_the_handlers_response_is_written_back(gateway: LocalGateway, recorder: Recorder) -> None:
    # GIVEN a handler answering with a status, headers, cookies and a body
    recorder.reply = {
        "statusCode": 201,
        "headers": {"Content-Type": "application/json", "X-Thing": "1"},
        "cookies": ["session=abc; Path=/", "theme=dark"],
        "body": '{"made": true}',
        "isBase64Encoded": False,
    }
    # WHEN a request goes through
    status, headers, body = send(gateway, "GET", "/tools", ALICE)
    # THEN the client gets exactly that
    assert status == 201
    assert headers["content-type"] == "application/json"
    assert headers["x-thing"] == "1"
    assert headers["apigw-requestid"]
    assert json.loads(body) == {"made": True}


def test_a_base64_response_body_is_decoded(gateway: LocalGateway, recorder: Recorder) -> None:
    recorder.reply = {
        "statusCode": 200,
        "headers": {"content-type": "application/octet-stream"},
        "body": base64.b64encode(b"\x00\x01\xff").decode(),
        "isBase64Encoded": True,
    }
    _, _, body = send(gateway, "GET", "/tools", ALICE)
    assert body == b"\x00\x01\xff"


def test_a_plain_dict_is_inferred_as_a_json_200(gateway: LocalGateway, recorder: Recorder) -> None:
    # Payload format 2.0: a return value without statusCode is the JSON body of a 200.
    recorder.reply = {"tools": []}
    status, headers, body = send(gateway, "GET", "/tools", ALICE)
    assert (status, headers["content-type"], json.loads(body)) == (
        200,
        "application/json",
        {"tools": []},
    )


def test_a_handler_that_raises_is_a_500(gateway: LocalGateway, recorder: Recorder) -> None:
    recorder.reply = RuntimeError("boom")
    status, _, body = send(gateway, "GET", "/tools", ALICE)
    assert status == 500
    assert json.loads(body) == {"message": "Internal Server Error"}


def test_head_gets_headers_and_no_body(gateway: LocalGateway, recorder: Recorder) -> None:
    # HEAD is its own method: no template route takes it.
    status, _, body = send(gateway, "HEAD", "/tools", ALICE)
    assert (status, body) == (404, b"")


def test_the_handler_gets_a_lambda_context(gateway: LocalGateway, recorder: Recorder) -> None:
    # WHEN a request is served
    send(gateway, "GET", "/tools", ALICE)
    # THEN the context has what Powertools' Logger reads, and a deadline in the future
    (context,) = recorder.contexts
    assert context.function_name
    assert context.aws_request_id
    assert context.invoked_function_arn.startswith("arn:aws:lambda:")
    assert context.memory_limit_in_mb > 0
    assert 0 < context.get_remaining_time_in_millis() <= 15_000


def test_a_host_that_is_not_loopback_is_refused(gateway: LocalGateway, recorder: Recorder) -> None:
    # GIVEN a request that names another host (what a DNS-rebinding page would send)
    status, _, _ = send(gateway, "GET", "/tools", {**ALICE, "Host": "evil.example:3000"})
    # THEN it never reaches the handler
    assert status == 403
    assert recorder.events == []


# ------------------------------------------------------------------------------ binding


@pytest.mark.parametrize("host", ["0.0.0.0", "", "::", "192.168.1.20", "10.0.0.1", "example.com"])
def test_the_gateway_refuses_to_bind_anything_but_loopback(recorder: Recorder, host: str) -> None:
    with pytest.raises(NonLoopbackBind, match="loopback"):
        LocalGateway(recorder, host=host, port=0)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"])
def test_loopback_addresses_are_accepted(host: str) -> None:
    check_loopback(host)


def test_localhost_binds_and_serves(recorder: Recorder) -> None:
    with LocalGateway(recorder, host="localhost", port=0) as running:
        status, _, _ = send(running, "GET", "/tools", ALICE)
    assert status == 200


# ------------------------------------------------------------------------------ functions


def test_template_functions_get_their_environment_resolved() -> None:
    # GIVEN the template's function with !Ref'd environment variables
    config = functions_from_template(
        load_template(), {"TenantClaim": "tenant"}, {"FormsTable": "t-local"}
    )["ToolsFunction"]
    # THEN parameters and resources resolve to local values; literals are kept
    assert config.handler == "formwork.aws.api.lambda_handler"
    assert config.environment["TABLE_NAME"] == "t-local"
    assert config.environment["TENANT_CLAIM"] == "tenant"
    assert config.environment["POWERTOOLS_SERVICE_NAME"] == "formwork"
    assert config.environment["POWERTOOLS_LOG_LEVEL"] == "INFO"
    assert config.timeout > 0
    assert config.memory_mb > 0


def test_a_process_function_runs_the_handler_in_its_own_environment() -> None:
    # GIVEN a handler served by child processes with a function environment
    config = FunctionConfig(
        "Echo", f"{__name__}.echo_pid", timeout=10, environment={"TABLE_NAME": "t1"}
    )
    function = ProcessFunction(config, max_environments=2, quiet=True).start()
    try:
        with LocalGateway(function, port=0) as running:
            # WHEN requests come in
            status, _, body = send(running, "GET", "/tools", ALICE)
        # THEN another process served them, with the function's variables set
        assert status == 200
        served = json.loads(body)
        assert served["pid"] != os.getpid()
        assert served["table"] == "t1"
        assert function.environments == 1
    finally:
        function.close()


def test_a_handler_that_cannot_be_imported_fails_at_start() -> None:
    config = FunctionConfig("Broken", "tests.integration.no_such_module.handler")
    with pytest.raises(FunctionError, match="no_such_module"):
        ProcessFunction(config, quiet=True).start()


def test_a_route_without_an_authorizer_needs_no_token(
    gateway: LocalGateway, recorder: Recorder
) -> None:
    # GIVEN the template's webhook route (Auth: NONE; so are the page routes)
    unauthorized = {r.path for r in gateway.routes if not r.authorized}
    assert {p for p in unauthorized if not p.startswith("/pages/")} == {"/webhooks/{source}"}
    assert {
        "/pages/enter/{token}",
        "/pages/forms/{instance_id}",
        "/pages/forms/{instance_id}/version",
        "/pages/static/{name}",
        "/pages/memory",
    } <= unauthorized
    (route,) = [r for r in gateway.routes if r.path == "/webhooks/{source}"]
    # WHEN it is called with no Authorization header
    status, _, _ = send(
        gateway, route.method, concrete(route.path), {"Content-Type": "application/json"}, b"{}"
    )
    # THEN the function runs, as API Gateway would let it, and sees no claims
    assert status == 200
    (event,) = recorder.events
    assert "authorizer" not in event["requestContext"]
