"""The processing model: what one commit does, in order.

The engine is pure. It takes a compiled form, an instance and the changes a call wants to make,
and returns a ``Commit`` plus what happened; storage and dispatch belong to the caller.

One commit, in order:

1. **Field changes.** Revisions are appended to field logs and cursors move (set, retract,
   decline, undo, redo are all cursor arithmetic over an append-only log). Values were
   validated one by one before this point; a rejected value changes nothing.
2. **Overrides.** A revisit (backward jump) is released by a write into the revisited step.
3. **Evaluation, from scratch** (``evaluate``). Walking steps and fields in definition order:
   a step applies when its predicate holds; a field applies when its step applies and its own
   predicate holds; an answer in force on a field that applies is *live*, one on a field that
   does not is *held* (kept, not shown to predicates, not part of the result). Predicates
   only read what is declared before them, so one pass in that order is the fixed point. A step
   is complete when it applies and every applicable required field in it has a live answer.
   Then checkpoint predicates see every live value; a rejection is active while the hook that
   recorded it holds; the form is *ready* when every applicable required field is answered
   and no rejection is active.
4. **Edges.** For each hook, in the fixed order field on-fill, step on-complete, checkpoint,
   form on-complete (definition order within each), its condition is compared with the one
   stored by the previous commit. A *rising edge* is the first commit on which the condition
   holds having not held before. Every rising edge bumps that hook's counter, whether or not an
   executor is attached; a hook with an executor gets an outbox entry keyed
   ``{instance_id}:{hook_id}:{occurrence}`` in this same commit.
5. **Closing.** A rising form-complete edge closes the instance as completed (unless the
   definition keeps completed forms open); a forward jump's focus is released once its step is
   complete.

Executors run after the commit is stored (commit, then run), at least once per outbox entry.
Their effects come back through ``apply_effects`` as a new commit that also marks the entry
done, so a retried executor cannot apply its effects twice.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Literal

from forms.compiled import CompiledField, CompiledForm, Hook
from forms.errors import FormworkError, InvalidFormDefinition
from forms.instance import (
    Commit,
    FieldChange,
    FormInstance,
    HookState,
    InstanceState,
    OutboxEntry,
    Rejection,
    Revision,
    StepOverride,
    applied_unshared,
    replace_instance,
)
from forms.keys import idempotency_key, occurrence_of
from forms.schema import Accepted
from forms.state import FormState, Values

FieldStatus = Literal[
    "answered",
    "pending",
    "optional",
    "held",
    "not_applicable",
    "declined",
    "no_preference",
    "ask_again",
]


class PredicateError(FormworkError):
    """A predicate raised while evaluating; nothing is committed. A definition bug."""


@dataclass(frozen=True, slots=True)
class FieldEval:
    id: str
    applies: bool
    status: FieldStatus
    revision: Revision | None


@dataclass(frozen=True, slots=True)
class Evaluation:
    """Everything the engine derives from an instance, recomputed on every call."""

    fields: Mapping[str, FieldEval]
    live: Mapping[str, Any]
    step_applies: Mapping[str, bool]
    step_complete: Mapping[str, bool]
    open_step: str | None
    revisit: str | None
    active_rejections: tuple[Rejection, ...]
    waiting: tuple[str, ...]
    """Hooks whose executors have not finished (or, for checkpoints, failed): they may still
    reject or reroute, so the form cannot complete until they are done."""
    ready: bool
    hooks: Mapping[str, HookState]
    rising: tuple[Hook, ...]

    def state_for(
        self, form: CompiledForm, running: Hook | None = None, occurrence: int = 0
    ) -> FormState:
        """The form state executors see (everything decided, ``fired`` allowed).

        For the executor of a checkpoint's own occurrence (``running``, ``occurrence``),
        ``fired`` of that checkpoint answers whether it fired *before* this occurrence, so a
        router's first-time branch (``if not s.fired("router")``) runs on its first firing.
        """
        fired = {c: self.hooks[f"checkpoint.{c}"].count for c in form.checkpoints}
        if running is not None and running.kind == "checkpoint":
            fired[running.target] = occurrence - 1
        return FormState(
            form.step_index,
            self.step_applies,
            self.step_complete,
            fired,
            self.ready,
            self.open_step,
        )

    def values_for(self, form: CompiledForm) -> Values:
        return Values(self.live, form.field_index)


_TYPED: dict[tuple[int, int], tuple[Revision, Any]] = {}
_TYPED_LIMIT = 4_096


def typed_value(field: CompiledField, revision: Revision) -> Any:
    """The typed value of a stored answer (stored values were validated when written).

    Memoised per (field type, revision object): revisions are immutable, so the typed value of
    one never changes. The entry keeps the revision alive, so its id cannot be reused.
    """
    key = (id(field.type), id(revision))
    hit = _TYPED.get(key)
    if hit is not None and hit[0] is revision:
        return hit[1]
    result = field.type.validate(revision.value)
    typed = result.typed if isinstance(result, Accepted) else revision.value
    if len(_TYPED) >= _TYPED_LIMIT:
        _TYPED.clear()
    _TYPED[key] = (revision, typed)
    return typed


def _call(predicate: Any, arity: int, values: Values, state: FormState, reader: str) -> bool:
    state._reader = reader
    try:
        outcome = predicate(values) if arity == 1 else predicate(values, state)
    except InvalidFormDefinition:
        raise
    except Exception as exc:
        raise PredicateError(f"{reader} raised {type(exc).__name__}: {exc}") from exc
    return bool(outcome)


def evaluate(
    form: CompiledForm,
    instance: FormInstance,
    previous: Mapping[str, HookState] | None = None,
) -> Evaluation:
    """Recompute applicability, statuses, readiness and hook conditions from scratch.

    ``previous`` is the hook state of the commit before (defaults to what ``instance`` stores,
    for which nothing is rising); edges are detected against it.
    """
    previous = instance.state.hooks if previous is None else previous
    live: dict[str, Any] = {}
    values = Values(live, form.field_index)
    applies: dict[str, bool] = {}
    complete: dict[str, bool] = {}
    state = FormState(form.step_index, applies, complete, None, False, None)
    field_applies: dict[str, bool] = {}
    for step in form.steps.values():
        if step.when is not None:
            values._limit(step.first_field, f"step {step.id!r} when")
            step_ok = _call(step.when, step.when_arity, values, state, f"step {step.id!r} when")
        else:
            step_ok = True
        applies[step.id] = step_ok
        done = step_ok
        for field_id in step.fields:
            field = form.fields[field_id]
            ok = step_ok
            if ok and field.when is not None:
                reader = f"field {field_id!r} when"
                values._limit(field.index, reader)
                ok = _call(field.when, field.when_arity, values, state, reader)
            field_applies[field_id] = ok
            revision = instance.field(field_id).in_force()
            answered = revision is not None and revision.kind == "value"
            if ok and answered:
                assert revision is not None
                live[field_id] = typed_value(field, revision)
            elif ok and not field.optional and not _no_preference(field, revision):
                done = False
        complete[step.id] = done
    values._limit(len(form.field_index), "")
    override = instance.state.override
    revisit = (
        override.step
        if override is not None and override.kind == "revisit" and applies.get(override.step)
        else None
    )
    open_step = _open_step(form, override, applies, complete, revisit)
    fields = {
        fid: _field_eval(form.fields[fid], field_applies[fid], instance, revisit)
        for fid in form.fields
    }
    hooks, edges = _edges(form, instance, previous, values, applies, complete, open_step, live)
    active = tuple(r for r in instance.state.rejections if _active(r, hooks))
    all_answered = all(complete[s] or not applies[s] for s in form.steps)
    waiting = _waiting(form, instance, edges, hooks)
    ready = (
        all_answered
        and revisit is None
        and not active
        and not waiting
        and instance.state.status in ("open", "completed")
    )
    closed = instance.state.status != "open"
    hooks, rising = _form_edge(form, previous, hooks, edges, ready, closed)
    return Evaluation(
        fields=fields,
        live=live,
        step_applies=applies,
        step_complete=complete,
        open_step=open_step,
        revisit=revisit,
        active_rejections=active,
        waiting=waiting,
        ready=ready,
        hooks=hooks,
        rising=rising,
    )


def _no_preference(field: CompiledField, revision: Revision | None) -> bool:
    """A required field answered by "no preference" (where it takes one) counts as answered."""
    return field.no_preference and revision is not None and revision.kind == "decline"


def _open_step(
    form: CompiledForm,
    override: StepOverride | None,
    applies: Mapping[str, bool],
    complete: Mapping[str, bool],
    revisit: str | None,
) -> str | None:
    if revisit is not None:
        return revisit
    if (
        override is not None
        and override.kind == "focus"
        and applies.get(override.step)
        and not complete.get(override.step)
    ):
        return override.step
    for step_id in form.steps:
        if applies[step_id] and not complete[step_id]:
            return step_id
    return None


def _field_eval(
    field: CompiledField, applies: bool, instance: FormInstance, revisit: str | None
) -> FieldEval:
    revision = instance.field(field.id).in_force()
    kind = revision.kind if revision is not None else None
    status: FieldStatus
    if not applies:
        status = "held" if kind in ("value", "decline") else "not_applicable"
    elif kind == "value":
        status = "ask_again" if field.step == revisit else "answered"
    elif kind == "decline":
        status = "no_preference" if field.no_preference else "declined"
    else:
        status = "optional" if field.optional else "pending"
    return FieldEval(field.id, applies, status, revision)


def _edges(
    form: CompiledForm,
    instance: FormInstance,
    previous: Mapping[str, HookState],
    values: Values,
    applies: Mapping[str, bool],
    complete: Mapping[str, bool],
    open_step: str | None,
    live: Mapping[str, Any],
) -> tuple[dict[str, HookState], list[Hook]]:
    """Conditions and counters for every hook but the form's (which needs readiness)."""
    hooks: dict[str, HookState] = {}
    rising: list[Hook] = []
    fired: dict[str, int] = {}
    state = FormState(form.step_index, applies, complete, fired, False, open_step)
    for hook in form.hooks:
        if hook.kind == "field":
            holds = hook.target in live
        elif hook.kind == "step":
            holds = complete[hook.target]
        elif hook.kind == "checkpoint":
            checkpoint = form.checkpoints[hook.target]
            for cp in form.checkpoints:
                fired.setdefault(cp, previous.get(f"checkpoint.{cp}", _NEVER).count)
            holds = _call(
                checkpoint.when,
                checkpoint.when_arity,
                values,
                state,
                f"checkpoint {checkpoint.id!r} when",
            )
        else:
            continue
        before = previous.get(hook.id, _NEVER)
        basis = basis_of(instance, hook.binds, live) if holds and hook.binds else None
        rebased = before.basis is not None and basis is not None and before.basis != basis
        count = before.count + 1 if holds and (not before.holds or rebased) else before.count
        if count != before.count:
            rising.append(hook)
            if hook.kind == "checkpoint":
                fired[hook.target] = count
        hooks[hook.id] = _hook_state(before, holds, count, basis)
    return hooks, rising


