"""The read tools and status lines: what the agent pulls, computed from stored instances.

``form_list``, ``form_read`` and the conversation's status lines change nothing (a read may
migrate an instance whose definition version is gone, through the commit loop's ``settle``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from forms.app.conversation import Caller, locate
from forms.app.loop import CommitLoop
from forms.compiled import CompiledForm
from forms.engine import evaluate
from forms.errors import InvalidFormDefinition, ToolError, UnknownStep
from forms.evaluation import Evaluation, PredicateError
from forms.instance import FormInstance
from forms.surface.plain import inline
from forms.surface.recalled import late_clause
from forms.surface.results import Result, count
from forms.surface.tools import FormListArgs, FormReadArgs, check_id
from forms.surface.view import closed_view, field_view, outline_view, status_line, step_view

_log = logging.getLogger("formwork")


def conversation_status(loop: CommitLoop, caller: Caller) -> list[str] | None:
    """Like ``status``, but None when the caller has no form at all in this conversation
    (which is also what another principal's conversation looks like). One store read."""
    check_id(caller.conversation_id, "conversation id")
    everything = loop.store.list_conversation(caller.principal, caller.conversation_id)
    if not everything:
        return None
    instances = [i for i in everything if i.state.status == "open"]
    lines: list[str] = []
    for stored in instances:
        try:
            form, instance = loop.settle(stored)
            same = sum(1 for i in instances if i.form_id == instance.form_id)
            line = status_line(form, instance, evaluate(form, instance), qualify=same > 1)
        except ToolError as exc:
            lines.append(f"[form: {stored.form_id}#{stored.id}] unavailable: {inline(exc.message)}")
            continue
        except (PredicateError, InvalidFormDefinition) as exc:
            _log.error("status line of %s failed: %s", stored.id, exc)
            lines.append(f"[form: {stored.form_id}#{stored.id}] unavailable: internal error")
            continue
        if line:
            lines.append(line)
    return lines


def form_list(loop: CommitLoop, caller: Caller, args: FormListArgs) -> Result:
    del args  # form_list takes no input
    mine = loop.store.list_conversation(caller.principal, caller.conversation_id)
    available = loop.registry.forms(caller.principal)
    return {
        "ok": True,
        "summary": f"{count(len(available), 'form')} available; {len(mine)} in this conversation.",
        "forms": [
            {
                "id": f.id,
                "title": inline(f.title),
                **({"about": inline(f.description)} if f.description else {}),
            }
            for f in available
        ],
        "started": [
            {
                "form": i.form_id,
                "instance": i.id,
                "status": list_status(loop, i),
                **({"reason": inline(i.state.closed_reason)} if i.state.closed_reason else {}),
            }
            for i in mine
        ],
    }


def list_status(loop: CommitLoop, stored: FormInstance) -> str:
    """An instance's status for form_list: a complete form still open says so."""
    if stored.state.status != "open":
        return stored.state.status
    try:
        form, instance = loop.settle(stored)
        ready = evaluate(form, instance).ready
    except (ToolError, PredicateError, InvalidFormDefinition):
        return "open"
    return "complete (still open for corrections)" if ready else "open"


def form_read(
    loop: CommitLoop,
    caller: Caller,
    args: FormReadArgs,
    owed: Callable[[FormInstance], tuple[FormInstance, Sequence[str]]] | None = None,
) -> Result:
    """The form as it stands; ``owed`` delivers a recall owed since the start (memory's read
    came late, ``forms.app.after_write.owed_recall``) before it is read, and what it offers is
    said in the result."""
    instance, qualify = locate(loop, caller, args.form, args.instance)
    offered: Sequence[str] = ()
    if owed is not None and instance.state.recall_owed is not None:
        instance, offered = owed(instance)
    form, instance = loop.settle(instance)
    ev = evaluate(form, instance)
    header = _header(form, instance)
    view, summary = _part(form, instance, ev, (args.part or "").strip())
    header["summary"] = summary
    line = status_line(form, instance, ev, qualify=qualify)
    if offered:
        header = {**header, "summary": f"{header['summary'].rstrip('.')}; {late_clause(offered)}."}
        header["offered_late"] = list(offered)
    return {**header, **view, **({"status_line": line} if line else {})}


def _header(form: CompiledForm, instance: FormInstance) -> Result:
    """What a read says first: the form and instance, whether it is closed and why, and the
    instances it was handed over to or from."""
    header: Result = {"ok": True, "form": form.id, "instance": instance.id}
    closed = instance.state.status != "open"
    if closed:
        header["closed"] = instance.state.status
        if instance.state.closed_reason:
            header["reason"] = inline(instance.state.closed_reason)
    for key, link in (
        ("handed_over_to", instance.state.handed_to),
        ("handed_over_from", instance.state.handed_from),
    ):
        if link is not None:
            header[key] = {"form": link.form, "instance": link.instance}
    return header


def _part(
    form: CompiledForm, instance: FormInstance, ev: Evaluation, part: str
) -> tuple[dict[str, Any], str]:
    """The view of ``part`` (none: the open step, or the outline when nothing is left to ask or
    the form is closed), and the sentence that introduces it."""
    closed = instance.state.status != "open"
    if closed and (not part or part.lower() == "outline"):
        view = closed_view(form, instance, ev)
        summary = (
            f"{inline(form.title)} is {inline(instance.state.status_text())}; it takes no more "
            "changes. The answers on record follow."
        )
    elif not part:
        if ev.open_step is None:
            view = outline_view(form, instance, ev)
            summary = "Nothing left to ask; the outline follows."
        else:
            view = step_view(form, instance, ev, ev.open_step)
            summary = f"Open step: {inline(form.steps[ev.open_step].title)}."
    elif part.lower() == "outline":
        view = outline_view(form, instance, ev)
        summary = f"Outline of {inline(form.title)}."
    elif (step_id := form.resolve_step(part)) is not None:
        view = step_view(form, instance, ev, step_id)
        summary = f"Step: {inline(form.steps[step_id].title)}."
    elif (field_id := form.resolve_field(part)) is not None:
        view = field_view(form, instance, ev, field_id)
        summary = f"Field {inline(form.fields[field_id].label)} with its revisions."
    else:
        close = form.suggest_steps(part) + form.suggest_fields(part)
        raise UnknownStep(
            f"{part!r} is neither a step nor a field of {form.id!r}",
            ("did you mean " + ", ".join(repr(c) for c in close) + "? " if close else "")
            + 'omit part for the open step, or send "outline"',
            close,
        )
    return view, summary
