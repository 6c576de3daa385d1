"""Edges: each hook's condition compared with the previous commit's, and what waits on them.

A hook's condition is its field answered (live), its step complete, its checkpoint's predicate
holding, or, for the form's hooks, the form ready (complete) or no longer open (closed). A
*rising edge* is the first commit on which the condition holds having not held before, or, for
a checkpoint whose approval is bound to answers, a commit that changes those answers while it
holds (``basis_of``). Every rising edge bumps the hook's counter, which is the occurrence in the
outbox key. This module also says which rejections are still active and which hooks the form
must wait for before it can complete.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable, Mapping
from typing import Any, cast

from forms.compiled import CompiledForm, Hook
from forms.evaluation import Evaluation, call_predicate
from forms.incremental import Core
from forms.instance import FormInstance, HookState, Rejection, stopped
from forms.marked import Marked, built
from forms.predicates import Watching, ask, unchanged, watching
from forms.state import FormState, Values

# A hook state's __dict__, read once where several of its fields are: a model's attributes cost
# ~10x (BaseModel.__getattr__ blocks 3.11's specialisation).


def hook_edges(
    form: CompiledForm,
    instance: FormInstance,
    previous: Mapping[str, HookState],
    values: Values,
    applies: Mapping[str, bool],
    complete: Mapping[str, bool],
    open_step: str | None,
    live: Mapping[str, Any],
) -> tuple[Mapping[str, HookState], list[Hook]]:
    """Conditions and counters for every hook but the form's (which needs readiness)."""
    hooks: Mapping[str, HookState] = Marked()
    rising: list[Hook] = []
    fired = _fired(form, previous)
    state = FormState(form.step_index, applies, complete, fired, False, open_step)
    for hook in form.hooks:
        if hook.kind == "field":
            holds = hook.target in live
        elif hook.kind == "step":
            holds = complete[hook.target]
        elif hook.kind == "checkpoint":
            checkpoint = form.checkpoints[hook.target]
            reader = f"checkpoint {checkpoint.id!r} when"
            holds = call_predicate(checkpoint.when, checkpoint.when_arity, values, state, reader)
        else:
            continue
        hooks = _put(
            hooks, previous, hook.id, _edge(instance, hook, previous, holds, live, rising, fired)
        )
    return hooks, rising


def core_edges(
    form: CompiledForm,
    instance: FormInstance,
    previous: Mapping[str, HookState],
    core: Core,
    open_step: str | None,
) -> tuple[Mapping[str, HookState], list[Hook], tuple[str, ...]]:
    """``hook_edges`` over a core, and the fields whose answer flipped (live or not) against
    ``previous``, looking again only at the hooks whose condition can differ from it.

    ``previous`` may carry the core its field and step conditions were derived from
    (``Marked.derived``, left by the commit that stored it): one with this core's token (they
    agree on those conditions), or with the token of the core this one was derived from, whose
    differences it lists. A hook outside those differences holds as it did (no edge); a
    checkpoint's predicate is asked again unless what it read when last asked (kept with the
    states: ``forms.predicates``) reads the same. Otherwise every hook is looked at. The
    states are ``previous`` itself while none differs (never changed in place: copied on the
    first difference, the copy marked with this core).
    """
    basis = getattr(previous, "derived", None)
    if not isinstance(basis, Core) or basis.form is not form:
        return _walked(form, instance, previous, core, open_step)
    token, basis_token = core.token, basis.token
    if basis_token not in (token, core.parent):
        return _walked(form, instance, previous, core, open_step)
    live = core.live
    same = basis_token == token  # then nothing flipped since: the hooks agree
    changed_fields: Collection[str] = () if same else core.flipped
    changed_steps: Collection[str] = () if same else core.completion_flipped
    hooks = previous  # copied on the first change (``_put``)
    rising: list[Hook] = []
    fired: dict[str, int] = {}  # checkpoints' rises; with the counts before once one needs it
    for field_id in changed_fields:
        hook = form.field_hooks[field_id]
        state = _edge(instance, hook, previous, field_id in live, live, rising, fired)
        hooks = _put(hooks, previous, hook.id, state)
    for step_id in changed_steps:
        hook = form.step_hooks[step_id]
        state = _edge(instance, hook, previous, core.step_complete[step_id], live, rising, fired)
        hooks = _put(hooks, previous, hook.id, state)
    if form.checkpoint_runs:
        hooks = _checkpoints(form, instance, previous, hooks, core, open_step, rising, fired)
    if len(rising) > 1:
        rising.sort(key=lambda h: form.hook_position[h.id])
    hooks = hooks if hooks is previous else _marked(hooks, core)
    if not changed_fields:
        return hooks, rising, ()
    if len(changed_fields) == 1:  # a write of one field (most that flip one): no sort
        return hooks, rising, tuple(changed_fields)
    return hooks, rising, tuple(sorted(changed_fields, key=form.field_index.__getitem__))


