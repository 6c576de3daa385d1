"""What an operator does without a Python shell: list the hooks that failed for good, retry
one, read back and redrive the relay's failure queue. The operator routes
(``formwork.aws.operator_routes``) only parse, authorise and render; the rules are here.

Who: an ``Operator`` is a verified principal holding the deployment's operator role
(``FORMWORK_OPERATOR_ROLE``). They act within their own tenant only: a hook of another
tenant's instance is answered exactly like a hook that does not exist. The relay's failure
queue belongs to no tenant (a stream batch mixes every tenant's writes, and a failure message
names only the batch's place in the stream), so only operators of the platform tenant
(``FORMWORK_PLATFORM_TENANT``) may read or redrive it; in a single-tenant deployment, every
operator.

Redrive: a failure message holds the coordinates of a stream batch the relay gave up on, not
its records. What those records asked for is still in the table: an outbox entry pending and
undispatched, or an approval past its deadline. The sweeper finds exactly that (every instance
with a pending entry), so a redrive starts one sweep (``Sweeper.start``) and, once it is
started, deletes the messages it read. Nothing is lost if that sweep fails: the entries stay
pending and the scheduled sweep finds them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from forms.errors import NotFound
from forms.keys import parse_key
from forms.principals import tenant_of
from forms.storage.failed_hooks import FailedHookIndex

if TYPE_CHECKING:
    from forms.app.service import FormService

MAX_FAILURES_PAGE = 50
"""The most failure messages one read or redrive takes from the queue."""


@dataclass(frozen=True, slots=True)
class Operator:
    """A verified principal and the roles their token lists."""

    principal: str
    roles: frozenset[str]

    @property
    def tenant(self) -> str | None:
        return tenant_of(self.principal)


class NotAnOperator(Exception):
    """The caller lacks the operator role (or, for the relay's queue, the platform tenant)."""


def require_operator(operator: Operator, role: str) -> None:
    """``NotAnOperator`` unless ``operator`` holds ``role``."""
    if role not in operator.roles:
        raise NotAnOperator(f"the operator routes need the role {role!r}")


def require_platform(
    operator: Operator, role: str, platform_tenant: str | None, *, single_tenant: bool
) -> None:
    """``NotAnOperator`` unless ``operator`` may act on deployment-wide things: the operator
    role, and the platform tenant (any tenant-less operator in a single-tenant deployment)."""
    require_operator(operator, role)
    if single_tenant:
        return
    if platform_tenant is None or operator.tenant != platform_tenant:
        raise NotAnOperator(
            "the relay's failure queue is the deployment's: only operators of the platform "
            "tenant (FORMWORK_PLATFORM_TENANT) may read or redrive it"
        )


# ---------------------------------------------------------------------------- failed hooks


@dataclass(frozen=True, slots=True)
class FailedHook:
    """One hook occurrence that failed for good, as stored."""

    key: str
    instance_id: str
    form_id: str
    hook_id: str
    occurrence: int
    attempts: int
    error: str | None
    failed_at: datetime | None
    principal: str
    conversation_id: str
    form_status: str


@dataclass(frozen=True, slots=True)
class FailedHooks:
    """A page of the tenant's failed hooks (instances newest failure first, each instance's
    hooks the latest first) and the cursor of the next page."""

    hooks: tuple[FailedHook, ...]
    next: str | None


def failed_hooks(
    index: FailedHookIndex, operator: Operator, *, limit: int = 20, after: str | None = None
) -> FailedHooks:
    """The failed hooks of the operator's tenant's instances, read through the sparse index
    (``forms.storage.failed_hooks``); ``ValueError`` for a bad limit or cursor."""
    page = index.failed(operator.tenant, limit=limit, after=after)
    found: list[FailedHook] = []
    for instance in page.instances:
        entries = [
            e
            for e in instance.state.outbox.values()
            if e.kind == "executor" and e.status == "failed"
        ]
        entries.sort(key=lambda e: (e.finished_at or e.created_at, e.key), reverse=True)
        found += [
            FailedHook(
                key=e.key,
                instance_id=instance.id,
                form_id=instance.form_id,
                hook_id=e.hook_id,
                occurrence=e.occurrence,
                attempts=e.attempts,
                error=e.error,
                failed_at=e.finished_at,
                principal=instance.principal,
                conversation_id=instance.conversation_id,
                form_status=instance.state.status,
            )
            for e in entries
        ]
    return FailedHooks(tuple(found), page.next)


def retry_failed_hook(service: FormService, operator: Operator, key: str) -> bool:
    """Put the failed hook ``key`` back to pending and dispatch it (``FormService.retry_hook``:
    the same occurrence and key, attempts reset). False, with nothing done, when there is no
    such failed hook of an instance of the operator's tenant: a malformed key, an instance
    that does not exist or is another tenant's, an entry that is not a failed executor."""
    try:
        instance_id = parse_key(key).instance_id
    except ValueError:
        return False
    try:
        instance = service.store.get(instance_id)
    except NotFound:
        return False
    if tenant_of(instance.principal) != operator.tenant:
        return False  # another tenant's: answered like one that does not exist
    entry = instance.state.outbox.get(key)
    if entry is None or entry.kind != "executor" or entry.status != "failed":
        return False
    return service.retry_hook(instance_id, key)


# ---------------------------------------------------------------------------- relay failures


@dataclass(frozen=True, slots=True)
class FailedBatch:
    """One message of the relay's failure queue: where the batch the relay gave up on lies in
    the table's stream (Lambda's on-failure record for a stream source). It names no instance
    and holds no data of any tenant."""

    message_id: str
    sent_at: str | None
    condition: str | None
    shard_id: str | None
    start_sequence: str | None
    end_sequence: str | None
    first_record_at: str | None
    last_record_at: str | None
    batch_size: int | None


@dataclass(frozen=True, slots=True)
class Received:
    """A failure message received for deletion: the batch and the handle to delete it by."""

    batch: FailedBatch
    handle: str


class FailureQueue(Protocol):
    """The relay's on-failure queue (SQS in AWS: ``formwork.relay_failures``)."""

    def count(self) -> int:
        """About how many messages it holds."""
        ...

    def peek(self, limit: int) -> list[FailedBatch]:
        """Up to ``limit`` messages, left in the queue and visible."""
        ...

    def receive(self, limit: int) -> list[Received]:
        """Up to ``limit`` messages, hidden for a while so they can be deleted."""
        ...

    def delete(self, handles: Sequence[str]) -> None: ...


class Sweeper(Protocol):
    """Starts one sweep of the table, without waiting for it (the sweeper function)."""

    def start(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Redrive:
    """What a redrive did: the batches whose messages it deleted once the sweep started."""

    sweep_started: bool
    redriven: tuple[FailedBatch, ...]
    remaining: int


def relay_failures(queue: FailureQueue, *, limit: int = 10) -> tuple[list[FailedBatch], int]:
    """Up to ``limit`` failure messages (left in the queue) and about how many it holds."""
    _check_limit(limit)
    return queue.peek(limit), queue.count()


def redrive(queue: FailureQueue, sweeper: Sweeper, *, limit: int = 10) -> Redrive:
    """Start one sweep, then delete up to ``limit`` failure messages: the sweep dispatches
    whatever their batches left undispatched (module docstring). Nothing is deleted when the
    queue is empty or the sweep could not be started (its error propagates)."""
    _check_limit(limit)
    received = queue.receive(limit)
    if not received:
        return Redrive(False, (), queue.count())
    sweeper.start()
    queue.delete([r.handle for r in received])
    return Redrive(True, tuple(r.batch for r in received), queue.count())


def _check_limit(limit: int) -> None:
    if not 1 <= limit <= MAX_FAILURES_PAGE:
        raise ValueError(f"limit must be 1 to {MAX_FAILURES_PAGE}")


def batch_from_message(message_id: str, body: str) -> FailedBatch:
    """A failure message's body (Lambda's on-failure invocation record) as a ``FailedBatch``;
    fields it lacks or holds malformed are None (the message is still listed and deletable)."""
    try:
        record = json.loads(body)
    except ValueError:
        record = None
    record = record if isinstance(record, dict) else {}
    context = record.get("requestContext")
    context = context if isinstance(context, dict) else {}
    info = record.get("DDBStreamBatchInfo")
    info = info if isinstance(info, dict) else {}

    def text(source: dict[str, object], name: str) -> str | None:
        value = source.get(name)
        return value[:256] if isinstance(value, str) else None

    size = info.get("batchSize")
    return FailedBatch(
        message_id=message_id,
        sent_at=text(record, "timestamp"),
        condition=text(context, "condition"),
        shard_id=text(info, "shardId"),
        start_sequence=text(info, "startSequenceNumber"),
        end_sequence=text(info, "endSequenceNumber"),
        first_record_at=text(info, "approximateArrivalOfFirstRecord"),
        last_record_at=text(info, "approximateArrivalOfLastRecord"),
        batch_size=size if isinstance(size, int) and not isinstance(size, bool) else None,
    )


class InMemoryFailureQueue:
    """A ``FailureQueue`` in memory, for tests and local runs: messages in arrival order."""

    def __init__(self) -> None:
        self.messages: dict[str, str] = {}
        self._hidden: set[str] = set()

    def send(self, message_id: str, body: str) -> None:
        self.messages[message_id] = body

    def count(self) -> int:
        return len(self.messages)

    def peek(self, limit: int) -> list[FailedBatch]:
        visible = [(m, b) for m, b in self.messages.items() if m not in self._hidden]
        return [batch_from_message(m, b) for m, b in visible[:limit]]

    def receive(self, limit: int) -> list[Received]:
        visible = [(m, b) for m, b in self.messages.items() if m not in self._hidden][:limit]
        self._hidden.update(m for m, _ in visible)
        return [Received(batch_from_message(m, b), m) for m, b in visible]

    def delete(self, handles: Sequence[str]) -> None:
        for handle in handles:
            self.messages.pop(handle, None)
            self._hidden.discard(handle)

    def release(self) -> None:
        """Make hidden messages visible again (their visibility timeout passed)."""
        self._hidden.clear()
