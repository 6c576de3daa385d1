"""Signed webhooks, the pure part: signatures, payloads and the delivery log's rules.

Both directions use one scheme. A request carries three headers::

    X-Formwork-Timestamp: 1741597200                 (unix seconds, when it was signed)
    X-Formwork-Delivery:  d_01HQ...                  (unique per delivery; the same on retries)
    X-Formwork-Signature: v1=<hex>[, v1=<hex> ...]   (HMAC-SHA256 of "{timestamp}.{body}")

``v1`` is the lower-case hex HMAC-SHA256, keyed with the shared secret (UTF-8), of the ASCII
timestamp, a dot and the raw body bytes. A sender rotating its secret sends one ``v1=`` per
secret; a receiver holding several secrets accepts any one match. Entries with another scheme
tag are ignored, so a future ``v2`` can be sent alongside.

Inbound (``POST /webhooks/{source}``, ``functions.webhooks``): ``verify`` checks the signature
(constant-time comparisons, every candidate compared) and then that the timestamp is within a
tolerance of ``now``. The delivery id is not covered by the signature, so the delivery log
keeps two records: the delivery itself (``claim_delivery``: first writer wins, a re-delivery
of the same content returns the first outcome, other content under the same id is refused) and
a binding of each signed request to its delivery id (``bind_signature``), so a captured request
replayed under a fresh delivery id is refused too. A proven request may still ask for more
than its source may do: ``SourceLimits`` names the tenants and forms each source may start
sessions for, and ``SourceLimits.check`` refuses the rest (``NotAllowed``).

Outbound (a form that notifies a receiver when it closes): ``FormEvent`` is the body the
receiver gets, ``event_body`` its exact bytes and ``delivery_headers`` the headers to send.

Nothing here reads a clock or draws randomness: timestamps, ``now`` and secrets are arguments.
``DeliveryLog`` is a port; ``InMemoryDeliveryLog`` is its in-process adapter (the DynamoDB one
lives in ``functions.webhooks``).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import math
import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, TypeAdapter, field_validator

if TYPE_CHECKING:
    from forms.state import HookContext

SCHEME = "v1"
TIMESTAMP_HEADER = "X-Formwork-Timestamp"
SIGNATURE_HEADER = "X-Formwork-Signature"
DELIVERY_HEADER = "X-Formwork-Delivery"
EVENT_HEADER = "X-Formwork-Event"

DEFAULT_TOLERANCE = 300
"""Seconds a signed timestamp may be away from the receiver's clock, either way."""
DEFAULT_LEASE = timedelta(seconds=60)
"""How long a claimed delivery is left to its claimant before a retry may take it over
(longer than the function's timeout, so a live claimant is never overtaken)."""
DEFAULT_RETENTION = timedelta(days=7)
"""How long a delivery id is remembered (cover the sender's retry schedule)."""

MAX_SIGNATURE_HEADER = 1024
MIN_SECRET_LENGTH = 16
MAX_METADATA_BYTES = 8192

SOURCE_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,31}$"
"""A source name: the path segment, and the last part of its secret's name."""
DELIVERY_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,79}$"
"""A delivery id (UUIDs, ``evt_...`` ids fit). Short enough that the tool-call id
``webhook:{source}:{delivery}`` stays within 128 characters."""
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$"
"""Conversation ids, as ``forms.service.check_id`` accepts them."""
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


def principal_tenant(principal: str) -> str | None:
    """The tenant of ``tenant/sub``; None for a bare ``sub``."""
    tenant, slash, _ = principal.partition("/")
    return tenant if slash else None


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


# ---------------------------------------------------------------------------- delivery log


class DeliveryRecord(BaseModel):
    """What the log remembers about one delivery id of one source."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str
    delivery: str
    digest: str
    """``WebhookStart.digest()`` of the content first delivered under this id."""
    state: Literal["pending", "done"]
    version: int = 1
    """Compare-and-set counter: every change of the record stores ``version + 1``."""
    claimed_at: datetime
    lease_until: datetime
    expires_at: datetime
    outcome: dict[str, JsonValue] | None = None
    """The response body of the first successful handling (``done`` only)."""
    metadata: dict[str, JsonValue] = Field(default_factory=dict)


class DeliveryConflict(Exception):
    """A conditional write lost: ``current`` is what is stored now (None: nothing is)."""

    def __init__(self, current: DeliveryRecord | None) -> None:
        super().__init__("the delivery record changed")
        self.current = current


class DeliveryLog(ABC):
    """Where delivery ids and signed requests are remembered. Two atomic primitives."""

    @abstractmethod
    def get(self, source: str, delivery: str) -> DeliveryRecord | None:
        """The stored record (expired or not), or None."""

    @abstractmethod
    def put(self, record: DeliveryRecord, expected_version: int | None) -> None:
        """Store ``record`` if the stored record has ``expected_version`` (None: there is no
        stored record). Otherwise store nothing and raise ``DeliveryConflict`` with the
        record stored now."""

    @abstractmethod
    def bind(
        self, source: str, signed: str, delivery: str, *, expires_at: datetime, now: datetime
    ) -> str:
        """Bind the signed request ``signed`` to ``delivery`` unless it is bound (and not
        expired) to another one; return the delivery it is bound to after the call."""


class InMemoryDeliveryLog(DeliveryLog):
    """The delivery log in this process's memory (tests, a single local process)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: dict[tuple[str, str], DeliveryRecord] = {}
        self._bindings: dict[tuple[str, str], tuple[str, datetime]] = {}

    def get(self, source: str, delivery: str) -> DeliveryRecord | None:
        with self._lock:
            return self._records.get((source, delivery))

    def put(self, record: DeliveryRecord, expected_version: int | None) -> None:
        with self._lock:
            current = self._records.get((record.source, record.delivery))
            if (current.version if current else None) != expected_version:
                raise DeliveryConflict(current)
            self._records[(record.source, record.delivery)] = record

    def bind(
        self, source: str, signed: str, delivery: str, *, expires_at: datetime, now: datetime
    ) -> str:
        with self._lock:
            bound = self._bindings.get((source, signed))
            if bound is not None and bound[0] != delivery and bound[1] > now:
                return bound[0]
            self._bindings[(source, signed)] = (delivery, expires_at)
            return delivery

    def records(self) -> list[DeliveryRecord]:
        """Every stored record (for tests and inspection)."""
        with self._lock:
            return list(self._records.values())

    def bindings(self) -> dict[tuple[str, str], str]:
        with self._lock:
            return {k: v[0] for k, v in self._bindings.items()}


