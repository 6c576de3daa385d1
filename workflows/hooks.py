"""``HookWorkflow``: one run per hook occurrence, its workflow id the idempotency key.

The workflow is one activity call with a retry policy. Everything that touches the world
(DynamoDB, the executor's own calls) happens in the activity; the workflow only decides how
often to try and what the run's end state is. A hook whose failure is final (recorded on the
instance) ends the workflow as failed, so failed hooks are visible as failed workflows too.

Sandbox rules: this module is re-imported in Temporal's workflow sandbox. It imports no boto3
and nothing that opens sockets; the activity's module comes in through
``imports_passed_through`` (it is only needed for the method reference).
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from workflows.activities import HookActivities
    from workflows.shared import HOOK_WORKFLOW, HookInput, HookOutcome


@workflow.defn(name=HOOK_WORKFLOW)
class HookWorkflow:
    """Run the executor of outbox entry ``hook.key`` until it is done or its failure is final."""

    @workflow.run
    async def run(self, hook: HookInput) -> HookOutcome:
        policy = hook.policy
        outcome = await workflow.execute_activity_method(
            HookActivities.run_hook_activity,
            hook,
            start_to_close_timeout=timedelta(seconds=policy.timeout_seconds),
            heartbeat_timeout=timedelta(seconds=policy.heartbeat_seconds),
            retry_policy=policy.retry_policy(),
        )
        if outcome.status == "failed":
            raise ApplicationError(
                f"hook {hook.key} failed after {outcome.attempt} attempt(s): {outcome.error}",
                outcome,
                type="HookFailed",
                non_retryable=True,
            )
        return outcome
