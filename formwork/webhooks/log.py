"""The delivery log: the port, and the rules that make an inbound delivery count once.

The delivery id is not covered by the signature, so the log keeps two kinds of record:

- the delivery itself (``claim_delivery``): the first writer claims the id with a lease, does
  the work and records its outcome (``finish_delivery``); a re-delivery of the same content
  replays that outcome, other content under the same id is refused, and a claim whose lease ran
  out (its handler died) is taken over, compare-and-set. A failed start gives its claim up at
  once (``release_delivery``).
- a binding of each signed request to the delivery id it first came under (``bind_signature``),
  so a captured request replayed under a fresh id is refused too.

``DeliveryLog`` is the port: two compare-and-set primitives (``get``/``put`` on delivery
records, ``bind`` on signed requests) and nothing else; the rules above are written once, here,
over those primitives. Its adapters sit beside it (``memory``, ``dynamodb``) and pass the same
suite (``contract``). Nothing here reads a clock: ``now`` is an argument.
"""

from __future__ import annotations

import contextlib
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from forms.errors import Conflict
from formwork.webhooks.signing import DEFAULT_TOLERANCE, signed_digest

DEFAULT_LEASE = timedelta(seconds=60)
"""How long a claimed delivery is left to its claimant before a retry may take it over
(longer than the function's timeout, so a live claimant is never overtaken)."""
DEFAULT_RETENTION = timedelta(days=7)
"""How long a delivery id is remembered (cover the sender's retry schedule)."""


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


class DeliveryConflict(Conflict[DeliveryRecord]):
    """A conditional write lost: ``current`` is what is stored now (None: nothing is). The one
    compare-and-set conflict of every store (``forms.errors.Conflict``), of a delivery record:
    ``subject`` is ``<source>/<delivery>``, ``expected`` the version the write expected (0:
    none stored)."""

    def __init__(
        self, current: DeliveryRecord | None, *, subject: str = "", expected: int | None = None
    ) -> None:
        super().__init__(subject, expected or 0, current, kind="delivery")


class DeliveryLog(ABC):
    """Where delivery ids and signed requests are remembered. Two atomic primitives.

    Promises every adapter keeps (``formwork.webhooks.contract`` checks them):

    - ``put`` is compare-and-set on ``(source, delivery)``; a losing write stores nothing and
      its ``DeliveryConflict`` carries the record stored now.
    - ``bind`` is first-writer-wins per ``(source, signed)`` until the binding expires; a
      binding is expired when its ``expires_at`` is at or before ``now``.
    - Snapshots: nothing a caller does to a record it passed in or got back changes the log.
    - Expiry is data, not deletion: ``get`` returns an expired record as it was stored, and the
      rules compare ``expires_at`` themselves.
    """

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
        expired at ``now``) to another one; return the delivery it is bound to after the
        call."""


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
