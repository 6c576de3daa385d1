"""The approver's queue (``approval_queue``) and one approval as its approver sees it
(``approval_view``): the approvals a person may decide, due first, those settled lately, and
what became of each, read through the approval index (``forms.storage.approvals``), never by a
scan of the store.

Listed are exactly the approvals ``forms.app.approvals.decide`` would take from the approver
(``forms.app.approvers.may_decide``). Every name is importable from ``forms.app.approvals``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import JsonValue

from forms.app.approvers import Approver, approval_of, may_decide
from forms.app.loop import CommitLoop
from forms.decisions import APPROVAL_CALL_PREFIX
from forms.definition import Approval as ApprovalDef
from forms.errors import ToolError
from forms.instance import FormInstance, OutboxEntry
from forms.keys import parse_key
from forms.principals import subject_of, tenant_of
from forms.registry import Forms
from forms.storage.approvals import MAX_PAGE, ApprovalIndex, ApprovalPage, check_cursor

MAX_ROUNDS = 4
"""The most index pages one queue read takes to fill its page: a tenant's places are
instances, and an instance owes this approver nothing when the approval is another role's or
the approver filled the form, so a page of places can hold fewer approvals than asked."""


@dataclass(frozen=True, slots=True)
class BoundAnswer:
    """An answer a decision is bound to, as it stood when the approval was asked."""

    field: str
    label: str
    value: JsonValue


@dataclass(frozen=True, slots=True)
class Settlement:
    """How an approval was settled: decided by an approver, or its timeout outcome applied."""

    outcome: str
    how: Literal["decided", "expired"]
    by: str | None
    """The approver (the person part of their principal: same tenant); None when expired."""
    at: datetime
    note: str | None
    standing: bool
    """Whether the decision is still the answer in force (a changed answer withdraws it)."""


@dataclass(frozen=True, slots=True)
class QueuedApproval:
    """One approval as its approver sees it: what is asked, of whom, by whom, by when."""

    approval_id: str
    instance_id: str
    form_id: str
    form_title: str
    checkpoint: str
    prompt: str | None
    role: str
    requested_by: str
    """Who filled the form: the person part of their principal (the approver's tenant)."""
    requested_at: datetime
    deadline: datetime | None
    on_timeout: str
    answers: tuple[BoundAnswer, ...]
    settled: Settlement | None = None


@dataclass(frozen=True, slots=True)
class ApprovalQueue:
    """The approvals a person may decide, due first, and those settled, latest first; each
    list with the cursor of its next page (None when nothing follows)."""

    owed: tuple[QueuedApproval, ...]
    owed_next: str | None
    settled: tuple[QueuedApproval, ...]
    settled_next: str | None


def approval_queue(
    index: ApprovalIndex,
    registry: Forms,
    approver: Approver,
    *,
    limit: int = 20,
    after: str | None = None,
    settled_limit: int = 10,
    settled_after: str | None = None,
) -> ApprovalQueue:
    """The approvals ``approver`` may decide, and those settled lately that they could have.

    Listed are exactly the approvals ``decide`` would take from them (``may_decide``: their
    tenant, a role they hold, never a form they filled), read through the approval index
    (``forms.storage.approvals``), so the cost is a few pages of it, never the store's size.
    ``owed`` is due first (the earliest deadline; none last); ``settled`` the approvals of
    instances that owe nothing now, decided or expired, the latest first, that the approver
    could have decided. Each list holds up to ``limit`` (``settled_limit``; 0: none read)
    approvals, a little over when the last instance read owes several; ``after`` and
    ``settled_after`` are the cursors a previous queue handed out. ``ValueError`` for a
    limit out of bounds or a cursor the index never handed out.
    """
    if not 1 <= limit <= MAX_PAGE or not 0 <= settled_limit <= MAX_PAGE:
        raise ValueError(f"a page holds 1 to {MAX_PAGE} approvals (settled: 0 to {MAX_PAGE})")
    for cursor in (after, settled_after):
        if cursor is not None:
            check_cursor(cursor)  # also when that list is not read this time
    tenant = tenant_of(approver.principal)
    owed, owed_next = _read(
        lambda cursor: index.owed(tenant, limit=limit, after=cursor),
        lambda instance: _owed(registry, approver, instance),
        limit,
        after,
    )
    if settled_limit:
        settled, settled_next = _read(
            lambda cursor: index.settled(tenant, limit=settled_limit, after=cursor),
            lambda instance: _settled(registry, approver, instance),
            settled_limit,
            settled_after,
        )
    else:
        settled, settled_next = [], settled_after
    return ApprovalQueue(tuple(owed), owed_next, tuple(settled), settled_next)


def _read(
    page_of: Callable[[str | None], ApprovalPage],
    approvals_of: Callable[[FormInstance], list[QueuedApproval]],
    limit: int,
    cursor: str | None,
) -> tuple[list[QueuedApproval], str | None]:
    """Up to ``limit`` approvals (a little over when an instance owes several), reading up to
    ``MAX_ROUNDS`` index pages; the cursor after the last instance taken."""
    found: list[QueuedApproval] = []
    for _ in range(MAX_ROUNDS):
        page = page_of(cursor)
        for i, instance in enumerate(page.instances):
            found += approvals_of(instance)
            if len(found) >= limit:
                last = i + 1 == len(page.instances)
                return found, page.next if last else page.cursors[i]
        cursor = page.next
        if cursor is None:
            break
    return found, cursor


def _owed(registry: Forms, approver: Approver, instance: FormInstance) -> list[QueuedApproval]:
    """The approvals of ``instance`` pending that ``approver`` may decide, the earliest due
    first."""
    if instance.state.status != "open":  # decide refuses a closed form (form_closed)
        return []
    pending = [e for e in instance.state.outbox.values() if e.status == "pending"]
    queued = _queued(registry, approver, instance, pending)
    return sorted(queued, key=lambda q: (q.deadline is None, q.deadline or q.requested_at))


def _settled(registry: Forms, approver: Approver, instance: FormInstance) -> list[QueuedApproval]:
    """The approvals of ``instance`` decided or expired (never withdrawn) that ``approver``
    could have decided, the latest first."""
    done = [
        e
        for e in instance.state.outbox.values()
        if e.status == "done" and e.error is None and e.finished_at is not None
    ]
    queued = _queued(registry, approver, instance, done)
    return sorted(queued, key=lambda q: q.settled.at if q.settled else q.requested_at, reverse=True)


def _queued(
    registry: Forms, approver: Approver, instance: FormInstance, entries: list[OutboxEntry]
) -> list[QueuedApproval]:
    try:
        form = registry.for_instance(instance)[0]  # as decide sees it (after any migration)
    except ToolError:
        return []  # a form no longer served: nobody can decide it either
    found: list[QueuedApproval] = []
    for entry in entries:
        approval = approval_of(form, entry)
        if approval is None or not may_decide(approver, approval.role, instance.principal):
            continue
        hook = form.hook(entry.hook_id)
        answers = tuple(
            BoundAnswer(f, form.fields[f].label if f in form.fields else f, value)
            for f, value in (entry.subject or {}).items()
        )
        found.append(
            QueuedApproval(
                approval_id=entry.key,
                instance_id=instance.id,
                form_id=form.id,
                form_title=form.title,
                checkpoint=(hook.title if hook is not None and hook.title else entry.hook_id),
                prompt=approval.prompt,
                role=approval.role,
                requested_by=subject_of(instance.principal),
                requested_at=entry.created_at,
                deadline=entry.deadline,
                on_timeout=approval.on_timeout,
                answers=answers,
                settled=_settlement(instance, approval, entry),
            )
        )
    return found


def _settlement(
    instance: FormInstance, approval: ApprovalDef, entry: OutboxEntry
) -> Settlement | None:
    """How ``entry`` was settled (None while it is pending), from its decision revision on
    the approval's field (the entries a read keeps first; the whole log only when the
    decision is no longer among them)."""
    if entry.status == "pending":
        return None
    history = instance.field(approval.field)
    call = f"{APPROVAL_CALL_PREFIX}{entry.key}"
    in_force = history.in_force()
    candidates = [*history.head().values()]
    revision = next((r for r in candidates if r.tool_call_id == call), None)
    if revision is None:
        revision = next((r for r in reversed(history.revisions) if r.tool_call_id == call), None)
    if revision is None or revision.value is None:
        return None
    expired = revision.by != "approver"
    return Settlement(
        outcome=str(revision.value),
        how="expired" if expired else "decided",
        by=None if expired else subject_of(revision.actor or ""),
        at=revision.at,
        note=revision.note,
        standing=in_force is not None and in_force.tool_call_id == call,
    )


# ---------------------------------------------------------------------- one approval

ApprovalState = Literal["owed", "settled", "withdrawn", "closed"]


@dataclass(frozen=True, slots=True)
class ApprovalView:
    """One approval as its approver sees it, and whether a decision can still be taken on it:
    ``owed`` (pending on an open form: ``decide`` takes one), ``settled`` (decided or expired:
    ``approval.settled`` says how), ``withdrawn`` (an answer it was asked on changed, the
    checkpoint stopped holding, or the form closed first: ``reason``), ``closed`` (still
    pending, but the form is closed: ``decide`` refuses it, ``form_closed``)."""

    approval: QueuedApproval
    state: ApprovalState
    reason: str | None
    form_status: str
    """Where the form stands, in words (``open``, ``completed (submitted)``...)."""


def approval_view(loop: CommitLoop, approver: Approver, approval_id: str) -> ApprovalView | None:
    """The approval ``approval_id`` as ``approver`` sees it, or None when there is none they
    may decide (``may_decide``: their tenant, a role they hold, never a form they filled): an
    approval they may not decide is as missing as one that never existed, as ``decide`` and the
    queue answer. Whatever its state: a settled or withdrawn one shows what became of it."""
    try:
        instance_id = parse_key(approval_id).instance_id
    except ValueError:
        return None
    instance = loop.load(instance_id)
    if instance is None:
        return None
    entry = instance.state.outbox.get(approval_id)
    if entry is None or entry.kind != "approval":
        return None
    found = _queued(loop.registry, approver, instance, [entry])
    if not found:
        return None
    (queued,) = found
    state: ApprovalState
    reason = None
    if entry.status == "pending":
        state = "owed" if instance.state.status == "open" else "closed"
    elif entry.error is not None:
        state, reason = "withdrawn", entry.error.removeprefix("withdrawn: ")
    else:
        state = "settled"
    return ApprovalView(queued, state, reason, instance.state.status_text())
