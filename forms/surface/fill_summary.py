"""The summary and keys of a fill's result (``forms.surface.results.fill_result``) beyond the
common fill's: each clause of what it saved, held, declined, replaced, confirmed, left
unchanged, rejected or did not know (``reported``), and the two summaries of a one-answer fill,
made once per field (``one_saved``)."""

from __future__ import annotations

from typing import Any

from forms.compiled import CompiledForm, keep_on
from forms.engine import Transition
from forms.operations import FillPlan
from forms.surface.plain import inline
from forms.surface.unknown_ids import OUTLINE_HINT, unknown_entries

Result = dict[str, Any]
"""A tool's result (``forms.surface.results.Result``)."""


def one_saved(form: CompiledForm, field_id: str) -> tuple[str, str]:
    """The summary of a fill that saved one answer, to ``field_id``: as it stands, and when it
    replaced an earlier answer; made on the field's first such fill and kept on the form (its
    ``_one_saved``), as the words ``reported`` would give."""
    try:
        kept: dict[str, tuple[str, str]] = form._one_saved  # type: ignore[attr-defined]
    except AttributeError:
        kept = keep_on(form, "_one_saved", {})
    said = kept[field_id] = (
        f"Saved 1 ({field_id}).",
        f"Saved 1 ({field_id}); replaced 1 earlier answer.",
    )
    return said


def reported(form: CompiledForm, step: Transition, plan: FillPlan, verb: str) -> Result:
    """``fill_result`` (before ``finish``) of a fill with more to say than what it saved."""
    readings, captured = step.evaluation.fields, plan.captured
    held = [f for f in captured if readings[f].status == "held"]
    if held or plan.declined:
        declined = [f for f in plan.declined if f not in held]
        kept = [f for f in captured if f not in held and f not in plan.declined]
    else:  # most fills: every captured answer is kept (not changed below)
        declined, kept = [], captured
    # The summary's first clause is "Started", "Saved" or "Declined": written capitalised, as
    # the sentence starts with it (ids keep their case after it).
    if verb == "Started":
        text = f"Started {inline(form.title)}"
        if kept:
            text += f"; saved {len(kept)} ({', '.join(kept)})"
    elif kept:
        text = f"Saved {len(kept)} ({', '.join(kept)})"
    elif declined:
        text = ""
    else:
        text = "Saved 0"
    if declined:
        said = f"declined {len(declined)} ({', '.join(declined)})"
        text = f"{text}; {said}" if text else "D" + said[1:]
    if held or plan.replaced or plan.confirmed or plan.unchanged or plan.rejected or plan.unknown:
        text += _more_said(plan, held)
    # ok: the call landed. A start always creates the instance, whatever its values did.
    landed = verb == "Started" or bool(captured) or bool(plan.unchanged)
    result: Result = {"ok": landed or not (plan.rejected or plan.unknown), "summary": text + "."}
    if held:
        result["held"] = {f: "kept; used if it comes to apply with later answers" for f in held}
    if plan.resolved:
        result["resolved"] = dict(plan.resolved)
    if plan.replaced:
        result["replaced"] = dict(plan.replaced)
    if plan.coerced:
        result["coerced"] = dict(plan.coerced)
    if plan.confirmed:
        result["confirmed"] = list(plan.confirmed)
    if plan.rejected:
        result["rejected"] = [
            {
                "field": r.field,
                "error": inline(r.message),
                **({"hint": inline(r.hint)} if r.hint else {}),
            }
            for r in plan.rejected
        ]
    if plan.unknown:
        entries, complete = unknown_entries(
            form, step.evaluation, plan, step.after.state.status == "open"
        )
        if not complete:
            result["hint"] = OUTLINE_HINT
        result["unknown"] = entries
    if plan.unchanged:
        result["unchanged"] = list(plan.unchanged)
    return result


def _more_said(plan: FillPlan, held: list[str]) -> str:
    """The summary's clauses after what was saved and declined, each after ``; ``."""
    said = ""
    if held:
        said += f"; held {len(held)} that don't apply yet"
    if plan.replaced:
        n = len(plan.replaced)
        said += f"; replaced {n} earlier answer{'' if n == 1 else 's'}"  # count(), inline
    if plan.confirmed:
        said += f"; confirmed {len(plan.confirmed)} from memory"
    if plan.unchanged:
        said += f"; {len(plan.unchanged)} unchanged"
    if plan.rejected:
        said += f"; rejected {len(plan.rejected)}"
    if plan.unknown:
        said += f"; {len(plan.unknown)} unknown id" + ("s" if len(plan.unknown) > 1 else "")
    return said
