"""Starting runs by idempotency key: the one place that calls ``start_workflow``.

A ``HookInput`` starts a ``HookWorkflow`` (an executor entry); an ``ApprovalInput`` starts an
``ApprovalWorkflow`` (an approval entry, waiting for a decision or its deadline). Both use the
outbox key as the workflow id, under the same id policies.

Used by the tool-call Lambda (``formwork.temporal.dispatch``), the stream relay and the sweeper
(``formwork.aws.relay``), and by the activity for the follow-up hooks a run fires. Every caller
may race every other one for the same key; Temporal's id policies make that safe:

* first dispatch: ``id_conflict_policy=USE_EXISTING`` (a run already going counts) and
  ``id_reuse_policy=REJECT_DUPLICATE`` (a run that already ended counts too; the SDK raises
  ``WorkflowAlreadyStartedError``, which here means "already dispatched"). One run per key.
* ``again`` keys (an operator's retry of a failed hook, or a dispatched hook still pending long
  after its run should have ended): ``USE_EXISTING`` with ``ALLOW_DUPLICATE``, so a run still
  going is joined and a new run starts only once the previous one has closed. The workflow id
  stays the key, and the new run applies effects only if the entry is still pending.

The relay and the sweeper come after the tool call, which may still be waiting for the run
it started (it records ``dispatched_at`` only for a run still going when its wait ends). So
they start with ``look_first``: one look at the key's latest run (``describe``) before any
start. A run going is left alone, neither joined nor recorded (``StartReport.running``): the
call that started it records it, or the run ends the entry itself. A closed run counts as
dispatched, as ``REJECT_DUPLICATE`` would say; an ``again`` key then starts a new run. No run
at all: started as above.

The workflow is named, not imported, so this module does not pull the workflow's module (and
its activity) into a process that only starts runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from formwork.temporal.shared import (
    APPROVAL_WORKFLOW,
    HOOK_WORKFLOW,
    ApprovalInput,
    ApprovalOutcome,
    HookInput,
    HookOutcome,
)

RunInput = HookInput | ApprovalInput
"""What a run is started with: an executor entry or an approval entry."""


@dataclass
class StartReport:
    """Keys whose run is started or was already there, and keys that could not be started."""

    dispatched: list[str] = field(default_factory=list)
    started: list[str] = field(default_factory=list)
    """The subset of ``dispatched`` whose run this call started (the rest were there)."""
    errors: dict[str, BaseException] = field(default_factory=dict)
    running: list[str] = field(default_factory=list)
    """Keys a look found with a run going (``look_first``): not started, not dispatched."""

    def raise_first(self) -> None:
        for key, error in self.errors.items():
            raise RuntimeError(f"could not start the run of {key}: {error}") from error


async def start_hook(
    client: Client, hook: RunInput, *, task_queue: str, again: bool = False
) -> bool:
    """Start (or join) the run of ``hook.key``; True if this call started it."""
    approval = isinstance(hook, ApprovalInput)
    try:
        handle = await client.start_workflow(
            APPROVAL_WORKFLOW if approval else HOOK_WORKFLOW,
            hook,
            id=hook.key,
            task_queue=task_queue,
            result_type=ApprovalOutcome if approval else HookOutcome,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            id_reuse_policy=(
                WorkflowIDReusePolicy.ALLOW_DUPLICATE
                if again
                else WorkflowIDReusePolicy.REJECT_DUPLICATE
            ),
            static_summary=(f"approval {hook.key}" if approval else f"hook occurrence {hook.key}"),
        )
    except WorkflowAlreadyStartedError:
        return False
    # With USE_EXISTING the server answers with the run already going, marked not started.
    # The SDK keeps that response privately; it only feeds reports, so read it defensively.
    response = getattr(handle, "_start_workflow_response", None)
    return bool(getattr(response, "started", True))


RUNNING = "running"
"""What ``start_after_look`` answers for a key whose run is going: nothing was done."""


async def latest_run_going(client: Client, key: str) -> bool | None:
    """Whether the latest run under workflow id ``key`` is going (True) or closed (False);
    None when Temporal knows no run of it (never started, or forgotten after retention)."""
    try:
        description = await client.get_workflow_handle(key).describe()
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            return None
        raise
    return description.status == WorkflowExecutionStatus.RUNNING


async def start_after_look(
    client: Client, hook: RunInput, *, task_queue: str, again: bool = False
) -> bool | str:
    """``start_hook`` after a look at the key's latest run: ``RUNNING`` (and nothing done)
    when one is going, False (dispatched, not started) when one closed and the key is not
    started ``again``."""
    going = await latest_run_going(client, hook.key)
    if going:
        return RUNNING
    if going is False and not again:
        return False
    return await start_hook(client, hook, task_queue=task_queue, again=again)


async def start_hooks(
    client: Client,
    hooks: Sequence[RunInput],
    *,
    task_queue: str,
    again: Collection[str] = (),
    look_first: bool = False,
) -> StartReport:
    """Start the runs of ``hooks`` concurrently; never raises for one key's failure.
    ``look_first``: leave alone the keys with a run going (see the module)."""
    start = start_after_look if look_first else start_hook
    results = await asyncio.gather(
        *(start(client, h, task_queue=task_queue, again=h.key in again) for h in hooks),
        return_exceptions=True,
    )
    report = StartReport()
    for hook, result in zip(hooks, results, strict=True):
        if isinstance(result, BaseException):
            if isinstance(result, asyncio.CancelledError):
                raise result
            report.errors[hook.key] = result
        elif result == RUNNING:
            report.running.append(hook.key)
        else:
            report.dispatched.append(hook.key)
            if result:
                report.started.append(hook.key)
    return report
