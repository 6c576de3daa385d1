"""The memory part of a deployment: recall into ``form_start``, and facts from answers.

``Memory`` holds what the service needs of memory: the fact store (``forms.storage.facts``),
the vocabulary, the decay policy, a deadline, and where its reads and writes run.
``FormService(..., memory=Memory(facts))`` turns it on for the deployment; without one (the
default) no fact is ever read or written. It only applies to calls from an agent's
conversation (``Caller.source == "agent"``: a principal verified by the API's authorizer, never
one a request body names), and only to forms with fields that declare a fact key.

One tool call, in order (``MemoryCall``):

0. **Prepare, once.** The first call that uses memory in a process loads what memory runs (its
   modules, the vocabulary, the decay policy, its worker thread: ``Memory.prepare``) before
   any deadline starts, so a deadline measures the store, never the loading of code.
1. **Read, first the switch.** ``form_start`` of such a form starts the read on a worker at
   once, beside the start's own work: the principal's settings first (memory off: nothing
   more is read, not one fact), then every fact in force (one query).
2. **Never throw, never block.** Once the start is planned the call waits for the read for what
   is left of the deadline (``deadline``, 200 ms by default, well under a tool call's budget).
   A read is in time when it took no longer than the deadline, however long the start's own
   work took; it is late when it took longer, or is still running when the deadline from its
   start has passed (the call stops waiting then). Late, or on any failure of the store, the
   form stays as started, without memory: the failure is logged and counted (``counts``, and
   ``count`` for metrics), never shown to the model as an error. A late read is not thrown
   away: the instance records that the recall is owed, the process keeps the read, and the
   next call on the instance delivers it as offers (``begin_owed``, ``deliver_owed``),
   reading again when it runs in another process.
3. **Apply, in the start's write.** What the facts fill and offer is planned on the started
   instance before it is stored (``recall_step``: ``forms.app.recall.plan_recall_step``), and
   the start stores both in its one write, with the call's record (a handover: in the
   source's commit). Nothing to fill or offer: nothing more is written. The context defaults
   (values the caller's verified token carries, ``Caller.context``) go in the same write,
   below memory; when memory has nothing, is off, late or failed, they are planned alone,
   on time (``plan_defaults`` in a deployment without memory).
4. **Remember what the user says.** After any write call's commit, the answers the agent wrote
   to fields that declare a fact key are recorded (``remember``): a confirmation of the fact
   when the answer is the value memory filled or offered, else a statement, stated now; only
   if memory is on, never for a ``do_not_store`` key (refused). Behind the answer: the call
   hands the recording to memory's worker and answers at once (a slow fact store never delays
   an answer); failures are logged and counted, never shown.

Recording itself (which answers count, confirmation or statement) is ``forms.app.remember``;
the write of one fact is ``forms.app.facts.write_fact``, the loop the memory API uses too.
``forms.memory`` is imported when a call first uses memory, not with the service. This module
is the deployment's part (``Memory``) and the defaults without memory (``plan_defaults``); one
call's part is ``forms.app.memory_call`` (``MemoryCall``, ``MemoryRead``) and the names memory
counts ``forms.app.memory_metrics``, all importable from here.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Collection, Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from forms.app.behind import PROCESS, Behind
from forms.app.memory_call import MemoryCall, MemoryRead
from forms.app.memory_metrics import (
    APPLY_FAILED,
    FILLED,
    METRICS,
    OFFERED,
    RECALL_DELIVERED,
    RECALL_FAILED,
    RECALL_OFF,
    RECALL_OWED,
    RECALL_TIMEOUT,
    described,
)
from forms.app.remember import CONFIRMED, RECORD_FAILED, RECORDED, REFUSED, Answer
from forms.instance import FormInstance

if TYPE_CHECKING:
    from concurrent.futures import Executor, Future

    from forms.app.recall import RecallStep
    from forms.compiled import CompiledForm
    from forms.memory.decay import DecayPolicy
    from forms.memory.vocabulary import Vocabulary
    from forms.storage.facts import FactStore

_log = logging.getLogger("formwork")

T = TypeVar("T")

LATE_KEPT = 256
"""How many late reads a process keeps for the next call on their instance."""

DEFAULT_DEADLINE = timedelta(milliseconds=200)
"""How long ``form_start`` waits for the fact store's read (recording never waits)."""

_LOADED = (
    "forms.memory.facts",  # the read's models, and recording's
    "forms.memory.statements",  # recording's plans
    "forms.app.recall",  # the apply's planner and commit (the recall planner, decay, fit)
    "forms.app.facts",  # recording's write loop
)
"""What ``Memory.prepare`` imports: every module a memory call would otherwise load on its
first use, on the worker or between the read and the apply."""


