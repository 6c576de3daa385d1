"""What an inbound source may ask for, and the body it asks with.

A request proven by its signature (``formwork.webhooks.signing``) may still ask for more than
its source may do: ``SourceLimits`` names the tenants and forms each source may start sessions
for, and ``SourceLimits.check`` refuses the rest (``NotAllowed``). ``WebhookStart`` is the body
of ``POST /webhooks/{source}``; ``tool_call_id`` the id its ``form_start`` runs under. The
patterns are the shapes of the names a request carries (source, delivery id, principal,
conversation id) and a source's limits name (tenants, forms).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator

from forms.principals import tenant_of
from formwork.webhooks.errors import NotAllowed

MAX_METADATA_BYTES = 8192

SOURCE_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,31}$"
"""A source name: the path segment, and the last part of its secret's name."""
DELIVERY_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,79}$"
"""A delivery id (UUIDs, ``evt_...`` ids fit). Short enough that the tool-call id
``webhook:{source}:{delivery}`` stays within 128 characters."""
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$"
"""Conversation ids, as ``forms.app.service.check_id`` accepts them."""
TENANT_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}"
"""A tenant name, the part of a principal before the ``/`` (as ``formwork.aws.auth`` reads it)."""
PRINCIPAL_PATTERN = rf"^(?:{TENANT_PATTERN}/)?[A-Za-z0-9][A-Za-z0-9._:@|+=-]{{0,127}}$"
"""``sub`` or ``tenant/sub``, exactly the principals ``formwork.aws.auth`` derives from a token."""
FORM_ID_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}"
"""A form id as a source's allowed forms may name it."""

_SOURCE = re.compile(SOURCE_PATTERN)
_DELIVERY = re.compile(DELIVERY_PATTERN)


def check_source(source: str) -> bool:
    return isinstance(source, str) and _SOURCE.fullmatch(source) is not None


def check_delivery(delivery: str | None) -> bool:
    return isinstance(delivery, str) and _DELIVERY.fullmatch(delivery) is not None


ANY = "*"
"""In a source's limits: any tenant (principals without one too), or any form."""


principal_tenant = tenant_of
"""The tenant of ``tenant/sub``; None for a bare ``sub`` (the engine's one reading of it)."""


@dataclass(frozen=True, slots=True)
class SourceLimits:
    """What one inbound source may start sessions for.

    ``tenants``: the tenants whose principals (``tenant/sub``) it may name; None means any
    principal, with or without a tenant, and is only ever set on purpose (``"*"`` in the
    configuration). ``forms``: the form ids it may start; None means any registered form.
    """

    tenants: frozenset[str] | None
    forms: frozenset[str] | None

    def check(self, source: str, principal: str, form_id: str) -> None:
        """Raise ``NotAllowed`` unless ``source`` may start ``form_id`` for ``principal``."""
        if self.tenants is not None:
            tenant = principal_tenant(principal)
            if tenant is None or tenant not in self.tenants:
                whose = f"tenant {tenant!r}" if tenant is not None else "no tenant"
                raise NotAllowed(
                    "tenant_not_allowed",
                    f"source {source!r} may not start sessions for principals of {whose}",
                )
        if self.forms is not None and form_id not in self.forms:
            raise NotAllowed(
                "form_not_allowed", f"source {source!r} may not start the form {form_id!r}"
            )


class WebhookStart(BaseModel):
    """The body of ``POST /webhooks/{source}``: start a form session for a principal.

    ``values`` are seed answers (each validated like any other write; a bad one is rejected
    and reported, the session still starts). ``metadata`` is the sender's own (a CRM record
    id, say): kept with the delivery record, never shown to the agent.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    form: Annotated[str, Field(min_length=1, max_length=64, description="The form id")]
    principal: Annotated[
        str,
        Field(
            pattern=PRINCIPAL_PATTERN,
            description='Whose session it is: the JWT "sub", or "tenant/sub" when the '
            "deployment names a tenant claim",
        ),
    ]
    conversation_id: Annotated[
        str, Field(pattern=ID_PATTERN, description="The conversation the agent will hold")
    ]
    values: dict[str, JsonValue] = Field(default_factory=dict)
    metadata: dict[str, JsonValue] = Field(default_factory=dict)

    @field_validator("metadata")
    @classmethod
    def _small_metadata(cls, value: dict[str, JsonValue]) -> dict[str, JsonValue]:
        if len(json.dumps(value, separators=(",", ":"))) > MAX_METADATA_BYTES:
            raise ValueError(f"metadata is over {MAX_METADATA_BYTES} bytes as JSON")
        return value

    def digest(self) -> str:
        """sha256 of the canonical JSON of the payload: equal content, equal digest, whatever
        the key order or spacing the sender used."""
        canonical = json.dumps(
            self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def tool_call_id(source: str, delivery: str) -> str:
    """The tool-call id a webhook's ``form_start`` runs under: a re-run replays, never repeats."""
    return f"webhook:{source}:{delivery}"