_NEVER = HookState()


def _hook_state(before: HookState, holds: bool, count: int, basis: str | None = None) -> HookState:
    """The new state of a hook, reusing the old object when nothing changed (the common case)."""
    if before.holds == holds and before.count == count and before.basis == basis:
        return before
    return HookState.model_construct(holds=holds, count=count, basis=basis)


def bound_answers(
    instance: FormInstance, binds: Iterable[str], live: Mapping[str, Any]
) -> dict[str, Any]:
    """The stored answers of ``binds`` that are live (None for the others), in ``binds`` order."""
    found: dict[str, Any] = {}
    for field_id in binds:
        revision = instance.field(field_id).in_force() if field_id in live else None
        found[field_id] = revision.value if revision is not None else None
    return found


def basis_of(instance: FormInstance, binds: Iterable[str], live: Mapping[str, Any]) -> str:
    """A digest of the answers an approval's decision is bound to (see ``HookState.basis``)."""
    canonical = json.dumps(
        list(bound_answers(instance, binds, live).items()), sort_keys=True, default=str
    )
    return hashlib.sha256(canonical.encode()).hexdigest()[:24]


def _active(rejection: Rejection, hooks: Mapping[str, HookState]) -> bool:
    """A rejection holds for the crossing that produced it: while its hook still holds and has
    not risen again since. A later crossing is judged afresh by its own run."""
    hook = hooks.get(rejection.hook_id, _NEVER)
    return hook.holds and hook.count == rejection.occurrence


