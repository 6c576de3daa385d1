"""What the sync and async clients share, without doing any IO: the routes, the request
bodies, how an answer is read, and the attempts of one request under a retry policy.

``Attempts`` drives one request: iterate it for the wait before each send (0 before the
first), tell it what happened (``failed`` for a transport error, ``answered`` for a
response), and when the iteration ends without an answer, ``give_up`` raises. The clients
only send and sleep.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NoReturn
from urllib.parse import quote

import httpx
from pydantic import ValidationError

from formwork.client.errors import AuthError, ClientError, RequestRefused, ServiceUnavailable
from formwork.client.models import BUSY, ConversationStatus, ToolResult, read_result
from formwork.client.retry import Retry

_log = logging.getLogger("formwork.client")

Token = str | Callable[[], str]
"""A bearer token, or a function that gives the current one (read before every send, so an
expiring JWT can be refreshed)."""
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=5.0)
"""Per network operation (httpx's timeouts): 5 s to connect, 30 s for the rest."""
TRANSIENT = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)
"""Transport errors worth another attempt: timeouts, connections refused, reset or closed,
and a server that broke off mid-answer. Others (an unsupported scheme, a bad URL) raise."""


def new_tool_call_id() -> str:
    """A fresh tool-call id (``fwcall_`` and 32 hex digits: valid for the API)."""
    return "fwcall_" + uuid.uuid4().hex


def tool_path(conversation_id: str, tool: str) -> str:
    return f"conversations/{quote(conversation_id, safe='')}/tools/{quote(tool, safe='')}"


def status_path(conversation_id: str) -> str:
    return f"conversations/{quote(conversation_id, safe='')}/status"


BUILDER_TOOLS_PATH = "builder/tools"


def builder_tool_path(form_id: str, tool: str) -> str:
    return f"builder/forms/{quote(form_id, safe='')}/tools/{quote(tool, safe='')}"


def tools_query(format: str, forms: str | Sequence[str] | None) -> dict[str, str]:
    """The query of ``GET /tools``: the shape, and the forms a strict export is typed for
    (``forms``: ids, or one comma-separated string), sent comma-separated. The API judges
    the pair (``forms`` with a format that is not strict is its ``bad_request``), so a format
    it adds later needs no change here."""
    query = {"format": format}
    if forms is not None:
        query["forms"] = forms if isinstance(forms, str) else ",".join(forms)
    return query


def call_query(format: str | None) -> dict[str, str] | None:
    """The query of a tool call: the format the model was given the tools in, when named. It
    matters for the strict formats, whose ``null`` answers in ``values`` the API reads as not
    given (strict mode makes the model send every field id); without it, a ``null`` answer is
    refused."""
    return {"format": format} if format is not None else None


