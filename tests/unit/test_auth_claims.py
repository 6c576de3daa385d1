"""``formwork.aws.auth`` reads the verified claims through Powertools' ``APIGatewayProxyEventV2``:
every event shape that carries no usable claims is a clear ``Unauthenticated`` (a 401), never
an exception out of the data class."""

from __future__ import annotations

from typing import Any

import pytest

from formwork.aws.auth import Unauthenticated, context_from_event, principal_from_event

CONTEXT = (("person.locale", "locale"),)


def event_with(claims: Any) -> dict[str, Any]:
    return {"requestContext": {"authorizer": {"jwt": {"claims": claims, "scopes": None}}}}


@pytest.mark.parametrize(
    "event",
    [
        {},
        {"requestContext": None},
        {"requestContext": "a string"},
        {"requestContext": {}},
        {"requestContext": {"authorizer": None}},
        {"requestContext": {"authorizer": {"lambda": {"sub": "alice"}}}},  # not a JWT authorizer
        {"requestContext": {"authorizer": {"jwt": None}}},
        {"requestContext": {"authorizer": {"jwt": ["claims"]}}},
        {"requestContext": {"authorizer": "jwt"}},
        event_with(None),
        event_with({}),
        event_with(["sub", "alice"]),
        event_with("sub=alice"),
    ],
)
def test_an_event_without_usable_claims_is_unauthenticated(event: dict[str, Any]) -> None:
    with pytest.raises(Unauthenticated, match="no verified token"):
        principal_from_event(event, "tenant")
    # AND the optional context defaults are just absent, never an error
    assert context_from_event(event, CONTEXT) == ()


def test_the_verified_claims_give_the_principal_and_the_context() -> None:
    event = event_with({"sub": "alice", "tenant": "acme", "locale": " pt-PT "})
    assert principal_from_event(event, "tenant") == "acme/alice"
    assert principal_from_event(event, None) == "alice"
    assert context_from_event(event, CONTEXT) == (("person.locale", "pt-PT"),)


@pytest.mark.parametrize(
    ("claims", "message"),
    [
        ({"tenant": "acme"}, "sub claim is missing or malformed"),
        ({"sub": "a/b", "tenant": "acme"}, "sub claim is missing or malformed"),
        ({"sub": "alice"}, "carries no tenant claim"),
        ({"sub": "alice", "tenant": ""}, "carries no tenant claim"),
        ({"sub": "alice", "tenant": "a/b"}, "tenant claim is malformed"),
        ({"sub": "alice", "tenant": 7}, "tenant claim is malformed"),
    ],
)
def test_bad_claims_keep_their_own_refusals(claims: dict[str, Any], message: str) -> None:
    with pytest.raises(Unauthenticated, match=message):
        principal_from_event(event_with(claims), "tenant")
