"""Starting runs by idempotency key: the one place that calls ``start_workflow``.

A ``HookInput`` starts a ``HookWorkflow`` (an executor entry); an ``ApprovalInput`` starts an
``ApprovalWorkflow`` (an approval entry, waiting for a decision or its deadline). Both use the
outbox key as the workflow id, under the same id policies.

Used by the tool-call Lambda (``workflows.dispatch``), the stream relay and the sweeper
(``functions.relay``), and by the activity for the follow-up hooks a run fires. Every caller
may race every other one for the same key; Temporal's id policies make that safe:

* first dispatch: ``id_conflict_policy=USE_EXISTING`` (a run already going counts) and
  ``id_reuse_policy=REJECT_DUPLICATE`` (a run that already ended counts too; the SDK raises
  ``WorkflowAlreadyStartedError``, which here means "already dispatched"). One run per key.
* ``again`` keys (an operator's retry of a failed hook, or a dispatched hook still pending long
  after its run should have ended): ``USE_EXISTING`` with ``ALLOW_DUPLICATE``, so a run still
  going is joined and a new run starts only once the previous one has closed. The workflow id
  stays the key, and the new run applies effects only if the entry is still pending.

The workflow is named, not imported, so this module does not pull the workflow's module (and
its activity) into a process that only starts runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from temporalio.client import Client
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from workflows.shared import (
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


async def start_hooks(
    client: Client,
    hooks: Sequence[RunInput],
    *,
    task_queue: str,
    again: Collection[str] = (),
) -> StartReport:
    """Start the runs of ``hooks`` concurrently; never raises for one key's failure."""
    results = await asyncio.gather(
        *(start_hook(client, h, task_queue=task_queue, again=h.key in again) for h in hooks),
        return_exceptions=True,
    )
    report = StartReport()
    for hook, result in zip(hooks, results, strict=True):
        if isinstance(result, BaseException):
            if isinstance(result, asyncio.CancelledError):
                raise result
            report.errors[hook.key] = result
            continue
        report.dispatched.append(hook.key)
        if result:
            report.started.append(hook.key)
    return report
