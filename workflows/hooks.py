"""``HookWorkflow``: one run per hook occurrence, its workflow id the idempotency key.

The workflow is one activity call with a retry policy. Everything that touches the world
(DynamoDB, the executor's own calls) happens in the activity; the workflow only decides how
often to try and what the run's end state is. A hook whose failure is final (recorded on the
instance) ends the workflow as failed, so failed hooks are visible as failed workflows too.

A hook a tool call waits for (``HookInput.local_first``: the dispatcher sets it for hooks that
are not slow, ``forms.hook_speed``) makes its first attempt as a *local activity*: the worker
runs it inside the workflow task that starts the run and completes the run in that same
task, one workflow task instead of two (one to schedule the activity, one to complete on its
result) and no activity task. A local activity has no heartbeat: a worker that dies during it
leaves its workflow task to time out, and the worker that takes the task next runs the attempt
again (nothing of it was recorded). A first attempt that fails, or times out, hands the rest to
an ordinary activity with the remaining attempts, after the pause the policy puts between
attempts, so a retried or slow hook heartbeats as before. Runs recorded before this path
existed replay on the old one (the ``hook-local-first`` patch; docs/dispatch.md).

Sandbox rules: this module is re-imported in Temporal's workflow sandbox. It imports no boto3
and nothing that opens sockets; the activity's module comes in through
``imports_passed_through`` (it is only needed for the method reference).
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, FailureError

with workflow.unsafe.imports_passed_through():
    from formwork.temporal.activities import HookActivities
    from formwork.temporal.shared import HOOK_WORKFLOW, NON_RETRYABLE, HookInput, HookOutcome

LOCAL_FIRST_PATCH = "hook-local-first"
"""The ``workflow.patched`` id of the local first attempt: a run whose history predates it
schedules an ordinary activity for every attempt."""


@workflow.defn(name=HOOK_WORKFLOW)
class HookWorkflow:
    """Run the executor of outbox entry ``hook.key`` until it is done or its failure is final."""

    @workflow.run
    async def run(self, hook: HookInput) -> HookOutcome:
        if hook.local_first and workflow.patched(LOCAL_FIRST_PATCH):
            outcome = await self._local_then_retried(hook)
        else:
            outcome = await self._attempts(hook)
        if outcome.status == "failed":
            raise ApplicationError(
                f"hook {hook.key} failed after {outcome.attempt} attempt(s): {outcome.error}",
                outcome,
                type="HookFailed",
                non_retryable=True,
            )
        return outcome

    async def _attempts(self, hook: HookInput) -> HookOutcome:
        """Ordinary activity attempts, as many as the policy has left after
        ``hook.attempts_before``, heartbeating while the executor runs."""
        policy = hook.policy
        return await workflow.execute_activity_method(
            HookActivities.run_hook_activity,
            hook,
            start_to_close_timeout=timedelta(seconds=policy.timeout_seconds),
            heartbeat_timeout=timedelta(seconds=policy.heartbeat_seconds),
            retry_policy=policy.retry_policy(after=hook.attempts_before),
        )

    async def _local_then_retried(self, hook: HookInput) -> HookOutcome:
        """The first attempt as a local activity; what is left of the policy, if it failed and
        may be retried, as ordinary attempts after the policy's first pause."""
        policy = hook.policy
        try:
            return await workflow.execute_local_activity_method(
                HookActivities.run_hook_activity,
                hook,
                start_to_close_timeout=timedelta(seconds=policy.timeout_seconds),
                retry_policy=RetryPolicy(maximum_attempts=1),
            )
        except (ActivityError, ApplicationError) as failed:
            # the SDK hands a local attempt's own error over as it was raised, and its
            # timeout as an ActivityError whose cause is the TimeoutError
            if policy.max_attempts <= 1 or _final(failed):
                raise
        await workflow.sleep(policy.interval(1))
        return await self._attempts(dataclasses.replace(hook, local_first=False, attempts_before=1))


def _final(error: FailureError) -> bool:
    """Whether no retry can mend the attempt's failure (``NON_RETRYABLE``, or marked so)."""
    cause = error.cause if isinstance(error, ActivityError) else error
    return isinstance(cause, ApplicationError) and (
        cause.non_retryable or cause.type in NON_RETRYABLE
    )
