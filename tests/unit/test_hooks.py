"""Rising edges, the outbox, and what executors' effects do to an instance."""

from __future__ import annotations

import pytest

from forms import (
    Caller,
    Checkpoint,
    Complete,
    Fail,
    FormDef,
    FormService,
    Jump,
    Patch,
    Step,
    Terminate,
    compile_form,
    field,
)
from forms.app.hooks import MAX_ATTEMPTS
from forms.effect_plans import EffectError, as_effects, plan_effects
from forms.effects import Effect
from forms.engine import evaluate
from forms.instance import OutboxEntry
from forms.state import HookContext
from tests.support import service_for
from tests.unit.forms_for_tests import (
    ADULT,
    CAP,
    EXECUTOR_HOOKS,
    HOOK_IDS,
    T0,
    Harness,
    Script,
    at,
    fill,
    filled,
    harness,
    new_instance,
    trip_form,
)

OVER = CAP + 1


def started(
    script: Script | None = None, *, dispatch: bool = True, executors: bool = True
) -> Harness:
    h = harness(script, dispatch=dispatch, executors=executors)
    h.start()
    return h


def key(h: Harness, hook_id: str, occurrence: int) -> str:
    return f"{h.instance_id}:{hook_id}:{occurrence}"


# ------------------------------------------------------------------ rising edges


def test_on_fill_fires_once_on_the_first_fill() -> None:
    # GIVEN a started form
    h = started()
    # WHEN the name is filled
    result = h.fill(name="Ann")
    # THEN its on_fill runs once, as occurrence 1
    assert result["fired"] == [key(h, "field.name.filled", 1)]
    assert [(r.key, r.occurrence) for r in h.script.runs] == [(key(h, "field.name.filled", 1), 1)]


def test_on_fill_does_not_fire_on_a_change_of_value() -> None:
    # GIVEN a filled name
    h = started()
    h.fill(name="Ann")
    # WHEN it changes, and changes back through undo
    changed = h.fill(name="Bob")
    undone = h.revise("name", "undo")
    # THEN no new edge, no new run
    assert "fired" not in changed
    assert "fired" not in undone
    assert len(h.script.runs_of("field.name.filled")) == 1
    assert h.instance().state.hooks["field.name.filled"].count == 1


def test_on_fill_fires_again_after_retract_then_refill_under_a_new_key() -> None:
    # GIVEN a name filled then retracted
    h = started()
    h.fill(name="Ann")
    h.revise("name", "retract")
    assert h.instance().state.hooks["field.name.filled"].holds is False
    # WHEN it is filled again
    result = h.fill(name="Ann")
    # THEN a second occurrence fires, with its own key
    assert result["fired"] == [key(h, "field.name.filled", 2)]
    runs = h.script.runs_of("field.name.filled")
    assert [r.occurrence for r in runs] == [1, 2]
    assert runs[0].key != runs[1].key


def test_undo_of_a_retraction_is_a_new_rising_edge() -> None:
    # GIVEN a name filled then retracted
    h = started()
    h.fill(name="Ann")
    h.revise("name", "retract")
    # WHEN the retraction is undone
    result = h.revise("name", "undo")
    # THEN the field has a live answer again: occurrence 2
    assert result["fired"] == [key(h, "field.name.filled", 2)]


def test_one_commit_rises_field_then_step_then_checkpoint_then_form() -> None:
    # GIVEN a form without executors (nothing to wait for before completing)
    form = compile_form(trip_form())
    # WHEN one fill crosses every kind of edge at once
    step = fill(form, new_instance(form), {**ADULT, "amount": OVER})
    # THEN the edges come in the fixed order, definition order within each kind
    assert [hook.id for hook in step.evaluation.rising] == [
        "field.name.filled",
        "field.age.filled",
        "field.mode.filled",
        "field.amount.filled",
        "field.consent.filled",
        "step.person.complete",
        "step.trip.complete",
        "step.extra.complete",
        "checkpoint.over_cap",
        "form.complete",
        "form.closed",  # completing closes the instance in the same commit
    ]


