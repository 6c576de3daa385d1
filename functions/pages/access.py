"""Who may see a page: signed page links, the session cookie they are exchanged for, CSRF tokens.

A browser cannot carry the API's bearer token, so access to a page goes in three moves
(``docs/pages.md`` has the sequence):

1. an authenticated API call (``POST /conversations/{id}/page-links``) mints a **page link**:
   ``/pages/enter/<token>``, the token naming one instance, one principal, its conversation,
   an expiry (``FORMWORK_PAGE_LINK_MINUTES``, 15 by default) and a random link id;
2. opening it shows an entry page (nothing spent); its button's post, from this API's own
   page, exchanges the token, once, for a **session cookie** bound to the same principal
   and instance (``FORMWORK_PAGE_SESSION_MINUTES``, 60 by default): the link id is claimed in
   the ``PageLinkLedger``, so a second exchange of the same link is refused;
3. every page request carries the cookie, checked before anything is read.

Tokens and cookies are ``v1.<payload>.<mac>``: the payload is compact JSON, base64url, and the
MAC is HMAC-SHA256 over a purpose label and the encoded payload, under the page key. The label
differs for links and sessions, so a link can never be replayed as a cookie nor the reverse.
The key is ``FORMWORK_PAGE_KEY`` (local and development), or the Secrets Manager secret
``FORMWORK_PAGE_KEY_SECRET_ID`` names (a deployment: ``template.yaml`` generates one); with
neither, outside Lambda, the public local key ``LOCAL_PAGE_KEY`` (as ``LOG_HASH_KEY`` has),
and inside Lambda a ``ConfigError``: a deployment never signs with a public key.

The CSRF token of a session is an HMAC of its session id under the page key (its own label):
rendered into every form as a hidden input, checked by ``check_csrf`` on every post. A
forged cookie cannot bring a matching token, and another session's token does not match.

Only the stdlib (``hmac``, ``hashlib``, ``secrets``, ``base64``): the scheme is a dozen lines,
and a signing library would be one more dependency in the artifact for no less code here.

The tokens themselves are ``formwork.aws.pages.tokens``' (pure: a key, a time), the fact editor's
and the approver's queue's ``formwork.aws.pages.scoped_access``'; this module holds the key, the
settings and what reads a request's cookie, and every name of the two stays importable here.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from formwork.aws.pages.scoped_access import (
    APPROVALS,
    MEMORY,
    MEMORY_COOKIE,
    Scope,
    _scoped,
    mint_scoped_link,
    open_scoped_session,
    read_memory_link,
    read_memory_session,
    read_scoped_link,
    read_scoped_session,
)
from formwork.aws.pages.tokens import (
    _CSRF,
    _LINK,
    _SESSION,
    _TOKEN,
    ID_BYTES,
    MAX_TOKEN_CHARS,
    Grant,
    Refused,
    _b64,
    _mac,
    _sign,
    _unb64,
    _verify,
    check_csrf,
    cookie_name,
    cookie_value,
    csrf_token,
    drawn,
    mint_link,
    open_session,
    read_link,
    read_session,
)
from formwork.bootstrap import App
from formwork.config import ConfigError, invalid

if TYPE_CHECKING:  # the storage package (with the engine's models) loads with the first page
    from forms.storage.page_links import PageLinkLedger

__all__ = [
    "APPROVALS",
    "DEFAULT_LINK_MINUTES",
    "DEFAULT_SESSION_MINUTES",
    "ID_BYTES",
    "KEY_REFRESH_SECONDS",
    "KEY_SECRET_VARIABLE",
    "KEY_VARIABLE",
    "LINK_MINUTES_VARIABLE",
    "LOCAL_PAGE_KEY",
    "MAX_MINUTES",
    "MAX_TOKEN_CHARS",
    "MEMORY",
    "MEMORY_COOKIE",
    "MIN_KEY_CHARS",
    "POST_KEY_BYTES",
    "SESSION_MINUTES_VARIABLE",
    "_CSRF",
    "_LINK",
    "_SESSION",
    "_TOKEN",
    "Grant",
    "PageSettings",
    "Refused",
    "Scope",
    "_b64",
    "_mac",
    "_scoped",
    "_sign",
    "_unb64",
    "_verify",
    "check_csrf",
    "cookie_name",
    "cookie_value",
    "csrf_token",
    "drawn",
    "ledger",
    "mint_link",
    "mint_scoped_link",
    "open_scoped_session",
    "open_session",
    "page_key",
    "read_link",
    "read_memory_link",
    "read_memory_session",
    "read_scoped_link",
    "read_scoped_session",
    "read_session",
    "scoped_session",
    "session_for",
]

LINK_MINUTES_VARIABLE = "FORMWORK_PAGE_LINK_MINUTES"
SESSION_MINUTES_VARIABLE = "FORMWORK_PAGE_SESSION_MINUTES"
KEY_VARIABLE = "FORMWORK_PAGE_KEY"
KEY_SECRET_VARIABLE = "FORMWORK_PAGE_KEY_SECRET_ID"
DEFAULT_LINK_MINUTES = 15
DEFAULT_SESSION_MINUTES = 60
MAX_MINUTES = 24 * 60
LOCAL_PAGE_KEY = "formwork-local-page-key-public-never-deploy"
"""The key outside Lambda when no key is configured: public, for the local stack only."""
MIN_KEY_CHARS = 32
KEY_REFRESH_SECONDS = 300
"""How long a key read from Secrets Manager is used before it is read again (a rotated key
takes over within this long; links signed with the old one are then refused)."""
POST_KEY_BYTES = 16
"""The random bytes of a page form's post key (what makes a post sent twice apply once)."""