def _checkpoints(
    form: CompiledForm,
    instance: FormInstance,
    previous: Mapping[str, HookState],
    hooks: Mapping[str, HookState],
    core: Core,
    open_step: str | None,
    rising: list[Hook],
    fired: dict[str, int],
) -> Mapping[str, HookState]:
    """``hooks`` with the checkpoints' states set (``core_edges``): a predicate answers as it
    did when nothing it read when last asked reads otherwise (``forms.predicates``), else it
    is asked, and what it read is kept with the states (on ``previous`` itself while they are
    ``previous``: it is checked before every use, whatever states carry it)."""
    runs, live = form.checkpoint_runs, core.live
    asked = previous.asked  # type: ignore[attr-defined]  # each one's last (or None)
    kept: list[Any] | None = None  # what is kept of them now, once one changes
    values: Values | None = None  # made for the first predicate asked
    seen: Watching | None = None  # made for the first predicate that takes the state
    for at, (hook, checkpoint, reader) in enumerate(runs):
        last = asked[at] if asked is not None else None
        if last and unchanged(last, live, core, fired, previous, open_step):
            holds = last[0]  # it would read what it read: it answers as it did
        else:
            if values is None:
                values = Values(live, form.field_index)
            if seen is None and checkpoint.when_arity != 1:
                fired.update({**_fired(form, previous), **fired})  # the rises before this one
                applies, complete = core.step_applies, core.step_complete
                seen = watching(form, applies, complete, fired, open_step)
            holds, now = ask(checkpoint, values, seen, reader, live, form)
            if now is not last:
                kept = kept or (list(asked) if asked is not None else [None] * len(runs))
                kept[at] = now
        before = previous.get(hook.id)
        if before is not None:  # the state before stands (most commits): what ``_edge`` gives
            known = before.__dict__  # then, without its look at the answers a hook binds
            if known["holds"] == holds and known["basis"] is None and not (holds and hook.binds):
                continue  # no edge (a bound answer is looked at only when the hook holds)
        state = _edge(instance, hook, previous, holds, live, rising, fired)
        hooks = _put(hooks, previous, hook.id, state)
    if kept is not None:
        hooks.asked = tuple(kept)  # type: ignore[attr-defined]
    return hooks


def _walked(
    form: CompiledForm,
    instance: FormInstance,
    previous: Mapping[str, HookState],
    core: Core,
    open_step: str | None,
) -> tuple[Mapping[str, HookState], list[Hook], tuple[str, ...]]:
    """``core_edges`` when ``previous`` carries no core to compare with: every hook."""
    live = core.live
    values = Values(live, form.field_index)
    hooks, edges = hook_edges(
        form, instance, previous, values, core.step_applies, core.step_complete, open_step, live
    )
    flipped = tuple(
        h.target
        for h in form.hooks
        if h.kind == "field" and hooks[h.id].holds != previous.get(h.id, NEVER).holds
    )
    return _marked(hooks, core), edges, flipped


