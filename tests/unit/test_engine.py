"""Engine semantics: ungated writes, held answers, statuses, completion, tool-call replays."""

from __future__ import annotations

from typing import Any

import pytest

from forms import Jump, compile_form
from forms.engine import evaluate, transition
from forms.instance import FieldChange, FormInstance
from forms.operations import RETRACT_HINT, plan_fill, plan_revise
from tests.unit.forms_for_tests import (
    ADULT,
    AGENT,
    FORM_ID,
    T0,
    Script,
    at,
    fill,
    filled,
    harness,
    new_instance,
    trip_form,
)

FORM = compile_form(trip_form())

# ------------------------------------------------------------------ writes are never gated


def test_one_fill_lands_answers_in_every_step() -> None:
    # GIVEN a new instance whose open step is the first one
    instance = new_instance(FORM)
    assert evaluate(FORM, instance).open_step == "person"
    # WHEN one fill carries answers for all three steps
    step = fill(FORM, instance, {"name": "Ann", "amount": 40, "consent": True})
    # THEN every answer is in force and live, whatever step is open
    assert {f: step.evaluation.fields[f].status for f in ("name", "amount", "consent")} == {
        "name": "answered",
        "amount": "answered",
        "consent": "answered",
    }
    assert step.evaluation.live == {"name": "Ann", "amount": 40, "consent": True}
    assert step.evaluation.open_step == "person"


def test_fill_through_the_service_reports_every_step_saved() -> None:
    # GIVEN a started form
    h = harness()
    h.start()
    # WHEN the agent saves answers of the last and first steps together
    result = h.fill(consent=True, name="Ann")
    # THEN both are saved in one call
    assert result["ok"] is True
    assert result["summary"].startswith("Saved 2 (consent, name)")
    assert h.ev().live == {"name": "Ann", "consent": True}


def test_each_value_is_validated_alone() -> None:
    # GIVEN a new instance
    instance = new_instance(FORM)
    # WHEN a fill mixes good values with a negative age and an unknown mode
    plan = plan_fill(
        FORM, instance, {"name": "Ann", "age": -1, "mode": "boat", "amount": 5}, AGENT, T0
    )
    # THEN the good values are staged and each bad one is rejected on its own
    assert plan.captured == ["name", "amount"]
    assert sorted(r.field for r in plan.rejected) == ["age", "mode"]


def test_a_bad_value_never_rejects_the_good_ones_through_the_service() -> None:
    # GIVEN a started form
    h = harness()
    h.start()
    # WHEN one fill carries a good name and a string for the integer age
    result = h.fill(name="Ann", age="thirty")
    # THEN the name is saved, the age rejected with its reason, and the call is still ok
    assert result["ok"] is True
    assert [r["field"] for r in result["rejected"]] == ["age"]
    assert h.ev().live == {"name": "Ann"}
    assert h.instance().field("age").revisions == ()


def test_a_fill_of_only_bad_values_is_not_ok_and_commits_nothing() -> None:
    # GIVEN a started form at some version
    h = harness()
    h.start()
    version = h.instance().version
    # WHEN every value is invalid
    result = h.fill(age=-3)
    # THEN the call is not ok and nothing is stored
    assert result["ok"] is False
    assert h.instance().version == version


@pytest.mark.parametrize("blank", ["", "   ", None])
def test_blank_values_are_rejected_with_the_retract_hint(blank: Any) -> None:
    # GIVEN an answered name
    instance = filled(FORM, {"name": "Ann"})
    # WHEN a blank is written over it
    plan = plan_fill(FORM, instance, {"name": blank}, AGENT, at(1))
    # THEN it is rejected, pointing at retract, and nothing is staged
    assert [(r.field, r.hint) for r in plan.rejected] == [("name", RETRACT_HINT)]
    assert plan.changes == {}


