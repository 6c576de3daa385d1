"""Approval checkpoints: a human decision a form waits for, recorded as a revision.

When a checkpoint declared with ``Approval`` rises, its outbox entry (kind ``approval``, key
``{instance_id}:checkpoint.<id>:<occurrence>``, which is also the approval id) waits for a
decision instead of running code. While it is pending and the checkpoint still holds, the form
cannot complete; the conversation goes on and writes are taken.

``decide`` records an approver's decision: it checks the approver belongs to the tenant that
owns the form, holds the role the definition names and is not the person who filled the form
(anyone else gets the same ``unknown_approval`` as for an id that does not exist, so nobody
learns which ids exist), that the form is still open, and then writes ``approved`` or
``rejected`` to the approval's decision field as a revision by the approver (with the note),
and marks the entry done, in one compare-and-set commit. That write fires the field's edges
like any answer, so checkpoints can react to it. ``expire`` writes the declared timeout
outcome once the deadline has passed. Both are idempotent per approval id: a second decision
on the same id is refused, and so is one after expiry.

Where the waiting happens is the dispatcher's business: a durable timer in a Temporal workflow
in production, ``expire_due`` called by a sweeper or a test in process.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol, runtime_checkable

from pydantic import JsonValue

from forms.app.loop import CommitLoop, Planned
from forms.compiled import CompiledForm
from forms.decisions import APPROVAL_CALL_PREFIX, WITHDRAWN_ON_CLOSE
from forms.definition import Approval as ApprovalDef
from forms.engine import transition
from forms.errors import FormClosed, ToolError, UnknownApproval
from forms.instance import FieldChange, FormInstance, OutboxEntry, Revision
from forms.keys import parse_key
from forms.outbox import due_approvals
from forms.principals import subject_of, tenant_of
from forms.registry import Forms
from forms.storage.approvals import MAX_PAGE, ApprovalIndex, ApprovalPage, check_cursor

Decision = Literal["approved", "rejected"]


@dataclass(frozen=True, slots=True)
class Approver:
    """Who decides: the verified principal and the roles its token carries."""

    principal: str
    roles: frozenset[str]


@dataclass(frozen=True, slots=True)
class Decided:
    approval_id: str
    instance_id: str
    decision: Decision
    field: str
    dispatch: tuple[OutboxEntry, ...]
    instance: FormInstance
    """The instance as the decision's commit stored it."""


@runtime_checkable
class DecisionNotifier(Protocol):
    """A dispatcher that runs approval waits elsewhere (``TemporalDispatcher``): told, best
    effort, that a decision was recorded so the wait ends now rather than at its deadline
    (``FormService.decide`` tells it, whoever decided: the API or the approver's page)."""

    def notify_decided(self, approval_id: str) -> bool: ...


def decide(
    loop: CommitLoop,
    approval_id: str,
    approver: Approver,
    decision: Decision,
    note: str | None = None,
) -> Decided:
    """Record ``approver``'s decision on a pending approval (see the module docstring)."""
    return _settle(loop, approval_id, decision, note, approver=approver)


def expire(loop: CommitLoop, approval_id: str) -> Decided | None:
    """Apply the timeout outcome if the approval is still pending past its deadline."""
    try:
        return _settle(loop, approval_id, None, None, approver=None)
    except UnknownApproval:
        return None


def expire_due(loop: CommitLoop, instance_id: str) -> list[Decided]:
    """Expire every approval of an instance whose deadline has passed."""
    instance = loop.load(instance_id)
    if instance is None:
        return []
    due = [e.key for e in due_approvals(instance.state.outbox, loop.clock())]
    return [d for d in (expire(loop, key) for key in due) if d is not None]


def pending_approvals(instance: FormInstance) -> Sequence[OutboxEntry]:
    return [
        e for e in instance.state.outbox.values() if e.kind == "approval" and e.status == "pending"
    ]


def _settle(
    loop: CommitLoop,
    approval_id: str,
    decision: Decision | None,
    note: str | None,
    *,
    approver: Approver | None,
) -> Decided:
    unknown = _unknown(approval_id)
    try:
        instance_id = parse_key(approval_id).instance_id
    except ValueError:
        raise unknown from None
    instance = loop.load(instance_id)
    if instance is None:
        raise unknown

    def plan(
        form: CompiledForm, current: FormInstance, now: datetime
    ) -> Planned[tuple[Decision, str]]:
        entry = current.state.outbox.get(approval_id)
        approval = approval_of(form, entry)
        if entry is None or approval is None:
            raise unknown
        if approver is not None and not may_decide(approver, approval.role, current.principal):
            raise unknown  # the same answer as an approval that does not exist
        owed = entry.status == "pending" or entry.error == WITHDRAWN_ON_CLOSE
        if owed and current.state.status != "open":
            raise FormClosed(
                f"the form is {current.state.status_text()}; no decision is owed on it",
                "nothing to decide",
            )
        if entry.status != "pending":
            raise UnknownApproval(
                f"approval {approval_id!r} is no longer pending"
                + (f" ({entry.error})" if entry.error else " (decided or expired)"),
                "read the form's status for the approval now owed, if any",
            )
        if approver is None:
            if entry.deadline is None or entry.deadline > now:
                raise unknown
            outcome, by, actor = approval.on_timeout, "operator", "timeout"
        else:
            assert decision is not None
            outcome, by, actor = decision, "approver", approver.principal
        history = current.field(approval.field)
        revision = Revision(
            kind="value",
            value=outcome,
            by=by,
            actor=actor,
            tool_call_id=f"{APPROVAL_CALL_PREFIX}{approval_id}",
            at=now,
            prev=history.cursor,
            note=note,
        )
        changes = {approval.field: FieldChange(append=(revision,), cursor=history.count)}
        done = entry.model_copy(update={"status": "done", "finished_at": now})
        state = current.state.model_copy(
            update={"outbox": {**current.state.outbox, approval_id: done}, "updated_at": now}
        )
        step = transition(form, current, changes, now, state=state, cause=approval_id)
        return Planned((outcome, approval.field), step)

    done = loop.commit(instance, plan)
    assert done.step is not None  # every plan that does not refuse writes the decision
    outcome, field_id = done.value
    return Decided(approval_id, instance_id, outcome, field_id, done.step.dispatch, done.instance)


def approval_of(form: CompiledForm, entry: OutboxEntry | None) -> ApprovalDef | None:
    """The approval an outbox entry waits on, as ``form`` declares it: None when the entry is
    not an approval's, or its checkpoint declares none (any more)."""
    if entry is None or entry.kind != "approval":
        return None
    hook = form.hook(entry.hook_id)
    return hook.approval if hook is not None else None


def may_decide(approver: Approver, role: str, filled_by: str) -> bool:
    """Only a principal of the form owner's tenant holding the role the definition names, and
    never the person who filled the form (under any principal), may decide its approval."""
    # same tenant and another person: so never the filler's own principal either
    return (
        role in approver.roles
        and tenant_of(approver.principal) == tenant_of(filled_by)
        and subject_of(approver.principal) != subject_of(filled_by)
    )


def _unknown(approval_id: str) -> UnknownApproval:
    """What every caller who may not decide ``approval_id`` gets, whether it exists or not."""
    return UnknownApproval(
        f"no pending approval {approval_id!r}", "it may have been decided already, or expired"
    )


# ---------------------------------------------------------------------- the approver's queue

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
