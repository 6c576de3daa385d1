"""``formwork mcp``: the MCP server over stdio, for a desktop host to launch.

It serves one principal's conversation, forwarding every call to a deployed or local tool API
with the holder's bearer token (``formwork.mcp.remote.ApiBackend``): the same tools and the
same results as the API, plus ``form_ask`` when the host can elicit (``formwork.mcp.server``).
Tool-call ids are derived under a nonce drawn at start (``formwork.mcp.tools``). Nothing but
MCP goes to stdout; the client's retries log to stderr.
"""

from __future__ import annotations

import secrets

import anyio
from mcp.server.stdio import stdio_server

from formwork.client import AsyncFormwork, Token
from formwork.mcp.remote import ApiBackend
from formwork.mcp.server import build_server


async def serve(url: str, token: Token, conversation_id: str) -> None:
    """Serve MCP on this process's stdin and stdout until the host closes them."""
    async with AsyncFormwork(url, token) as api:
        server = build_server(ApiBackend(api, conversation_id), connection=secrets.token_hex(8))
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())


def run(url: str, token: Token, conversation_id: str) -> int:
    anyio.run(serve, url, token, conversation_id)
    return 0
