"""The outbox's due rules: which entries a relay, a sweeper or a runner must act on now.

Pure functions over an instance's outbox (``InstanceState.outbox``) and the time; the shells
(the stream relay, the sweeper, the Temporal dispatcher, ``expire_due``) ask these rather than
each keeping its own copy of the rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from forms.instance import OutboxEntry


def due_entries(
    outbox: Mapping[str, OutboxEntry], now: datetime, redispatch_after: timedelta
) -> list[OutboxEntry]:
    """The executor entries that need a dispatch: pending and never dispatched; or pending and
    dispatched at least ``redispatch_after`` ago (its run ended without finishing it, or was
    lost: they are started again)."""
    return [
        entry
        for entry in outbox.values()
        if entry.kind == "executor"
        and entry.status == "pending"
        and (entry.dispatched_at is None or now - entry.dispatched_at >= redispatch_after)
    ]


def due_approval_runs(
    outbox: Mapping[str, OutboxEntry], now: datetime, redispatch_after: timedelta
) -> list[OutboxEntry]:
    """The approval entries whose wait (an ``ApprovalWorkflow``) needs starting: pending and
    never dispatched; or still pending ``redispatch_after`` past their deadline (a wait lasts
    until its deadline by design, so only then is it overdue: it was lost, or failed)."""
    return [
        entry
        for entry in outbox.values()
        if entry.kind == "approval"
        and entry.status == "pending"
        and (
            entry.dispatched_at is None
            or (
                entry.deadline is not None
                and now - max(entry.deadline, entry.dispatched_at) >= redispatch_after
            )
        )
    ]


def due_approvals(outbox: Mapping[str, OutboxEntry], now: datetime) -> list[OutboxEntry]:
    """Pending approvals past their deadline: their timeout outcome is due."""
    return [
        entry
        for entry in outbox.values()
        if entry.kind == "approval"
        and entry.status == "pending"
        and entry.deadline is not None
        and entry.deadline <= now
    ]
