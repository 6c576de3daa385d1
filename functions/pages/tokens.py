"""The signed tokens of the pages (``formwork.aws.pages.access`` has the scheme):
``v1.<payload>.<mac>`` for a page link, a session cookie and a CSRF token of one instance, what
a valid one grants (``Grant``), and the one refusal (``Refused``). Pure: given the key and the
time, nothing read."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import secrets
from dataclasses import dataclass
from typing import Any

_LINK = b"formwork page link v1\n"
_SESSION = b"formwork page session v1\n"
_CSRF = b"formwork page csrf v1\n"
_TOKEN = re.compile(r"v1\.([A-Za-z0-9_-]{1,2048})\.([A-Za-z0-9_-]{43})")
MAX_TOKEN_CHARS = 2100
ID_BYTES = 18
"""The random bytes of a link's or a session's id (``App.new_token(ID_BYTES)``)."""


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
