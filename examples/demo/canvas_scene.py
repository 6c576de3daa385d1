"""The builder's canvas in the demo: the person watches the draft being built.

Over HTTP only (the page is served by the API): once the builder agent's first call has made
the draft, the builder chat's backend mints a link to its canvas with the person's token
(``POST /builder/forms/{form_id}/page-links``), and the person's browser
(``formwork.examples.demo.page_visit``, plain HTTP) opens it: the entry page, the button's post, the
``303`` with the canvas's cookie, the canvas. The canvas's script polls the draft's version
(``GET /pages/canvas/{form_id}/version``) and, when it moves, fetches the canvas again; the demo
does the same after the agent's next tool call, and prints what changed: the version, and the
field the call added, as the canvas shows it. In process there is no canvas: one line says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from formwork.examples.demo.driver import Demo
from formwork.examples.demo.page_scene import short
from formwork.examples.demo.page_visit import PageShown, PageVisit, VisitError, read_page
from formwork.examples.demo.printing import expect, say
from formwork.examples.demo.transports import OverHttp

ENTER_TITLE = "Open the form you are building"
"""The canvas link's entry page (``formwork.aws.canvas_pages.ENTER_TITLE``)."""
ITEM = "item:"
"""The canvas marks each field and display block ``data-shown="item:<id>"``."""


@dataclass(slots=True)
class Watch:
    """An open canvas: the browser holding its cookie, its URL, and what it last showed."""

    browser: PageVisit
    page_url: str
    version: int
    items: list[str]


def items(page: PageShown) -> list[str]:
    """The ids of the fields and blocks the canvas shows, in page order."""
    return [name.removeprefix(ITEM) for name in page.shown if name.startswith(ITEM)]


def open_the_canvas(demo: Demo, builder: str, form_id: str) -> Watch | None:
    """The person opens the canvas of ``builder``'s tenant's draft of ``form_id``; None in
    process, or when the canvas did not open (the failed expectation says why)."""
    transport = demo.transport
    if not isinstance(transport, OverHttp):
        print("\n  (in process there is no canvas: over HTTP the person watches the draft there)")
        return None
    print()
    say("", "(the person opens the draft's canvas to watch it being built; the builder", 2)
    say("", "chat's backend mints the link with the person's token)", 10)
    say("api:   ", f"POST /builder/forms/{form_id}/page-links as {builder}")
    status, link = transport.canvas_link(builder, form_id)
    expect(status == 200 and "url" in link, f"a link to the canvas, got {status}: {link}")
    if "url" not in link:
        return None
    url = str(link["url"])
    say("result: ", f"{status} {short(url)} (opens once; expires {link['expires_at']})")
    browser = PageVisit()
    try:
        page, page_url = browser.open(url, ENTER_TITLE)
    except VisitError as failed:
        expect(False, f"the link to open the canvas ({failed})")
        return None
    entry, button, shown = browser.hops
    cookie = ", ".join(f"{name}=…" for name in browser.cookies)
    say("browser: ", f"GET {short(entry.path)} → {entry.status} “{ENTER_TITLE}”")
    say(
        "browser: ",
        f"POST {short(button.path)} (the button) → {button.status} to {shown.path}, "
        f"Set-Cookie {cookie}",
    )
    version = _version(browser, page_url)
    on_canvas = items(page)
    say("canvas:  ", f"“{page.title}”: {page.shown.get('draft', '')}; {len(on_canvas)} fields")
    expect(version is not None, "the canvas's version route to answer its version")
    return Watch(browser, page_url, version or 0, on_canvas)


def see_the_change(watch: Watch | None, added: str) -> None:
    """After the agent's call that added ``added``: the version route again, as the canvas's
    script polls it, then the canvas; what changed."""
    if watch is None:
        return
    path = watch.page_url.split("://", 1)[-1].partition("/")[2]
    version = _version(watch.browser, watch.page_url)
    say("canvas:  ", f"GET /{path}/version → version {watch.version} → {version} (its script)")
    expect(
        version is not None and version > watch.version,
        f"the draft's version to move past {watch.version} on the canvas, got {version}",
    )
    status, html = watch.browser.get(watch.page_url, "the canvas again")
    page = read_page(html)
    now = items(page)
    new = [one for one in now if one not in watch.items]
    shown = page.shown.get(ITEM + added, "")
    say("canvas:  ", f"GET /{path} → {status}: new on the canvas: {shown}")
    expect(new == [added], f"the canvas to show the new field {added}, got new {new}")
    watch.version, watch.items = version or watch.version, now


def _version(browser: PageVisit, page_url: str) -> int | None:
    """The draft's version as the canvas's version route answers it (None: it did not)."""
    status, body = browser.get(page_url + "/version", "the version route")
    try:
        version = json.loads(body)["version"] if status == 200 else None
    except (ValueError, KeyError, TypeError):
        return None
    return version if isinstance(version, int) else None
