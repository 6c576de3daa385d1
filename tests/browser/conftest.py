"""Browser fixtures: the pages as a person sees them, in headless Chromium.

The browser is Chromium from the distribution's packages (``apt-get install chromium``, which
``.ci/run`` does), driven by Playwright's Python API pointed at that binary: Playwright's own
browser builds are never downloaded (no ``playwright install``). ``FORMWORK_CHROMIUM`` names
another Chromium or Chrome binary. The accessibility check is axe-core, pinned in
``infra/browser/package.json`` (``make test`` installs it with npm). Without Chromium or
axe-core the browser tests are skipped, saying what is missing and how to install it, except
under CI (``CI`` set), where they fail: a CI run that skipped them would pass without them.

One local stack for the package (``tests.integration.stacks``: AWS's DynamoDB Local, the real
handler in local execution environments, the gateway routing by ``template.yaml``), one
browser for the package, and for each test a fresh browser context (its own cookies) and page.
An ``Agent`` makes an agent host's calls over HTTP (tools, page links) for one principal.

Helpers: ``axe_violations`` runs axe-core on the page as served, under its Content Security
Policy (the script is evaluated through the DevTools protocol, which the page's CSP does not
govern, where a ``<script>`` tag would be refused), and returns the serious and critical
violations; ``screenshots`` writes a page at a desktop and a phone viewport under
``.local/screenshots/`` (ignored by git), or under ``FORMWORK_SCREENSHOTS`` when it names a
folder: ``make screenshots`` runs the browser tests with ``docs/images/``, where the current ones
are committed and shown in the docs. So a test run never dirties the work tree.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    Page,
    Playwright,
    ViewportSize,
    sync_playwright,
)

from formwork.infra.local.dynamodb_local import DynamoDBLocal
from formwork.infra.local.stack import LocalStack
from tests.integration.stacks import local_stack

ROOT = Path(__file__).resolve().parents[2]
BROWSER_PACKAGES = ROOT / "infra" / "browser"
AXE = BROWSER_PACKAGES / "node_modules" / "axe-core" / "axe.min.js"
SCREENSHOTS_VARIABLE = "FORMWORK_SCREENSHOTS"
IMAGES = Path(os.environ.get(SCREENSHOTS_VARIABLE) or ROOT / ".local" / "screenshots")
"""Where the run writes its screenshots (``docs/images`` with ``make screenshots``)."""
CHROMIUM_VARIABLE = "FORMWORK_CHROMIUM"

DESKTOP = ViewportSize(width=1280, height=900)
PHONE = ViewportSize(width=390, height=844)
"""An iPhone 12-15's viewport in CSS pixels: the narrow screen a page must fit without
horizontal scroll."""

SERIOUS = ("serious", "critical")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/browser/" in str(item.fspath):
            item.add_marker(pytest.mark.integration)
            item.add_marker(pytest.mark.browser)


def missing(message: str) -> NoReturn:
    """Skip the test, saying what is missing; under CI, fail it instead."""
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI runs the browser tests: .ci/run installs it)")
    pytest.skip(message)


def chromium_path() -> str | None:
    """The Chromium binary to drive: ``FORMWORK_CHROMIUM`` when set, else ``chromium`` on the
    PATH (Debian's package installs ``/usr/bin/chromium``)."""
    given = os.environ.get(CHROMIUM_VARIABLE)
    if given:
        return given if Path(given).is_file() else None
    return shutil.which("chromium")


def require_chromium() -> str:
    path = chromium_path()
    if path is None:
        missing(
            "Chromium is not installed: apt-get install chromium (Debian's package), or name "
            f"a Chromium or Chrome binary in {CHROMIUM_VARIABLE}"
        )
    return path


def require_axe() -> Path:
    if not AXE.is_file():
        missing(f"axe-core is not installed: npm ci --prefix {BROWSER_PACKAGES.relative_to(ROOT)}")
    return AXE


# ------------------------------------------------------------------------ the stack


PAGE_KEY = "browser-tests-page-key-" + "k" * 24
"""The stack's page key, known here so a test can sign a link the way the API does (with an
expiry in the past, or for another principal): a forgery only a holder of the key could make,
which the API must still refuse."""


STACK_ENVIRONMENT = {
    "FORMWORK_PAGE_KEY": PAGE_KEY,
    # memory's recall deadline, wider than the shipped one: a form started on a busy test
    # machine still gets its fills and offers in its first call
    "FORMWORK_MEMORY_DEADLINE_MS": "2000",
}


@pytest.fixture(scope="package")
def stack() -> Iterator[LocalStack]:
    """The local stack, on a DynamoDB Local of its own, signing pages with ``PAGE_KEY``."""
    with (
        DynamoDBLocal() as dynamodb,
        local_stack(dynamodb, environment=STACK_ENVIRONMENT) as up,
    ):
        yield up


class Agent:
    """An agent host's calls for one principal in a conversation of its own, over HTTP: tool
    calls and page links (a context manager: it holds a connection pool)."""

    def __init__(self, url: str, token: str, form: str = "travel-claim") -> None:
        self.http = httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30
        )
        self.form = form
        self.conversation = f"conv-{uuid.uuid4().hex[:10]}"

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *_: object) -> None:
        self.http.close()

    def call(self, tool: str, payload: dict[str, Any]) -> dict[str, Any]:
        """One tool call under a fresh tool-call id; it must succeed."""
        body = {"tool_call_id": f"call-{uuid.uuid4().hex[:12]}", "input": payload}
        response = self.http.post(f"/conversations/{self.conversation}/tools/{tool}", json=body)
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()
        assert result["ok"], result
        return result

    def start(self, values: dict[str, Any] | None = None) -> str:
        result = self.call("form_start", {"form": self.form, "values": values or {}})
        instance: str = result["instance"]
        return instance

    def fill(self, instance: str, values: dict[str, Any]) -> dict[str, Any]:
        return self.call("form_fill", {"form": self.form, "instance": instance, "values": values})

    def state(self, key: str, fact: dict[str, Any]) -> None:
        """The chatbot backend states a fact of the principal's memory (``PUT /memory/facts``)."""
        response = self.http.put(f"/memory/facts/{key}", json=fact)
        assert response.status_code == 200, response.text

    def link(self, instance: str) -> str:
        """A page link to ``instance``, as the chatbot backend mints one for its user."""
        path = f"/conversations/{self.conversation}/page-links"
        response = self.http.post(path, json={"instance_id": instance})
        assert response.status_code == 200, response.text
        url: str = response.json()["url"]
        return url


