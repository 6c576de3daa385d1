"""The status line (tier 0): one or two lines per open instance, for the system prompt on every
turn, rebuilt on every call from the compiled form and the instance.

Pending labels rather than a count (so the agent knows what to ask without a tool call), and a
one-line preview of the next few later steps (``LATER_STEPS``, so it can capture an answer it
hears early), then how many more there are. Its length does not grow with the number of steps.
A closed instance drops out. An answer memory filled is marked as such (``from memory,
unconfirmed``) until the user confirms it, and a value memory only offers is shown for the
agent to ask about, never as an answer. The reads (tier 1) are ``forms.surface.view``; they
show a step's position, progress and preview in the same words.
"""

from __future__ import annotations

import json
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

from forms.compiled import CompiledForm, CompiledStep, keep_on
from forms.evaluation import Evaluation, FieldEval, refusal
from forms.instance import FormInstance, stopped
from forms.surface.plain import clipped, inline
from forms.surface.previews import cased, cased_preview, fixed_preview
from forms.surface.recalled import memory_lines

_MAX_SHOWN = 60
_OPERATOR = "an operator has to fix the form"


def show(value: Any) -> str:
    """A short, unambiguous rendering of a stored JSON value, on one line (``clipped``)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return clipped(text, _MAX_SHOWN)


def form_tag(instance: FormInstance, qualify: bool) -> str:
    return inline(f"{instance.form_id}#{instance.id}" if qualify else instance.form_id)


@dataclass(frozen=True, slots=True)
class StepParts:
    """What the status line shows of a step that the definition alone decides."""

    id: str
    index: int
    title: str
    """The author's title as written (``_titled`` memoises by it)."""
    quoted: str
    """The title as the open step's line quotes it: ``"Trip"``."""
    rows: tuple[tuple[str, str | None], ...]
    """Each field, in order: its id and its label as the line names it (``_brief``), None
    for a field the agent is never asked (not ``offered``)."""
    offered: tuple[tuple[str, str], ...]
    """Each field the agent is asked (``offered``), in order: its id and its label as the
    line names it (``_brief``)."""
    cased: tuple[tuple[str, str], ...]
    """The same fields with their labels as a derived preview shows them (``cased``)."""
    fixed: str | None
    """The preview derived from the labels when no answer can change it while the step applies
    (``fixed_preview``); None: the author wrote one, or it depends on the answers."""
    titled: str | None
    """The step as the ``later:`` line shows it when no answer can change it: its author wrote
    the preview, or the labels its preview is derived from are of fields that apply whenever
    the step does (``fixed_preview``). None: derived on each call from the labels of the
    fields that apply."""
    head: str
    """The open step's place and title when every step applies: `` step 2/4 "Trip"``."""
    ahead: int
    """How many steps follow it."""
    rest: int
    """How many steps there are from it on (itself and those after it)."""
    later: str | None
    """A line break and the ``later:`` line, while every step after it applies and is still
    to do, when each one it previews is ``titled``; None: made on each call (or there is no
    step after it)."""


@dataclass(frozen=True, slots=True)
class FormParts:
    """The status line's parts a compiled form decides alone, made once per form: its id,
    the tag, and each step's (``StepParts``), by id and by position."""

    id: str
    """The form's id (a slot: the compiled form's own attribute costs several times more)."""
    tag: str
    steps: Mapping[str, StepParts]
    by_index: tuple[StepParts, ...]
    count: int
    """How many steps the form has."""


_PARTS = "_status_line_parts"


def form_parts(form: CompiledForm) -> FormParts:
    """``form``'s parts, made on the first call and kept on the form (as a cached property
    keeps its value: the compiled form is immutable, and a new version is a new object)."""
    try:
        parts: FormParts = form._status_line_parts  # type: ignore[attr-defined]
    except AttributeError:  # (read as a plain attribute: cheaper than ``getattr`` by name)
        parts = keep_on(form, _PARTS, _parts_of(form))
    return parts


