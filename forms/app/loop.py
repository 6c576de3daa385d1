"""The one commit loop: load, plan, compare-and-set, and on a conflict, again, for every
aggregate (instances, drafts, facts).

``CommitPolicy.retry_with`` is the loop itself (``retry`` for an attempt that takes nothing but
what is stored), whatever is written, its first attempt included: an attempt plans on what was
loaded and writes compare-and-set, with the call's record in the same write; a lost race
(``forms.errors.Conflict``, which carries what is stored now) is planned again on what it
carries, within the one budget below and with the one backoff. A write whose call id the store
finds recorded (``CallRecorded``) is answered by ``CommitPolicy.replayed``: the first result,
within the replay window. The instance loop (``CommitLoop``, below), the builder's draft edits
(``forms.app.builder``) and fact writes (``forms.app.facts.write_fact``) are each an attempt
handed to it; a composition root that hands every service the same ``CommitPolicy`` changes
the retry and idempotency policy of all three in one place.

Everything that changes an instance goes through ``CommitLoop.commit``: the write tools, hook
runs, approval decisions and expiries, operator retries, dispatch marks, and a read that finds
an instance on a definition version that is gone (its migration is a commit like any other).
A plan is a pure function of the definition, the instance as stored and the time; it returns
what to commit and a value for its caller (``Planned``), or nothing to commit. On a conflict
the loop waits (jittered backoff) and plans again on the instance the store hands back, so a
plan never acts on a stale read.

How long it keeps trying is counted in attempts, never in wall-clock time (which a loaded
machine eats). A conflict is one of two kinds. **Overtaken**: the store hands back a newer
instance, so another write landed; the system made progress, and planning again on it is
always possible (writers to distinct fields merge). With a bounded number of writers a call
is overtaken at most once per other write, so it lands; ``max_overtaken`` only stops a true
livelock (an instance others never stop writing). **Stalled**: nothing newer came back (two
transactions cancelled each other, or one is still in flight); the loop backs off longer
with each stall in a row, and gives up after ``max_conflict_retries`` of them. Either bound
answers ``busy`` as data (``TooManyConflicts``), nothing of the call saved. (A policy without
``max_overtaken``, ``CommitPolicy.counted``, counts every conflict as a stall: a flat
budget, what memory's answers-to-facts write and a test ask for.)

The caller gets the transition committed, the value its last plan computed, and the instance
as stored after the commit (``Outcome``), so nothing the commit just produced is read back.

A plan's value may be left unrendered until the commit decision: the write tools plan a
``forms.app.calls.Rendering`` and a record made only when the store writes it
(``calls.deferred_call``), so a call's result is rendered once, by the store for the write it
makes (or by the caller when nothing is written), never for an attempt that lost its
compare-and-set or found its call id taken (``tests/unit/test_render_once.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Generic, NamedTuple, TypeVar, cast

from pydantic import JsonValue

from forms.app.calls import DEFAULT_REPLAY_WINDOW, CallId, check_replay
from forms.compiled import CompiledForm
from forms.definition import Migration
from forms.engine import Transition
from forms.errors import Conflict, NotFound, TooManyConflicts, Versioned
from forms.instance import CallRecord, FormInstance
from forms.registry import Forms, migration_commit
from forms.storage.port import FormStore

T = TypeVar("T")
R = TypeVar("R")
S = TypeVar("S", bound="Versioned | None")
G = TypeVar("G")

_tuple_new = tuple.__new__  # a named tuple from its fields in order, without its Python __new__

MAX_CONFLICT_RETRIES = 40
"""Retries after conflicts in which no other write landed (transactions that cancelled each
other, one still in flight), backing off longer each time in a row, before ``busy``."""
MAX_OVERTAKEN = 100
"""Retries after conflicts in which another write landed, before ``busy``. Counted, never
timed (a loaded machine eats time, not attempts): a call is overtaken at most once per other
write, so under twenty writers on one instance every write lands; only an instance other
writers never leave alone (a livelock) reaches it."""


def no_wait(attempt: int) -> None:
    """A backoff that does not wait (a test's, or a write whose callers wait themselves)."""
    del attempt


@dataclass(frozen=True, slots=True)
class CommitPolicy:
    """How every commit loop retries a lost compare-and-set, and how long a recorded call is
    answered with its first result: one object, handed to every service by the composition
    root, so a change of either is made once.

    ``max_conflict_retries`` bounds stalled conflicts, ``max_overtaken`` overtaken ones (None:
    every conflict counts as a stall, ``counted``); ``backoff(n)`` waits before the next
    attempt (``n``: the stalls in a row, 0 after progress; none by default: the composition
    root hands in a real wait, ``forms.app.service.jittered_backoff``, so nothing here reads
    a clock or draws randomness); ``replay_window`` is how long a retried call gets its first
    result back (``forms.app.calls``)."""

    max_conflict_retries: int = MAX_CONFLICT_RETRIES
    max_overtaken: int | None = MAX_OVERTAKEN
    backoff: Callable[[int], None] = no_wait
    replay_window: timedelta = DEFAULT_REPLAY_WINDOW

    @classmethod
    def counted(
        cls,
        attempts: int,
        backoff: Callable[[int], None] = no_wait,
        replay_window: timedelta = DEFAULT_REPLAY_WINDOW,
    ) -> CommitPolicy:
        """A flat budget: ``attempts`` writes in all, whatever kind of conflict each lost to
        (``backoff(n)`` before the ``n``-th retry, 1-based)."""
        if attempts < 1:
            raise ValueError("a write needs at least one attempt")
        return cls(attempts - 1, None, backoff, replay_window)

    def retry(
        self,
        loaded: S,
        attempt: Callable[[S], R],
        *,
        busy: Callable[[], TooManyConflicts],
        current: Callable[[Conflict[Any]], S] | None = None,
    ) -> R:
        """``attempt(loaded)``, and on each ``Conflict`` it raises, ``attempt`` again on what
        is stored now (``current(conflict)``; by default what the conflict carries), waiting
        ``backoff`` first, until it returns or a bound is reached: then ``busy()`` is raised,
        and nothing of the call is saved (what an attempt raises besides ``Conflict``, such
        as ``CallRecorded``, leaves as it is). ``retry_with`` with nothing given."""
        return self.retry_with(loaded, _alone, attempt, busy, current)

    def retry_with(
        self,
        loaded: S,
        attempt: Callable[[S, G], R],
        given: G,
        busy: Callable[[], TooManyConflicts],
        current: Callable[[Conflict[Any]], S] | None = None,
    ) -> R:
        """``retry`` of ``attempt(loaded, given)``: the one loop, first attempt included.
        ``given`` is what every attempt is handed besides what is stored
        (``CommitLoop.commit``'s plan), so a caller makes no closure to bind it; the
        arguments are positional, so the call is one Python frame pushed in place."""
        try:  # most writes land on the first attempt
            return attempt(loaded, given)
        except Conflict as lost:
            conflict: Conflict[Any] = lost
        overtaken = stalled = streak = 0
        while True:
            now = current(conflict) if current is not None else cast(S, conflict.current)
            found = now.version if now is not None else 0
            if self.max_overtaken is not None and found > conflict.expected:
                overtaken, streak = overtaken + 1, 0  # another write landed: progress
            else:
                stalled, streak = stalled + 1, streak + 1
            if overtaken > (self.max_overtaken or 0) or stalled > self.max_conflict_retries:
                break
            self.backoff(streak)
            try:
                return attempt(now, given)
            except Conflict as again:
                conflict = again
        raise busy()

    def replayed(self, call: CallId, record: CallRecord, now: datetime) -> dict[str, JsonValue]:
        """The first result of ``call``, recorded as ``record``, marked ``replayed``; a
        different call under the id is ``ToolCallConflict``, one past the replay window
        ``ToolCallExpired`` (``forms.app.calls.check_replay``). Nothing is applied."""
        check_replay(call, record, now, self.replay_window)
        return {**record.result, "replayed": True}


class Planned(NamedTuple, Generic[T]):
    """What one plan decided: ``value`` for the caller, and the transition to commit (None:
    nothing to write, the instance stays as it is). A named tuple: made on every attempt of
    every write (the write tools make theirs with ``tuple.__new__``, in C), never changed."""

    value: T
    step: Transition | None = None
    start: FormInstance | None = None
    """A handover's target (``forms.handover``): created in the same all-or-nothing write as
    ``step``'s commit (``FormStore.hand_over``), or not at all."""


class Outcome(NamedTuple, Generic[T]):
    """What the loop did: the definition the instance runs on, the instance as stored after
    the loop (committed or not), the transition committed (None when the plan wrote nothing)
    and the value of the plan that won. A named tuple, made by the loop in C
    (``_tuple_new``): one on every write."""

    form: CompiledForm
    instance: FormInstance
    value: T
    step: Transition | None = None


Plan = Callable[[CompiledForm, FormInstance, datetime], Planned[T]]
"""``plan(form, instance, now)``: pure; may raise a ``ToolError`` to refuse (nothing is saved)."""


class CommitLoop:
    """Plans and commits on instances of a registry's forms in a store, compare-and-set,
    through ``CommitPolicy.retry``.

    The clock, the timer and the policy (its wait between attempts) are given: the
    composition root hands in the real ones, the same policy to every service, so the loop
    itself reads no clock and draws no randomness."""

    def __init__(
        self,
        registry: Forms,
        store: FormStore,
        *,
        clock: Callable[[], datetime],
        timer: Callable[[], float],
        policy: CommitPolicy,
    ) -> None:
        self.registry = registry
        self.store = store
        self.clock = clock
        self.policy = policy
        self.timer = timer
        """The service's monotonic timer, for what measures time around the loop (memory's
        deadline); the loop itself never stops on time."""

    @property
    def backoff(self) -> Callable[[int], None]:
        return self.policy.backoff

    @backoff.setter
    def backoff(self, wait: Callable[[int], None]) -> None:
        self.policy = replace(self.policy, backoff=wait)

    @property
    def max_conflict_retries(self) -> int:
        """Retries after stalled conflicts (nothing newer came back) before ``busy``."""
        return self.policy.max_conflict_retries

    @property
    def max_overtaken(self) -> int | None:
        """Retries after conflicts where another write landed before ``busy``: the bound on a
        livelock, far above what a bounded number of concurrent writers can cause."""
        return self.policy.max_overtaken

    def load(self, instance_id: str) -> FormInstance | None:
        """The stored instance, or None when there is none."""
        try:
            return self.store.get(instance_id)
        except NotFound:
            return None

    def commit(self, instance: FormInstance, plan: Plan[T]) -> Outcome[T]:
        """Run ``plan`` on ``instance`` (migrated first when its definition version is gone)
        and commit what it returns, compare-and-set; on a conflict, wait and start again from
        the instance the store hands back: up to ``max_overtaken`` times when another write
        landed, up to ``max_conflict_retries`` times when none did. Raises
        ``TooManyConflicts`` when a bound is reached (nothing of this call is saved then; a
        migration committed on the way stands, it is what any later call would do first)."""

        return self.policy.retry_with(instance, self._attempt, plan, _busy, self._stored)

    def _stored(self, conflict: Conflict[Any]) -> FormInstance:
        """What a lost race of ``commit`` plans on next: the instance it carries, or, when it
        carries none, the stored one (``NotFound`` when there is none)."""
        stored: FormInstance | None = conflict.current
        return stored if stored is not None else self.store.get(conflict.subject)

    def _attempt(self, instance: FormInstance, plan: Plan[T]) -> Outcome[T]:
        """One attempt of ``commit``: plan on ``instance`` and write what the plan decided
        (``Conflict`` when the store moved on since ``instance``)."""
        form, chain = self.registry.for_instance(instance)
        if chain:  # its version is gone (rare): migrated first
            form, instance = self._migrated(form, instance, chain)
        # unpacked, not read by name: a named tuple's field read is a descriptor call
        value, step, start = plan(form, instance, self.clock())
        if step is None:
            return _tuple_new(Outcome, (form, instance, value, None))
        if start is None:
            stored = self.store.commit(step.commit)
        else:
            stored = self.store.hand_over(step.commit, start)
        return _tuple_new(Outcome, (form, stored, value, step))

    def settle(self, instance: FormInstance) -> tuple[CompiledForm, FormInstance]:
        """The definition ``instance`` runs on, and the instance on it: the stored instance
        itself, or, when its version is gone, the instance after its migration commit."""
        done = self.commit(instance, _nothing)
        return done.form, done.instance

    def _migrated(
        self, form: CompiledForm, instance: FormInstance, chain: list[Migration]
    ) -> tuple[CompiledForm, FormInstance]:
        migrated = self.store.commit(migration_commit(form, instance, chain, self.clock()))
        return self.registry.for_instance(migrated)[0], migrated


def _alone(loaded: S, attempt: Callable[[S], R]) -> R:
    """An attempt that takes what is stored alone (``CommitPolicy.retry``'s)."""
    return attempt(loaded)


def _busy() -> TooManyConflicts:
    return TooManyConflicts(
        "the form was busy with other writes; nothing was saved", "send the same call again"
    )


def _nothing(form: CompiledForm, instance: FormInstance, now: datetime) -> Planned[None]:
    del form, instance, now
    return Planned(None)
