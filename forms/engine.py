"""The processing model: what one commit does, in order.

The engine is pure. It takes a compiled form, an instance and the changes a call wants to make,
and returns a ``Commit`` plus what happened; storage and dispatch belong to the caller.

One commit, in order:

1. **Field changes.** Revisions are appended to field logs and cursors move (set, retract,
   decline, undo, redo are all cursor arithmetic over an append-only log). Values were
   validated one by one before this point; a rejected value changes nothing.
2. **Overrides.** A revisit (backward jump) is released by a write into the revisited step.
3. **Evaluation** (``evaluate``). As if walking steps and fields in definition order: a step
   applies when its predicate holds; a field applies when its step applies and its own
   predicate holds; an answer in force on a field that applies is *live*, one on a field that
   does not is *held* (kept, not shown to predicates, not part of the result). Predicates
   only read what is declared before them, so one pass in that order is the fixed point. A step
   is complete when it applies and every applicable required field in it has a live answer.
   Then checkpoint predicates see every live value; a rejection is active while the hook that
   recorded it holds; the form is *ready* when every applicable required field is answered
   and no rejection is active. An answer in force that the field's type refuses (kept from an
   earlier version of the form) is neither live nor answered: the field reads ``invalid``
   and keeps its step from completing until it is resolved. The walk is done once per set of
   field logs and kept with them (``forms.incremental``): a commit re-derives only what can
   depend on the fields it changed (the predicates that read them, learnt by watching each
   predicate run, and what depends on those in turn), and only the hooks whose condition can
   have changed are looked at again (a checkpoint's predicate too, when its code reads
   nothing the engine does not see: ``forms.predicates``). ``evaluate_from_scratch`` walks
   everything every time; it is the definition the incremental one is tested against.
4. **Edges.** For each hook, in the fixed order field on-fill, step on-complete, checkpoint,
   form on-complete (definition order within each), its condition is compared with the one
   stored by the previous commit. A *rising edge* is the first commit on which the condition
   holds having not held before. Every rising edge bumps that hook's counter, whether or not an
   executor is attached; a hook with an executor gets an outbox entry keyed
   ``{instance_id}:{hook_id}:{occurrence}`` in this same commit. An entry raised by an
   executor's effects is one deeper than the entry whose effects they are; one past
   ``KNOCK_ON_LIMIT`` is recorded failed instead (hooks that keep triggering each other stop).
5. **Closing.** A rising form-complete edge closes the instance as completed (unless the
   definition keeps completed forms open); a forward jump's focus is released once its step is
   complete.

Executors run after the commit is stored (commit, then run), at least once per outbox entry.
Their effects come back through ``apply_effects`` as a new commit that also marks the entry
done, so a retried executor cannot apply its effects twice.

``evaluate`` and ``transition`` are here; what they are built from lives beside this module:
``forms.evaluation`` (what an evaluation holds, and the per-step and per-field readings of step
3), ``forms.incremental`` (step 3 re-derived from what a commit touches, with
``forms.one_write`` its shortcut for a write of one field that touches nothing else),
``forms.edges`` (step 4's edges), ``forms.knock_on`` (the outbox entries they raise, and the
knock-on limit), ``forms.decisions`` (approval decisions withdrawn when the answers they were
made on change) and ``forms.transitions`` (what a transition gives).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from forms.compiled import CompiledForm, Hook
from forms.decisions import stale_decisions, withdraw_stale_approvals
from forms.edges import (
    NEVER,
    closing,
    core_edges,
    form_edges,
    hook_edges,
    rejection_active,
    waiting_on,
)
from forms.evaluation import (
    Decided,
    Evaluation,
    StepSummary,
    asked_again,
    blocking,
    call_predicate,
    counts,
    field_eval,
    find_open_step,
    overridden_step,
    revisited_step,
    typed_value,
)
from forms.incremental import Core, advance, core_for
from forms.instance import (
    Commit,
    FieldChange,
    FormInstance,
    HookState,
    InstanceState,
    OutboxEntry,
    with_changes,
)
from forms.knock_on import raise_entries
from forms.marked import Marked, built, fresh, replaced
from forms.one_write import rewritten
from forms.state import FormState, Values
from forms.transitions import Transition

__all__ = ["Evaluation", "Transition", "evaluate", "evaluate_from_scratch", "transition"]

_tuple_new = tuple.__new__  # builds a named tuple from its fields in order, in C

# A model's __dict__, read once where several of its fields are: its attributes cost ~10x
# (BaseModel.__getattr__ blocks 3.11's specialisation).


def evaluate(
    form: CompiledForm,
    instance: FormInstance,
    previous: Mapping[str, HookState] | None = None,
) -> Evaluation:
    """Applicability, statuses, readiness and hook conditions of ``instance``.

    ``previous`` is the hook state of the commit before (defaults to what ``instance`` stores,
    for which nothing is rising); edges are detected against it. The same as
    ``evaluate_from_scratch``, derived incrementally: the readings of the field logs come from
    what the logs carry (``forms.incremental``), and only the hooks whose condition can differ
    from ``previous`` are looked at again.
    """
    known = instance.__dict__
    state = known["state"].__dict__
    previous = state["hooks"] if previous is None else previous
    return _evaluated(form, instance, state, core_for(form, known["history"]), previous)


def _evaluated(
    form: CompiledForm,
    instance: FormInstance,
    state: dict[str, Any],
    core: Core,
    previous: Mapping[str, HookState],
) -> Evaluation:
    """``evaluate`` of ``instance`` over ``core`` (the core of its logs), ``state`` its
    state's ``__dict__``: the caller that has them in hand passes them, where a model's
    attribute costs ~10x a dict's."""
    applies, complete = core.step_applies, core.step_complete
    override = state["override"]
    if override is None:
        revisit = open_step = None
    else:
        revisit = revisited_step(override, applies)
        open_step = overridden_step(override, applies, complete, revisit)
    unfinished = core.steps.unfinished
    if open_step is None and unfinished:
        open_step = form.step_order[unfinished[0]]  # the first step still to do, without a walk
    hooks, edges, flipped = core_edges(form, instance, previous, core, open_step)
    fields = core.fields if revisit is None else asked_again(form, core.fields, revisit)
    decided = (fields, core.live, applies, complete, open_step, revisit, core.steps)
    answered = not unfinished
    return _concluded(form, instance, state, previous, decided, answered, hooks, edges, flipped)


