"""One streamable HTTP request, served by the SDK in this process and answered whole.

A Lambda invocation holds one HTTP request and must return one response, so there is no
connection to keep and no stream to hold open: the SDK's ``StreamableHTTPSessionManager`` runs
stateless (no ``Mcp-Session-Id``, a fresh transport per request) with JSON responses (no SSE),
and its ASGI app is called once, in process, inside ``asyncio.run``: the request's method,
headers and body go in as an ASGI scope and one ``http.request`` message, and what it sends
back (``http.response.start``, the body) is collected into an ``HttpAnswer``. Both protocol
eras are the SDK's: a handshake-era client (``initialize`` first, then each request on its
own) and a 2026-07-28 client (every request self-contained) are answered alike.

Before the SDK sees a ``POST``, ``envelope_error`` checks that its body is one JSON-RPC
message, and answers what is not with a short JSON-RPC error (HTTP 400, id ``null`` unless
the message had a usable one), where the SDK would answer ``-32602`` with a pydantic
validation dump or, for a request whose ``id`` is not a string or an integer, a silent
``202``: a body that is not JSON is ``-32700`` Parse error; a JSON array (a batch: MCP dropped
batching in 2025-06-18, and the SDK never served one) and anything that is not a request, a
notification or a response are ``-32600`` Invalid Request; a request whose ``params`` is not an
object is ``-32602`` Invalid params. What a method's parameters must hold stays the SDK's to
say.

Measured on this project's 2-core machine, through ``lambda_handler`` in process: a
``tools/call`` of ``form_read`` takes 3.5 ms (median of 300) against 0.44 ms for the same call
on ``POST /conversations/{id}/tools/form_read``, so about 3 ms per request for the event loop,
the manager, the transport and the JSON-RPC layers. Importing the SDK and this package, once
per execution environment with its first MCP request, took 340 ms after ``formwork.aws.api`` (the
other routes never import it).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, jsonrpc_message_adapter
from pydantic import ValidationError

MCP_PATH = "/mcp"


@dataclass(frozen=True, slots=True)
class HttpAnswer:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    @property
    def text(self) -> str:
        return self.body.decode("utf-8")


def serve_request(
    server: Server[Any], method: str, headers: Mapping[str, str], body: bytes
) -> HttpAnswer:
    """``server``'s answer to one streamable HTTP request (blocking: runs its own loop)."""
    return asyncio.run(serve(server, method, headers, body))


async def serve(
    server: Server[Any], method: str, headers: Mapping[str, str], body: bytes
) -> HttpAnswer:
    """``server``'s answer to one streamable HTTP request, in the running loop."""
    refused = envelope_error(body) if method.upper() == "POST" else None
    if refused is not None:
        return refused
    manager = StreamableHTTPSessionManager(app=server, json_response=True, stateless=True)
    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method.upper(),
        "scheme": "https",
        "path": MCP_PATH,
        "raw_path": MCP_PATH.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in headers.items()
        ],
        "server": ("formwork", 443),
        "client": ("127.0.0.1", 0),
    }
    started: dict[str, Any] = {}
    chunks: list[bytes] = []
    delivered = False
    never = anyio.Event()

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await never.wait()  # the client stays connected until the answer is sent
        return {"type": "http.disconnect"}

    async def send(message: Mapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            started.update(message)
        elif message["type"] == "http.response.body":
            chunks.append(bytes(message.get("body", b"")))

    async with manager.run():
        await manager.handle_request(scope, receive, send)
    answered = {
        name.decode("latin-1"): value.decode("latin-1")
        for name, value in started.get("headers", [])
        if name.lower() != b"content-length"
    }
    return HttpAnswer(int(started.get("status", 500)), answered, b"".join(chunks))


def envelope_error(body: bytes) -> HttpAnswer | None:
    """The JSON-RPC error answering ``body`` when it is not one JSON-RPC message (the module
    says which), or None to hand it to the SDK."""
    try:
        message = json.loads(body)
    except ValueError:
        return _rpc_error(PARSE_ERROR, "Parse error: the body is not JSON")
    if isinstance(message, list):
        return _rpc_error(
            INVALID_REQUEST,
            "Invalid Request: batches (JSON arrays) are not supported; send one JSON-RPC "
            "message per request",
        )
    if not isinstance(message, dict):
        return _rpc_error(INVALID_REQUEST, "Invalid Request: send one JSON-RPC message, an object")
    sent_id = message.get("id")
    usable_id = sent_id if _is_id(sent_id) else None
    if message.get("jsonrpc") != "2.0":
        return _rpc_error(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"', usable_id)
    if "method" in message:
        if not isinstance(message["method"], str):
            return _rpc_error(INVALID_REQUEST, 'Invalid Request: "method" must be a string')
        if "id" in message and usable_id is None:
            return _rpc_error(
                INVALID_REQUEST, 'Invalid Request: "id" must be a string or an integer'
            )
        if not isinstance(message.get("params", {}), dict):
            return _rpc_error(
                INVALID_PARAMS, 'Invalid params: "params" must be an object', usable_id
            )
    try:
        jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValidationError:
        return _rpc_error(
            INVALID_REQUEST,
            'Invalid Request: a request or notification needs a "method"; a response, an "id" '
            'and one of "result" and "error" (an object with a "code" and a "message")',
            usable_id,
        )
    return None


def _is_id(value: object) -> bool:
    """A request id MCP takes: a string or an integer (never null, a boolean or a fraction)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _rpc_error(code: int, message: str, request_id: object = None) -> HttpAnswer:
    error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    body = json.dumps(error, separators=(",", ":")).encode("utf-8")
    return HttpAnswer(400, {"content-type": "application/json"}, body)