def _waiting(
    form: CompiledForm,
    instance: FormInstance,
    rising: Iterable[Hook],
    hooks: Mapping[str, HookState],
) -> tuple[str, ...]:
    """Hook ids the form must wait for before it can complete, in hook order.

    Every executor still to run (it may yet reject or reroute), and a checkpoint whose run
    failed for good while its crossing lasts: a gate that could not be evaluated is not passed.
    A correction that ends the crossing releases it; so does an operator's retry.
    """
    waiting: set[str] = {h.id for h in rising if h.dispatched and h.kind != "form"}
    for entry in instance.state.outbox.values():
        if entry.status == "done":
            continue
        hook = form.hook(entry.hook_id)
        if hook is None or hook.kind == "form":
            continue
        state = hooks.get(entry.hook_id, _NEVER)
        crossing = state.holds and state.count == entry.occurrence
        if entry.kind == "approval":
            # a decision still owed for the crossing in progress holds completion
            if entry.status == "pending" and crossing:
                waiting.add(entry.hook_id)
        elif entry.status == "pending" or (hook.kind == "checkpoint" and crossing):
            waiting.add(entry.hook_id)
    return tuple(h.id for h in form.hooks if h.id in waiting)


FORM_COMPLETE = "form.complete"
FORM_CLOSED = "form.closed"


