"""Writing answers in another encoding, out-of-range numbers, and examples, end to end.

Unambiguous encodings (``"yes"`` for a boolean, ``"6"`` for an integer, ``"Rail"`` for
``"rail"``) are read and reported under ``coerced``; numbers past the default or declared
bounds are refused cleanly; only blanks point at retract; an example replaces a pattern in what
the agent reads.
"""

from __future__ import annotations

from typing import Any

import pytest

from forms import Caller, compile_form
from forms.examples.grant_application import grant_application
from forms.examples.pi_intake import pi_intake
from forms.examples.purchase_request import purchase_request
from forms.examples.travel_claim import travel_claim
from forms.operations import RETRACT_HINT, Author, plan_fill
from tests.support import service_for
from tests.unit.forms_for_tests import AGENT, T0, filled, harness, new_instance, trip_form

FORM = compile_form(trip_form())

# ------------------------------------------------------------------ the plan


def test_unambiguous_encodings_are_staged_as_json_and_listed_as_coerced() -> None:
    # GIVEN a new trip
    instance = new_instance(FORM)
    # WHEN a fill carries a boolean as "yes", an integer as "30" and a choice as "Rail"
    plan = plan_fill(
        FORM, instance, {"consent": "yes", "age": "30", "mode": " Rail ", "name": "Ann"}, AGENT, T0
    )
    # THEN each is staged as its JSON value, and the plan says what was sent and what is kept
    staged = {f: change.append[0].value for f, change in plan.changes.items()}
    assert staged == {"consent": True, "age": 30, "mode": "rail", "name": "Ann"}
    assert plan.coerced == {
        "consent": {"sent": "yes", "stored": True},
        "age": {"sent": "30", "stored": 30},
        "mode": {"sent": " Rail ", "stored": "rail"},
    }
    assert plan.rejected == []


def test_a_coerced_value_equal_to_the_answer_in_force_is_unchanged_but_still_reported() -> None:
    instance = filled(FORM, {"consent": True})
    plan = plan_fill(FORM, instance, {"consent": "true"}, AGENT, T0)
    assert (plan.unchanged, plan.changes) == (["consent"], {})
    assert plan.coerced == {"consent": {"sent": "true", "stored": True}}


def test_an_executors_patch_is_read_strictly() -> None:
    # GIVEN an executor (code, not a model) writing a boolean as "yes"
    executor = Author(source="executor", actor="fi_1:checkpoint.over_cap:1")
    # WHEN planned THEN it is rejected: a wrong encoding in code is a bug to surface
    plan = plan_fill(FORM, new_instance(FORM), {"consent": "yes"}, executor, T0)
    assert [r.field for r in plan.rejected] == ["consent"]
    assert plan.coerced == {}


@pytest.mark.parametrize(("field_id", "sent"), [("consent", 0), ("name", 0), ("name", False)])
def test_a_zero_or_false_answer_is_not_pointed_at_retract(field_id: str, sent: object) -> None:
    # GIVEN a value the user may well have meant (a number, false), rejected by the type
    plan = plan_fill(FORM, new_instance(FORM), {field_id: sent}, AGENT, T0)
    # THEN the hint is about the value; clearing is only suggested for blanks
    (rejection,) = plan.rejected
    assert "retract" not in (rejection.hint or "")


def test_zero_for_a_positive_integer_gets_the_range_not_retract() -> None:
    travel = compile_form(travel_claim)
    plan = plan_fill(travel, new_instance(travel), {"distance_km": 0}, AGENT, T0)
    (rejection,) = plan.rejected
    assert rejection.hint == "send an integer 1-20000"


@pytest.mark.parametrize("blank", ["", "  ", None])
def test_blanks_are_never_coerced_and_keep_the_retract_hint(blank: Any) -> None:
    plan = plan_fill(FORM, filled(FORM, {"consent": True}), {"consent": blank}, AGENT, T0)
    assert [(r.field, r.hint) for r in plan.rejected] == [("consent", RETRACT_HINT)]
    assert plan.coerced == {}


# ------------------------------------------------------------------ through the service


def test_a_fill_of_only_quoted_scalars_saves_them_and_says_so() -> None:
    # GIVEN a started trip
    h = harness()
    h.start()
    # WHEN the only values are quoted ("yes", "12")
    result = h.fill(consent="yes", amount="12")
    # THEN the call is ok, both are saved as JSON values, and the result shows the reading
    assert result["ok"] is True
    assert result["coerced"] == {
        "consent": {"sent": "yes", "stored": True},
        "amount": {"sent": "12", "stored": 12},
    }
    assert {f: h.ev().live[f] for f in ("consent", "amount")} == {"consent": True, "amount": 12}


