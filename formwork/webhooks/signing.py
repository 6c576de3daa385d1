"""The signature scheme both directions share, what a source may ask for, and the inbound body.

A signed request carries three headers::

    X-Formwork-Timestamp: 1741597200                 (unix seconds, when it was signed)
    X-Formwork-Delivery:  d_01HQ...                  (unique per delivery; the same on retries)
    X-Formwork-Signature: v1=<hex>[, v1=<hex> ...]   (HMAC-SHA256 of "{timestamp}.{body}")

``v1`` is the lower-case hex HMAC-SHA256, keyed with the shared secret (UTF-8), of the ASCII
timestamp, a dot and the raw body bytes. A sender rotating its secret sends one ``v1=`` per
secret; a receiver holding several secrets accepts any one match. Entries with another scheme
tag are ignored, so a future ``v2`` can be sent alongside.

``verify`` checks the signature (constant-time comparisons, every candidate compared) and then
that the timestamp is within a tolerance of ``now``. A proven request may still ask for more
than its source may do: ``SourceLimits`` names the tenants and forms each source may start
sessions for, and ``SourceLimits.check`` refuses the rest (``NotAllowed``). ``WebhookStart`` is
the body of ``POST /webhooks/{source}``; ``tool_call_id`` the id its ``form_start`` runs under.

Nothing here reads a clock or draws randomness: timestamps, ``now`` and secrets are arguments.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator

from forms.principals import tenant_of

SCHEME = "v1"
TIMESTAMP_HEADER = "X-Formwork-Timestamp"
SIGNATURE_HEADER = "X-Formwork-Signature"
DELIVERY_HEADER = "X-Formwork-Delivery"
EVENT_HEADER = "X-Formwork-Event"

DEFAULT_TOLERANCE = 300
"""Seconds a signed timestamp may be away from the receiver's clock, either way."""

MAX_SIGNATURE_HEADER = 1024
MIN_SECRET_LENGTH = 16
MAX_METADATA_BYTES = 8192

SOURCE_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,31}$"
"""A source name: the path segment, and the last part of its secret's name."""
DELIVERY_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,79}$"
"""A delivery id (UUIDs, ``evt_...`` ids fit). Short enough that the tool-call id
``webhook:{source}:{delivery}`` stays within 128 characters."""
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$"
"""Conversation ids, as ``forms.app.service.check_id`` accepts them."""
TENANT_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}"
"""A tenant name, the part of a principal before the ``/`` (as ``functions.auth`` reads it)."""
PRINCIPAL_PATTERN = rf"^(?:{TENANT_PATTERN}/)?[A-Za-z0-9][A-Za-z0-9._:@|+=-]{{0,127}}$"
"""``sub`` or ``tenant/sub``, exactly the principals ``functions.auth`` derives from a token."""
FORM_ID_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}"
"""A form id as a source's allowed forms may name it."""

_SOURCE = re.compile(SOURCE_PATTERN)
_DELIVERY = re.compile(DELIVERY_PATTERN)
_TIMESTAMP = re.compile(r"^\d{1,12}$")
_HEX = re.compile(r"^[0-9a-fA-F]{64}$")


# ---------------------------------------------------------------------------- errors