@dataclass(frozen=True, slots=True)
class Claimed:
    """This handler owns the delivery: do the work, then ``finish_delivery``."""

    record: DeliveryRecord


@dataclass(frozen=True, slots=True)
class Replay:
    """Already handled with the same content: answer with ``record.outcome``."""

    record: DeliveryRecord


@dataclass(frozen=True, slots=True)
class InProgress:
    """Another handler holds the claim: retry after ``retry_after`` seconds."""

    retry_after: int


@dataclass(frozen=True, slots=True)
class Reused:
    """The id was first used for different content: refused."""

    record: DeliveryRecord


Claim = Claimed | Replay | InProgress | Reused

_ROUNDS = 5


def decide(current: DeliveryRecord, digest: str, now: datetime) -> Claim | None:
    """What a stored record means for a delivery of ``digest`` at ``now``; None: take it over
    (it expired, or its claimant's lease ran out before it finished)."""
    if current.expires_at <= now:
        return None
    if current.digest != digest:
        return Reused(current)
    if current.state == "done":
        return Replay(current)
    if current.lease_until > now:
        return InProgress(max(1, math.ceil((current.lease_until - now).total_seconds())))
    return None


def claim_delivery(
    log: DeliveryLog,
    source: str,
    delivery: str,
    digest: str,
    *,
    now: datetime,
    metadata: Mapping[str, JsonValue] | None = None,
    lease: timedelta = DEFAULT_LEASE,
    retention: timedelta = DEFAULT_RETENTION,
) -> Claim:
    """Claim ``delivery`` for content ``digest``: first writer wins, once per id.

    One conditional write on the happy path. A claim whose lease ran out (its handler died
    between claiming and finishing) is taken over, compare-and-set, by the next delivery of
    the same content; that is safe because the work itself is idempotent by the tool-call id.
    """
    candidate = DeliveryRecord(
        source=source,
        delivery=delivery,
        digest=digest,
        state="pending",
        claimed_at=now,
        lease_until=now + lease,
        expires_at=now + retention,
        metadata=dict(metadata or {}),
    )
    expected: int | None = None
    for _ in range(_ROUNDS):
        try:
            log.put(candidate, expected)
            return Claimed(candidate)
        except DeliveryConflict as conflict:
            current = conflict.current
        if current is None:
            expected = None
            candidate = candidate.model_copy(update={"version": 1})
            continue
        decision = decide(current, digest, now)
        if decision is not None:
            return decision
        expected = current.version
        candidate = candidate.model_copy(update={"version": current.version + 1})
    return InProgress(1)


def finish_delivery(
    log: DeliveryLog, claimed: DeliveryRecord, outcome: Mapping[str, JsonValue]
) -> DeliveryRecord:
    """Record the outcome of a claimed delivery; later re-deliveries replay it.

    If the claim was taken over meanwhile, the stored record is left alone (whoever holds it
    records the same outcome: the work is idempotent by its tool-call id).
    """
    done = claimed.model_copy(
        update={"state": "done", "version": claimed.version + 1, "outcome": dict(outcome)}
    )
    try:
        log.put(done, claimed.version)
    except DeliveryConflict as conflict:
        return conflict.current or done
    return done


def release_delivery(log: DeliveryLog, claimed: DeliveryRecord, *, now: datetime) -> None:
    """Give a claim up (the work failed and created nothing): a retry may take it at once."""
    released = claimed.model_copy(update={"version": claimed.version + 1, "lease_until": now})
    with contextlib.suppress(DeliveryConflict):
        log.put(released, claimed.version)


def bind_signature(
    log: DeliveryLog,
    source: str,
    timestamp: int,
    body: bytes,
    delivery: str,
    *,
    now: datetime,
    tolerance: int = DEFAULT_TOLERANCE,
) -> bool:
    """Tie this signed request to ``delivery``; False when it already came under another id
    (a captured request replayed with a fresh delivery id). The binding outlives the window in
    which the signed timestamp is accepted."""
    expires = datetime.fromtimestamp(timestamp + tolerance + 60, tz=now.tzinfo)
    bound = log.bind(source, signed_digest(timestamp, body), delivery, expires_at=expires, now=now)
    return bound == delivery


# ---------------------------------------------------------------------------- outbound


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
    event: FormEvent, body: bytes, secret: str | bytes, *, timestamp: int
) -> dict[str, str]:
    """The headers of one delivery attempt (sign each attempt with its own timestamp)."""
    return {
        "Content-Type": "application/json",
        TIMESTAMP_HEADER: str(int(timestamp)),
        SIGNATURE_HEADER: sign(secret, timestamp, body),
        DELIVERY_HEADER: event.delivery,
        EVENT_HEADER: event.event,
    }