class Memory:
    """Memory for a deployment: its fact store, vocabulary and decay policy (Formwork's by
    default), the deadline on the store, the timer that measures it (None: the service's),
    the executor its reads and writes run on (None: a few threads of its own), ``count``,
    called with a metric name (``METRICS``) each time one is counted, and ``behind``, where
    the work it submits is tracked until it ends (an App gives its own, which Lambda waits for
    after each response, ``formwork.aws.after_response``; by default ``behind.PROCESS``)."""

    def __init__(
        self,
        facts: FactStore,
        *,
        vocabulary: Vocabulary | None = None,
        policy: DecayPolicy | None = None,
        deadline: timedelta = DEFAULT_DEADLINE,
        timer: Callable[[], float] | None = None,
        executor: Executor | None = None,
        count: Callable[[str], None] | None = None,
        workers: int = 4,
        behind: Behind = PROCESS,
    ) -> None:
        if deadline <= timedelta(0):
            raise ValueError("the memory deadline must be positive")
        self.facts = facts
        self.behind = behind
        self.deadline = deadline
        self.timer = timer
        self._vocabulary = vocabulary
        self._policy = policy
        self._executor = executor
        self._count = count
        self._workers = workers
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._preparing = threading.Lock()
        self._prepared = False
        self._late: OrderedDict[str, Future[tuple[MemoryRead, float]]] = OrderedDict()

    def prepare(self) -> None:
        """Load what memory's calls run, once per Memory: its modules (the read's models, the
        recall planner, the fact writer), the vocabulary and the decay policy, and its own
        executor with a thread started. Every call that uses memory asks for this before it
        starts a deadline's clock, so the first one in a process pays the loading outside the
        deadline (a deadline that loading can miss turns memory off on every cold start); the
        others find it done. Never raises: what fails here fails again where it is used, and
        is counted there."""
        if self._prepared:
            return
        with self._preparing:  # a lock of its own: a slow load must not hold counted()
            if self._prepared:
                return
            try:
                self._load()
            except Exception as exc:
                _log.warning("memory: preparing failed (%s)", described(exc))
            self._prepared = True

    def _load(self) -> None:
        """The one-time work of ``prepare``: import, build, start a thread."""
        for module in _LOADED:
            importlib.import_module(module)
        _ = self.vocabulary, self.policy
        with self._lock:
            owned = self._executor is None
        if owned:  # ours: start its first thread now (a pool starts them on submit)
            self.submit(_nothing).result()

    @property
    def vocabulary(self) -> Vocabulary:
        if self._vocabulary is None:
            from forms.memory.vocabulary import Vocabulary  # noqa: PLC0415 (on first use)

            self._vocabulary = Vocabulary.default()
        return self._vocabulary

    @property
    def policy(self) -> DecayPolicy:
        if self._policy is None:
            from forms.memory.decay import DecayPolicy  # noqa: PLC0415 (on first use)

            self._policy = DecayPolicy.default()
        return self._policy

    def counts(self) -> dict[str, int]:
        """How many times each metric was counted so far (only those counted)."""
        with self._lock:
            return dict(self._counts)

    def counted(self, name: str, n: int = 1) -> None:
        if n <= 0:
            return
        with self._lock:
            self._counts[name] += n
        if self._count is not None:
            for _ in range(n):
                try:
                    self._count(name)
                except Exception:
                    _log.exception("memory: counting %s failed", name)

    def submit(self, work: Callable[[], T]) -> Future[T]:
        """Run ``work`` on the executor."""
        with self._lock:
            if self._executor is None:
                from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415 (first use)

                self._executor = ThreadPoolExecutor(
                    max_workers=self._workers, thread_name_prefix="formwork-memory"
                )
            executor = self._executor
        future = executor.submit(work)
        self.behind.track(future)  # it may outlive the call's answer: Lambda settles it after
        return future

    def keep_late(self, instance_id: str, read: Future[tuple[MemoryRead, float]]) -> None:
        """Keep a start's read that came late, for the next call on ``instance_id`` in this
        process (the most recent ``LATE_KEPT``; a call in another process reads again)."""
        with self._lock:
            self._late[instance_id] = read
            self._late.move_to_end(instance_id)
            while len(self._late) > LATE_KEPT:
                self._late.popitem(last=False)

    def take_late(self, instance_id: str) -> Future[tuple[MemoryRead, float]] | None:
        """The late read kept for ``instance_id``, once; None when this process has none."""
        with self._lock:
            return self._late.pop(instance_id, None)

    def call(
        self, principal: str, conversation_id: str, timer: Callable[[], float] | None
    ) -> MemoryCall:
        """Memory's part of one tool call (``timer``: the service's, when this has none)."""
        return MemoryCall(self, principal, conversation_id, self.timer or timer)


def plan_defaults(
    form: CompiledForm,
    instance: FormInstance,
    context: Mapping[str, Any],
    *,
    named: Collection[str],
    tool_call_id: str,
    now: datetime,
    vocabulary: Vocabulary | None = None,
) -> RecallStep | None:
    """The context defaults alone, in a deployment without memory: they are not remembered
    facts (the token carries them on every call), so they need no fact store. Planned on the
    start's instance before it is stored, as memory's recall is; None when no field takes
    them (or the plan failed: logged, never raised). ``vocabulary``: the keys' types a default
    must fit (None: Formwork's)."""
    from forms.app.recall import plan_recall_step  # noqa: PLC0415 (on first use)

    if vocabulary is None:
        from forms.memory.vocabulary import Vocabulary  # noqa: PLC0415 (on first use)

        vocabulary = Vocabulary.default()
    try:
        return plan_recall_step(
            form,
            instance,
            (),
            vocabulary=vocabulary,
            now=now,
            named=named,
            tool_call_id=tool_call_id,
            context=context,
        )
    except Exception as exc:
        _log.warning("context defaults: planning them failed (%s)", described(exc))
        return None


def _nothing() -> None:
    """The work that starts an executor's first thread."""


__all__ = [
    "APPLY_FAILED",
    "CONFIRMED",
    "DEFAULT_DEADLINE",
    "FILLED",
    "LATE_KEPT",
    "METRICS",
    "OFFERED",
    "RECALL_DELIVERED",
    "RECALL_FAILED",
    "RECALL_OFF",
    "RECALL_OWED",
    "RECALL_TIMEOUT",
    "RECORDED",
    "RECORD_FAILED",
    "REFUSED",
    "Answer",
    "Memory",
    "MemoryCall",
    "MemoryRead",
    "plan_defaults",
]
