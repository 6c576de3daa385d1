"""Rendering pages: the Jinja2 environment, the security headers, the refusal page, the static
files.

Templates live in ``functions/pages/templates`` and are loaded from the package
(``PackageLoader``), so the wheel and the Lambda artifact carry them; autoescaping is on for
every template, so author and user text (labels, values, notes) is always HTML-escaped, and
``{{ }}`` in such text is text, never template code (the text is a value, not a template).

Every page response carries ``SECURITY_HEADERS``: a Content Security Policy allowing no inline
script or style and nothing from another origin (the page's own script, ``static/page.js``,
may fetch from this origin only), no framing, no referrer (a page link's token
is in its URL), no MIME sniffing, no caching.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import cache
from importlib.resources import files
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.shared.cookies import Cookie
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; script-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
HTML = "text/html; charset=utf-8"
REFUSED_STATUS = 404
"""One status for every refusal: expired, altered, used, foreign, missing or forged."""

STATIC_TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}
_STATIC_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,63}\.(?:css|js)")
STATIC_CACHE = "public, max-age=31536000, immutable"
"""Static files are addressed by their content's hash (``?v=``), so they may be kept a year."""


@cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("formwork.aws.pages", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["static"] = static_url
    return env


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)


def page(
    status: int,
    body: str,
    *,
    headers: dict[str, str] | None = None,
    cookies: list[Cookie] | None = None,
) -> Response[str]:
    """An HTML response with the security headers."""
    return Response(
        status, HTML, body, headers={**SECURITY_HEADERS, **(headers or {})}, cookies=cookies
    )


def json_response(body: dict[str, Any]) -> Response[str]:
    """A small JSON answer to a page's script, with the security headers (never cached)."""
    return Response(
        200,
        "application/json",
        json.dumps(body, separators=(",", ":")),
        headers=dict(SECURITY_HEADERS),
    )


def refusal() -> Response[str]:
    """The one refusal page: the same status and body whatever was wrong."""
    return page(REFUSED_STATUS, refusal_html())


@cache
def refusal_html() -> str:
    return render("refused.html")


def redirect(location: str, cookies: list[Cookie]) -> Response[str]:
    """A 303 to ``location`` (a path on this API), setting ``cookies``."""
    return page(303, "", headers={"Location": location}, cookies=cookies)


def entry(action: str, cookies: list[Cookie] | None = None) -> Response[str]:
    """The page a valid link opens before it is spent: "Open your form" and one button that
    posts to ``action`` (the link's own path); ``cookies``: the browser's entry cookie, when
    it has none yet. The button works without script (the page's script only keeps a second
    press from posting again): fetching it (a chat app's preview) spends nothing."""
    return page(200, render("enter.html", action=action), cookies=cookies)


@cache
def static_file(name: str) -> bytes | None:
    """The bytes of a shipped static file, or None (no such file, or a name not allowed)."""
    if not _STATIC_NAME.fullmatch(name):
        return None
    found = files("formwork.aws.pages").joinpath("static", name)
    return found.read_bytes() if found.is_file() else None


@cache
def static_url(name: str) -> str:
    """The URL of a static file, versioned by its content's hash."""
    raw = static_file(name) or b""
    return f"/pages/static/{name}?v={hashlib.sha256(raw).hexdigest()[:12]}"


def static_response(name: str) -> Response[str]:
    raw = static_file(name)
    if raw is None:
        return refusal()
    suffix = name[name.rindex(".") :]
    return Response(
        200,
        STATIC_TYPES[suffix],
        raw.decode("utf-8"),
        headers={**SECURITY_HEADERS, "Cache-Control": STATIC_CACHE},
    )
