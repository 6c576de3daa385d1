"""Who may touch what: the principal comes only from verified claims; conversations are theirs."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forms.surface.tools import check_id
from formwork.aws.models import ID_PATTERN
from formwork.aws.routing import MAX_ROLES, roles_from_claims
from formwork.config import Settings
from formwork.infra.local.dynamodb import load_template
from formwork.infra.local.gateway import routes_from_template
from tests.functional.conftest import (
    ALICE,
    BOB,
    Api,
    RecordingStore,
    build_event,
    make_service,
)


def test_principal_in_the_body_is_ignored(api: Api, store: RecordingStore) -> None:
    # GIVEN alice's token, and a body that claims to be bob
    envelope = {
        "tool_call_id": "call_1",
        "input": {"form": "travel-claim"},
        "principal": "acme/bob",
        "user_id": "bob",
        "sub": "bob",
        "tenant": "evil",
    }
    # WHEN the call is made
    response = api.post("/conversations/conv-1/tools/form_start", envelope)
    # THEN it is accepted, and the form is alice's, not bob's
    assert response.status == 200
    assert store.get("fi_1").principal == "acme/alice"
    assert api.status(claims=ALICE).status == 200
    assert api.status(claims=BOB).status == 404


def test_principal_in_the_query_is_ignored(api: Api) -> None:
    # GIVEN alice has a form in conv-1 and bob has none
    api.call("form_start", form="travel-claim")
    # WHEN bob asks for the status naming alice in the query string
    query = {"principal": "acme/alice", "user_id": "alice", "sub": "alice"}
    response = api.status(claims=BOB, query=query)
    # THEN bob still sees only his own (empty) conversation
    assert response.status == 404


def test_principal_inside_the_tool_input_is_not_honoured(api: Api, store: RecordingStore) -> None:
    response = api.call("form_start", form="travel-claim", principal="acme/bob")
    # THEN the tool refuses the unknown argument as data, and nothing is created for anyone
    assert response.status == 200
    assert response.json()["ok"] is False
    assert store.writes == 0


def test_another_principals_conversation_is_indistinguishable_from_none() -> None:
    # GIVEN alice has a claim in conv-1
    alice = Api.over(make_service())
    alice.call("form_start", form="travel-claim", values={"destination": "Lisbon"})
    # WHEN bob asks about conv-1: its status, and a read of the claim
    bob_status = alice.status(claims=BOB)
    bob_read = alice.call("form_read", claims=BOB, tool_call_id="r1", form="travel-claim")
    bob_list = alice.call("form_list", claims=BOB, tool_call_id="l1")
    # AND bob asks the same of a deployment where conv-1 never existed
    empty = Api.over(make_service())
    none_status = empty.status(claims=BOB)
    none_read = empty.call("form_read", claims=BOB, tool_call_id="r1", form="travel-claim")
    none_list = empty.call("form_list", claims=BOB, tool_call_id="l1")
    # THEN every answer is the same: status code, headers and body
    assert bob_status.status == none_status.status == 404
    for seen, unseen in ((bob_status, none_status), (bob_read, none_read), (bob_list, none_list)):
        assert (seen.status, seen.headers, seen.text) == (
            unseen.status,
            unseen.headers,
            unseen.text,
        )


def test_bob_cannot_write_into_alices_conversation(api: Api, store: RecordingStore) -> None:
    # GIVEN alice's claim in conv-1
    api.call("form_start", form="travel-claim")
    # WHEN bob fills and abandons "the" travel claim in conv-1
    fill = api.call("form_fill", claims=BOB, form="travel-claim", values={"destination": "Rome"})
    abandon = api.call("form_abandon", claims=BOB, form="travel-claim", reason="mine now")
    # THEN neither finds a claim, and alice's is untouched
    assert fill.json()["error"] == abandon.json()["error"] == "unknown_form"
    assert store.get("fi_1").field("destination").revisions == ()
    assert store.get("fi_1").state.status == "open"


def test_same_sub_in_another_tenant_is_another_principal(api: Api) -> None:
    api.call("form_start", form="travel-claim")
    assert api.status(claims={"sub": "alice", "tenant": "other"}).status == 404
    assert api.status(claims=ALICE).status == 200


# ---------------------------------------------------------------------------- tenants

AUTHORIZED_ROUTES = [
    (route.method, re.sub(r"\{[^}]+\}", "x-1", route.path))
    for route in routes_from_template(load_template())
    if route.authorized
]
"""Every route of the template that asks for a token, its path parameters filled in."""

WITHOUT_A_TENANT: list[dict[str, Any]] = [
    {"sub": "alice"},
    {"sub": "alice", "tenant": ""},
    {"sub": "alice", "tenant": None},
    {"sub": "alice", "tenant": "   "},
    {"sub": "alice", "tenant": "acme/evil"},
    {"sub": "alice", "tenant": 7},
    {"sub": "alice", "tenant": ["acme"]},
    {"sub": "alice", "Tenant": "acme"},  # another claim's name: not the tenant
]


def test_the_template_routes_cover_every_family() -> None:
    families = {path.split("/")[1] for _, path in AUTHORIZED_ROUTES}
    assert {"tools", "conversations", "builder", "approvals", "memory", "forms"} <= families
    assert any(path.endswith("/mcp") for _, path in AUTHORIZED_ROUTES)


@pytest.mark.parametrize(("method", "path"), AUTHORIZED_ROUTES)
def test_a_token_without_a_usable_tenant_is_refused_on_every_route(
    api: Api, store: RecordingStore, method: str, path: str
) -> None:
    # GIVEN a deployment that names the tenant claim "tenant" (SETTINGS), and a route that
    # answers alice's token with a tenant
    body = None if method in ("GET", "DELETE") else "{}"
    assert api.send(build_event(method, path, body=body)).status != 401
    for claims in WITHOUT_A_TENANT:
        # WHEN a token without a usable tenant claim calls it
        response = api.send(build_event(method, path, body=body, claims=claims))
        # THEN it is refused as unauthenticated, saying which claim, and nothing is written
        assert response.status == 401, (claims, response)
        assert response.headers["www-authenticate"] == "Bearer"
        error = response.json()
        assert set(error) == {"error", "message"}
        assert error["error"] == "unauthorized"
        assert "tenant claim" in error["message"]
    assert store.writes == 0


def test_tenantless_tokens_share_nothing_not_even_a_draft() -> None:
    # GIVEN two people whose tokens carry no tenant claim
    api = Api.over(make_service())
    alice, mallory = {"sub": "alice"}, {"sub": "mallory"}
    # WHEN one starts a draft and the other lists the drafts
    create = {"tool_call_id": "t1", "input": {"title": "Intake", "steps": [{"title": "You"}]}}
    created = api.post("/builder/forms/intake/tools/create_form", create, claims=alice)
    listed = api.get("/builder/forms", claims=mallory)
    # THEN neither got in: there is no tenant-less space for them to share
    assert (created.status, listed.status) == (401, 401)
    # AND with a tenant, the same call makes a draft that tenant lists
    assert api.post("/builder/forms/intake/tools/create_form", create).json()["ok"] is True
    assert [d["form_id"] for d in api.get("/builder/forms").json()["drafts"]] == ["intake"]


def test_a_single_tenant_deployment_says_so_and_its_principal_is_the_sub(
    store: RecordingStore,
) -> None:
    # GIVEN a deployment set up as single-tenant (TENANT_CLAIM=none)
    single = Api.over(make_service(store), Settings.from_env({"TENANT_CLAIM": "none"}))
    # WHEN alice calls with a token that names no tenant
    assert single.call("form_start", claims={"sub": "alice"}, form="travel-claim").status == 200
    # THEN her principal is the sub, and a tenant claim changes nothing there
    assert store.get("fi_1").principal == "alice"
    assert single.status(claims={"sub": "alice", "tenant": "acme"}).status == 200


# ---------------------------------------------------------------------------- ids


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=140))
def test_the_envelope_id_pattern_agrees_with_check_id(value: str) -> None:
    # GIVEN any string / THEN the OpenAPI pattern accepts it exactly when the engine does
    accepted_by_model = re.fullmatch(ID_PATTERN.strip("^$"), value) is not None
    try:
        check_id(value, "id")
        accepted_by_engine = True
    except Exception:
        accepted_by_engine = False
    assert accepted_by_model == accepted_by_engine


def test_check_id_refuses_a_trailing_newline() -> None:
    from forms.errors import BadRequest

    with pytest.raises(BadRequest):
        check_id("conv-1\n", "conversation id")


# ---------------------------------------------------------------------------- roles


@pytest.mark.parametrize(
    ("value", "roles"),
    [
        # API Gateway's JWT authorizer: an array claim as one string, in brackets
        ("[finance admins]", {"finance", "admins"}),
        ("[sales,finance]", set()),  # one group named "sales,finance": no role
        ("[sales,finance audit]", {"audit"}),
        ("[finance]", {"finance"}),
        ("[]", set()),
        # a JSON array, or a JSON array as text: each entry whole
        (["finance", "admins"], {"finance", "admins"}),
        (["sales,finance"], set()),
        (["sales finance"], set()),  # an entry of a list is never split, not even on spaces
        ('["sales,finance", "audit"]', {"audit"}),
        ('["finance"]', {"finance"}),
        # one space-separated string
        ("finance admins", {"finance", "admins"}),
        ("finance,admins", set()),
        ("finance, admins", {"admins"}),  # "finance," is not a role
        ("finance\tadmins\n", {"finance", "admins"}),
        # nothing usable
        ("", set()),
        (None, set()),
        (7, set()),
        ({"finance": True}, set()),
        (["finance", 7, None, "bad role!", " finance"], {"finance"}),
    ],
)
def test_roles_are_entries_of_the_claim_never_pieces_of_one(value: Any, roles: set[str]) -> None:
    claims = {"sub": "bob"} if value is None else {"sub": "bob", "roles": value}
    assert roles_from_claims(claims, "roles") == roles


def test_at_most_max_roles_are_read() -> None:
    value = " ".join(f"r{i}" for i in range(MAX_ROLES + 10))
    assert len(roles_from_claims({"roles": value}, "roles")) == MAX_ROLES


@pytest.mark.parametrize(
    ("roles", "status"),
    [("[sales,finance]", 404), (["sales,finance"], 404), ("[sales finance]", 200)],
)
def test_a_group_whose_name_holds_a_comma_does_not_grant_its_parts(
    api: Api, roles: Any, status: int
) -> None:
    # GIVEN alice's purchase request waiting for the finance role
    big = {"item": "Laser cutter", "supplier": "Acme", "amount": "7200.00"}
    started = api.call("form_start", form="purchase-request", values=big).json()
    (approval_id,) = started["fired"]
    api.call("form_fill", form="purchase-request", values={"budget_line": "B-1", "confirmed": True})
    # WHEN someone in a group named "sales,finance" decides it
    claims = {"sub": "carol", "tenant": "acme", "roles": roles}
    response = api.post(f"/approvals/{approval_id}", {"decision": "approved"}, claims=claims)
    # THEN that group is not the finance role (two groups, "sales" and "finance", would be)
    assert response.status == status, response
