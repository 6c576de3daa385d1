"""``POST /approvals/{approval_id}``: an approver's decision through the Lambda handler.

The handler runs as Lambda runs it, on the in-memory store (``tests/functional/conftest.py``).
The approver is the verified principal; the roles come from the ``ROLES_CLAIM`` claim, in
whichever shape the token's issuer and API Gateway hand it over. Also here: the sweeper
applying timeout outcomes when dispatch is in-process, and which outbox entries the relay
starts Temporal runs for.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import pytest

from forms import FormService, InMemoryFormStore
from forms.app.hooks import InProcessDispatcher
from forms.examples import EXAMPLES
from forms.instance import OutboxEntry
from forms.outbox import due_approval_runs, due_approvals, due_entries
from formwork.aws import relay
from formwork.aws.local import LocalContext
from formwork.aws.routing import roles_from_claims
from formwork.config import ConfigError, Settings
from tests.functional.conftest import ALICE, Api, RecordingStore
from tests.support import TickingClock, service_for

FINANCE: dict[str, Any] = {"sub": "bob", "tenant": "acme", "roles": "[finance]"}
"""An approver as API Gateway's JWT authorizer hands the claims over (array as one string)."""
BIG = {"item": "Laser cutter", "supplier": "Acme", "amount": "7200.00"}


def open_approval(api: Api, conversation: str = "conv-1") -> str:
    """Alice's purchase request over 5,000 EUR, every answer given; the approval id."""
    started = api.call("form_start", conversation, form="purchase-request", values=BIG).json()
    (approval_id,) = started["fired"]
    api.call(
        "form_fill",
        conversation,
        form="purchase-request",
        values={"budget_line": "BL-2041", "confirmed": True},
    )
    approval: str = approval_id
    return approval


def decide(api: Api, approval_id: str, claims: dict[str, Any] | None = FINANCE, **body: Any) -> Any:
    return api.post(f"/approvals/{approval_id}", {"decision": "approved", **body}, claims=claims)


def decision_revisions(store: InMemoryFormStore, approval_id: str) -> list[Any]:
    instance = store.get(approval_id.split(":", 1)[0])
    return list(instance.field("finance_decision").revisions)


# ---------------------------------------------------------------------------- the route


def test_a_finance_approver_records_the_decision_and_the_form_completes(
    api: Api, store: RecordingStore
) -> None:
    # GIVEN alice's request waiting for finance
    approval_id = open_approval(api)
    # WHEN bob, holding the finance role, approves with a note
    response = decide(api, approval_id, note="within budget")
    # THEN the decision is recorded and the form completes
    assert response.status == 200, response
    result = response.json()
    assert (result["ok"], result["approval"], result["form_status"]) == (
        True,
        approval_id,
        "completed",
    )
    (revision,) = decision_revisions(store, approval_id)
    assert (revision.value, revision.by, revision.actor, revision.note) == (
        "approved",
        "approver",
        "acme/bob",
        "within budget",
    )
    # AND the agent sees it in its next view
    read = api.call("form_read", form="purchase-request", part="finance_decision").json()
    assert read["value"] == "approved"
    assert api.status().json()["lines"] == []


@pytest.mark.parametrize(
    "claims",
    [
        {"sub": "carol", "tenant": "acme"},  # no roles claim at all
        {"sub": "carol", "tenant": "acme", "roles": "[sales]"},  # another role
        {"sub": "carol", "tenant": "acme", "roles": "[finance-team]"},  # not a prefix match
        {"sub": "carol", "tenant": "acme", "finance": "true"},  # a claim named like the role
    ],
)
def test_without_the_role_it_is_a_404_and_nothing_is_written(
    api: Api, store: RecordingStore, claims: dict[str, Any]
) -> None:
    approval_id = open_approval(api)
    writes = store.writes
    response = decide(api, approval_id, claims=claims)
    # THEN it is answered exactly like an approval that does not exist (ids aside)
    missing = "fi_nothere:checkpoint.finance_approval:1"
    unknown = decide(api, missing, claims=claims)
    assert (response.status, unknown.status) == (404, 404)
    assert response.json()["error"] == "unknown_approval"
    assert response.text.replace(approval_id, "ID") == unknown.text.replace(missing, "ID")
    assert store.writes == writes and decision_revisions(store, approval_id) == []


