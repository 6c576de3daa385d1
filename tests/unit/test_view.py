"""What the model reads: the tier-0 status line and the on-demand reads (step, outline, field).

Instances are built through ``FormService`` (in-memory store, in-process hooks, a ticking clock
and counted ids), then read both through ``form_read`` and through ``forms.surface.view`` directly.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from forms import (
    Caller,
    Checkpoint,
    FormDef,
    Step,
    compile_form,
    evaluate,
    field,
)
from forms.effects import Fail, Jump
from forms.examples.travel_claim import travel_claim
from forms.state import HookContext
from forms.surface.view import outline_view, show, status_line, step_view
from tests.support import Session, TickingClock, service_for

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
ALICE = Caller("alice", "conv-1")
LATER_TRAVEL = (
    "later: Travel (how they travelled, total) · Approval (cost centre, manager, receipts)"
)


# --------------------------------------------------------------------------- sample form


def over_limit(ctx: HookContext) -> Fail:
    return Fail(f"Passengers {ctx.values.count} is over the limit of 3: ask for a smaller number")


def back_to_who(ctx: HookContext) -> Jump:
    return Jump("who")


class Who(Step):
    title = "Who"
    preview = "who you are"

    name: str = field("Name", ask="first and last name")
    has_car: bool = field("Has a car")


class Car(Step):
    title = "Car"
    preview = "the car"
    when = staticmethod(lambda v: v.has_car is True)

    plate: str = field("Plate", ask="as printed on the plate")
    count: int | None = field("Passengers")


class WrapUp(Step):
    title = "Wrap-up"
    preview = "anything else"

    notes: str | None = field("Notes")
    recheck: bool | None = field("Recheck the basics")
    confirm: bool = field("Confirmed")


errand = FormDef(
    id="errand",
    version=1,
    title="Errand",
    steps=[Who, Car, WrapUp],
    checkpoints=[
        Checkpoint("too_many", when=lambda v: v.count is not None and v.count > 3, run=over_limit),
        Checkpoint("recheck", when=lambda v: v.recheck is True, run=back_to_who),
    ],
)


class Harness(Session):
    def __init__(self) -> None:
        super().__init__(service_for(errand, travel_claim, clock=TickingClock(T0)), ALICE)

    def start(self, form: str = "errand", **values: Any) -> str:
        result = self.ok("form_start", form=form, values=values or None)
        instance: str = result["instance"]
        return instance

    def fill(self, **values: Any) -> dict[str, Any]:
        return self.ok("form_fill", form="errand", values=values)

    def line(self, instance_id: str) -> str | None:
        """The status line of one instance, built from the stored instance."""
        instance = self.store.get(instance_id)
        form = compile_form(errand if instance.form_id == "errand" else travel_claim)
        return status_line(form, instance, evaluate(form, instance))


# --------------------------------------------------------------------------- status line


def test_status_line_shows_position_pending_labels_and_later_previews() -> None:
    # GIVEN a travel claim where the claimant step is done and one trip field is answered
    h = Harness()
    result = h.ok(
        "form_start",
        form="travel-claim",
        values={"full_name": "Ann Lee", "staff_id": "AB1234", "return_date": "2026-03-04"},
    )
    # THEN the line names the open step, its pending labels (not ids), and the later steps
    assert result["status_line"] == (
        '[form: travel-claim] step 2/4 "Trip" · pending: Destination, Departure date\n'
        + LATER_TRAVEL
    )
    # AND the system-prompt status says the same
    assert h.service.status(ALICE) == [result["status_line"]]


def test_status_line_on_a_fresh_form_lists_every_later_step() -> None:
    h = Harness()
    result = h.ok("form_start", form="travel-claim")
    assert result["status_line"] == (
        '[form: travel-claim] step 1/4 "Claimant" · pending: Full name, Staff ID\n'
        "later: Trip (destination and dates) · "
        "Travel (how they travelled, total) · Approval (cost centre, manager, receipts)"
    )


def test_status_line_lists_only_later_steps_that_apply() -> None:
    # GIVEN an errand where nothing says there is a car yet
    h = Harness()
    first = h.start()
    # THEN the gated Car step is neither counted nor previewed
    assert h.line(first) == (
        '[form: errand] step 1/2 "Who" · pending: Name, Has a car\nlater: Wrap-up (anything else)'
    )
    # WHEN the user says they have a car
    result = h.fill(has_car=True)
    # THEN the Car step joins the count and the later list
    assert result["status_line"] == (
        '[form: errand] step 1/3 "Who" · pending: Name\n'
        "later: Car (the car) · Wrap-up (anything else)"
    )


def test_status_line_drops_later_steps_already_complete_and_optional_fields() -> None:
    # GIVEN the wrap-up answered early (its other fields are optional)
    h = Harness()
    h.start(confirm=True, has_car=True)
    # THEN Wrap-up is not "later" any more; Passengers (optional) is never "pending"
    assert h.fill(name="Ann")["status_line"] == '[form: errand] step 2/3 "Car" · pending: Plate'


def test_status_line_has_no_later_line_on_the_last_open_step() -> None:
    h = Harness()
    h.start(name="Ann", has_car=False)
    assert h.service.status(ALICE) == ['[form: errand] step 2/2 "Wrap-up" · pending: Confirmed']


def test_active_rejection_is_shown_and_cleared_by_a_correction() -> None:
    # GIVEN a value over the checkpoint's limit
    h = Harness()
    h.start(name="Ann", has_car=True)
    result = h.fill(count=5)
    # THEN the rejection is a "! " line the agent must relay
    assert result["status_line"] == (
        '[form: errand] step 2/3 "Car" · pending: Plate\n'
        "later: Wrap-up (anything else)\n"
        "! Passengers 5 is over the limit of 3: ask for a smaller number"
    )
    # WHEN it is corrected / THEN the line goes away
    assert h.fill(count=2)["status_line"] == (
        '[form: errand] step 2/3 "Car" · pending: Plate\nlater: Wrap-up (anything else)'
    )


def test_all_answered_but_blocked_says_not_complete() -> None:
    # GIVEN every required field answered while a rejection is active
    h = Harness()
    h.start(name="Ann", has_car=True, plate="AB-12", count=9)
    result = h.fill(confirm=True)
    # THEN the form stays open and says why
    assert "closed" not in result
    assert result["status_line"] == (
        "[form: errand] all answered, not complete\n"
        "! Passengers 9 is over the limit of 3: ask for a smaller number"
    )


def test_revisit_says_go_through_the_step_again() -> None:
    # GIVEN the Who step complete, and a checkpoint that jumps back to it
    h = Harness()
    instance = h.start(name="Ann", has_car=False)
    # WHEN the jump fires
    result = h.fill(recheck=True)
    # THEN the line says so, with the answers to check again
    expected = (
        '[form: errand] back at step 1/2 "Who": go through it again · check: Name, Has a car\n'
        "later: Wrap-up (anything else)"
    )
    assert result["status_line"] == expected
    assert h.line(instance) == expected
    # AND the step reads as a revisit with its answers flagged ask_again
    read = h.ok("form_read", form="errand")
    assert read["step"] == "who"
    assert read["state"] == "revisit"
    assert [f["status"] for f in read["fields"]] == ["ask_again", "ask_again"]
    assert read["fields"][0]["ask"] == "first and last name"
    # WHEN the user corrects a value in that step / THEN the revisit is released
    assert h.fill(name="Ann Lee")["status_line"] == (
        '[form: errand] step 2/2 "Wrap-up" · pending: Confirmed'
    )


def test_confirming_an_unchanged_answer_releases_a_revisit() -> None:
    # GIVEN a revisit of the Who step
    h = Harness()
    h.start(name="Ann", has_car=False)
    h.fill(recheck=True)
    # WHEN the user confirms the name as it is, and the agent writes it back
    result = h.fill(name="Ann")
    # THEN that write into the step releases the revisit
    assert result["status_line"] == '[form: errand] step 2/2 "Wrap-up" · pending: Confirmed'


def test_closed_forms_have_no_status_line() -> None:
    # GIVEN one abandoned and one completed errand in the conversation
    h = Harness()
    abandoned = h.start()
    h.ok("form_abandon", form="errand", reason="user changed their mind")
    completed = h.start(name="Ann", has_car=False)
    result = h.ok("form_fill", form="errand", values={"confirm": True}, submit=True)
    # THEN neither has a line, anywhere
    assert result["closed"] == "completed"
    assert "status" not in result
    assert h.line(abandoned) is None
    assert h.line(completed) is None
    assert h.service.status(ALICE) == []
    read = h.ok("form_read", form="errand", instance=abandoned)
    assert read["closed"] == "abandoned"
    assert read["reason"] == "user changed their mind"
    assert "status" not in read


def test_two_open_instances_qualify_the_tag_with_the_instance_id() -> None:
    # GIVEN two open errands in one conversation
    h = Harness()
    first = h.start(name="Ann")
    second = h.start(name="Bob", has_car=False)
    # THEN each status line carries its instance id
    assert h.service.status(ALICE) == [
        f'[form: errand#{first}] step 1/2 "Who" · pending: Has a car\n'
        "later: Wrap-up (anything else)",
        f'[form: errand#{second}] step 2/2 "Wrap-up" · pending: Confirmed',
    ]
    # WHEN one is closed / THEN the other goes back to the plain tag
    h.ok("form_abandon", form="errand", instance=first, reason="duplicate")
    assert h.service.status(ALICE) == ['[form: errand] step 2/2 "Wrap-up" · pending: Confirmed']


def test_other_forms_do_not_qualify_the_tag() -> None:
    h = Harness()
    h.start()
    h.start("travel-claim")
    lines = h.service.status(ALICE)
    assert [line.split("]")[0] for line in lines] == ["[form: errand", "[form: travel-claim"]


def test_tool_results_qualify_the_tag_when_two_instances_are_open() -> None:
    # GIVEN two open errands
    h = Harness()
    h.start()
    second = h.start()
    # WHEN one is written to
    result = h.ok("form_fill", form="errand", instance=second, values={"name": "Bob"})
    # THEN the status line in the result says which one it is about
    assert result["status_line"].startswith(f"[form: errand#{second}]")


# --------------------------------------------------------------------------- reads


def test_outline_marks_steps_and_fields_that_do_not_apply() -> None:
    # GIVEN an errand without a car
    h = Harness()
    h.start(name="Ann", has_car=False)
    outline = h.ok("form_read", form="errand", part="outline")
    # THEN the Car step says it does not apply and its fields are not_applicable
    assert outline["note"] == "fields marked not_applicable may never be asked; don't promise them"
    states = {s["step"]: s["state"] for s in outline["steps"]}
    assert states == {
        "who": "complete",
        "car": "does not apply with the current answers",
        "wrap_up": "open",
    }
    car = outline["steps"][1]["fields"]
    assert car == [
        {"id": "plate", "label": "Plate", "status": "not_applicable"},
        {"id": "count", "label": "Passengers", "status": "not_applicable"},
    ]
    wrap = {f["id"]: f["status"] for f in outline["steps"][2]["fields"]}
    assert wrap == {"notes": "optional", "recheck": "optional", "confirm": "pending"}


def test_outline_gives_each_step_its_preview_and_required_progress() -> None:
    # GIVEN an errand with the name answered and nothing said about a car
    h = Harness()
    h.start(name="Ann")
    outline = h.ok("form_read", form="errand", part="outline")
    # THEN each step that applies says what it collects and how many of its required
    # fields are answered; the gated Car step keeps its text but has no progress
    summary = [
        (s["step"], s.get("preview"), s["state"], s.get("progress")) for s in outline["steps"]
    ]
    assert summary == [
        ("who", "who you are", "open", "1/2 required"),
        ("car", "the car", "does not apply with the current answers", None),
        ("wrap_up", "anything else", "open", "0/1 required"),
    ]
    # AND the keys come in reading order: what the step is, where it stands, then its rows
    assert list(outline["steps"][0]) == ["step", "title", "preview", "state", "progress", "fields"]
    # WHEN the car is confirmed and its plate given
    h.fill(has_car=True, plate="AB-12")
    outline = h.ok("form_read", form="errand", part="outline")
    # THEN Car counts only its required field (Passengers is optional)
    assert [s.get("progress") for s in outline["steps"]] == [
        "2/2 required",
        "1/1 required",
        "0/1 required",
    ]


def test_outline_progress_counts_only_required_fields_that_apply() -> None:
    # GIVEN a travel claim whose Travel step has a flight number for air, a distance for car
    h = Harness()
    h.start("travel-claim", mode="air")

    def travel() -> dict[str, Any]:
        outline = h.ok("form_read", form="travel-claim", part="outline")
        step: dict[str, Any] = outline["steps"][2]
        return step

    # THEN by air: mode, flight number and total are required, and mode is answered
    assert travel()["progress"] == "1/3 required"
    # WHEN the mode becomes rail / THEN the flight number drops out of the count
    h.ok("form_fill", form="travel-claim", values={"mode": "rail", "total": 80})
    assert travel()["progress"] == "2/2 required"
    assert travel()["state"] == "complete"


def test_outline_shows_held_answers_with_their_values() -> None:
    # GIVEN car answers, then a correction that makes the Car step not apply
    h = Harness()
    h.start(name="Ann", has_car=True, plate="AB-12")
    h.fill(has_car=False)
    outline = h.ok("form_read", form="errand", part="outline")
    # THEN the plate is held (kept, with its value), not lost
    assert outline["steps"][1]["fields"][0] == {
        "id": "plate",
        "label": "Plate",
        "status": "held",
        "value": "AB-12",
    }


def test_step_view_of_a_gated_step_says_it_does_not_apply() -> None:
    h = Harness()
    h.start(name="Ann", has_car=False)
    view = h.ok("form_read", form="errand", part="car")
    assert view["state"] == "does not apply with the current answers"
    assert "position" not in view
    assert [f["status"] for f in view["fields"]] == ["not_applicable", "not_applicable"]


def test_step_view_rows_carry_type_status_value_and_ask_guidance() -> None:
    h = Harness()
    h.start(name="Ann", has_car=True, count=2)
    view = h.ok("form_read", form="errand")
    assert view["summary"] == "Open step: Car."
    assert (view["step"], view["title"], view["position"], view["state"]) == (
        "car",
        "Car",
        "2/3",
        "open",
    )
    assert view["fields"] == [
        {
            "id": "plate",
            "label": "Plate",
            "type": "string",
            "status": "pending",
            "ask": "as printed on the plate",
        },
        {
            "id": "count",
            "label": "Passengers",
            "type": "integer (optional)",
            "status": "answered",
            "value": 2,
        },
    ]


def test_field_view_lists_revisions_oldest_first_marking_the_one_in_force() -> None:
    # GIVEN a name set, changed, then undone
    h = Harness()
    h.start(name="Ann")
    h.ok("form_revise", form="errand", field="name", action="set", value="Bob")
    h.ok("form_revise", form="errand", field="name", action="undo")
    view = h.ok("form_read", form="errand", part="Name")
    # THEN the log is oldest first and the first entry is in force again
    assert view["summary"] == "Field Name with its revisions."
    assert view["id"] == "name"
    assert view["step"] == "who"
    assert view["value"] == "Ann"
    assert [(r["n"], r["kind"], r.get("value"), r.get("in_force")) for r in view["revisions"]] == [
        (0, "value", "Ann", True),
        (1, "value", "Bob", None),
    ]
    assert view["revisions"][0]["by"] == "agent"
    assert view["revisions"][0]["at"] < view["revisions"][1]["at"]
    # AND undo/redo say where each move would go
    assert view["undo"] == "name back to no answer"
    assert view["redo"] == "name forward to Bob"


def test_field_view_shows_retractions_without_a_value() -> None:
    h = Harness()
    h.start(name="Ann")
    h.ok("form_revise", form="errand", field="name", action="retract")
    view = h.ok("form_read", form="errand", part="name")
    assert [(r["kind"], "value" in r, r.get("in_force")) for r in view["revisions"]] == [
        ("value", True, None),
        ("retraction", False, True),
    ]
    assert "value" not in view
    assert view["undo"] == "name back to Ann"


def test_field_view_keeps_the_field_status() -> None:
    # GIVEN an answered field
    h = Harness()
    h.start(name="Ann")
    view = h.ok("form_read", form="errand", part="name")
    # THEN its own status is readable in the field view (not replaced by the status line)
    assert view["status"] == "answered"


def test_undo_and_redo_are_one_line_each_at_view_level() -> None:
    # GIVEN two answers, the last one changed and then undone
    h = Harness()
    h.start(name="Ann", has_car=False)
    h.ok("form_revise", form="errand", field="has_car", action="set", value=True)
    h.ok("form_revise", form="errand", field="has_car", action="undo")
    outline = h.ok("form_read", form="errand", part="outline")
    step = h.ok("form_read", form="errand", part="who")
    for view in (outline, step):
        # THEN undo names the field changed last, redo what it could bring back
        assert view["undo"] == "has_car back to no answer"
        assert view["redo"] == "has_car forward to true"
    # AND no row carries its own undo/redo flag
    rows = [row for s in outline["steps"] for row in s["fields"]] + step["fields"]
    assert all(not {"undo", "redo", "can_undo", "can_redo"} & row.keys() for row in rows)


def test_no_undo_line_before_anything_is_written() -> None:
    h = Harness()
    h.start()
    view = h.ok("form_read", form="errand")
    assert "undo" not in view
    assert "redo" not in view


def test_views_directly_over_a_compiled_form() -> None:
    # GIVEN the stored instance and its evaluation
    h = Harness()
    instance_id = h.start(name="Ann", has_car=False)
    instance = h.store.get(instance_id)
    form = compile_form(errand)
    ev = evaluate(form, instance)
    # THEN the pure view functions agree with what the tools return
    assert step_view(form, instance, ev, "car")["state"] == (
        "does not apply with the current answers"
    )
    outline = outline_view(form, instance, ev)
    assert outline["form"] == "errand"
    assert outline["title"] == "Errand"
    assert outline["undo"] == "has_car back to no answer"


def test_show_shortens_long_values() -> None:
    assert show("short") == "short"
    assert show(True) == "true"
    assert show({"a": 1}) == '{"a": 1}'
    long = show("x" * 100)
    assert len(long) == 60
    assert long.endswith("…")
