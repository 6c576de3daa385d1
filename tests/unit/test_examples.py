"""The example forms, driven through ``FormService.call`` as an agent would, and the demo."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

import pytest

from forms import (
    Caller,
    FormDef,
    FormService,
    compile_form,
)
from forms.examples import (
    EXAMPLES,
    grant_application,
    health_check,
    pi_intake,
    purchase_request,
    travel_claim,
)
from formwork.examples import demo
from tests.support import TRAVEL_ANSWERS, Session, TickingClock, service_for

T0 = datetime(2025, 3, 10, 9, 0, tzinfo=UTC)

PI_IDENTITY: dict[str, Any] = {
    "full_name": "Sam Okafor",
    "date_of_birth": "1988-05-02",
    "phone": "07700 900123",
}
PI_INCIDENT: dict[str, Any] = {
    "incident_type": "vehicle",
    "incident_date": "2025-02-14",
    "description": "Rear-ended while stopped at a junction",
    "vehicle_count": 2,
    "severity": "moderate",
}
PI_INJURIES: dict[str, Any] = {
    "injuries": "whiplash, stiff neck for three weeks",
    "treatment_received": True,
    "treating_provider": "Leeds General Infirmary",
}
PI_REVIEW: dict[str, Any] = {"has_lawyer": False, "confirmed": True}
GRANT_ELIGIBLE: dict[str, Any] = {
    "country": "Scotland",
    "annual_revenue": 180000,
    "employee_count": 12,
    "years_trading": 4,
}
GRANT_REST: dict[str, Any] = {
    "company_name": "Crumb & Co Ltd",
    "registration_number": "sc123456",
    "project_title": "Second oven",
    "project_summary": "A second deck oven to double wholesale capacity for local cafes.",
    "amount_requested": 18000,
    "start_date": "2025-06-01",
    "contact_email": "owner@crumb.example",
    "declaration_accepted": True,
}


class Agent(Session):
    """One conversation's tool calls, with sequential tool-call ids."""

    def __init__(self, service: FormService, conversation: str) -> None:
        super().__init__(service, Caller("user-1", conversation))

    def __call__(self, tool: str, **payload: Any) -> dict[str, Any]:
        return self.call(tool, payload)

    def status(self) -> str:
        return "\n".join(self.service.status(self.caller))

    def value(self, instance: str, field_id: str) -> Any:
        revision = self.service.store.get(instance).field(field_id).in_force()
        return revision.value if revision is not None else None


@pytest.fixture
def service() -> FormService:
    return service_for(*EXAMPLES, clock=TickingClock(T0))


@pytest.fixture
def agent(service: FormService) -> Agent:
    return Agent(service, "conv-1")


# ---------------------------------------------------------------- definitions


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda f: f.id)
def test_every_example_compiles(example: FormDef) -> None:
    # WHEN the definition is compiled / THEN it passes every check, with its steps in order
    compiled = compile_form(example)
    assert compiled.id == example.id
    assert list(compiled.steps) == [step.step_id() for step in example.steps]


def test_examples_are_exported_in_order() -> None:
    assert (travel_claim, pi_intake, grant_application, purchase_request, health_check) == EXAMPLES


# ---------------------------------------------------------------- travel claim


def test_travel_claim_straight_through_completes(agent: Agent) -> None:
    # GIVEN every answer, within policy, in one front-loaded start
    result = agent("form_start", form="travel-claim", values=TRAVEL_ANSWERS)
    # THEN the claim is complete and stays open for corrections until it is submitted
    assert result["ok"] and "closed" not in result
    assert "complete (still open for corrections)" in agent.status()
    # WHEN the user confirms and the agent submits it
    done = agent("form_fill", form="travel-claim", submit=True)
    # THEN it closes as completed and drops out of the status line
    assert done.get("closed") == "completed" and done["submitted"] is True
    assert agent.status() == ""