def _marked(hooks: Mapping[str, HookState], core: Core) -> Marked[HookState]:
    marked = hooks if isinstance(hooks, Marked) else Marked(hooks)
    marked.derived = core
    return marked


def _fired(form: CompiledForm, previous: Mapping[str, HookState]) -> dict[str, int]:
    """What checkpoint predicates see as ``fired`` before any edge of this commit: each
    checkpoint's count after the previous one (a checkpoint that rises in this commit is
    counted from its edge on, for the checkpoints after it)."""
    return {hook.target: previous.get(hook.id, NEVER).count for hook, _, _ in form.checkpoint_runs}


def _edge(
    instance: FormInstance,
    hook: Hook,
    previous: Mapping[str, HookState],
    holds: bool,
    live: Mapping[str, Any],
    rising: list[Hook],
    fired: dict[str, int],
) -> HookState:
    """``hook``'s state for a condition that ``holds`` (or not), its edge recorded."""
    before = previous.get(hook.id, NEVER)
    known = before.__dict__
    basis = basis_of(instance, hook.binds, live) if holds and hook.binds else None
    rebased = basis is not None and known["basis"] is not None and known["basis"] != basis
    count = known["count"]
    if holds and (not known["holds"] or rebased):
        count += 1
        rising.append(hook)
        if hook.kind == "checkpoint":
            fired[hook.target] = count
    return _hook_state(before, holds, count, basis)


def _put(
    hooks: Mapping[str, HookState],
    previous: Mapping[str, HookState],
    hook_id: str,
    state: HookState,
) -> Mapping[str, HookState]:
    """``hooks`` with ``hook_id``'s state set: ``hooks`` themselves, untouched when they hold
    that very state already (most hooks hold as they did: what ``hooks`` carries then stays),
    or set in a copy when they are ``previous`` (the states before, never changed in place)."""
    if hooks.get(hook_id) is state:
        return hooks
    # the one mapping never written is ``previous``; any other is a copy of this commit's own
    own = Marked.copy_of(previous) if hooks is previous else cast(dict[str, HookState], hooks)
    own[hook_id] = state  # a Marked.copy_of keeps the size (``forms.storage.sizes``)
    return own


NEVER = HookState()
"""The state of a hook no commit has recorded: never held, never risen."""


def _hook_state(before: HookState, holds: bool, count: int, basis: str | None = None) -> HookState:
    """The new state of a hook, reusing the old object when nothing changed (the common case)."""
    known = before.__dict__
    if known["holds"] == holds and known["count"] == count and known["basis"] == basis:
        return before
    return built(HookState, {"holds": holds, "count": count, "basis": basis})


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


def rejection_active(rejection: Rejection, hooks: Mapping[str, HookState]) -> bool:
    """A rejection holds for the crossing that produced it: while its hook still holds and has
    not risen again since. A later crossing is judged afresh by its own run."""
    hook = hooks.get(rejection.hook_id, NEVER)
    return hook.holds and hook.count == rejection.occurrence


def waiting_on(
    form: CompiledForm,
    instance: FormInstance,
    rising: Collection[Hook],
    hooks: Mapping[str, HookState],
) -> tuple[str, ...]:
    """Hook ids the form must wait for before it can complete, in hook order.

    Every executor still to run (it may yet reject or reroute), and a checkpoint whose run
    failed for good while its crossing lasts: a gate that could not be evaluated is not passed.
    A correction that ends the crossing releases it; so does an operator's retry. A hook of
    any kind stopped at the knock-on limit (``forms.instance.stopped``) holds it until an
    operator's retry: the answers may be halfway through the loop.
    """
    outbox = instance.state.outbox
    if not rising and not outbox:
        return ()
    waiting: set[str] = {h.id for h in rising if h.dispatched and h.kind != "form"}
    for entry in outbox.values():
        if entry.status == "done":
            continue
        hook = form.hook(entry.hook_id)
        if hook is None or hook.kind == "form":
            continue
        state = hooks.get(entry.hook_id, NEVER)
        crossing = state.holds and state.count == entry.occurrence
        if entry.kind == "approval":
            # a decision still owed for the crossing in progress holds completion
            if entry.status == "pending" and crossing:
                waiting.add(entry.hook_id)
        elif (
            entry.status == "pending" or stopped(entry) or (hook.kind == "checkpoint" and crossing)
        ):
            waiting.add(entry.hook_id)
    return tuple(sorted(waiting, key=form.hook_position.__getitem__)) if waiting else ()


