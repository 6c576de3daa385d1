"""A local stand-in for API Gateway (HTTP API, payload format 2.0) in front of the Lambda handlers.

Each HTTP request becomes the event API Gateway would send the function (``version`` 2.0,
``routeKey``, ``rawPath``, lower-cased ``headers``, ``cookies``, ``queryStringParameters``,
``pathParameters``, ``requestContext`` with the authorizer's JWT claims, ``body``, base64 when it
is not UTF-8) and the function's answer (``statusCode``, ``headers``, ``cookies``, ``body``) is
written back. The routes are the ``HttpApi`` events of ``template.yaml``, read from it, never
repeated here; a request no route matches, whatever its method (``PROPFIND``, ``TRACE``, ...),
gets API Gateway's ``404 {"message":"Not Found"}``. A client that hangs up before its response
is written is no error: the gateway counts it and prints nothing.

The JWT authorizer is replaced by dev tokens, checked before the function runs, as the real
authorizer does. The grammar::

    dev-token = "dev:" [ tenant ":" ] sub *( ";" claim "=" value )
    claim     = "roles" / any other claim name (letters, digits, _ : . / # -)
    value     = roles: role *( "," role ); any other: percent-encoded text

``Authorization: Bearer dev:<tenant>:<sub>`` gives the claims ``{"sub": "<sub>", "tenant":
"<tenant>"}``; ``Bearer dev:<sub>`` is ``dev:local:<sub>`` (``DEV_TENANT``: every token
names a tenant, as a multi-tenant deployment requires), and a ``;roles=finance,audit``
suffix adds ``"roles": "[finance audit]"``: an array claim the way API Gateway's JWT
authorizer hands it to the function (one string, space separated in brackets), so local
requests exercise the same parsing as deployed ones. Any other ``;name=value`` adds the claim
``name`` with the (percent-decoded) value, as an identity provider would put it in a JWT:
``dev:acme:alice;locale=pt-PT;zoneinfo=Europe/Lisbon;currency=EUR`` is a token whose
context defaults can be tried locally (``docs/memory.md``). The claims that name the caller
(``sub``, ``tenant``) and the token's own (``iss``, ``iat``, ``exp``) cannot be given that way,
nor one claim twice, nor a value holding a control character. A missing or malformed token is a
``401 {"message":"Unauthorized"}`` and the function never sees the request. Anyone can mint a
dev token, so the gateway binds loopback addresses only and refuses anything else.

The function runs in local execution environments (``infra.local.runtime``): one invocation
at a time per environment, as in Lambda, several environments for concurrency.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import os
import re
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, unquote

from infra.local.console import emit
from infra.local.dynamodb import TEMPLATE, load_template
from infra.local.runtime import (
    Function,
    FunctionError,
    InProcessFunction,
)

Event = dict[str, Any]
Handler = Callable[[Event, Any], Any]

MAX_BODY_BYTES = 10 * 1024 * 1024
"""API Gateway HTTP API's payload limit: larger requests are refused with 413."""

LOOPBACK_NAMES = ("localhost",)
ACCOUNT_ID = "000000000000"
API_ID = "local"
DEV_ISSUER = "https://formwork.local/dev"
DEV_TOKEN_TTL = 3600
DEV_TENANT = "local"
"""The tenant of a dev token that names none (``dev:<sub>``)."""
DEV_ROLES_CLAIM = "roles"
"""The claim dev-token roles go in (the local stack sets ``ROLES_CLAIM`` to it)."""
_ROLE = r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}"
_DEV_TOKEN = re.compile(
    r"^dev:(?:(?P<tenant>[A-Za-z0-9][A-Za-z0-9._@-]{0,63}):)?"
    r"(?P<sub>[A-Za-z0-9][A-Za-z0-9._@+-]{0,127})$"
)
_DEV_ROLES = re.compile(rf"{_ROLE}(?:,{_ROLE}){{0,31}}")
_DEV_CLAIM = re.compile(r"[A-Za-z][A-Za-z0-9_:./#-]{0,127}")
_DEV_VALUE = re.compile(r"[A-Za-z0-9._~:/+@%-]{1,512}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
DEV_RESERVED_CLAIMS = frozenset({"sub", "tenant", "iss", "iat", "exp"})
"""Claims a dev token cannot be given with ``;name=value``: who the caller is, and the token's
own."""
MAX_DEV_CLAIMS = 16
"""The most ``;name=value`` parts one dev token may have (roles included)."""
_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade"}
)
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