def test_travel_claim_over_cap_is_rejected_until_corrected(agent: Agent) -> None:
    # GIVEN a claim missing only the manager's email, with a total over the cap
    answers = {**TRAVEL_ANSWERS, "total": 2450}
    del answers["manager_email"]
    instance = agent("form_start", form="travel-claim", values=answers)["instance"]
    # THEN the policy cap fired once, keyed by instance, hook and occurrence
    assert agent.service.store.get(instance).state.outbox.keys() == {
        f"{instance}:checkpoint.policy_cap:1"
    }
    # WHEN the last answer arrives while over the cap
    result = agent("form_fill", form="travel-claim", values={"manager_email": "m@example.com"})
    # THEN the form does not complete and the rejection stays on the status line
    assert "closed" not in result
    assert "over the 2000 EUR policy cap" in agent.status()
    # WHEN the total is corrected
    result = agent("form_fill", form="travel-claim", values={"total": 1950}, submit=True)
    # THEN the rejection clears and the claim completes (submitted with the correction)
    assert result.get("closed") == "completed"


def test_travel_claim_over_cap_as_the_last_answer_does_not_complete(agent: Agent) -> None:
    # GIVEN a claim missing only its total
    answers = dict(TRAVEL_ANSWERS)
    del answers["total"]
    agent("form_start", form="travel-claim", values=answers)
    # WHEN the last answer is a total over the policy cap
    result = agent("form_fill", form="travel-claim", values={"total": 2450})
    # THEN the claim is not completed: the policy rejection must be relayed first
    assert "closed" not in result
    assert "policy cap" in agent.status()


# ---------------------------------------------------------------- pi intake


def test_pi_intake_standard_track_straight_through_completes(agent: Agent) -> None:
    # GIVEN a moderate vehicle incident with no prior claim, answered step by step
    instance = agent("form_start", form="pi-intake", values=PI_IDENTITY)["instance"]
    result = agent("form_fill", form="pi-intake", values=PI_INCIDENT)
    # THEN triage stamps the standard track without moving the conversation
    assert result["fired"] == [f"{instance}:checkpoint.triage:1"]
    assert agent.value(instance, "track") == "standard"
    assert 'step 3/4 "Injuries"' in agent.status()
    agent("form_fill", form="pi-intake", values=PI_INJURIES)
    result = agent("form_fill", form="pi-intake", values=PI_REVIEW)
    # THEN the intake completes
    assert result.get("closed") == "completed"


def test_pi_intake_minor_incident_is_fast_tracked_to_review(agent: Agent) -> None:
    # GIVEN identity answered
    instance = agent("form_start", form="pi-intake", values=PI_IDENTITY)["instance"]
    # WHEN a minor incident is described before any injuries
    agent("form_fill", form="pi-intake", values={**PI_INCIDENT, "severity": "minor"})
    # THEN one triage firing stamps the fast track and jumps forward past Injuries
    assert agent.value(instance, "track") == "fast"
    assert agent.status().startswith('[form: pi-intake] step 4/4 "Review"')
    # WHEN review is answered / THEN Injuries, skipped over, is asked next
    agent("form_fill", form="pi-intake", values=PI_REVIEW)
    assert 'step 3/4 "Injuries"' in agent.status()
    result = agent("form_fill", form="pi-intake", values=PI_INJURIES)
    assert result.get("closed") == "completed"


def test_pi_intake_prior_claim_revisits_identity(agent: Agent) -> None:
    # GIVEN a caller with a prior claim
    agent("form_start", form="pi-intake", values={**PI_IDENTITY, "prior_claim_id": "PC-20417"})
    # WHEN the incident is complete
    agent("form_fill", form="pi-intake", values=PI_INCIDENT)
    # THEN triage sends the conversation back to the completed Identity step
    status = agent.status()
    assert 'back at step 1/4 "Identity": go through it again' in status
    assert "check: Full name, Date of birth, Phone number, Prior claim reference" in status
    read = agent("form_read", form="pi-intake")
    assert {f["status"] for f in read["fields"] if "value" in f} == {"ask_again"}
    # WHEN a correction is written into Identity
    agent("form_fill", form="pi-intake", values={"phone": "07700 900456"})
    # THEN the revisit is over and the conversation moves on
    assert "back at step" not in agent.status()
    assert 'step 3/4 "Injuries"' in agent.status()
    agent("form_fill", form="pi-intake", values=PI_INJURIES)
    assert agent("form_fill", form="pi-intake", values=PI_REVIEW).get("closed") == "completed"