def _form_edge(
    form: CompiledForm,
    previous: Mapping[str, HookState],
    hooks: dict[str, HookState],
    rising: list[Hook],
    ready: bool,
    closed: bool,
) -> tuple[dict[str, HookState], tuple[Hook, ...]]:
    """The form-level hooks, last: completion (readiness) and closing (status not open)."""
    for hook_id, holds in ((FORM_COMPLETE, ready), (FORM_CLOSED, closed)):
        hook = form.hook(hook_id)
        assert hook is not None
        before = previous.get(hook_id, _NEVER)
        count = before.count + 1 if holds and not before.holds else before.count
        if count != before.count:
            rising.append(hook)
        hooks[hook_id] = _hook_state(before, holds, count)
    return hooks, tuple(rising)


def _closed_edge(
    form: CompiledForm,
    evaluation: Evaluation,
    previous: Mapping[str, HookState],
    closed: bool,
) -> Evaluation:
    """The evaluation with the closing hook recomputed, for a status decided after it (a
    completion closes the instance in the same commit that detected it)."""
    hooks = dict(evaluation.hooks)
    rising = [h for h in evaluation.rising if h.id != FORM_CLOSED]
    before = previous.get(FORM_CLOSED, _NEVER)
    count = before.count + 1 if closed and not before.holds else before.count
    hook = form.hook(FORM_CLOSED)
    assert hook is not None
    if count != before.count:
        rising.append(hook)
    hooks[FORM_CLOSED] = _hook_state(before, closed, count)
    return replace(evaluation, hooks=hooks, rising=tuple(rising))


