"""Durable dispatch on Temporal: each outbox entry becomes a workflow whose id is its key.

``TemporalDispatcher`` is the ``Dispatcher`` a tool call uses when ``FORMWORK_DISPATCH`` is
``temporal``. After the commit that put entries in the outbox it:

1. starts one ``HookWorkflow`` per executor entry, id = the idempotency key
   (``formwork.temporal.starter``: a run already going or already ended counts as dispatched);
2. waits up to ``FORMWORK_HOOK_WAIT_MS`` for those runs to end, so a routing hook's effect is
   in this tool call's result; slower ones carry on durably and the status line says they
   are running;
3. records ``dispatched_at`` (``FormService.mark_dispatched``, a compare-and-set commit, the
   lasting record that a run was started) on the entries whose runs are still going: a run
   that ended has committed its entry done or failed, so its dispatch needs no write (and no
   race with the worker's commit). Without a wait (the relay, the sweeper) every run started
   is recorded at once.

It never raises into the tool call: the answer is already committed, and whatever could not
be started is left undispatched for the stream relay and the sweeper (``formwork.aws.relay``).

Approval entries start an ``ApprovalWorkflow`` instead (same id = key, same id policies, never
waited for: it waits for a human, or its deadline). ``notify_decided`` signals it, best
effort, once the API has stored a decision.

One Temporal client per warm container, connected on one event loop that a daemon thread
runs for the life of the process (``TemporalConnection``, ``formwork.temporal.connection``);
calls from the handler's thread hop onto it. No ``asyncio.run`` per call: a client only works
on the loop it connected on.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from forms.hook_speed import HookName, HookTimes, declared_slow
from formwork.temporal.connection import TemporalConnection, connection_for
from formwork.temporal.settings import DispatchSettings
from formwork.temporal.shared import (
    DECIDED_SIGNAL,
    ApprovalInput,
    HookInput,
    HookPolicy,
    instance_of,
)
from formwork.temporal.starter import RunInput, StartReport, start_hooks

if TYPE_CHECKING:
    from forms.app.hooks import HookRunner
    from forms.instance import FormInstance, OutboxEntry

_log = logging.getLogger("formwork.dispatch")

START_TIMEOUT_SECONDS = 8.0
"""How long one dispatch may spend connecting and starting runs before it gives up (the relay
then dispatches what it could not)."""
SIGNAL_TIMEOUT_SECONDS = 3.0
"""How long the API may spend telling an approval's workflow about a decision."""


@runtime_checkable
class Marker(Protocol):
    """What the dispatcher needs of the runner besides running hooks: recording dispatch."""

    def mark_dispatched(self, instance_id: str, keys: Sequence[str]) -> list[str]: ...


def policy_from(settings: DispatchSettings) -> HookPolicy:
    return HookPolicy(
        max_attempts=settings.hook_max_attempts,
        timeout_seconds=float(settings.hook_timeout_seconds),
        heartbeat_seconds=float(settings.hook_heartbeat_seconds),
    )


