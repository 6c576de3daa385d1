"""Who is calling: the principal, from the claims API Gateway's JWT authorizer verified.

The principal is read from ``requestContext.authorizer.jwt.claims`` and nowhere else: API
Gateway puts those claims there only after it has checked the token's signature, issuer,
audience and expiry. Headers, the query string and the body are never consulted, so a request
cannot name someone else.

The principal is ``sub``, or ``tenant/sub`` when the deployment names a tenant claim
(``TENANT_CLAIM``) and the token carries it. Both parts are checked against a conservative
character set and length: they become part of storage keys, and ``/`` cannot appear in either,
so ``tenant/sub`` is unambiguous.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_SUB = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@|+=-]{0,127}")
"""Cognito (a UUID), Auth0 (``auth0|abc``), Google (digits) and dev tokens all fit."""
_TENANT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}")


class Unauthenticated(Exception):
    """The request carries no usable verified identity; answered with 401."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def principal_from_event(event: Mapping[str, Any], tenant_claim: str | None) -> str:
    """The verified principal of an API Gateway HTTP API (payload v2) event, or raise."""
    claims = _claims(event)
    sub = claims.get("sub")
    if not isinstance(sub, str) or not _SUB.fullmatch(sub):
        raise Unauthenticated("the token's sub claim is missing or malformed")
    if tenant_claim is None or claims.get(tenant_claim) is None:
        return sub
    tenant = claims[tenant_claim]
    if not isinstance(tenant, str) or not _TENANT.fullmatch(tenant):
        raise Unauthenticated(f"the token's {tenant_claim} claim is malformed")
    return f"{tenant}/{sub}"


def _claims(event: Mapping[str, Any]) -> Mapping[str, Any]:
    node: Any = event
    for key in ("requestContext", "authorizer", "jwt", "claims"):
        node = node.get(key) if isinstance(node, Mapping) else None
        if node is None:
            raise Unauthenticated("the request carries no verified token")
    if not isinstance(node, Mapping):
        raise Unauthenticated("the request carries no verified token")
    return node