def test_outbox_entries_of_one_commit_come_in_edge_order() -> None:
    # GIVEN a started form whose hooks are not dispatched
    h = started(dispatch=False)
    # WHEN one fill crosses field, step and checkpoint edges
    result = h.fill(**{**ADULT, "amount": OVER})
    # THEN the entries come field, step, checkpoint; definition order within each
    expected = [
        "field.name.filled",
        "field.mode.filled",
        "step.person.complete",
        "step.trip.complete",
        "step.extra.complete",
        "checkpoint.over_cap",
    ]
    assert result["fired"] == [key(h, hook, 1) for hook in expected]
    assert [e.hook_id for e in h.instance().state.outbox.values()] == expected


def test_in_process_dispatch_runs_executors_in_edge_order() -> None:
    # GIVEN a started form with in-process dispatch
    h = started()
    # WHEN one fill crosses every kind of edge
    h.fill(**{**ADULT, "amount": OVER})
    # THEN the executors ran in the same order
    assert h.script.hooks_run() == [
        "field.name.filled",
        "field.mode.filled",
        "step.person.complete",
        "step.trip.complete",
        "step.extra.complete",
        "checkpoint.over_cap",
        "form.complete",
    ]


def test_counters_bump_without_executors() -> None:
    # GIVEN a form with no executors at all
    h = started(executors=False)
    # WHEN the name is filled, changed, retracted and filled again, and the rest completed
    h.fill(name="Ann")
    h.fill(name="Bob")
    h.revise("name", "retract")
    h.fill(name="Ann")
    h.fill(**{k: v for k, v in ADULT.items() if k != "name"} | {"amount": OVER})
    # THEN every edge was counted, and nothing went to the outbox
    hooks = h.instance().state.hooks
    assert hooks["field.name.filled"].count == 2
    assert hooks["field.age.filled"].count == 1
    assert hooks["step.person.complete"].count == 1
    assert hooks["checkpoint.over_cap"].count == 1
    assert hooks["form.complete"].count == 1
    assert hooks["form.closed"].count == 1
    assert hooks["field.flight.filled"].count == 0
    assert h.instance().state.outbox == {}
    assert set(hooks) == set(HOOK_IDS)


def test_a_held_answer_coming_back_live_is_a_rising_edge() -> None:
    # GIVEN a flight held under a rail mode, after having been live under air
    instance = filled(compile_form(trip_form()), {"mode": "air", "flight": "BA1"})
    form = compile_form(trip_form())
    instance = fill(form, instance, {"mode": "rail"}, at(1)).after
    assert instance.state.hooks["field.flight.filled"].model_dump(exclude_none=True) == {
        "holds": False,
        "count": 1,
    }
    # WHEN the mode goes back to air
    after = fill(form, instance, {"mode": "air"}, at(2)).after
    # THEN the flight's edge rises again
    assert after.state.hooks["field.flight.filled"].model_dump(exclude_none=True) == {
        "holds": True,
        "count": 2,
    }


def test_keys_are_instance_hook_occurrence() -> None:
    # GIVEN a form whose hooks have all fired
    h = started()
    h.fill(**{**ADULT, "amount": OVER})
    # THEN every outbox key is {instance_id}:{hook_id}:{occurrence}
    outbox = h.instance().state.outbox
    assert set(outbox) == {key(h, hook, 1) for hook in EXECUTOR_HOOKS}
    for k, entry in outbox.items():
        assert k == entry.key == f"{h.instance_id}:{entry.hook_id}:{entry.occurrence}"


def test_the_outbox_entry_is_written_in_the_same_commit_as_the_answer() -> None:
    # GIVEN a started form with no dispatcher
    h = started(dispatch=False)
    version = h.instance().version
    # WHEN the name is filled
    h.fill(name="Ann")
    # THEN one commit holds both the answer and the pending outbox entry
    instance = h.instance()
    assert instance.version == version + 1
    assert instance.field("name").in_force() is not None
    entry = instance.state.outbox[key(h, "field.name.filled", 1)]
    assert (entry.status, entry.attempts) == ("pending", 0)
    assert entry.created_at == instance.field("name").revisions[0].at


def test_transition_puts_answer_and_outbox_entry_in_one_commit() -> None:
    # GIVEN the pure engine
    form = compile_form(trip_form(Script()))
    # WHEN a name is filled
    step = fill(form, new_instance(form), {"name": "Ann"})
    # THEN the commit carries the field change and the entry, and dispatch names it
    expected = "fi_1:field.name.filled:1"
    assert "name" in step.commit.fields
    assert list(step.commit.state.outbox) == [expected]
    assert [e.key for e in step.dispatch] == [expected]


