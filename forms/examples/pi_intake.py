"""A personal-injury intake: branch-gated details and a triage checkpoint that routes.

The ``triage`` checkpoint fires once the incident is described. One firing may stamp a derived
value and move the conversation in the same breath: a minor incident whose injuries are not yet
described is fast-tracked straight to review (``Patch`` + ``Jump`` forward); a caller with a
prior claim is sent back to identity to re-check it (a ``Jump`` to a completed step, a revisit).
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

from pydantic import Field

from forms.definition import Checkpoint, FormDef, Step, field
from forms.effects import Effect, Jump, Patch
from forms.state import HookContext


class Identity(Step):
    title = "Identity"
    preview = "who was injured"
    guidance = "Confirm the spelling of the name and read the phone number back."

    full_name: Annotated[str, Field(min_length=2, max_length=120)] = field(
        "Full name", ask="the injured person's full legal name", aliases=["name"]
    )
    date_of_birth: date = field(
        "Date of birth", ask="as a date, e.g. 1988-05-02", aliases=["DOB", "birth date"]
    )
    phone: Annotated[str, Field(pattern=r"^\+?[0-9][0-9 ()-]{6,19}$")] = field(
        "Phone number", ask="a number we can reach them on during the day", example="020 7946 0958"
    )
    prior_claim_id: Annotated[str, Field(pattern=r"^PC-\d{5}$")] | None = field(
        "Prior claim reference",
        ask="only if they have claimed with us before",
        aliases=("prior claim", "previous claim"),
        example="PC-12345",
    )


class Incident(Step):
    title = "Incident"
    preview = "what happened, when, how serious"

    incident_type: Literal["vehicle", "premises", "medical"] = field(
        "Type of incident",
        ask="a road accident (vehicle), a fall or injury on someone's property (premises), "
        "or medical treatment that went wrong (medical)",
    )
    incident_date: date = field("Date of incident", aliases=["accident date"])
    description: Annotated[str, Field(min_length=10, max_length=2000)] = field(
        "What happened",
        ask="in the user's own words; a few sentences is enough",
        aliases=["incident description"],
    )
    vehicle_count: Annotated[int, Field(ge=1, le=50)] = field(
        "Vehicles involved",
        when=lambda v: v.incident_type == "vehicle",
        aliases=["number of vehicles"],
    )
    police_report_number: Annotated[str, Field(min_length=3, max_length=40)] | None = field(
        "Police report number",
        when=lambda v: v.incident_type == "vehicle",
        aliases=["police reference", "crime reference number"],
    )
    severity: Literal["minor", "moderate", "severe"] = field(
        "Severity",
        ask="minor: no time off and no lasting pain; moderate: time off or ongoing treatment; "
        "severe: hospital stay or lasting harm",
        aliases=["injury severity"],
    )


class Injuries(Step):
    title = "Injuries"
    preview = "what hurts, treatment"

    injuries: Annotated[str, Field(min_length=3, max_length=2000)] = field(
        "What hurts",
        ask="which parts of the body, and how it affects daily life",
        aliases=["injury description"],
    )
    treatment_received: bool = field("Treatment received", ask="any doctor, hospital or physio")
    treating_provider: Annotated[str, Field(min_length=2, max_length=200)] = field(
        "Treating provider",
        when=lambda v: v.treatment_received is True,
        aliases=["provider", "treatment provider"],
    )


class Review(Step):
    title = "Review"
    preview = "representation, confirm and sign off"
    guidance = "Read back a short summary of every answer before asking for confirmation."

    has_lawyer: bool = field(
        "Already has a lawyer",
        ask="whether a solicitor already acts for them on this",
        aliases=["has solicitor", "lawyer", "represented"],
    )
    lawyer_name: Annotated[str, Field(min_length=2, max_length=200)] = field(
        "Lawyer's name and firm",
        when=lambda v: v.has_lawyer is True,
        aliases=["solicitor name"],
    )
    track: Literal["fast", "standard"] | None = field(
        "Handling track", ask="set by triage; never ask the user"
    )
    confirmed: bool = field(
        "Summary confirmed",
        ask="true once the user says the summary read back is correct",
        aliases=["confirmation", "summary confirmed by user"],
    )


def triage(ctx: HookContext) -> list[Effect]:
    """Route once the incident is known: fast-track minor cases, re-check repeat claimants."""
    if ctx.values.severity == "minor" and not ctx.state.step_complete("injuries"):
        return [Patch({"track": "fast"}), Jump("review")]
    if ctx.values.prior_claim_id is not None:
        return [Patch({"track": "standard"}), Jump("identity")]
    return [Patch({"track": "standard"})]


pi_intake = FormDef(
    id="pi-intake",
    version=1,
    title="Personal injury intake",
    description="Take the details of an injury claim: who, what happened, injuries, review.",
    steps=[Identity, Incident, Injuries, Review],
    # The read-back summary is the user's sign-off: completing the form submits it.
    closes_on_complete=True,
    checkpoints=[
        Checkpoint(
            "triage",
            when=lambda v, s: s.step_complete("incident") and v.severity is not None,
            run=triage,
            title="Triage",
        )
    ],
)