def _concluded(
    form: CompiledForm,
    instance: FormInstance,
    state: dict[str, Any],
    previous: Mapping[str, HookState],
    decided: Decided,
    answered: bool,
    hooks: Mapping[str, HookState],
    edges: list[Hook],
    flipped: tuple[str, ...],
) -> Evaluation:
    """The evaluation of what step 3 ``decided`` on ``instance`` (``state``: its state's
    ``__dict__``; ``answered``: every applicable required field is answered), with the field,
    step and checkpoint hooks' states (``hooks``) and rising ``edges``, completed with the
    rejections in force, the hooks still running, readiness and the form's own hooks."""
    rejections = state["rejections"]
    active = tuple(r for r in rejections if rejection_active(r, hooks)) if rejections else ()
    waiting = waiting_on(form, instance, edges, hooks) if edges or state["outbox"] else ()
    status = state["status"]
    ready = (
        answered
        and decided[5] is None  # no step is reopened (a revisit)
        and not active
        and not waiting
        and status in ("open", "completed")
    )
    hooks, rising = form_edges(form, previous, hooks, edges, ready, status != "open")
    # by position, without the named tuple's own (Python) __new__: one is made on every call
    return _tuple_new(Evaluation, (*decided, active, waiting, ready, hooks, rising, flipped))


def evaluate_from_scratch(
    form: CompiledForm,
    instance: FormInstance,
    previous: Mapping[str, HookState] | None = None,
) -> Evaluation:
    """Recompute applicability, statuses, readiness and hook conditions from scratch: one
    walk over every step, field and hook. The definition ``evaluate`` is held to (the
    property tests compare the two); nothing on the hot path calls it.
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
            step_ok = call_predicate(
                step.when, step.when_arity, values, state, f"step {step.id!r} when"
            )
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
                ok = call_predicate(field.when, field.when_arity, values, state, reader)
            field_applies[field_id] = ok
            revision = instance.field(field_id).in_force()
            if ok and counts(field, revision):
                assert revision is not None
                live[field_id] = typed_value(field, revision)
            elif blocking(field, ok, revision):
                done = False
        complete[step.id] = done
    values._unlimit()
    override = instance.state.override
    revisit = revisited_step(override, applies)
    open_step = find_open_step(form, override, applies, complete, revisit)
    fields = {
        fid: field_eval(form.fields[fid], field_applies[fid], instance, revisit)
        for fid in form.fields
    }
    hooks, edges = hook_edges(form, instance, previous, values, applies, complete, open_step, live)
    flipped = tuple(
        f for f in form.fields if (f in live) != previous.get(f"field.{f}.filled", NEVER).holds
    )
    summary = StepSummary.of(form.step_order, applies, complete)
    decided = (fields, live, applies, complete, open_step, revisit, summary)
    answered = all(complete[s] or not applies[s] for s in form.steps)
    state_known = instance.state.__dict__
    return _concluded(
        form, instance, state_known, previous, decided, answered, hooks, edges, flipped
    )


def _commit_on(known: dict[str, Any], fields: Marked[FieldChange], state: InstanceState) -> Commit:
    """A commit of ``fields`` and ``state`` on the version of the instance whose ``__dict__``
    is ``known``, built from validated parts."""
    return built(
        Commit,
        {
            "instance_id": known["id"],
            "expected_version": known["version"],
            "fields": fields,
            "state": state,
            "form_version": None,
            "call": None,
        },
    )


def _entries(
    provisional: FormInstance,
    evaluation: Evaluation,
    outbox: Mapping[str, OutboxEntry],
    now: datetime,
    status: str,
    cause: str | None,
) -> tuple[tuple[OutboxEntry, ...], tuple[OutboxEntry, ...], Mapping[str, OutboxEntry]]:
    """The entries the commit raises (to dispatch, and stopped at the knock-on limit) and its
    outbox: ``outbox`` with the approvals no decision is owed for withdrawn and those entries
    added (``outbox`` itself when neither happens: each step is skipped when it has nothing
    to look at)."""
    if outbox:
        outbox = withdraw_stale_approvals(outbox, evaluation.hooks, now, status != "open")
    if not evaluation.rising:
        return (), (), outbox
    added, stopped, outbox = raise_entries(provisional, evaluation, outbox, now, cause)
    return tuple(added), tuple(stopped), outbox


def _provisional(
    form: CompiledForm,
    base: dict[str, Any],
    changes: Mapping[str, FieldChange],
    state: InstanceState,
) -> tuple[FormInstance, Marked[FieldChange], Core, dict[str, Any]]:
    """The instance whose ``__dict__`` is ``base`` with ``changes`` and ``state`` applied, for
    evaluation (nobody else holds it), the changes to commit, marked with what the engine
    derived before and after them (so the store's copy of the instance carries the readings
    of its logs too), the core after them and the new instance's ``__dict__``."""
    fields: Marked[FieldChange] = fresh(changes)
    logs = base["history"]
    history = with_changes(logs, fields)
    made = {**base, "history": history, "state": state, "version": base["version"] + 1}
    provisional = built(FormInstance, made)  # from validated parts: no validation
    before = getattr(logs, "derived", None)  # what ``core_for`` looks at first, without its call
    if not isinstance(before, Core) or before.form is not form:
        before = core_for(form, logs)
    after = rewritten(before, history, changes)  # one answer replaced: without the pass
    history.derived = after = advance(before, history, changes) if after is None else after
    fields.derived = (before, after, provisional, base)  # the instance it makes, from: see below
    return provisional, fields, after, made


