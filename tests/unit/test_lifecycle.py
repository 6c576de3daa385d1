"""Declines beside values, "no preference" answers, and submitting: complete is a state, and a
form closes when the agent submits it after the user confirms (or an effect closes it)."""

from __future__ import annotations

from datetime import date
from typing import Any

from forms import (
    Caller,
    FormDef,
    FormService,
    Step,
    field,
)
from tests.support import service_for

ALICE = Caller("alice", "conv-1")
ran: list[str] = []


class Trip(Step, title="Trip", preview="where and when"):
    destination: str = field("Destination")
    depart: date = field("Departure date", no_preference=True)
    seat: str | None = field("Seat preference")


def booking(**kwargs: Any) -> FormDef:
    return FormDef(
        id="booking",
        version=1,
        title="Booking",
        steps=[Trip],
        on_complete=lambda ctx: ran.append(ctx.key),
        **kwargs,
    )


def service(**kwargs: Any) -> FormService:
    ran.clear()
    return service_for(booking(**kwargs))


def call(svc: FormService, tool: str, call_id: str, **payload: Any) -> dict[str, Any]:
    return svc.call(ALICE, tool, call_id, {"form": "booking", **payload})


def instance(svc: FormService) -> Any:
    (only,) = svc.store.list_conversation("alice", "conv-1")
    return only


def test_a_start_carries_declines_and_a_no_preference_answer_completes_a_required_field() -> None:
    # GIVEN a user who front-loads everything: the destination, any date, no seat preference
    svc = service()
    started = call(
        svc, "form_start", "s", values={"destination": "Oslo"}, decline=["depart", "seat"]
    )
    # THEN both declines are recorded, and "any date" counts as the required date's answer
    assert started["ok"] is True
    assert "declined 2 (depart, seat)" in started["summary"]
    read = call(svc, "form_read", "r", part="trip")
    statuses = {f["id"]: f["status"] for f in read["fields"]}
    assert statuses == {"destination": "answered", "depart": "no_preference", "seat": "declined"}
    assert "complete (still open for corrections)" in started["status_line"]


def test_a_fill_carries_declines_beside_values_each_judged_alone() -> None:
    svc = service()
    call(svc, "form_start", "s")
    result = call(
        svc, "form_fill", "f", values={"destination": "Oslo"}, decline=["seat", "destination"]
    )
    # THEN the seat is declined, and declining the destination (required, no "no preference")
    # is refused on its own while the value beside it lands
    assert instance(svc).field("seat").in_force().kind == "decline"
    assert instance(svc).field("destination").in_force().value == "Oslo"
    assert [r["field"] for r in result["rejected"]] == ["destination"]


def test_a_required_field_without_no_preference_cannot_be_declined() -> None:
    svc = service()
    call(svc, "form_start", "s")
    result = call(svc, "form_fill", "f", decline=["destination"])
    assert result["ok"] is False
    assert "cannot be declined" in result["rejected"][0]["error"]
    revise = call(svc, "form_revise", "r", field="destination", action="decline")
    assert revise["error"] == "cannot_revise"


def test_a_complete_form_stays_open_for_corrections_until_submitted() -> None:
    # GIVEN a form whose answers are all given
    svc = service()
    call(svc, "form_start", "s", values={"destination": "Oslo", "depart": "2026-05-01"})
    assert instance(svc).state.status == "open"
    assert "complete (still open for corrections)" in svc.status(ALICE)[0]
    listed = svc.call(ALICE, "form_list", "l", {})
    assert listed["started"][0]["status"] == "complete (still open for corrections)"
    # WHEN the user corrects an answer (no new instance, the log keeps the first)
    fix = call(svc, "form_fill", "f1", values={"destination": "Bergen"})
    assert fix["ok"] is True and "closed" not in fix
    assert [r.value for r in instance(svc).field("destination").revisions] == ["Oslo", "Bergen"]
    # AND the agent submits once the user confirms
    done = call(svc, "form_fill", "f2", submit=True)
    # THEN it closes as completed, and later writes are refused
    assert done["submitted"] is True and done["closed"] == "completed"
    assert done["summary"] == "Submitted Booking; it is closed."
    assert (instance(svc).state.status, instance(svc).state.closed_reason) == (
        "completed",
        "submitted",
    )
    assert call(svc, "form_fill", "f3", values={"seat": "aisle"})["error"] == "form_closed"


def test_a_correction_that_breaks_completeness_reopens_and_recompleting_is_a_new_occurrence() -> (
    None
):
    svc = service()
    call(svc, "form_start", "s", values={"destination": "Oslo", "depart": "2026-05-01"})
    call(svc, "form_revise", "r1", field="destination", action="retract")
    assert "complete" not in svc.status(ALICE)[0]
    call(svc, "form_fill", "f", values={"destination": "Rome"})
    keys = [k for k in instance(svc).state.outbox if "form.complete" in k]
    assert [k.rsplit(":", 1)[1] for k in keys] == ["1", "2"]
    assert len(ran) == 2


def test_submitting_an_incomplete_form_is_refused_with_what_is_missing() -> None:
    svc = service()
    call(svc, "form_start", "s")
    result = call(svc, "form_fill", "f", values={"destination": "Oslo"}, submit=True)
    # THEN the value is saved, the form stays open, and the refusal names what is missing
    assert result["ok"] is True and result["submitted"] is False
    assert result["not_submitted"] == "still to answer: Departure date"
    assert instance(svc).state.status == "open"
    assert instance(svc).field("destination").in_force().value == "Oslo"


def test_closes_on_complete_is_still_available_per_form() -> None:
    svc = service(closes_on_complete=True)
    started = call(svc, "form_start", "s", values={"destination": "Oslo", "depart": "2026-05-01"})
    assert started["closed"] == "completed"
