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
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import re
import secrets
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from formwork.bootstrap import App, build_secrets_client
from formwork.config import ConfigError, invalid

if TYPE_CHECKING:  # the storage package (with the engine's models) loads with the first page
    from forms.storage.page_links import PageLinkLedger

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

_LINK = b"formwork page link v1\n"
_SESSION = b"formwork page session v1\n"
_CSRF = b"formwork page csrf v1\n"
_TOKEN = re.compile(r"v1\.([A-Za-z0-9_-]{1,2048})\.([A-Za-z0-9_-]{43})")
MAX_TOKEN_CHARS = 2100
ID_BYTES = 18
"""The random bytes of a link's or a session's id (``App.new_token(ID_BYTES)``)."""
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


@dataclass(frozen=True, slots=True)
class Grant:
    """What a valid link or session cookie lets its bearer see: one instance of one
    principal's conversation, until ``expires_at`` (unix seconds). ``nonce`` is the link's id
    or the session's id."""

    principal: str
    conversation_id: str
    instance_id: str
    expires_at: int
    nonce: str
    roles: tuple[str, ...] = ()
    """The roles the principal's token held when the link was minted (the approver's queue
    only; signed with the rest, so a bearer cannot add one)."""
    target: str = ""
    """What a principal-scoped link opens within its page (an approval's id), or empty."""


class Refused(Exception):
    """A link or cookie that gives no access; every reason is answered the same way."""


# ---------------------------------------------------------------------------- the key

_key_lock = threading.Lock()
_providers: dict[str, Any] = {}
"""Powertools' ``SecretsProvider`` per secret id: it keeps the value ``KEY_REFRESH_SECONDS``."""


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
    from aws_lambda_powertools.utilities.parameters import SecretsProvider

    with _key_lock:
        provider = _providers.get(secret_id)
        if provider is None:
            provider = SecretsProvider(boto3_client=build_secrets_client(app.settings))
            _providers[secret_id] = provider
    value = provider.get(secret_id, max_age=KEY_REFRESH_SECONDS)
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value or "")
    if len(text.strip()) < MIN_KEY_CHARS:
        raise ConfigError(
            f"the secret {KEY_SECRET_VARIABLE} names holds no key of at least "
            f"{MIN_KEY_CHARS} characters"
        )
    return text.strip().encode("utf-8")


# ---------------------------------------------------------------------------- tokens


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(key: bytes, purpose: bytes, payload: str) -> str:
    return _b64(hmac.new(key, purpose + payload.encode("ascii"), hashlib.sha256).digest())


def _sign(key: bytes, purpose: bytes, grant: Grant) -> str:
    fields: dict[str, Any] = {
        "p": grant.principal,
        "c": grant.conversation_id,
        "i": grant.instance_id,
        "x": grant.expires_at,
        "n": grant.nonce,
    }
    if grant.roles:  # only the approver's queue carries these: other tokens stay as they were
        fields["r"] = list(grant.roles)
    if grant.target:
        fields["t"] = grant.target
    payload = _b64(json.dumps(fields, separators=(",", ":")).encode("utf-8"))
    return f"v1.{payload}.{_mac(key, purpose, payload)}"


def _verify(key: bytes, purpose: bytes, token: str, now: float) -> Grant:
    """The grant ``token`` carries, or ``Refused``: malformed, not signed with ``key`` for
    ``purpose``, or expired."""
    if len(token) > MAX_TOKEN_CHARS:
        raise Refused
    match = _TOKEN.fullmatch(token)
    if match is None:
        raise Refused
    payload, mac = match.groups()
    if not hmac.compare_digest(mac, _mac(key, purpose, payload)):
        raise Refused
    try:
        fields: Any = json.loads(_unb64(payload))
    except (binascii.Error, ValueError):
        raise Refused from None
    if not isinstance(fields, dict):
        raise Refused
    principal, conversation, instance = fields.get("p"), fields.get("c"), fields.get("i")
    expires, nonce = fields.get("x"), fields.get("n")
    if not (
        isinstance(principal, str)
        and isinstance(conversation, str)
        and isinstance(instance, str)
        and isinstance(nonce, str)
        and isinstance(expires, int)
        and not isinstance(expires, bool)
    ):
        raise Refused
    if now >= expires:
        raise Refused
    roles, target = fields.get("r", []), fields.get("t", "")
    if not isinstance(roles, list) or not isinstance(target, str):
        raise Refused
    if not all(isinstance(role, str) for role in roles):
        raise Refused
    return Grant(principal, conversation, instance, expires, nonce, tuple(roles), target)


