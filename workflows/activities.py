"""The hook activity: run one outbox entry's executor through ``FormService.run_hook``.

Activities are methods on a class built with what they need (a ``FormService`` on the shared
table, a Temporal client for follow-up runs), as in Temporal's samples. The engine is
synchronous (boto3, the executor's own calls), so each call runs on a thread of the class's
pool while the activity heartbeats; a worker that dies mid-executor stops heartbeating and
Temporal retries the attempt elsewhere after the heartbeat timeout.

Attempts: Temporal owns the retrying. Every attempt but the last passes the policy's maximum
to ``run_hook`` with ``raise_on_retry=True``, so a failing executor has the attempt recorded on
the entry and ``ExecutorFailed`` raised for Temporal to retry; the last attempt passes
``max_attempts=1``, so its failure is recorded as final (``failed``) whatever the entry's
own count says (an attempt lost with a dead worker is never recorded there). A first attempt
made as a local activity (``formwork.temporal.hooks``) counts as one: the ordinary attempts after it
are numbered on from it (``HookInput.attempts_before``).

``settle_approval_activity`` is the approval workflow's look at its entry: at the deadline it
calls ``FormService.expire_approvals`` (a no-op when a decision got there first); either way it
reports where the entry stands and starts the runs of what the settlement fired.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, TypeVar

from temporalio import activity

from forms.errors import NotFound
from formwork.temporal.shared import (
    RUN_HOOK_ACTIVITY,
    SETTLE_APPROVAL_ACTIVITY,
    ApprovalCheck,
    ApprovalInput,
    ApprovalOutcome,
    HookInput,
    HookOutcome,
    HookPolicy,
)
from formwork.temporal.starter import RunInput, start_hooks

if TYPE_CHECKING:
    from temporalio.client import Client

    from forms.app.service import FormService
    from forms.instance import FormInstance, Revision

T = TypeVar("T")


class EntryStillPending(RuntimeError):
    """The run ended with its entry still pending (its commit kept losing to other writes)."""


class ApprovalNotSettled(RuntimeError):
    """An approval is still pending at its deadline (this worker's clock is behind the
    timer's, or the commit kept losing): the attempt fails and Temporal retries it."""


class HookActivities:
    """The hook activities, bound to one service (and its store) and one Temporal client."""

    def __init__(
        self, service: FormService, client: Client, *, task_queue: str, threads: int = 16
    ) -> None:
        self.service = service
        self.client = client
        self.task_queue = task_queue
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="hook")

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    @activity.defn(name=RUN_HOOK_ACTIVITY)
    async def run_hook_activity(self, hook: HookInput) -> HookOutcome:
        """Run the entry's executor (or find it already run), then start the runs its
        effects fired; return what the entry's status is now."""
        info = activity.info()
        attempt = info.attempt + hook.attempts_before
        last = attempt >= hook.policy.max_attempts
        await self._blocking(
            functools.partial(
                self.service.run_hook,
                hook.instance_id,
                hook.key,
                max_attempts=1 if last else hook.policy.max_attempts,
                raise_on_retry=True,
            )
        )
        instance = await self._blocking(functools.partial(self._read, hook.instance_id))
        entry = instance.state.outbox.get(hook.key) if instance is not None else None
        if entry is not None and entry.status == "pending":
            raise EntryStillPending(f"{hook.key} is still pending after its run")
        dispatched = (
            await self._follow_ups(instance, hook.policy, exclude=hook.key)
            if instance is not None
            else []
        )
        link = instance.state.handed_to if instance is not None else None
        if link is not None:  # a handover: the form that took over runs its own first hooks
            target = await self._blocking(functools.partial(self._read, link.instance))
            if target is not None:
                dispatched += await self._follow_ups(target, hook.policy, exclude=hook.key)
        return HookOutcome(
            key=hook.key,
            status=entry.status if entry is not None else "gone",
            attempt=attempt,
            error=entry.error if entry is not None else None,
            dispatched=dispatched,
        )

    @activity.defn(name=SETTLE_APPROVAL_ACTIVITY)
    async def settle_approval_activity(self, check: ApprovalCheck) -> ApprovalOutcome:
        """At the deadline (``check.due``): apply the timeout outcome unless already decided.
        Always: report the entry's status and start the runs of what its settlement fired."""
        expired: list[str] = []
        if check.due:
            expired = await self._blocking(
                functools.partial(self.service.expire_approvals, check.instance_id)
            )
        instance = await self._blocking(functools.partial(self._read, check.instance_id))
        entry = instance.state.outbox.get(check.key) if instance is not None else None
        if instance is None or entry is None:
            return ApprovalOutcome(key=check.key, status="gone")
        if entry.status == "pending":
            if check.due:
                raise ApprovalNotSettled(f"{check.key} is still pending at its deadline")
            return ApprovalOutcome(key=check.key, status="pending")
        dispatched = await self._follow_ups(instance, check.policy, exclude=check.key)
        revision = _settling_revision(instance, check.key)
        return ApprovalOutcome(
            key=check.key,
            status=entry.status,
            expired=check.key in expired,
            decision=str(revision.value) if revision is not None else None,
            by=revision.by if revision is not None else None,
            actor=revision.actor if revision is not None else None,
            dispatched=dispatched,
        )

    async def _follow_ups(
        self, instance: FormInstance, policy: HookPolicy, *, exclude: str
    ) -> list[str]:
        """Start the runs of the instance's entries nobody has dispatched yet.

        These are the hooks (and approvals) this run's effects fired, and, when an earlier
        attempt died between its commit and this point, the ones it fired then (``run_hook``
        returns nothing the second time, the entry being done). A failure to start one fails
        the activity, so Temporal retries this part too; the relay would also pick them up.
        """
        waiting: list[RunInput] = []
        for entry in instance.state.outbox.values():
            if entry.status != "pending" or entry.dispatched_at is not None or entry.key == exclude:
                continue
            if entry.kind == "executor":
                waiting.append(HookInput(instance.id, entry.key, policy))
            elif entry.kind == "approval":
                deadline = entry.deadline.isoformat() if entry.deadline is not None else None
                waiting.append(ApprovalInput(instance.id, entry.key, deadline, policy))
        if not waiting:
            return []
        report = await start_hooks(self.client, waiting, task_queue=self.task_queue)
        if report.dispatched:
            await self._blocking(
                functools.partial(self.service.mark_dispatched, instance.id, report.dispatched)
            )
        report.raise_first()
        return report.dispatched

    def _read(self, instance_id: str) -> FormInstance | None:
        try:
            return self.service.store.get(instance_id)
        except NotFound:
            return None

    async def _blocking(self, call: Callable[[], T]) -> T:
        """``call()`` on the pool, heartbeating while it runs (a local activity has no
        heartbeat: its workflow task stands for it, ``formwork.temporal.hooks``)."""
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._pool, call)
        info = activity.info()
        if info.is_local:
            return await future
        timeout = info.heartbeat_timeout
        every = timeout.total_seconds() / 3 if timeout else 10.0
        while True:
            done, _ = await asyncio.wait({future}, timeout=every)
            if done:
                return future.result()
            activity.heartbeat()


def _settling_revision(instance: FormInstance, approval_id: str) -> Revision | None:
    """The revision a decision or an expiry wrote for ``approval_id`` (its tool-call id is
    ``approval:<approval_id>``), wherever the definition put the decision field."""
    marker = f"approval:{approval_id}"
    for history in instance.history.values():
        for revision in history.revisions:
            if revision.tool_call_id == marker:
                return revision
    return None
