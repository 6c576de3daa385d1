"""The MCP server of one backend: a conversation's form tools with its status lines and
``form_ask`` where the host can elicit, or a draft's builder tools with its outline.

``build_server(backend, connection=...)`` returns the official SDK's low-level ``Server``,
whose handlers only translate: a ``tools/call`` becomes one backend call (its result the
API's, ``formwork.mcp.tools``), ``resources/read`` of the status resource and ``prompts/get``
of its prompt read the status lines. The same server runs over stateless streamable HTTP on
the API (``formwork.mcp.http``, backend in process) and over stdio (``formwork mcp``, backend
over HTTP). What differs between the two kinds of server (title, instructions, the resource's
URI, the prompt's name, ``form_ask`` or not) is the backend's ``Surface``
(``formwork.mcp.surface``).

**The status lines** are a resource (text, what a host puts in context):
``formwork://conversations/{id}/status`` (one line per open form) or
``formwork://builder/forms/{form_id}/draft`` (the draft's outline); and a prompt with the same
text as a user message (``form_status``, ``draft_status``), for hosts that offer prompts
rather than resources. ``resources/templates/list`` answers an empty list (the resource's URI
is fixed).

**form_ask** is a conversation's only (``Surface.asks``), and listed only to a client that
declared form elicitation and whose request can carry one: any 2026-07-28 request (the question
goes back as an ``InputRequiredResult`` and the answers come with the retried call,
stateless), or a handshake-era connection with a back channel (stdio: a standalone
``elicitation/create`` while the call waits). A stateless handshake-era HTTP request has
neither, and never sees the tool. ``formwork.mcp.ask`` says what one call does.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from formwork.mcp import ask
from formwork.mcp.backends import JsonDict, McpBackend, McpBackendUnavailable
from formwork.mcp.surface import (
    DRAFT_PROMPT,
    NO_FORMS,
    STATUS_PROMPT,
    draft_uri,
    instructions,
    status_uri,
)
from formwork.mcp.tools import chat_id, mcp_tool, tool_call_id, tool_result

__all__ = [
    "ANSWERS_KEY",
    "DRAFT_PROMPT",
    "NO_FORMS",
    "SERVER_NAME",
    "STATUS_PROMPT",
    "build_server",
    "can_elicit",
    "draft_uri",
    "instructions",
    "status_uri",
]

SERVER_NAME = "formwork"
ANSWERS_KEY = "answers"
"""The key of ``form_ask``'s question in a 2026-07-28 ``InputRequiredResult``."""

Context = ServerRequestContext[Any, Any]


def can_elicit(ctx: Context) -> bool:
    """Whether this request's client can answer a form elicitation (the module says when)."""
    capabilities = ctx.session.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    # A bare ``elicitation: {}`` (before modes existed) means form; url-only does not.
    if elicitation is None or (elicitation.form is None and elicitation.url is not None):
        return False
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS or ctx.session.can_send_request


def build_server(backend: McpBackend, *, connection: str | None = None) -> Server[Any]:
    """The MCP server of ``backend`` (a conversation's, a draft's). ``connection``: the nonce
    of a connection (stdio) that tool-call ids are derived under; None on stateless HTTP
    (``formwork.mcp.tools.tool_call_id``)."""
    face = backend.surface
    return Server(
        SERVER_NAME,
        version=_version(),
        title=face.title,
        instructions=face.instructions,
        **_tool_handlers(backend, connection),
        **_status_handlers(backend),
    )


def _tool_handlers(backend: McpBackend, connection: str | None) -> dict[str, Any]:
    """The server's answers to ``tools/list`` and ``tools/call``: the backend's tools (and
    ``form_ask`` where the host can elicit), each call under its tool-call id."""
    face = backend.surface

    async def served_tools() -> list[JsonDict]:
        try:
            return await backend.tools()
        except McpBackendUnavailable as failure:
            raise MCPError(types.INTERNAL_ERROR, str(failure)) from None

    async def list_tools(
        ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        tools = [mcp_tool(d) for d in await served_tools()]
        if face.asks and can_elicit(ctx):
            tools.append(mcp_tool(ask.ASK_DEFINITION))
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: Context, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        arguments = params.arguments or {}
        call_id = tool_call_id(ctx.meta, ctx.request_id, connection)
        if face.asks and params.name == ask.ASK_TOOL and can_elicit(ctx):
            return await _ask(ctx, backend, params, arguments, call_id)
        names = [str(d["name"]) for d in await served_tools()]
        if params.name not in names:
            raise MCPError(
                types.INVALID_PARAMS,
                f"Unknown tool: {params.name}; the tools are: {', '.join(names)}",
            )
        chat = chat_id(ctx.meta, connection)
        return tool_result(await backend.call(params.name, arguments, call_id, chat))

    return {"on_list_tools": list_tools, "on_call_tool": call_tool}


def _status_handlers(backend: McpBackend) -> dict[str, Any]:
    """The server's answers about the status lines: the one resource and the one prompt that
    carry them (``Surface`` names both)."""
    return {**_resource_handlers(backend), **_prompt_handlers(backend)}


def _resource_handlers(backend: McpBackend) -> dict[str, Any]:
    """The status lines as the one resource: listed, no templates, read."""
    face = backend.surface
    uri = face.uri

    async def list_resources(
        ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=uri,
                    name=face.resource_name,
                    title=face.resource_title,
                    description=face.resource_description,
                    mime_type="text/plain",
                )
            ]
        )

    async def list_resource_templates(
        ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        # The one resource has a fixed URI: no templates, but the method is answered (an
        # empty list), as hosts that list resources ask for both.
        return types.ListResourceTemplatesResult(resource_templates=[])

    async def read_resource(
        ctx: Context, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        if params.uri != uri:
            raise MCPError(types.INVALID_PARAMS, f"Resource not found: {params.uri}")
        text = await _status_text(backend, face.empty)
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="text/plain", text=text)]
        )

    return {
        "on_list_resources": list_resources,
        "on_list_resource_templates": list_resource_templates,
        "on_read_resource": read_resource,
    }


