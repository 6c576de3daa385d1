"""Who is calling: the principal, from the claims API Gateway's JWT authorizer verified.

The principal is read from ``requestContext.authorizer.jwt.claims`` (through Powertools'
``APIGatewayProxyEventV2``) and nowhere else: API
Gateway puts those claims there only after it has checked the token's signature, issuer,
audience and expiry. Headers, the query string and the body are never consulted, so a request
cannot name someone else.

The principal is ``tenant/sub`` when the deployment names a tenant claim (``TENANT_CLAIM``,
``tenant`` unless set), and a token without that claim, or with an empty or malformed one, is
refused: it would otherwise share one tenant-less space with every other such token. It is the
``sub`` alone only in a deployment that says it has a single tenant (``TENANT_CLAIM=none``,
``tenant_claim=None``). Both parts are checked against a conservative character set and
length: they become part of storage keys, and ``/`` cannot appear in either, so
``tenant/sub`` is unambiguous.

The same verified claims carry the caller's context defaults (``context_from_event``): a
locale, a time zone, a currency, under the claim names the deployment maps to fact keys
(``FORMWORK_CONTEXT_CLAIMS``). They are optional: a claim that is missing, not a string, too
long or holding control characters is left out, never refused, so a bad optional claim never
costs the call. Whether a value is a real locale or zone is the vocabulary's to say, when a
form takes it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, cast

from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEventV2

_SUB = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@|+=-]{0,127}")
"""Cognito (a UUID), Auth0 (``auth0|abc``), Google (digits) and dev tokens all fit."""
_TENANT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}")
MAX_CONTEXT_CLAIM = 64
"""The longest context claim read (an IANA zone name is at most about 30 characters, a
language tag 35): anything longer is not one, and is not carried further."""
_PRINTABLE = re.compile(r"[^\x00-\x1f\x7f]+")


class Unauthenticated(Exception):
    """The request carries no usable verified identity; answered with 401."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Verified(NamedTuple):  # a tenth of a dataclass's cost to create, at import
    """Who is calling, read once per request (``formwork.aws.http.precheck``): the principal and
    the verified claims it was read from (for ``context_from_claims``)."""

    principal: str
    claims: Mapping[str, Any]


def verify(event: Mapping[str, Any], tenant_claim: str | None) -> Verified:
    """The principal of an API Gateway HTTP API (payload v2) event and its verified claims,
    or ``Unauthenticated`` as ``principal_from_event`` says."""
    claims = _claims(event)
    return Verified(_principal(claims, tenant_claim), claims)


def principal_from_event(event: Mapping[str, Any], tenant_claim: str | None) -> str:
    """The verified principal of an API Gateway HTTP API (payload v2) event, or raise
    ``Unauthenticated``: no verified claims, a missing or malformed ``sub``, or, when
    ``tenant_claim`` names one, a missing, empty or malformed tenant."""
    return _principal(_claims(event), tenant_claim)


def _principal(claims: Mapping[str, Any], tenant_claim: str | None) -> str:
    sub = claims.get("sub")
    if not isinstance(sub, str) or not _SUB.fullmatch(sub):
        raise Unauthenticated("the token's sub claim is missing or malformed")
    if tenant_claim is None:
        return sub
    tenant = claims.get(tenant_claim)
    if tenant is None or tenant == "":
        raise Unauthenticated(
            f"the token carries no {tenant_claim} claim: this API needs it to know the "
            "caller's tenant"
        )
    if not isinstance(tenant, str) or not _TENANT.fullmatch(tenant):
        raise Unauthenticated(f"the token's {tenant_claim} claim is malformed")
    return f"{tenant}/{sub}"


def context_from_event(
    event: Mapping[str, Any], claims: Sequence[tuple[str, str]]
) -> tuple[tuple[str, str], ...]:
    """The caller's context defaults: for each ``(fact key, claim name)`` of ``claims``, the
    claim's value from the verified claims, when it is a string of 1 to
    ``MAX_CONTEXT_CLAIM`` printable characters (trimmed). Anything else, and an event with no
    verified claims at all, gives nothing for that key; this never raises."""
    if not claims:
        return ()
    try:
        verified = _claims(event)
    except Unauthenticated:
        return ()
    return context_from_claims(verified, claims)


def context_from_claims(
    verified: Mapping[str, Any], claims: Sequence[tuple[str, str]]
) -> tuple[tuple[str, str], ...]:
    """``context_from_event`` on claims already read and verified (``Verified.claims``)."""
    found: dict[str, str] = {}
    for key, claim in claims:
        value = verified.get(claim)
        if not isinstance(value, str):
            continue
        value = value.strip()
        if len(value) <= MAX_CONTEXT_CLAIM and _PRINTABLE.fullmatch(value):
            found.setdefault(key, value)
    return tuple(found.items())


def _claims(event: Mapping[str, Any]) -> Mapping[str, Any]:
    """The verified claims, read with Powertools' event data class (``APIGatewayProxyEventV2``:
    ``request_context.authorizer.jwt_claim``); none, or an event of another shape, is
    ``Unauthenticated``. The data class is already loaded with the handler's resolver, so it
    costs no import; it assumes the shape, hence the guard."""
    try:
        claims: Any = APIGatewayProxyEventV2(
            cast("dict[str, Any]", event)
        ).request_context.authorizer.jwt_claim
    except (KeyError, AttributeError, TypeError):
        raise Unauthenticated("the request carries no verified token") from None
    if not isinstance(claims, Mapping) or not claims:
        raise Unauthenticated("the request carries no verified token")
    return claims