def _withdraw_stale_approvals(
    outbox: Mapping[str, OutboxEntry],
    hooks: Mapping[str, HookState],
    now: datetime,
    closed: bool,
) -> dict[str, OutboxEntry]:
    """Close the pending approvals no decision is owed for any more: the crossing ended (a
    correction took the form back under the threshold, say), a new crossing superseded it
    (an answer it was asked on changed: the new one has its own key), or the form closed.
    No decision, and no timeout outcome, may be written for them afterwards."""
    result = dict(outbox)
    for key, entry in outbox.items():
        if entry.kind != "approval" or entry.status != "pending":
            continue
        state = hooks.get(entry.hook_id, _NEVER)
        if closed:
            why = WITHDRAWN_ON_CLOSE.removeprefix("withdrawn: ")
        elif not state.holds:
            why = "the checkpoint no longer holds"
        elif state.count != entry.occurrence:
            why = "an answer it was asked on changed; a new approval replaces it"
        else:
            continue
        result[key] = entry.model_copy(
            update={"status": "done", "finished_at": now, "error": f"withdrawn: {why}"}
        )
    return result


WITHDRAWN_ON_CLOSE = "withdrawn: the form closed"
"""The error of an approval withdrawn because its form closed (completed, terminated,
abandoned) before anyone decided it."""


def decision_occurrence(revision: Revision | None) -> int | None:
    """The occurrence of the approval a decision revision answers (None if it is not one)."""
    if revision is None or revision.kind != "value" or revision.tool_call_id is None:
        return None
    if not revision.tool_call_id.startswith(APPROVAL_CALL_PREFIX):
        return None
    return occurrence_of(revision.tool_call_id)


APPROVAL_CALL_PREFIX = "approval:"
"""Decision revisions carry ``tool_call_id = "approval:<approval id>"``."""


def _stale_decisions(
    form: CompiledForm,
    instance: FormInstance,
    evaluation: Evaluation,
    outbox: Mapping[str, OutboxEntry],
    now: datetime,
) -> dict[str, FieldChange]:
    """Retractions of every decision in force that no longer answers its checkpoint's current
    crossing: the answers it was given on changed (a new approval is owed), or the checkpoint
    stopped holding. A decision only ever stands for the values it was made on."""
    changes: dict[str, FieldChange] = {}
    for hook in form.hooks:
        if hook.approval is None:
            continue
        history = instance.field(hook.approval.field)
        occurrence = decision_occurrence(history.in_force())
        if occurrence is None:
            continue
        state = evaluation.hooks.get(hook.id, _NEVER)
        if state.holds and state.count == occurrence:
            continue
        if state.holds:
            asked = outbox.get(idempotency_key(instance.id, hook.id, occurrence))
            now_bound = bound_answers(instance, hook.binds, evaluation.live)
            changed = [
                form.fields[f].label
                for f in hook.binds
                if asked is None or (asked.subject or {}).get(f) != now_bound[f]
            ]
            why = f"{', '.join(changed) or 'an answer'} changed after the decision"
        else:
            why = "the checkpoint no longer holds"
        retraction = Revision(
            kind="retraction",
            by="operator",
            actor="formwork",
            at=now,
            prev=history.cursor,
            note=f"withdrawn: {why}",
        )
        changes[hook.approval.field] = FieldChange(
            append=(retraction,), cursor=len(history.revisions)
        )
    return changes


@dataclass(frozen=True, slots=True)
class Transition:
    """A commit ready to store, the instance it produces, and its evaluation."""

    commit: Commit
    after: FormInstance
    evaluation: Evaluation
    dispatch: tuple[OutboxEntry, ...]
    before: Mapping[str, HookState]
    """The hook state the commit was computed against (the previous commit's)."""

    def orphaned(self) -> list[str]:
        """Fields whose answer stopped applying on this commit (now held)."""
        return [
            f
            for f, fe in self.evaluation.fields.items()
            if fe.status == "held" and self._was_live(f)
        ]

    def restored(self) -> list[str]:
        """Fields whose held answer applies again on this commit, without being rewritten."""
        return [
            f
            for f, fe in self.evaluation.fields.items()
            if f not in self.commit.fields
            and fe.status == "answered"
            and not self._was_live(f)
            and fe.revision is not None
        ]

    def _was_live(self, field_id: str) -> bool:
        before = self.before.get(f"field.{field_id}.filled")
        return before is not None and before.holds