def test_a_revise_set_with_a_quoted_value_says_it_was_coerced() -> None:
    h = harness()
    h.start({"consent": False})
    result = h.revise("consent", "set", "Yes")
    assert result["ok"] is True
    assert result["summary"] == "Set Consent to true."
    assert result["coerced"] == {"consent": {"sent": "Yes", "stored": True}}


def test_a_strict_fill_has_no_coerced_key() -> None:
    h = harness()
    h.start()
    assert "coerced" not in h.fill(consent=True, amount=12)


@pytest.mark.parametrize(
    "sent",
    [10**4000, 2**53, float("inf"), "1" * 5000],
    ids=["4001-digits", "2**53", "inf", "quoted-5000-digits"],
)
def test_huge_numbers_through_the_service_are_refused_cleanly(sent: object) -> None:
    # GIVEN a started trip WHEN an absurd number is written to an integer field
    h = harness()
    h.start()
    result = h.fill(amount=sent, name="Ann")
    # THEN it is a rejection (never an exception), the good value beside it is saved
    assert result["ok"] is True
    assert [r["field"] for r in result["rejected"]] == ["amount"]
    assert "amount" not in h.ev().live and h.ev().live["name"] == "Ann"


def test_an_integer_too_long_for_python_to_print_is_refused_by_the_plan() -> None:
    # GIVEN an int past sys.get_int_max_str_digits (an HTTP body cannot carry one: json.loads
    # refuses it; an in-process caller can)
    plan = plan_fill(FORM, new_instance(FORM), {"amount": 10**5000, "name": "Ann"}, AGENT, T0)
    # THEN it is rejected like any bad value, and the good one beside it is staged
    assert [r.field for r in plan.rejected] == ["amount"]
    assert list(plan.changes) == ["name"]


PURCHASE = {"item": "Laser cutter", "supplier": "Acme"}


@pytest.mark.parametrize(
    "amount",
    ["1E+999999999", "1000000.01", 10**4000, "1e-999999999"],
    ids=["huge-exponent", "over-the-bound", "4001-digits", "tiny-exponent"],
)
def test_an_absurd_purchase_amount_is_refused_and_opens_no_approval(amount: object) -> None:
    # GIVEN the purchase request (amount > 0, <= 1,000,000, two decimals)
    service = service_for(purchase_request, dispatch=False)
    caller = Caller("alice", "conv-1")
    # WHEN the amount is huge, past the bound, or a tiny exponent
    values = {**PURCHASE, "amount": amount}
    result = service.call(
        caller, "form_start", "c1", {"form": "purchase-request", "values": values}
    )
    # THEN it is rejected with the range, the other answers land, and nothing waits on finance
    assert [r["field"] for r in result["rejected"]] == ["amount"]
    assert "fired" not in result
    (instance,) = service.store.list_conversation("alice", "conv-1")
    assert instance.state.outbox == {}


@pytest.mark.parametrize(
    ("definition", "field_id", "over"),
    [
        (travel_claim, "total", "100000.01"),
        (travel_claim, "distance_km", 20_001),
        (purchase_request, "amount", "1000000.01"),
        (grant_application, "annual_revenue", "100000000000.01"),
        (grant_application, "employee_count", 100_001),
        (pi_intake, "vehicle_count", 51),
    ],
)
def test_example_forms_bound_their_numbers(definition: Any, field_id: str, over: object) -> None:
    form = compile_form(definition)
    assert form.fields[field_id].type.type_string.split()[0] in ("integer", "decimal")
    plan = plan_fill(form, new_instance(form), {field_id: over}, AGENT, T0)
    assert [r.field for r in plan.rejected] == [field_id]


# ------------------------------------------------------------------ examples


@pytest.mark.parametrize(
    ("definition", "field_id", "type_string"),
    [
        (travel_claim, "staff_id", "text like AB1234"),
        (travel_claim, "flight_number", "text like TP1234"),
        (travel_claim, "cost_centre", "text like CC-104"),
        (purchase_request, "budget_line", "text like BL-2041"),
        (grant_application, "registration_number", "text like 09876543"),
        (pi_intake, "prior_claim_id", "text like PC-12345"),
    ],
)
def test_example_forms_show_examples_not_regular_expressions(
    definition: Any, field_id: str, type_string: str
) -> None:
    assert compile_form(definition).fields[field_id].type.type_string == type_string


def test_no_example_form_shows_a_regular_expression() -> None:
    for definition in (travel_claim, purchase_request, grant_application, pi_intake):
        for compiled in compile_form(definition).fields.values():
            assert "matching" not in compiled.type.type_string, compiled.id
