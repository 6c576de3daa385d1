"""Ids a fill named that name no field: what its result offers the agent instead of a bare
rejection (``forms.surface.results.fill_result`` lists them under ``unknown``)."""

from __future__ import annotations

from typing import Any

from forms.compiled import CompiledForm
from forms.evaluation import Evaluation
from forms.operations import FillPlan
from forms.statuses import STILL_TO_ASK

Result = dict[str, Any]

OUTLINE_HINT = 'form_read with part="outline" lists every field id'
"""The way on when the unknown entries of a fill leave the agent nothing to send."""

STILL_TO_ASK_LIMIT = 8
"""Ids an unknown entry names when nothing is close: enough for the open step and the next."""


def still_to_ask(form: CompiledForm, ev: Evaluation) -> list[str]:
    """Fields that apply and have no answer yet (the agent may write them): the open step's
    first, then required before optional, in definition order."""
    open_step = ev.open_step
    ids = [f for f, fe in ev.fields.items() if fe.status in STILL_TO_ASK and form.fields[f].offered]
    return sorted(
        ids,
        key=lambda f: (
            form.fields[f].step != open_step,
            form.fields[f].optional,
            form.fields[f].index,
        ),
    )


def unknown_entries(
    form: CompiledForm, ev: Evaluation, plan: FillPlan, is_open: bool = True
) -> tuple[list[Result], bool]:
    """One entry per id that named no field, and whether they leave the agent something to send.

    An entry names the fields it most likely meant (``did_you_mean``) or, when none is close,
    the ids still to ask (``still_to_ask``, after this call's answers), so the agent can pick
    the one it meant without reading the outline first. ``False`` when an entry has neither, or
    its list was cut at ``STILL_TO_ASK_LIMIT``: then the outline is the way on. A form this
    call closed takes no more answers: nothing is listed, and nothing points at the outline."""
    remaining = still_to_ask(form, ev) if is_open else []
    shown = remaining[:STILL_TO_ASK_LIMIT]
    entries: list[Result] = []
    complete = True
    for u in plan.unknown:
        entry: Result = {"sent": u.sent}
        if u.did_you_mean:
            entry["did_you_mean"] = list(u.did_you_mean)
        elif shown:
            entry["still_to_ask"] = shown
            complete = complete and len(remaining) <= len(shown)
        elif is_open:
            complete = False
        entries.append(entry)
    return entries, complete