def test_the_person_who_filled_the_form_cannot_approve_it(api: Api, store: RecordingStore) -> None:
    # GIVEN alice's request, and alice holding the finance role herself
    approval_id = open_approval(api)
    alice_in_finance = {**ALICE, "roles": "[finance]"}
    # WHEN she approves her own request
    response = decide(api, approval_id, claims=alice_in_finance)
    # THEN it is refused, like an approval that does not exist
    assert (response.status, response.json()["error"]) == (404, "unknown_approval")
    assert decision_revisions(store, approval_id) == []
    # AND neither may she under another tenant's principal, nor may another tenant's approver
    other_alice = {"sub": "alice", "tenant": "globex", "roles": "[finance]"}
    globex_bob = {"sub": "bob", "tenant": "globex", "roles": "[finance]"}
    for claims in (other_alice, globex_bob):
        refused = decide(api, approval_id, claims=claims)
        assert (refused.status, refused.json()["error"]) == (404, "unknown_approval")
    assert decision_revisions(store, approval_id) == []
    # AND an approver of the owning tenant may
    assert decide(api, approval_id, claims=FINANCE).status == 200


def test_a_decision_on_a_closed_form_is_a_409(api: Api, store: RecordingStore) -> None:
    # GIVEN a pending approval whose form the requester abandons
    approval_id = open_approval(api)
    instance_id = approval_id.split(":", 1)[0]
    api.call("form_abandon", "conv-1", form="purchase-request", reason="not needed")
    # WHEN finance decides it
    response = decide(api, approval_id)
    # THEN it is refused as closed, and nothing is written to the decision field
    assert (response.status, response.json()["error"]) == (409, "form_closed")
    assert decision_revisions(store, approval_id) == []
    assert store.get(instance_id).state.status == "abandoned"


def test_an_unknown_or_already_decided_approval_is_a_404(api: Api, store: RecordingStore) -> None:
    approval_id = open_approval(api)
    instance_id = approval_id.split(":", 1)[0]
    for unknown in (
        "fi_nothere:checkpoint.finance_approval:1",
        f"{instance_id}:checkpoint.finance_approval:2",
        f"{instance_id}:checkpoint.rejected_by_finance:1",
    ):
        response = decide(api, unknown)
        assert (response.status, response.json()["error"]) == (404, "unknown_approval")
    assert decide(api, approval_id, decision="rejected").status == 200
    # WHEN it is decided a second time (either way)
    again = decide(api, approval_id, decision="approved")
    # THEN the second decision is refused, and the first stands
    assert (again.status, again.json()["error"]) == (404, "unknown_approval")
    assert [r.value for r in decision_revisions(store, approval_id)] == ["rejected"]
    instance = store.get(instance_id)
    assert (instance.state.status, instance.state.closed_reason) == (
        "terminated",
        "rejected by finance",
    )


def test_the_approval_id_may_come_percent_encoded(api: Api) -> None:
    approval_id = open_approval(api)
    response = decide(api, quote(approval_id, safe=""))
    assert response.status == 200 and response.json()["approval"] == approval_id


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        ({"decision": "maybe"}, 422, "invalid_request"),
        ({"decision": "approved", "note": "x" * 1001}, 422, "invalid_request"),
        ({"decision": "approved", "extra": 1}, 422, "invalid_request"),
        ({}, 422, "invalid_request"),
    ],
)
def test_a_bad_body_is_refused_before_anything_is_read(
    api: Api, store: RecordingStore, body: dict[str, Any], status: int, error: str
) -> None:
    approval_id = open_approval(api)
    writes = store.writes
    response = api.post(f"/approvals/{approval_id}", body, claims=FINANCE)
    assert (response.status, response.json()["error"]) == (status, error)
    assert store.writes == writes


def test_a_malformed_approval_id_is_a_400(api: Api) -> None:
    response = decide(api, "bad%20id")
    assert (response.status, response.json()["error"]) == (400, "bad_request")
    assert "approval id" in response.json()["message"]


def test_a_body_naming_an_approver_is_ignored(api: Api, store: RecordingStore) -> None:
    # GIVEN a body that claims to come from someone else
    approval_id = open_approval(api)
    response = decide(api, approval_id, principal="acme/carol", sub="carol", user_id="carol")
    # THEN the decision is the token's principal's
    assert response.status == 200
    assert decision_revisions(store, approval_id)[0].actor == "acme/bob"


