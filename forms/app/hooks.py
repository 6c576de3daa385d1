"""Running executors: commit, then run, at least once per outbox entry, effects once per key.

``run_hook`` is what every dispatcher ends up calling, wherever it runs (in this process, or in
a Temporal activity): it runs the executor of one pending outbox entry with the typed values,
the form state and the idempotency key, and commits the executor's effects in a commit that
also marks the entry done, through the one commit loop (``forms.app.loop``). The commit is
compare-and-set and checks the entry is still pending, so a retried or duplicated run applies
its effects at most once; the executor itself may run more than once (at-least-once), which is
why it gets the key.

``InProcessDispatcher`` runs entries right after the commit that produced them, in order,
including the entries that their effects produce, up to a bound. It starts from the instance
that commit stored and carries each run's stored result to the next, so it reads nothing back.
Hooks that keep triggering each other stop wherever they run: the engine records the entry
past ``forms.instance.KNOCK_ON_LIMIT`` as failed instead of dispatching it (logged here).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from forms.app.loop import CommitLoop, Outcome, Plan, Planned, T
from forms.compiled import CompiledForm, Hook
from forms.effect_plans import EffectError, EffectPlan, as_effects, plan_effects
from forms.effects import Effect
from forms.engine import Transition, evaluate, transition
from forms.errors import AlreadyExists, InvalidFormDefinition, TooManyConflicts, UnknownForm
from forms.evaluation import PredicateError
from forms.handover import (
    check_handover,
    handover_chain,
    plan_handover,
    renames_for,
    target_id,
)
from forms.instance import KNOCK_ON_LIMIT, LOOP_STOPPED, FormInstance, OutboxEntry
from forms.keys import parse_key
from forms.state import HookContext

_log = logging.getLogger("formwork")

MAX_ATTEMPTS = 3
"""Attempts before an executor's failure is recorded as final (an operator can retry it)."""
HOOK_FAILED = "HooksFailed"
"""The metric counted once per outbox entry recorded failed for good (``run_hook``'s
``count``); the template's alarm on hooks that failed for good watches it."""


@dataclass(frozen=True, slots=True)
class HookRun:
    """One run of an entry: the outbox entries its effects added, and the instance as stored
    after it (None when the instance is gone)."""

    added: tuple[OutboxEntry, ...] = ()
    instance: FormInstance | None = None

    def pending(self, key: str) -> bool:
        """Whether entry ``key`` still waits for a run (its executor failed with attempts left,
        or a commit kept losing)."""
        entry = self.instance.state.outbox.get(key) if self.instance is not None else None
        return entry is not None and entry.status == "pending"


class HookRunner(Protocol):
    """What dispatchers call to run an entry: by id (a durable runner, elsewhere) or on the
    instance a commit just stored (in process)."""

    def run_hook(self, instance_id: str, key: str) -> Sequence[OutboxEntry]: ...

    def run(self, instance: FormInstance | str, key: str) -> HookRun: ...


class Dispatcher(Protocol):
    """Runs the hook occurrences a commit put in the outbox, after the commit is stored.

    ``instance`` is the instance as that commit stored it. Returns the instance as the runs
    left it when they ran here, in process, or None when they run elsewhere (read the store
    for the state after them).
    """

    def dispatch(
        self, runner: HookRunner, entries: Sequence[OutboxEntry], instance: FormInstance
    ) -> FormInstance | None: ...


class ExecutorFailed(Exception):
    """An executor raised and has attempts left; raised by ``run_hook(raise_on_retry=True)``
    after the attempt is recorded, so a durable runner (a Temporal activity) retries it."""


def run_hook(
    loop: CommitLoop,
    instance: FormInstance | str,
    key: str,
    *,
    max_attempts: int = MAX_ATTEMPTS,
    raise_on_retry: bool = False,
    count: Callable[[str], None] | None = None,
) -> HookRun:
    """Run the executor of outbox entry ``key`` of ``instance`` (as stored, or its id).

    An executor that raises has the attempt recorded on its entry (attempts, error); after
    ``max_attempts`` the entry is ``failed``. With ``raise_on_retry`` a failure that still has
    attempts left raises ``ExecutorFailed`` once recorded, for runners that own the retrying.
    ``count`` is called with ``HOOK_FAILED`` each time this run's commit records an entry
    failed for good (this one, or one its effects stopped at the knock-on limit): a metric
    an alarm watches, emitted where the failure is committed, in whatever process runs it.
    """
    loaded = loop.load(instance) if isinstance(instance, str) else instance
    if loaded is None:
        return HookRun()
    entry = loaded.state.outbox.get(key)
    if entry is None or entry.status != "pending" or entry.kind == "approval":
        return HookRun(instance=loaded)  # approvals wait for a decision, they run no code
    form, current = loop.settle(loaded)
    hook = form.hook(entry.hook_id)
    if hook is None or hook.executor is None:
        return _record(
            loop, current, key, None, "hook no longer exists in the definition", count=count
        )
    context = _context(form, current, hook, entry)
    try:
        outcome = hook.executor(context)
        if inspect.isawaitable(outcome):
            close = getattr(outcome, "close", None)
            if callable(close):
                close()
            raise EffectError("executor returned an awaitable; executors are synchronous")
        effects = as_effects(outcome)
    except (EffectError, InvalidFormDefinition) as exc:
        return _record(loop, current, key, None, str(exc), final=True, count=count)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        run = _record(loop, current, key, None, error, max_attempts=max_attempts, count=count)
        if raise_on_retry and run.pending(key):
            raise ExecutorFailed(error) from exc
        return run
    return _record(loop, current, key, effects, None, count=count)


