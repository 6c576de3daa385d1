"""The form page in headless Chromium, on the local stack as ``make dev`` runs it.

An agent's calls go over HTTP with dev tokens (the tools, ``POST .../page-links``); the person's
side is the browser, which opens the minted link and is given the session cookie. Against it:
the page shows the instance as the tools left it (steps, fields, a held answer after a flip);
a link opens on its entry page, whose button opens the form (another site's post of a link is
refused and spends nothing); every bad link (altered, expired, foreign, used twice, made up)
gets the same refusal page;
text a model or a person wrote never runs as script, and the Content Security Policy refuses
inline script; the page reads without script, is usable by keyboard alone, passes axe-core
without a serious or critical violation, and fits a phone's width; what memory filled or
offers is marked. A tenant's published document form keeps its 12-column layout on a desktop
and one column on a phone, its labels shown as text. The run writes the screenshots the docs
show (``docs/images/``).
"""

from __future__ import annotations

import struct
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page

from formwork.infra.local.stack import LocalStack
from tests.browser.conftest import (
    DESKTOP,
    PHONE,
    Agent,
    Console,
    axe_violations,
    horizontal_overflow,
    link_fields,
    screenshots,
    signed,
)

ALICE, BOB = "dev:acme:alice", "dev:acme:bob"
INJECTED = '<script>window.__pwned = "script"; alert(1)</script>'
INJECTED_ATTRIBUTE = '"><img src=x onerror="window.__pwned = \'attribute\'">'


@pytest.fixture
def alice(stack: LocalStack) -> Iterator[Agent]:
    with Agent(stack.api_url, ALICE) as agent:
        yield agent


@pytest.fixture
def bob(stack: LocalStack) -> Iterator[Agent]:
    with Agent(stack.api_url, BOB) as agent:
        yield agent


LINE_ABOVE = """(field) => {
    field.scrollIntoView({block: "center"});
    const box = field.getBoundingClientRect();
    const width = parseFloat(getComputedStyle(field).borderTopWidth);
    const onLine = document.elementFromPoint(box.left + box.width / 2, box.top + 0.5);
    return width > 0 && onLine === field;
}"""
"""Whether a field shows its separator line: it has a top border, and nothing covers it."""


def row(page: Page, field_id: str) -> Any:
    """The field's entry on the page: its label, state, value, who wrote it, its history."""
    return page.locator(f'[data-field="{field_id}"]')


def refusal_url(page: Page) -> str:
    """A page address no link leads to, on the stack ``page`` is on: refused."""
    parts = urlsplit(page.url)
    return f"{parts.scheme}://{parts.netloc}/pages/enter/not-a-link"


def form_url(page: Page, instance: str) -> str:
    parts = urlsplit(page.url)
    return f"{parts.scheme}://{parts.netloc}/pages/forms/{quote(instance, safe='')}"


def open_form(page: Page, url: str) -> Any:
    """Open ``url`` as the person does: a page link lands on its entry page, whose button opens
    the form; a form's own address opens at once. The form's response."""
    response = page.goto(url)
    assert response is not None
    if urlsplit(url).path.startswith("/pages/enter/"):
        assert response.status == 200, response.status
        response = press_open(page)
    assert response.status == 200, response.status
    return response


def press_open(page: Page) -> Any:
    """Press the entry page's button; the response it navigates to."""
    assert page.locator("h1").inner_text() == "Open your form"
    with page.expect_navigation() as navigation:
        page.get_by_role("button", name="Open your form").click()
    response = navigation.value
    assert response is not None
    return response


# ------------------------------------------------------------------------- the page


