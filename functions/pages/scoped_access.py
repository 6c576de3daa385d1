"""Principal-scoped page tokens (``formwork.aws.pages.access`` has the scheme).

Pages that show a principal's things, not one instance: the fact editor (their memory) and
the approver's queue (the approvals they may decide). Their links and sessions name no
conversation and no instance (both empty), and each page signs under labels of its own, so a
form's link or cookie is never taken for one of these, nor one of these for another's. The
same ledger spends their links once; each has a cookie of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from formwork.aws.pages.tokens import Grant, Refused, _sign, _verify, drawn


@dataclass(frozen=True, slots=True)
class Scope:
    """A principal-scoped page's purpose labels and session cookie."""

    link: bytes
    session: bytes
    cookie: str


MEMORY = Scope(
    b"formwork memory page link v1\n", b"formwork memory page session v1\n", "fwp_memory"
)
"""The fact editor (``formwork.aws.memory_pages``)."""
APPROVALS = Scope(
    b"formwork approvals page link v1\n", b"formwork approvals page session v1\n", "fwp_approvals"
)
"""The approver's queue (``formwork.aws.approval_pages``): its grants carry the roles the
approver's token held at minting, and a link may name one approval (``target``)."""
MEMORY_COOKIE = MEMORY.cookie
"""The fact editor's session cookie (a form's are ``fwp_`` and 24 hex digits)."""


def mint_scoped_link(
    key: bytes,
    scope: Scope,
    principal: str,
    expires_at: int,
    roles: tuple[str, ...] = (),
    target: str = "",
    nonce: str | None = None,
) -> str:
    """A link to ``principal``'s page of ``scope`` (holding ``roles``; opening ``target``),
    whose id is ``nonce`` (None: one drawn here)."""
    grant = Grant(principal, "", "", expires_at, drawn(nonce), roles, target)
    return _sign(key, scope.link, grant)


def read_scoped_link(key: bytes, scope: Scope, token: str, now: float) -> Grant:
    """The grant of a link to a page of ``scope`` (not yet claimed), or ``Refused``."""
    return _scoped(_verify(key, scope.link, token, now))


def open_scoped_session(
    key: bytes, scope: Scope, link: Grant, expires_at: int, nonce: str | None = None
) -> str:
    """The session cookie's value for the bearer of a claimed ``link`` of ``scope``: its
    principal and roles, a new session id, ``nonce`` (None: one drawn here; the link's target
    only picks the first page)."""
    grant = Grant(link.principal, "", "", expires_at, drawn(nonce), link.roles)
    return _sign(key, scope.session, grant)


def read_scoped_session(key: bytes, scope: Scope, value: str, now: float) -> Grant:
    """The session of ``scope`` a cookie's value carries, or ``Refused``."""
    return _scoped(_verify(key, scope.session, value, now))


def read_memory_link(key: bytes, token: str, now: float) -> Grant:
    """The grant of a fact editor link (not yet claimed), or ``Refused``."""
    return read_scoped_link(key, MEMORY, token, now)


def read_memory_session(key: bytes, value: str, now: float) -> Grant:
    """The fact editor session a cookie's value carries, or ``Refused``."""
    return read_scoped_session(key, MEMORY, value, now)


def _scoped(grant: Grant) -> Grant:
    """A principal-scoped grant names no conversation and no instance: anything else is
    refused."""
    if grant.conversation_id or grant.instance_id:
        raise Refused
    return grant
