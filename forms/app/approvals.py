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

Who may decide (``Approver``, ``may_decide``) is ``forms.app.approvers``; the approver's queue
and one approval's view are ``forms.app.approval_queue``. Every name is importable from here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from forms.app.approval_queue import (
    MAX_ROUNDS,
    ApprovalQueue,
    ApprovalState,
    ApprovalView,
    BoundAnswer,
    QueuedApproval,
    Settlement,
    approval_queue,
    approval_view,
)
from forms.app.approvers import Approver, Decision, approval_of, may_decide
from forms.app.loop import CommitLoop, Planned
from forms.compiled import CompiledForm
from forms.decisions import APPROVAL_CALL_PREFIX, WITHDRAWN_ON_CLOSE
from forms.definition import Approval as ApprovalDef
from forms.engine import Transition, transition
from forms.errors import FormClosed, UnknownApproval
from forms.instance import FieldChange, FormInstance, OutboxEntry, Revision
from forms.keys import parse_key
from forms.outbox import due_approvals

__all__ = [
    "MAX_ROUNDS",
    "ApprovalQueue",
    "ApprovalState",
    "ApprovalView",
    "Approver",
    "BoundAnswer",
    "Decided",
    "Decision",
    "DecisionNotifier",
    "QueuedApproval",
    "Settlement",
    "approval_of",
    "approval_queue",
    "approval_view",
    "decide",
    "expire",
    "expire_due",
    "may_decide",
    "pending_approvals",
]


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
    """Write ``approver``'s ``decision`` (None: the timeout outcome, past the deadline) on the
    approval ``approval_id``, in one commit with the entry marked done."""
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
        entry, approval = _checked(form, current, approval_id, approver, now, unknown)
        if approver is None:
            outcome, by, actor = approval.on_timeout, "operator", "timeout"
        else:
            assert decision is not None
            outcome, by, actor = decision, "approver", approver.principal
        revision = Revision(
            kind="value",
            value=outcome,
            by=by,
            actor=actor,
            tool_call_id=f"{APPROVAL_CALL_PREFIX}{approval_id}",
            at=now,
            prev=current.field(approval.field).cursor,
            note=note,
        )
        step = _recorded(form, current, approval_id, entry, approval.field, revision, now)
        return Planned((outcome, approval.field), step)

    done = loop.commit(instance, plan)
    assert done.step is not None  # every plan that does not refuse writes the decision
    outcome, field_id = done.value
    return Decided(approval_id, instance_id, outcome, field_id, done.step.dispatch, done.instance)


def _checked(
    form: CompiledForm,
    current: FormInstance,
    approval_id: str,
    approver: Approver | None,
    now: datetime,
    unknown: UnknownApproval,
) -> tuple[OutboxEntry, ApprovalDef]:
    """The pending entry and its approval, when a decision is owed on it now from ``approver``
    (None: the timeout, once the deadline has passed); the refusal otherwise, in this order:
    unknown (or not theirs to decide: the same answer), the form closed, no longer pending."""
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
    if approver is None and (entry.deadline is None or entry.deadline > now):
        raise unknown
    return entry, approval


def _recorded(
    form: CompiledForm,
    current: FormInstance,
    approval_id: str,
    entry: OutboxEntry,
    field_id: str,
    revision: Revision,
    now: datetime,
) -> Transition:
    """The commit of a decision: ``revision`` on the approval's field, its entry done."""
    changes = {field_id: FieldChange(append=(revision,), cursor=current.field(field_id).count)}
    done = entry.model_copy(update={"status": "done", "finished_at": now})
    state = current.state.model_copy(
        update={"outbox": {**current.state.outbox, approval_id: done}, "updated_at": now}
    )
    return transition(form, current, changes, now, state=state, cause=approval_id)


def _unknown(approval_id: str) -> UnknownApproval:
    """What every caller who may not decide ``approval_id`` gets, whether it exists or not."""
    return UnknownApproval(
        f"no pending approval {approval_id!r}", "it may have been decided already, or expired"
    )
