"""``formwork mcp``: the MCP server over stdio, for a desktop host to launch.

It serves one principal's conversation (``--conversation``: the form tools, plus ``form_ask``
when the host can elicit) or one draft of the principal's tenant (``--builder FORM_ID``: the
builder tools), forwarding every call to a deployed or local API with the holder's bearer
token (``formwork.mcp.remote``): the same tools and the same results as the API
(``formwork.mcp.server``). Tool-call ids are derived under a nonce drawn at start
(``formwork.mcp.tools``). Nothing but MCP goes to stdout; the client's retries log to stderr.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

import anyio
from mcp.server.stdio import stdio_server

from formwork.client import AsyncFormwork, Token
from formwork.mcp.backends import McpBackend
from formwork.mcp.remote import ApiBackend, ApiBuilderBackend
from formwork.mcp.server import build_server


async def serve(url: str, token: Token, conversation_id: str) -> None:
    """Serve a conversation's form tools on stdin and stdout until the host closes them."""
    await _serve(url, token, lambda api: ApiBackend(api, conversation_id))


async def serve_builder(url: str, token: Token, form_id: str) -> None:
    """Serve the builder tools of the draft ``form_id`` until the host closes stdin."""
    await _serve(url, token, lambda api: ApiBuilderBackend(api, form_id))


async def _serve(url: str, token: Token, backend: Callable[[AsyncFormwork], McpBackend]) -> None:
    async with AsyncFormwork(url, token) as api:
        server = build_server(backend(api), connection=secrets.token_hex(8))
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())


def run(url: str, token: Token, conversation_id: str) -> int:
    anyio.run(serve, url, token, conversation_id)
    return 0


def run_builder(url: str, token: Token, form_id: str) -> int:
    anyio.run(serve_builder, url, token, form_id)
    return 0
