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
``forms.memory`` is imported when a call first uses memory, not with the service.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from forms.app.behind import PROCESS, Behind
from forms.app.loop import CommitLoop, Outcome
from forms.app.remember import (
    CONFIRMED,
    RECORD_FAILED,
    RECORDED,
    REFUSED,
    Answer,
    record,
)
from forms.instance import FormInstance

if TYPE_CHECKING:
    from concurrent.futures import Executor, Future

    from forms.app.recall import RecallStep
    from forms.compiled import CompiledForm
    from forms.memory.decay import DecayPolicy
    from forms.memory.facts import Fact, FactHead
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

RECALL_OFF = "MemoryRecallOff"
"""A recall stopped at the principal's switch (memory off): no fact was read."""
RECALL_TIMEOUT = "MemoryRecallTimeout"
RECALL_FAILED = "MemoryRecallFailed"
APPLY_FAILED = "MemoryApplyFailed"
"""The commit writing what memory recalled failed; the form stays as started."""
FILLED = "MemoryFilled"
OFFERED = "MemoryOffered"
RECALL_OWED = "MemoryRecallOwed"
"""A start whose read came late: the instance records that the recall is owed."""
RECALL_DELIVERED = "MemoryRecallDelivered"
"""An owed recall delivered at a later call (what it offered counts as ``MemoryOffered``)."""
METRICS = (
    RECALL_OFF,
    RECALL_TIMEOUT,
    RECALL_FAILED,
    APPLY_FAILED,
    FILLED,
    OFFERED,
    RECALL_OWED,
    RECALL_DELIVERED,
    RECORDED,
    CONFIRMED,
    REFUSED,
    RECORD_FAILED,
)
"""Every name ``Memory`` counts, for metrics (a count each)."""


class Memory:
    """Memory for a deployment: its fact store, vocabulary and decay policy (Formwork's by
    default), the deadline on the store, the timer that measures it (None: the service's),
    the executor its reads and writes run on (None: a few threads of its own), ``count``,
    called with a metric name (``METRICS``) each time one is counted, and ``behind``, where
    the work it submits is tracked until it ends (an App gives its own, which Lambda waits for
    after each response, ``functions.after_response``; by default ``behind.PROCESS``)."""

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
        self._late: OrderedDict[str, Future[tuple[Known, float]]] = OrderedDict()

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
                _log.warning("memory: preparing failed (%s)", _named(exc))
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

    def keep_late(self, instance_id: str, read: Future[tuple[Known, float]]) -> None:
        """Keep a start's read that came late, for the next call on ``instance_id`` in this
        process (the most recent ``LATE_KEPT``; a call in another process reads again)."""
        with self._lock:
            self._late[instance_id] = read
            self._late.move_to_end(instance_id)
            while len(self._late) > LATE_KEPT:
                self._late.popitem(last=False)

    def take_late(self, instance_id: str) -> Future[tuple[Known, float]] | None:
        """The late read kept for ``instance_id``, once; None when this process has none."""
        with self._lock:
            return self._late.pop(instance_id, None)

    def call(
        self, principal: str, conversation_id: str, timer: Callable[[], float] | None
    ) -> MemoryCall:
        """Memory's part of one tool call (``timer``: the service's, when this has none)."""
        return MemoryCall(self, principal, conversation_id, self.timer or timer)


@dataclass(frozen=True, slots=True)
class Known:
    """What a call read of the principal's memory: whether it is on, and (when it is) the
    head of every key ever stated."""

    enabled: bool
    heads: tuple[FactHead, ...] = ()


class _Late(Exception):
    """The deadline passed before the work was done."""


