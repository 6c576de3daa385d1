"""The status line (tier 0): one or two lines per open instance, for the system prompt on every
turn, rebuilt on every call from the compiled form and the instance.

Pending labels rather than a count (so the agent knows what to ask without a tool call), and a
one-line preview of the next few later steps (``LATER_STEPS``, so it can capture an answer it
hears early), then how many more there are. Its length does not grow with the number of steps.
A closed instance drops out. An answer memory filled is marked as such (``from memory,
unconfirmed``) until the user confirms it, and a value memory only offers is shown for the
agent to ask about, never as an answer. The reads (tier 1) are ``forms.surface.view``; they
show a step's position, progress and preview in the same words, from here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from forms.compiled import CompiledForm, CompiledStep
from forms.evaluation import Evaluation, FieldEval, refusal
from forms.instance import FormInstance, stopped
from forms.surface.plain import clipped, inline
from forms.surface.recalled import memory_lines

_MAX_SHOWN = 60
_OPERATOR = "an operator has to fix the form"


def show(value: Any) -> str:
    """A short, unambiguous rendering of a stored JSON value, on one line (``clipped``)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return clipped(text, _MAX_SHOWN)


def form_tag(instance: FormInstance, qualify: bool) -> str:
    return inline(f"{instance.form_id}#{instance.id}" if qualify else instance.form_id)


def status_line(
    form: CompiledForm, instance: FormInstance, ev: Evaluation, qualify: bool = False
) -> str | None:
    """The tier-0 line(s) for one instance, or None when it is closed."""
    if instance.state.status != "open":
        return None
    tag = f"[form: {form_tag(instance, qualify)}]"
    lines: list[str]
    if ev.open_step is None and ev.ready:
        lines = [f"{tag} complete (still open for corrections); submit it once the user confirms"]
    elif ev.open_step is None:
        lines = [f"{tag} all answered, not complete"]
    else:
        step = form.steps[ev.open_step]
        position = step_position(form, ev, step)
        assert position is not None, "the open step applies"
        fields = [ev.fields[f] for f in step.fields]
        if ev.revisit == step.id:
            recheck = [
                _label(form, f) for f in fields if f.status == "ask_again" and _asked(form, f)
            ]
            head = f'{tag} back at step {position} "{_brief(step.title)}": go through it again'
            lines = [head + (" · check: " + _listed(recheck) if recheck else "")]
        else:
            pending = [
                _brief(field.label)
                for field in (form.fields[f.id] for f in fields if f.status == "pending")
                if field.offered
            ]
            head = f'{tag} step {position} "{_brief(step.title)}"'
            lines = [head + (" · pending: " + _listed(pending) if pending else "")]
            lines.extend(_invalid_lines(form, fields))
        later = _later_line(form, ev, step)
        if later:
            lines.append(later)
    lines.extend(memory_lines(form, instance, ev))
    if instance.state.page_edits:
        lines.append(page_line(form, instance))
    waits = []
    for hook_id in ev.waiting:
        hook = form.hook(hook_id)
        if hook is None:
            continue
        if hook.approval is not None:
            what = _brief(hook.approval.prompt or hook.title)
            waits.append(f"{what} (awaiting approval by {_brief(hook.approval.role)})")
        elif any(e.hook_id == hook_id and stopped(e) for e in instance.state.outbox.values()):
            stopped_hook = _brief(hook.title)
            waits.append(f"{stopped_hook} (stopped: hooks kept triggering each other; {_OPERATOR})")
        elif any(
            e.hook_id == hook_id and e.status == "failed" for e in instance.state.outbox.values()
        ):
            waits.append(f"{_brief(hook.title)} (failed on our side; an operator has to retry it)")
        else:
            waits.append(f"{_brief(hook.title)} (running)")
    if waits:
        lines.append("waiting: " + " · ".join(waits) + "; the form cannot complete until then")
    lines.extend(f"! {inline(r.message)}" for r in ev.active_rejections)
    return "\n".join(lines)


def page_line(form: CompiledForm, instance: FormInstance) -> str:
    """What the person changed on their form page since the agent's last write, each field
    with what now stands (``Purpose = conference``, ``Notes (taken back)``), so the agent
    neither asks again nor writes over it unasked."""
    told: list[str] = []
    for field_id in instance.state.page_edits:
        field = form.fields.get(field_id)
        if field is None:  # a field a newer version dropped: nothing to say about it
            continue
        revision = instance.field(field_id).in_force()
        label = _brief(field.label)
        if revision is None:
            told.append(f"{label} (cleared)")
        elif revision.kind == "value":
            told.append(f"{label} = {show(revision.value)}")
        else:
            told.append(f"{label} ({'declined' if revision.kind == 'decline' else 'taken back'})")
    return (
        "the user changed on their form page: "
        + _listed(told)
        + "; keep these unless they say otherwise"
    )


def _asked(form: CompiledForm, fe: FieldEval) -> bool:
    return form.fields[fe.id].offered


def _label(form: CompiledForm, fe: FieldEval) -> str:
    return _brief(form.fields[fe.id].label)


STATUS_TEXT_CHARS = 80
"""The most of one label, title or approval prompt the status line shows (``…`` past it): an
author's text cannot make the line, which is in every system prompt, long. Reads show it all."""
LABELS_SHOWN = 8
"""The most pending (or to-check) labels the status line names, then ``+N more``; the open
step's read lists every field."""


