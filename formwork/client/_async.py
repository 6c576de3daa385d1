"""``AsyncFormwork``: the asyncio client, ``Formwork``'s twin (the same requests, answers,
retries and errors; ``formwork.client._wire`` holds what they share)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import TracebackType
from typing import Any

import httpx

from formwork.client import _wire
from formwork.client.errors import RequestRefused
from formwork.client.models import ConversationStatus, ToolResult
from formwork.client.retry import Retry


class AsyncFormwork:
    """``Formwork`` for asyncio: the same arguments, methods, answers, retries and errors,
    awaited (``transport`` is an ``httpx.AsyncBaseTransport``, ``sleep`` a coroutine).

    Use it as an async context manager, or ``await aclose()``: it holds a connection pool."""

    def __init__(
        self,
        base_url: str,
        token: _wire.Token | None = None,
        *,
        timeout: float | httpx.Timeout = _wire.DEFAULT_TIMEOUT,
        retry: Retry | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        headers: Mapping[str, str] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        new_id: Callable[[], str] = _wire.new_tool_call_id,
    ) -> None:
        self.retry = retry if retry is not None else Retry()
        self.token = token
        self.sleep = sleep
        self.new_id = new_id
        self._http = httpx.AsyncClient(
            base_url=base_url,
            timeout=timeout,
            transport=transport,
            headers={"Accept": "application/json", **(headers or {})},
        )

    @property
    def base_url(self) -> str:
        return str(self._http.base_url)

    async def tools(
        self, format: str = "generic", *, forms: str | Sequence[str] | None = None
    ) -> list[dict[str, Any]]:
        """The tool definitions in ``format``'s shape (``generic``, ``openai``,
        ``openai-responses``, ``anthropic``, ``bedrock``, ``mcp``, the strict ``openai-strict``
        and ``openai-responses-strict``, or any other the API serves), in surface order.

        ``forms`` goes only with a strict format: the form ids (or spellings) the strict tools
        are typed for, at most 20; without it, every form the caller can start. Give the model's
        calls back with the same ``format`` (``call(..., format=...)``). ``RequestRefused``
        (``bad_request``) for a format the API does not serve, ``forms`` with a format that is
        not strict, a form the caller cannot start, or one strict mode cannot type."""
        attempts = _wire.Attempts(self.retry, "GET /tools")
        query = _wire.tools_query(format, forms)
        answer = await self._send(attempts, "GET", "tools", params=query)
        return _wire.tool_list(answer)

    async def call(
        self,
        conversation_id: str,
        tool: str,
        input: Mapping[str, Any] | None = None,
        tool_call_id: str | None = None,
        *,
        format: str | None = None,
    ) -> ToolResult:
        """Run one tool call in the caller's conversation: ``input`` as the model produced it,
        under ``tool_call_id`` (the model's id for the call; a fresh one when None). A
        failed send and a ``busy`` result are sent again under the same id (a replay, never
        a second write), within the retry policy.

        ``format`` is the one the model was given the tools in (``tools(format=...)``). Name
        it for a strict format: strict mode makes the model send every field id, ``null``
        where the person said nothing, and with the format the API leaves those ``null``
        answers out; without it, each is refused as a ``null`` answer.

        A refusal of the call is data (``ok`` false); raises ``AuthError``,
        ``RequestRefused`` (an unknown tool, an envelope the API refuses) and
        ``ServiceUnavailable`` (no answer after the retries: the call may have been applied;
        its ``tool_call_id`` is the one to send it again under)."""
        call_id = tool_call_id if tool_call_id is not None else self.new_id()
        attempts = _wire.Attempts(
            self.retry, f"{tool} ({call_id})", tool_call_id=call_id, retry_busy=True
        )
        body = _wire.call_body(call_id, input)
        path = _wire.tool_path(conversation_id, tool)
        answer = await self._send(
            attempts, "POST", path, params=_wire.call_query(format), json=body
        )
        return _wire.result_of(answer, attempts)

    async def builder_tools(self, format: str = "generic") -> list[dict[str, Any]]:
        """The builder tools (``docs/builder.md``) in ``format``'s shape (the shapes of
        ``tools`` but its strict ones), in the order a builder meets them. ``RequestRefused``
        (``bad_request``) for a format the API does not serve."""
        attempts = _wire.Attempts(self.retry, "GET /builder/tools")
        params = {"format": format}
        answer = await self._send(attempts, "GET", _wire.BUILDER_TOOLS_PATH, params=params)
        return _wire.tool_list(answer, "GET /builder/tools")

    async def builder_call(
        self,
        form_id: str,
        tool: str,
        input: Mapping[str, Any] | None = None,
        tool_call_id: str | None = None,
        *,
        selection: Mapping[str, str] | None = None,
        cancelled: bool = False,
        chat_id: str | None = None,
    ) -> ToolResult:
        """Run one builder tool call on the caller's tenant's draft of ``form_id``, under
        ``tool_call_id`` (a fresh one when None) in the chat ``chat_id`` (the builder records
        an id as its chat's; when None, a fresh chat for this call alone): the same retries as
        ``call`` (a failed send and ``busy`` are sent again under the same ids: a replay,
        never a second edit).
        ``selection`` is the editor's (``{"field": ...}`` or ``{"step": ...}``), for the edits
        that leave out their field or step; ``cancelled`` records the call as cancelled (the
        person pressed Stop) and applies nothing.

        The result is the builder's: a sentence, or a refusal as data (``ok`` false; another
        tenant's draft is ``no_draft``, like a missing one). Raises as ``call`` does
        (``RequestRefused`` ``unknown_tool`` for a tool that is not a builder tool)."""
        call_id = tool_call_id if tool_call_id is not None else self.new_id()
        attempts = _wire.Attempts(
            self.retry, f"{tool} on {form_id} ({call_id})", tool_call_id=call_id, retry_busy=True
        )
        chat = chat_id if chat_id is not None else self.new_id()
        body = _wire.builder_call_body(call_id, chat, input, selection, cancelled)
        path = _wire.builder_tool_path(form_id, tool)
        answer = await self._send(attempts, "POST", path, json=body)
        return _wire.result_of(answer, attempts, builder=True)

    async def status(self, conversation_id: str) -> ConversationStatus:
        """The status lines of the caller's open forms in the conversation (empty when there
        are none, or the caller has no form there)."""
        attempts = _wire.Attempts(self.retry, f"status of {conversation_id!r}")
        try:
            answer = await self._send(attempts, "GET", _wire.status_path(conversation_id))
        except RequestRefused as refused:
            if _wire.is_no_forms(refused):
                return ConversationStatus(conversation_id=conversation_id, lines=[])
            raise
        return _wire.status_of(answer, attempts)

    async def _send(
        self,
        attempts: _wire.Attempts,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        json: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        for wait in attempts:
            if wait:
                await self.sleep(wait)
            try:
                response = await self._http.request(
                    method, path, params=params, json=json, headers=self._auth()
                )
            except httpx.HTTPError as failure:
                attempts.failed(failure)
                continue
            answer = attempts.answered(response)
            if answer is not None:
                return answer
        attempts.give_up()

    def _auth(self) -> dict[str, str]:
        if self.token is None:
            return {}
        return _wire.bearer(self.token() if callable(self.token) else self.token)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncFormwork:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self.aclose()
