"""A typed client for Formwork's tool API, on httpx (``pip install 'formwork[client]'``).

``Formwork`` (blocking) and ``AsyncFormwork`` (asyncio) do the three things an agent host
needs (``docs/clients.md``)::

    with Formwork("http://127.0.0.1:3000", token="dev:alice") as api:
        tools = api.tools(format="openai")                   # the vendor's tool shapes
        result = api.call("chat-9", "form_start", {"form": "travel-claim"}, "call_1")
        lines = api.status("chat-9").lines                   # for the system prompt

OpenAI's strict mode is typed per form: ``api.tools(format="openai-strict",
forms=["travel-claim"])``, and each call sent back with ``format="openai-strict"``, so the
``null`` answers strict mode makes the model send are read as not given.

A builder agent's calls go the same way: ``builder_tools(format)`` and
``builder_call(form_id, tool, input, tool_call_id, selection=..., cancelled=...)`` on the
tenant's draft of ``form_id`` (``docs/builder.md``).

A tool's refusal is data (``ToolResult.ok`` false, with ``error``, ``message``, ``hint``);
what no change of arguments can fix raises a ``ClientError``. A failed send and a ``busy``
result are sent again under the same tool-call id, so a retry is a replay, never a second
write (``formwork.client.retry``).

``Status``, the old name of ``ConversationStatus``, still imports, with a
``DeprecationWarning`` (it read as an instance's status, ``forms.statuses.Status``).
"""

import warnings
from typing import TYPE_CHECKING, Any

from formwork.client._async import AsyncFormwork
from formwork.client._sync import Formwork
from formwork.client._wire import DEFAULT_TIMEOUT, Token, new_tool_call_id
from formwork.client.errors import AuthError, ClientError, RequestRefused, ServiceUnavailable
from formwork.client.models import BUSY, ConversationStatus, ToolResult
from formwork.client.retry import NO_RETRY, Retry

__all__ = [
    "BUSY",
    "DEFAULT_TIMEOUT",
    "NO_RETRY",
    "AsyncFormwork",
    "AuthError",
    "ClientError",
    "ConversationStatus",
    "Formwork",
    "RequestRefused",
    "Retry",
    "ServiceUnavailable",
    "Token",
    "ToolResult",
    "new_tool_call_id",
]

if TYPE_CHECKING:
    Status = ConversationStatus
    """Deprecated: ``ConversationStatus``."""


def __getattr__(name: str) -> Any:
    """``Status``, the deprecated name of ``ConversationStatus``, with a warning."""
    if name == "Status":
        warnings.warn(
            "formwork.client.Status is deprecated: use formwork.client.ConversationStatus",
            DeprecationWarning,
            stacklevel=2,
        )
        return ConversationStatus
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
