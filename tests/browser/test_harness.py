"""The browser harness checks itself: on a page served here under a strict Content Security
Policy, axe-core runs and finds what is wrong, an inline script is refused, and a page wider
than a phone is measured as such. A helper that could not see a violation would pass every
page; these tests show each one can fail."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from playwright.sync_api import Browser, Page

from tests.browser.conftest import PHONE, Console, axe_violations, horizontal_overflow

STRICT_CSP = "default-src 'self'; script-src 'self'; style-src 'self'"

PAGES = {
    # an image without a text alternative (axe: image-alt, critical), an inline script
    "/flawed": """<!doctype html><html lang="en"><head><title>Flawed</title></head>
        <body><main><h1>Flawed</h1><img src="/nothing.png">
        <script>window.__pwned = true; alert("inline")</script></main></body></html>""",
    "/clean": """<!doctype html><html lang="en"><head><title>Clean</title></head>
        <body><main><h1>Clean</h1><p>Nothing to find here.</p>
        <label for="name">Name</label> <input id="name" name="name"></main></body></html>""",
    "/wide": """<!doctype html><html lang="en"><head><title>Wide</title>
        <meta name="viewport" content="width=device-width, initial-scale=1"></head>
        <body><main><h1>Wide</h1><pre>"""
    + "x" * 400
    + """</pre></main></body></html>""",
}


class _Pages(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = PAGES.get(self.path)
        if body is None:
            self.send_error(404)
            return
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Security-Policy", STRICT_CSP)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()
    thread.join()


def test_the_browser_is_headless_chromium(browser: Browser) -> None:
    assert browser.browser_type.name == "chromium"
    assert browser.version.split(".")[0].isdigit()


def test_axe_finds_a_serious_violation_under_the_pages_csp(
    page: Page, console: Console, site: str
) -> None:
    # GIVEN a page with an image without alt text, served with a CSP allowing no inline script
    page.goto(f"{site}/flawed")
    # WHEN axe-core runs on it
    violations = axe_violations(page)
    # THEN it ran despite the CSP and reports the image as a critical violation
    assert [(v["id"], v["impact"]) for v in violations] == [("image-alt", "critical")]
    assert violations[0]["targets"] == ["img"]
    # AND the page's own inline script was refused: no dialog, no global, a CSP report logged
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert console.dialogs == []
    assert any("Content Security Policy" in message for message in console.errors)


def test_axe_reports_nothing_on_a_clean_page(page: Page, site: str) -> None:
    page.goto(f"{site}/clean")
    assert axe_violations(page) == []


def test_horizontal_overflow_is_measured_at_a_phones_width(page: Page, site: str) -> None:
    page.set_viewport_size(PHONE)
    page.goto(f"{site}/wide")
    assert horizontal_overflow(page) > 0
    page.goto(f"{site}/clean")
    assert horizontal_overflow(page) == 0
