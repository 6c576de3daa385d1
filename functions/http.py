"""What is checked before routing, and the JSON error responses.

API Gateway hands the function the request as it arrived. Before Powertools routes and
validates it, ``precheck`` refuses what no route should see, cheapest check first:

1. no verified principal (401),
2. for a method that carries a body (``BODY_METHODS``: ``POST`` and ``PUT``, every method the
   API serves with one): a content type other than JSON (415), a body over the size limit
   (413), a body that is not UTF-8 JSON, or JSON nested too deep, with non-finite numbers or
   unpaired surrogates (400 ``malformed_json``), or with a key twice in one object (400
   ``duplicate_key``). A ``POST`` whose body is optional (``BODY_OPTIONAL``: a publish, a
   fact's confirmation) takes a request with no body at all as ``{}``, whatever its content
   type.

A body that passes is handed on decoded (never base64) and labelled ``application/json``, so
the resolver parses exactly what was checked, and no route checks a body again. The webhook
route (``is_webhook``) has no principal and its signature is checked on the raw body:
``precheck_webhook`` checks its content type and size only (it is here, not in
``formwork.aws.webhooks``, so that telling a webhook request apart loads none of the webhook
route). The page routes (``is_page``: ``GET /pages/...``, ``POST /pages/enter/{token}`` and
the fact editor's posts) have no principal either: a browser carries a signed link or a
session cookie, which they check themselves (``precheck_page`` checks the event's shape
only). Every refusal is an ``ApiError``; ``error_response`` turns one into the payload v2
response API Gateway expects, with a JSON body ``{"error": code, "message": ...}``
(both ``formwork.aws.api_errors``').

``parse_json_body`` is the one JSON parser for request bodies (any route that reads JSON
itself, such as the webhook route, uses it too; ``formwork.aws.json_body``). ``log_hash``
(``formwork.aws.log_hash``) is what the logs carry instead of a caller-chosen id such as a
conversation id, which may well be an e-mail address. Every name of those three modules stays
importable from here.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from formwork.aws.api_errors import (
    JSON_HEADERS,
    ApiError,
    error_body,
    error_response,
    unauthorized,
)
from formwork.aws.auth import Unauthenticated, Verified, verify
from formwork.aws.json_body import MAX_JSON_DEPTH, _check_json, parse_json_body
from formwork.aws.log_hash import (
    LOCAL_LOG_HASH_KEY,
    LOG_HASH_KEY_VARIABLE,
    MIN_LOG_HASH_KEY_CHARS,
    _log_hash_key,
    log_hash,
)
from formwork.config import Settings

__all__ = [
    "BODY_METHODS",
    "BODY_OPTIONAL",
    "JSON_HEADERS",
    "LOCAL_LOG_HASH_KEY",
    "LOG_HASH_KEY_VARIABLE",
    "MAX_JSON_DEPTH",
    "MIN_LOG_HASH_KEY_CHARS",
    "PAGE_POSTS",
    "ApiError",
    "Checked",
    "CheckedBodies",
    "_check_json",
    "_header",
    "_log_hash_key",
    "error_body",
    "error_response",
    "is_page",
    "is_webhook",
    "log_hash",
    "parse_json_body",
    "precheck",
    "precheck_page",
    "precheck_webhook",
    "unauthorized",
]

BODY_METHODS = frozenset({"POST", "PUT"})
"""The methods whose body is checked before routing: every method a route takes a body with."""

BODY_OPTIONAL = (
    r"/builder/forms/[^/]+/publish|/memory/facts/[^/]+/confirm|/memory/page-links"
    r"|/approvals/page-links|/builder/forms/[^/]+/page-links"
    r"|/operator/hooks/[^/]+/retry|/operator/relay/failures/redrive|/operator/forms/[^/]+/migrate"
)
"""``POST`` paths whose body may be left out (read as ``{}``): publishing and confirming a fact
are buttons, and a link to the caller's fact editor or approver's queue names nothing. A
pattern, compiled (by ``re``, and kept) when a bodiless ``POST`` first needs it: a tool call never
does."""

PAGE_POSTS = (
    r"/pages/forms/[^/]+|/pages/memory/(?:switch|facts/[^/]+/(?:correct|delete))"
    r"|/pages/approvals/[^/]+|/pages/canvas/[^/]+"
)
"""The form page's posts (``formwork.aws.form_page``), the fact editor's
(``formwork.aws.memory_pages``), an approver's decision (``formwork.aws.approval_pages``) and the
builder's canvas's (``formwork.aws.canvas_pages``): a browser's, with its session cookie and CSRF
token instead of a bearer token. Each starts with ``/pages/``; compiled when a ``POST`` there
first needs it (a tool call never does)."""


class Checked(NamedTuple):  # a tenth of a dataclass's cost to create, at import
    """A request that passed the checks before routing, with what they read, so that nothing
    is read twice: the event to route, who is calling (``None`` on the webhook and page
    routes, which ask for no principal), and the body as parsed. ``body_text`` is the very
    string the event to route carries as its body (``None`` when no body was parsed)."""

    event: dict[str, Any]
    verified: Verified | None = None
    body_text: str | None = None
    body: Any = None


class CheckedBodies:
    """The resolver's JSON body deserializer (Powertools' ``json_body_deserializer``), so a
    request body is parsed once: handed the very text ``precheck`` parsed (the same string
    object, which ``hold`` keeps), it answers the value parsed then; any other text is parsed
    as Powertools' default would (``json.loads``). One request at a time, as a Lambda
    execution environment serves them: ``hold`` before routing, ``release`` after."""

    def __init__(self) -> None:
        self._held: tuple[str, Any] | None = None

    def hold(self, checked: Checked) -> None:
        text = checked.body_text
        self._held = None if text is None else (text, checked.body)

    def release(self) -> None:
        self._held = None

    def __call__(self, text: str) -> Any:
        held = self._held
        if held is not None and held[0] is text:
            return held[1]
        return json.loads(text)


def precheck(event: Mapping[str, Any], settings: Settings) -> Checked:
    """The event to route (its body decoded), with its principal and parsed body, or an
    ``ApiError`` for what no route may see."""
    if not _well_formed(event):
        raise ApiError(400, "bad_request", "not an API Gateway HTTP API (payload v2) event")
    try:
        verified = verify(event, settings.tenant_claim)
    except Unauthenticated as exc:
        raise unauthorized(exc.message) from None
    method = _method(event)
    if method not in BODY_METHODS:
        return Checked(dict(event), verified)
    if (
        method == "POST"
        and event.get("body") in (None, "")
        and re.fullmatch(BODY_OPTIONAL, event["rawPath"])
    ):
        text = "{}"
    else:
        _check_content_type(_header(event, "content-type"))
        text = _body_text(event, settings.max_body_bytes)
    body = parse_json_body(text)
    return Checked(_as_json_event(event, text), verified, text, body)


def is_webhook(event: Mapping[str, Any]) -> bool:
    """Whether the event is a ``POST /webhooks/{source}`` request."""
    path = event.get("rawPath")
    if _method(event) != "POST" or not isinstance(path, str):
        return False
    parts = path.split("/")
    return len(parts) == 3 and parts[:2] == ["", "webhooks"]


def is_page(event: Mapping[str, Any]) -> bool:
    """Whether the event is a ``GET /pages/...`` request, the ``POST /pages/enter/{token}``
    that opens a page link, or one of the pages' posts (``PAGE_POSTS``): a browser's, with no
    bearer token (the page routes check their own link or session cookie and CSRF token,
    ``formwork.aws.page_routes``, ``formwork.aws.form_page``, ``formwork.aws.memory_pages``,
    ``formwork.aws.approval_pages``). No other post skips the JWT."""
    path = event.get("rawPath")
    if not isinstance(path, str):
        return False
    method = _method(event)
    if method == "GET":
        return path.startswith("/pages/")
    parts = path.split("/")
    return method == "POST" and (
        (len(parts) == 4 and parts[:3] == ["", "pages", "enter"] and bool(parts[3]))
        or (path.startswith("/pages/") and re.fullmatch(PAGE_POSTS, path) is not None)
    )


def precheck_page(event: Mapping[str, Any]) -> Checked:
    """The page event to route: well formed, no principal asked for, no body read."""
    if not _well_formed(event):
        raise ApiError(400, "bad_request", "not an API Gateway HTTP API (payload v2) event")
    return Checked(dict(event))


def precheck_webhook(event: Mapping[str, Any], settings: Settings) -> Checked:
    """The webhook event to route, body decoded; no principal is asked for, and the body is
    not parsed here (the route checks the signature on these exact bytes, then parses)."""
    if not _well_formed(event):
        raise ApiError(400, "bad_request", "not an API Gateway HTTP API (payload v2) event")
    _check_content_type(_header(event, "content-type"))
    return Checked(_as_json_event(event, _body_text(event, settings.max_body_bytes)))


def _as_json_event(event: Mapping[str, Any], text: str) -> dict[str, Any]:
    """The event with its body decoded to ``text`` and its content type spelled exactly
    "application/json", the only spelling the resolver knows."""
    headers = {
        k: v
        for k, v in (event.get("headers") or {}).items()
        if not (isinstance(k, str) and k.lower() == "content-type")
    }
    headers["content-type"] = "application/json"
    return {**event, "headers": headers, "body": text, "isBase64Encoded": False}


def _well_formed(event: Mapping[str, Any]) -> bool:
    """The fields routing reads have the types API Gateway gives them."""
    context = event.get("requestContext")
    http = context.get("http") if isinstance(context, Mapping) else None
    query = event.get("queryStringParameters")
    return (
        isinstance(event.get("rawPath"), str)
        and isinstance(http, Mapping)
        and isinstance(http.get("method"), str)
        and _strings(event.get("headers", {}))
        and (query is None or _strings(query))
        and isinstance(event.get("rawQueryString", ""), str)
    )


def _strings(mapping: object) -> bool:
    """A mapping of strings to strings, as API Gateway gives headers and query parameters
    (a null value there would reach the resolver's parsing of them)."""
    return isinstance(mapping, Mapping) and all(
        isinstance(key, str) and isinstance(value, str) for key, value in mapping.items()
    )


def _method(event: Mapping[str, Any]) -> str:
    context = event.get("requestContext")
    http = context.get("http") if isinstance(context, Mapping) else None
    method = http.get("method") if isinstance(http, Mapping) else None
    return method.upper() if isinstance(method, str) else ""


def _header(event: Mapping[str, Any], name: str) -> str | None:
    headers = event.get("headers")
    if not isinstance(headers, Mapping):
        return None
    for key, value in headers.items():
        if isinstance(key, str) and key.lower() == name:
            return value if isinstance(value, str) else None
    return None


def _check_content_type(value: str | None) -> None:
    media, *params = (value or "").split(";")
    media = media.strip().lower()
    json_like = media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )
    charset_ok = all(
        p.strip().lower() in ("charset=utf-8", "charset=utf8", 'charset="utf-8"')
        for p in params
        if p.strip().lower().startswith("charset")
    )
    if not (json_like and charset_ok):
        shown = (value or "none")[:100]
        raise ApiError(
            415,
            "unsupported_media_type",
            f"send the body as application/json (UTF-8); the content type was {shown!r}",
        )


def _body_text(event: Mapping[str, Any], limit: int) -> str:
    body = event.get("body")
    if body is None:
        body = ""
    if not isinstance(body, str):
        raise ApiError(400, "bad_request", "the request body is not text")
    too_large = ApiError(
        413, "payload_too_large", f"the request body is over the {limit}-byte limit"
    )
    if event.get("isBase64Encoded") is True:
        if len(body) > (limit + 2) // 3 * 4 + 4:
            raise too_large
        try:
            raw = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            raise ApiError(400, "bad_request", "the request body is not valid base64") from None
    else:
        if len(body) > limit:
            raise too_large
        try:
            raw = body.encode("utf-8")
        except UnicodeEncodeError:
            raise ApiError(400, "malformed_json", "the request body is not UTF-8") from None
    if len(raw) > limit:
        raise too_large
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ApiError(400, "malformed_json", "the request body is not UTF-8") from None
