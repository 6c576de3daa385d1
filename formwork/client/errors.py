"""What the client raises. A tool's refusal is never here: it is a ``ToolResult`` with
``ok`` false (a bad value, an unknown field, a closed form, ``busy`` once the retries are
spent), for the model to read. These are the failures no change of the tool's arguments can
fix, so the caller, not the model, has to handle them.

::

    ClientError
    ├── AuthError           401, 403: the token is missing, wrong, expired, or not allowed
    ├── RequestRefused      any other 4xx: the envelope, the route, an unknown tool or format
    └── ServiceUnavailable  no usable answer after the retries (network, timeouts, 5xx, 429)
"""

from __future__ import annotations

from typing import Any


class ClientError(Exception):
    """The root of the client's errors. ``status`` is the HTTP status (None when nothing
    answered), ``code`` the API's ``error`` code when its answer had one, ``body`` the
    answer's JSON object when it was one."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        body: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.body = body


class AuthError(ClientError):
    """401 (no token, or one the API does not accept) or 403 (the token is valid, but not
    for this). Not retried: the same token would get the same answer."""


class RequestRefused(ClientError):
    """A 4xx other than 401 and 403: the request itself is wrong (no such route or tool,
    an unknown format, a malformed id, an envelope the API refuses, a body too large). Not
    retried. ``code`` says which (``unknown_tool``, ``bad_request``, ``invalid_request``,
    ...)."""


class ServiceUnavailable(ClientError):
    """No usable answer: the API could not be reached, timed out, answered 5xx or 429 on every
    attempt, or answered with something that is not its JSON. For a tool call, it may or may
    not have been applied: ``tool_call_id`` is the id it was sent under, and sending the same
    call again under it later is safe (the API replays a call it applied)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        attempts: int = 1,
        tool_call_id: str | None = None,
    ) -> None:
        super().__init__(message, status=status)
        self.attempts = attempts
        self.tool_call_id = tool_call_id
