"""The outbound event: what a receiver gets when a form closes, as exact bytes and headers.

``FormEvent`` is the body, ``event_body`` the bytes sent (and signed), ``delivery_headers``
the headers of one attempt (Standard Webhooks', and the deprecated ``X-Formwork-*`` ones).
The delivery id is the hook occurrence's idempotency key, the same on every retry, so a
receiver deduplicates on it. Sending is the shell's
(``functions.notify.deliver``); nothing here does IO or reads a clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, JsonValue, TypeAdapter

from formwork.webhooks.signing import (
    DELIVERY_HEADER,
    EVENT_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    sign_all,
    standard_headers,
)

if TYPE_CHECKING:
    from forms.state import HookContext

EventType = Literal["form.completed", "form.terminated"]
_JSON = TypeAdapter(dict[str, Any])


class FormEvent(BaseModel):
    """What an outbound webhook receiver gets when a form closes.

    ``delivery`` is the hook occurrence's idempotency key: the same on every retry of that
    notification, so a receiver deduplicates on it (it is also the ``X-Formwork-Delivery``
    header).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    event: EventType
    delivery: str
    form: str
    instance: str
    principal: str
    conversation_id: str
    status: Literal["completed", "terminated"]
    closed_reason: str | None = None
    values: dict[str, JsonValue]
    """The live answers by field id (held and declined answers are not included)."""
    occurred_at: datetime


def live_values(answers: Mapping[str, Any]) -> dict[str, JsonValue]:
    """Typed answers (dates, decimals, enums) as JSON values, in the order given."""
    dumped: dict[str, JsonValue] = _JSON.dump_python(dict(answers), mode="json")
    return dumped


def form_event(
    context: HookContext,
    *,
    occurred_at: datetime,
    status: Literal["completed", "terminated"] = "completed",
    closed_reason: str | None = None,
) -> FormEvent:
    """The notification for the hook occurrence ``context`` describes."""
    return FormEvent(
        event="form.completed" if status == "completed" else "form.terminated",
        delivery=context.key,
        form=context.form_id,
        instance=context.instance_id,
        principal=context.principal,
        conversation_id=context.conversation_id,
        status=status,
        closed_reason=closed_reason,
        values=live_values(context.answers),
        occurred_at=occurred_at,
    )


def event_body(event: FormEvent) -> bytes:
    """The exact bytes sent (and signed): compact JSON, keys in model order."""
    return event.model_dump_json().encode("utf-8")


def delivery_headers(
    event: FormEvent,
    body: bytes,
    secret: str | bytes | Sequence[str | bytes],
    *,
    timestamp: int,
) -> dict[str, str]:
    """The headers of one delivery attempt (sign each attempt with its own timestamp).

    The Standard Webhooks headers (``webhook-id`` is the delivery id), and until
    ``LEGACY_HEADERS_UNTIL`` the deprecated ``X-Formwork-*`` ones beside them. ``secret`` may
    be several (a rotation): each signs, so a receiver holding any one of them verifies."""
    keys = [secret] if isinstance(secret, str | bytes) else list(secret)
    return {
        "Content-Type": "application/json",
        **standard_headers(keys, event.delivery, timestamp, body),
        TIMESTAMP_HEADER: str(int(timestamp)),
        SIGNATURE_HEADER: sign_all(keys, timestamp, body),
        DELIVERY_HEADER: event.delivery,
        EVENT_HEADER: event.event,
    }
