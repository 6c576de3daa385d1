"""``GET /approvals``: the approver's queue through the Lambda handler, on the in-memory store.

Multi-tenant from the first line: a queue lists only what its caller may decide, by the same
rule ``POST /approvals/{approval_id}`` applies (their tenant, a role in the roles claim, never
a form they filled), so another tenant's approvals never show, nor the filler's own.
"""

from __future__ import annotations

from typing import Any

import pytest

from forms.storage.approvals import MAX_PAGE
from formwork.aws.approval_routes import QUEUE_PAGE
from tests.functional.conftest import ALICE, Api
from tests.functional.test_approvals_api import FINANCE, decide, open_approval

GLOBEX_ALICE: dict[str, Any] = {"sub": "alice", "tenant": "globex"}
GLOBEX_FINANCE: dict[str, Any] = {"sub": "bob", "tenant": "globex", "roles": "[finance]"}


def queue(api: Api, claims: dict[str, Any] | None = FINANCE, **query: Any) -> Any:
    return api.get("/approvals", claims=claims, query={k: str(v) for k, v in query.items()})


def owed(api: Api, claims: dict[str, Any] | None = FINANCE) -> list[str]:
    response = queue(api, claims)
    assert response.status == 200, response
    return [row["approval_id"] for row in response.json()["owed"]]


def test_an_approver_sees_what_they_may_decide_with_its_answers_and_deadline(api: Api) -> None:
    approval_id = open_approval(api)
    response = queue(api)
    assert response.status == 200, response
    body = response.json()
    (row,) = body["owed"]
    assert body["owed_next"] is None and body["settled"] == []
    assert row["approval_id"] == approval_id
    assert (row["form_id"], row["checkpoint"], row["role"]) == (
        "purchase-request",
        "Finance approval",
        "finance",
    )
    assert row["requested_by"] == "alice"
    assert row["deadline"] > row["requested_at"] and row["settled"] is None
    assert {a["field"]: a["value"] for a in row["answers"]} == {
        "item": "Laser cutter",
        "supplier": "Acme",
        "amount": "7200.00",
    }


def test_two_tenants_each_see_only_their_own(api: Api) -> None:
    # GIVEN a request by alice of acme, and one by alice of globex
    acme = open_approval(api)
    api.call(
        "form_start",
        "conv-g",
        claims=GLOBEX_ALICE,
        form="purchase-request",
        values={"item": "Drill", "supplier": "Globex", "amount": "9000"},
    )
    (globex,) = owed(api, GLOBEX_FINANCE)
    # THEN each tenant's finance approver sees their tenant's request only
    assert owed(api, FINANCE) == [acme] and globex != acme
    # AND neither can decide the other's: the queue and the decision agree
    assert decide(api, globex, claims=FINANCE).status == 404
    assert decide(api, acme, claims=GLOBEX_FINANCE).status == 404


@pytest.mark.parametrize(
    "claims",
    [
        {**ALICE, "roles": "[finance]"},  # the filler, holding the role herself
        {"sub": "carol", "tenant": "acme", "roles": "[sales]"},  # another role
        {"sub": "carol", "tenant": "acme"},  # no roles claim
    ],
)
def test_who_may_not_decide_sees_an_empty_queue(api: Api, claims: dict[str, Any]) -> None:
    approval_id = open_approval(api)
    assert owed(api, claims) == []
    assert decide(api, approval_id, claims=claims).status == 404


def test_a_decision_moves_it_to_settled_with_who_and_when(api: Api) -> None:
    approval_id = open_approval(api)
    assert decide(api, approval_id, note="within budget").status == 200
    body = queue(api).json()
    assert body["owed"] == []
    (row,) = body["settled"]
    assert row["approval_id"] == approval_id
    settled = row["settled"]
    assert (settled["outcome"], settled["how"], settled["by"], settled["note"]) == (
        "approved",
        "decided",
        "bob",
        "within budget",
    )
    assert settled["standing"] is True and settled["at"]
    # AND the filler, holding the role, does not see it settled either
    assert queue(api, {**ALICE, "roles": "[finance]"}).json()["settled"] == []


def test_pages_read_on_with_the_cursor(api: Api) -> None:
    ids = [open_approval(api, f"conv-{n}") for n in range(3)]
    first = queue(api, limit=2, settled_limit=0).json()
    assert [r["approval_id"] for r in first["owed"]] == ids[:2]
    rest = queue(api, limit=2, after=first["owed_next"]).json()
    assert [r["approval_id"] for r in rest["owed"]] == ids[2:] and rest["owed_next"] is None


@pytest.mark.parametrize(
    "query",
    [
        {"limit": 0},
        {"limit": 51},
        {"limit": "many"},
        {"settled_limit": -1},
        {"after": "fi_1"},
        {"after": "x" * 201},
        {"settled_after": "2026-01-01#fi_1"},
    ],
)
def test_bad_limits_and_cursors_are_a_400(api: Api, query: dict[str, Any]) -> None:
    open_approval(api)
    response = queue(api, **query)
    assert (response.status, response.json()["error"]) == (400, "bad_request"), response


def test_without_a_verified_principal_it_is_a_401(api: Api) -> None:
    response = queue(api, claims=None)
    assert (response.status, response.json()["error"]) == (401, "unauthorized")


def test_the_openapi_document_describes_the_route(api: Api) -> None:
    document = api.get("/openapi.json").json()
    operation = document["paths"]["/approvals"]["get"]
    assert set(operation["responses"]) == {"200", "400", "401"}
    assert {p["name"] for p in operation["parameters"]} == {
        "limit",
        "after",
        "settled_limit",
        "settled_after",
    }
    body = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert "ApprovalQueueBody" in str(body)
    assert QUEUE_PAGE == MAX_PAGE
