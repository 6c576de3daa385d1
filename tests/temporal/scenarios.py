"""Runs of every workflow type, on any Temporal test environment: what the replay fixtures
record (``python -m tests.temporal.record``) and what the time-skipping tests drive.

The worker is the production one (``formwork.temporal.worker.build_worker``: both workflows, the
real activities) over a ``FormService`` on the in-memory store. Its clock is the workflow
server's: each approval activity sets it to the time Temporal scheduled the attempt, so on
the time-skipping server a deadline five days ahead is past once the server has skipped
there, as it is in production once the days have gone by.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from temporalio import activity
from temporalio.client import Client, WorkflowHandle
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from forms import Caller, FormDef, FormService, Step, field
from forms.app.approvals import Approver
from forms.app.service import new_instance_id
from forms.effects import Patch
from forms.examples.purchase_request import purchase_request
from forms.instance import OutboxEntry
from forms.storage.contract import make_instance
from formwork.temporal.activities import HookActivities
from formwork.temporal.migrations import (
    MIGRATION_WORKFLOW,
    MigrationInput,
    MigrationOutcome,
    workflow_id,
)
from formwork.temporal.shared import (
    APPROVAL_WORKFLOW,
    DECIDED_SIGNAL,
    HOOK_WORKFLOW,
    SETTLE_APPROVAL_ACTIVITY,
    ApprovalCheck,
    ApprovalInput,
    ApprovalOutcome,
    HookInput,
    HookPolicy,
)
from formwork.temporal.starter import RunInput, start_hooks
from formwork.temporal.worker import build_worker
from tests.support import service_for

TASK_QUEUE = "formwork-hooks-tests"
REQUESTER = Caller("acme/ana", "conv-1")
FINANCE = Approver("acme/fred", frozenset({"finance"}))
LAPTOPS = {"item": "Laptops for the new team", "supplier": "Dell", "amount": 9000}
POLICY = HookPolicy(max_attempts=2, initial_interval_seconds=1.0, heartbeat_seconds=10.0)
"""Two attempts, so the run of a hook that keeps failing ends in a few (skipped) seconds."""


class ServerClock:
    """The service's clock: the instant last set (the server's time), moved on a microsecond
    per reading so revisions stay ordered."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        self.now += timedelta(microseconds=1)
        return self.now


class ServerTimeActivities(HookActivities):
    """The production activities, with the service's clock set to the server's time first."""

    def __init__(self, service: FormService, client: Client, clock: ServerClock) -> None:
        super().__init__(service, client, task_queue=TASK_QUEUE, threads=4)
        self.clock = clock

    @activity.defn(name=SETTLE_APPROVAL_ACTIVITY)
    async def settle_approval_activity(self, check: ApprovalCheck) -> ApprovalOutcome:
        self.clock.now = max(self.clock.now, activity.info().current_attempt_scheduled_time)
        return await super().settle_approval_activity(check)


def always_down(ctx: Any) -> None:
    raise RuntimeError("the ledger is down")


class Ledger(Step):
    title = "Ledger"
    reference: str = field("Reference", on_fill=always_down)


LEDGER = FormDef(id="ledger-entry", version=1, title="Ledger entry", steps=[Ledger])
"""A form whose one executor always fails: its run ends failed after the policy's attempts."""


def payment(form_id: str, executor: Callable[[Any], Patch]) -> FormDef:
    """A form whose amount's executor stamps a receipt (``executor``: how it gets there)."""

    class Payment(Step):
        title = "Payment"
        amount: int = field("Amount", on_fill=executor)
        receipt: str | None = field("Receipt")

    return FormDef(id=form_id, version=1, title="Payment", steps=[Payment])


def stamp_receipt(ctx: Any) -> Patch:
    return Patch({"receipt": f"R-{ctx.values.amount}"})


PAYMENT = payment("payment", stamp_receipt)
"""A form whose one executor stamps a receipt: a hook that succeeds at once."""

STALLED: set[str] = set()
"""The keys ``stall_first`` has stalled once already."""
RELEASE = threading.Event()
"""Set by a test to let the stalled first runs of ``stall_first`` go on."""


def stall_first(ctx: Any) -> Patch:
    """Its first run for a key waits until a test sets ``RELEASE`` (so it outlasts any short
    attempt timeout); the next ones stamp at once."""
    if ctx.key not in STALLED:
        STALLED.add(ctx.key)
        RELEASE.wait(timeout=60)
    return stamp_receipt(ctx)


SLOW_PAYMENT = payment("slow-payment", stall_first)
"""A form whose executor stalls the first time for each key."""


@dataclass
class Stack:
    """A worker on ``client`` and the service it runs hooks on."""

    client: Client
    service: FormService
    clock: ServerClock
    skip: Callable[[timedelta], Awaitable[None]]
    """Move the server's time on (``WorkflowEnvironment.sleep``: the time-skipping server
    skips there at once). A handle got by workflow id does not skip time by itself."""

    def start(self, form: str, values: dict[str, Any]) -> str:
        payload = {"form": form, "values": values}
        result = self.service.call(REQUESTER, "form_start", "call-1", payload)
        assert result["ok"], result
        return str(result["instance"])

    def pending(self, instance_id: str) -> list[OutboxEntry]:
        instance = self.service.store.get(instance_id)
        return [e for e in instance.state.outbox.values() if e.status == "pending"]

    async def dispatch(
        self, instance_id: str, *, local_first: bool = False, policy: HookPolicy = POLICY
    ) -> list[WorkflowHandle[Any, Any]]:
        """Start the runs of the instance's pending entries, as the tool-call Lambda does
        (``local_first``: as it does for the hooks it waits for)."""
        runs: list[RunInput] = []
        for entry in self.pending(instance_id):
            if entry.kind == "approval":
                deadline = entry.deadline.isoformat() if entry.deadline else None
                runs.append(ApprovalInput(instance_id, entry.key, deadline, policy))
            elif entry.kind == "executor":
                runs.append(HookInput(instance_id, entry.key, policy, local_first=local_first))
        report = await start_hooks(self.client, runs, task_queue=TASK_QUEUE)
        report.raise_first()
        self.service.mark_dispatched(instance_id, report.dispatched)
        return [self.client.get_workflow_handle(key) for key in report.dispatched]


