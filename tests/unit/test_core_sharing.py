"""What a commit's readings share with the readings before it (issue 26 item 1): the steps'
readings are the core before's own until the pass changes one of them (copied then, and the
core before left as it was), and the instance the transition evaluated on is the one the
commit makes, not a copy. Either way the readings are those the from-scratch walk derives."""

from __future__ import annotations

from forms import compile_form
from forms.engine import evaluate, evaluate_from_scratch
from forms.examples.travel_claim import travel_claim
from forms.incremental import Core, core_for
from forms.instance import applied_unshared
from tests.unit.test_engine_sharing import fill, started


def steps_of(core: Core) -> tuple[dict[str, bool], dict[str, bool], dict[str, int]]:
    return core.step_applies, core.step_complete, core.missing


def test_a_corrected_answer_shares_the_steps_readings_of_the_core_before() -> None:
    # GIVEN a travel claim whose name is answered
    form = compile_form(travel_claim)
    before = started(form)
    core = core_for(form, before.history)
    # WHEN the name is corrected (no step's applicability or completeness changes)
    step = fill(form, before, {"full_name": "Ada King"})
    after = core_for(form, step.after.history)
    # THEN the new core holds the very step readings of the one before, and its own fields
    assert all(a is b for a, b in zip(steps_of(after), steps_of(core), strict=True))
    assert after.fields is not core.fields and after.live is not core.live
    assert core.live["full_name"] == "Ada Lovelace" and after.live["full_name"] == "Ada King"
    assert step.evaluation == evaluate_from_scratch(form, step.after, previous=before.state.hooks)


def test_a_first_answer_copies_the_steps_readings_and_leaves_the_core_before_as_it_was() -> None:
    # GIVEN a travel claim whose name is answered, and the step readings its core holds
    form = compile_form(travel_claim)
    before = started(form)
    core = core_for(form, before.history)
    held = [dict(readings) for readings in steps_of(core)]
    # WHEN the staff ID is answered (the first step completes: its missing count changes)
    step = fill(form, before, {"staff_id": "AB1234"})
    after = core_for(form, step.after.history)
    # THEN the new core has step readings of its own, and the core before's are unchanged
    assert all(a is not b for a, b in zip(steps_of(after), steps_of(core), strict=True))
    assert [dict(readings) for readings in steps_of(core)] == held
    assert after.step_complete["claimant"] and not core.step_complete["claimant"]
    assert evaluate(form, before) == evaluate_from_scratch(form, before)
    assert step.evaluation == evaluate_from_scratch(form, step.after, previous=before.state.hooks)


def test_the_commit_makes_the_instance_the_transition_evaluated_on() -> None:
    # GIVEN a travel claim whose name is answered
    form = compile_form(travel_claim)
    before = started(form)
    # WHEN a fill is planned
    step = fill(form, before, {"staff_id": "AB1234"})
    # THEN its instance holds the commit's state, and applying the commit to the instance it
    # was planned on gives that very instance (what a store seals), not a second one
    assert step.after.state is step.commit.state
    assert step.after.version == before.version + 1
    applied = applied_unshared(before, step.commit)
    assert applied is step.after
    assert evaluate(form, applied) == evaluate_from_scratch(form, applied)