def test_evaluate_on_a_stored_instance_reports_nothing_rising() -> None:
    # GIVEN an instance after a fill that crossed edges
    form = compile_form(trip_form(Script()))
    instance = filled(form, {"name": "Ann", "age": 30})
    # WHEN it is evaluated against its own stored hook state
    ev = evaluate(form, instance)
    # THEN nothing rises and the hook state is the stored one
    assert ev.rising == ()
    assert ev.hooks == instance.state.hooks


def test_executors_get_typed_values_state_and_key() -> None:
    # GIVEN a step executor that records what it sees
    seen: list[HookContext] = []
    script = Script(effects={"step.person.complete": seen.append})
    h = started(script)
    # WHEN the person step completes
    h.fill(name="Ann", age=30)
    # THEN the context carries values, state, key and identity
    (ctx,) = seen
    assert ctx.values.age == 30
    assert ctx.state.step_complete("person") is True
    assert ctx.state.fired("over_cap") is False
    assert ctx.key == key(h, "step.person.complete", 1)
    assert (ctx.instance_id, ctx.form_id, ctx.principal, ctx.conversation_id) == (
        h.instance_id,
        "trip",
        "alice",
        "conv-1",
    )


# ------------------------------------------------------------------ effects: patch


def test_patch_is_written_as_executor_revisions_keyed_by_the_occurrence() -> None:
    # GIVEN a checkpoint that stamps a note
    h = started(Script(effects={"checkpoint.over_cap": Patch({"notes": "over cap"})}))
    # WHEN the checkpoint fires
    h.fill(amount=OVER)
    # THEN the note is an executor revision whose actor is the key
    (revision,) = h.instance().field("notes").revisions
    assert revision.value == "over cap"
    assert (revision.by, revision.actor, revision.tool_call_id) == (
        "executor",
        key(h, "checkpoint.over_cap", 1),
        None,
    )
    assert h.instance().state.outbox[key(h, "checkpoint.over_cap", 1)].status == "done"


def test_an_invalid_patch_fails_the_entry_and_applies_nothing() -> None:
    # GIVEN a checkpoint that patches a negative age and a good note
    h = started(Script(effects={"checkpoint.over_cap": Patch({"notes": "x", "age": -1})}))
    # WHEN it fires
    h.fill(amount=OVER)
    # THEN the entry failed with the reason and the note was not written either
    entry = h.instance().state.outbox[key(h, "checkpoint.over_cap", 1)]
    assert entry.status == "failed"
    assert entry.error is not None
    assert "age" in entry.error
    assert h.instance().field("notes").revisions == ()


def test_a_patch_that_fills_a_field_fires_that_fields_edge() -> None:
    # GIVEN a step executor that stamps the name
    h = started(Script(effects={"step.trip.complete": Patch({"name": "Stamped"})}))
    # WHEN the trip step completes
    h.fill(mode="rail", amount=5)
    # THEN the patched name's on_fill ran as a consequence
    assert h.script.hooks_run()[-1] == "field.name.filled"
    assert h.ev().live["name"] == "Stamped"


# ------------------------------------------------------------------ effects: jump


def test_jump_forward_focuses_a_later_step_until_it_is_complete() -> None:
    # GIVEN a name executor that jumps to the extra step
    h = started(Script(effects={"field.name.filled": Jump("extra")}))
    # WHEN the name is filled
    result = h.fill(name="Ann")
    # THEN the conversation goes to the extra step although person is not complete
    assert h.ev().open_step == "extra"
    assert result["status_line"].startswith('[form: trip] step 3/3 "Extra" · pending: Consent')
    assert h.read()["step"] == "extra"
    # AND the focus is released once that step is complete
    h.fill(consent=True)
    assert h.ev().open_step == "person"
    assert h.instance().state.override is None


