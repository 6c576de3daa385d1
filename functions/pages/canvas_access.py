"""Who may see the builder's canvas: its links and its session cookie (``docs/pages.md``,
"The builder's canvas").

A canvas shows one tenant's draft to one person. Its tokens are the page tokens of
``formwork.aws.pages.access`` (``v1.<payload>.<mac>``, HMAC-SHA256 under the page key), signed
under purpose labels of their own, so a form's or a fact editor's link or cookie is never
taken for a canvas's, nor the reverse. Their fields name:

* the principal (``p``; its tenant is its ``tenant/`` part),
* the draft (``i``: the form id) and, in ``c``, the tenant and whether the principal held the
  publisher role when the link was minted (``<tenant>#publisher`` or ``<tenant>#person``),
* the expiry and a random id (``x``, ``n``).

The same ledger spends a link once (``access.ledger``); the session cookie is ``fwc_`` and 24
hex digits of the form id, one per draft; its CSRF token is ``access.csrf_token`` of the
session (``CanvasGrant.grant``).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from formwork.aws.pages.access import (
    Grant,
    Refused,
    _sign,
    _verify,
    cookie_value,
    drawn,
    page_key,
)
from formwork.bootstrap import App

_LINK = b"formwork canvas page link v1\n"
_SESSION = b"formwork canvas page session v1\n"
_ROLES = {"publisher": True, "person": False}


@dataclass(frozen=True, slots=True)
class CanvasGrant:
    """What a canvas link or session lets its bearer do: see ``tenant``'s draft of
    ``form_id`` as ``principal``, select, undo and redo on it; publish it when
    ``publisher``."""

    principal: str
    tenant: str
    form_id: str
    publisher: bool
    expires_at: int
    nonce: str

    @property
    def grant(self) -> Grant:
        """As a page grant: what it is signed as, and what its CSRF token is derived from."""
        held = "publisher" if self.publisher else "person"
        return Grant(
            self.principal, f"{self.tenant}#{held}", self.form_id, self.expires_at, self.nonce
        )


def _canvas(grant: Grant) -> CanvasGrant:
    tenant, _, held = grant.conversation_id.rpartition("#")
    if held not in _ROLES or not grant.instance_id:
        raise Refused
    from forms.app.catalog import tenant_key

    if not hmac.compare_digest(tenant.encode(), tenant_key(grant.principal).encode()):
        raise Refused
    return CanvasGrant(
        grant.principal, tenant, grant.instance_id, _ROLES[held], grant.expires_at, grant.nonce
    )


def mint_link(
    key: bytes,
    principal: str,
    tenant: str,
    form_id: str,
    publisher: bool,
    expires_at: int,
    nonce: str | None = None,
) -> str:
    """A link to ``tenant``'s draft of ``form_id`` on the canvas, for ``principal``; its id
    is ``nonce`` (the App's ``new_token``; None: one drawn here)."""
    grant = CanvasGrant(principal, tenant, form_id, publisher, expires_at, drawn(nonce))
    return _sign(key, _LINK, grant.grant)


def read_link(key: bytes, token: str, now: float) -> CanvasGrant:
    """The grant of a canvas link (not yet claimed), or ``Refused``."""
    return _canvas(_verify(key, _LINK, token, now))


def open_session(key: bytes, link: CanvasGrant, expires_at: int, nonce: str | None = None) -> str:
    """The session cookie's value for the bearer of a claimed canvas ``link``: the same
    principal, tenant, draft and role, a new session id (``nonce``; None: one drawn here)."""
    session = CanvasGrant(
        link.principal, link.tenant, link.form_id, link.publisher, expires_at, drawn(nonce)
    )
    return _sign(key, _SESSION, session.grant)


def read_session(key: bytes, value: str, form_id: str, now: float) -> CanvasGrant:
    """The canvas session a cookie's value carries for ``form_id``, or ``Refused``."""
    grant = _canvas(_verify(key, _SESSION, value, now))
    if not hmac.compare_digest(grant.form_id.encode(), form_id.encode()):
        raise Refused
    return grant


def cookie_name(form_id: str) -> str:
    """The canvas's session cookie for a draft (a form page's are ``fwp_``)."""
    return "fwc_" + hashlib.sha256(form_id.encode("utf-8")).hexdigest()[:24]


def session_for(app: App, event: Mapping[str, Any], form_id: str) -> CanvasGrant | None:
    """The valid canvas session for ``form_id`` the request ``event`` carries, or None."""
    value = cookie_value(event.get("cookies"), cookie_name(form_id))
    if value is None:
        return None
    try:
        return read_session(page_key(app), value, form_id, app.now())
    except Refused:
        return None