class TemporalDispatcher:
    """Starts a ``HookWorkflow`` per executor entry (an ``ApprovalWorkflow`` per approval),
    records the dispatch, waits a little for the hooks."""

    def __init__(
        self,
        connection: TemporalConnection,
        *,
        task_queue: str,
        policy: HookPolicy | None = None,
        wait_ms: int = 1500,
        start_timeout: float = START_TIMEOUT_SECONDS,
        local_first: bool = True,
    ) -> None:
        self.connection = connection
        self.local_first = local_first
        """Whether the hooks the call waits for make their first attempt as a local
        activity (``formwork.temporal.hooks``); off, every attempt is an ordinary activity."""
        self.task_queue = task_queue
        self.policy = policy or HookPolicy()
        self.wait_ms = wait_ms
        self.start_timeout = start_timeout
        self.times = HookTimes()
        """What this process learned of each hook's run time (``forms.hook_speed``)."""
        self._took = _Took()

    @classmethod
    def from_settings(cls, settings: DispatchSettings) -> TemporalDispatcher:
        return cls(
            connection_for(settings.temporal),
            task_queue=settings.temporal.task_queue,
            policy=policy_from(settings),
            wait_ms=settings.hook_wait_ms,
        )

    # ------------------------------------------------------------------ the Dispatcher protocol

    def dispatch(
        self, runner: HookRunner, entries: Sequence[OutboxEntry], instance: FormInstance
    ) -> None:
        """After a commit: start, wait up to ``wait_ms`` for the hooks that are not slow
        (``forms.hook_speed``: declared, or learned), record. Never raises (see module).
        The runs happen in workers, so there is no instance to hand back: None."""
        names = {e.key: (instance.form_id, e.hook_id) for e in entries}
        try:
            held = {e.key for e in entries if not self.is_slow(runner, instance, e)}
            self.send(runner, entries, wait_ms=self.wait_ms, wait_for=held, names=names)
        except Exception:
            _log.warning(
                "could not dispatch %s; the relay will",
                ", ".join(e.key for e in entries),
                exc_info=True,
            )

    def is_slow(self, runner: HookRunner, instance: FormInstance, entry: OutboxEntry) -> bool:
        """Whether the call should not wait for ``entry``'s run: its executor is declared
        slow, or its last runs took longer than the wait (``forms.hook_speed``)."""
        if self.times.slow((instance.form_id, entry.hook_id), self.wait_ms):
            return True
        loop = getattr(runner, "loop", None)
        if loop is None:
            return False
        try:
            form = loop.registry.for_instance(instance)[0]
        except Exception:  # an unknown form: the run itself reports it
            return False
        hook = form.hook(entry.hook_id)
        return hook is not None and declared_slow(hook.executor)

    # ------------------------------------------------------------------ for the relay too

    def send(
        self,
        runner: HookRunner,
        entries: Sequence[OutboxEntry],
        *,
        wait_ms: int = 0,
        wait_for: set[str] | None = None,
        names: dict[str, HookName] | None = None,
        look_first: bool = False,
    ) -> list[str]:
        """Start the runs of ``entries`` (executors and approvals), record them as dispatched,
        then wait up to ``wait_ms`` for the executors' runs to end. Returns the keys dispatched.

        ``look_first`` (the relay, the sweeper: after the tool call) leaves alone, unstarted
        and unrecorded, the keys whose run is going (``formwork.temporal.starter``): a tool call
        still waiting for the run it started records it itself, or its run ends the entry.

        An entry that already carries ``dispatched_at`` (an operator's retry of a failed hook,
        or a run that ended without finishing its entry) is started *again*: its previous run
        is joined if it is still going, and a new run under the same id starts only once it
        has closed. Raises when some run could not be started, after recording the others.
        """
        held = wait_for if wait_ms > 0 else set()
        hooks = [
            run
            for e in entries
            if (run := self.run_input(e, local_first=held is None or e.key in held)) is not None
        ]
        if not hooks:
            return []
        again = {e.key for e in entries if e.dispatched_at is not None}
        report = self.connection.run(
            self._start(hooks, again, look_first), timeout=self.start_timeout
        )
        executors = {h.key for h in hooks if isinstance(h, HookInput)}
        waited = [
            key
            for key in report.dispatched
            if key in executors and (wait_for is None or key in wait_for)
        ]
        ended: set[str] = set()
        if wait_ms > 0 and waited:
            seconds = wait_ms / 1000
            try:
                running = self.connection.run(self._wait(waited, seconds), timeout=seconds + 5)
                ended = set(waited) - set(running)
                for key, ms in self._took.pop_all(waited, running, wait_ms).items():
                    if names is not None and key in names:
                        self.times.record(names[key], ms)
            finally:  # a run that ended within the wait committed its entry done or failed:
                # recording its dispatch would be a write (racing that commit) that says nothing
                self._mark(runner, [h for h in hooks if h.key not in ended], report)
        else:
            self._mark(runner, hooks, report)
        report.raise_first()
        return report.dispatched

    def run_input(self, entry: OutboxEntry, *, local_first: bool = False) -> RunInput | None:
        """What the run of a pending outbox entry is started with (None: nothing to run).
        ``local_first``: the call waits for this hook, whose first attempt is then made in
        the run's first workflow task (``formwork.temporal.hooks``)."""
        if entry.status != "pending":
            return None
        instance_id = instance_of(entry.key, entry.hook_id, entry.occurrence)
        if entry.kind == "executor":
            return HookInput(
                instance_id, entry.key, self.policy, local_first=local_first and self.local_first
            )
        if entry.kind == "approval":
            deadline = entry.deadline.isoformat() if entry.deadline is not None else None
            return ApprovalInput(instance_id, entry.key, deadline, self.policy)
        return None

    def notify_decided(self, approval_id: str, timeout: float = SIGNAL_TIMEOUT_SECONDS) -> bool:
        """Signal the approval's workflow that a decision is stored; False if that failed.

        Best effort: the decision is durable already. A workflow that never started, or has
        ended, cannot be signalled, and one that misses the signal settles at its deadline
        (finding the decision there, it changes nothing).
        """

        async def signal() -> None:
            client = await self.connection.client()
            await client.get_workflow_handle(approval_id).signal(DECIDED_SIGNAL)

        try:
            self.connection.run(signal(), timeout=timeout)
        except Exception as exc:
            _log.warning("could not signal the workflow of %s: %s", approval_id, exc)
            return False
        return True

    async def _start(
        self, hooks: list[RunInput], again: set[str], look_first: bool = False
    ) -> StartReport:
        client = await self.connection.client()
        return await start_hooks(
            client, hooks, task_queue=self.task_queue, again=again, look_first=look_first
        )

    def _mark(self, runner: HookRunner, hooks: list[RunInput], report: StartReport) -> None:
        if not isinstance(runner, Marker) or not report.dispatched:
            return
        by_instance: dict[str, list[str]] = {}
        done = set(report.dispatched)
        for hook in hooks:
            if hook.key in done:
                by_instance.setdefault(hook.instance_id, []).append(hook.key)
        for instance_id, keys in by_instance.items():
            runner.mark_dispatched(instance_id, keys)

    async def _wait(self, keys: Sequence[str], seconds: float) -> list[str]:
        """Wait up to ``seconds`` for the runs of ``keys`` to end; the keys still running."""
        client = await self.connection.client()
        tasks = {
            asyncio.ensure_future(client.get_workflow_handle(key).result()): key for key in keys
        }
        started = time.perf_counter()
        for task, key in tasks.items():
            task.add_done_callback(functools.partial(self._took.note, key, started))
        done, pending = await asyncio.wait(tasks, timeout=seconds)
        for task in pending:
            task.cancel()
        for task in done:
            task.exception()  # a failed hook is recorded on the instance; nothing to raise
        return [tasks[t] for t in pending]


class _Took:
    """When each waited-for run ended, noted from the wait's tasks (on the connection's loop)
    and read by the caller's thread once the wait is over."""

    def __init__(self) -> None:
        self._ms: dict[str, float] = {}
        self._lock = threading.Lock()

    def note(self, key: str, started: float, task: asyncio.Future[Any]) -> None:
        if task.cancelled():  # the wait ended first: counted as the whole wait, nothing kept
            return
        with self._lock:
            self._ms[key] = (time.perf_counter() - started) * 1000

    def pop_all(
        self, keys: Sequence[str], running: Sequence[str], wait_ms: int
    ) -> dict[str, float]:
        """The time of each of ``keys``: as noted, or the whole wait for one still running."""
        with self._lock:
            found = {key: self._ms.pop(key, float(wait_ms)) for key in keys}
        for key in running:
            found[key] = float(wait_ms)
        return found


__all__ = [  # the connection's names too: they lived here, and the dispatcher's callers use them
    "SIGNAL_TIMEOUT_SECONDS",
    "START_TIMEOUT_SECONDS",
    "Marker",
    "TemporalConnection",
    "TemporalDispatcher",
    "connection_for",
    "policy_from",
]
