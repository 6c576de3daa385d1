"""What every page route shares: reading an HTML form post, and the one refusal.

* ``form_post``: the fields of a browser's ``application/x-www-form-urlencoded`` post, or None
  for anything a page's own form never sends (another content type, too large, not UTF-8,
  malformed, a field it does not take or one sent twice). The form page, the fact editor and
  the approver's queue all read their posts here, each with its own size and field limits;
  a None is the refusal page, like a bad cookie.
* ``refused``: the one refusal page (``render.refusal``), the reason logged and never shown.
* ``checked_post``: a page's post checked in the order every page post is (``same_origin``,
  the session, ``form_post``, the CSRF token), as a ``Post`` or the refusal page.
* ``same_origin``, ``plain_http``, ``base_url``: where a request came from and where the API
  is reached (the local stack over plain HTTP on a loopback host, else https).

Jinja2 loads with the first page rendered, not with this module.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from formwork.aws.pages import access
from formwork.aws.routing import logger

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler import Response

    from formwork.bootstrap import App

FORM_TYPE = "application/x-www-form-urlencoded"
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]", "::1"})
NONCE = re.compile(r"[A-Za-z0-9_-]{16,64}")
"""A nonce a page renders into a form as the post's idempotency key."""


def form_post(
    event: Mapping[str, Any],
    *,
    max_bytes: int,
    max_fields: int,
    fields: Collection[str] | None = None,
    repeated: str | None = None,
) -> tuple[dict[str, str], list[str]] | None:
    """An HTML form post's fields (each once) and the entries of its ``repeated`` field (the
    one field that may come several times), or None: another content type, over ``max_bytes``
    (decoded) or ``max_fields`` pairs, not UTF-8, malformed, a field outside ``fields`` (when
    given) or one sent twice."""
    headers = {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items()}
    if headers.get("content-type", "").split(";")[0].strip().lower() != FORM_TYPE:
        return None
    raw = event.get("body") or ""
    if not isinstance(raw, str) or len(raw) > 2 * max_bytes:
        return None
    try:
        if event.get("isBase64Encoded"):
            raw = base64.b64decode(raw, validate=True).decode("utf-8")
        if len(raw.encode("utf-8")) > max_bytes:
            return None
        pairs = parse_qsl(
            raw,
            keep_blank_values=True,
            strict_parsing=bool(raw),
            errors="strict",
            max_num_fields=max_fields,
        )
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    single: dict[str, str] = {}
    values: list[str] = []
    for name, text in pairs:
        if repeated is not None and name == repeated:
            values.append(text)
        elif (fields is None or name in fields) and name not in single:
            single[name] = text
        else:
            return None
    return single, values


def refused(why: str) -> Response[str]:
    """The one refusal page; ``why`` goes to the log only."""
    from formwork.aws.pages import render

    logger.info("page refused", extra={"reason": why})
    return render.refusal()


@dataclass(frozen=True, slots=True)
class Post:
    """A page's post that passed the checks every page post takes (``checked_post``)."""

    session: access.Grant
    fields: dict[str, str]
    """The form's fields, each once."""
    values: list[str]
    """The entries of the one field that may come several times (the form page's ``value``)."""


def checked_post(
    app: App,
    event: dict[str, Any],
    session_of: Callable[[], access.Grant | None],
    *,
    max_bytes: int,
    max_fields: int,
    fields: Collection[str] | None = None,
    repeated: str | None = None,
) -> Post | Response[str]:
    """A page's post, checked in the order every page post is, cheapest first: it comes from
    this API's own pages (``same_origin``), carries a valid session (``session_of``), is a
    small form of the fields the page sends (``posts.form_post``), with the session's CSRF
    token. Anything else is the one refusal page (a ``Response``); nothing is read or written
    before these pass."""
    if not same_origin(event):
        return refused("cross_site_post")
    session = session_of()
    if session is None:
        return refused("no_session")
    posted = form_post(
        event, max_bytes=max_bytes, max_fields=max_fields, fields=fields, repeated=repeated
    )
    if posted is None:
        return refused("bad_form")
    try:
        access.check_csrf(access.page_key(app), session, posted[0].get("csrf_token"))
    except access.Refused:
        return refused("bad_csrf")
    return Post(session, *posted)


def same_origin(event: dict[str, Any]) -> bool:
    """Whether a post comes from this API's own pages. A browser's ``Sec-Fetch-Site`` decides
    when it sends one (a page cannot set it): only ``same-origin`` is taken. Without it (an
    older browser, a plain HTTP client) an ``Origin`` header, when sent, must be this API's
    own (``null``, as a sandboxed frame sends, is not)."""
    headers = _headers(event)
    site = headers.get("sec-fetch-site")
    if site is not None:
        return site == "same-origin"
    origin = headers.get("origin")
    return origin is None or origin == base_url(event)


def _headers(event: dict[str, Any]) -> dict[str, str]:
    headers = event.get("headers") or {}
    return {str(k).lower(): str(v) for k, v in headers.items()}


def _host(event: dict[str, Any]) -> str:
    return _headers(event).get("host", "")


def plain_http(event: dict[str, Any]) -> bool:
    """Whether the request came over plain HTTP to a loopback host: the local stack. Anywhere
    else (API Gateway is HTTPS only) links are https and cookies Secure."""
    host = _host(event).rsplit(":", 1)[0] if not _host(event).startswith("[") else "[::1]"
    return _headers(event).get("x-forwarded-proto") == "http" and host.lower() in LOOPBACK_HOSTS


def base_url(event: dict[str, Any]) -> str:
    """Where the API is reached: the local stack's loopback address as the request named it,
    else ``https://`` and the domain API Gateway says it was called on."""
    if plain_http(event):
        return "http://" + _host(event)
    context = event.get("requestContext") or {}
    return "https://" + str(context.get("domainName") or _host(event))