def _parts_of(form: CompiledForm) -> FormParts:
    steps: dict[str, StepParts] = {}
    count = len(form.steps)
    made = []
    for step in form.steps.values():
        fields = [form.fields[f] for f in step.fields]
        offered = [f for f in fields if f.offered]
        fixed = None if step.preview else fixed_preview(offered)
        made.append((step, fields, offered, fixed, _fixed_titled(step, fixed)))
    titles = [titled for *_, titled in made]
    for step, fields, offered, fixed, titled in made:
        index = form.step_index[step.id]
        quoted = f'"{_brief(step.title)}"'
        steps[step.id] = StepParts(
            id=step.id,
            index=index,
            title=step.title,
            quoted=quoted,
            rows=tuple((f.id, _brief(f.label) if f.offered else None) for f in fields),
            offered=tuple((f.id, _brief(f.label)) for f in offered),
            cased=tuple((f.id, cased(f.label)) for f in offered),
            fixed=fixed,
            titled=titled,
            head=f" step {index + 1}/{count} {quoted}",
            ahead=count - index - 1,
            rest=count - index,
            later=_fixed_later(titles, index + 1),
        )
    by_index = tuple(steps[s] for s in form.step_order)
    return FormParts(form.id, f"[form: {inline(form.id)}]", steps, by_index, count)


def _fixed_later(titles: list[str | None], start: int) -> str | None:
    """``StepParts.later``: the ``later:`` line over the steps from position ``start`` on
    (``titles``: each step as ``titled``), when they all apply and are still to do; None when
    there is none, or one it previews is not ``titled``."""
    shown = titles[start : start + LATER_STEPS]
    if not shown or None in shown:
        return None
    return _later_text(cast(list[str], shown), len(titles) - start - LATER_STEPS)


def _fixed_titled(step: CompiledStep, fixed: str | None) -> str | None:
    """``StepParts.titled``: the step as the ``later:`` line shows it when no answer can change
    it (its author's preview, or a derived one that is fixed: ``StepParts.fixed``)."""
    preview = inline(step.preview) if step.preview else fixed
    return None if preview is None else _titled(step.title, preview)


def status_line(
    form: CompiledForm, instance: FormInstance, ev: Evaluation, qualify: bool = False
) -> str | None:
    """The tier-0 line(s) for one instance, or None when it is closed: the open step's line
    (its pending labels, or what to check again on a revisit), a line per answer this version
    refuses, the ``later:`` line, then the rare lines (``_rare_lines``); one text."""
    values = instance.__dict__  # a pydantic attribute costs several dict reads
    state = values["state"].__dict__
    if state["status"] != "open":
        return None
    try:  # form_parts, without its call
        parts: FormParts = form._status_line_parts  # type: ignore[attr-defined]
    except AttributeError:
        parts = form_parts(form)
    if qualify or values["form_id"] != parts.id:
        tag = f"[form: {form_tag(instance, qualify)}]"
    else:
        tag = parts.tag
    open_step = ev.open_step
    if open_step is None:
        text = _no_step_text(tag, ev.ready)
    else:  # the open step's lines, here rather than in a function of their own: a call less
        shown = parts.steps[open_step]
        applicable, unfinished = ev.steps  # the step summary's two position tuples
        # its place k/N: made once, for when every step applies
        head = shown.head if len(applicable) == parts.count else _place(shown, applicable)
        readings = ev.fields
        # the later: line is made once (``StepParts.later``) for when the open step is the
        # first step still to do and every step after it is too, as nearly always (sorted
        # distinct positions: the first and the count tell it); derived otherwise
        later = shown.later
        if later is None or len(unfinished) != shown.rest or unfinished[0] != shown.index:
            later = _later_line(parts, shown, readings, unfinished) if shown.ahead else ""
        if ev.revisit == shown.id:
            text = _revisit_text(shown, readings, f"{tag} back at{head}") + later
        else:
            pending: list[str] = []
            refused = False
            for f, label in shown.rows:  # one pass: the pending labels, and any refused answer
                status = readings[f].status
                if status == "pending":
                    if label is not None:
                        pending.append(label)
                elif status == "invalid":
                    refused = True
            if refused:  # rare: a line per answer this version refuses, before the later: line
                text = _refused_text(form, readings, shown, tag + head, pending) + later
            elif pending:  # _listed, without its call when every label is named
                listed = _listed(pending) if len(pending) > LABELS_SHOWN else ", ".join(pending)
                text = f"{tag}{head} · pending: {listed}{later}"
            else:
                text = f"{tag}{head}{later}"
    # each of these is rare on a write: asked for only when there is something to say
    if state["recalled"] or state["page_edits"] or ev.waiting or ev.active_rejections:
        return "\n".join([text, *_rare_lines(form, instance, ev)])
    return text


