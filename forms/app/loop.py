"""The one commit loop: load, migrate, plan, compare-and-set, and on a conflict, again.

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
answers ``busy`` as data (``TooManyConflicts``), nothing of the call saved.

The caller gets the transition committed, the value its last plan computed, and the instance
as stored after the commit (``Outcome``), so nothing the commit just produced is read back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, TypeVar

from forms.compiled import CompiledForm
from forms.engine import Transition
from forms.errors import ConflictError, NotFound, TooManyConflicts
from forms.instance import FormInstance
from forms.registry import Forms, migration_commit
from forms.storage.port import FormStore

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Planned(Generic[T]):
    """What one plan decided: ``value`` for the caller, and the transition to commit (None:
    nothing to write, the instance stays as it is)."""

    value: T
    step: Transition | None = None
    start: FormInstance | None = None
    """A handover's target (``forms.handover``): created in the same all-or-nothing write as
    ``step``'s commit (``FormStore.hand_over``), or not at all."""


@dataclass(frozen=True, slots=True)
class Outcome(Generic[T]):
    """What the loop did: the definition the instance runs on, the instance as stored after
    the loop (committed or not), the transition committed (None when the plan wrote nothing)
    and the value of the plan that won."""

    form: CompiledForm
    instance: FormInstance
    value: T
    step: Transition | None = None


Plan = Callable[[CompiledForm, FormInstance, datetime], Planned[T]]
"""``plan(form, instance, now)``: pure; may raise a ``ToolError`` to refuse (nothing is saved)."""


class CommitLoop:
    """Plans and commits on instances of a registry's forms in a store, compare-and-set.

    The clock and the wait between attempts are given (``FormService`` wires the real ones),
    so the loop itself reads no clock and draws no randomness."""

    def __init__(
        self,
        registry: Forms,
        store: FormStore,
        *,
        clock: Callable[[], datetime],
        backoff: Callable[[int], None],
        max_conflict_retries: int = 10,
        max_overtaken: int = 100,
        timer: Callable[[], float] | None = None,
    ) -> None:
        self.registry = registry
        self.store = store
        self.clock = clock
        self.backoff = backoff
        self.max_conflict_retries = max_conflict_retries
        """Retries after stalled conflicts (nothing newer came back) before ``busy``."""
        self.max_overtaken = max_overtaken
        """Retries after conflicts where another write landed before ``busy``: the bound on a
        livelock, far above what a bounded number of concurrent writers can cause."""
        self.timer = timer
        """The service's monotonic timer, for what measures time around the loop (memory's
        deadline); the loop itself never stops on time."""

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
        overtaken = stalled = streak = 0
        while True:
            try:
                form, instance = self._migrated(instance)
                planned = plan(form, instance, self.clock())
                if planned.step is None:
                    return Outcome(form, instance, planned.value)
                if planned.start is None:
                    stored = self.store.commit(planned.step.commit)
                else:
                    stored = self.store.hand_over(planned.step.commit, planned.start)
            except ConflictError as conflict:
                current = conflict.current or self.store.get(instance.id)
                if current.version > instance.version:
                    overtaken, streak = overtaken + 1, 0  # another write landed: progress
                else:
                    stalled, streak = stalled + 1, streak + 1
                if overtaken > self.max_overtaken or stalled > self.max_conflict_retries:
                    break
                instance = current
                self.backoff(streak)
                continue
            return Outcome(form, stored, planned.value, planned.step)
        raise TooManyConflicts(
            "the form was busy with other writes; nothing was saved", "send the same call again"
        )

    def settle(self, instance: FormInstance) -> tuple[CompiledForm, FormInstance]:
        """The definition ``instance`` runs on, and the instance on it: the stored instance
        itself, or, when its version is gone, the instance after its migration commit."""
        done = self.commit(instance, _nothing)
        return done.form, done.instance

    def _migrated(self, instance: FormInstance) -> tuple[CompiledForm, FormInstance]:
        form, chain = self.registry.for_instance(instance)
        if not chain:
            return form, instance
        migrated = self.store.commit(migration_commit(form, instance, chain, self.clock()))
        return self.registry.for_instance(migrated)[0], migrated


def _nothing(form: CompiledForm, instance: FormInstance, now: datetime) -> Planned[None]:
    del form, instance, now
    return Planned(None)
