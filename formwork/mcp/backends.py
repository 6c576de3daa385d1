"""Where the MCP server's tool calls go: a service in this process, or the HTTP API.

A ``McpBackend`` is what ``formwork.mcp.server.build_server`` serves: its ``Surface`` (the
server's title, instructions, status resource and prompt), the tool definitions, one tool call
under a tool-call id, and the status lines. A ``FormsBackend`` serves one principal's
conversation (the form tools); ``formwork.mcp.builder`` has the builder's (one draft's builder
tools). The conversation's two adapters:

* ``FormServiceBackend``: the ``FormService`` of this process for a verified ``Caller`` (the
  Lambda route ``/conversations/{conversation_id}/mcp``: the principal comes from the claims
  API Gateway verified, exactly as for the tool routes);
* ``ApiBackend`` (``formwork.mcp.remote``, which needs httpx): the tool API over HTTP with a
  bearer token, through ``formwork.client.AsyncFormwork`` (``formwork mcp``, the stdio
  server): its retries send a call again under the same id, so a retry is a replay, never a
  second write.

A call's refusal is data either way (``{"ok": false, "error": ...}``). Over HTTP, what the
model cannot fix (the API down after the client's retries, a token it refuses) is data as
well: ``backend_unavailable`` (``forms.surface.unavailable``), as in the chat loop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from forms.app.checked import typed_call
from forms.surface.formats import tool_definitions
from formwork.mcp.surface import Surface, conversation_surface

if TYPE_CHECKING:
    from forms import FormService
    from forms.app.conversation import Caller

JsonDict = dict[str, Any]

MODEL_REFUSALS = frozenset({413, 422})
"""HTTP statuses whose refusal is about the call the model made (an input too large, or not
an object), with the 404 ``unknown_tool``: data for the model, as the API answered it."""


Observer = Callable[[str, JsonDict], None]
"""Told of each tool call an in-process backend served: its tool name (as the host sent it)
and its result; the Lambda route counts and logs it as the tool routes do."""


class McpBackendUnavailable(Exception):
    """The backend could not answer a read (the status lines, the tool list)."""


class McpBackend(Protocol):
    """What one MCP server serves, as it reaches it."""

    @property
    def surface(self) -> Surface:
        """The server's face: instructions, status resource and prompt, ``form_ask`` or not."""
        ...

    async def tools(self) -> list[JsonDict]:
        """The tools in MCP's ``tools/list`` shape (name, description, inputSchema).
        ``McpBackendUnavailable`` when they cannot be read."""
        ...

    async def call(
        self, tool: str, arguments: Mapping[str, Any], tool_call_id: str, chat: str | None = None
    ) -> JsonDict:
        """The result of one tool call, every failure as data. ``chat``: the chat the id is
        recorded for (``formwork.mcp.tools.chat_id``; the builder's, which records ids per
        chat; a conversation's ids are the conversation's, so its backends ignore it)."""
        ...

    async def status(self) -> list[str]:
        """The status resource's lines (empty when there is nothing to report: the server
        then shows ``surface.empty``). ``McpBackendUnavailable`` when they cannot be read."""
        ...


class FormsBackend(McpBackend, Protocol):
    """One principal's conversation (the form tools; the status lines of its open forms)."""

    @property
    def conversation_id(self) -> str: ...


class FormServiceBackend:
    """The ``FormService`` of this process, for a verified caller.

    The service is synchronous (its store is DynamoDB or memory): a call runs on the event
    loop's thread, which serves one request per Lambda invocation anyway."""

    def __init__(
        self, service: FormService, caller: Caller, observe: Observer | None = None
    ) -> None:
        self.service = service
        self.caller = caller
        self.observe = observe

    @property
    def conversation_id(self) -> str:
        return self.caller.conversation_id

    @property
    def surface(self) -> Surface:
        return conversation_surface(self.caller.conversation_id)

    async def tools(self) -> list[JsonDict]:
        return tool_definitions("mcp")

    async def call(
        self, tool: str, arguments: Mapping[str, Any], tool_call_id: str, chat: str | None = None
    ) -> JsonDict:
        # checked once, by the shell: the conversation id by the route's type, the tool by the
        # server (one it serves), the id by formwork.mcp.tools.tool_call_id (made usable)
        checked = typed_call(self.caller, tool, tool_call_id)
        result = self.service.call_checked(checked, dict(arguments))
        if self.observe is not None:
            self.observe(tool, result)
        return result

    async def status(self) -> list[str]:
        return self.service.conversation_status(self.caller) or []
