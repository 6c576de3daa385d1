"""What a tool call answers: short results that lead with a sentence, then the structured part.

Pure functions over a compiled form, the transition a call produced and the plan behind it;
``FormService`` (the composition root) calls them. The words here are read by a model: they say
what was captured, held, replaced, resolved from an alias, unknown (with ``did_you_mean``) or
rejected (with the hint naming the JSON to send), and the status line after the call.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import JsonValue, ValidationError
from pydantic_core import to_json

from forms.compiled import CompiledForm
from forms.engine import Transition
from forms.errors import SizeLimit, ToolError
from forms.evaluation import Evaluation
from forms.instance import FormInstance, OutboxEntry
from forms.operations import FillPlan
from forms.surface.fill_summary import one_saved, reported
from forms.surface.plain import inline
from forms.surface.status_line import status_line
from forms.surface.unknown_ids import OUTLINE_HINT

Result = dict[str, Any]


def error_result(error: ToolError) -> Result:
    """A refusal as data; its words on one line (``inline``: they may quote a label, an
    option or a value an author or a user wrote)."""
    result: Result = {"ok": False, "error": error.code, "message": inline(error.message)}
    if error.hint:
        result["hint"] = inline(error.hint)
    if error.did_you_mean:
        result["did_you_mean"] = list(error.did_you_mean)
    if isinstance(error, SizeLimit):
        result.update(error.details)
    return result


def fill_result(form: CompiledForm, step: Transition, plan: FillPlan, verb: str) -> Result:
    """What a fill (a start's, or a save's: ``verb``) answers: its summary sentence, what it
    held, resolved, replaced, coerced, confirmed, refused, did not know or left unchanged, and
    what the commit changed besides (``finish``)."""
    readings, captured = step.evaluation.fields, plan.captured
    for f in captured:
        if readings[f].status == "held":
            return finish(form, step, reported(form, step, plan, verb))
    if (
        plan.declined
        or plan.confirmed
        or plan.unchanged
        or plan.rejected
        or plan.unknown
        or plan.resolved
        or plan.coerced
    ):
        return finish(form, step, reported(form, step, plan, verb))
    # Most fills: every captured answer kept, and nothing to say but what was saved and what
    # it replaced. ``reported`` gives the same summary and keys (``test_fill_summary.py``),
    # from more passes and tests than such a fill needs.
    replaced = plan.replaced
    if verb == "Saved" and len(captured) == 1 and len(replaced) < 2:
        # one answer, as nearly every fill: its two summaries are made once per field
        try:
            said = form._one_saved[captured[0]]  # type: ignore[attr-defined]
        except (AttributeError, KeyError):
            said = one_saved(form, captured[0])
        if replaced:
            return finish(form, step, {"ok": True, "summary": said[1], "replaced": replaced.copy()})
        return finish(form, step, {"ok": True, "summary": said[0]})
    if verb == "Started":
        text = f"Started {inline(form.title)}"
        if captured:
            text = f"{text}; saved {len(captured)} ({', '.join(captured)})"
    elif captured:
        text = f"Saved {len(captured)} ({', '.join(captured)})"
    else:
        text = "Saved 0"
    if replaced:
        n = len(replaced)
        text = f"{text}; replaced {n} earlier answer{'' if n == 1 else 's'}."
        return finish(form, step, {"ok": True, "summary": text, "replaced": replaced.copy()})
    return finish(form, step, {"ok": True, "summary": text + "."})


def closed_since(result: Result) -> Result:
    """``result`` for a form that closed after it was computed (an in-process hook terminated
    it in the same call): as ``unknown_entries`` says of a closed form, its unknown ids list
    nothing more to ask, and nothing points at the outline."""
    unknown = result.get("unknown")
    if not isinstance(unknown, list):
        return result
    updated = {
        **result,
        "unknown": [
            {k: v for k, v in u.items() if k != "still_to_ask"} if isinstance(u, dict) else u
            for u in unknown
        ],
    }
    if updated.get("hint") == OUTLINE_HINT:
        del updated["hint"]
    return updated


def not_ready(form: CompiledForm, ev: Evaluation) -> str | None:
    """Why a form cannot be submitted yet, in words the agent can relay; None when it can."""
    if ev.ready:
        return None
    pending = [f for f, fe in ev.fields.items() if fe.status == "pending"]
    asked = [inline(form.fields[f].label) for f in pending if form.fields[f].offered]
    decided = [inline(form.fields[f].label) for f in pending if not form.fields[f].offered]
    reasons = []
    if asked:
        reasons.append(
            "still to answer: " + ", ".join(asked[:8]) + (" …" if len(asked) > 8 else "")
        )
    if decided:
        reasons.append("an approver has still to decide: " + ", ".join(decided))
    refused = [
        inline(form.fields[f].label) for f, fe in ev.fields.items() if fe.status == "invalid"
    ]
    if refused:
        reasons.append(
            "answers this version of the form no longer accepts (answer again, retract or "
            "decline): " + ", ".join(refused)
        )
    if ev.revisit is not None:
        reasons.append(f"step {inline(form.steps[ev.revisit].title)!r} is being gone through again")
    waiting = [inline(h.title) for h in form.hooks if h.id in ev.waiting]
    if waiting:
        reasons.append("waiting for " + ", ".join(waiting))
    reasons.extend(inline(r.message) for r in ev.active_rejections)
    return "; ".join(reasons) or "it is not complete"


def submitted_result(form: CompiledForm, step: Transition, plan: FillPlan) -> Result:
    """A fill that also submitted the form (closed it as completed)."""
    result = fill_result(form, step, plan, verb="Saved")
    did = plan.captured or plan.unchanged or plan.rejected or plan.unknown
    closing = f"submitted {inline(form.title)}; it is closed"
    result["summary"] = (
        result["summary"][:-1] + f"; {closing}." if did else closing[0].upper() + closing[1:] + "."
    )
    result["submitted"] = True
    return result


def revise_result(
    form: CompiledForm, step: Transition, plan: FillPlan, action: str, field_id: str
) -> Result:
    fe = step.evaluation.fields[field_id]
    label = inline(form.fields[field_id].label)
    now = fe.revision.value if fe.revision and fe.revision.kind == "value" else None
    shown = inline(json.dumps(now, ensure_ascii=False)) if now is not None else "no answer"
    if plan.unchanged:
        summary = f"{label} was already {'declined' if action == 'decline' else shown}."
    elif action == "set":
        summary = f"Set {label} to {shown}."
    elif action == "retract":
        summary = f"Retracted {label}; it has no answer now ({fe.status})."
    elif action == "decline":
        summary = f"Recorded that the user prefers not to give {label}."
    else:
        summary = f"{action.capitalize()} on {label}: now {shown} ({fe.status})."
    result: Result = {"ok": True, "summary": summary}
    if plan.resolved:
        result["resolved"] = dict(plan.resolved)
    if plan.coerced:
        result["coerced"] = dict(plan.coerced)
    return finish(form, step, result)


def cleared_result(form: CompiledForm, step: Transition, plan: FillPlan) -> Result:
    """``form_revise`` with ``clear_memory``: what memory filled and nobody confirmed is
    retracted (each undone on its own), and its offers are dropped."""
    parts = []
    if plan.captured:
        labels = ", ".join(inline(form.fields[f].label) for f in plan.captured)
        parts.append(
            f"Cleared {count(len(plan.captured), 'answer')} from memory ({labels}); "
            "undo on a field brings its answer back"
        )
    if plan.dismissed:
        labels = ", ".join(inline(form.fields[f].label) for f in plan.dismissed)
        parts.append(f"Dropped {count(len(plan.dismissed), 'offer')} from memory ({labels})")
    result: Result = {"ok": True, "summary": ". ".join(parts) + "."}
    if plan.captured:
        result["cleared"] = list(plan.captured)
    if plan.dismissed:
        result["dropped"] = list(plan.dismissed)
    return finish(form, step, result)


def recalled_summary(
    filled: Sequence[str], offered: Sequence[str], defaulted: Sequence[str] = ()
) -> str:
    """What memory did when a form started, as a clause of its summary; ``defaulted``: the
    fields filled from the caller's account (context defaults), said apart from memory's so
    the agent knows which values the user never gave anywhere."""
    parts = []
    if filled:
        parts.append(f"filled {len(filled)} from memory, unconfirmed ({', '.join(filled)})")
    if offered:
        parts.append(f"memory offers {len(offered)} to confirm ({', '.join(offered)})")
    if defaulted:
        parts.append(
            f"filled {len(defaulted)} from your account, unconfirmed ({', '.join(defaulted)})"
        )
    return "; ".join(parts)


def finish(form: CompiledForm, step: Transition, result: Result) -> Result:
    """``result`` with what the commit did besides the call's own answers: the answers it held
    or brought back, the hooks it fired, and the form's closing."""
    ev = step.evaluation
    if ev.flipped and _held_or_back(step, ev):
        orphaned, restored = step.orphaned(), step.restored()
        if orphaned:
            result["now_held"] = {
                f: "no longer applies after this change; kept, and back if it applies again"
                for f in orphaned
            }
        if restored:
            result["restored"] = {f: "applies again; its earlier answer is back" for f in restored}
    if step.dispatch:
        result["fired"] = [e.key for e in step.dispatch]
    status = step.after.state.status
    if status != "open":
        result["closed"] = status
    return result