class NonLoopbackBind(ValueError):
    """The dev gateway was asked to listen on an address other machines could reach."""


# ---------------------------------------------------------------------------------- template


@dataclass(frozen=True, slots=True)
class Route:
    """One ``HttpApi`` event of a function in the template."""

    method: str
    """Upper-case HTTP method, or ``ANY``."""
    path: str
    """The route's path as declared (``/conversations/{conversation_id}/status``), or
    ``$default``."""
    function: str
    """Logical id of the function the route invokes."""
    authorized: bool = True
    """False for a route declared with ``Auth: {Authorizer: NONE}`` (webhooks sign their own
    requests): no token is asked for and the event carries no authorizer claims."""

    @property
    def key(self) -> str:
        return "$default" if self.path == "$default" else f"{self.method} {self.path}"

    @property
    def segments(self) -> tuple[str, ...]:
        return tuple(self.path.strip("/").split("/")) if self.path != "/" else ()

    def match(self, method: str, raw_path: str) -> dict[str, str] | None:
        """Path parameters when this route takes the request, else None."""
        if self.path == "$default":
            return {}
        if self.method not in ("ANY", method):
            return None
        wanted = self.segments
        given = tuple(raw_path.strip("/").split("/")) if raw_path.strip("/") else ()
        params: dict[str, str] = {}
        for n, segment in enumerate(wanted):
            if segment.startswith("{") and segment.endswith("+}"):
                rest = given[n:]
                if not rest or not all(rest):
                    return None
                params[segment[1:-2]] = unquote("/".join(rest))
                return params
            if n >= len(given) or not given[n]:
                return None
            if segment.startswith("{") and segment.endswith("}"):
                params[segment[1:-1]] = unquote(given[n])
            elif segment != given[n]:
                return None
        return params if len(given) == len(wanted) else None

    def specificity(self) -> tuple[int, int, int]:
        """API Gateway prefers literal segments, then plain parameters, then greedy ones, and
        an exact method over ANY."""
        literal = sum(1 for s in self.segments if not s.startswith("{"))
        greedy = sum(1 for s in self.segments if s.endswith("+}"))
        return (literal, -greedy, int(self.method != "ANY"))


def select_route(
    routes: Sequence[Route], method: str, raw_path: str
) -> tuple[Route, dict[str, str]] | None:
    """The route API Gateway would pick for the request (and its path parameters)."""
    matches = [
        (route, params)
        for route in routes
        if route.path != "$default" and (params := route.match(method, raw_path)) is not None
    ]
    if matches:
        return max(matches, key=lambda pair: pair[0].specificity())
    default = next((r for r in routes if r.path == "$default"), None)
    return (default, {}) if default is not None else None


def routes_from_template(template: Mapping[str, Any]) -> list[Route]:
    """Every ``HttpApi`` event of every serverless function, in template order."""
    routes: list[Route] = []
    for logical_id, resource in template.get("Resources", {}).items():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        for event in (resource.get("Properties", {}).get("Events") or {}).values():
            if event.get("Type") != "HttpApi":
                continue
            props = event.get("Properties") or {}
            path = props.get("Path", "$default")
            method = str(props.get("Method", "ANY")).upper()
            auth = props.get("Auth") or {}
            routes.append(
                Route(
                    "ANY" if method == "X-AMAZON-APIGATEWAY-ANY-METHOD" else method,
                    path,
                    logical_id,
                    authorized=auth.get("Authorizer") != "NONE",
                )
            )
    return routes


