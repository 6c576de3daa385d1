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

The function runs in local execution environments (``formwork.infra.local.runtime``): one invocation
at a time per environment, as in Lambda, several environments for concurrency.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from formwork.infra.local.console import emit
from formwork.infra.local.dev_tokens import (
    DEV_ISSUER,
    DEV_RESERVED_CLAIMS,
    DEV_ROLES_CLAIM,
    DEV_TENANT,
    DEV_TOKEN_TTL,
    MAX_DEV_CLAIMS,
    dev_claims,
    dev_token,
)
from formwork.infra.local.dynamodb import TEMPLATE, load_template
from formwork.infra.local.gateway_events import (
    ACCOUNT_ID,
    API_ID,
    Event,
    IncomingRequest,
    OutgoingResponse,
    _json_response,
    _request_id,
    build_event,
    response_from_result,
)
from formwork.infra.local.gateway_routes import Route, routes_from_template, select_route
from formwork.infra.local.runtime import (
    Function,
    FunctionError,
    InProcessFunction,
)

__all__ = [
    "ACCOUNT_ID",
    "API_ID",
    "DEV_ISSUER",
    "DEV_RESERVED_CLAIMS",
    "DEV_ROLES_CLAIM",
    "DEV_TENANT",
    "DEV_TOKEN_TTL",
    "LOOPBACK_NAMES",
    "MAX_BODY_BYTES",
    "MAX_DEV_CLAIMS",
    "Event",
    "Handler",
    "IncomingRequest",
    "LocalGateway",
    "NonLoopbackBind",
    "OutgoingResponse",
    "Route",
    "build_event",
    "check_loopback",
    "dev_claims",
    "dev_token",
    "response_from_result",
    "routes_from_template",
    "select_route",
]

Handler = Callable[[Event, Any], Any]

MAX_BODY_BYTES = 10 * 1024 * 1024
"""API Gateway HTTP API's payload limit: larger requests are refused with 413."""

LOOPBACK_NAMES = ("localhost",)


class NonLoopbackBind(ValueError):
    """The dev gateway was asked to listen on an address other machines could reach."""


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
