"""What a write call answers once its write is stored, or found to be stored already.

The hooks its commits raised are handed to the dispatcher and the call answers with the
form's status as it stands after in-process hooks ran (``dispatched``, ``as_now``); a retry of
a call already recorded gets its first result back with the status as it stands now
(``replay``); a call that stored nothing binds its id alone (``record_alone``); a recall owed
since the start is delivered after the call's own commit (``with_late_recall``,
``owed_recall``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from forms.app.calls import CallId, Rendering, caused_by, deferred_call, new_call
from forms.app.conversation import Caller
from forms.app.loop import CommitLoop
from forms.app.memory import MemoryCall
from forms.app.writer import Writer
from forms.engine import evaluate
from forms.errors import CallRecorded
from forms.instance import CallRecord, FormInstance, OutboxEntry
from forms.surface.recalled import late_clause
from forms.surface.results import Result, closed_since, hook_report, with_status_line
from forms.surface.view import status_line


def late_recall(
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
    result: Result | Rendering,
    instance_id: str | None,
    *,
    seen: tuple[FormInstance, bool] | None = None,
) -> Result:
    """Bind the call's id to a result that stored nothing (a refusal, or no change), so a
    different input under the same id is a conflict; a retry gets the first result. A result
    not rendered yet (``Rendering``) is rendered only if the store records it: a retry whose
    id is taken renders nothing of it."""
    now = writer.loop.clock()
    if isinstance(result, Rendering):
        record = deferred_call(call, result, instance_id, now)
    else:
        record = new_call(call, result, instance_id, now)
    try:
        writer.loop.store.record_call(caller.principal, caller.conversation_id, record)
    except CallRecorded as taken:
        return replay(writer, caller, call, taken.record, seen=seen)
    return result() if isinstance(result, Rendering) else result


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
