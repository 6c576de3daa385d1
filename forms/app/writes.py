"""The write tools: fill, revise, abandon, each through the one commit loop (a start is
``forms.app.starts``).

A write tool's call is planned on the instance as stored (``plan_fill`` / ``plan_revise``,
then the engine's ``transition``), committed compare-and-set with its call record through the
one commit loop (``forms.app.loop``), dispatched, and answered with the form's status as it
stands after in-process hooks ran (on the instance they left, not read back:
``forms.app.after_write``). A retry is found by the store (the call id is taken) and gets the
first result back (``forms.app.calls``). Every write call remembers the answers the agent gave
to fields that declare fact keys, after its commit (``forms.app.memory``); that cannot fail
the call or hold it past the memory deadline.

What the tools run on is ``forms.app.writer``; the start's and the answers' names stay
importable from here.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from datetime import datetime
from typing import Any

from forms.app.after_write import (
    as_now,
    dispatched,
    late_recall,
    owed_recall,
    record_alone,
    replay,
    with_late_recall,
)
from forms.app.calls import CallId, Rendering, deferred_call
from forms.app.conversation import Caller, locate
from forms.app.loop import Planned
from forms.app.memory import MemoryCall
from forms.app.remember import Answer, answers_to_remember
from forms.app.starts import (
    Begun,
    after_start,
    begun,
    form_start,
    named_fields,
)
from forms.app.writer import REMEMBERED, Writer, call_author
from forms.compiled import CompiledForm
from forms.engine import Transition, transition
from forms.errors import CallRecorded, FormClosed
from forms.instance import FormInstance, InstanceState, NewCall
from forms.marked import replaced
from forms.operations import (
    FillPlan,
    plan_declines,
    plan_fill,
    plan_revise,
    resolve_field,
    touched_steps,
)
from forms.surface.plain import inline
from forms.surface.results import (
    Result,
    cleared_result,
    fill_result,
    not_ready,
    revise_result,
    submitted_result,
    with_status_line,
)
from forms.surface.tools import FormAbandonArgs, FormFillArgs, FormReviseArgs

__all__ = [
    "REMEMBERED",
    "Begun",
    "Guard",
    "Writer",
    "after_start",
    "as_now",
    "begun",
    "dispatched",
    "fill",
    "form_abandon",
    "form_fill",
    "form_revise",
    "form_start",
    "owed_recall",
    "page_edits",
    "record_alone",
    "replay",
    "with_late_recall",
    "write",
]

_tuple_new = tuple.__new__  # a named tuple from its fields in order, without its Python __new__
# Where a hot path reads several fields of one pydantic model, it reads the model's ``__dict__``
# once and indexes it: each attribute read, ``__dict__`` included, costs about four dict reads
# (the class's ``__getattr__`` keeps 3.11 from specialising the lookup).
_author = call_author
"""Who writes through a call (``forms.app.writer.call_author``), by its old name here."""
_named = named_fields
"""The fields a start's call named (``forms.app.starts.named_fields``), by its old name here."""


Built = tuple[Transition, Callable[[], Result]]
"""What a write tool's ``build`` plans: the transition, and how to render its result (the
status line is added after it by ``_write``, for every tool alike, in the one ``Rendering``
called only for the attempt whose write is made, or that writes nothing)."""

Build = Callable[[CompiledForm, FormInstance, datetime], Built]
"""``build(form, instance, now)``: a write tool's plan on the instance as stored."""

Guard = Callable[[CompiledForm, FormInstance], None]
"""A check a caller adds to a write, run on the instance each attempt plans on, before
anything is planned: it raises a ``ToolError`` to refuse the write (the person's page checks
what they saw is still what stands: ``forms.app.page_writes``)."""


def form_fill(
    writer: Writer, caller: Caller, call: CallId, args: FormFillArgs, guard: Guard | None = None
) -> Result:
    return fill(writer, caller, call, args.__dict__, guard)