def _held_or_back(step: Transition, ev: Evaluation) -> bool:
    """Whether a field that flipped may be one ``Transition.orphaned`` or ``restored`` lists:
    an answer held now, or one that applies again that this commit did not write. Most
    flips are neither (a first answer goes live), and the two lists cost a pass each."""
    fields = ev.fields
    for f in ev.flipped:
        status = fields[f].status
        if status == "held" or (status == "answered" and f not in step.commit.fields):
            return True
    return False


def with_status_line(result: Result, form: CompiledForm, step: Transition, qualify: bool) -> Result:
    line = status_line(form, step.after, step.evaluation, qualify)
    if line:
        result["status_line"] = line
    return result


# ------------------------------------------------------------------ hooks


def count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def hook_report(instance: FormInstance, entries: Sequence[OutboxEntry]) -> list[Result]:
    report: list[Result] = []
    for entry in entries:
        current = instance.state.outbox.get(entry.key, entry)
        row: Result = {"key": current.key, "status": current.status}
        if current.error:
            row["error"] = current.error
        report.append(row)
    return report


def as_json(result: Result) -> dict[str, JsonValue]:
    """``result`` as plain JSON data, sharing nothing with it: what pydantic-core's serialiser
    writes of it, read back (a decimal or a date as its text, an infinity as null, a key as
    text, anything unknown as its ``str``): the text a call's record is stored as
    (``forms.app.calls.record_json``), and the one a model reads
    (``forms.surface.plain.result_text``). Most results are text, integers, booleans, None,
    lists and dicts only: copied as they are."""
    copied = _plain(result)
    if isinstance(copied, dict):
        return copied
    loaded: dict[str, JsonValue] = json.loads(to_json(result, inf_nan_mode="null", fallback=str))
    return loaded


_SCALARS = (str, int, bool, type(None))


def _plain(value: Any) -> Any:
    """A copy of ``value`` built of dicts with text keys, lists, text, integers, booleans and
    None (what a JSON round trip returns unchanged), or ``_OTHER`` when it holds anything
    else: then only the round trip says what it becomes."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is dict:
        copied: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:
                return _OTHER
            plain = _plain(item)
            if plain is _OTHER:
                return _OTHER
            copied[key] = plain
        return copied
    if kind is list or kind is tuple:
        items = [_plain(item) for item in value]
        return _OTHER if any(item is _OTHER for item in items) else items
    return _OTHER


_OTHER: Any = object()


def describe_validation(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors(include_url=False)[:3]:
        loc = [str(p) for p in error["loc"]]
        where = ".".join(loc[:4]) + (".…" if len(loc) > 4 else "") or "input"
        problems.append(f"{where}: {error['msg'][:200]}")
    return "bad input: " + "; ".join(problems)