# ---------------------------------------------------------------------------------- authorizer


def dev_claims(authorization: str | None, now: float) -> dict[str, str] | None:
    """The JWT claims a dev token stands for, or None when it is missing or malformed.

    As API Gateway does with a JWT, a ``Bearer `` prefix is stripped when present. Claim values
    are strings, as in the events API Gateway sends (roles: ``"[a b]"``, see the module).
    """
    if not authorization:
        return None
    token = authorization.strip()
    if token[:7].lower() == "bearer ":
        token = token[7:].strip()
    principal, *parts = token.split(";")
    found = _DEV_TOKEN.match(principal)
    extra = _dev_extra_claims(parts)
    if found is None or extra is None:
        return None
    claims = {"sub": found["sub"], "tenant": found["tenant"] or DEV_TENANT, "iss": DEV_ISSUER}
    claims.update(extra)
    claims["iat"] = str(int(now))
    claims["exp"] = str(int(now) + DEV_TOKEN_TTL)
    return claims


def _dev_extra_claims(parts: Sequence[str]) -> dict[str, str] | None:
    """The claims a dev token's ``;name=value`` parts give, or None when one is malformed."""
    if len(parts) > MAX_DEV_CLAIMS:
        return None
    claims: dict[str, str] = {}
    for part in parts:
        name, equals, value = part.partition("=")
        if not equals or not _DEV_CLAIM.fullmatch(name) or name in DEV_RESERVED_CLAIMS:
            return None
        if name in claims:
            return None
        if name == DEV_ROLES_CLAIM:
            if not _DEV_ROLES.fullmatch(value):
                return None
            claims[name] = "[" + " ".join(value.split(",")) + "]"
            continue
        try:
            decoded = unquote(value, errors="strict") if _DEV_VALUE.fullmatch(value) else ""
        except UnicodeDecodeError:
            return None
        if not decoded or _CONTROL.search(decoded):
            return None
        claims[name] = decoded
    return claims


def dev_token(
    sub: str,
    tenant: str | None = None,
    roles: Sequence[str] = (),
    claims: Mapping[str, str] | None = None,
) -> str:
    """The ``Authorization`` header value for a dev principal (holding ``roles``, and carrying
    ``claims`` beside the ones that name it: ``{"locale": "pt-PT"}``, say)."""
    token = f"Bearer dev:{tenant}:{sub}" if tenant else f"Bearer dev:{sub}"
    token += f";{DEV_ROLES_CLAIM}={','.join(roles)}" if roles else ""
    for name, value in (claims or {}).items():
        token += f";{name}={quote(value, safe='')}"
    return token


# ---------------------------------------------------------------------------------- events


@dataclass(frozen=True, slots=True)
class IncomingRequest:
    method: str
    target: str
    """The request target as sent: path and query string, still percent-encoded."""
    headers: Sequence[tuple[str, str]]
    body: bytes = b""
    source_ip: str = "127.0.0.1"
    port: int = 80


@dataclass(frozen=True, slots=True)
class OutgoingResponse:
    status: int
    headers: list[tuple[str, str]]
    body: bytes = b""


def _request_id() -> str:
    return base64.b64encode(os.urandom(10)).decode()


def _clf_time(now: float) -> str:
    moment = datetime.fromtimestamp(now, UTC)
    return f"{moment:%d}/{_MONTHS[moment.month - 1]}/{moment:%Y:%H:%M:%S} +0000"


