"""A travel expense claim: a mode-gated branch and a policy-cap checkpoint."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import Field

from forms.definition import Checkpoint, FormDef, Step, field
from forms.effects import Fail
from forms.state import HookContext

POLICY_CAP = Decimal("2000")


class Claimant(Step):
    title = "Claimant"
    preview = "who is claiming"

    full_name: Annotated[str, Field(min_length=2, max_length=120)] = field(
        "Full name", aliases=["name"]
    )
    staff_id: Annotated[str, Field(pattern=r"^[A-Z]{2}\d{4}$")] = field(
        "Staff ID",
        ask="two capital letters and four digits",
        aliases=["employee ID", "employee number", "staff number"],
        example="AB1234",
    )


class Trip(Step):
    title = "Trip"
    preview = "destination and dates"

    destination: Annotated[str, Field(min_length=2)] = field("Destination")
    departure_date: date = field("Departure date")
    return_date: date = field("Return date")
    purpose: str | None = field(
        "Purpose of the trip", aliases=["trip purpose", "reason for travel"]
    )


class Travel(Step):
    title = "Travel"
    preview = "how they travelled, total"

    mode: Literal["air", "rail", "car"] = field(
        "Mode of travel", aliases=["travel mode", "transport"]
    )
    flight_number: Annotated[str, Field(pattern=r"^[A-Z0-9]{2}\d{1,4}$")] = field(
        "Flight number", when=lambda v: v.mode == "air", aliases=["flight no"], example="TP1234"
    )
    distance_km: Annotated[int, Field(ge=1, le=20_000)] = field(
        "Distance driven (km)", when=lambda v: v.mode == "car"
    )
    total: Annotated[Decimal, Field(ge=0, le=100_000, decimal_places=2)] = field(
        "Total amount (EUR)"
    )


class Approval(Step):
    title = "Approval"
    preview = "cost centre, manager, receipts"

    cost_centre: Annotated[str, Field(pattern=r"^CC-\d{3}$")] = field(
        "Cost centre", aliases=["cost center"], example="CC-104"
    )
    manager_email: Annotated[str, Field(pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")] = field(
        "Manager's email", example="j.smith@example.com"
    )
    receipts_attached: bool = field("Receipts attached")


def over_cap(ctx: HookContext) -> Fail:
    total = ctx.values.total
    return Fail(
        f"Total {total} EUR is over the {POLICY_CAP} EUR policy cap: ask for a lower total "
        "or the claim cannot be submitted"
    )


travel_claim = FormDef(
    id="travel-claim",
    version=1,
    title="Travel expense claim",
    description="Claim back the cost of a business trip.",
    steps=[Claimant, Trip, Travel, Approval],
    checkpoints=[
        Checkpoint(
            "policy_cap",
            when=lambda v: v.total is not None and v.total > POLICY_CAP,
            run=over_cap,
            title="Policy cap",
        )
    ],
)