def fill(
    writer: Writer,
    caller: Caller,
    call: CallId,
    given: Mapping[str, Any],
    guard: Guard | None = None,
) -> Result:
    """``form_fill`` on its arguments' fields (``FormFillArgs``' ``__dict__``, or what
    ``forms.app.arguments.fill_fields`` validates, without the model)."""
    author = _author(caller, call)  # the call's, whatever attempt plans
    values, decline, submit = given["values"] or {}, given["decline"], given["submit"]

    def build(form: CompiledForm, instance: FormInstance, now: datetime) -> Built:
        plan = plan_fill(form, instance, values, author, now)
        if decline:  # most fills decline nothing
            plan_declines(form, instance, plan, decline, author, now)
        step = _planned(form, instance, plan, now)
        if not submit or step.after.state.status != "open":
            return step, lambda: fill_result(form, step, plan, verb="Saved")
        refusal = not_ready(form, step.evaluation)
        if refusal is not None:
            return step, lambda: {
                **fill_result(form, step, plan, verb="Saved"),
                "submitted": False,
                "not_submitted": refusal,
            }
        state = instance.state.model_copy(
            update={"status": "completed", "closed_reason": "submitted"}
        )
        submitted = _planned(form, instance, plan, now, state)
        return submitted, lambda: submitted_result(form, submitted, plan)

    return write(writer, caller, call, given, build, guard)


def form_revise(
    writer: Writer, caller: Caller, call: CallId, args: FormReviseArgs, guard: Guard | None = None
) -> Result:
    author = _author(caller, call)

    def build(form: CompiledForm, instance: FormInstance, now: datetime) -> Built:
        if args.field is None:  # clear_memory: every answer memory filled, no field named
            plan = plan_revise(form, instance, "", args.action, args.value, author, now)
            recalled = {f: r for f, r in instance.state.recalled.items() if f not in plan.dismissed}
            state = replaced(instance.state, recalled=recalled)
            step = _planned(form, instance, plan, now, state)
            return step, lambda: cleared_result(form, step, plan)
        field_id = resolve_field(form, args.field)
        plan = plan_revise(form, instance, field_id, args.action, args.value, author, now)
        if field_id != args.field:
            plan.put("resolved", args.field, field_id)
        revised = _planned(form, instance, plan, now)
        return revised, lambda: revise_result(form, revised, plan, args.action, field_id)

    return write(writer, caller, call, args.__dict__, build, guard)


def form_abandon(writer: Writer, caller: Caller, call: CallId, args: FormAbandonArgs) -> Result:
    def build(form: CompiledForm, instance: FormInstance, now: datetime) -> Built:
        state = instance.state.model_copy(
            update={"status": "abandoned", "closed_reason": args.reason.strip()}
        )
        step = transition(form, instance, {}, now, state=state)
        why = inline(args.reason.strip())
        return step, lambda: _abandoned(form, why)

    return write(writer, caller, call, args.__dict__, build)


def _abandoned(form: CompiledForm, why: str) -> Result:
    return {"ok": True, "summary": f"Abandoned {inline(form.title)}: {why}. Answers are kept."}


# ------------------------------------------------------------------ plumbing


def write(
    writer: Writer,
    caller: Caller,
    call: CallId,
    given: Mapping[str, Any],
    build: Build,
    guard: Guard | None = None,
) -> Result:
    """A write tool's call, through the one commit loop: the commit carries the call's
    record, so a retry of it is refused by the store and replayed. ``given`` is the tool's
    arguments (their model's ``__dict__``: its ``form`` and ``instance`` locate it). ``build``
    plans the transition and its result, which is rendered once, for the attempt that
    commits (``forms.app.calls.Rendering``)."""
    instance, qualify = locate(writer.loop, caller, given["form"], given["instance"])
    # a recall that came late: delivered after (only memory owes one)
    owed = writer.owed_call(caller, instance) if writer.memory is not None else None
    try:
        return _write(writer, caller, call, build, instance, qualify, owed, guard)
    finally:
        if owed is not None:
            owed.keep_unused(instance.id)  # a call that stopped short leaves it to the next