def build_event(
    request: IncomingRequest,
    route: Route,
    path_parameters: Mapping[str, str],
    claims: Mapping[str, str] | None,
    *,
    now: float,
    request_id: str,
) -> Event:
    """The API Gateway HTTP API (payload format 2.0) event for a request."""
    raw_path, _, raw_query = request.target.partition("?")
    headers: dict[str, str] = {}
    cookies: list[str] = []
    for name, value in request.headers:
        key = name.lower()
        if key in _HOP_BY_HOP:
            continue
        if key == "cookie":
            cookies.extend(c.strip() for c in value.split(";") if c.strip())
            continue
        headers[key] = f"{headers[key]},{value}" if key in headers else value
    headers.setdefault("x-forwarded-for", request.source_ip)
    headers.setdefault("x-forwarded-port", str(request.port))
    headers.setdefault("x-forwarded-proto", "http")
    headers.setdefault("x-amzn-trace-id", f"Root=1-{int(now):08x}-{uuid.uuid4().hex[:24]}")
    query: dict[str, str] = {}
    for name, value in parse_qsl(raw_query, keep_blank_values=True):
        query[name] = f"{query[name]},{value}" if name in query else value
    host = headers.get("host", "localhost").rsplit(":", 1)[0] if "host" in headers else "localhost"
    event: Event = {
        "version": "2.0",
        "routeKey": route.key,
        "rawPath": raw_path,
        "rawQueryString": raw_query,
    }
    if cookies:
        event["cookies"] = cookies
    event["headers"] = headers
    if query:
        event["queryStringParameters"] = query
    event["requestContext"] = {
        "accountId": ACCOUNT_ID,
        "apiId": API_ID,
        "domainName": host,
        "domainPrefix": host.split(".")[0],
        "http": {
            "method": request.method,
            "path": raw_path,
            "protocol": "HTTP/1.1",
            "sourceIp": request.source_ip,
            "userAgent": headers.get("user-agent", ""),
        },
        "requestId": request_id,
        "routeKey": route.key,
        "stage": "$default",
        "time": _clf_time(now),
        "timeEpoch": int(now * 1000),
    }
    if claims is not None:
        event["requestContext"]["authorizer"] = {"jwt": {"claims": dict(claims), "scopes": None}}
    if request.body:
        try:
            event["body"] = request.body.decode("utf-8")
            event["isBase64Encoded"] = False
        except UnicodeDecodeError:
            event["body"] = base64.b64encode(request.body).decode("ascii")
            event["isBase64Encoded"] = True
    else:
        event["isBase64Encoded"] = False
    if path_parameters:
        event["pathParameters"] = dict(path_parameters)
    return event


def _json_response(status: int, message: str, request_id: str = "") -> OutgoingResponse:
    headers = [("content-type", "application/json")]
    if request_id:
        headers.append(("apigw-requestid", request_id))
    body = json.dumps({"message": message}, separators=(",", ":")).encode()
    return OutgoingResponse(status, headers, body)


def response_from_result(result: Any, request_id: str) -> OutgoingResponse:
    """What API Gateway answers for a function's return value (payload format 2.0).

    A dict with ``statusCode`` is taken as the response; anything else is JSON for a 200
    (API Gateway's inference for format 2.0). A malformed response is a 500.
    """
    if not (isinstance(result, dict) and "statusCode" in result):
        body = result if isinstance(result, str) else json.dumps(result)
        return OutgoingResponse(
            200,
            [("content-type", "application/json"), ("apigw-requestid", request_id)],
            body.encode(),
        )
    status = result["statusCode"]
    if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 599:
        raise FunctionError(f"the function returned statusCode {status!r}")
    headers: list[tuple[str, str]] = []
    for name, value in (result.get("headers") or {}).items():
        headers.append((str(name).lower(), str(value)))
    for name, values in (result.get("multiValueHeaders") or {}).items():
        headers.extend((str(name).lower(), str(v)) for v in values)
    headers.extend(("set-cookie", str(cookie)) for cookie in result.get("cookies") or [])
    headers.append(("apigw-requestid", request_id))
    payload = result.get("body")
    if payload is None:
        raw = b""
    elif result.get("isBase64Encoded"):
        raw = base64.b64decode(str(payload))
    else:
        raw = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
    return OutgoingResponse(status, headers, raw)


