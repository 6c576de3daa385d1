"""Ids that name no field: what a fill's result offers instead of a bare rejection.

An entry under ``unknown`` carries ``did_you_mean`` (fields it most likely meant, that could take
the value sent) or, when nothing is close, ``still_to_ask`` (the ids of the fields that apply
and have no answer yet, open step first), so the agent can resend without reading the outline.
"""

from __future__ import annotations

import itertools
from datetime import UTC, date, datetime
from typing import Any, Literal

import pytest

from bench.forms_bench.ledger import compact, tokens
from forms import (
    Caller,
    FormDef,
    Step,
    field,
)
from forms.compiler import compile_form
from forms.engine import evaluate
from forms.examples.grant_application import grant_application
from forms.examples.pi_intake import pi_intake
from forms.examples.purchase_request import purchase_request
from forms.examples.travel_claim import travel_claim
from forms.instance import FormInstance, InstanceState
from forms.operations import FillPlan, Unknown
from forms.surface.unknown_ids import unknown_entries
from tests.support import service_for

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
ALICE = Caller("alice", "conv-1")
OUTLINE_HINT = 'form_read with part="outline" lists every field id'


class Booking(Step):
    title = "Booking"

    trip_type: Literal["business", "leisure"] = field("Type of trip")
    incident_type: Literal["vehicle", "premises"] = field("Type of incident")
    incident_date: date = field("Date of incident")


class Applicant(Step):
    title = "Applicant"

    age: int = field("Age")
    notes: str | None = field("Notes")


booking = FormDef(id="booking", version=1, title="Booking", steps=[Booking])
membership = FormDef(id="membership", version=1, title="Membership", steps=[Applicant])


class Service:
    def __init__(self) -> None:
        self.service = service_for(travel_claim, pi_intake, purchase_request, booking)
        self._calls = itertools.count(1)

    def call(self, tool: str, **payload: Any) -> dict[str, Any]:
        return self.service.call(ALICE, tool, f"call-{next(self._calls)}", payload)

    def fill(self, form: str, **values: Any) -> dict[str, Any]:
        return self.call("form_fill", form=form, values=values)


def started(form: str, **values: Any) -> Service:
    s = Service()
    assert s.call("form_start", form=form, values=values or None)["ok"]
    return s


TRAVELLED = {
    "full_name": "Ana Ferreira",
    "staff_id": "AB1234",
    "destination": "Lisbon",
    "departure_date": "2025-03-03",
    "return_date": "2025-03-07",
    "mode": "rail",
    "total": 180,
}


# --------------------------------------------------------------------------- still_to_ask


def test_an_id_with_nothing_close_names_the_ids_still_to_ask() -> None:
    # GIVEN a travel claim on its last step, purpose (optional) left unanswered
    s = started("travel-claim", **TRAVELLED)
    # WHEN the agent writes an id that is nothing like any field, beside a good answer
    result = s.fill("travel-claim", shoe_size=44, cost_centre="CC-104")
    # THEN the entry names the fields still to ask after this call: the open step's first,
    # required before optional, and not the one this call answered
    assert result["unknown"] == [
        {"sent": "shoe_size", "still_to_ask": ["manager_email", "receipts_attached", "purpose"]}
    ]
    # AND the list is whole, so no hint sends the agent to read the outline
    assert "hint" not in result


def test_the_list_starts_at_the_open_step_and_is_cut_at_eight_with_the_outline_hint() -> None:
    # GIVEN a personal-injury intake on its first step, with ten fields still to ask
    s = started("pi-intake", full_name="Priya Shah")
    # WHEN an id matching nothing is written
    result = s.fill("pi-intake", shoe_size=44)
    # THEN the open step's fields come first (its optional one too), then later required ones,
    # eight in all; fields that do not apply (vehicle_count) are not among them
    assert result["unknown"] == [
        {
            "sent": "shoe_size",
            "still_to_ask": [
                "date_of_birth",
                "phone",
                "prior_claim_id",
                "incident_type",
                "incident_date",
                "description",
                "severity",
                "injuries",
            ],
        }
    ]
    # AND since the list was cut, the result points at the outline for the rest
    assert result["hint"] == OUTLINE_HINT


def test_a_still_to_ask_entry_stays_compact() -> None:
    # GIVEN the longest entry (eight ids)
    s = started("pi-intake", full_name="Priya Shah")
    entry = s.fill("pi-intake", shoe_size=44)["unknown"][0]
    # THEN it costs a few dozen tokens, against a form_read round trip of hundreds
    assert tokens(compact(entry)) <= 40