def link_fields(url: str) -> dict[str, Any]:
    """What a page link's token says (principal ``p``, conversation ``c``, instance ``i``,
    expiry ``x``): its payload is base64url JSON, readable by anyone holding the link."""
    token = urlsplit(url).path.rsplit("/", 1)[1]
    payload = token.split(".")[1]
    fields: dict[str, Any] = json.loads(
        base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    )
    return fields


def signed(url: str, **changes: Any) -> str:
    """``url``'s link signed again with the stack's key, with ``changes`` to its fields."""
    from formwork.aws.pages.access import mint_link

    fields = {**link_fields(url), **changes}
    token = mint_link(PAGE_KEY.encode(), fields["p"], fields["c"], fields["i"], fields["x"])
    return url.rsplit("/", 1)[0] + "/" + token


# ------------------------------------------------------------------------ the browser


@pytest.fixture(scope="package")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="package")
def browser(playwright: Playwright) -> Iterator[Browser]:
    """Headless Chromium from the distribution; ``--no-sandbox`` since CI runs as root,
    where Chromium's sandbox cannot start."""
    executable = require_chromium()
    launched = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
    yield launched
    launched.close()


@dataclass
class Console:
    """What the page reported while a test ran: console messages (errors among them, a
    Content Security Policy violation is one) and dialogs (``alert`` and the like, which a
    script injected into the page would open; each is dismissed)."""

    messages: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    """A fresh browser context (its own cookies) at the desktop viewport."""
    fresh = browser.new_context(viewport=DESKTOP)
    yield fresh
    fresh.close()


@pytest.fixture
def console() -> Console:
    return Console()


@pytest.fixture
def page(context: BrowserContext, console: Console) -> Page:
    """A page of ``context``, recording what it logs into ``console``."""
    opened = context.new_page()

    def logged(message: Any) -> None:
        console.messages.append(message.text)
        if message.type == "error":
            console.errors.append(message.text)

    def dialog(shown: Any) -> None:
        console.dialogs.append(shown.message)
        shown.dismiss()

    opened.on("console", logged)
    opened.on("dialog", dialog)
    return opened


# ------------------------------------------------------------------------ helpers


def axe_violations(page: Page) -> list[dict[str, Any]]:
    """axe-core's serious and critical violations on ``page`` as it is now, each as
    ``{"id", "impact", "help", "targets"}``. The script is evaluated through the DevTools
    protocol, so it runs under the page's own Content Security Policy without weakening it."""
    source = require_axe().read_text(encoding="utf-8")
    page.evaluate(source)
    found: list[dict[str, Any]] = page.evaluate(
        """async (impacts) => {
            const result = await axe.run(document, {resultTypes: ["violations"]});
            return result.violations
                .filter((v) => impacts.includes(v.impact))
                .map((v) => ({
                    id: v.id, impact: v.impact, help: v.help,
                    targets: v.nodes.map((n) => n.target.join(" ")),
                }));
        }""",
        list(SERIOUS),
    )
    return found


def horizontal_overflow(page: Page) -> int:
    """How many CSS pixels the page is wider than its viewport (0: no horizontal scroll)."""
    overflow: int = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    return overflow


def screenshots(page: Page, name: str) -> list[Path]:
    """Write ``page`` at the desktop and the phone viewport, whole, to
    ``<IMAGES>/<name>-desktop.png`` and ``<name>-phone.png``; the page is left at the
    desktop viewport."""
    IMAGES.mkdir(parents=True, exist_ok=True)
    written = []
    for label, viewport in (("phone", PHONE), ("desktop", DESKTOP)):
        page.set_viewport_size(viewport)
        path = IMAGES / f"{name}-{label}.png"
        page.screenshot(path=str(path), full_page=True, animations="disabled")
        written.append(path)
    return written