def test_pi_intake_revisit_ends_when_the_user_confirms_answers_unchanged(agent: Agent) -> None:
    # GIVEN Identity reopened by triage because of a prior claim
    identity = {**PI_IDENTITY, "prior_claim_id": "PC-20417"}
    agent("form_start", form="pi-intake", values=identity)
    agent("form_fill", form="pi-intake", values=PI_INCIDENT)
    assert "back at step 1/4" in agent.status()
    # WHEN the user confirms every answer as it stands and the agent sends them back
    agent("form_fill", form="pi-intake", values=identity)
    # THEN the step has been gone through again, so the conversation moves on
    assert "back at step" not in agent.status()


def test_pi_intake_gated_fields_follow_their_branch(agent: Agent) -> None:
    # GIVEN a premises incident with vehicle details volunteered anyway
    values = {**PI_IDENTITY, **PI_INCIDENT, "incident_type": "premises"}
    result = agent("form_start", form="pi-intake", values=values)
    # THEN the vehicle count is held, not dropped, and not asked
    assert "vehicle_count" in result.get("held", {})
    assert "Vehicles involved" not in agent.status()


def test_pi_intake_reading_a_held_field_reports_it_held(agent: Agent) -> None:
    # GIVEN a vehicle count held because the incident is on premises
    values = {**PI_IDENTITY, **PI_INCIDENT, "incident_type": "premises"}
    agent("form_start", form="pi-intake", values=values)
    # WHEN the agent reads that field
    read = agent("form_read", form="pi-intake", part="vehicle_count")
    # THEN the row says it is held
    assert read["status"] == "held"


# ---------------------------------------------------------------- grant application


@pytest.mark.parametrize(
    ("answers", "why"),
    [
        ({"annual_revenue": 1_250_000}, "annual revenue of 1,250,000 GBP is over"),
        ({"years_trading": 0.7}, "trading for 0.7 years"),
    ],
)
def test_grant_ineligible_terminates_and_refuses_writes(
    agent: Agent, answers: dict[str, Any], why: str
) -> None:
    # WHEN an answer that rules the business out arrives
    result = agent("form_start", form="grant-application", values={**GRANT_ELIGIBLE, **answers})
    # THEN the application is terminated with the reason
    assert result.get("closed") == "terminated"
    assert result["reason"].startswith("ineligible: ") and why in result["reason"]
    assert agent.status() == ""
    # WHEN the agent writes anyway / THEN it is refused as closed
    refused = agent("form_fill", form="grant-application", values={"company_name": "Crumb"})
    assert refused["ok"] is False and refused["error"] == "form_closed"


def test_grant_straight_through_completes_with_region_and_reference(agent: Agent) -> None:
    # GIVEN an eligible business
    start = agent("form_start", form="grant-application", values=GRANT_ELIGIBLE)
    instance = start["instance"]
    assert "closed" not in start
    # WHEN everything else arrives in one fill
    result = agent("form_fill", form="grant-application", values=GRANT_REST)
    # THEN it completes; the field executor stamped the region, the form executor a reference
    # derived from its idempotency key
    assert result.get("closed") == "completed"
    assert agent.value(instance, "registry_region") == "Scotland"
    key = f"{instance}:form.complete:1"
    digest = hashlib.sha256(key.encode()).hexdigest()[:8].upper()
    assert agent.value(instance, "reference") == f"GR-{digest}"
    read = agent("form_read", form="grant-application", part="reference")
    assert read["closed"] == "completed" and read["value"] == f"GR-{digest}"


def test_grant_registry_region_defaults_to_england_and_wales(agent: Agent) -> None:
    instance = agent("form_start", form="grant-application", values=GRANT_ELIGIBLE)["instance"]
    agent("form_fill", form="grant-application", values={"crn": "09876543"})
    assert agent.value(instance, "registry_region") == "England and Wales"


# ---------------------------------------------------------------- the demo


def test_demo_runs_and_shows_every_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    # WHEN the scripted demo runs / THEN it exits 0 having printed each scenario
    assert demo.main() == 0
    out = capsys.readouterr().out
    for expected in (
        '"Full name": "full_name"',
        '"receipts_attached": {"sent": "yes", "stored": true}',
        "send text like CC-104",
        "now_held",
        "restored",
        "checkpoint.policy_cap:1",
        'back at step 1/4 "Identity"',
        "ineligible:",
        "form_closed",
        "(replayed: nothing applied again)",
    ):
        assert expected in out


def test_demo_output_is_deterministic(capsys: pytest.CaptureFixture[str]) -> None:
    demo.main()
    first = capsys.readouterr().out
    demo.main()
    assert capsys.readouterr().out == first