def test_a_minted_link_opens_the_page_with_the_instances_steps_and_fields(
    page: Page, context: BrowserContext, alice: Agent
) -> None:
    # GIVEN an instance the agent started with a destination
    instance = alice.start({"destination": "Lisbon", "full_name": "Ana Lima"})
    # WHEN the person opens the link the agent minted for it
    open_form(page, alice.link(instance))
    # THEN they are on the instance's page, the token gone from the address bar
    assert urlsplit(page.url).path == f"/pages/forms/{instance}"
    assert "Travel expense claim" in page.locator("h1").inner_text()
    # AND every step and its fields are shown, the answers with their values
    for title in ("Claimant", "Trip", "Travel", "Approval"):
        assert page.get_by_role("heading", level=2, name=title).count() == 1, title
    assert "Lisbon" in row(page, "destination").inner_text()
    assert "Ana Lima" in row(page, "full_name").inner_text()
    assert "Answered" in row(page, "destination").inner_text()
    assert "Pending" in row(page, "staff_id").inner_text()
    # AND the session cookie is out of the page's script's reach, for this site only
    [cookie] = [c for c in context.cookies() if c["name"].startswith("fwp_")]
    assert cookie["httpOnly"] and cookie["sameSite"] in ("Strict", "Lax")
    assert cookie["path"] == "/pages/"


def test_a_held_answer_shows_after_a_flip_made_through_the_tools(page: Page, alice: Agent) -> None:
    # GIVEN a flight number answered while the mode was air
    instance = alice.start({"destination": "Lisbon"})
    alice.fill(instance, {"mode": "air", "flight_number": "TP1234"})
    # WHEN the agent changes the mode to rail through the tools
    alice.fill(instance, {"mode": "rail"})
    open_form(page, alice.link(instance))
    # THEN the page shows the flight number held, its value kept
    flight = row(page, "flight_number").inner_text()
    assert "Held" in flight and "TP1234" in flight and "does not apply" in flight
    assert "rail" in row(page, "mode").inner_text()


def test_a_link_opened_from_another_site_lands_on_the_page(page: Page, alice: Agent) -> None:
    # GIVEN a chat app on another site (localhost is another site than 127.0.0.1) showing the
    # link, as a chatbot's "review your answers" message does
    instance = alice.start({"destination": "Lisbon"})
    url = alice.link(instance)
    with _serving(f'<!doctype html><title>Chat</title><a href="{url}">Review</a>') as chat:
        page.goto(chat)
        # WHEN the person clicks it
        with page.expect_navigation():
            page.get_by_role("link", name="Review").click()
        # THEN they land on the link's entry page, nothing spent yet
        assert urlsplit(page.url).path == urlsplit(url).path
        assert page.locator("h1").inner_text() == "Open your form"
        # AND its button opens the form: the post starts on this site, so the SameSite=Strict
        # cookie it sets goes with the redirect to the form
        press_open(page)
    # THEN the page opens (the session cookie reaches the page the link leads to)
    assert urlsplit(page.url).path == f"/pages/forms/{instance}"
    assert page.locator("h1").inner_text() == "Travel expense claim"
    assert "Lisbon" in row(page, "destination").inner_text()


# ------------------------------------------------------------------------- refusals


def test_another_sites_post_of_a_link_is_refused_and_spends_nothing(
    page: Page, context: BrowserContext, alice: Agent
) -> None:
    # GIVEN an attacker's page on another site that posts a link of theirs from the victim's
    # browser (a login CSRF: the victim would then type into the attacker's form)
    instance = alice.start({"destination": "Lisbon"})
    url = alice.link(instance)
    attack = (
        f'<!doctype html><title>Prize</title><form method="post" action="{url}">'
        "<button>Claim your prize</button></form>"
    )
    with _serving(attack) as site:
        page.goto(site)
        # WHEN the victim presses its button
        with page.expect_navigation() as navigation:
            page.get_by_role("button", name="Claim your prize").click()
        response = navigation.value
    # THEN the post is refused with the refusal page, and no session cookie is set
    assert response is not None and response.status == 404
    assert page.title() == "This link does not open a page"
    assert context.cookies() == []
    # AND the link is not spent: its own entry page still opens the form
    open_form(page, url)
    assert urlsplit(page.url).path == f"/pages/forms/{instance}"