def _provisional(
    base: FormInstance, changes: Mapping[str, FieldChange], state: InstanceState
) -> FormInstance:
    """``base`` with ``changes`` and ``state`` applied, for evaluation (nobody else holds it)."""
    commit = Commit(
        instance_id=base.id, expected_version=base.version, fields=dict(changes), state=state
    )
    return applied_unshared(base, commit)


def transition(
    form: CompiledForm,
    base: FormInstance,
    changes: Mapping[str, FieldChange],
    now: datetime,
    *,
    state: InstanceState | None = None,
    touched_steps: Iterable[str] = (),
    cause: str | None = None,
) -> Transition:
    """Build the commit for ``changes`` (plus bookkeeping in ``state``) over ``base``.

    Runs steps 2-5 of the processing model and returns the commit with the outbox entries it
    adds. ``state`` defaults to ``base.state``; callers pass a modified one for effects (jumps,
    rejections, closing). ``cause`` is the hook occurrence whose effects this commit applies:
    the entries it adds record it, so a tool result can report knock-on hooks.
    """
    state = base.state if state is None else state
    override = state.override
    if override is not None and override.kind == "revisit" and override.step in touched_steps:
        override = None
    provisional = _provisional(base, changes, state.model_copy(update={"override": override}))
    evaluation = evaluate(form, provisional, previous=base.state.hooks)
    for _ in range(len(form.checkpoints)):
        withdrawn = _stale_decisions(form, provisional, evaluation, state.outbox, now)
        if not withdrawn:
            break
        changes = {**changes, **withdrawn}
        provisional = _provisional(base, changes, provisional.state)
        evaluation = evaluate(form, provisional, previous=base.state.hooks)
    if (
        override is not None
        and override.kind == "focus"
        and evaluation.step_complete.get(override.step)
    ):
        override = None
    status, reason = state.status, state.closed_reason
    completed_now = any(h.id == FORM_COMPLETE for h in evaluation.rising)
    if status == "open" and completed_now and form.closes_on_complete:
        status, reason = "completed", "complete"
        evaluation = _closed_edge(form, evaluation, base.state.hooks, closed=True)
    outbox = _withdraw_stale_approvals(state.outbox, evaluation.hooks, now, status != "open")
    added: list[OutboxEntry] = []
    for hook in evaluation.rising:
        if not hook.dispatched:
            continue
        occurrence = evaluation.hooks[hook.id].count
        key = idempotency_key(base.id, hook.id, occurrence)
        approval = hook.approval
        entry = OutboxEntry(
            key=key,
            hook_id=hook.id,
            occurrence=occurrence,
            kind="approval" if approval is not None else "executor",
            deadline=now + timedelta(seconds=approval.timeout_seconds) if approval else None,
            created_at=now,
            cause=cause,
            subject=bound_answers(provisional, hook.binds, evaluation.live) if approval else None,
        )
        outbox[key] = entry
        added.append(entry)
    new_state = state.model_copy(
        update={
            "hooks": dict(evaluation.hooks),
            "override": override,
            "outbox": outbox,
            "status": status,
            "closed_reason": reason,
            "updated_at": now,
        }
    )
    commit = Commit(
        instance_id=base.id,
        expected_version=base.version,
        fields=dict(changes),
        state=new_state,
    )
    after = replace_instance(provisional, state=new_state)
    if override != provisional.state.override:
        evaluation = evaluate(form, after, previous=base.state.hooks)
    return Transition(
        commit=commit,
        after=after,
        evaluation=evaluation,
        dispatch=tuple(added),
        before=base.state.hooks,
    )
