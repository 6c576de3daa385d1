"""Memory's part of one tool call (``MemoryCall``): the read started early, waited for within
the deadline, applied in the start's write or owed to a later call, and the answers to remember.

``Memory.call`` makes one per tool call that uses memory; the order of its steps, and why, is in
``forms.app.memory``'s docstring. Every failure here is logged and counted
(``forms.app.memory_metrics``), never raised to the call.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from forms.app.loop import CommitLoop, Outcome
from forms.app.memory_metrics import (
    APPLY_FAILED,
    FILLED,
    OFFERED,
    RECALL_DELIVERED,
    RECALL_FAILED,
    RECALL_OFF,
    RECALL_OWED,
    RECALL_TIMEOUT,
    described,
)
from forms.app.remember import RECORD_FAILED, Answer, record
from forms.instance import FormInstance

if TYPE_CHECKING:
    from concurrent.futures import Future

    from forms.app.memory import Memory
    from forms.app.recall import RecallStep
    from forms.compiled import CompiledForm
    from forms.memory.facts import Fact, FactHead

_log = logging.getLogger("formwork")

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class MemoryRead:
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
        self._read: tuple[Future[tuple[MemoryRead, float]], float] | None = None
        self._late: Future[tuple[MemoryRead, float]] | None = None
        self.known: MemoryRead | None = None
        """What the read found, once it came in time (None: not read, late, or failed)."""

    # ------------------------------------------------------------------ recall

    def begin_recall(self) -> None:
        """Start reading the principal's memory: the switch, then (if on) every fact. The
        read notes when it finished on the timer, so the deadline judges the store's time,
        not the time the start's own work took before asking for it."""
        self._read = self._start_read()

    def _start_read(self) -> tuple[Future[tuple[MemoryRead, float]], float] | None:
        """The read submitted to memory's worker, and when it started; None (counted as a
        failure) when the executor takes no work."""
        self.memory.prepare()  # before the clock: loading code is not waiting on the store
        facts, principal = self.memory.facts, self.principal

        def read() -> tuple[MemoryRead, float]:
            if not facts.settings(principal).enabled:
                return MemoryRead(enabled=False), self._now()
            return MemoryRead(enabled=True, heads=tuple(facts.heads(principal))), self._now()

        started = self._now()
        try:
            return self.memory.submit(read), started
        except Exception as exc:  # an executor that takes no work: no memory, as on failure
            _log.warning("memory: recall could not start (%s)", described(exc))
            self.memory.counted(RECALL_FAILED)
            return None

    def recalled(self) -> MemoryRead | None:
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
            _log.warning("memory: recall failed (%s); the form opens without it", described(exc))
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
            _log.warning("memory: planning what was recalled failed (%s)", described(exc))
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
                "memory: the owed recall failed (%s); the next call reads again", described(exc)
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
            _log.warning("memory: delivering the owed recall failed (%s)", described(exc))
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
                _log.warning("memory: recording facts failed (%s)", described(exc))
                memory.counted(RECORD_FAILED)

        try:
            memory.submit(remembered)
        except Exception as exc:  # an executor that takes no work
            _log.warning("memory: recording facts could not start (%s)", described(exc))
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