def test_jump_back_to_a_complete_step_is_a_revisit() -> None:
    # GIVEN a complete person step and a checkpoint that jumps back to it
    h = started(Script(effects={"checkpoint.over_cap": Jump("person")}))
    h.fill(name="Ann", age=30)
    # WHEN the checkpoint fires
    result = h.fill(mode="rail", amount=OVER)
    # THEN the person step reopens: answers ask again, the status line says so
    ev = h.ev()
    assert ev.revisit == "person"
    assert ev.open_step == "person"
    assert ev.step_complete["person"] is True
    assert [ev.fields[f].status for f in ("name", "age")] == ["ask_again", "ask_again"]
    assert result["status_line"].startswith(
        '[form: trip] back at step 1/3 "Person": go through it again · check: Name, Age'
    )
    assert h.read()["state"] == "revisit"


def test_a_revisit_holds_through_writes_elsewhere_and_is_released_by_one_into_the_step() -> None:
    # GIVEN a revisited person step
    h = started(Script(effects={"checkpoint.over_cap": Jump("person")}))
    h.fill(name="Ann", age=30)
    h.fill(mode="rail", amount=OVER)
    # WHEN the agent writes into another step
    h.fill(notes="n")
    # THEN the revisit holds
    assert h.ev().revisit == "person"
    # WHEN the agent writes into the revisited step
    h.fill(nickname="Annie")
    # THEN it is released and the answers are plain answers again
    ev = h.ev()
    assert ev.revisit is None
    assert ev.fields["name"].status == "answered"
    assert ev.open_step == "extra"
    assert "back at step" not in h.status_line()


def test_a_revisit_is_released_by_a_revise_into_the_step() -> None:
    # GIVEN a revisited person step
    h = started(Script(effects={"checkpoint.over_cap": Jump("person")}))
    h.fill(name="Ann", age=30)
    h.fill(mode="rail", amount=OVER)
    # WHEN the agent sets one of its fields to a new value
    h.revise("age", "set", 31)
    # THEN the revisit is released
    assert h.ev().revisit is None


def test_resending_an_answer_into_a_revisited_step_confirms_it_and_releases_it() -> None:
    # GIVEN a revisited person step
    h = started(Script(effects={"checkpoint.over_cap": Jump("person")}))
    h.fill(name="Ann", age=30)
    h.fill(mode="rail", amount=OVER)
    log = h.instance().field("name")
    # WHEN the agent re-sends an answer that is already in force
    result = h.fill(name="Ann")
    # THEN nothing is appended, but the write into the step releases the revisit
    assert result["unchanged"] == ["name"]
    assert h.instance().field("name") == log
    assert h.ev().revisit is None


def test_a_jump_to_an_unknown_step_fails_the_entry() -> None:
    # GIVEN a checkpoint that jumps nowhere
    h = started(Script(effects={"checkpoint.over_cap": Jump("nowhere")}))
    # WHEN it fires
    h.fill(amount=OVER)
    # THEN the entry failed and nothing moved
    entry = h.instance().state.outbox[key(h, "checkpoint.over_cap", 1)]
    assert entry.status == "failed"
    assert h.instance().state.override is None


def test_a_jump_back_on_an_otherwise_complete_form_reopens_the_step() -> None:
    # GIVEN a checkpoint that sends the conversation back to the person step
    h = started(Script(effects={"checkpoint.over_cap": Jump("person")}))
    # WHEN the last answers arrive, crossing the cap, in one fill
    result = h.fill(**{**ADULT, "amount": OVER})
    # THEN the form stays open, back at the person step
    assert h.instance().state.status == "open"
    assert result["status_line"].startswith('[form: trip] back at step 1/3 "Person"')


# ------------------------------------------------------------------ effects: fail


def test_fail_records_a_rejection_that_blocks_completion_while_its_hook_holds() -> None:
    # GIVEN a checkpoint that rejects amounts over the cap
    h = started(Script(effects={"checkpoint.over_cap": Fail("over the cap")}))
    # WHEN an amount over the cap arrives before the rest
    h.fill(amount=OVER)
    # THEN the rejection is active and shown
    ev = h.ev()
    assert [r.message for r in ev.active_rejections] == ["over the cap"]
    assert "! over the cap" in h.status_line()
    # AND with every other answer given, the form is still not complete
    result = h.fill(**{k: v for k, v in ADULT.items() if k != "amount"})
    ev = h.ev()
    assert ev.open_step is None
    assert ev.ready is False
    assert h.instance().state.status == "open"
    assert h.instance().state.hooks["form.complete"].count == 0
    assert result["status_line"].startswith("[form: trip] all answered, not complete")