def call_body(tool_call_id: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    return {"tool_call_id": tool_call_id, "input": dict(arguments or {})}


def builder_call_body(
    tool_call_id: str,
    chat_id: str,
    arguments: Mapping[str, Any] | None,
    selection: Mapping[str, str] | None,
    cancelled: bool,
) -> dict[str, Any]:
    """A builder call's envelope: the call's and its chat's ids, plus the editor's selection
    when there is one and ``cancelled`` when the person pressed Stop (left out otherwise, as
    the API's defaults)."""
    body = {**call_body(tool_call_id, arguments), "chat_id": chat_id}
    if selection:
        body["selection"] = dict(selection)
    if cancelled:
        body["cancelled"] = True
    return body


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def tool_list(answer: dict[str, Any], route: str = "GET /tools") -> list[dict[str, Any]]:
    """The ``tools`` of a ``GET /tools`` (or ``GET /builder/tools``) answer."""
    tools = answer.get("tools")
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        raise ServiceUnavailable(f"{route}: the answer has no list of tools")
    return tools


def result_of(answer: dict[str, Any], attempts: Attempts, *, builder: bool = False) -> ToolResult:
    """A tool call's answer as a ``ToolResult``, read tolerantly (``read_result``): keys a
    newer API sends that this client cannot type are kept as sent, and logged. ``builder``:
    a builder tool's answer (a read leads with ``ok`` and the draft, no sentence)."""
    try:
        result = read_result(answer, attempts.tool_call_id or "", attempts.made, builder=builder)
    except ValueError:
        raise ServiceUnavailable(
            f"{attempts.what}: the answer is not a tool result",
            status=200,
            attempts=attempts.made,
            tool_call_id=attempts.tool_call_id,
        ) from None
    if result.untyped:
        _log.info(
            "%s: kept as sent, not typed (from a newer API?): %s",
            attempts.what,
            ", ".join(result.untyped),
        )
    return result


def status_of(answer: dict[str, Any], attempts: Attempts) -> ConversationStatus:
    """A status route's answer as a ``ConversationStatus``."""
    try:
        return ConversationStatus.model_validate(answer)
    except ValidationError:
        raise ServiceUnavailable(
            f"{attempts.what}: the answer is not a conversation's status", status=200
        ) from None


def is_no_forms(error: RequestRefused) -> bool:
    """The status route's 404 for a conversation in which the caller has no form."""
    return error.status == 404 and error.code == "not_found"


def _json_object(response: httpx.Response) -> dict[str, Any] | None:
    try:
        loaded = response.json()
    except ValueError:
        return None
    return loaded if isinstance(loaded, dict) else None


class Attempts:
    """The attempts of one request (``what``, for messages) under ``retry``; ``retry_busy``
    for a tool call, whose ``busy`` result is sent again too (and returned as it is when the
    attempts are spent)."""

    def __init__(
        self,
        retry: Retry,
        what: str,
        *,
        tool_call_id: str | None = None,
        retry_busy: bool = False,
    ) -> None:
        self.retry = retry
        self.what = what
        self.tool_call_id = tool_call_id
        self.retry_busy = retry_busy
        self.made = 0
        self._last = ""
        self._last_status: int | None = None

    def __iter__(self) -> Iterator[float]:
        for n in range(self.retry.attempts):
            self.made = n + 1
            yield 0.0 if n == 0 else self.retry.delay(n - 1)

    @property
    def _more(self) -> bool:
        return self.made < self.retry.attempts

    def failed(self, error: httpx.HTTPError) -> None:
        """Nothing usable came back (httpx raised); raises unless another attempt may help."""
        if not isinstance(error, TRANSIENT):
            raise ClientError(f"{self.what}: {type(error).__name__}: {error}") from error
        self._note(f"{type(error).__name__}: {error}".rstrip(": "), None)

    def answered(self, response: httpx.Response) -> dict[str, Any] | None:
        """The answer's JSON object when it is final; None to try again. Raises the refusals
        (``AuthError``, ``RequestRefused``) and an answer that is not the API's."""
        status = response.status_code
        if status >= 500 or status == 429:
            self._note(f"HTTP {status}", status)
            return None
        body = _json_object(response)
        code = str(body["error"]) if body is not None and "error" in body else None
        message = str(body.get("message") or code or "") if body is not None else ""
        detail = f"{self.what}: HTTP {status}" + (f" {message}" if message else "")
        if status in (401, 403):
            raise AuthError(detail, status=status, code=code, body=body)
        if 400 <= status < 500:
            raise RequestRefused(detail, status=status, code=code, body=body)
        if not 200 <= status < 300 or body is None:
            raise ServiceUnavailable(
                f"{self.what}: HTTP {status}, not an answer of the Formwork API",
                status=status,
                attempts=self.made,
                tool_call_id=self.tool_call_id,
            )
        busy = body.get("ok") is False and body.get("error") == BUSY
        if self.retry_busy and busy and self._more:
            self._note(BUSY, status)
            return None
        return body

    def give_up(self) -> NoReturn:
        raise ServiceUnavailable(
            f"{self.what}: no answer after {self.made} attempt(s) ({self._last})",
            status=self._last_status,
            attempts=self.made,
            tool_call_id=self.tool_call_id,
        )

    def _note(self, why: str, status: int | None) -> None:
        self._last, self._last_status = why, status
        if self._more:
            _log.info(
                "%s: %s; sending it again (attempt %d of %d)",
                self.what,
                why,
                self.made + 1,
                self.retry.attempts,
            )
