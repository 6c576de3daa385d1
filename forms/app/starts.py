"""A start: ``form_start`` without ``from`` (a handover's start is ``forms.app.handovers``,
which comes here for the rest).

One write: the instance as started, with what memory and the context defaults wrote on it
(``begun``: planned on the started instance before it is stored, with the call's record).
With memory (``forms.app.memory``), a start of a form whose fields declare fact keys reads the
principal's memory beside its own work and waits for it within the memory deadline; after the
write it remembers the answers the agent gave to such fields. Neither can fail the call.

The context defaults (``Caller.context``: values of the caller's verified claims for fact
keys, such as a locale) are written in that same write, below memory, also when memory has
nothing, is off, late or failed, or is not in the deployment: they are not facts, and need no
fact store.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from forms.app.after_write import dispatched, replay
from forms.app.calls import CallId, new_call
from forms.app.conversation import Caller
from forms.app.loop import CommitLoop
from forms.app.memory import MemoryCall, plan_defaults
from forms.app.remember import Answer, answers_to_remember
from forms.app.writer import Writer, call_author
from forms.compiled import CompiledForm
from forms.engine import Transition, transition
from forms.errors import CallRecorded
from forms.instance import FormInstance, InstanceState, OutboxEntry
from forms.operations import plan_declines, plan_fill
from forms.surface.results import Result, fill_result, recalled_summary, with_status_line
from forms.surface.tools import FormStartArgs

if TYPE_CHECKING:
    from forms.app.recall import RecallStep
    from forms.memory.vocabulary import Vocabulary


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
    author = call_author(caller, call)
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
    made = begun(writer, caller, call, form, step, result, named_fields(form, args), memory, now)
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


def named_fields(form: CompiledForm, args: FormStartArgs) -> set[str]:
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