def _context(
    form: CompiledForm, current: FormInstance, hook: Hook, entry: OutboxEntry
) -> HookContext:
    """What the executor of ``hook`` is given for ``entry``: the form's live values and state as
    ``current`` stands, and the entry's and the instance's particulars."""
    ev = evaluate(form, current)
    return HookContext(
        values=ev.values_for(form),
        state=ev.state_for(form, hook, entry.occurrence),
        answers={f: ev.live[f] for f in sorted(ev.live, key=form.field_index.__getitem__)},
        key=entry.key,
        hook_id=entry.hook_id,
        occurrence=entry.occurrence,
        instance_id=current.id,
        form_id=current.form_id,
        conversation_id=current.conversation_id,
        principal=current.principal,
        status=current.state.status,
        closed_reason=current.state.closed_reason,
        occurred_at=entry.created_at,
        handed_to=current.state.handed_to,
    )


def _record(
    loop: CommitLoop,
    instance: FormInstance,
    key: str,
    effects: tuple[Effect, ...] | None,
    error: str | None,
    final: bool = False,
    max_attempts: int = MAX_ATTEMPTS,
    count: Callable[[str], None] | None = None,
) -> HookRun:
    """Commit the effects (or the failure) of one run, exactly once per key. A handover among
    the effects commits with the target's start, in one write (``FormStore.hand_over``); the
    run's ``added`` then holds the target's entries too."""

    def plan(
        form: CompiledForm, current: FormInstance, now: datetime
    ) -> Planned[tuple[OutboxEntry, ...]]:
        entry = current.state.outbox.get(key)
        if entry is None or entry.status != "pending":
            return Planned(())  # another run got there first: its effects stand
        try:
            if error is not None:
                raise EffectError(error)
            ev = evaluate(form, current)
            effect_plan = plan_effects(
                form, current, entry, tuple(effects or ()), ev.open_step, ev.step_complete, now
            )
            if effect_plan.handover is not None:
                return _handed_over(loop, form, current, effect_plan, key, now)
            step = transition(
                form, current, effect_plan.changes, now, state=effect_plan.state, cause=key
            )
            return Planned((), step)
        except (EffectError, PredicateError, InvalidFormDefinition, UnknownForm) as exc:
            attempts = entry.attempts + 1
            failed = final or error is None or attempts >= max_attempts
            updated = entry.model_copy(
                update={
                    "attempts": attempts,
                    "error": str(exc),
                    "status": "failed" if failed else "pending",
                    "finished_at": now if failed else None,
                }
            )
            return Planned((), _with_entry(form, current, updated, now))

    done = _commit_or_none(loop, instance, plan)
    if done is None:
        return HookRun(instance=instance)
    for entry in done.step.stopped if done.step is not None else ():
        _log.error("instance %s: hook %s not run: %s", instance.id, entry.key, entry.error)
    if count is not None and done.step is not None:
        before = instance.state.outbox
        for entry in done.instance.state.outbox.values():
            was = before.get(entry.key)
            if entry.status == "failed" and (was is None or was.status != "failed"):
                count(HOOK_FAILED)
    if done.step is None:
        return HookRun((), done.instance)
    return HookRun((*done.step.dispatch, *done.value), done.instance)


