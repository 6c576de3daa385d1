"""One streamable HTTP request, served by the SDK in this process and answered whole.

A Lambda invocation holds one HTTP request and must return one response, so there is no
connection to keep and no stream to hold open: the SDK's ``StreamableHTTPSessionManager`` runs
stateless (no ``Mcp-Session-Id``, a fresh transport per request) with JSON responses (no SSE),
and its ASGI app is called once, in process, inside ``asyncio.run``: the request's method,
headers and body go in as an ASGI scope and one ``http.request`` message, and what it sends
back (``http.response.start``, the body) is collected into an ``HttpAnswer``. Both protocol
eras are the SDK's: a handshake-era client (``initialize`` first, then each request on its
own) and a 2026-07-28 client (every request self-contained) are answered alike.

Measured on this project's 2-core machine, through ``lambda_handler`` in process: a
``tools/call`` of ``form_read`` takes 3.5 ms (median of 300) against 0.44 ms for the same call
on ``POST /conversations/{id}/tools/form_read``, so about 3 ms per request for the event loop,
the manager, the transport and the JSON-RPC layers. Importing the SDK and this package, once
per execution environment with its first MCP request, took 340 ms after ``functions.api`` (the
other routes never import it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

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