def mint_link(
    key: bytes,
    principal: str,
    conversation_id: str,
    instance_id: str,
    expires_at: int,
    nonce: str | None = None,
) -> str:
    """A page link's token for one instance of ``principal``'s conversation; ``nonce`` is
    the link's id (the App's ``new_token``; None: one drawn here)."""
    grant = Grant(principal, conversation_id, instance_id, expires_at, drawn(nonce))
    return _sign(key, _LINK, grant)


def drawn(nonce: str | None) -> str:
    """``nonce``, or a random id of ``ID_BYTES`` when None is given."""
    return nonce if nonce is not None else secrets.token_urlsafe(ID_BYTES)


def read_link(key: bytes, token: str, now: float) -> Grant:
    """The grant of a page link's token (not yet claimed: ``enter`` does that), or ``Refused``."""
    return _verify(key, _LINK, token, now)


def open_session(key: bytes, link: Grant, expires_at: int, nonce: str | None = None) -> str:
    """The session cookie's value for the bearer of a claimed ``link``: the same principal,
    conversation and instance, a new session id (``nonce``; None: one drawn here)."""
    grant = Grant(link.principal, link.conversation_id, link.instance_id, expires_at, drawn(nonce))
    return _sign(key, _SESSION, grant)


def read_session(key: bytes, value: str, instance_id: str, now: float) -> Grant:
    """The session a cookie's value carries for ``instance_id``, or ``Refused`` (forged,
    expired, or for another instance)."""
    grant = _verify(key, _SESSION, value, now)
    if not hmac.compare_digest(grant.instance_id.encode(), instance_id.encode()):
        raise Refused
    return grant


def csrf_token(key: bytes, session: Grant) -> str:
    """The CSRF token of a session: rendered into each form as a hidden input."""
    return _mac(key, _CSRF, session.nonce + "\n" + session.instance_id)


def check_csrf(key: bytes, session: Grant, submitted: object) -> None:
    """``Refused`` unless ``submitted`` is the session's CSRF token (every page post calls
    this before it changes anything)."""
    if not isinstance(submitted, str) or not hmac.compare_digest(
        submitted.encode("ascii", "replace"), csrf_token(key, session).encode("ascii")
    ):
        raise Refused


def cookie_name(instance_id: str) -> str:
    """The session cookie's name for an instance (one cookie per instance, so pages of two
    instances open side by side; instance ids may hold characters a cookie name may not)."""
    return "fwp_" + hashlib.sha256(instance_id.encode("utf-8")).hexdigest()[:24]


def session_for(app: App, event: Mapping[str, Any], instance_id: str) -> Grant | None:
    """The valid session for ``instance_id`` the request ``event`` carries, or None."""
    value = cookie_value(event.get("cookies"), cookie_name(instance_id))
    if value is None:
        return None
    try:
        return read_session(page_key(app), value, instance_id, app.now())
    except Refused:
        return None


def cookie_value(cookies: object, name: str) -> str | None:
    """The value of cookie ``name`` among an API Gateway event's ``cookies`` (None: absent)."""
    if not isinstance(cookies, list):
        return None
    for cookie in cookies:
        if isinstance(cookie, str):
            found, sep, value = cookie.partition("=")
            if sep and found.strip() == name:
                return value.strip()
    return None


# ---------------------------------------------------------------------------- the ledger


def ledger(app: App) -> PageLinkLedger:
    """The App's page-link ledger (``App.page_links``: beside the App's other stores, on the
    forms table or in memory)."""
    return app.page_links


# ---------------------------------------------------------------------------- principal-scoped
# Pages that show a principal's things, not one instance: the fact editor (their memory) and
# the approver's queue (the approvals they may decide). Their links and sessions name no
# conversation and no instance (both empty), and each page signs under labels of its own, so a
# form's link or cookie is never taken for one of these, nor one of these for another's. The
# same ledger spends their links once; each has a cookie of its own.


@dataclass(frozen=True, slots=True)
class Scope:
    """A principal-scoped page's purpose labels and session cookie."""

    link: bytes
    session: bytes
    cookie: str


MEMORY = Scope(
    b"formwork memory page link v1\n", b"formwork memory page session v1\n", "fwp_memory"
)
"""The fact editor (``functions.memory_pages``)."""
APPROVALS = Scope(
    b"formwork approvals page link v1\n", b"formwork approvals page session v1\n", "fwp_approvals"
)
"""The approver's queue (``functions.approval_pages``): its grants carry the roles the
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


def scoped_session(app: App, event: Mapping[str, Any], scope: Scope) -> Grant | None:
    """The valid session of ``scope`` the request ``event`` carries, or None."""
    value = cookie_value(event.get("cookies"), scope.cookie)
    if value is None:
        return None
    try:
        return read_scoped_session(page_key(app), scope, value, app.now())
    except Refused:
        return None


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