def test_without_a_verified_principal_it_is_a_401(api: Api) -> None:
    approval_id = open_approval(api)
    response = decide(api, approval_id, claims=None)
    assert (response.status, response.json()["error"]) == (401, "unauthorized")


def test_the_openapi_document_describes_the_route(api: Api) -> None:
    document = api.get("/openapi.json").json()
    operation = document["paths"]["/approvals/{approval_id}"]["post"]
    assert set(operation["responses"]) == {"200", "400", "401", "404", "409", "413", "415", "422"}
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    assert "ApprovalDecisionRequest" in json.dumps(body)


# ---------------------------------------------------------------------------- roles


@pytest.mark.parametrize(
    ("value", "roles"),
    [
        ("[finance audit]", {"finance", "audit"}),  # API Gateway's JWT authorizer
        (["finance", "audit"], {"finance", "audit"}),  # a JSON array
        ('["finance", "audit"]', {"finance", "audit"}),  # a JSON array as text
        ("finance,audit", set()),  # one entry, never split on the comma
        ("finance audit", {"finance", "audit"}),
        (" finance , audit ", {"finance", "audit"}),  # the lone "," is no role
        ("finance", {"finance"}),
        ("[]", set()),
        ("", set()),
        (None, set()),
        (42, set()),
        ({"finance": True}, set()),
        (["finance", 7, None, "bad role!"], {"finance"}),
    ],
)
def test_roles_arrive_in_every_shape_issuers_and_gateways_use(value: Any, roles: set[str]) -> None:
    claims = {"sub": "bob"} if value is None else {"sub": "bob", "roles": value}
    assert roles_from_claims(claims, "roles") == roles


def test_the_roles_claim_is_configurable(service: FormService, store: RecordingStore) -> None:
    # GIVEN a deployment whose roles are Cognito user pool groups
    settings = Settings(tenant_claim="tenant", roles_claim="cognito:groups")
    api = Api.over(service, settings)
    approval_id = open_approval(api)
    # WHEN a member of the finance group decides (a "roles" claim no longer counts)
    refused = decide(api, approval_id, claims=FINANCE)
    cognito = {"sub": "bob", "tenant": "acme", "cognito:groups": "[admins finance]"}
    accepted = decide(api, approval_id, claims=cognito)
    # THEN only the configured claim's roles count
    assert refused.status == 404 and accepted.status == 200
    assert Settings.from_env({"ROLES_CLAIM": "cognito:groups"}).roles_claim == "cognito:groups"
    assert Settings.from_env({}).roles_claim == "roles"
    with pytest.raises(ConfigError, match="ROLES_CLAIM"):
        Settings.from_env({"ROLES_CLAIM": "roles claim"})


# ---------------------------------------------------------------------------- the signal


class Notifying(InProcessDispatcher):
    """In-process hooks, plus the ``notify_decided`` a durable dispatcher offers."""

    def __init__(self, fails: bool = False) -> None:
        super().__init__()
        self.fails = fails
        self.notified: list[str] = []

    def notify_decided(self, approval_id: str) -> bool:
        self.notified.append(approval_id)
        if self.fails:
            raise ConnectionError("Temporal is unreachable")
        return True


@pytest.fixture
def notifying_service(request: pytest.FixtureRequest) -> tuple[FormService, Notifying]:
    dispatcher = Notifying(fails=bool(getattr(request, "param", False)))
    service = service_for(*EXAMPLES, store=RecordingStore(), dispatcher=dispatcher)
    return service, dispatcher


@pytest.mark.parametrize("notifying_service", [False, True], indirect=True)
def test_a_decision_signals_the_wait_and_a_failed_signal_does_not_fail_it(
    notifying_service: tuple[FormService, Notifying],
) -> None:
    service, dispatcher = notifying_service
    api = Api.over(service)
    approval_id = open_approval(api)
    # WHEN finance decides (Temporal reachable or not)
    response = decide(api, approval_id)
    # THEN the decision stands, and the approval's wait was told
    assert response.status == 200 and response.json()["form_status"] == "completed"
    assert dispatcher.notified == [approval_id]
    # AND a refused decision tells nobody
    assert decide(api, approval_id).status == 404
    assert dispatcher.notified == [approval_id]


# ---------------------------------------------------------------------------- the sweeper