def test_a_correction_clears_the_rejection_and_the_form_completes() -> None:
    # GIVEN an otherwise complete form blocked by a rejection
    h = started(Script(effects={"checkpoint.over_cap": Fail("over the cap")}))
    h.fill(amount=OVER)
    h.fill(**{k: v for k, v in ADULT.items() if k != "amount"})
    # WHEN the amount is corrected under the cap
    result = h.fill(amount=CAP)
    # THEN the rejection is no longer active and the form completes
    assert h.ev().active_rejections == ()
    assert result["closed"] == "completed"
    assert h.instance().state.status == "completed"


def test_a_fail_on_the_completing_commit_keeps_the_form_from_completing() -> None:
    # GIVEN a checkpoint that rejects amounts over the cap
    h = started(Script(effects={"checkpoint.over_cap": Fail("over the cap")}))
    # WHEN every answer arrives in one fill, the amount over the cap
    h.fill(**{**ADULT, "amount": OVER})
    # THEN the rejection holds the form open
    assert h.instance().state.status == "open"
    assert [r.message for r in h.ev().active_rejections] == ["over the cap"]


def test_a_cleared_rejection_stays_cleared_on_the_next_crossing() -> None:
    # GIVEN a checkpoint that rejects every crossing of the cap, cleared once by a correction
    h = started(Script(effects={"checkpoint.over_cap": Fail("over the cap")}))
    h.fill(amount=OVER)
    h.fill(amount=5)
    assert h.ev().active_rejections == ()
    # WHEN the amount crosses the cap again
    h.fill(amount=OVER + 1)
    # THEN exactly one rejection is active: the new occurrence's
    assert [r.key for r in h.ev().active_rejections] == [key(h, "checkpoint.over_cap", 2)]


def test_a_cleared_rejection_does_not_come_back_when_the_executor_no_longer_fails() -> None:
    # GIVEN a checkpoint that fails only its first occurrence, cleared by a correction
    script = Script()
    script.effects["checkpoint.over_cap"] = lambda ctx: (
        Fail("over the cap") if ctx.occurrence == 1 else None
    )
    h = started(script)
    h.fill(amount=OVER)
    h.fill(amount=5)
    # WHEN the amount crosses the cap again and the executor lets it through
    h.fill(amount=OVER)
    # THEN no rejection is active
    assert h.ev().active_rejections == ()
    assert h.ev().ready is False  # other answers are missing; the point is the rejection


def test_the_form_waits_for_pending_executors_before_completing() -> None:
    # GIVEN a form with no dispatcher: executors run later, by a worker
    h = started(dispatch=False)
    # WHEN every answer arrives in one fill
    h.fill(**ADULT)
    # THEN the form is not complete while its executors are pending
    ev = h.ev()
    assert ev.ready is False
    assert set(ev.waiting) == {
        "field.name.filled",
        "field.mode.filled",
        "step.person.complete",
        "step.trip.complete",
        "step.extra.complete",
    }
    assert h.instance().state.status == "open"
    # AND once a worker has run them all, the last run completes it
    for k, entry in list(h.instance().state.outbox.items()):
        if entry.status == "pending":
            h.service.run_hook(h.instance_id, k)
    assert h.instance().state.status == "completed"
    assert h.instance().state.hooks["form.complete"].count == 1


def test_a_checkpoint_whose_executor_failed_keeps_the_form_from_completing() -> None:
    # GIVEN a checkpoint executor that always raises
    h = started(Script(failures={"checkpoint.over_cap": 99}))
    # WHEN every answer arrives, over the cap
    h.fill(**{**ADULT, "amount": OVER})
    # THEN the failed checkpoint keeps the form open
    assert h.ev().waiting == ("checkpoint.over_cap",)
    assert h.instance().state.status == "open"
    # AND the status line says it failed and what happens next, not that it is running
    line = h.status_line()
    assert "(running)" not in line
    assert "failed on our side; an operator has to retry it" in line


def test_a_failed_checkpoint_stops_blocking_once_its_condition_no_longer_holds() -> None:
    # GIVEN a failed checkpoint holding an otherwise complete form open
    h = started(Script(failures={"checkpoint.over_cap": 99}))
    h.fill(**{**ADULT, "amount": OVER})
    # WHEN the amount is corrected under the cap
    h.fill(amount=10)
    # THEN nothing is left to wait for and the form completes
    assert h.ev().waiting == ()
    assert h.instance().state.status == "completed"