def _handed_over(
    loop: CommitLoop,
    form: CompiledForm,
    current: FormInstance,
    effect_plan: EffectPlan,
    key: str,
    now: datetime,
) -> Planned[tuple[OutboxEntry, ...]]:
    """The plan of a run whose effects hand the instance over: its closing commit (which
    marks the entry done) and the target's start, committed together; the target's id is
    derived from the entry's key, so a re-fired run can only name the same instance."""
    assert effect_plan.handover is not None
    if handover_chain(current) >= KNOCK_ON_LIMIT:
        raise EffectError(
            f"{LOOP_STOPPED} (handovers: {handover_chain(current)} in a row from form to form); "
            "fix the definitions, then retry it"
        )
    target = loop.registry.latest(effect_plan.handover.form, current.principal)
    renames = renames_for(form, effect_plan.handover.form) or {}
    problems = check_handover(form, target, renames)
    if problems:
        raise EffectError("hand over refused: " + "; ".join(problems))
    handover = plan_handover(
        form,
        current,
        target,
        target_id(key),
        renames,
        now,
        reason=effect_plan.handover.reason,
        close_state=effect_plan.state,
        close_changes=effect_plan.changes,
        cause=key,
    )
    return Planned(handover.start.dispatch, handover.close, start=handover.start.after)


def reopen(loop: CommitLoop, instance_id: str, key: str) -> Outcome[OutboxEntry | None] | None:
    """Set a failed entry back to pending (attempts reset), compare-and-set. The outcome's
    value is the entry reopened (None when there was no such failed entry); None when the
    instance is gone or the commit kept losing."""

    def plan(
        form: CompiledForm, current: FormInstance, now: datetime
    ) -> Planned[OutboxEntry | None]:
        entry = current.state.outbox.get(key)
        if entry is None or entry.status != "failed":
            return Planned(None)
        update = {"status": "pending", "attempts": 0, "finished_at": None}
        reopened = entry.model_copy(update=update)
        return Planned(reopened, _with_entry(form, current, reopened, now))

    instance = loop.load(instance_id)
    return None if instance is None else _commit_or_none(loop, instance, plan)


def mark_dispatched(loop: CommitLoop, instance_id: str, keys: Sequence[str]) -> list[str]:
    """Record ``dispatched_at`` on the pending entries among ``keys`` that lack it (one CAS
    commit, retried on conflict); returns the keys marked. Entries already dispatched, done or
    failed are left alone, so marking is idempotent."""

    def plan(form: CompiledForm, current: FormInstance, now: datetime) -> Planned[list[str]]:
        outbox = dict(current.state.outbox)
        marked: list[str] = []
        for key in keys:
            entry = outbox.get(key)
            if entry is not None and entry.status == "pending" and entry.dispatched_at is None:
                outbox[key] = entry.model_copy(update={"dispatched_at": now})
                marked.append(key)
        if not marked:
            return Planned(marked)
        state = current.state.model_copy(update={"outbox": outbox, "updated_at": now})
        return Planned(marked, transition(form, current, {}, now, state=state))

    instance = loop.load(instance_id)
    done = None if instance is None else _commit_or_none(loop, instance, plan)
    return done.value if done is not None and done.step is not None else []


def _with_entry(
    form: CompiledForm, instance: FormInstance, entry: OutboxEntry, now: datetime
) -> Transition:
    """A transition that only replaces one outbox entry (edges are recomputed as always)."""
    outbox = {**instance.state.outbox, entry.key: entry}
    state = instance.state.model_copy(update={"outbox": outbox, "updated_at": now})
    return transition(form, instance, {}, now, state=state)


def _commit_or_none(loop: CommitLoop, instance: FormInstance, plan: Plan[T]) -> Outcome[T] | None:
    """The commit loop, where running out of attempts just leaves the entry as it was: it is
    still in the outbox, and the relay or the next dispatch picks it up. So does a handover
    whose target's id is taken (``AlreadyExists``: nothing of it was written)."""
    try:
        return loop.commit(instance, plan)
    except TooManyConflicts:
        return None
    except AlreadyExists as taken:
        _log.error("instance %s: a handover was not written: %s", instance.id, taken)
        return None


class InProcessDispatcher:
    """Runs hooks synchronously after each commit; retries a failing executor a few times.

    Suitable for tests, the demo and single-process deployments. ``max_runs`` bounds one
    dispatch (hooks whose effects fire further hooks), so a definition that loops cannot hang a
    tool call; what is left stays pending in the outbox for a later dispatch.
    """

    def __init__(self, max_runs: int = 64) -> None:
        self.max_runs = max_runs

    def dispatch(
        self, runner: HookRunner, entries: Sequence[OutboxEntry], instance: FormInstance
    ) -> FormInstance | None:
        latest = instance
        queue = [e.key for e in entries if e.kind == "executor"]
        runs = 0
        while queue and runs < self.max_runs:
            key = queue.pop(0)
            owner = parse_key(key).instance_id
            own = owner == instance.id  # else a handover's target: its entries run by id
            for _ in range(MAX_ATTEMPTS):
                runs += 1
                run = runner.run(latest if own else owner, key)
                if run.instance is None:
                    if own:
                        return None  # the instance is gone
                    break
                if own:
                    latest = run.instance
                queue.extend(e.key for e in run.added if e.kind == "executor")
                if not run.pending(key):
                    break
        return latest