def _settled(
    form: CompiledForm,
    base: dict[str, Any],
    changes: Mapping[str, FieldChange],
    state: InstanceState,
    known: dict[str, Any],
    now: datetime,
    previous: Mapping[str, HookState],
) -> tuple[FormInstance, Marked[FieldChange], Evaluation, dict[str, Any]]:
    """``changes`` applied on the instance whose ``__dict__`` is ``base``, with ``state``
    (whose ``__dict__`` is ``known``), and evaluated against ``previous`` (its hook states),
    with the decisions they make stale withdrawn (each withdrawal is a change too, so again
    until none is left: at most once per approval, whose decision it retracts); and the new
    instance's ``__dict__``."""
    provisional, fields, core, made = _provisional(form, base, changes, state)
    evaluation = _evaluated(form, provisional, known, core, previous)
    if not form.approval_hooks:
        return provisional, fields, evaluation, made  # no decision to withdraw (most forms)
    for _ in range(len(form.approval_hooks)):
        withdrawn = stale_decisions(form, provisional, evaluation, known["outbox"], now)
        if not withdrawn:
            break
        changes = {**changes, **withdrawn}
        provisional, fields, core, made = _provisional(form, base, changes, state)
        evaluation = _evaluated(form, provisional, known, core, previous)
    return provisional, fields, evaluation, made


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
    based = base.__dict__
    stored = based["state"]
    state = stored if state is None else state
    known = state.__dict__
    previous = known["hooks"] if state is stored else stored.__dict__["hooks"]  # edges' basis
    override = known["override"]
    if override is not None and override.kind == "revisit" and override.step in touched_steps:
        override = None
    released = state if override is known["override"] else replaced(state, override=override)
    seen = known if released is state else released.__dict__
    settled = _settled(form, based, changes, released, seen, now, previous)
    provisional, fields, evaluation, made = settled
    held, complete = override, evaluation.step_complete  # held: the provisional's override
    if override is not None and override.kind == "focus" and complete.get(override.step):
        override = None  # the step a forward jump focused is complete: released
    status, reason = known["status"], known["closed_reason"]
    rising = evaluation.rising
    if rising:
        status, reason, evaluation = closing(form, evaluation, previous, status, reason)
    outbox: Mapping[str, OutboxEntry] = known["outbox"]
    if outbox or rising:
        added, stopped, outbox = _entries(provisional, evaluation, outbox, now, status, cause)
    else:  # nothing to withdraw, nothing raised (most writes)
        added = stopped = ()
    new_state = built(
        InstanceState,
        {
            **known,
            "hooks": evaluation.hooks,  # the evaluation's own: read-only, shared until changed
            "override": override,
            "outbox": outbox,
            "status": status,
            "closed_reason": reason,
            "updated_at": now,
        },
    )
    commit = _commit_on(based, fields, new_state)
    # The provisional instance is this transition's own (nobody else holds it): it becomes the
    # commit's instance, its state set in place (no second model); ``fields.derived`` names it.
    made["state"] = new_state
    if override is not held:  # a focus released above: the provisional evaluation had it
        evaluation = evaluate(form, provisional, previous)
    return _tuple_new(Transition, (commit, provisional, evaluation, added, previous, stopped))