@pytest.mark.parametrize("blank", ["", None])
def test_blank_values_through_the_service_keep_the_answer(blank: Any) -> None:
    # GIVEN an answered name
    h = harness()
    h.start({"name": "Ann"})
    # WHEN the agent writes a blank to clear it
    result = h.fill(name=blank)
    # THEN it is refused with the retract hint and the answer stays
    assert result["ok"] is False
    assert "retract" in result["rejected"][0]["hint"]
    assert h.ev().live["name"] == "Ann"
    assert len(h.instance().field("name").revisions) == 1


def test_a_redundant_write_is_reported_unchanged_and_appends_nothing() -> None:
    # GIVEN an answered name
    h = harness()
    h.start({"name": "Ann"})
    before = h.instance()
    # WHEN the same value is written again
    result = h.fill(name="Ann")
    # THEN it is reported unchanged and nothing is committed
    assert result["ok"] is True
    assert result["unchanged"] == ["name"]
    after = h.instance()
    assert after.version == before.version
    assert after.field("name") == before.field("name")


def test_a_redundant_write_beside_a_new_one_appends_only_the_new_one() -> None:
    # GIVEN an answered name
    instance = filled(FORM, {"name": "Ann"})
    # WHEN the same name and a new age are written together
    plan = plan_fill(FORM, instance, {"name": "Ann", "age": 30}, AGENT, at(1))
    # THEN only the age is staged
    assert plan.unchanged == ["name"]
    assert list(plan.changes) == ["age"]


def test_a_value_equal_after_canonicalisation_is_unchanged() -> None:
    # GIVEN an answered age
    instance = filled(FORM, {"age": 30})
    # WHEN the same number is sent again (JSON int both times)
    plan = plan_fill(FORM, instance, {"age": 30}, AGENT, at(1))
    # THEN it is unchanged
    assert plan.unchanged == ["age"]


# ------------------------------------------------------------------ held answers


def test_a_correction_that_makes_a_field_not_apply_holds_its_answer() -> None:
    # GIVEN a minor with a guardian
    instance = filled(FORM, {"age": 15, "guardian": "Mum"})
    assert evaluate(FORM, instance).fields["guardian"].status == "answered"
    # WHEN the age is corrected to an adult's
    ev = fill(FORM, instance, {"age": 30}, at(1)).evaluation
    # THEN the guardian answer is held: kept, but not live
    assert ev.fields["guardian"].status == "held"
    assert ev.fields["guardian"].revision is not None
    assert ev.fields["guardian"].revision.value == "Mum"
    assert "guardian" not in ev.live


def test_held_answers_are_invisible_to_executors() -> None:
    # GIVEN a minor's guardian held by a correction to an adult age
    h = harness()
    h.start({"age": 15, "guardian": "Mum"})
    h.fill(age=30)
    # WHEN a later fill makes an executor run (the name's on_fill)
    h.fill(name="Ann")
    # THEN the executor sees neither the held value nor the held answer
    (run,) = h.script.runs_of("field.name.filled")
    assert run.values["guardian"] is None
    assert "guardian" not in run.answers
    assert run.answers == {"name": "Ann", "age": 30}


def test_correcting_back_brings_the_held_answer_back_without_a_new_revision() -> None:
    # GIVEN a guardian held by an adult age
    h = harness()
    h.start({"age": 15, "guardian": "Mum"})
    h.fill(age=30)
    assert h.status("guardian") == "held"
    log = h.instance().field("guardian")
    # WHEN the age is corrected back to a minor's
    result = h.fill(age=15)
    # THEN the guardian is live again with the same value and the same log
    assert "held" not in result
    assert h.status("guardian") == "answered"
    assert h.ev().live["guardian"] == "Mum"
    assert h.instance().field("guardian") == log


def test_an_answer_to_a_field_that_does_not_apply_yet_is_held_and_reported() -> None:
    # GIVEN a form with no mode yet
    h = harness()
    h.start()
    # WHEN a flight number arrives before the mode
    result = h.fill(flight="BA123")
    # THEN it is held and the result says so
    assert result["held"] == {"flight": "kept; used if it comes to apply with later answers"}
    assert h.status("flight") == "held"
    # AND once the mode makes it apply, it is live
    h.fill(mode="air")
    assert h.ev().live["flight"] == "BA123"