class MemoryCall:
    """Memory's part of one tool call: a read started early, waited for within the deadline,
    applied in the start's write, and the answers to remember."""

    def __init__(
        self,
        memory: Memory,
        principal: str,
        conversation_id: str,
        timer: Callable[[], float] | None,
    ) -> None:
        self.memory = memory
        self.principal = principal
        self.conversation_id = conversation_id
        self._timer = timer
        self._read: tuple[Future[tuple[Known, float]], float] | None = None
        self._late: Future[tuple[Known, float]] | None = None
        self.known: Known | None = None
        """What the read found, once it came in time (None: not read, late, or failed)."""

    # ------------------------------------------------------------------ recall

    def begin_recall(self) -> None:
        """Start reading the principal's memory: the switch, then (if on) every fact. The
        read notes when it finished on the timer, so the deadline judges the store's time,
        not the time the start's own work took before asking for it."""
        self._read = self._start_read()

    def _start_read(self) -> tuple[Future[tuple[Known, float]], float] | None:
        """The read submitted to memory's worker, and when it started; None (counted as a
        failure) when the executor takes no work."""
        self.memory.prepare()  # before the clock: loading code is not waiting on the store
        facts, principal = self.memory.facts, self.principal

        def read() -> tuple[Known, float]:
            if not facts.settings(principal).enabled:
                return Known(enabled=False), self._now()
            return Known(enabled=True, heads=tuple(facts.heads(principal))), self._now()

        started = self._now()
        try:
            return self.memory.submit(read), started
        except Exception as exc:  # an executor that takes no work: no memory, as on failure
            _log.warning("memory: recall could not start (%s)", _named(exc))
            self.memory.counted(RECALL_FAILED)
            return None

    def recalled(self) -> Known | None:
        """The read, waited for until the deadline; None when it failed or came too late
        (logged and counted) or was never started."""
        if self._read is None:
            return self.known
        future, started = self._read
        self._read = None
        try:
            # done while the start did its own work: no wait; else wait what is left
            done = future.result() if future.done() else self._within(future, started)
            known, finished = done
            if finished - started > self.memory.deadline.total_seconds():
                raise _Late  # the store itself took longer than the deadline
            self.known = known
        except _Late:
            _log.warning("memory: recall missed its deadline; it is owed to the next call")
            self.memory.counted(RECALL_TIMEOUT)
            self._late = future
            return None
        except Exception as exc:
            _log.warning("memory: recall failed (%s); the form opens without it", _named(exc))
            self.memory.counted(RECALL_FAILED)
            return None
        if not self.known.enabled:
            self.memory.counted(RECALL_OFF)
        return self.known

    def recall_step(
        self,
        form: CompiledForm,
        instance: FormInstance,
        named: Collection[str],
        tool_call_id: str,
        now: datetime,
        context: Mapping[str, Any] | None = None,
    ) -> RecallStep | None:
        """Wait for the read, then plan what it fills and offers on ``instance`` (the start's,
        before it is stored: the start writes it in its one write), with the context defaults
        (``context``: fact key -> value, from the caller's verified claims), and, when the read
        is late, the recall owed. The defaults never wait on the store's answer: memory off,
        late or failed, they are planned alone. None when there is nothing to write; never
        raises (a failure is logged and counted). ``stored`` counts what landed."""
        known = self.recalled()
        owe = None
        facts: list[Fact] = []
        if self._late is not None:  # late: owed to the next call, which gets it as offers
            from forms.instance import RecallOwed  # noqa: PLC0415 (on first use)

            owe = RecallOwed(since=instance.created_at, named=tuple(sorted(named)))
        elif known is not None and known.enabled:
            facts = [period for head in known.heads for period in head.periods]
        if not facts and not context and owe is None:
            return None
        from forms.app.recall import plan_recall_step  # noqa: PLC0415 (on first use)

        memory = self.memory
        try:
            return plan_recall_step(
                form,
                instance,
                facts,
                vocabulary=memory.vocabulary,
                policy=memory.policy if facts else None,
                now=now,
                named=named,
                tool_call_id=tool_call_id,
                context=context,
                owe=owe,
            )
        except Exception as exc:
            _log.warning("memory: planning what was recalled failed (%s)", _named(exc))
            memory.counted(APPLY_FAILED)
            return None

    def stored(self, instance_id: str, recall: RecallStep | None) -> None:
        """The start's write landed with ``recall``: count what it filled and offered, and keep
        a late read for the next call on ``instance_id`` (the recall it owes)."""
        if recall is None:
            return
        if recall.step.after.state.recall_owed is not None and self._late is not None:
            self.memory.keep_late(instance_id, self._late)
            self.memory.counted(RECALL_OWED)
        self.memory.counted(FILLED, len(recall.filled))
        self.memory.counted(OFFERED, len(recall.offered))

    # ------------------------------------------------------------------ a recall owed

    def begin_owed(self, instance: FormInstance) -> None:
        """At a later call on ``instance``, whose start's read came late: use that read if
        this process holds it and it has ended well, else read again now, beside the call's
        own work (a read still running may be stuck on what made it late: a fresh one gets
        the whole deadline)."""
        late = self.memory.take_late(instance.id)
        if late is not None and late.done() and late.exception() is None:
            self._read = (late, self._now())
            return
        self._read = self._start_read()

    def keep_unused(self, instance_id: str) -> None:
        """Keep the owed read for the next call when this one ended before delivering it (a
        refusal, a replay): nothing is lost with the call."""
        if self._read is not None:
            self.memory.keep_late(instance_id, self._read[0])
            self._read = None

    def deliver_owed(self, loop: CommitLoop, instance: FormInstance) -> Outcome[RecallStep] | None:
        """Wait for the read ``begin_owed`` started, then commit what it has as offers on
        ``instance`` (as stored after the call's own commit) and clear the debt: memory off
        or nothing to offer clears it too. When the read is late again or fails, the debt
        stays for the next call (a read still running is kept for it). Never raises; None
        when nothing was delivered."""
        if self._read is None:
            return None
        future, started = self._read
        self._read = None
        try:
            known = (future.result() if future.done() else self._within(future, started))[0]
        except _Late:
            _log.warning("memory: the owed recall is late again; the next call tries again")
            self.memory.keep_late(instance.id, future)
            self.memory.counted(RECALL_TIMEOUT)
            return None
        except Exception as exc:
            _log.warning(
                "memory: the owed recall failed (%s); the next call reads again", _named(exc)
            )
            self.memory.counted(RECALL_FAILED)
            return None
        from forms.app.recall import commit_late_recall  # noqa: PLC0415 (on first use)

        facts = [period for head in known.heads for period in head.periods] if known.enabled else []
        try:
            done = commit_late_recall(
                loop, instance, facts, vocabulary=self.memory.vocabulary, policy=self.memory.policy
            )
        except Exception as exc:
            _log.warning("memory: delivering the owed recall failed (%s)", _named(exc))
            self.memory.counted(APPLY_FAILED)
            return None
        if done.value is None or done.step is None:
            return None  # another call delivered it first
        self.memory.counted(RECALL_DELIVERED)
        self.memory.counted(OFFERED, len(done.value.offered))
        return Outcome(done.form, done.instance, done.value, done.step)

    # ------------------------------------------------------------------ remember

    def remember(self, answers: tuple[Answer, ...], now: datetime) -> None:
        """Record ``answers`` as facts stated (or confirmed) at ``now``, if memory is on,
        behind the call's answer: the work is handed to memory's worker and tracked
        (``Memory.behind``) until it ends, never waited for, so a slow fact store never
        delays an answer. Never raises: failures are logged and counted where they end."""
        if not answers or (self.known is not None and not self.known.enabled):
            return
        known, memory = self.known, self.memory
        memory.prepare()

        def remembered() -> None:
            try:
                record(
                    memory.facts,
                    principal=self.principal,
                    conversation_id=self.conversation_id,
                    answers=answers,
                    heads=known.heads if known is not None else None,
                    now=now,
                    vocabulary=lambda: memory.vocabulary,
                    count=memory.counted,
                )
            except Exception as exc:  # record counts each answer's own; this is the switch's
                _log.warning("memory: recording facts failed (%s)", _named(exc))
                memory.counted(RECORD_FAILED)

        try:
            memory.submit(remembered)
        except Exception as exc:  # an executor that takes no work
            _log.warning("memory: recording facts could not start (%s)", _named(exc))
            memory.counted(RECORD_FAILED)

    # ------------------------------------------------------------------ the deadline

    def _now(self) -> float:
        return self._timer() if self._timer is not None else 0.0

    def _within(self, future: Future[T], started: float) -> T:
        """``future``'s result, if it comes within the deadline from ``started``; ``_Late``
        otherwise (the work goes on behind, and is counted where it ends)."""
        deadline = self.memory.deadline.total_seconds()
        remaining = deadline - (self._now() - started)
        try:
            value = future.result(timeout=max(remaining, 0.0))
        except TimeoutError:
            raise _Late from None
        if self._now() - started > deadline:
            raise _Late
        return value


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
        _log.warning("context defaults: planning them failed (%s)", _named(exc))
        return None


def _nothing() -> None:
    """The work that starts an executor's first thread."""


def _named(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:300]


__all__ = [
    "CONFIRMED",
    "DEFAULT_DEADLINE",
    "METRICS",
    "RECORDED",
    "RECORD_FAILED",
    "REFUSED",
    "Answer",
    "Known",
    "Memory",
    "MemoryCall",
    "plan_defaults",
]
