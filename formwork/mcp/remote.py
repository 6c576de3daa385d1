"""The MCP server's backends over the HTTP API (``formwork mcp``, stdio).

* ``ApiBackend``: a conversation's form tools (``GET /tools``,
  ``POST /conversations/{id}/tools/{tool}``, ``GET /conversations/{id}/status``);
* ``ApiBuilderBackend``: a draft's builder tools (``GET /builder/tools``,
  ``POST /builder/forms/{form_id}/tools/{tool}``; its outline through ``inspect_form``).

Every request goes through ``formwork.client.AsyncFormwork`` with the holder's bearer token:
a failed send and a ``busy`` result are sent again under the same tool-call id, so a retry is
a replay, never a second write. What the model cannot fix comes back as
``backend_unavailable`` (``forms.surface.unavailable``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from forms.surface.unavailable import builder_unavailable, forms_unavailable
from formwork.client import AsyncFormwork, ClientError, RequestRefused, ToolResult
from formwork.mcp.backends import MODEL_REFUSALS, JsonDict, McpBackendUnavailable
from formwork.mcp.draft import draft_status
from formwork.mcp.surface import Surface, builder_surface, conversation_surface


class ApiBackend:
    """The tool API over HTTP, as the holder of the client's token, in one conversation."""

    def __init__(self, client: AsyncFormwork, conversation_id: str) -> None:
        self.client = client
        self._conversation_id = conversation_id
        self._tools: list[JsonDict] | None = None

    @property
    def conversation_id(self) -> str:
        return self._conversation_id

    @property
    def surface(self) -> Surface:
        return conversation_surface(self._conversation_id)

    async def tools(self) -> list[JsonDict]:
        """``GET /tools?format=mcp``, read once: the API's own surface, whatever its version."""
        if self._tools is None:
            try:
                self._tools = await self.client.tools("mcp")
            except ClientError as failure:
                raise McpBackendUnavailable(f"the tools could not be read: {failure}") from failure
        return self._tools

    async def call(
        self, tool: str, arguments: Mapping[str, Any], tool_call_id: str, chat: str | None = None
    ) -> JsonDict:
        return await _as_data(
            lambda: self.client.call(self.conversation_id, tool, arguments, tool_call_id),
            forms_unavailable,
        )

    async def status(self) -> list[str]:
        try:
            return list((await self.client.status(self.conversation_id)).lines)
        except ClientError as failure:
            raise McpBackendUnavailable(f"the status lines could not be read: {failure}") from None


class ApiBuilderBackend:
    """The builder's HTTP API, as the holder of the client's token, on its tenant's draft of
    ``form_id``."""

    def __init__(self, client: AsyncFormwork, form_id: str) -> None:
        self.client = client
        self.form_id = form_id
        self._tools: list[JsonDict] | None = None

    @property
    def surface(self) -> Surface:
        return builder_surface(self.form_id)

    async def tools(self) -> list[JsonDict]:
        """``GET /builder/tools?format=mcp``, read once: the API's own builder tools."""
        if self._tools is None:
            try:
                self._tools = await self.client.builder_tools("mcp")
            except ClientError as failure:
                raise McpBackendUnavailable(
                    f"the builder tools could not be read: {failure}"
                ) from failure
        return self._tools

    async def call(
        self, tool: str, arguments: Mapping[str, Any], tool_call_id: str, chat: str | None = None
    ) -> JsonDict:
        return await _as_data(
            lambda: self.client.builder_call(
                self.form_id, tool, arguments, tool_call_id, chat_id=chat
            ),
            builder_unavailable,
        )

    async def status(self) -> list[str]:
        return await draft_status(self)


async def _as_data(
    send: Callable[[], Awaitable[ToolResult]], unavailable: Callable[[str], JsonDict]
) -> JsonDict:
    """The result of one call, every failure as data: a refusal of the call the model made
    (an input too large or not an object, an unknown tool) as the API answered it, anything
    else the model cannot fix as ``unavailable``'s result."""
    try:
        result = await send()
    except RequestRefused as refused:
        if refused.status in MODEL_REFUSALS or refused.code == "unknown_tool":
            body = refused.body or {}
            return {
                "ok": False,
                "error": refused.code or "bad_request",
                "message": str(body.get("message") or refused.message),
            }
        return unavailable(str(refused))
    except ClientError as failure:
        return unavailable(str(failure))
    return result.to_dict()