# ---------------------------------------------------------------------------------- gateway


def check_loopback(host: str) -> int:
    """The address family to bind ``host`` with; raises ``NonLoopbackBind`` unless loopback."""
    if host.lower() in LOOPBACK_NAMES:
        return socket.AF_INET
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        address = None
    if address is None or not address.is_loopback:
        raise NonLoopbackBind(
            f"refusing to bind the dev gateway to {host!r}: it accepts unsigned dev tokens, so it "
            "listens on loopback only (127.0.0.0/8, ::1 or localhost)"
        )
    return socket.AF_INET6 if address.version == 6 else socket.AF_INET


def _loopback_host_header(value: str) -> bool:
    host = value.strip()
    if host.startswith("["):
        host = host[1 : host.find("]")] if "]" in host else host
    elif host.count(":") == 1:
        host = host.split(":")[0]
    try:
        check_loopback(host)
    except NonLoopbackBind:
        return False
    return True


class LocalGateway:
    """API Gateway's HTTP API on a loopback port, in front of one or more functions.

    ``functions`` maps a function's logical id to what runs it; a single ``Function`` (or a
    plain callable, run in-process) serves every route. Routes default to the template's.
    """

    def __init__(
        self,
        functions: Mapping[str, Function] | Function | Handler,
        *,
        routes: Sequence[Route] | None = None,
        host: str = "127.0.0.1",
        port: int = 3000,
        template: Path = TEMPLATE,
        access_log: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.family = check_loopback(host)
        self.host = host
        self.port = port
        self.routes = (
            list(routes) if routes is not None else routes_from_template(load_template(template))
        )
        if isinstance(functions, Mapping):
            self.functions: dict[str, Function] = dict(functions)
            self.default: Function | None = None
        elif isinstance(functions, Function):
            self.functions, self.default = {}, functions
        else:
            self.functions, self.default = {}, InProcessFunction(functions)
        self.access_log = access_log
        self.clock = clock
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._hangups = 0
        self._hung_up = threading.Condition()

    def add_route(self, route: Route, function: Function) -> None:
        """Serve ``route`` with ``function`` too, beside the template's routes: for a bench or
        a test that needs a handler the template does not ship (``bench.http_floor_perf``'s
        bare storage handler). Call it before the first request that should reach it."""
        self.routes = [*self.routes, route]
        self.functions = {**self.functions, route.function: function}

    # -------------------------------------------------------------- request → response

    def handle(self, request: IncomingRequest) -> OutgoingResponse:
        """Route, authorize, invoke and map one request, as API Gateway does."""
        request_id = _request_id()
        host = next((v for k, v in request.headers if k.lower() == "host"), "")
        if host and not _loopback_host_header(host):
            return _json_response(403, "Forbidden", request_id)
        raw_path = request.target.partition("?")[0]
        selected = select_route(self.routes, request.method.upper(), raw_path)
        if selected is None:
            return _json_response(404, "Not Found", request_id)
        route, params = selected
        now = self.clock()
        authorization = next((v for k, v in request.headers if k.lower() == "authorization"), None)
        claims = dev_claims(authorization, now) if route.authorized else None
        if claims is None and route.authorized:
            response = _json_response(401, "Unauthorized", request_id)
            response.headers.append(("www-authenticate", 'Bearer error="invalid_token"'))
            return response
        function = self.functions.get(route.function, self.default)
        if function is None:
            return _json_response(500, "Internal Server Error", request_id)
        event = build_event(request, route, params, claims, now=now, request_id=request_id)
        try:
            return response_from_result(function.invoke(event), request_id)
        except FunctionError as exc:
            print(f"gateway: {route.key}: {exc}", file=sys.stderr, flush=True)
            return _json_response(500, "Internal Server Error", request_id)

    def hung_up(self) -> None:
        """A client closed its connection before its response was written: nothing to report
        (a browser tab closed, a client that timed out), so no traceback; only counted."""
        with self._hung_up:
            self._hangups += 1
            self._hung_up.notify_all()

    def wait_for_hangups(self, count: int, timeout: float) -> bool:
        """Whether ``count`` clients have hung up within ``timeout`` seconds (for tests)."""
        with self._hung_up:
            return self._hung_up.wait_for(lambda: self._hangups >= count, timeout)

    # -------------------------------------------------------------- server

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if self.family == socket.AF_INET6 else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> LocalGateway:
        # SO_REUSEADDR (``allow_reuse_address``): the port of a gateway that just stopped is
        # usable again at once, whatever connections it left in TIME_WAIT.
        server_class = type(
            "_Server",
            (ThreadingHTTPServer,),
            {
                "address_family": self.family,
                "allow_reuse_address": True,
                "daemon_threads": True,
                "request_queue_size": 128,
            },
        )
        try:
            server = server_class((self.host.strip("[]"), self.port), _RequestHandler)
        except OSError as exc:
            raise OSError(
                exc.errno, f"cannot listen on {self.host}:{self.port}: {exc.strerror}"
            ) from exc
        server.gateway = self
        self.port = server.server_address[1]
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, args=(0.05,), name="local-gateway", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None

    def __enter__(self) -> LocalGateway:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Responses leave in two writes (headers, body); with Nagle on, the second waits for the
    # client's delayed ACK (~40 ms on loopback) on every keep-alive request.
    disable_nagle_algorithm = True

    def version_string(self) -> str:
        return "formwork-local-gateway"

    def _read_body(self) -> bytes | None:
        """The request body, or None when it is over the limit (the connection then closes)."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks: list[bytes] = []
            size = 0
            for chunk in self._chunks():
                size += len(chunk)
                if size > MAX_BODY_BYTES:
                    self.close_connection = True
                    return None
                chunks.append(chunk)
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            self.close_connection = True
            return None
        return self.rfile.read(length) if length > 0 else b""

    def _chunks(self) -> Iterator[bytes]:
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline().strip():
                    pass
                return
            yield self.rfile.read(size)
            self.rfile.readline()

    def _dispatch(self) -> None:
        gateway: LocalGateway = self.server.gateway  # type: ignore[attr-defined]
        started = time.monotonic()
        try:
            body = self._read_body()
        except ValueError:
            body = b""
            response = _json_response(400, "Bad Request")
        else:
            if body is None:
                response = _json_response(413, "Request Entity Too Large")
            else:
                request = IncomingRequest(
                    method=self.command,
                    target=self.path,
                    headers=list(self.headers.items()),
                    body=body,
                    source_ip=self.client_address[0],
                    port=gateway.port,
                )
                response = gateway.handle(request)
        if gateway.access_log:  # before the response leaves: a client that has it sees the line
            took = (time.monotonic() - started) * 1000
            emit(f"{self.command} {self.path} -> {response.status} ({took:.0f} ms)", sys.stderr)
        self.send_response(response.status)
        for name, value in response.headers:
            if name not in ("content-length", "transfer-encoding", "connection"):
                self.send_header(name, value)
        self.send_header("content-length", str(len(response.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(response.body)

    def __getattr__(self, name: str) -> Any:
        # http.server looks up ``do_<METHOD>`` and answers an HTML 501 when it is missing; API
        # Gateway routes every method alike (one no route declares is its JSON 404), so every
        # method goes through ``_dispatch``.
        if name.startswith("do_"):
            return self._dispatch
        raise AttributeError(name)

    def handle(self) -> None:
        try:
            super().handle()
        except ConnectionError:  # the client hung up (BrokenPipeError, ConnectionResetError)
            self.close_connection = True
            gateway: LocalGateway = self.server.gateway  # type: ignore[attr-defined]
            gateway.hung_up()

    def log_message(self, format: str, *args: Any) -> None:
        del format, args  # the gateway's own access log (above) replaces http.server's