def test_altered_expired_foreign_used_and_made_up_links_get_the_same_refusal(
    browser: Browser, page: Page, alice: Agent, bob: Agent
) -> None:
    instance = alice.start({"destination": "Lisbon"})
    good = alice.link(instance)
    token = urlsplit(good).path.rsplit("/", 1)[1]
    flipped = token[:-1] + ("A" if token[-1] != "A" else "B")
    bobs = bob.link(bob.start())
    bad = {
        # the signature no longer matches
        "altered": good.rsplit("/", 1)[0] + "/" + flipped,
        # signed with the right key, expired a second ago
        "expired": signed(good, x=int(time.time()) - 1),
        # signed with the right key for bob, naming alice's instance in alice's conversation
        "foreign": signed(good, p=link_fields(bobs)["p"]),
        # bob's own valid link, pointed at alice's conversation
        "foreign conversation": signed(bobs, c=link_fields(good)["c"], i=instance),
        "made up": good.rsplit("/", 1)[0] + "/v1.e30.AAAA",
    }
    # GIVEN the good link was used once (then it is spent)
    open_form(page, good)
    bad["used twice"] = good
    seen = {}
    for why, url in bad.items():
        fresh = browser.new_context()
        try:
            tab = fresh.new_page()
            response = tab.goto(url)
            assert response is not None
            if response.status == 200:
                # a link the key signed shows its entry page (nothing of the instance in it);
                # its button is then refused (used) or the form it leads to is (foreign)
                assert why in ("used twice", "foreign", "foreign conversation"), why
                assert instance not in tab.content() and "Lisbon" not in tab.content()
                response = press_open(tab)
            seen[why] = (response.status, tab.title(), tab.locator("body").inner_text())
            # AND nothing of the instance is revealed
            assert instance not in tab.content()
            assert "Lisbon" not in tab.content()
        finally:
            fresh.close()
    # THEN each is refused with the same status and the same page
    assert len(set(seen.values())) == 1, seen
    status, title, _ = seen["altered"]
    assert status == 404
    assert title


def test_a_session_opens_its_own_instance_only(page: Page, alice: Agent, bob: Agent) -> None:
    # GIVEN alice's instance, and bob's browser holding a session for his own
    instance = alice.start({"destination": "Lisbon"})
    bobs = bob.start()
    open_form(page, bob.link(bobs))
    made_up = page.goto(refusal_url(page))
    assert made_up is not None
    expected = (made_up.status, page.locator("body").inner_text())
    # WHEN his browser asks for alice's page
    response = page.goto(form_url(page, instance))
    # THEN it is the same refusal as a made-up link, nothing of hers shown
    assert response is not None
    assert (response.status, page.locator("body").inner_text()) == expected
    assert "Lisbon" not in page.content()
    # AND his own page still opens with his session
    assert open_form(page, form_url(page, bobs))


# ------------------------------------------------------------------------- security


def test_text_from_the_model_never_runs_and_the_csp_refuses_inline_script(
    page: Page, console: Console, alice: Agent
) -> None:
    # GIVEN answers holding markup and script, as a model or a person could send them
    instance = alice.start(
        {"destination": INJECTED, "full_name": INJECTED_ATTRIBUTE, "purpose": "{{ 7 * 7 }}"}
    )
    # WHEN the page is opened
    response = open_form(page, alice.link(instance))
    # THEN the text is shown as text and nothing ran: no dialog, no global set
    assert INJECTED in row(page, "destination").inner_text()
    assert INJECTED_ATTRIBUTE in row(page, "full_name").inner_text()
    assert "{{ 7 * 7 }}" in row(page, "purpose").inner_text()
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert console.dialogs == []
    # AND the page's Content Security Policy allows no inline script
    policy = response.headers["content-security-policy"]
    script_src = next(d for d in policy.split(";") if d.strip().startswith("script-src"))
    assert "'unsafe-inline'" not in script_src and "'unsafe-eval'" not in policy
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "frame-ancestors 'none'" in policy
    # AND the browser enforces it: an inline script added to the page does not run
    ran = page.evaluate(
        """() => {
            const s = document.createElement("script");
            s.textContent = "window.__inline = true";
            document.body.append(s);
            return window.__inline === true;
        }"""
    )
    assert ran is False
    assert any("Content Security Policy" in message for message in console.errors)


