"""``ApprovalWorkflow``: one run per pending approval, its workflow id the approval id.

An approval checkpoint's outbox entry runs no code: it waits for a human. The workflow holds
that wait durably. It sleeps on a Temporal timer until the entry's deadline, for days if need
be (the timer lives on the server: workers may come and go meanwhile), or until the
``decided`` signal says a decision was stored. Then one activity looks at the entry:

* after a signal, it only reports. A decided entry ends the run; one still pending (a signal
  that came early, or from a mistaken sender) sends the workflow back to waiting.
* at the deadline, it calls ``FormService.expire_approvals``, which writes the declared
  timeout outcome unless a decision got there first (then nothing happens), and starts the
  hook runs that outcome fired. An entry still pending then (a worker whose clock is behind)
  fails the attempt, and Temporal retries it.

The decision itself never travels through the workflow: it is stored by the API
(``FormService.decide``, a compare-and-set commit) before the signal is sent, so a lost signal
costs only an idle run until the deadline, whose check then finds the entry decided.

Sandbox rules as in ``formwork.temporal.hooks``: no boto3 here, the activity's module comes in
through ``imports_passed_through``.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from formwork.temporal.activities import HookActivities
    from formwork.temporal.shared import (
        APPROVAL_RETRY,
        APPROVAL_WORKFLOW,
        DECIDED_SIGNAL,
        ApprovalCheck,
        ApprovalInput,
        ApprovalOutcome,
    )


@workflow.defn(name=APPROVAL_WORKFLOW)
class ApprovalWorkflow:
    """Wait for approval ``approval.key`` to be decided, or apply its timeout outcome."""

    def __init__(self) -> None:
        self._woken = False

    @workflow.signal(name=DECIDED_SIGNAL)
    def decided(self) -> None:
        """A decision was stored: look at the entry now instead of at the deadline."""
        self._woken = True

    @workflow.run
    async def run(self, approval: ApprovalInput) -> ApprovalOutcome:
        deadline = datetime.fromisoformat(approval.deadline) if approval.deadline else None
        while True:
            due = await self._wait(deadline)
            self._woken = False
            outcome = await workflow.execute_activity_method(
                HookActivities.settle_approval_activity,
                ApprovalCheck(approval.instance_id, approval.key, due, approval.policy),
                start_to_close_timeout=timedelta(seconds=approval.policy.timeout_seconds),
                heartbeat_timeout=timedelta(seconds=approval.policy.heartbeat_seconds),
                retry_policy=APPROVAL_RETRY,
            )
            if outcome.status != "pending":
                return outcome

    async def _wait(self, deadline: datetime | None) -> bool:
        """Until signalled (False) or until ``deadline`` (True)."""
        if self._woken:
            return False
        if deadline is None:
            await workflow.wait_condition(lambda: self._woken)
            return False
        remaining = deadline - workflow.now()
        if remaining <= timedelta(0):
            return True
        try:
            await workflow.wait_condition(lambda: self._woken, timeout=remaining)
        except TimeoutError:
            return True
        return False
