"""The status line's shortcuts, made once per compiled form, against the per-call derivation.

``form_parts`` keeps, for each step, its place and title as the open step's line shows them
when every step applies (``StepParts.head``), and the ``later:`` line while every step after it
applies and is still to do (``StepParts.later``), when each step that line previews has fixed
words. The line takes them when the evaluation's step summary says so (two length checks), and
otherwise derives them on the call. Here the line made with them is the line made without them
(parts whose shortcuts never apply) for random step summaries, open steps and field statuses on
forms of many shapes: author previews, derived ones fixed or not, steps that apply on an answer.
"""

from __future__ import annotations

import dataclasses
import random

import pytest

from forms import FormDef, compile_form
from forms.compiled import CompiledForm
from forms.evaluation import Evaluation, FieldEval, StepSummary
from forms.examples.grant_application import grant_application
from forms.examples.travel_claim import travel_claim
from forms.statuses import FieldStatus
from forms.surface.status_line import FormParts, form_parts, status_line
from tests.support import service_for
from tests.unit.test_fixed_previews import ALICE, instance_after, shapes

STATUSES: tuple[FieldStatus, ...] = (
    "pending",
    "pending",
    "answered",
    "optional",
    "held",
    "ask_again",
    "no_preference",
)


def slow(parts: FormParts) -> FormParts:
    """``parts`` with neither shortcut: the place and the later line derived on every call."""
    steps = {s: dataclasses.replace(p, later=None, head="unused") for s, p in parts.steps.items()}
    by_index = tuple(steps[p.id] for p in parts.by_index)
    return dataclasses.replace(parts, steps=steps, by_index=by_index, count=-1)


def random_evaluation(form: CompiledForm, rng: random.Random) -> Evaluation:
    """What the status line reads of an evaluation, drawn at random: which steps apply and
    which of those are still to do, the open step among them, and each field's status."""
    n = len(form.step_order)
    applicable = tuple(i for i in range(n) if rng.random() < 0.85)
    if not applicable:
        applicable = (rng.randrange(n),)
    if rng.random() < 0.5:  # filled in order: every step from one on still to do
        unfinished = applicable[rng.randrange(len(applicable)) :]
    else:
        unfinished = tuple(i for i in applicable if rng.random() < 0.7)
    first = unfinished[0] if unfinished and rng.random() < 0.9 else rng.choice(applicable)
    if first not in unfinished and rng.random() < 0.5:
        unfinished = tuple(sorted((*unfinished, first)))
    open_step = form.step_order[first]
    fields = {f: FieldEval(f, rng.random() < 0.8, rng.choice(STATUSES), None) for f in form.fields}
    return Evaluation(  # the real type: the compiled build's line checks what it is handed
        fields=fields,
        live={},
        step_applies={},
        step_complete={},
        open_step=open_step,
        revisit=open_step if rng.random() < 0.1 else None,
        steps=StepSummary(applicable, unfinished),
        active_rejections=(),
        waiting=(),
        ready=False,
        hooks={},
        rising=(),
    )


@pytest.mark.parametrize("definition", [shapes, travel_claim, grant_application])
def test_the_line_made_with_the_shortcuts_is_the_line_derived_on_the_call(
    definition: FormDef,
) -> None:
    svc = service_for(definition)
    if definition is shapes:
        instance = instance_after(svc, "rail")
    else:
        svc.call(ALICE, "form_start", "call-start", {"form": definition.id})
        instance = svc.store.list_conversation(ALICE.principal, ALICE.conversation_id)[0]
    form = compile_form(definition)
    fast = form_parts(form)
    rng = random.Random(definition.id)
    heads = laters = 0
    for _ in range(600):
        ev = random_evaluation(form, rng)
        made = status_line(form, instance, ev)
        vars(form)["_status_line_parts"] = slow(fast)
        try:
            derived = status_line(form, instance, ev)
        finally:
            vars(form)["_status_line_parts"] = fast
        assert made == derived
        applicable, unfinished = ev.steps
        assert ev.open_step is not None  # drawn so
        part = fast.steps[ev.open_step]
        heads += len(applicable) == fast.count
        laters += part.later is not None and set(range(part.index + 1, fast.count)) <= {*unfinished}
    assert heads > 50 and laters > 5  # the shortcuts were taken, not only the derivations


def test_a_later_line_is_made_once_only_where_each_step_it_previews_has_fixed_words() -> None:
    parts = form_parts(compile_form(shapes))
    for part in parts.by_index:
        previewed = parts.by_index[part.index + 1 : part.index + 4]
        assert (part.later is not None) == (
            bool(previewed) and all(p.titled is not None for p in previewed)
        )