def _write(
    writer: Writer,
    caller: Caller,
    call: CallId,
    build: Build,
    instance: FormInstance,
    qualify: bool,
    owed: MemoryCall | None,
    guard: Guard | None = None,
) -> Result:
    remembered: list[tuple[tuple[Answer, ...], MemoryCall, datetime]] = []

    def plan(form: CompiledForm, current: FormInstance, now: datetime) -> Planned[Rendering]:
        remembered.clear()  # what the plan that commits wrote, not an earlier attempt
        held = current.__dict__
        if held["state"].status != "open":
            raise FormClosed(
                f"this {current.form_id} is {current.state.status_text()}; it takes no more "
                "changes",
                "nothing to do: it is already closed"
                if call.tool == "form_abandon"
                else "start the form again if the user wants to change something",
            )
        if guard is not None:
            guard(form, current)
        step, render = build(form, current, now)
        shown = step  # the transition the line shows (``step`` may become its recorded copy)
        result = Rendering(lambda: with_status_line(render(), form, shown, qualify))
        commit = step.commit
        made = commit.__dict__
        if not made["fields"] and _unchanged(made["state"], held["state"]):
            return Planned(result)  # nothing changes: no commit
        record = deferred_call(call, result, held["id"], now)
        if caller.source == "user" or made["state"].page_edits:
            step = _recorded(step, record, caller.source)
            commit = step.commit
        else:  # most writes: the commit ``transition`` made for this attempt, set in place
            made["call"] = record  # (nobody else holds it: see ``_recorded``)
        memory = writer.memory_call(caller, form) if writer.memory is not None else None
        if memory is not None:
            remembered.append((answers_to_remember(form, current, commit.fields), memory, now))
        return _tuple_new(Planned, (result, step, None))  # in C: one on every attempt

    try:
        done = writer.loop.commit(instance, plan)
    except CallRecorded as taken:
        return replay(writer, caller, call, taken.record, seen=(instance, qualify))
    _, stored, value, written = done  # unpacked: a named tuple's field read is a descriptor call
    rendered: Rendering | Result = value  # rendered already when the write was made
    if owed is not None:
        rendered, stored = late_recall(writer.loop, owed, value(), stored, qualify)
    if written is None:  # nothing written: rendered only if the call's id is not taken
        return record_alone(writer, caller, call, rendered, instance.id, seen=(stored, qualify))
    result = rendered() if isinstance(rendered, Rendering) else rendered
    for answers, memory, at in remembered:
        memory.remember(answers, at)
    dispatch = written.dispatch
    if not dispatch:  # nothing raised (most writes): nothing to hand on
        return result
    return dispatched(writer, result, stored, dispatch, qualify)


def _unchanged(made: InstanceState, held: InstanceState) -> bool:
    """Whether ``made`` is ``held`` but for its ``updated_at``: the answer of ``made ==
    replaced(held, updated_at=made.updated_at)``, which builds a model and compares it field
    by field. When each of ``held``'s fields is the very object ``made`` holds, that
    comparison is true (a dict's equality takes an object as equal to itself, and the state
    has no extra or private attributes), so it is made only when one is not the same."""
    mine, theirs = made.__dict__, held.__dict__
    if type(made) is type(held) and len(mine) == len(theirs):
        for name, value in theirs.items():
            if mine.get(name, _ABSENT) is not value and name != "updated_at":
                break
        else:
            if "updated_at" in mine:
                return True
    return made == replaced(held, updated_at=mine["updated_at"])


_ABSENT = object()


def _recorded(step: Transition, record: NewCall, source: str) -> Transition:
    """``step`` with its commit carrying its call's record, with ``page_edits`` kept in step:
    a write by the person, or an agent's after theirs, on a copy of the commit. Every other
    write sets the record on the commit itself (``_write``): it is the one ``transition``
    made for that attempt, which nobody else holds (as the engine sets the state of the
    instance it makes), where a copy of the commit and of the transition cost ~1.5 µs."""
    state = page_edits(step.commit.state, source, step.commit.fields)
    return step._replace(commit=replaced(step.commit, call=record, state=state))


def page_edits(state: InstanceState, source: str, fields: Collection[str]) -> InstanceState:
    """``state`` with its ``page_edits`` kept in step: a write by the person on their page
    adds the fields it changed (once each, in order); a write by the agent clears them, its
    status line having said them one last time (it was rendered before this)."""
    if source == "user" and fields:
        edits = list(dict.fromkeys([*state.page_edits, *sorted(fields)]))
        return replaced(state, page_edits=edits) if edits != state.page_edits else state
    if source == "agent" and state.page_edits:
        return replaced(state, page_edits=[])
    return state


def _planned(
    form: CompiledForm,
    instance: FormInstance,
    plan: FillPlan,
    now: datetime,
    state: InstanceState | None = None,
) -> Transition:
    """The transition an agent's planned write makes (a write into a reopened step releases
    the revisit, a value resent unchanged included)."""
    held = (instance.state if state is None else state).override
    # the steps written into matter only to a revisit they release (``transition``): most
    # writes have none, and are not asked for them
    touched = (
        touched_steps(form, plan.changes, plan.unchanged)
        if held is not None and held.kind == "revisit"
        else ()
    )
    return transition(form, instance, plan.changes, now, state=state, touched_steps=touched)