# ------------------------------------------------------------------ effects: complete, terminate


def test_complete_closes_the_instance_whatever_is_pending() -> None:
    # GIVEN a person step executor that completes the form
    h = started(Script(effects={"step.person.complete": Complete()}))
    # WHEN the person step completes
    result = h.fill(name="Ann", age=30)
    # THEN the instance is completed although trip and extra are pending
    instance = h.instance()
    assert (instance.state.status, instance.state.closed_reason) == (
        "completed",
        "completed by step.person.complete",
    )
    assert result["closed"] == "completed"


@pytest.mark.parametrize(
    "effects",
    [[Complete(), Terminate("duplicate")], [Terminate("duplicate"), Complete()]],
)
def test_terminate_beats_complete_in_the_same_commit(effects: list[Effect]) -> None:
    # GIVEN a checkpoint returning both complete and terminate
    h = started(Script(effects={"checkpoint.over_cap": effects}))
    # WHEN it fires
    result = h.fill(amount=OVER)
    # THEN the instance is terminated with the reason
    state = h.instance().state
    assert (state.status, state.closed_reason) == ("terminated", "duplicate")
    assert (result["closed"], result["reason"]) == ("terminated", "duplicate")


def test_a_terminated_form_refuses_writes_and_stops_asking() -> None:
    # GIVEN a terminated form
    h = started(Script(effects={"checkpoint.over_cap": Terminate("ineligible")}))
    h.fill(amount=OVER)
    version = h.instance().version
    # WHEN the agent writes
    result = h.fill(name="Ann")
    # THEN the write is refused as form_closed, and the form is off the status lines
    assert result["error"] == "form_closed"
    assert "ineligible" in result["message"]
    assert h.instance().version == version
    assert h.service.status(h.caller) == []
    assert h.read()["closed"] == "terminated"


def test_terminate_beats_a_completion_landing_on_the_same_commit() -> None:
    # GIVEN a checkpoint that terminates over the cap
    h = started(Script(effects={"checkpoint.over_cap": Terminate("ineligible")}))
    # WHEN the last answers complete the form and cross the cap in one fill
    h.fill(**{**ADULT, "amount": OVER})
    # THEN termination wins
    assert h.instance().state.status == "terminated"


def test_effects_on_a_closed_form_are_ignored_and_reported() -> None:
    # GIVEN two step executors rising together: the first completes the form, the second jumps
    h = started(
        Script(effects={"step.person.complete": Complete(), "step.trip.complete": Jump("extra")})
    )
    # WHEN both steps complete in one fill
    h.fill(name="Ann", age=30, mode="rail", amount=5)
    # THEN the form is completed, the jump was not applied, and the entry says why
    state = h.instance().state
    assert state.status == "completed"
    assert state.override is None
    entry = state.outbox[key(h, "step.trip.complete", 1)]
    assert (entry.status, entry.error) == ("done", "ignored on a closed form: jump")


def test_a_patch_still_stamps_a_completed_form() -> None:
    # GIVEN a form executor that stamps a reference
    h = started(Script(effects={"form.complete": Patch({"notes": "REF-1"})}))
    # WHEN the form completes
    h.fill(**ADULT)
    # THEN it is closed as completed and carries the stamp
    assert h.instance().state.status == "completed"
    assert h.ev().live["notes"] == "REF-1"


# ------------------------------------------------------------------ exactly once per key


def test_effects_apply_once_even_if_run_hook_is_called_again() -> None:
    # GIVEN a checkpoint that stamps a note, already run
    h = started(Script(effects={"checkpoint.over_cap": Patch({"notes": "over"})}))
    h.fill(amount=OVER)
    before = h.instance()
    k = key(h, "checkpoint.over_cap", 1)
    runs = len(h.script.runs)
    # WHEN the same key is run again
    added = h.service.run_hook(h.instance_id, k)
    # THEN nothing is run, committed or appended
    assert added == ()
    assert len(h.script.runs) == runs
    assert h.instance() == before
    assert len(h.instance().field("notes").revisions) == 1


