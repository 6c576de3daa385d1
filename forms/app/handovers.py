"""``form_start`` with ``from``: the agent hands the conversation over to another form.

The user changed their mind (the return is a complaint, the quote should be an order): the
open instance named by ``from`` (its id, or its form's when one is open) closes as
``handed_over`` and the form ``form`` starts in the same conversation, with the source's
answers that fit carried across (``forms.handover``), then the call's own ``values`` and
``decline`` on top. Both halves are one write (``FormStore.hand_over``), through the one
commit loop on the source, compare-and-set on its version; the call's record is in that write,
so a retried call is replayed, never applied twice, and the target's id is derived from the
source and the call's id besides.

The mapping is the one the source declares for the target (``FormDef.hands_over_to``), or
same ids when it declares none; either way each value is validated by the target's field
type, and what does not fit is reported, not carried. The target is treated as any start is
(``forms.app.writes.begun``, in the same write): memory's recall fills only fields neither
carried nor named; after the write the target's hooks are dispatched.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from forms.app import writes
from forms.app.calls import CallId, new_call
from forms.app.conversation import Caller, locate
from forms.app.loop import Planned
from forms.app.remember import answers_to_remember
from forms.app.writes import Begun, Writer, _author, _named, after_start, begun, replay
from forms.compiled import CompiledForm
from forms.engine import Transition, transition
from forms.errors import BadRequest, CallRecorded, FormClosed
from forms.handover import Carried, plan_handover, renames_for, target_id
from forms.instance import FormInstance
from forms.operations import FillPlan, plan_declines, plan_fill
from forms.surface.plain import inline
from forms.surface.results import Result, fill_result, with_status_line
from forms.surface.tools import FormStartArgs


@dataclass(frozen=True, slots=True)
class _Started:
    """What the winning plan made: the result, the target as created, its fired entries,
    the fill of the call's own values on it, and the fields carried."""

    made: Begun
    target: FormInstance
    fill: FillPlan
    carried: Carried
    at: datetime


def form_start(writer: Writer, caller: Caller, call: CallId, args: FormStartArgs) -> Result:
    """``form_start``: a handover with ``from``, else the plain start."""
    if args.from_ is None:
        return writes.form_start(writer, caller, call, args)
    return start_from(writer, caller, call, args)


def start_from(writer: Writer, caller: Caller, call: CallId, args: FormStartArgs) -> Result:
    loop = writer.loop
    assert args.from_ is not None
    target = loop.registry.latest(args.form, caller.principal)
    source = _source(writer, caller, args.from_)
    memory = writer.memory_call(caller, target)
    if memory is not None:
        memory.begin_recall()
    new_id = target_id(f"{source.id}:{call.id}")
    author = _author(caller, call)

    def plan(form: CompiledForm, current: FormInstance, now: datetime) -> Planned[_Started]:
        if current.state.status != "open":
            raise FormClosed(
                f"this {current.form_id} is {current.state.status_text()}; there is nothing "
                "to hand over from",
                "start the form without from",
            )
        renames = renames_for(form, target.id) or {}
        handover = plan_handover(form, current, target, new_id, renames, now)
        opened = handover.start
        fill = plan_fill(target, opened.after, args.values or {}, author, now)
        plan_declines(target, opened.after, fill, args.decline or (), author, now)
        step: Transition = opened
        if fill.changes:
            step = transition(target, opened.after, fill.changes, now)
        result = _result(form, current, target, step, fill, handover.carried)
        named = {*_named(target, args), *handover.carried.revisions}
        made = begun(writer, caller, call, target, step, result, named, memory, now)
        if step is not handover.start:  # the start's own entries before its fill's
            fired = (*handover.start.dispatch, *made.fired)
            made = Begun(made.instance, fired, made.result, made.recall)
        record = new_call(call, made.result, new_id, now)
        close = handover.close
        commit = close.commit.model_copy(update={"call": record})
        close = Transition(commit, close.after, close.evaluation, close.dispatch, close.before)
        started = _Started(made, step.after, fill, handover.carried, now)
        return Planned(started, close, start=made.instance)

    try:
        done = loop.commit(source, plan)
    except CallRecorded as taken:  # a retry of a handover that already happened
        return replay(writer, caller, call, taken.record)
    began = done.value
    if done.step is not None and done.step.dispatch and writer.runs_hooks:
        writer.dispatch(done.instance, done.step.dispatch)  # the source's: its on_close
    remember = (answers_to_remember(target, began.target, began.fill.changes), began.at)
    return after_start(writer, began.made, memory, remember)


def _source(writer: Writer, caller: Caller, sent: str) -> FormInstance:
    """The instance ``from`` names: an instance id of this conversation, or a form with one
    open instance here."""
    mine = writer.loop.store.list_conversation(caller.principal, caller.conversation_id)
    by_id = any(i.id == sent for i in mine)
    source, _ = locate(writer.loop, caller, sent, sent if by_id else None)
    if source.state.status != "open":
        raise BadRequest(
            f"{sent!r} is {source.state.status_text()}; only an open form hands over",
            "start the form without from",
        )
    return source


def _result(
    source: CompiledForm,
    instance: FormInstance,
    target: CompiledForm,
    step: Transition,
    fill: FillPlan,
    carried: Carried,
) -> Result:
    """The call's result: the start's, saying what was carried and what was not."""
    result = fill_result(target, step, fill, verb="Started")
    moved = sorted(carried.revisions)
    clause = f"handed over from {inline(source.title)} {instance.id}; carried {len(moved)}" + (
        f" ({', '.join(moved)})" if moved else ""
    )
    if carried.dropped:
        clause += f"; not carried {len(carried.dropped)}"
    result["summary"] = f"{result['summary'][:-1]}; {clause}."
    result["instance"] = step.after.id
    result["handed_over_from"] = {"form": source.id, "instance": instance.id}
    if carried.dropped:
        result["not_carried"] = dict(carried.dropped)
    return with_status_line(result, target, step, qualify=False)
