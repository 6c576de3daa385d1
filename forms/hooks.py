"""Running executors: commit, then run, at least once per outbox entry, effects once per key.

``run_hook`` is what every dispatcher ends up calling, wherever it runs (in this process, or in
a Temporal activity): it loads the instance, runs the executor of one pending outbox entry with
the typed values, the form state and the idempotency key, and commits the executor's effects in
a commit that also marks the entry done. The commit is compare-and-set and checks the entry is
still pending, so a retried or duplicated run applies its effects at most once; the executor
itself may run more than once (at-least-once), which is why it gets the key.

``InProcessDispatcher`` runs entries right after the commit that produced them, in order,
including the entries that their effects produce, up to a bound.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from forms.compiled import CompiledForm
from forms.effects import Effect
from forms.engine import PredicateError, Transition, evaluate, transition
from forms.errors import InvalidFormDefinition, NotFound, TooManyConflicts
from forms.instance import FormInstance, OutboxEntry
from forms.keys import parse_key
from forms.operations import EffectError, as_effects, plan_effects
from forms.state import HookContext

if TYPE_CHECKING:
    from forms.service import FormService, HookRunner

Plan = Callable[[CompiledForm, FormInstance, datetime], Transition | None]

MAX_ATTEMPTS = 3
"""Attempts before an executor's failure is recorded as final (an operator can retry it)."""


class ExecutorFailed(Exception):
    """An executor raised and has attempts left; raised by ``run_hook(raise_on_retry=True)``
    after the attempt is recorded, so a durable runner (a Temporal activity) retries it."""


def run_hook(
    service: FormService,
    instance_id: str,
    key: str,
    *,
    max_attempts: int = MAX_ATTEMPTS,
    raise_on_retry: bool = False,
) -> Sequence[OutboxEntry]:
    """Run the executor of outbox entry ``key``; return the outbox entries its effects added.

    An executor that raises has the attempt recorded on its entry (attempts, error); after
    ``max_attempts`` the entry is ``failed``. With ``raise_on_retry`` a failure that still has
    attempts left raises ``ExecutorFailed`` once recorded, for runners that own the retrying.
    """
    try:
        instance = service.store.get(instance_id)
    except NotFound:
        return ()
    entry = instance.state.outbox.get(key)
    if entry is None or entry.status != "pending" or entry.kind == "approval":
        return ()  # approvals wait for a decision (forms.approvals), they run no code
    form, instance = service.current(instance)
    hook = form.hook(entry.hook_id)
    if hook is None or hook.executor is None:
        return _record(service, instance, key, None, "hook no longer exists in the definition")
    ev = evaluate(form, instance)
    context = HookContext(
        values=ev.values_for(form),
        state=ev.state_for(form, hook, entry.occurrence),
        answers=dict(ev.live),
        key=entry.key,
        hook_id=entry.hook_id,
        occurrence=entry.occurrence,
        instance_id=instance.id,
        form_id=instance.form_id,
        conversation_id=instance.conversation_id,
        principal=instance.principal,
        status=instance.state.status,
        closed_reason=instance.state.closed_reason,
        occurred_at=entry.created_at,
    )
    try:
        outcome = hook.executor(context)
        if inspect.isawaitable(outcome):
            close = getattr(outcome, "close", None)
            if callable(close):
                close()
            raise EffectError("executor returned an awaitable; executors are synchronous")
        effects = as_effects(outcome)
    except (EffectError, InvalidFormDefinition) as exc:
        return _record(service, instance, key, None, str(exc), final=True)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        added = _record(service, instance, key, None, error, max_attempts=max_attempts)
        if raise_on_retry and _still_pending_in(service, instance_id, key):
            raise ExecutorFailed(error) from exc
        return added
    return _record(service, instance, key, effects, None)


def _still_pending_in(service: FormService, instance_id: str, key: str) -> bool:
    try:
        entry = service.store.get(instance_id).state.outbox.get(key)
    except NotFound:
        return False
    return entry is not None and entry.status == "pending"


def _record(
    service: FormService,
    instance: FormInstance,
    key: str,
    effects: tuple[Effect, ...] | None,
    error: str | None,
    final: bool = False,
    max_attempts: int = MAX_ATTEMPTS,
) -> Sequence[OutboxEntry]:
    """Commit the effects (or the failure) of one run, exactly once per key."""

    def plan(form: CompiledForm, current: FormInstance, now: datetime) -> Transition | None:
        entry = current.state.outbox.get(key)
        if entry is None or entry.status != "pending":
            return None  # another run got there first: its effects stand
        try:
            if error is not None:
                raise EffectError(error)
            ev = evaluate(form, current)
            effect_plan = plan_effects(
                form, current, entry, tuple(effects or ()), ev.open_step, ev.step_complete, now
            )
            return transition(
                form, current, effect_plan.changes, now, state=effect_plan.state, cause=key
            )
        except (EffectError, PredicateError, InvalidFormDefinition) as exc:
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
            return _with_entry(form, current, updated, now)

    return _committed(service, instance, plan)