# ------------------------------------------------------------------------- access


INTERACTIVE = "a[href], button, input, select, textarea, summary, [tabindex]"


def test_tab_reaches_every_control_in_order_each_with_a_name(page: Page, alice: Agent) -> None:
    # GIVEN a page with history on its fields (two revisions of the destination)
    instance = alice.start({"destination": "Lisbon"})
    alice.fill(instance, {"destination": "Porto", "mode": "rail"})
    open_form(page, alice.link(instance))
    controls: list[str] = page.evaluate(
        """(selector) => [...document.querySelectorAll(selector)]
            .filter((e) => e.tabIndex >= 0 && !e.disabled && e.getClientRects().length > 0)
            .filter((e) => {  // a radio group is one stop: its checked radio, or its first
                if (e.type !== "radio") return true;
                const group = [...e.form.elements].filter((r) => r.name === e.name);
                return e === (group.find((r) => r.checked) || group[0]);
            })
            .map((e) => e.outerHTML.slice(0, 80))""",
        INTERACTIVE,
    )
    assert controls, "the page has no control to reach"
    # WHEN the person presses Tab through the page (a date input takes a press per part:
    # day, month, year, so one control may hold focus for several presses)
    reached: list[tuple[str, str]] = []
    for _ in range(4 * len(controls)):
        if len(reached) == len(controls):
            break
        page.keyboard.press("Tab")
        now = page.evaluate(
            """() => {
                    const e = document.activeElement;
                    const label = e.labels && e.labels.length ? e.labels[0].innerText : "";
                    const name = (e.getAttribute("aria-label") || label || e.innerText
                        || e.value || "").trim();
                    return [e.outerHTML.slice(0, 80), name];
                }"""
        )
        if not reached or reached[-1][0] != now[0]:
            reached.append(now)
    # THEN focus visits every control in document order, and each has a name to announce
    assert [html for html, _ in reached] == controls
    assert all(name for _, name in reached), reached
    # AND a revision history opens from the keyboard
    summaries = page.locator("details summary")
    if summaries.count():
        summaries.first.focus()
        page.keyboard.press("Enter")
        assert page.locator("details").first.get_attribute("open") is not None


def test_the_entry_pages_button_is_reached_by_keyboard_named_and_pressed(
    page: Page, alice: Agent
) -> None:
    # GIVEN a link's entry page
    instance = alice.start({"destination": "Lisbon"})
    page.goto(alice.link(instance))
    # WHEN the person tabs past the skip link
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    # THEN the focus is on the button, named "Open your form"
    button = page.get_by_role("button", name="Open your form")
    assert button.evaluate("(e) => e === document.activeElement")
    # AND Enter opens the form
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_url(f"**/pages/forms/{instance}")
    assert "Lisbon" in row(page, "destination").inner_text()


def test_the_page_reads_without_script(browser: Browser, alice: Agent) -> None:
    # GIVEN a browser with JavaScript turned off
    instance = alice.start({"destination": "Lisbon"})
    alice.fill(instance, {"destination": "Porto"})
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        # WHEN the person opens the link
        open_form(page, alice.link(instance))
        # THEN the answer is there, and its history opens with a click
        destination = row(page, "destination")
        assert "Porto" in destination.inner_text()
        destination.locator("summary").click()
        assert destination.locator("details").get_attribute("open") is not None
        assert "Lisbon" in destination.locator("details").inner_text()
    finally:
        context.close()