def test_with_in_process_dispatch_the_sweeper_applies_timeout_outcomes() -> None:
    # GIVEN in-process dispatch and a request waiting for finance (5-day timeout)
    clock = TickingClock(datetime(2026, 3, 1, 9, tzinfo=UTC))
    service = service_for(*EXAMPLES, clock=clock)
    api = Api.over(service, Settings())
    approval_id = open_approval(api)
    instance_id = approval_id.split(":", 1)[0]
    sweep = {"instance_ids": [instance_id]}
    # WHEN the sweeper runs before the deadline
    early = relay.sweep_handler(sweep, LocalContext(), app=api.app)
    # THEN it leaves the approval waiting
    assert early["expired"] == [] and early["skipped"] == "inprocess dispatch"
    assert service.store.get(instance_id).state.status == "open"
    # WHEN it runs after the deadline
    clock.now += timedelta(days=5)
    late = relay.sweep_handler(sweep, LocalContext(), app=api.app)
    again = relay.sweep_handler(sweep, LocalContext(), app=api.app)
    # THEN the declared outcome is applied once, and its edge ran (rejection terminates)
    assert late["expired"] == [approval_id] and late["dispatched"] == []
    assert late["skipped"] == "inprocess dispatch"
    assert again["expired"] == []
    instance = service.store.get(instance_id)
    (revision,) = instance.field("finance_decision").revisions
    assert (revision.value, revision.by, revision.actor) == ("rejected", "operator", "timeout")
    assert instance.state.status == "terminated"


# ---------------------------------------------------------------------------- what gets a run


def entry(kind: str, key: str, **fields: Any) -> OutboxEntry:
    now = datetime(2026, 3, 1, 9, tzinfo=UTC)
    hook = "checkpoint.sign_off" if kind == "approval" else "field.amount.filled"
    return OutboxEntry(
        key=f"fi_1:{hook}:{key}",
        hook_id=hook,
        occurrence=int(key),
        kind=kind,
        created_at=now,
        **fields,
    )


def keys(entries: Sequence[OutboxEntry]) -> list[int]:
    return [e.occurrence for e in entries]


def test_approvals_are_dispatched_once_and_again_only_when_overdue() -> None:
    t0 = datetime(2026, 3, 1, 9, tzinfo=UTC)
    after = timedelta(minutes=10)
    deadline = t0 + timedelta(days=1)
    outbox = {
        e.key: e
        for e in [
            entry("approval", "1", deadline=deadline),  # never dispatched
            entry("approval", "2", deadline=deadline, dispatched_at=t0),  # waiting, as it should
            entry("approval", "3", deadline=deadline, status="done", dispatched_at=t0),
            entry("executor", "4", dispatched_at=t0),  # a hook run should be over by now
        ]
    }
    # hook runs: the executor, dispatched long enough ago to be started again
    assert keys(due_entries(outbox, t0 + after, after)) == [4]
    # a day minus a second later: approval 2's run is still legitimately waiting
    assert keys(due_approval_runs(outbox, deadline - timedelta(seconds=1), after)) == [1]
    # its deadline passed, but not by the grace period: its run is settling it
    assert keys(due_approval_runs(outbox, deadline + after / 2, after)) == [1]
    # pending that long past its deadline: its run was lost; start it again
    assert keys(due_approval_runs(outbox, deadline + after, after)) == [1, 2]
    assert keys(due_approvals(outbox, deadline)) == [1, 2]
    assert due_approvals(outbox, deadline - timedelta(seconds=1)) == []


def test_a_correction_below_the_threshold_is_not_rejected_at_the_deadline() -> None:
    # GIVEN a request over 5,000 EUR waiting for finance, then corrected to 900 EUR (no
    # approval needed any more), not yet confirmed
    clock = TickingClock(datetime(2026, 3, 1, 9, tzinfo=UTC))
    service = service_for(*EXAMPLES, clock=clock)
    api = Api.over(service)
    api.call("form_start", form="purchase-request", values=BIG)
    api.call("form_fill", form="purchase-request", values={"amount": "900.00"})
    # WHEN the approval's deadline passes
    clock.now += timedelta(days=6)
    service.expire_approvals("fi_1")
    # THEN the request is still open (it was never the approver's to reject), and the
    # approval was withdrawn when the correction ended its crossing
    instance = service.store.get("fi_1")
    assert instance.state.status == "open"
    (entry,) = [e for e in instance.state.outbox.values() if e.kind == "approval"]
    assert (entry.status, entry.error) == ("done", "withdrawn: the checkpoint no longer holds")
    assert instance.field("finance_decision").revisions == ()