class WebhookRefused(Exception):
    """A webhook request refused; ``code`` is stable and machine-readable."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class SignatureRefused(WebhookRefused):
    """The request is not proven to come from the source now (answered with 401)."""


class NotAllowed(WebhookRefused):
    """A proven request asks for more than its source may do (answered with 403)."""


# ---------------------------------------------------------------------------- source limits

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


# ---------------------------------------------------------------------------- signatures


def _key(secret: str | bytes) -> bytes:
    return secret.encode("utf-8") if isinstance(secret, str) else secret


def signature(secret: str | bytes, timestamp: int, body: bytes) -> str:
    """The hex HMAC-SHA256 of ``"{timestamp}.{body}"`` under ``secret``."""
    signed = str(int(timestamp)).encode("ascii") + b"." + body
    return hmac.new(_key(secret), signed, hashlib.sha256).hexdigest()


def sign(secret: str | bytes, timestamp: int, body: bytes) -> str:
    """The ``X-Formwork-Signature`` value for one secret: ``v1=<hex>``."""
    return f"{SCHEME}={signature(secret, timestamp, body)}"


def sign_all(keys: Sequence[str | bytes], timestamp: int, body: bytes) -> str:
    """The header value with one ``v1=`` per secret (a sender rotating its secret)."""
    return ", ".join(sign(key, timestamp, body) for key in keys)


def parse_timestamp(value: str | None) -> int:
    """The unix-seconds timestamp a header holds, or ``SignatureRefused``."""
    if value is None or not value.strip():
        raise SignatureRefused("missing_timestamp", f"the {TIMESTAMP_HEADER} header is missing")
    if not _TIMESTAMP.fullmatch(value.strip()):
        raise SignatureRefused(
            "bad_timestamp", f"{TIMESTAMP_HEADER} must be whole unix seconds, such as 1741597200"
        )
    return int(value.strip())


def candidates(header: str | None) -> list[str]:
    """The ``v1`` signatures a header carries (lower-case hex), or ``SignatureRefused``."""
    if header is None or not header.strip():
        raise SignatureRefused("missing_signature", f"the {SIGNATURE_HEADER} header is missing")
    if len(header) > MAX_SIGNATURE_HEADER:
        raise SignatureRefused("bad_signature", f"{SIGNATURE_HEADER} is too long")
    found: list[str] = []
    for part in header.split(","):
        scheme, _, value = part.strip().partition("=")
        if scheme.strip() != SCHEME:
            continue
        value = value.strip()
        if not _HEX.fullmatch(value):
            raise SignatureRefused(
                "bad_signature", f"{SIGNATURE_HEADER} entries look like v1=<64 hex digits>"
            )
        found.append(value.lower())
    if not found:
        raise SignatureRefused("bad_signature", f"{SIGNATURE_HEADER} has no v1= signature")
    return found


def signature_matches(keys: Sequence[str | bytes], given: Sequence[str], signed: bytes) -> bool:
    """Whether any ``given`` hex signature is the HMAC of ``signed`` under any key.

    Every pair is compared with ``hmac.compare_digest`` and none is skipped, so the time taken
    says nothing about which comparison, or how much of one, matched.
    """
    matched = False
    for key in keys:
        expected = hmac.new(_key(key), signed, hashlib.sha256).hexdigest()
        for candidate in given:
            matched |= hmac.compare_digest(expected, candidate)
    return matched


def verify(
    keys: Sequence[str | bytes],
    header: str | None,
    timestamp: str | None,
    body: bytes,
    *,
    now: float,
    tolerance: int = DEFAULT_TOLERANCE,
) -> int:
    """Check a signed request; return its timestamp, or raise ``SignatureRefused``.

    ``keys`` are the secrets the source may have signed with (none: an unknown source, refused
    exactly like a bad signature). The signature is checked first, then the timestamp against
    ``now`` (seconds), so nothing is said about timing to an unauthenticated sender.
    """
    given = candidates(header)
    moment = parse_timestamp(timestamp)
    signed = str(moment).encode("ascii") + b"." + body
    if not keys or not signature_matches(keys, given, signed):
        raise SignatureRefused(
            "bad_signature", "the signature does not match (or the source is not known)"
        )
    if abs(now - moment) > tolerance:
        raise SignatureRefused(
            "stale_timestamp",
            f"the timestamp is more than {tolerance} seconds from now; sign each attempt afresh",
        )
    return moment


def signed_digest(timestamp: int, body: bytes) -> str:
    """What identifies one signed request, whatever its delivery id: sha256 of what is signed."""
    return hashlib.sha256(str(int(timestamp)).encode("ascii") + b"." + body).hexdigest()


def check_source(source: str) -> bool:
    return isinstance(source, str) and _SOURCE.fullmatch(source) is not None


def check_delivery(delivery: str | None) -> bool:
    return isinstance(delivery, str) and _DELIVERY.fullmatch(delivery) is not None


def check_secret(secret: str) -> bool:
    """A usable secret: text of at least ``MIN_SECRET_LENGTH`` characters."""
    return isinstance(secret, str) and len(secret) >= MIN_SECRET_LENGTH


# ---------------------------------------------------------------------------- inbound payload


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