def _prompt_handlers(backend: McpBackend) -> dict[str, Any]:
    """The status lines as the one prompt: listed, and got."""
    face = backend.surface

    async def list_prompts(
        ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=face.prompt,
                    title=face.prompt_title,
                    description=face.prompt_description,
                )
            ]
        )

    async def get_prompt(
        ctx: Context, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        if params.name != face.prompt:
            raise MCPError(types.INVALID_PARAMS, f"Unknown prompt: {params.name}")
        text = await _status_text(backend, face.empty)
        return types.GetPromptResult(
            description=face.prompt_result,
            messages=[
                types.PromptMessage(
                    role="user",
                    content=types.TextContent(type="text", text=f"{face.prompt_heading}\n{text}"),
                )
            ],
        )

    return {"on_list_prompts": list_prompts, "on_get_prompt": get_prompt}


async def _status_text(backend: McpBackend, empty: str) -> str:
    try:
        lines = await backend.status()
    except McpBackendUnavailable as failure:
        raise MCPError(types.INTERNAL_ERROR, str(failure)) from None
    return "\n".join(lines) if lines else empty


async def _ask(
    ctx: Context,
    backend: McpBackend,
    params: types.CallToolRequestParams,
    arguments: Mapping[str, Any],
    call_id: str,
) -> types.CallToolResult | types.InputRequiredResult:
    """``form_ask``, in the era the request speaks (``formwork.mcp.ask`` says what it does)."""
    modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
    if modern and params.request_state is not None:
        return tool_result(await _answered(backend, params, call_id))
    extra = sorted(set(arguments) - {"form", "instance"})
    if extra or not isinstance(arguments.get("form"), str):
        return tool_result(
            {
                "ok": False,
                "error": "bad_request",
                "message": "form_ask takes form (a form id) and, optionally, instance"
                + (f"; not {', '.join(extra)}" if extra else ""),
                "hint": "send the form id the status line shows",
            }
        )
    read = await backend.call("form_read", dict(arguments), call_id)
    q = ask.question(read)
    if not isinstance(q, ask.Question):
        return tool_result(q)
    if modern:
        request = types.ElicitRequest(
            params=types.ElicitRequestFormParams(message=q.message, requested_schema=q.schema)
        )
        return types.InputRequiredResult(
            input_requests={ANSWERS_KEY: request}, request_state=q.state()
        )
    answer = await ctx.session.elicit_form(q.message, q.schema, related_request_id=ctx.request_id)
    return tool_result(await _write(backend, q, answer, call_id))


async def _answered(
    backend: McpBackend, params: types.CallToolRequestParams, call_id: str
) -> JsonDict:
    """The retried ``form_ask`` of a 2026-07-28 round trip: the person's answer to the
    question its ``request_state`` names."""
    q = ask.Question.from_state(params.request_state or "")
    answer = (params.input_responses or {}).get(ANSWERS_KEY)
    if q is None or not isinstance(answer, types.ElicitResult):
        raise MCPError(types.INVALID_PARAMS, "form_ask: no answer to this server's question")
    return await _write(backend, q, answer, call_id)


async def _write(
    backend: McpBackend, q: ask.Question, answer: types.ElicitResult, call_id: str
) -> JsonDict:
    if answer.action != "accept":
        return ask.declined(answer.action)
    values = ask.answers(q.asked, answer.content)
    if not values:
        return ask.nothing_answered(q.asked)
    fill = {"form": q.form, "instance": q.instance, "values": values}
    return ask.filled(await backend.call("form_fill", fill, call_id), q)


def _version() -> str:
    try:
        return version("formwork")
    except PackageNotFoundError:
        return "0"