@lru_cache(maxsize=4_096)
def _brief(text: str) -> str:
    """Author text (a label, a title, a prompt) as the status line shows it; memoised, as the
    same few are shown on every call."""
    return clipped(text, STATUS_TEXT_CHARS)


def _listed(labels: list[str]) -> str:
    more = len(labels) - LABELS_SHOWN
    return ", ".join(labels[:LABELS_SHOWN]) + (f" +{more} more" if more > 0 else "")


LATER_STEPS = 3
"""How many later steps the status line previews (the next ones still to do, in order); the
rest are counted (``+12 more steps``). A preview is there so the agent can capture an answer
the user gives ahead of its step, which is nearly always one of the next few; the outline
lists every step. Bounded, so the line (in every result and every system prompt) costs the
same on a form of 100 steps as on one of 5."""


def step_position(form: CompiledForm, ev: Evaluation, step: CompiledStep) -> str | None:
    """``k/N``: the step's place among the steps that apply (None: it does not apply), from
    the evaluation's step summary (no walk over the steps)."""
    place = ev.steps.position(form.step_index[step.id])
    return None if place is None else f"{place[0]}/{place[1]}"


def _later_line(form: CompiledForm, ev: Evaluation, open_step: CompiledStep) -> str | None:
    """``later: A (preview) · B (preview) · C (preview) · +N more steps`` over the steps after
    ``open_step`` that apply and are not complete; None when there is none. Only the first
    ``LATER_STEPS`` are previewed (a preview is the costly part); the rest are counted, from
    the evaluation's step summary: the line costs the same however many steps follow."""
    after, more = ev.steps.later(form.step_index[open_step.id], LATER_STEPS)
    if not after:
        return None
    order = form.step_order
    shown = [
        _titled(s.title, step_preview(form, s, ev)) for s in (form.steps[order[i]] for i in after)
    ]
    if more:
        shown.append(f"+{more} more step{'' if more == 1 else 's'}")
    return "later: " + " · ".join(shown)


_PREVIEW_LABELS = 3
_PREVIEW_CHARS = 48


@lru_cache(maxsize=4_096)
def _titled(title: str, preview: str) -> str:
    return f"{_brief(title)} ({clipped(preview, STATUS_TEXT_CHARS)})" if preview else _brief(title)


def step_preview(form: CompiledForm, step: CompiledStep, ev: Evaluation) -> str:
    """What a step collects, in a few words: the author's ``preview`` when there is one (the
    author owns it, and it is shown as written whatever applies), else a phrase derived from
    the labels of the step's fields that apply with the current answers, so it never names a
    field a rule has turned off. Fields only an approver writes are left out: the agent never
    collects them. Empty when nothing applies. On one line (``inline``)."""
    if step.preview:
        return inline(step.preview)
    fields, readings = form.fields, ev.fields
    return preview_from_labels(
        fields[f].label for f in step.fields if readings[f].applies and fields[f].offered
    )


def preview_from_labels(labels: Iterable[str]) -> str:
    """The first few labels (at most ``_PREVIEW_LABELS``, within ``_PREVIEW_CHARS``), each
    lower-cased where that reads naturally, and ``…`` when some are left out. Reads no more
    of ``labels`` than it needs (a step of a hundred fields costs what one of four does)."""
    shown: list[str] = []
    length = 0
    for label in labels:
        text = _cased(label)
        if not shown:
            if len(text) > _PREVIEW_CHARS:
                return text[: _PREVIEW_CHARS - 1].rstrip() + "…"
        elif len(shown) == _PREVIEW_LABELS or length + 2 + len(text) > _PREVIEW_CHARS:
            shown.append("…")  # a label left out
            break
        length += len(text) + (2 if shown else 0)
        shown.append(text)
    return ", ".join(shown)


@lru_cache(maxsize=4_096)
def _cased(label: str) -> str:
    """A label as a preview shows it (memoised: the same few are shown on every call)."""
    return _natural_case(inline(label))


def _natural_case(label: str) -> str:
    """``Departure date`` reads ``departure date`` mid-sentence; ``EU VAT number`` and
    ``iPhone model`` keep their case (only a plain capitalised first word is lowered)."""
    first = label.split(" ", 1)[0]
    if len(first) > 1 and first[0].isupper() and not any(c.isupper() for c in first[1:]):
        return label[0].lower() + label[1:]
    return label


def step_progress(form: CompiledForm, step: CompiledStep, ev: Evaluation) -> str | None:
    """``answered/total required`` over the step's required fields that apply, counted as the
    engine counts them for completion (a live answer, or "no preference" where the field takes
    one); None when none applies (a step that does not apply, or one of optional fields)."""
    required = [f for f in step.fields if ev.fields[f].applies and not form.fields[f].optional]
    if not required:
        return None
    answered = sum(1 for f in required if f in ev.live or ev.fields[f].status == "no_preference")
    return f"{answered}/{len(required)} required"


def _invalid_lines(form: CompiledForm, fields: list[FieldEval]) -> list[str]:
    """One line per field of the open step holding an answer this version refuses."""
    lines = []
    for fe in fields:
        if fe.status == "invalid" and fe.revision is not None:
            field = form.fields[fe.id]
            why = inline(refusal(field, fe.revision) or "")
            shown = show(fe.revision.value)
            label = inline(field.label)
            lines.append(f"ask again: {label} (kept answer {shown} no longer fits: {why})")
    return lines