def test_held_answers_never_count_for_completion() -> None:
    # GIVEN every answer of the extra step, then a mode that makes the whole step not apply
    instance = filled(FORM, {**ADULT, "mode": "car", "notes": "n"})
    ev = evaluate(FORM, instance)
    # THEN its answers are held, the step is not complete, and nothing of it is live
    assert [ev.fields[f].status for f in ("guardian", "consent", "notes")] == [
        "not_applicable",
        "held",
        "held",
    ]
    assert ev.step_applies["extra"] is False
    assert ev.step_complete["extra"] is False
    assert instance.state.hooks["step.extra.complete"].holds is False
    assert "consent" not in ev.live


def test_a_held_value_does_not_satisfy_a_required_field_gated_on_elsewhere() -> None:
    # GIVEN a flight number held because the mode is rail, and the rest of a rail trip missing
    instance = filled(FORM, {"name": "Ann", "age": 30, "mode": "rail", "flight": "BA1"})
    # WHEN the amount is still missing
    ev = evaluate(FORM, instance)
    # THEN the trip step is not complete despite the held flight
    assert ev.fields["flight"].status == "held"
    assert ev.step_complete["trip"] is False
    assert ev.fields["amount"].status == "pending"


# ------------------------------------------------------------------ statuses


def test_every_status_but_ask_again_is_reachable_from_writes() -> None:
    # GIVEN a name, a rail mode, a held flight, a declined nickname, nothing else
    instance = filled(FORM, {"name": "Ann", "mode": "rail", "flight": "BA1"})
    plan = plan_revise(FORM, instance, "nickname", "decline", None, AGENT, at(1))
    instance = fill_changes(instance, plan.changes)
    # WHEN the instance is evaluated
    ev = evaluate(FORM, instance)
    # THEN each field has the status its situation calls for
    assert {f: e.status for f, e in ev.fields.items()} == {
        "name": "answered",
        "age": "pending",
        "nickname": "declined",
        "mode": "answered",
        "flight": "held",
        "amount": "pending",
        "guardian": "not_applicable",
        "consent": "pending",
        "notes": "optional",
    }


def test_a_declined_answer_that_stops_applying_is_held() -> None:
    # GIVEN a declined optional note
    instance = filled(FORM, {"mode": "rail"})
    instance = fill_changes(
        instance, plan_revise(FORM, instance, "notes", "decline", None, AGENT, at(1)).changes
    )
    # WHEN the mode makes its step not apply
    step = fill(FORM, instance, {"mode": "car"}, at(2))
    # THEN the decline is held, and it comes back as declined when the step applies again
    assert step.evaluation.fields["notes"].status == "held"
    back = fill(FORM, step.after, {"mode": "air"}, at(3)).evaluation
    assert back.fields["notes"].status == "declined"


def test_an_unanswered_gated_field_is_not_applicable_and_an_answered_one_answered() -> None:
    # GIVEN the air mode, then a flight number
    instance = filled(FORM, {"mode": "air"})
    assert evaluate(FORM, instance).fields["flight"].status == "pending"
    ev = fill(FORM, instance, {"flight": "BA1"}, at(1)).evaluation
    # THEN the flight is answered; with a rail mode and no answer it would not apply
    assert ev.fields["flight"].status == "answered"
    assert evaluate(FORM, filled(FORM, {"mode": "rail"})).fields["flight"].status == (
        "not_applicable"
    )


def test_ask_again_marks_answers_of_a_revisited_step() -> None:
    # GIVEN a completed person step and a checkpoint that jumps back to it
    script = Script(effects={"checkpoint.over_cap": Jump("person")})
    h = harness(script)
    h.start({"name": "Ann", "age": 30})
    # WHEN the checkpoint fires
    h.fill(amount=5000)
    # THEN the person step's answers ask again and its unanswered optional stays optional
    assert [h.status(f) for f in ("name", "age", "nickname")] == [
        "ask_again",
        "ask_again",
        "optional",
    ]


