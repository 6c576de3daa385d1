"""One rule for names: wherever a person or model names a form, step, field or checkpoint, case,
spaces, ``-`` and ``_`` do not matter; definitions write form ids kebab-case, step and field ids
snake_case, checkpoint ids either."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest

from forms import (
    Caller,
    Checkpoint,
    FormDef,
    Step,
    field,
)
from forms.effects import Fail
from forms.state import HookContext
from tests.support import service_for

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
ALICE = Caller("alice", "conv-1")


class TripDetails(Step):
    title = "Trip details"

    home_city: str = field("Home city")
    total_cost: Decimal = field("Total cost")


def over_budget(ctx: HookContext) -> Fail:
    return Fail(f"{ctx.values.total_cost} is over budget")


expense_report = FormDef(
    id="expense-report",
    version=1,
    title="Expense report",
    steps=[TripDetails],
    checkpoints=[
        Checkpoint(
            "over-budget",
            when=lambda v: v.total_cost is not None and v.total_cost > 100,
            run=over_budget,
        )
    ],
)


class Service:
    def __init__(self) -> None:
        self.calls = itertools.count(1)
        self.service = service_for(expense_report)

    def call(self, tool: str, **payload: Any) -> dict[str, Any]:
        return self.service.call(ALICE, tool, f"call-{next(self.calls)}", payload)


@pytest.mark.parametrize("spelling", ["expense-report", "expense_report", "Expense Report"])
def test_a_form_is_named_in_either_spelling_by_every_tool(spelling: str) -> None:
    s = Service()
    # WHEN the model names the kebab-case form snake_case (or as words) in each tool
    started = s.call("form_start", form=spelling)
    filled = s.call("form_fill", form=spelling, values={"home_city": "Porto"})
    read = s.call("form_read", form=spelling)
    # THEN every call lands on the one form
    assert started["ok"] and filled["ok"] and read["ok"], (started, filled, read)
    assert read["form"] == "expense-report"


@pytest.mark.parametrize("part", ["trip_details", "trip-details", "TripDetails", "Trip details"])
def test_a_step_is_named_in_either_spelling_in_form_read(part: str) -> None:
    s = Service()
    s.call("form_start", form="expense-report")
    result = s.call("form_read", form="expense-report", part=part)
    assert result["ok"] and result["step"] == "trip_details", result


def test_a_field_is_named_in_either_spelling_when_written_and_revised() -> None:
    s = Service()
    s.call("form_start", form="expense-report")
    filled = s.call("form_fill", form="expense-report", values={"home-city": "Porto"})
    assert filled["resolved"] == {"home-city": "home_city"}
    revised = s.call("form_revise", form="expense-report", field="Home-City", action="retract")
    assert revised["ok"], revised


def test_a_kebab_case_checkpoint_fires_under_its_own_id() -> None:
    s = Service()
    s.call("form_start", form="expense-report")
    # WHEN an answer crosses the kebab-case checkpoint
    result = s.call("form_fill", form="expense-report", values={"total_cost": 250})
    # THEN it fires, keyed by the id as written, and its rejection reaches the status line
    assert result["fired"] == ["fi_1:checkpoint.over-budget:1"]
    assert "! 250 is over budget" in result["status_line"]
