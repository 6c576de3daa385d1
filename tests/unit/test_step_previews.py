"""What the status line says a later step collects, and what the outline says of every step.

A step's preview is the author's text when there is one; otherwise it is derived, on every
call, from the labels of the fields that apply with the current answers, so it never promises
a field a rule has turned off.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from forms import (
    Caller,
    FormDef,
    FormService,
    Step,
    field,
)
from forms.examples.purchase_request import purchase_request
from forms.surface.view import preview_from_labels
from tests.support import service_for

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
ALICE = Caller("alice", "conv-1")


class Traveller(Step):
    title = "Traveller"

    name: str = field("Name")
    staff_id: str = field("Staff ID")


class Journey(Step):
    title = "Journey"

    mode: Literal["air", "rail", "car"] = field("Mode of travel")
    flight_number: str = field("Flight number", when=lambda v: v.mode == "air")
    total: int = field("Total (EUR)")


class SignOff(Step):
    title = "Sign-off"

    cost_centre: str = field("Cost centre")
    manager: str = field("Manager's email")
    receipts: bool = field("Receipts attached")
    notes: str | None = field("Notes")


class Lodging(Step):
    title = "Lodging"
    preview = "hotel and flight home"  # the author's text names a field a rule can turn off

    hotel: str = field("Hotel")
    flight_home: str = field("Flight home", when=lambda v: v.mode == "air")


SIGN_OFF = "Sign-off (cost centre, manager's email, receipts attached, …)"

journey = FormDef(id="journey", version=1, title="Journey", steps=[Traveller, Journey, SignOff])


class Seat(Step):
    title = "Seat"

    seat: Literal["aisle", "window"] = field("Seat", no_preference=True)
    meal: str = field("Meal")


class Remarks(Step):
    title = "Remarks"

    remarks: str | None = field("Remarks")


lodged = FormDef(
    id="lodged", version=1, title="Lodged", steps=[Traveller, Journey, Lodging, Seat, Remarks]
)


def service() -> FormService:
    return service_for(journey, lodged, purchase_request)


def start(svc: FormService, form: str, **values: Any) -> str:
    result = svc.call(ALICE, "form_start", "call-start", {"form": form, "values": values or None})
    assert result["ok"], result
    line: str = result["status_line"]
    return line


def test_a_step_without_author_text_is_previewed_from_its_field_labels() -> None:
    # GIVEN a form whose steps have no preview of their own
    # WHEN it starts
    line = start(service(), "journey")
    # THEN each later step is previewed by the labels of its fields that apply, lower-cased
    # where that reads naturally (acronyms kept), the first few only, "…" for the rest
    assert line == (
        '[form: journey] step 1/3 "Traveller" · pending: Name, Staff ID\n'
        "later: Journey (mode of travel, total (EUR)) · " + SIGN_OFF
    )


def test_a_derived_preview_follows_the_rules_as_answers_change() -> None:
    # GIVEN a journey whose flight number applies only to air travel
    svc = service()
    start(svc, "journey")
    # WHEN the user says early that they flew
    flew = svc.call(ALICE, "form_fill", "call-1", {"form": "journey", "values": {"mode": "air"}})
    # THEN the later Journey preview names the flight number
    assert flew["status_line"].splitlines()[1] == (
        "later: Journey (mode of travel, flight number, total (EUR)) · " + SIGN_OFF
    )
    # WHEN they correct it to rail
    rail = svc.call(ALICE, "form_fill", "call-2", {"form": "journey", "values": {"mode": "rail"}})
    # THEN the preview no longer promises a flight number
    assert rail["status_line"].splitlines()[1] == (
        "later: Journey (mode of travel, total (EUR)) · " + SIGN_OFF
    )


def test_author_text_wins_even_where_a_field_it_names_does_not_apply() -> None:
    # GIVEN a step whose author preview names a field that applies only to air travel
    # WHEN the user travels by rail
    line = start(service(), "lodged", mode="rail")
    # THEN the author's text is shown as written: the author owns it
    assert line.splitlines()[1] == (
        "later: Journey (mode of travel, total (EUR)) · Lodging (hotel and flight home) · "
        "Seat (seat, meal)"
    )


def test_the_purchase_review_preview_promises_no_approval_for_a_small_amount() -> None:
    # GIVEN a purchase under the approval threshold, answered up to its review step
    line = start(service(), "purchase-request", item="Desk lamp")
    # THEN the Review step's preview names what the agent collects there, and neither an
    # approval nor the approver's decision field (which only a finance approver writes)
    assert line.splitlines()[1] == "later: Review (budget line, requester confirms the details)"


def test_preview_from_labels_keeps_the_first_few_within_a_budget() -> None:
    # GIVEN labels that fit / THEN they are all shown, lower-cased where natural
    assert preview_from_labels(["Destination", "Departure date"]) == "destination, departure date"
    # GIVEN a label starting with an acronym or a mixed-case word / THEN it is kept as written
    assert preview_from_labels(["EU VAT number", "iPhone model"]) == "EU VAT number, iPhone model"
    # GIVEN more labels than the limit / THEN the first three and "…"
    assert preview_from_labels(["Name", "Email", "Phone", "Address"]) == "name, email, phone, …"
    # GIVEN labels too long to fit together / THEN as many as fit, and "…"
    assert preview_from_labels(
        ["Country the business is based in", "Annual revenue (GBP)", "Employees"]
    ) == ("country the business is based in, …")
    # GIVEN a single label over the budget / THEN it is cut, and marked
    long = preview_from_labels(["Describe " + "very " * 20 + "carefully"])
    assert long.startswith("describe very very") and long.endswith("…")
    assert len(long) <= 48
    # GIVEN nothing that applies / THEN no preview
    assert preview_from_labels([]) == ""


def test_the_outline_previews_every_step_and_counts_required_answers_that_apply() -> None:
    # GIVEN a lodged journey by rail: no flight number, no flight home
    svc = service()
    start(svc, "lodged", name="Ann", mode="rail")
    outline = svc.call(ALICE, "form_read", "read-1", {"form": "lodged", "part": "outline"})
    # THEN derived previews leave out what does not apply, author text stays as written,
    # and progress counts only required fields that apply
    summary = [(s["step"], s.get("preview"), s.get("progress")) for s in outline["steps"]]
    assert summary == [
        ("traveller", "name, staff ID", "1/2 required"),
        ("journey", "mode of travel, total (EUR)", "1/2 required"),
        ("lodging", "hotel and flight home", "0/1 required"),
        ("seat", "seat, meal", "0/2 required"),
        # AND a step with no required field has no progress to report
        ("remarks", "remarks", None),
    ]


def test_progress_counts_no_preference_as_an_answer_like_completion_does() -> None:
    # GIVEN a required seat that takes "no preference", and the user has none
    svc = service()
    start(svc, "lodged", meal="vegetarian")
    declined = svc.call(
        ALICE, "form_revise", "call-1", {"form": "lodged", "field": "seat", "action": "decline"}
    )
    assert declined["ok"], declined
    outline = svc.call(ALICE, "form_read", "read-1", {"form": "lodged", "part": "outline"})
    seat = outline["steps"][3]
    # THEN the step is complete and its progress agrees
    assert (seat["state"], seat["progress"]) == ("complete", "2/2 required")
