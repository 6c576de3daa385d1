"""The write tools: start, fill, revise, abandon, each through the one commit loop.

A write tool's call is planned on the instance as stored (``plan_fill`` / ``plan_revise``,
then the engine's ``transition``), committed compare-and-set with its call record through the
one commit loop (``forms.app.loop``), dispatched, and answered with the form's status as it
stands after in-process hooks ran (on the instance they left, not read back). A retry is found
by the store (the call id is taken) and gets the first result back (``forms.app.calls``).

With memory (``forms.app.memory``), ``form_start`` of a form whose fields declare fact keys
reads the principal's memory beside its own work and writes what memory fills and offers in
the start's one write (``begun``: planned on the started instance before it is stored, with
the call's record); and every write call remembers the answers the agent gave to such fields,
after its commit. Neither can fail the call or hold it past the memory deadline.

The context defaults (``Caller.context``: values of the caller's verified claims for fact
keys, such as a locale) are written in that same write, below memory, also when memory has
nothing, is off, late or failed, or is not in the deployment: they are not facts, and need no
fact store.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from forms.app.calls import CallId, caused_by, new_call
from forms.app.conversation import Caller, locate
from forms.app.loop import CommitLoop, Planned
from forms.app.memory import Memory, MemoryCall, plan_defaults
from forms.app.remember import Answer, answers_to_remember
from forms.compiled import CompiledForm
from forms.engine import Transition, evaluate, transition
from forms.errors import CallRecorded, FormClosed
from forms.instance import CallRecord, FormInstance, InstanceState, OutboxEntry
from forms.marked import replaced
from forms.operations import (
    Author,
    FillPlan,
    plan_declines,
    plan_fill,
    plan_revise,
    resolve_field,
    touched_steps,
)
from forms.surface.plain import inline
from forms.surface.recalled import late_clause
from forms.surface.results import (
    Result,
    cleared_result,
    closed_since,
    fill_result,
    hook_report,
    not_ready,
    recalled_summary,
    revise_result,
    submitted_result,
    with_status_line,
)
from forms.surface.tools import FormAbandonArgs, FormFillArgs, FormReviseArgs, FormStartArgs
from forms.surface.view import status_line

if TYPE_CHECKING:
    from forms.app.recall import RecallStep
    from forms.memory.vocabulary import Vocabulary


REMEMBERED = frozenset({"agent", "user"})
"""Whose answers memory keeps: the agent's, from the conversation, and the person's own, from
their form page (both a verified principal's); never a webhook's, an executor's or anyone
else's."""


@dataclass(frozen=True, slots=True)
class Writer:
    """What the write tools run on: the commit loop (and its policy: the replay window), the
    hand-off to the dispatcher (returns the instance as in-process hooks left it, None when
    they run elsewhere), new instance ids, and whether hooks run at all (a dispatcher is
    configured)."""

    loop: CommitLoop
    dispatch: Callable[[FormInstance, Sequence[OutboxEntry]], FormInstance | None]
    new_id: Callable[[], str]
    runs_hooks: bool
    memory: Memory | None = None
    """Memory for the deployment (None: none; no fact is read or written)."""

    def memory_call(self, caller: Caller, form: CompiledForm) -> MemoryCall | None:
        """Memory's part of a call on ``form``: only for a verified principal's own writes
        (the agent in their conversation, or the person on their page) on a form whose fields
        declare fact keys."""
        if (
            self.memory is None
            or not form.memory_fields
            or caller.source not in REMEMBERED
            or not caller.principal
        ):
            return None
        return self.memory.call(caller.principal, caller.conversation_id, self.loop.timer)

    def owed_call(self, caller: Caller, instance: FormInstance) -> MemoryCall | None:
        """Memory's part of a later call on ``instance`` whose start's recall came late
        (``recall_owed``), with the read (kept in this process, or again) started: only for
        the agent's conversation, as at the start."""
        if (
            self.memory is None
            or instance.state.recall_owed is None
            or caller.source != "agent"
            or not caller.principal
        ):
            return None
        owed = self.memory.call(caller.principal, caller.conversation_id, self.loop.timer)
        owed.begin_owed(instance)
        return owed


def form_start(writer: Writer, caller: Caller, call: CallId, args: FormStartArgs) -> Result:
    """A start; one with ``from`` is a handover (``forms.app.handovers.form_start``, which
    the service calls: it comes here for the rest). One write: the instance as started, with
    what memory and the context defaults wrote on it (``begun``), and the call's record."""
    loop = writer.loop
    form = loop.registry.latest(args.form, caller.principal)
    memory = writer.memory_call(caller, form)
    if memory is not None:
        memory.begin_recall()  # read beside the start's own work; waited for once it is planned
    mine = loop.store.list_conversation(caller.principal, caller.conversation_id)
    now = loop.clock()
    base = FormInstance(
        id=writer.new_id(),
        form_id=form.id,
        form_version=form.version,
        principal=caller.principal,
        conversation_id=caller.conversation_id,
        created_at=now,
        state=InstanceState(updated_at=now),
    )
    author = _author(caller, call)
    plan = plan_fill(form, base, args.values or {}, author, now)
    plan_declines(form, base, plan, args.decline or (), author, now)
    step = transition(form, base, plan.changes, now)
    started = [i for i in mine if i.form_id == form.id and i.state.status == "open"]
    result = fill_result(form, step, plan, verb="Started")
    result["instance"] = base.id
    if started:
        result["note"] = (
            f"this conversation already had {len(started)} open {form.id}; pass instance "
            "ids from now on"
        )
    result = with_status_line(result, form, step, qualify=bool(started))
    made = begun(writer, caller, call, form, step, result, _named(form, args), memory, now)
    try:
        loop.store.create(made.instance, new_call(call, made.result, base.id, now))
    except CallRecorded as taken:  # a retry of a start that already happened
        return replay(writer, caller, call, taken.record, mine)
    remember = (answers_to_remember(form, base, step.commit.fields), now)
    return after_start(writer, made, memory, remember)


@dataclass(frozen=True, slots=True)
class Begun:
    """A start as its one write stores it: the instance with what memory and the context
    defaults wrote on it, the outbox entries the start and they fired, the call's result
    saying so, and memory's part (None: nothing of memory or defaults was written)."""

    instance: FormInstance
    fired: tuple[OutboxEntry, ...]
    result: Result
    recall: RecallStep | None = None


def begun(
    writer: Writer,
    caller: Caller,
    call: CallId,
    form: CompiledForm,
    step: Transition,
    result: Result,
    named: Collection[str],
    memory: MemoryCall | None,
    now: datetime,
) -> Begun:
    """The start ``step`` made, with memory's recall and the context defaults planned on it
    (before anything is stored) on every field the start left empty and did not name
    (``named``), waiting for memory's read within its deadline. A handover's start comes
    here too, its carried fields among ``named``: recall never overwrites them."""
    qualify = "note" in result
    context = caller.context_for({form.fields[f].memory or "" for f in form.memory_fields})
    recall = None
    if memory is not None:
        recall = memory.recall_step(form, step.after, named, call.id, now, context)
    elif context:  # no memory here, or not for this caller: the defaults still apply, alone
        vocabulary = _vocabulary(writer.loop)
        recall = plan_defaults(
            form,
            step.after,
            context,
            named=named,
            tool_call_id=call.id,
            now=now,
            vocabulary=vocabulary,
        )
    if recall is None:
        return Begun(step.after, tuple(step.dispatch), result)
    fired = (*step.dispatch, *recall.step.dispatch)
    return Begun(recall.step.after, fired, _with_recall(result, form, recall, qualify), recall)


def after_start(
    writer: Writer,
    made: Begun,
    memory: MemoryCall | None,
    remember: tuple[tuple[Answer, ...], datetime],
) -> Result:
    """What follows a start's write (``made``: what it stored): memory counts what it
    recalled, remembers what the call said (``remember``: the answers and the start's
    instant: an answer that raced in after it is the later one), and the hooks are
    dispatched."""
    if memory is not None:
        memory.stored(made.instance.id, made.recall)
        memory.remember(*remember)
    return dispatched(writer, made.result, made.instance, made.fired, "note" in made.result)


def _vocabulary(loop: CommitLoop) -> Vocabulary | None:
    """The deployment's fact vocabulary, which its forms were checked against (a
    ``FormRegistry`` and a ``Catalog`` both hold one); None: Formwork's."""
    from forms.memory.vocabulary import Vocabulary  # noqa: PLC0415 (on first use)

    vocabulary = getattr(loop.registry, "vocabulary", None)
    return vocabulary if isinstance(vocabulary, Vocabulary) else None


def _named(form: CompiledForm, args: FormStartArgs) -> set[str]:
    """The fields a start's call named, by value (even one refused) or decline: memory
    leaves them to what the call said (an explicit prefill outranks memory)."""
    sent = [*(args.values or {}), *(args.decline or ())]
    return {f for f in map(form.resolve_field, sent) if f is not None}


def _with_recall(result: Result, form: CompiledForm, recall: RecallStep, qualify: bool) -> Result:
    """A start's result with what memory filled and offered after it."""
    updated = dict(result)
    clause = recalled_summary(recall.filled, recall.offered, recall.defaulted)
    if clause:  # nothing when the commit only noted a recall owed
        updated["summary"] = f"{result['summary'][:-1]}; {clause}."
    step = recall.step
    if step.dispatch:
        updated["fired"] = [*result.get("fired", ()), *(e.key for e in step.dispatch)]
    updated.pop("status_line", None)
    return with_status_line(updated, form, step, qualify)


Guard = Callable[[CompiledForm, FormInstance], None]
"""A check a caller adds to a write, run on the instance each attempt plans on, before
anything is planned: it raises a ``ToolError`` to refuse the write (the person's page checks
what they saw is still what stands: ``forms.app.page_writes``)."""


def form_fill(
    writer: Writer, caller: Caller, call: CallId, args: FormFillArgs, guard: Guard | None = None
) -> Result:
    def build(
        form: CompiledForm, instance: FormInstance, now: datetime
    ) -> tuple[Transition, Result]:
        author = _author(caller, call)
        plan = plan_fill(form, instance, args.values or {}, author, now)
        plan_declines(form, instance, plan, args.decline or (), author, now)
        step = _planned(form, instance, plan, now)
        result = fill_result(form, step, plan, verb="Saved")
        if not args.submit or step.after.state.status != "open":
            return step, result
        refusal = not_ready(form, step.evaluation)
        if refusal is not None:
            return step, {**result, "submitted": False, "not_submitted": refusal}
        state = instance.state.model_copy(
            update={"status": "completed", "closed_reason": "submitted"}
        )
        step = _planned(form, instance, plan, now, state)
        return step, submitted_result(form, step, plan)

    return write(writer, caller, call, args, build, guard)


def form_revise(
    writer: Writer, caller: Caller, call: CallId, args: FormReviseArgs, guard: Guard | None = None
) -> Result:
    def build(
        form: CompiledForm, instance: FormInstance, now: datetime
    ) -> tuple[Transition, Result]:
        author = _author(caller, call)
        if args.field is None:  # clear_memory: every answer memory filled, no field named
            plan = plan_revise(form, instance, "", args.action, args.value, author, now)
            recalled = {f: r for f, r in instance.state.recalled.items() if f not in plan.dismissed}
            state = replaced(instance.state, recalled=recalled)
            step = _planned(form, instance, plan, now, state)
            return step, cleared_result(form, step, plan)
        field_id = resolve_field(form, args.field)
        plan = plan_revise(form, instance, field_id, args.action, args.value, author, now)
        if field_id != args.field:
            plan.resolved[args.field] = field_id
        step = _planned(form, instance, plan, now)
        return step, revise_result(form, step, plan, args.action, field_id)

    return write(writer, caller, call, args, build, guard)


def form_abandon(writer: Writer, caller: Caller, call: CallId, args: FormAbandonArgs) -> Result:
    def build(
        form: CompiledForm, instance: FormInstance, now: datetime
    ) -> tuple[Transition, Result]:
        state = instance.state.model_copy(
            update={"status": "abandoned", "closed_reason": args.reason.strip()}
        )
        step = transition(form, instance, {}, now, state=state)
        why = inline(args.reason.strip())
        return step, {
            "ok": True,
            "summary": f"Abandoned {inline(form.title)}: {why}. Answers are kept.",
        }

    return write(writer, caller, call, args, build)


# ------------------------------------------------------------------ plumbing


def write(
    writer: Writer,
    caller: Caller,
    call: CallId,
    args: FormFillArgs | FormReviseArgs | FormAbandonArgs,
    build: Callable[[CompiledForm, FormInstance, datetime], tuple[Transition, Result]],
    guard: Guard | None = None,
) -> Result:
    """A write tool's call, through the one commit loop: the commit carries the call's
    record, so a retry of it is refused by the store and replayed."""
    instance, qualify = locate(writer.loop, caller, args.form, args.instance)
    owed = writer.owed_call(caller, instance)  # a recall that came late: delivered after
    try:
        return _write(writer, caller, call, build, instance, qualify, owed, guard)
    finally:
        if owed is not None:
            owed.keep_unused(instance.id)  # a call that stopped short leaves it to the next


def _write(
    writer: Writer,
    caller: Caller,
    call: CallId,
    build: Callable[[CompiledForm, FormInstance, datetime], tuple[Transition, Result]],
    instance: FormInstance,
    qualify: bool,
    owed: MemoryCall | None,
    guard: Guard | None = None,
) -> Result:
    remembered: list[tuple[tuple[Answer, ...], MemoryCall, datetime]] = []

    def plan(form: CompiledForm, current: FormInstance, now: datetime) -> Planned[Result]:
        remembered.clear()  # what the plan that commits wrote, not an earlier attempt
        if current.state.status != "open":
            raise FormClosed(
                f"this {current.form_id} is {current.state.status_text()}; it takes no more "
                "changes",
                "nothing to do: it is already closed"
                if call.tool == "form_abandon"
                else "start the form again if the user wants to change something",
            )
        if guard is not None:
            guard(form, current)
        step, result = build(form, current, now)
        result = with_status_line(result, form, step, qualify)
        if not step.commit.fields and step.commit.state == replaced(
            current.state, updated_at=step.commit.state.updated_at
        ):
            return Planned(result)  # nothing changes: no commit
        state = page_edits(step.commit.state, caller.source, step.commit.fields)
        commit = replaced(step.commit, call=new_call(call, result, current.id, now), state=state)
        # a new Transition, not dataclasses.replace (which costs more than the record)
        step = Transition(commit, step.after, step.evaluation, step.dispatch, step.before)
        memory = writer.memory_call(caller, form)
        if memory is not None:
            remembered.append((answers_to_remember(form, current, step.commit.fields), memory, now))
        return Planned(result, step)

    try:
        done = writer.loop.commit(instance, plan)
    except CallRecorded as taken:
        return replay(writer, caller, call, taken.record, seen=(instance, qualify))
    result, stored = _late_recall(writer.loop, owed, done.value, done.instance, qualify)
    if done.step is None:
        return record_alone(writer, caller, call, result, instance.id, seen=(stored, qualify))
    for answers, memory, at in remembered:
        memory.remember(answers, at)
    return dispatched(writer, result, stored, done.step.dispatch, qualify)


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


def _late_recall(
    loop: CommitLoop,
    owed: MemoryCall | None,
    result: Result,
    stored: FormInstance,
    qualify: bool,
) -> tuple[Result, FormInstance]:
    """Deliver a recall owed since the start (``owed``), as offers, after the call's own
    commit: the result says what memory offers now, and the instance as stored after."""
    late = owed.deliver_owed(loop, stored) if owed is not None else None
    if late is None:
        return result, stored
    if not late.value.offered:
        return result, late.instance
    updated = with_late_recall(result, late.value.offered)
    updated.pop("status_line", None)
    return with_status_line(updated, late.form, late.value.step, qualify), late.instance


def with_late_recall(result: Result, offered: Sequence[str]) -> Result:
    """``result`` saying what a recall owed since the start offers now (nothing to say when
    it offers nothing): a clause of its summary, and ``offered_late``."""
    if not offered:
        return result
    summary = str(result.get("summary", "")).rstrip(".")
    clause = late_clause(tuple(offered))
    return {
        **result,
        "summary": f"{summary}; {clause}." if summary else f"{clause[0].upper()}{clause[1:]}.",
        "offered_late": list(offered),
    }


def owed_recall(
    writer: Writer, caller: Caller
) -> Callable[[FormInstance], tuple[FormInstance, tuple[str, ...]]]:
    """For a read: deliver a recall owed on the instance it located, before it reads; the
    instance as stored after, and the fields memory offers now (none: nothing owed, or the
    read came late again)."""

    def deliver(instance: FormInstance) -> tuple[FormInstance, tuple[str, ...]]:
        owed = writer.owed_call(caller, instance)
        late = owed.deliver_owed(writer.loop, instance) if owed is not None else None
        if late is None:
            return instance, ()
        return late.instance, late.value.offered

    return deliver


def record_alone(
    writer: Writer,
    caller: Caller,
    call: CallId,
    result: Result,
    instance_id: str | None,
    *,
    seen: tuple[FormInstance, bool] | None = None,
) -> Result:
    """Bind the call's id to a result that stored nothing (a refusal, or no change), so a
    different input under the same id is a conflict; a retry gets the first result."""
    try:
        writer.loop.store.record_call(
            caller.principal,
            caller.conversation_id,
            new_call(call, result, instance_id, writer.loop.clock()),
        )
    except CallRecorded as taken:
        return replay(writer, caller, call, taken.record, seen=seen)
    return result


def replay(
    writer: Writer,
    caller: Caller,
    call: CallId,
    record: CallRecord,
    mine: Sequence[FormInstance] | None = None,
    *,
    seen: tuple[FormInstance, bool] | None = None,
) -> Result:
    """The first result of a call, whole, with the form's status as it stands now; nothing
    is applied. A different call under the id is a conflict; one past the window expired.

    The status comes from what this call already read when it can: ``mine`` (the
    conversation's instances) or ``seen`` (the instance it located, and whether the status
    line names it); otherwise the conversation is read."""
    result: Result = writer.loop.policy.replayed(call, record, writer.loop.clock())
    if record.instance_id is None:
        return result
    fired = [k for k in result.get("fired", ()) if isinstance(k, str)]
    if seen is not None and seen[0].id == record.instance_id:
        return as_now(writer, result, seen[0], fired, seen[1])
    if mine is None:
        mine = writer.loop.store.list_conversation(caller.principal, caller.conversation_id)
    stored = next((i for i in mine if i.id == record.instance_id), None)
    if stored is None:
        return result
    open_ = [i for i in mine if i.state.status == "open" and i.form_id == stored.form_id]
    return as_now(writer, result, stored, fired, len(open_) > 1)


def dispatched(
    writer: Writer,
    result: Result,
    stored: FormInstance,
    entries: Sequence[OutboxEntry],
    qualify: bool,
) -> Result:
    """Hand what the call's commits put in the outbox (``entries``) to the dispatcher, then
    answer with the status as it stands after in-process hooks ran (on the instance they
    left; read back only when the hooks ran elsewhere). ``stored``: the instance as the
    call's last commit stored it."""
    if not entries or not writer.runs_hooks:
        return result
    after = writer.dispatch(stored, entries)
    if after is None:
        after = writer.loop.load(stored.id)
        if after is None:
            return result
    return as_now(writer, result, after, [e.key for e in entries], qualify)


def as_now(
    writer: Writer,
    result: Result,
    stored: FormInstance,
    fired: Sequence[str],
    qualify: bool,
) -> Result:
    """``result`` with the form's status line, closing and hook states as they are now.

    ``hooks`` reports every occurrence the call raised: those its own commit fired and the
    knock-ons (occurrences raised by their effects, transitively), with their state now.
    """
    form, instance = writer.loop.settle(stored)
    updated = dict(result)
    line = status_line(form, instance, evaluate(form, instance), qualify=qualify)
    updated.pop("status_line", None)
    if line:
        updated["status_line"] = line
    if instance.state.status != "open":
        updated = closed_since(updated)
        updated["closed"] = instance.state.status
        if instance.state.closed_reason:
            updated["reason"] = instance.state.closed_reason
        updated = _handed_to(writer, updated, instance)
    keys = caused_by(instance, fired) if writer.runs_hooks else []
    if keys:
        updated["hooks"] = hook_report(instance, [instance.state.outbox[k] for k in keys])
    return updated


def _handed_to(writer: Writer, result: Result, instance: FormInstance) -> Result:
    """``result`` of a call whose instance was handed over (a checkpoint's ``HandOver``): the
    form and instance that took over, and that one's status line, where the conversation
    goes on."""
    link = instance.state.handed_to
    if link is None:
        return result
    updated = {**result, "handed_over_to": {"form": link.form, "instance": link.instance}}
    target = writer.loop.load(link.instance)
    if target is None:
        return updated
    form, target = writer.loop.settle(target)
    line = status_line(form, target, evaluate(form, target))
    if line:
        updated["status_line"] = line
    return updated


def _planned(
    form: CompiledForm,
    instance: FormInstance,
    plan: FillPlan,
    now: datetime,
    state: InstanceState | None = None,
) -> Transition:
    """The transition an agent's planned write makes (a write into a reopened step releases
    the revisit, a value resent unchanged included)."""
    touched = touched_steps(form, plan.changes, plan.unchanged)
    return transition(form, instance, plan.changes, now, state=state, touched_steps=touched)


def _author(caller: Caller, call: CallId) -> Author:
    """Who writes through this call: the caller's source and principal, and the call's id."""
    source: Any = caller.source
    return Author(source=source, actor=caller.principal, tool_call_id=call.id)
