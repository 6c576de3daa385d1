"""A later step's derived preview, made once per compiled form where no answer can change it.

The status line derives the preview of a step without author text from the labels of its
fields that apply. When every label that derivation reads is of a field with no condition of
its own (such a field applies whenever its step does, and a step the line previews applies),
the words are fixed: ``form_parts`` makes them once (``fixed_preview``), for the ``later:``
line and for the outline (while the step applies). Here, for each shape
(a condition early, one just past the three labels shown, one past the length budget, a long
first label), the words made once are those the per-call derivation gives for every answer,
including a step's that does not apply (none).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

import pytest

from forms import Caller, FormDef, FormService, Step, compile_form, evaluate, field
from forms.compiled import CompiledForm
from forms.surface.status_line import _titled, form_parts
from forms.surface.view import preview_from_labels
from tests.support import service_for

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
ALICE = Caller("alice", "conv-1")


class Start(Step):
    title = "Start"

    mode: Literal["air", "rail"] = field("Mode of travel")


class Plain(Step):
    title = "Plain"

    a: str = field("Alpha")
    b: str = field("Beta")
    c: str = field("Gamma")
    d: str = field("Delta")


class GatedEarly(Step):
    title = "Gated early"

    e: str = field("Echo")
    flight: str = field("Flight number", when=lambda v: v.mode == "air")
    f: str = field("Foxtrot")


class GatedFourth(Step):
    title = "Gated fourth"

    g: str = field("Golf")
    h: str = field("Hotel")
    i: str = field("India")
    seat: str = field("Seat", when=lambda v: v.mode == "air")


class GatedPastBudget(Step):
    title = "Gated past the budget"

    j: str = field("Country the business is based in")
    k: str = field("Annual revenue (GBP)")
    meal: str = field("Meal", when=lambda v: v.mode == "air")


class LongFirst(Step):
    title = "Long first"

    long: str = field("Describe " + "very " * 20 + "carefully")
    lounge: str = field("Lounge", when=lambda v: v.mode == "air")


class AirOnly(Step):
    title = "Air only"
    when = staticmethod(lambda v: v.mode == "air")  # a step that applies on one answer only

    terminal: str = field("Terminal")


class GatedOnly(Step):
    title = "Gated only"

    bag: str = field("Bag", when=lambda v: v.mode == "air")


shapes = FormDef(
    id="shapes",
    version=1,
    title="Shapes",
    steps=[Start, Plain, GatedEarly, GatedFourth, GatedPastBudget, LongFirst, AirOnly, GatedOnly],
)

FIXED = {"start", "plain", "gated_past_budget", "long_first", "air_only"}
"""The steps whose derived preview no answer can change (``shapes``' step ids)."""


def derived(form: CompiledForm, step_id: str, applies: dict[str, bool]) -> str:
    """The ``later:`` entry as derived on a call: from the labels of the fields that apply."""
    step = form.steps[step_id]
    labels = [form.fields[f].label for f in step.fields if applies[f] and form.fields[f].offered]
    return _titled(step.title, preview_from_labels(labels))


def instance_after(svc: FormService, mode: str) -> Any:
    result = svc.call(
        ALICE, "form_start", "call-start", {"form": "shapes", "values": {"mode": mode}}
    )
    assert result["ok"], result
    return svc.store.list_conversation(ALICE.principal, ALICE.conversation_id)[0]


def test_only_previews_no_answer_can_change_are_made_once() -> None:
    parts = form_parts(compile_form(shapes))
    assert {s for s, p in parts.steps.items() if p.titled is not None} == FIXED


@pytest.mark.parametrize("mode", ["air", "rail"])
def test_a_preview_made_once_is_the_one_derived_on_every_call(mode: str) -> None:
    # GIVEN the form started with either answer to the gating question
    svc = service_for(shapes)
    instance = instance_after(svc, mode)
    form = compile_form(shapes)
    ev = evaluate(form, instance)
    applies = {f: fe.applies for f, fe in ev.fields.items()}
    # THEN every preview made once reads as the per-call derivation does on a step that
    # applies (the only steps the later line previews)
    for step_id, part in form_parts(form).steps.items():
        if part.titled is not None and ev.step_applies[step_id]:
            assert part.titled == derived(form, step_id, applies)
    # AND the status line's later line previews the next steps as derived
    line = svc.call(ALICE, "form_read", "read-1", {"form": "shapes"})["status_line"]
    after, more = ev.steps.later(form.step_index["plain"], 3)
    later = [derived(form, form.step_order[i], applies) for i in after]
    assert line.splitlines()[1] == "later: " + " · ".join(later) + f" · +{more} more step" + (
        "s" if more > 1 else ""
    )


@pytest.mark.parametrize("mode", ["air", "rail"])
def test_the_outline_shows_the_derived_previews_for_every_answer(mode: str) -> None:
    # GIVEN the form started with either answer to the gating question
    svc = service_for(shapes)
    form = compile_form(shapes)
    ev = evaluate(form, instance_after(svc, mode))
    # WHEN the agent reads the outline
    outline = svc.call(ALICE, "form_read", "read-1", {"form": "shapes", "part": "outline"})
    # THEN each step's preview is the one derived from its labels that apply (none for a step
    # that does not apply), whether made once or on the call
    for entry in outline["steps"]:
        step = form.steps[entry["step"]]
        labels = [
            form.fields[f].label
            for f in step.fields
            if ev.fields[f].applies and form.fields[f].offered
        ]
        assert entry.get("preview", "") == preview_from_labels(labels), entry["step"]
