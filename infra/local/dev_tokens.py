"""The dev gateway's stand-in for API Gateway's JWT authorizer: dev tokens and the claims they
stand for (the grammar is ``formwork.infra.local.gateway``'s docstring). Anyone can mint one, which
is why the gateway that reads them listens on loopback only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from urllib.parse import quote, unquote

DEV_ISSUER = "https://formwork.local/dev"
DEV_TOKEN_TTL = 3600
DEV_TENANT = "local"
"""The tenant of a dev token that names none (``dev:<sub>``)."""
DEV_ROLES_CLAIM = "roles"
"""The claim dev-token roles go in (the local stack sets ``ROLES_CLAIM`` to it)."""
_ROLE = r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}"
_DEV_TOKEN = re.compile(
    r"^dev:(?:(?P<tenant>[A-Za-z0-9][A-Za-z0-9._@-]{0,63}):)?"
    r"(?P<sub>[A-Za-z0-9][A-Za-z0-9._@+-]{0,127})$"
)
_DEV_ROLES = re.compile(rf"{_ROLE}(?:,{_ROLE}){{0,31}}")
_DEV_CLAIM = re.compile(r"[A-Za-z][A-Za-z0-9_:./#-]{0,127}")
_DEV_VALUE = re.compile(r"[A-Za-z0-9._~:/+@%-]{1,512}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
DEV_RESERVED_CLAIMS = frozenset({"sub", "tenant", "iss", "iat", "exp"})
"""Claims a dev token cannot be given with ``;name=value``: who the caller is, and the token's
own."""
MAX_DEV_CLAIMS = 16
"""The most ``;name=value`` parts one dev token may have (roles included)."""


def dev_claims(authorization: str | None, now: float) -> dict[str, str] | None:
    """The JWT claims a dev token stands for, or None when it is missing or malformed.

    As API Gateway does with a JWT, a ``Bearer `` prefix is stripped when present. Claim values
    are strings, as in the events API Gateway sends (roles: ``"[a b]"``, see the module).
    """
    if not authorization:
        return None
    token = authorization.strip()
    if token[:7].lower() == "bearer ":
        token = token[7:].strip()
    principal, *parts = token.split(";")
    found = _DEV_TOKEN.match(principal)
    extra = _dev_extra_claims(parts)
    if found is None or extra is None:
        return None
    claims = {"sub": found["sub"], "tenant": found["tenant"] or DEV_TENANT, "iss": DEV_ISSUER}
    claims.update(extra)
    claims["iat"] = str(int(now))
    claims["exp"] = str(int(now) + DEV_TOKEN_TTL)
    return claims


def _dev_extra_claims(parts: Sequence[str]) -> dict[str, str] | None:
    """The claims a dev token's ``;name=value`` parts give, or None when one is malformed."""
    if len(parts) > MAX_DEV_CLAIMS:
        return None
    claims: dict[str, str] = {}
    for part in parts:
        name, equals, value = part.partition("=")
        if not equals or not _DEV_CLAIM.fullmatch(name) or name in DEV_RESERVED_CLAIMS:
            return None
        if name in claims:
            return None
        if name == DEV_ROLES_CLAIM:
            if not _DEV_ROLES.fullmatch(value):
                return None
            claims[name] = "[" + " ".join(value.split(",")) + "]"
            continue
        try:
            decoded = unquote(value, errors="strict") if _DEV_VALUE.fullmatch(value) else ""
        except UnicodeDecodeError:
            return None
        if not decoded or _CONTROL.search(decoded):
            return None
        claims[name] = decoded
    return claims


def dev_token(
    sub: str,
    tenant: str | None = None,
    roles: Sequence[str] = (),
    claims: Mapping[str, str] | None = None,
) -> str:
    """The ``Authorization`` header value for a dev principal (holding ``roles``, and carrying
    ``claims`` beside the ones that name it: ``{"locale": "pt-PT"}``, say)."""
    token = f"Bearer dev:{tenant}:{sub}" if tenant else f"Bearer dev:{sub}"
    token += f";{DEV_ROLES_CLAIM}={','.join(roles)}" if roles else ""
    for name, value in (claims or {}).items():
        token += f";{name}={quote(value, safe='')}"
    return token