@asynccontextmanager
async def worker_stack(env: WorkflowEnvironment) -> AsyncIterator[Stack]:
    """The production worker on ``env``, over a service whose clock starts at the server's."""
    client = env.client
    clock = ServerClock(await env.get_current_time())
    service = service_for(
        purchase_request,
        LEDGER,
        PAYMENT,
        SLOW_PAYMENT,
        dispatch=False,
        clock=clock,
        new_id=new_instance_id,
    )
    activities = ServerTimeActivities(service, client, clock)
    worker: Worker = build_worker(client, activities, task_queue=TASK_QUEUE, grace=1.0)
    try:
        async with worker:
            yield Stack(client, service, clock, env.sleep)
    finally:
        activities.close()


# ---------------------------------------------------------------------------- the scenarios
# Each returns the workflow ids it ran, in the order to record them.


async def approval_times_out(stack: Stack) -> list[str]:
    """Nobody decides in five days: the timeout outcome (rejected) is written and its
    checkpoint's executor (terminate) runs as a HookWorkflow started by the activity."""
    instance_id = stack.start("purchase-request", LAPTOPS)
    (approval,) = await stack.dispatch(instance_id)
    await stack.skip(timedelta(days=5, minutes=1))
    outcome = ApprovalOutcome(**await approval.result())
    assert outcome.expired and outcome.decision == "rejected", outcome
    (follow_up,) = outcome.dispatched
    hook = await stack.client.get_workflow_handle(follow_up).result()
    assert hook["status"] == "done", hook
    return [approval.id, follow_up]


async def approval_decided(stack: Stack) -> list[str]:
    """Finance approves before the deadline: the decision is stored, then the workflow signalled."""
    instance_id = stack.start("purchase-request", LAPTOPS)
    (approval,) = await stack.dispatch(instance_id)
    decided = await asyncio.to_thread(
        functools.partial(stack.service.decide, FINANCE, approval.id, "approved")
    )
    assert decided["ok"], decided
    await approval.signal(DECIDED_SIGNAL)
    outcome = ApprovalOutcome(**await approval.result())
    assert not outcome.expired and outcome.decision == "approved", outcome
    return [approval.id]


async def hook_fails(stack: Stack) -> list[str]:
    """An executor that keeps raising: retried, recorded failed, the run ends failed."""
    return await _fails(stack, local_first=False)


async def hook_local_first_fails(stack: Stack) -> list[str]:
    """The same, its first attempt local (a hook the call waits for): the attempt left is an
    ordinary activity, after the policy's pause."""
    return await _fails(stack, local_first=True)


async def _fails(stack: Stack, *, local_first: bool) -> list[str]:
    instance_id = stack.start("ledger-entry", {"reference": "INV-1"})
    (hook,) = await stack.dispatch(instance_id, local_first=local_first)
    try:
        await hook.result()
    except Exception:  # the run ends failed: HookFailed
        pass
    else:
        raise AssertionError("the run of a hook that keeps failing succeeded")
    return [hook.id]


async def hook_local_first(stack: Stack) -> list[str]:
    """A hook the call waits for, done in its first attempt: a local activity, in the run's
    one workflow task."""
    instance_id = stack.start("payment", {"amount": 40})
    (hook,) = await stack.dispatch(instance_id, local_first=True)
    outcome = await hook.result()
    assert outcome["status"] == "done" and outcome["attempt"] == 1, outcome
    return [hook.id]


async def migration_runs(stack: Stack) -> list[str]:
    """An operator's bulk migration, a page per instance: two open ledger entries on a version
    the current one has no migration from are reported, not moved."""
    for n in (1, 2):
        old = make_instance(
            f"fi_old{n}",
            principal="acme/ana",
            conversation_id=f"conv-old{n}",
            form_id=LEDGER.id,
            form_version=0,
        )
        stack.service.store.create(old)
    run = MigrationInput("acme/olga", LEDGER.id, LEDGER.version, page_size=1)
    handle = await stack.client.start_workflow(
        MIGRATION_WORKFLOW,
        run,
        id=workflow_id(run.principal, run.form_id, run.to_version),
        task_queue=TASK_QUEUE,
        result_type=MigrationOutcome,
    )
    outcome = await handle.result()
    assert outcome.pages == 2 and sorted(outcome.no_path) == ["fi_old1", "fi_old2"], outcome
    assert outcome.moved == 0 and not outcome.stopped_early
    return [handle.id]


SCENARIOS = {
    "approval-times-out": approval_times_out,
    "approval-decided": approval_decided,
    "hook-fails": hook_fails,
    "hook-local-first": hook_local_first,
    "hook-local-first-fails": hook_local_first_fails,
    "migration-runs": migration_runs,
}
WORKFLOW_TYPES = {HOOK_WORKFLOW, APPROVAL_WORKFLOW, MIGRATION_WORKFLOW}
