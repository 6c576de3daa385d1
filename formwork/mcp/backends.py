"""Where the MCP server's tool calls go: a ``FormService`` in this process, or the HTTP API.

A ``FormsBackend`` serves one principal's conversation: the tool definitions, one tool call
under a tool-call id, and the conversation's status lines. Two adapters:

* ``ServiceBackend``: the ``FormService`` of this process for a verified ``Caller`` (the
  Lambda route ``/conversations/{conversation_id}/mcp``: the principal comes from the claims
  API Gateway verified, exactly as for the tool routes);
* ``ApiBackend`` (``formwork.mcp.remote``, which needs httpx): the tool API over HTTP with a
  bearer token, through ``formwork.client.AsyncFormwork`` (``formwork mcp``, the stdio
  server): its retries send a call again under the same id, so a retry is a replay, never a
  second write.

A call's refusal is data either way (``{"ok": false, "error": ...}``). Over HTTP, what the
model cannot fix (the API down after the client's retries, a token it refuses) is data as
well: ``backend_unavailable``, the code the chat loop uses for the same case.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from forms.surface.formats import tool_definitions

if TYPE_CHECKING:
    from forms import FormService
    from forms.app.conversation import Caller

JsonDict = dict[str, Any]

BACKEND_UNAVAILABLE = "backend_unavailable"
MODEL_REFUSALS = frozenset({413, 422})
"""HTTP statuses whose refusal is about the call the model made (an input too large, or not
an object), with the 404 ``unknown_tool``: data for the model, as the API answered it."""


class BackendUnavailable(Exception):
    """The backend could not answer a read (the status lines, the tool list)."""


class FormsBackend(Protocol):
    """One principal's conversation, as the MCP server reaches it."""

    @property
    def conversation_id(self) -> str: ...

    async def tools(self) -> list[JsonDict]:
        """The form tools in MCP's ``tools/list`` shape (name, description, inputSchema).
        ``BackendUnavailable`` when they cannot be read."""
        ...

    async def call(self, tool: str, arguments: Mapping[str, Any], tool_call_id: str) -> JsonDict:
        """The result of one tool call, every failure as data."""
        ...

    async def status(self) -> list[str]:
        """The status lines of the caller's open forms (empty when there are none).
        ``BackendUnavailable`` when they cannot be read."""
        ...


def backend_unavailable(detail: str) -> JsonDict:
    """The result of a call the forms service could not be asked, for the model to read."""
    return {
        "ok": False,
        "error": BACKEND_UNAVAILABLE,
        "message": f"The forms service did not answer ({detail}); the answer may not have "
        "been saved.",
        "hint": "Tell the person their answer could not be saved just now; do not repeat the "
        "call in this turn.",
    }


class ServiceBackend:
    """The ``FormService`` of this process, for a verified caller.

    The service is synchronous (its store is DynamoDB or memory): a call runs on the event
    loop's thread, which serves one request per Lambda invocation anyway."""

    def __init__(self, service: FormService, caller: Caller) -> None:
        self.service = service
        self.caller = caller

    @property
    def conversation_id(self) -> str:
        return self.caller.conversation_id

    async def tools(self) -> list[JsonDict]:
        return tool_definitions("mcp")

    async def call(self, tool: str, arguments: Mapping[str, Any], tool_call_id: str) -> JsonDict:
        return self.service.call(self.caller, tool, tool_call_id, dict(arguments))

    async def status(self) -> list[str]:
        return self.service.conversation_status(self.caller) or []