@dataclass(frozen=True, slots=True)
class PageSettings:
    """How long links and sessions last, in minutes."""

    link_minutes: int = DEFAULT_LINK_MINUTES
    session_minutes: int = DEFAULT_SESSION_MINUTES

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> PageSettings:
        env = os.environ if environ is None else environ

        def minutes(name: str, default: int) -> int:
            raw = env.get(name, "").strip()
            if not raw:
                return default
            if not re.fullmatch(r"\d{1,5}", raw) or not 1 <= int(raw) <= MAX_MINUTES:
                invalid(name, raw, f"a whole number of minutes from 1 to {MAX_MINUTES}")
            return int(raw)

        return cls(
            minutes(LINK_MINUTES_VARIABLE, DEFAULT_LINK_MINUTES),
            minutes(SESSION_MINUTES_VARIABLE, DEFAULT_SESSION_MINUTES),
        )


# ---------------------------------------------------------------------------- the key


def page_key(app: App) -> bytes:
    """The key pages are signed with (see the module's docstring for where it comes from)."""
    configured = os.environ.get(KEY_VARIABLE, "").strip()
    if configured:
        if len(configured) < MIN_KEY_CHARS:
            raise ConfigError(
                f"{KEY_VARIABLE} is too short: expected at least {MIN_KEY_CHARS} characters"
            )
        return configured.encode("utf-8")
    secret_id = os.environ.get(KEY_SECRET_VARIABLE, "").strip()
    if secret_id:
        return _secret_key(app, secret_id)
    if os.environ.get("AWS_LAMBDA_FUNCTION_NAME") and not os.environ.get("AWS_SAM_LOCAL"):
        raise ConfigError(
            f"neither {KEY_VARIABLE} nor {KEY_SECRET_VARIABLE} is set: pages need a secret key "
            "(template.yaml generates one in Secrets Manager)"
        )
    return LOCAL_PAGE_KEY.encode("utf-8")


def _secret_key(app: App, secret_id: str) -> bytes:
    value = app.secrets_provider().get(secret_id, max_age=KEY_REFRESH_SECONDS)
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value or "")
    if len(text.strip()) < MIN_KEY_CHARS:
        raise ConfigError(
            f"the secret {KEY_SECRET_VARIABLE} names holds no key of at least "
            f"{MIN_KEY_CHARS} characters"
        )
    return text.strip().encode("utf-8")


def session_for(app: App, event: Mapping[str, Any], instance_id: str) -> Grant | None:
    """The valid session for ``instance_id`` the request ``event`` carries, or None."""
    value = cookie_value(event.get("cookies"), cookie_name(instance_id))
    if value is None:
        return None
    try:
        return read_session(page_key(app), value, instance_id, app.now())
    except Refused:
        return None


# ---------------------------------------------------------------------------- the ledger


def ledger(app: App) -> PageLinkLedger:
    """The App's page-link ledger (``App.page_links``: beside the App's other stores, on the
    forms table or in memory)."""
    return app.page_links


# ---------------------------------------------------------------------------- principal-scoped


def scoped_session(app: App, event: Mapping[str, Any], scope: Scope) -> Grant | None:
    """The valid session of ``scope`` the request ``event`` carries, or None."""
    value = cookie_value(event.get("cookies"), scope.cookie)
    if value is None:
        return None
    try:
        return read_scoped_session(page_key(app), scope, value, app.now())
    except Refused:
        return None