# ------------------------------------------------------------------ completion


def test_ready_when_every_applicable_required_field_is_answered() -> None:
    # GIVEN an adult going by rail with every required answer
    step = fill(FORM, new_instance(FORM), ADULT)
    # THEN the form is ready and the instance closes as completed
    assert step.evaluation.ready is True
    assert step.evaluation.open_step is None
    assert (step.after.state.status, step.after.state.closed_reason) == ("completed", "complete")
    assert step.after.state.hooks["form.complete"].count == 1


def test_not_ready_while_a_gated_required_field_applies_and_is_unanswered() -> None:
    # GIVEN the same answers for a minor
    ev = fill(FORM, new_instance(FORM), {**ADULT, "age": 15}).evaluation
    # THEN the guardian is pending and the form is not ready
    assert ev.fields["guardian"].status == "pending"
    assert ev.ready is False
    assert ev.open_step == "extra"


def test_a_step_that_does_not_apply_need_not_be_answered() -> None:
    # GIVEN a car trip: the extra step does not apply
    step = fill(FORM, new_instance(FORM), {"name": "Ann", "age": 30, "mode": "car", "amount": 9})
    # THEN the form is ready without consent
    assert step.evaluation.ready is True
    assert step.after.state.status == "completed"


def test_optional_fields_never_block_completion() -> None:
    # GIVEN every required answer and no optional one
    ev = fill(FORM, new_instance(FORM), ADULT).evaluation
    # THEN the optional fields are just optional
    assert ev.fields["nickname"].status == "optional"
    assert ev.fields["notes"].status == "optional"
    assert ev.ready is True


def test_a_completed_form_refuses_writes() -> None:
    # GIVEN a completed form
    h = harness()
    h.start(ADULT)
    assert h.instance().state.status == "completed"
    version = h.instance().version
    # WHEN the agent writes or revises
    fill_result = h.fill(nickname="A")
    revise_result = h.revise("name", "retract")
    # THEN both are refused as form_closed and nothing changes
    assert fill_result["error"] == "form_closed"
    assert revise_result["error"] == "form_closed"
    assert h.instance().version == version


def test_with_closes_on_complete_false_a_second_completion_is_a_second_occurrence() -> None:
    # GIVEN a form that stays open when complete, completed once
    h = harness(closes_on_complete=False)
    h.start()
    h.fill(**ADULT)
    assert h.instance().state.hooks["form.complete"].model_dump(exclude_none=True) == {
        "holds": True,
        "count": 1,
    }
    assert h.instance().state.status == "open"
    # WHEN a correction makes it incomplete, then complete again
    h.revise("amount", "retract")
    assert h.ev().ready is False
    assert h.instance().state.hooks["form.complete"].holds is False
    h.fill(amount=200)
    # THEN form.complete fires a second time under occurrence 2, with a new key
    runs = h.script.runs_of("form.complete")
    assert [(r.occurrence, r.key) for r in runs] == [
        (1, f"{h.instance_id}:form.complete:1"),
        (2, f"{h.instance_id}:form.complete:2"),
    ]
    assert h.instance().state.hooks["form.complete"].count == 2
    assert h.instance().state.status == "open"


def test_a_second_completion_without_executors_bumps_the_counter() -> None:
    # GIVEN a form without executors that stays open when complete
    h = harness(executors=False, closes_on_complete=False)
    h.start(ADULT)
    # WHEN a correction makes it incomplete and then complete again
    h.revise("consent", "retract")
    h.revise("consent", "undo")
    # THEN the form edge was crossed twice
    assert h.instance().state.hooks["form.complete"].model_dump(exclude_none=True) == {
        "holds": True,
        "count": 2,
    }