def test_axe_finds_no_serious_violation_on_the_page_or_the_refusal(
    page: Page, alice: Agent
) -> None:
    # GIVEN a page with answered, pending, held and not applicable fields
    instance = alice.start({"destination": "Lisbon", "full_name": "Ana Lima"})
    alice.fill(instance, {"mode": "air", "flight_number": "TP1234"})
    alice.fill(instance, {"mode": "car"})
    # THEN axe-core finds no serious or critical violation on the link's entry page
    page.goto(alice.link(instance))
    assert axe_violations(page) == []
    press_open(page)
    # THEN axe-core finds no serious or critical violation
    assert axe_violations(page) == []
    # AND with every revision history open
    page.evaluate("() => document.querySelectorAll('details').forEach((d) => { d.open = true })")
    assert axe_violations(page) == []
    # AND on the refusal page
    page.goto(refusal_url(page))
    assert axe_violations(page) == []


def test_a_phone_sized_viewport_has_no_horizontal_scroll(page: Page, alice: Agent) -> None:
    # GIVEN long answers without a place to break, and a long label's history open
    long_word = "Llanfairpwllgwyngyllgogerychwyrndrobwllllantysiliogogogoch" * 2
    instance = alice.start({"destination": long_word, "purpose": "x" * 300})
    alice.fill(
        instance,
        {"destination": long_word + "-again", "manager_email": "a@" + long_word + ".example"},
    )
    page.set_viewport_size(PHONE)
    page.goto(alice.link(instance))
    # THEN the link's entry page is no wider than the phone's screen
    assert horizontal_overflow(page) == 0
    press_open(page)
    page.evaluate("() => document.querySelectorAll('details').forEach((d) => { d.open = true })")
    # AND neither is the form page
    assert horizontal_overflow(page) == 0
    # AND neither is the refusal page
    page.goto(refusal_url(page))
    assert horizontal_overflow(page) == 0


def test_what_memory_filled_and_offered_is_marked(page: Page, stack: LocalStack) -> None:
    # GIVEN a person's height stated in their own words, and their weight
    person = f"dev:acme:p{uuid.uuid4().hex[:8]}"
    with Agent(stack.api_url, person, form="health-check") as agent:
        agent.state("person.height_cm", {"words": "5'8\""})
        agent.state("person.weight_kg", {"value": 70, "words": "70 kg"})
        # WHEN a check-in starts and its page is opened
        instance = agent.start()
        open_form(page, agent.link(instance))
    # THEN the height is filled and marked unconfirmed, with the words it was read from
    height = row(page, "height_cm").inner_text()
    assert "173" in height and "not confirmed" in height and "5'8\"" in height
    # AND its badge says so in words, not "Answered", told apart from an answer's
    badge = row(page, "height_cm").locator(".badge")
    assert badge.inner_text() == "Filled from memory — not confirmed"
    assert "Answered" not in height
    # AND the weight is only offered, not an answer: its badge says so in words, and the
    # offer is a sentence of its own
    offered = row(page, "weight_kg").locator(".badge")
    assert offered.inner_text() == "Offered from memory — not applied"
    weight = row(page, "weight_kg").inner_text()
    assert "Memory offers: 70 kg. You said it on " in weight and "Answered" not in weight
    assert axe_violations(page) == []
    screenshots(page, "memory-marks")


# ------------------------------------------------------------------------- screenshots


def png_width(path: Path) -> int:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    width: int = struct.unpack(">I", data[16:20])[0]
    return width


def test_the_run_writes_the_pages_screenshots(page: Page, alice: Agent) -> None:
    # GIVEN a claim part way through: answers, a held one, one pending
    instance = alice.start({"full_name": "Ana Lima", "staff_id": "AB1234"})
    alice.fill(
        instance,
        {
            "destination": "Lisbon",
            "departure_date": "2025-04-01",
            "return_date": "2025-04-03",
            "mode": "air",
            "flight_number": "TP1234",
        },
    )
    alice.fill(instance, {"mode": "rail", "total": 420})
    page.goto(alice.link(instance))
    # WHEN the run takes its screenshots (the link's entry page, the form, the refusal)
    written = screenshots(page, "enter-page")
    press_open(page)
    page.locator('[data-field="mode"] summary').click()
    written += screenshots(page, "form-page")
    refusal = page.goto(refusal_url(page))
    assert refusal is not None
    written += screenshots(page, "refusal-page")
    # THEN each is a PNG of the viewport's width, in the run's screenshot folder
    widths = [png_width(path) for path in written]
    assert widths == [PHONE["width"], DESKTOP["width"]] * 3