def test_a_pending_entry_run_twice_applies_its_effects_once() -> None:
    # GIVEN a pending entry (no dispatcher) whose executor stamps a note
    h = started(Script(effects={"checkpoint.over_cap": Patch({"notes": "over"})}), dispatch=False)
    h.fill(amount=OVER)
    k = key(h, "checkpoint.over_cap", 1)
    # WHEN a worker runs it, and a duplicate delivery runs it again
    h.service.run_hook(h.instance_id, k)
    h.service.run_hook(h.instance_id, k)
    # THEN the note was written once and the entry is done after one attempt
    assert len(h.instance().field("notes").revisions) == 1
    entry = h.instance().state.outbox[k]
    assert (entry.status, entry.attempts) == ("done", 1)


def test_run_hook_for_an_unknown_key_does_nothing() -> None:
    h = started()
    before = h.instance()
    assert h.service.run_hook(h.instance_id, f"{h.instance_id}:nope:1") == ()
    assert h.service.run_hook("fi_missing", "fi_missing:form.complete:1") == ()
    assert h.instance() == before


def test_a_raising_executor_is_retried_then_recorded_as_failed() -> None:
    # GIVEN a checkpoint executor that always raises
    h = started(Script(failures={"checkpoint.over_cap": 99}))
    # WHEN it fires
    result = h.fill(amount=OVER)
    # THEN it was tried MAX_ATTEMPTS times, then recorded as failed with the error
    k = key(h, "checkpoint.over_cap", 1)
    assert len(h.script.runs_of("checkpoint.over_cap")) == MAX_ATTEMPTS
    entry = h.instance().state.outbox[k]
    assert (entry.status, entry.attempts) == ("failed", MAX_ATTEMPTS)
    assert entry.error == "RuntimeError: checkpoint.over_cap is down"
    assert entry.finished_at is not None
    assert result["hooks"] == [{"key": k, "status": "failed", "error": entry.error}]
    # AND the answer that caused it is stored all the same
    assert h.ev().live["amount"] == OVER


def test_a_raising_executor_that_recovers_applies_its_effects_once() -> None:
    # GIVEN a checkpoint executor that raises once, then stamps a note
    h = started(
        Script(
            effects={"checkpoint.over_cap": Patch({"notes": "over"})},
            failures={"checkpoint.over_cap": 1},
        )
    )
    # WHEN it fires
    h.fill(amount=OVER)
    # THEN it ran twice, the note was written once, and the entry is done
    k = key(h, "checkpoint.over_cap", 1)
    assert [r.key for r in h.script.runs_of("checkpoint.over_cap")] == [k, k]
    assert len(h.instance().field("notes").revisions) == 1
    entry = h.instance().state.outbox[k]
    assert (entry.status, entry.attempts, entry.error) == ("done", 2, None)


def test_a_raising_executor_without_dispatcher_stays_pending_with_the_error() -> None:
    # GIVEN a pending entry whose executor raises
    h = started(Script(failures={"checkpoint.over_cap": 99}), dispatch=False)
    h.fill(amount=OVER)
    k = key(h, "checkpoint.over_cap", 1)
    # WHEN a worker runs it once
    h.service.run_hook(h.instance_id, k)
    # THEN the entry is still pending, with one attempt and the error visible
    entry = h.instance().state.outbox[k]
    assert (entry.status, entry.attempts) == ("pending", 1)
    assert entry.error == "RuntimeError: checkpoint.over_cap is down"


def test_an_executor_returning_a_non_effect_fails_its_entry_at_once() -> None:
    # GIVEN an executor that returns a string
    h = started(Script(effects={"checkpoint.over_cap": "jump please"}))
    # WHEN it fires
    h.fill(amount=OVER)
    # THEN the entry failed on the first attempt
    entry = h.instance().state.outbox[key(h, "checkpoint.over_cap", 1)]
    assert (entry.status, entry.attempts) == ("failed", 1)
    assert len(h.script.runs_of("checkpoint.over_cap")) == 1


# ------------------------------------------------------------------ plan_effects (pure)


