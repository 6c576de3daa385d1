"""A small-business grant application: an eligibility gate that ends it, and two executors.

* The ``eligibility`` checkpoint terminates the application as soon as an answer rules it out
  (revenue over the cap, or under a year of trading): no point collecting the rest.
* The registration number's ``on_fill`` executor stamps the company registry region it implies.
* The form's ``on_complete`` executor stamps an application reference derived from its
  idempotency key, so a retried run stamps the same reference.
"""

from __future__ import annotations

import hashlib
from datetime import date
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import Field

from forms.definition import Checkpoint, FormDef, Step, field
from forms.effects import Patch, Terminate
from forms.state import HookContext, Values

REVENUE_CAP = Decimal("1000000")
"""Annual revenue above this (GBP) is not a small business for this scheme."""
MIN_YEARS_TRADING = 1
MAX_GRANT = Decimal("25000")

_REGISTRY_REGIONS = {
    "SC": "Scotland",
    "SO": "Scotland",
    "SL": "Scotland",
    "NI": "Northern Ireland",
    "NC": "Northern Ireland",
    "R0": "Northern Ireland",
}


def stamp_region(ctx: HookContext) -> Patch:
    """The registry region a Companies House number implies (its two-character prefix)."""
    number = str(ctx.values.registration_number).upper()
    region = _REGISTRY_REGIONS.get(number[:2], "England and Wales")
    return Patch({"registry_region": region})


class Eligibility(Step):
    title = "Eligibility"
    preview = "where, size, how long trading"
    guidance = "Ask these first: an ineligible business should find out before anything else."

    country: Literal["England", "Scotland", "Wales", "Northern Ireland"] = field(
        "Country the business is based in"
    )
    annual_revenue: Annotated[Decimal, Field(ge=0, le=100_000_000_000, decimal_places=2)] = field(
        "Annual revenue (GBP)",
        ask="turnover in the last full financial year",
        aliases=["revenue", "turnover"],
    )
    employee_count: Annotated[int, Field(ge=0, le=100_000)] = field(
        "Number of employees",
        ask="full-time equivalent, not counting the owners",
        aliases=["employees", "headcount"],
    )
    years_trading: Annotated[float, Field(ge=0, le=200)] = field(
        "Years trading", ask="a number of years; 8 months is 0.7"
    )


class Business(Step):
    title = "Business"
    preview = "company name and registration"

    company_name: Annotated[str, Field(min_length=2, max_length=160)] = field(
        "Company name", aliases=["business name"]
    )
    registration_number: Annotated[str, Field(pattern=r"^([A-Za-z][A-Za-z0-9]|\d{2})\d{6}$")] = (
        field(
            "Company registration number",
            ask="the 8-character Companies House number; some start with two letters (SC123456)",
            on_fill=stamp_region,
            aliases=("company number", "crn"),
            example="09876543",
        )
    )
    registry_region: str | None = field(
        "Registry region", ask="derived from the registration number; never ask the user"
    )


class Project(Step):
    title = "Project"
    preview = "what the money is for, how much"

    project_title: Annotated[str, Field(min_length=3, max_length=120)] = field(
        "Project title", aliases=["project name"]
    )
    project_summary: Annotated[str, Field(min_length=20, max_length=3000)] = field(
        "Project summary",
        ask="what they will do with the grant and who benefits",
        aliases=["project description"],
    )
    amount_requested: Annotated[Decimal, Field(gt=0, le=MAX_GRANT, decimal_places=2)] = field(
        "Amount requested (GBP)", ask=f"up to {MAX_GRANT} GBP", aliases=["grant amount"]
    )
    start_date: date = field("Project start date")


class Declaration(Step):
    title = "Declaration"
    preview = "contact and sign-off"

    contact_email: Annotated[str, Field(pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")] = field(
        "Contact email", aliases=["email", "email address"], example="owner@example.co.uk"
    )
    declaration_accepted: bool = field(
        "Declaration accepted",
        ask="true once the user confirms the answers are true and complete",
    )
    reference: str | None = field(
        "Application reference", ask="issued on submission; never ask the user"
    )


def ineligible(v: Values) -> bool:
    revenue, years = v.annual_revenue, v.years_trading
    return (revenue is not None and revenue > REVENUE_CAP) or (
        years is not None and years < MIN_YEARS_TRADING
    )


def refuse(ctx: HookContext) -> Terminate:
    revenue, years = ctx.values.annual_revenue, ctx.values.years_trading
    if revenue is not None and revenue > REVENUE_CAP:
        reason = f"annual revenue of {revenue:,} GBP is over the {REVENUE_CAP:,} GBP cap"
    else:
        reason = f"trading for {years:g} years; the scheme needs at least {MIN_YEARS_TRADING}"
    return Terminate(f"ineligible: {reason}")


def issue_reference(ctx: HookContext) -> Patch:
    """A reference derived from the idempotency key: the same on every retry of this run."""
    digest = hashlib.sha256(ctx.key.encode()).hexdigest()[:8].upper()
    return Patch({"reference": f"GR-{digest}"})


grant_application = FormDef(
    id="grant-application",
    version=1,
    title="Small business growth grant",
    description="Apply for a grant of up to 25,000 GBP for a small business project.",
    steps=[Eligibility, Business, Project, Declaration],
    # The declaration is the user's sign-off: completing the form submits it.
    closes_on_complete=True,
    checkpoints=[
        Checkpoint("eligibility", when=ineligible, run=refuse, title="Eligibility rules"),
    ],
    on_complete=issue_reference,
)