def reopen(service: FormService, instance_id: str, key: str) -> OutboxEntry | None:
    """Set a failed entry back to pending (attempts reset), compare-and-set; None if not failed."""
    reopened: list[OutboxEntry] = []

    def plan(form: CompiledForm, current: FormInstance, now: datetime) -> Transition | None:
        entry = current.state.outbox.get(key)
        if entry is None or entry.status != "failed":
            return None
        update = {"status": "pending", "attempts": 0, "finished_at": None}
        reopened[:] = [entry.model_copy(update=update)]
        return _with_entry(form, current, reopened[0], now)

    instance = _load(service, instance_id)
    if instance is None or _commit_or_none(service, instance, plan) is None:
        return None
    return reopened[0]


def mark_dispatched(service: FormService, instance_id: str, keys: Sequence[str]) -> list[str]:
    """Record ``dispatched_at`` on the pending entries among ``keys`` that lack it (one CAS
    commit, retried on conflict); returns the keys marked. Entries already dispatched, done or
    failed are left alone, so marking is idempotent."""
    marked: list[str] = []

    def plan(form: CompiledForm, current: FormInstance, now: datetime) -> Transition | None:
        outbox = dict(current.state.outbox)
        marked.clear()
        for key in keys:
            entry = outbox.get(key)
            if entry is not None and entry.status == "pending" and entry.dispatched_at is None:
                outbox[key] = entry.model_copy(update={"dispatched_at": now})
                marked.append(key)
        if not marked:
            return None
        state = current.state.model_copy(update={"outbox": outbox, "updated_at": now})
        return transition(form, current, {}, now, state=state)

    instance = _load(service, instance_id)
    if instance is None or _commit_or_none(service, instance, plan) is None:
        return []
    return marked


def _with_entry(
    form: CompiledForm, instance: FormInstance, entry: OutboxEntry, now: datetime
) -> Transition:
    """A transition that only replaces one outbox entry (edges are recomputed as always)."""
    outbox = {**instance.state.outbox, entry.key: entry}
    state = instance.state.model_copy(update={"outbox": outbox, "updated_at": now})
    return transition(form, instance, {}, now, state=state)


def _load(service: FormService, instance_id: str) -> FormInstance | None:
    try:
        return service.store.get(instance_id)
    except NotFound:
        return None


def _commit_or_none(service: FormService, instance: FormInstance, plan: Plan) -> Transition | None:
    """``commit_retrying``, where running out of attempts just leaves the entry as it was: it is
    still in the outbox, and the relay or the next dispatch picks it up."""
    try:
        return service.commit_retrying(instance, plan)
    except TooManyConflicts:
        return None


def _committed(service: FormService, instance: FormInstance, plan: Plan) -> Sequence[OutboxEntry]:
    step = _commit_or_none(service, instance, plan)
    return step.dispatch if step is not None else ()


class InProcessDispatcher:
    """Runs hooks synchronously after each commit; retries a failing executor a few times.

    Suitable for tests, the demo and single-process deployments. ``max_runs`` bounds one
    dispatch (hooks whose effects fire further hooks), so a definition that loops cannot hang a
    tool call; what is left stays pending in the outbox for a later dispatch.
    """

    def __init__(self, max_runs: int = 64) -> None:
        self.max_runs = max_runs

    def dispatch(self, runner: HookRunner, entries: Sequence[OutboxEntry]) -> None:
        queue = [(_instance_of(e.key), e.key) for e in entries if e.kind == "executor"]
        runs = 0
        while queue and runs < self.max_runs:
            instance_id, key = queue.pop(0)
            for _ in range(MAX_ATTEMPTS):
                runs += 1
                added = runner.run_hook(instance_id, key)
                queue.extend((_instance_of(e.key), e.key) for e in added if e.kind == "executor")
                if not _still_pending(runner, instance_id, key):
                    break


def _instance_of(key: str) -> str:
    return parse_key(key).instance_id


def _still_pending(runner: HookRunner, instance_id: str, key: str) -> bool:
    store = getattr(runner, "store", None)
    if store is None:
        return False
    try:
        entry = store.get(instance_id).state.outbox.get(key)
    except NotFound:
        return False
    return entry is not None and entry.status == "pending"