def test_fields_an_approver_decides_are_neither_listed_nor_suggested() -> None:
    # GIVEN a purchase request with the approval pending (amount over the threshold)
    s = started("purchase-request", item="Laser cutter", supplier="Acme", amount=6000)
    # WHEN the agent writes the decision under a misspelt id, and an unrelated unknown id
    result = s.fill("purchase-request", finance_decison="approved", shoe_size=44)
    # THEN the decision field is offered to neither: the agent cannot write it
    entries = result["unknown"]
    assert all("finance_decision" not in e.get("did_you_mean", []) for e in entries)
    assert all("finance_decision" not in e.get("still_to_ask", []) for e in entries)
    assert entries[1]["still_to_ask"] == ["budget_line", "confirmed", "needed_by"]


def test_a_closed_form_lists_nothing_to_ask() -> None:
    # GIVEN a form closed by the call (its optional notes still unanswered)
    form = compile_form(membership)
    instance = FormInstance(
        id="fi_1",
        form_id="membership",
        form_version=1,
        principal="alice",
        conversation_id="conv-1",
        created_at=T0,
        state=InstanceState(updated_at=T0),
    )
    plan = FillPlan(unknown=[Unknown("shoe_size", ())])
    # WHEN its unknown entries are rendered
    entries, complete = unknown_entries(form, evaluate(form, instance), plan, is_open=False)
    # THEN nothing is offered to write into a closed form, and nothing points at its outline
    assert (entries, complete) == ([{"sent": "shoe_size"}], True)
    # AND the same form open would list what is still to ask
    assert unknown_entries(form, evaluate(form, instance), plan)[0] == [
        {"sent": "shoe_size", "still_to_ask": ["age", "notes"]}
    ]


# --------------------------------------------------------------------------- did_you_mean


def test_a_leading_word_only_one_field_starts_with_is_suggested() -> None:
    s = started("booking")
    # WHEN trip_kind is sent (no typo of trip_type, and none of its words but "trip" match)
    result = s.fill("booking", trip_kind="business")
    # THEN trip_type is offered, the only field whose id starts with "trip"
    assert result["unknown"] == [{"sent": "trip_kind", "did_you_mean": ["trip_type"]}]


def test_a_suggestion_is_only_made_when_its_type_takes_the_value() -> None:
    s = started("booking")
    # GIVEN a misspelt incident date WHEN it carries a date THEN incident_date is offered
    dated = s.fill("booking", incident_dat="2025-01-20")
    assert dated["unknown"] == [{"sent": "incident_dat", "did_you_mean": ["incident_date"]}]
    # WHEN the same id carries "premises", which no date takes THEN incident_date is not offered
    # (followed blindly it is a refused write at best); the ids still to ask are instead
    kind = s.fill("booking", incident_dat="premises")
    assert kind["unknown"] == [
        {"sent": "incident_dat", "still_to_ask": ["trip_type", "incident_type", "incident_date"]}
    ]


def test_a_leading_word_two_fields_share_suggests_neither() -> None:
    s = started("booking")
    # WHEN incident_kind is sent: alike incident_date as strings, but "kind" is no typo of "date"
    result = s.fill("booking", incident_kind="premises")
    # THEN nothing is guessed; the ids still to ask let the agent pick incident_type
    assert result["unknown"] == [
        {"sent": "incident_kind", "still_to_ask": ["trip_type", "incident_type", "incident_date"]}
    ]


# --------------------------------------------------------------------------- declared aliases


@pytest.mark.parametrize(
    ("definition", "spelling", "field_id"),
    [
        (travel_claim, "employee_id", "staff_id"),
        (travel_claim, "employee number", "staff_id"),
        (travel_claim, "name", "full_name"),
        (travel_claim, "cost_center", "cost_centre"),
        (travel_claim, "total_amount", "total"),  # the label without "(EUR)"
        (pi_intake, "dob", "date_of_birth"),
        (pi_intake, "accident_date", "incident_date"),
        (pi_intake, "injury_description", "injuries"),
        (pi_intake, "solicitor_name", "lawyer_name"),
        (grant_application, "business_name", "company_name"),
        (grant_application, "turnover", "annual_revenue"),
        (grant_application, "email", "contact_email"),
        (purchase_request, "vendor", "supplier"),
    ],
)
def test_example_forms_declare_the_synonyms_people_use(
    definition: FormDef, spelling: str, field_id: str
) -> None:
    assert compile_form(definition).resolve_field(spelling) == field_id


def test_a_declared_alias_is_resolved_in_a_fill() -> None:
    s = started("travel-claim")
    result = s.fill("travel-claim", employee_id="AB1234")
    assert result["ok"] is True
    assert result["resolved"] == {"employee_id": "staff_id"}
    assert "unknown" not in result