def test_plan_effects_marks_the_entry_done_and_applies_in_order() -> None:
    # GIVEN an instance with a pending checkpoint entry
    form = compile_form(trip_form(Script()))
    instance = filled(form, {"name": "Ann", "age": 30, "amount": OVER})
    entry = instance.state.outbox["fi_1:checkpoint.over_cap:1"]
    ev = evaluate(form, instance)
    # WHEN a patch, a fail and a jump are planned
    plan = plan_effects(
        form,
        instance,
        entry,
        (Patch({"notes": "n"}), Fail("no"), Jump("person")),
        ev.open_step,
        ev.step_complete,
        at(9),
    )
    # THEN one plan carries them all and the entry is done
    assert list(plan.changes) == ["notes"]
    assert [r.message for r in plan.state.rejections] == ["no"]
    assert plan.state.override is not None
    assert (plan.state.override.step, plan.state.override.kind) == ("person", "revisit")
    assert plan.state.outbox[entry.key].status == "done"
    assert plan.ignored == ()


def test_as_effects_normalises_and_refuses_non_effects() -> None:
    assert as_effects(None) == ()
    assert as_effects(Complete()) == (Complete(),)
    assert as_effects([Fail("a"), Complete()]) == (Fail("a"), Complete())
    with pytest.raises(EffectError):
        as_effects({"jump": "trip"})


def test_outbox_entries_start_pending() -> None:
    entry = OutboxEntry(key="k", hook_id="h", occurrence=1, created_at=T0)
    assert (entry.status, entry.attempts, entry.error) == ("pending", 0, None)


class Order(Step):
    title = "Order"
    amount: int = field("Amount")
    confirmed: bool = field("Confirmed")


def _closing_service(seen: list[tuple[str, str | None, str]]) -> FormService:
    def closing(ctx: HookContext) -> None:
        seen.append((ctx.status, ctx.closed_reason, ctx.key))

    definition = FormDef(
        id="closing",
        version=1,
        title="Closing",
        steps=[Order],
        checkpoints=[
            Checkpoint(
                "too_big",
                when=lambda v: v.amount is not None and v.amount > 100_000,
                run=lambda ctx: Terminate("over the limit"),
            )
        ],
        on_close=closing,
    )
    return service_for(definition)


def test_on_close_runs_once_for_every_way_of_closing() -> None:
    # GIVEN a form whose on_close records what it saw
    seen: list[tuple[str, str | None, str]] = []
    service = _closing_service(seen)
    alice = Caller("alice", "c1")
    # WHEN one instance completes, one is terminated by an effect, one is abandoned
    service.call(alice, "form_start", "s1", {"form": "closing", "values": {"amount": 10}})
    service.call(
        alice, "form_fill", "f1", {"form": "closing", "values": {"confirmed": True}, "submit": True}
    )
    service.call(alice, "form_start", "s2", {"form": "closing", "values": {"amount": 200_000}})
    service.call(alice, "form_start", "s3", {"form": "closing", "values": {"amount": 5}})
    service.call(
        alice, "form_abandon", "a3", {"form": "closing", "instance": "fi_3", "reason": "no"}
    )
    # THEN on_close ran once for each, under occurrence 1, seeing why it closed
    assert seen == [
        ("completed", "submitted", "fi_1:form.closed:1"),
        ("terminated", "over the limit", "fi_2:form.closed:1"),
        ("abandoned", "no", "fi_3:form.closed:1"),
    ]


def test_fired_in_a_checkpoints_own_executor_means_fired_before_this_occurrence() -> None:
    # GIVEN a checkpoint whose executor records what fired() says about itself
    seen: list[bool] = []

    class Only(Step):
        title = "Only"
        amount: int = field("Amount")

    def router(ctx: HookContext) -> None:
        seen.append(ctx.state.fired("big"))

    form = FormDef(
        id="router",
        version=1,
        title="Router",
        steps=[Only],
        checkpoints=[Checkpoint("big", when=lambda v: (v.amount or 0) > 10, run=router)],
        closes_on_complete=False,
    )
    svc = service_for(form)
    caller = Caller("alice", "c")
    svc.call(caller, "form_start", "s", {"form": "router"})
    # WHEN it crosses, uncrosses and crosses again
    for n, amount in enumerate([50, 5, 60]):
        svc.call(caller, "form_fill", f"f{n}", {"form": "router", "values": {"amount": amount}})
    # THEN its first run saw "not fired before", the second "fired before"
    assert seen == [False, True]
