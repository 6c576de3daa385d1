"""``ApiBackend``: the MCP server's backend over the tool API (``formwork mcp``, stdio).

Every request goes through ``formwork.client.AsyncFormwork`` with the holder's bearer token:
a failed send and a ``busy`` result are sent again under the same tool-call id, so a retry is
a replay, never a second write. What the model cannot fix comes back as
``backend_unavailable`` (``formwork.mcp.backends``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from formwork.client import AsyncFormwork, ClientError, RequestRefused
from formwork.mcp.backends import (
    MODEL_REFUSALS,
    BackendUnavailable,
    JsonDict,
    backend_unavailable,
)


class ApiBackend:
    """The tool API over HTTP, as the holder of the client's token, in one conversation."""

    def __init__(self, client: AsyncFormwork, conversation_id: str) -> None:
        self.client = client
        self._conversation_id = conversation_id
        self._tools: list[JsonDict] | None = None

    @property
    def conversation_id(self) -> str:
        return self._conversation_id

    async def tools(self) -> list[JsonDict]:
        """``GET /tools?format=mcp``, read once: the API's own surface, whatever its version."""
        if self._tools is None:
            try:
                self._tools = await self.client.tools("mcp")
            except ClientError as failure:
                raise BackendUnavailable(f"the tools could not be read: {failure}") from failure
        return self._tools

    async def call(self, tool: str, arguments: Mapping[str, Any], tool_call_id: str) -> JsonDict:
        try:
            result = await self.client.call(self.conversation_id, tool, arguments, tool_call_id)
        except RequestRefused as refused:
            if refused.status in MODEL_REFUSALS or refused.code == "unknown_tool":
                body = refused.body or {}
                return {
                    "ok": False,
                    "error": refused.code or "bad_request",
                    "message": str(body.get("message") or refused.message),
                }
            return backend_unavailable(str(refused))
        except ClientError as failure:
            return backend_unavailable(str(failure))
        return result.to_dict()

    async def status(self) -> list[str]:
        try:
            return list((await self.client.status(self.conversation_id)).lines)
        except ClientError as failure:
            raise BackendUnavailable(f"the status lines could not be read: {failure}") from None