FORM_COMPLETE = "form.complete"
FORM_CLOSED = "form.closed"


def form_edges(
    form: CompiledForm,
    previous: Mapping[str, HookState],
    hooks: Mapping[str, HookState],
    rising: list[Hook],
    ready: bool,
    closed: bool,
) -> tuple[Mapping[str, HookState], tuple[Hook, ...]]:
    """The form-level hooks, last: completion (readiness) and closing (status not open).

    What ``hooks`` carries (``Marked.derived``) stays: it is about the other hooks. When they
    are ``previous`` itself, a change is made in a copy (``_put``)."""
    complete, closing = previous.get(FORM_COMPLETE), previous.get(FORM_CLOSED)
    if (  # both hold as they did, and ``hooks`` has their states already (the usual case)
        complete is not None
        and closing is not None
        and (was := complete.__dict__)["holds"] == ready
        and (closed_was := closing.__dict__)["holds"] == closed
        and was["basis"] is None
        and closed_was["basis"] is None
        and (  # the states before themselves (most commits): no look needed
            hooks is previous
            or (hooks.get(FORM_COMPLETE) is complete and hooks.get(FORM_CLOSED) is closing)
        )
    ):
        return hooks, tuple(rising)
    derived = getattr(hooks, "derived", None)
    for hook_id, holds in ((FORM_COMPLETE, ready), (FORM_CLOSED, closed)):
        before = previous.get(hook_id, NEVER)
        if holds == before.holds and before.basis is None and hooks.get(hook_id) is before:
            continue  # holds as it did, and ``hooks`` has that state already (the usual case)
        count = before.count
        if holds and not before.holds:
            hook = form.hook(hook_id)
            assert hook is not None
            rising.append(hook)
            count += 1
        hooks = _put(hooks, previous, hook_id, _hook_state(before, holds, count))
    if hooks is not previous and isinstance(hooks, Marked):
        hooks.derived = derived
    return hooks, tuple(rising)


def closed_edge(
    form: CompiledForm,
    evaluation: Evaluation,
    previous: Mapping[str, HookState],
    closed: bool,
) -> Evaluation:
    """The evaluation with the closing hook recomputed, for a status decided after it (a
    completion closes the instance in the same commit that detected it)."""
    hooks = Marked.copy_of(evaluation.hooks)
    rising = [h for h in evaluation.rising if h.id != FORM_CLOSED]
    before = previous.get(FORM_CLOSED, NEVER)
    count = before.count + 1 if closed and not before.holds else before.count
    hook = form.hook(FORM_CLOSED)
    assert hook is not None
    if count != before.count:
        rising.append(hook)
    derived = hooks.derived
    hooks[FORM_CLOSED] = _hook_state(before, closed, count)
    hooks.derived = derived
    return evaluation._replace(hooks=hooks, rising=tuple(rising))


def closing(
    form: CompiledForm,
    evaluation: Evaluation,
    previous: Mapping[str, HookState],
    status: str,
    reason: str | None,
) -> tuple[str, str | None, Evaluation]:
    """The status, reason and evaluation after a commit with rising edges: a rising form
    completion closes an open instance as completed (unless the definition keeps completed
    forms open), its closing edge rising in the same commit."""
    completed_now = any(h.id == FORM_COMPLETE for h in evaluation.rising)
    if status == "open" and completed_now and form.closes_on_complete:
        return "completed", "complete", closed_edge(form, evaluation, previous, closed=True)
    return status, reason, evaluation