def test_a_change_that_keeps_a_complete_form_complete_fires_nothing_new() -> None:
    # GIVEN a complete form that stays open
    h = harness(closes_on_complete=False)
    h.start(ADULT)
    # WHEN an answer changes but the form stays complete
    result = h.fill(amount=300)
    # THEN no form.complete edge
    assert "fired" not in result
    assert h.instance().state.hooks["form.complete"].count == 1


# ------------------------------------------------------------------ tool-call idempotency


def test_a_replayed_call_returns_the_original_result_and_commits_nothing() -> None:
    # GIVEN a fill applied under some tool-call id (no dispatcher: the result is the commit's)
    h = harness(dispatch=False)
    h.start()
    payload = {"form": FORM_ID, "values": {"name": "Ann", "age": 30}}
    first = h.call("form_fill", payload, call_id="fill-1")
    before = h.instance()
    # WHEN the same call arrives again
    replay = h.call("form_fill", payload, call_id="fill-1")
    # THEN it returns the same result flagged as a replay, and nothing is committed
    assert replay == {**first, "replayed": True}
    assert h.instance().version == before.version
    assert h.instance() == before


def test_a_replay_after_hooks_ran_repeats_the_committed_result() -> None:
    # GIVEN a fill whose hooks ran in process
    h = harness()
    h.start()
    payload = {"form": FORM_ID, "values": {"name": "Ann", "age": 30}}
    first = h.call("form_fill", payload, call_id="fill-1")
    before = h.instance()
    # WHEN the same call arrives again
    replay = h.call("form_fill", payload, call_id="fill-1")
    # THEN the replay repeats what the call committed (the hook report is not re-run)
    assert replay["replayed"] is True
    assert {k: replay[k] for k in ("ok", "summary", "fired")} == {
        k: first[k] for k in ("ok", "summary", "fired")
    }
    assert h.instance() == before
    assert len(h.script.runs) == 2


def test_a_replayed_revise_is_not_applied_twice() -> None:
    # GIVEN a name set twice, then undone once under a given call id
    h = harness()
    h.start({"name": "Ann"})
    h.fill(name="Bob")
    payload = {"form": FORM_ID, "field": "name", "action": "undo"}
    h.call("form_revise", payload, call_id="undo-1")
    assert h.ev().live["name"] == "Ann"
    # WHEN the undo is replayed
    replay = h.call("form_revise", payload, call_id="undo-1")
    # THEN it is a replay: the cursor did not move again
    assert replay["replayed"] is True
    assert h.instance().field("name").cursor == 0


def test_a_replayed_start_returns_the_same_instance() -> None:
    # GIVEN a started form
    h = harness(dispatch=False)
    payload = {"form": FORM_ID, "values": {"name": "Ann"}}
    first = h.call("form_start", payload, call_id="start-1")
    # WHEN the start is replayed
    replay = h.call("form_start", payload, call_id="start-1")
    # THEN no second instance exists and the result is the first one
    assert replay == {**first, "replayed": True}
    assert len(h.store.list_conversation("alice", "conv-1")) == 1


@pytest.mark.parametrize(
    ("tool", "payload"),
    [
        ("form_fill", {"form": FORM_ID, "values": {"name": "Bob"}}),
        ("form_revise", {"form": FORM_ID, "field": "name", "action": "retract"}),
    ],
)
def test_the_same_call_id_with_different_input_is_a_conflict(
    tool: str, payload: dict[str, Any]
) -> None:
    # GIVEN a fill applied under some tool-call id
    h = harness()
    h.start()
    h.call("form_fill", {"form": FORM_ID, "values": {"name": "Ann"}}, call_id="c-1")
    before = h.instance()
    # WHEN the id is reused for different input
    result = h.call(tool, payload, call_id="c-1")
    # THEN it is refused as a conflict and nothing is committed
    assert result["ok"] is False
    assert result["error"] == "tool_call_conflict"
    assert h.instance() == before


# ------------------------------------------------------------------ helpers


def fill_changes(instance: FormInstance, changes: dict[str, FieldChange]) -> FormInstance:
    return transition(FORM, instance, changes, at(5)).after