def _no_step_text(tag: str, ready: bool) -> str:
    """The line of a form with no step open: every answer is in."""
    if ready:
        return f"{tag} complete (still open for corrections); submit it once the user confirms"
    return f"{tag} all answered, not complete"


def _place(shown: StepParts, applicable: tuple[int, ...]) -> str:
    """The open step's place ``k/N`` among the steps that apply, and its title."""
    k = bisect_left(applicable, shown.index)
    assert k < len(applicable) and applicable[k] == shown.index, "the open step applies"
    return f" step {k + 1}/{len(applicable)} {shown.quoted}"


def _refused_text(
    form: CompiledForm,
    readings: Mapping[str, FieldEval],
    shown: StepParts,
    head: str,
    pending: list[str],
) -> str:
    """The open step's first line (``head``, its pending labels) and a line per answer of
    it this version refuses."""
    text = f"{head} · pending: {_listed(pending)}" if pending else head
    return "\n".join([text, *_invalid_lines(form, readings, shown.rows)])


def _rare_lines(form: CompiledForm, instance: FormInstance, ev: Evaluation) -> list[str]:
    """The status line's lines after the step's: memory's, the page edits', what the form
    waits for, and the active rejections."""
    state = instance.state
    lines: list[str] = []
    if state.recalled:
        lines.extend(memory_lines(form, instance, ev))
    if state.page_edits:
        lines.append(page_line(form, instance))
    if ev.waiting:
        waiting = _waiting_line(form, instance, ev)
        if waiting:
            lines.append(waiting)
    if ev.active_rejections:
        lines.extend(f"! {inline(r.message)}" for r in ev.active_rejections)
    return lines


def _waiting_line(form: CompiledForm, instance: FormInstance, ev: Evaluation) -> str | None:
    """What the form waits for (an approval, or a hook still running, failed or stopped)."""
    waits: list[str] = []
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
    if not waits:
        return None
    return "waiting: " + " · ".join(waits) + "; the form cannot complete until then"


def _revisit_text(shown: StepParts, readings: Mapping[str, FieldEval], head: str) -> str:
    """The open step's first line on a revisit: what to go through again, and what to check."""
    recheck = [label for f, label in shown.offered if readings[f].status == "ask_again"]
    text = f"{head}: go through it again"
    return f"{text} · check: {_listed(recheck)}" if recheck else text


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


def _later_line(
    parts: FormParts,
    open_step: StepParts,
    readings: Mapping[str, FieldEval],
    unfinished: tuple[int, ...],
) -> str:
    """A line break and the line ``later: A (preview) · B (preview) · C (preview) · +N more
    steps`` over the steps that apply and are not complete after ``open_step`` (``unfinished``:
    their positions); "" when there is none. Only the first ``LATER_STEPS`` are previewed (a
    preview is the costly part); the rest are counted, from the evaluation's step summary: the
    line costs the same however many steps follow."""
    at = bisect_right(unfinished, open_step.index)
    if at == len(unfinished):
        return ""
    shown = []
    for i in unfinished[at : at + LATER_STEPS]:
        step = parts.by_index[i]
        if step.titled is not None:  # the same words whatever the answers (made once)
            shown.append(step.titled)
        else:
            labels = (label for f, label in step.cased if readings[f].applies)
            shown.append(_titled(step.title, cased_preview(labels)))
    return _later_text(shown, len(unfinished) - at - LATER_STEPS)


def _later_text(shown: list[str], more: int) -> str:
    """A line break and the ``later:`` line of the steps ``shown`` and ``more`` after them."""
    if more > 0:
        shown.append(f"+{more} more step{'' if more == 1 else 's'}")
    return "\nlater: " + " · ".join(shown)


@lru_cache(maxsize=4_096)
def _titled(title: str, preview: str) -> str:
    return f"{_brief(title)} ({clipped(preview, STATUS_TEXT_CHARS)})" if preview else _brief(title)


def _invalid_lines(
    form: CompiledForm, readings: Mapping[str, FieldEval], rows: Iterable[tuple[str, str | None]]
) -> list[str]:
    """One line per field of the open step (``rows``) holding an answer this version refuses."""
    lines = []
    for f, _ in rows:
        fe = readings[f]
        if fe.status == "invalid" and fe.revision is not None:
            field = form.fields[fe.id]
            why = inline(refusal(field, fe.revision) or "")
            shown = show(fe.revision.value)
            label = inline(field.label)
            lines.append(f"ask again: {label} (kept answer {shown} no longer fits: {why})")
    return lines