# ------------------------------------------------------------------------- helpers


class _Chat(BaseHTTPRequestHandler):
    body = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *_: object) -> None:
        pass


@contextmanager
def _serving(html: str) -> Iterator[str]:
    """A one-page site on ``localhost`` (another site than the stack's ``127.0.0.1``)."""
    handler = type("Handler", (_Chat,), {"body": html.encode()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


# ------------------------------------------------------------------------- document forms

AUTHOR, PUBLISHER = "dev:acme:ana", "dev:acme:cy;roles=form_publisher"
MARKUP_LABEL = '<script>window.__pwned = "label"</script>Name'


def publish_document(stack: LocalStack) -> str:
    """A tenant's form built through the builder tools and published: two fields side by side
    on the 12-column grid (the first one's label holding markup), a third full width."""
    form = f"intake-{uuid.uuid4().hex[:8]}"
    with httpx.Client(base_url=stack.api_url, timeout=30) as http:

        def build(tool: str, payload: dict[str, Any]) -> None:
            body = {"tool_call_id": f"b-{uuid.uuid4().hex[:10]}", "input": payload}
            response = http.post(
                f"/builder/forms/{form}/tools/{tool}",
                json=body,
                headers={"Authorization": f"Bearer {AUTHOR}"},
            )
            assert response.status_code == 200 and response.json()["ok"], response.text

        build("create_form", {"title": "Intake", "steps": [{"title": "You"}]})
        for label, kind, place in (
            (MARKUP_LABEL, "short_text", {"x": 0, "y": 0, "w": 6, "h": 1}),
            ("Email", "email", {"x": 6, "y": 0, "w": 6, "h": 1}),
            ("Anything else", "long_text", {"x": 0, "y": 1, "w": 12, "h": 2}),
        ):
            build("add_field", {"field": {"kind": kind, "label": label, "layout": place}})
        published = http.post(
            f"/builder/forms/{form}/publish", headers={"Authorization": f"Bearer {PUBLISHER}"}
        )
        assert published.status_code == 200, published.text
    return form


def test_a_document_form_keeps_its_grid_and_shows_markup_in_a_label_as_text(
    page: Page, console: Console, stack: LocalStack
) -> None:
    # GIVEN a published document form with two fields side by side, one label holding markup
    form = publish_document(stack)
    with Agent(stack.api_url, ALICE, form=form) as agent:
        instance = agent.start()
        url = agent.link(instance)
    # WHEN the person opens its page on a desktop
    open_form(page, url)
    rows = page.locator("[data-field]")
    assert rows.count() == 3
    first, second, third = (rows.nth(i).bounding_box() for i in range(3))
    assert first and second and third
    # THEN the first two sit side by side, the third below them at full width
    assert first["y"] == second["y"] and first["x"] < second["x"]
    assert third["y"] > first["y"] and third["width"] > first["width"] * 1.8
    # AND the fields of one row look alike: no line above the first row, one above the next
    assert [rows.nth(i).evaluate(LINE_ABOVE) for i in range(3)] == [False, False, True]
    # AND the label's markup is text: shown as written, never run
    assert MARKUP_LABEL in rows.nth(0).inner_text()
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert console.dialogs == []
    assert axe_violations(page) == []
    # AND on a phone the fields stack in one column, without horizontal scroll
    page.set_viewport_size(PHONE)
    first, second = rows.nth(0).bounding_box(), rows.nth(1).bounding_box()
    assert first and second and second["y"] > first["y"]
    assert horizontal_overflow(page) == 0
    # AND, stacked, every field but the first has its line above
    assert [rows.nth(i).evaluate(LINE_ABOVE) for i in range(3)] == [False, True, True]
