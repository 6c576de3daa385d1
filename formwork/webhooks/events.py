"""The outbound event: what a receiver gets when a form closes, as exact bytes and headers.

``FormEvent`` is the body, ``event_body`` the bytes sent (and signed), ``delivery_headers``
the headers of one attempt (Standard Webhooks', and the deprecated ``X-Formwork-*`` ones).
Three events: ``form.completed``, ``form.terminated`` (terminated or abandoned, with the
reason) and ``form.handed_over`` (closed by a handover to another form, which is not a
failure: ``HandedOverTo`` names the instance that took over and what travelled).
The delivery id is the hook occurrence's idempotency key, the same on every retry, so a
receiver deduplicates on it. Sending is the shell's
(``formwork.aws.notify.deliver``); nothing here does IO or reads a clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, TypeAdapter

from formwork.webhooks.signing import (
    DELIVERY_HEADER,
    EVENT_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    sign_all,
    standard_headers,
)

if TYPE_CHECKING:
    from forms.instance import HandoverLink
    from forms.state import HookContext

EventType = Literal["form.completed", "form.terminated", "form.handed_over"]
Ending = Literal["completed", "terminated", "handed_over"]
"""How the form ended, as the event's ``status`` says it (abandoned is sent as terminated)."""
_JSON = TypeAdapter(dict[str, Any])
_EVENTS: dict[Ending, EventType] = {
    "completed": "form.completed",
    "terminated": "form.terminated",
    "handed_over": "form.handed_over",
}


class HandedOverTo(BaseModel):
    """Where a form handed over went, in a ``form.handed_over`` event: the form and instance
    that took over in the same conversation, the reason the handover gave (None: none said),
    the source's field ids whose answers (or declines) were carried across, and per field
    left behind, why it was not carried (``len`` of each is the count)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    form: str
    instance: str
    reason: str | None = None
    carried: tuple[str, ...] = ()
    not_carried: dict[str, str] = Field(default_factory=dict)

    @classmethod
    def of(cls, link: HandoverLink) -> HandedOverTo:
        """The receiver's view of the instance's ``handed_to`` link."""
        return cls(
            form=link.form,
            instance=link.instance,
            reason=link.reason,
            carried=link.carried,
            not_carried=dict(link.dropped),
        )


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
    status: Ending
    closed_reason: str | None = None
    values: dict[str, JsonValue]
    """The live answers by field id (held and declined answers are not included)."""
    occurred_at: datetime
    handed_over_to: HandedOverTo | None = None
    """Set on ``form.handed_over`` only; the other events' bodies do not carry the key."""


def live_values(answers: Mapping[str, Any]) -> dict[str, JsonValue]:
    """Typed answers (dates, decimals, enums) as JSON values, in the order given."""
    dumped: dict[str, JsonValue] = _JSON.dump_python(dict(answers), mode="json")
    return dumped


def form_event(
    context: HookContext,
    *,
    occurred_at: datetime,
    status: Ending = "completed",
    closed_reason: str | None = None,
    handed_over_to: HandedOverTo | None = None,
) -> FormEvent:
    """The notification for the hook occurrence ``context`` describes; ``handed_over_to``
    only (and always) with ``status="handed_over"``."""
    if (status == "handed_over") != (handed_over_to is not None):
        raise ValueError("a handed_over event, and only one, says where the form went")
    return FormEvent(
        event=_EVENTS[status],
        delivery=context.key,
        form=context.form_id,
        instance=context.instance_id,
        principal=context.principal,
        conversation_id=context.conversation_id,
        status=status,
        closed_reason=closed_reason,
        values=live_values(context.answers),
        occurred_at=occurred_at,
        handed_over_to=handed_over_to,
    )


def event_body(event: FormEvent) -> bytes:
    """The exact bytes sent (and signed): compact JSON, keys in model order; an event that
    is not a handover has no ``handed_over_to`` key (its body is as it was before the key)."""
    dropped = {"handed_over_to"} if event.handed_over_to is None else None
    return event.model_dump_json(exclude=dropped).encode("utf-8")


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
