"""The form page follows the agent's writes while it is open, in headless Chromium on the local
stack (``docs/pages.md``, "Live updates").

The page's own script (``functions/pages/static/page.js``) polls the instance's version and,
when it moves, swaps in the page fetched again: an agent's write shows without a reload; what
the person typed and did not save survives it, in another field and in the written field
itself, which then says it changed meanwhile; with script off the page still reads and a reload
shows the write. The entry page's button pressed twice does not end on the refusal page: the
script posts once, and without script the server knows the browser that spent the link (by its
session, or, when it dropped the first answer, by its entry cookie) and opens its form.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from formwork.infra.local.stack import LocalStack
from tests.browser.conftest import Agent, Console, axe_violations
from tests.browser.test_form_page import open_form, press_open, row

ALICE = "dev:acme:alice"
SHOWN_WITHIN_MS = 3000
"""How long a write may take to show: the script asks every 700 ms, then fetches the page (on
the local stack about 0.9 s from the agent's call to the value shown; the margin is for a busy
test machine)."""


@pytest.fixture
def alice(stack: LocalStack) -> Iterator[Agent]:
    with Agent(stack.api_url, ALICE) as agent:
        yield agent


def answer_box(page: Page, field_id: str) -> Any:
    """The text box of a field's answer form (what the person types into)."""
    return row(page, field_id).locator('form.field-form input[name="value"]:not([type=hidden])')


def mark_loaded(page: Page) -> None:
    """Mark the document, so a test can tell a swap from a reload (which loses the mark)."""
    page.evaluate("window.__loaded = 'once'")


def not_reloaded(page: Page) -> bool:
    return bool(page.evaluate("window.__loaded === 'once'"))


def test_an_agent_write_appears_without_a_reload(
    page: Page, alice: Agent, console: Console
) -> None:
    # GIVEN the person's page open on a claim with a destination
    instance = alice.start({"destination": "Lisbon"})
    failed: list[str] = []
    page.on("response", lambda r: failed.append(r.url) if r.status >= 400 else None)
    open_form(page, alice.link(instance))
    mark_loaded(page)
    version = page.locator("#form-page").get_attribute("data-version")
    before = axe_violations(page)
    # WHEN the agent changes the destination through the tools
    alice.fill(instance, {"destination": "Porto"})
    # THEN the page shows it without a reload, at the new version
    expect(row(page, "destination").locator(".value")).to_have_text(
        "Porto", timeout=SHOWN_WITHIN_MS
    )
    assert not_reloaded(page)
    assert page.locator("#form-page").get_attribute("data-version") != version
    # AND one polite live region says what changed
    region = page.locator(".live-region")
    expect(region).to_have_count(1)
    assert region.get_attribute("aria-live") == "polite"
    expect(region).to_contain_text("Destination", timeout=SHOWN_WITHIN_MS)
    # AND the page under its CSP raised nothing (no refused fetch, no script error), and
    # asked for nothing it was refused (but the icon a browser asks every site for)
    assert [u for u in failed if urlsplit(u).path != "/favicon.ico"] == []
    assert [e for e in console.errors if not e.startswith("Failed to load resource")] == []
    # AND the swap brought no serious or critical violation axe-core did not find before it
    assert [v for v in axe_violations(page) if v not in before] == []


def test_what_the_person_typed_in_another_field_survives_an_agent_write(
    page: Page, alice: Agent
) -> None:
    # GIVEN the page open, the person typing a name they have not saved, the caret in the box
    instance = alice.start({"destination": "Lisbon"})
    open_form(page, alice.link(instance))
    mark_loaded(page)
    name = answer_box(page, "full_name")
    name.fill("Ana Lima")
    # WHEN the agent writes another field meanwhile
    alice.fill(instance, {"destination": "Porto"})
    # THEN the write shows, and the person's typing is still there, still focused, unmarked
    expect(row(page, "destination").locator(".value")).to_have_text(
        "Porto", timeout=SHOWN_WITHIN_MS
    )
    assert not_reloaded(page)
    expect(name).to_have_value("Ana Lima")
    expect(name).to_be_focused()
    expect(row(page, "full_name").locator(".live-note")).to_have_count(0)
    # AND they type on where they were
    page.keyboard.type(" Sousa")
    expect(name).to_have_value("Ana Lima Sousa")


def test_what_the_person_typed_in_the_field_the_agent_wrote_is_kept_and_flagged(
    page: Page, alice: Agent
) -> None:
    # GIVEN the page open, the person typing a destination they have not saved
    instance = alice.start({"destination": "Lisbon"})
    open_form(page, alice.link(instance))
    mark_loaded(page)
    destination = answer_box(page, "destination")
    form = row(page, "destination").locator("form.field-form.answer")
    seen = form.locator('input[name="seen"]').get_attribute("value")
    version = form.locator('input[name="version"]').get_attribute("value")
    destination.fill("Faro")
    # WHEN the agent writes that same field
    alice.fill(instance, {"destination": "Porto"})
    # THEN the field says it changed, to what, and that the person's entry is kept
    note = row(page, "destination").locator(".live-note")
    expect(note).to_have_text(
        "Changed while you were typing: now Porto. Your entry is kept; saving it replaces "
        "that answer.",
        timeout=SHOWN_WITHIN_MS,
    )
    assert note.get_attribute("role") == "status"
    expect(row(page, "destination").locator(".value")).to_have_text("Porto")
    # AND the person's entry is still in the box, with the form as it was rendered (its seen
    # and version stale, so saving it goes through the server's merge check)
    assert not_reloaded(page)
    expect(destination).to_have_value("Faro")
    assert form.locator('input[name="seen"]').get_attribute("value") == seen
    assert form.locator('input[name="version"]').get_attribute("value") == version
    assert page.locator("#form-page").get_attribute("data-version") != version
    # AND the live region says the entry was kept
    expect(page.locator(".live-region")).to_contain_text("kept", timeout=SHOWN_WITHIN_MS)


def test_saving_an_entry_kept_over_a_change_goes_through_the_merge_check(
    page: Page, alice: Agent
) -> None:
    # GIVEN the person's destination kept over the agent's write, its note shown
    instance = alice.start({"destination": "Lisbon"})
    open_form(page, alice.link(instance))
    destination = answer_box(page, "destination")
    destination.fill("Faro")
    alice.fill(instance, {"destination": "Porto"})
    expect(row(page, "destination").locator(".live-note")).to_have_count(1, timeout=SHOWN_WITHIN_MS)
    # WHEN they save it
    with page.expect_navigation() as navigation:
        row(page, "destination").get_by_role("button", name="Save Destination").click()
    # THEN the server sees it was made over a change (the form's stale seen and version) and
    # says so, keeping what they typed, rather than writing over the agent's answer unawares
    response = navigation.value
    assert response is not None and response.status == 409
    expect(answer_box(page, "destination")).to_have_value("Faro")
    expect(row(page, "destination").locator(".value")).to_have_text("Porto")


def test_an_entry_the_server_refused_survives_an_agent_write(page: Page, alice: Agent) -> None:
    # GIVEN the person's staff id refused by the form (it is shown again, to be put right)
    instance = alice.start({"destination": "Lisbon"})
    open_form(page, alice.link(instance))
    answer_box(page, "staff_id").fill("not an id")
    with page.expect_navigation():
        row(page, "staff_id").get_by_role("button", name="Save Staff ID").click()
    expect(answer_box(page, "staff_id")).to_have_value("not an id")
    mark_loaded(page)
    # WHEN the agent writes another field
    alice.fill(instance, {"destination": "Porto"})
    # THEN the write shows and the refused entry is still there to be put right
    expect(row(page, "destination").locator(".value")).to_have_text(
        "Porto", timeout=SHOWN_WITHIN_MS
    )
    assert not_reloaded(page)
    expect(answer_box(page, "staff_id")).to_have_value("not an id")


def test_without_script_the_page_reads_and_a_reload_shows_the_write(
    browser: Browser, alice: Agent
) -> None:
    # GIVEN a browser with JavaScript off, on the page
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        instance = alice.start({"destination": "Lisbon"})
        open_form(page, alice.link(instance))
        assert "Lisbon" in row(page, "destination").inner_text()
        # AND the page offers a reload in place of live updates
        reload = page.get_by_role("link", name="Reload the page")
        expect(reload).to_be_visible()
        # WHEN the agent writes, and the person follows the reload link
        alice.fill(instance, {"destination": "Porto"})
        with page.expect_navigation():
            reload.click()
        # THEN the page shows the write
        assert urlsplit(page.url).path == f"/pages/forms/{instance}"
        expect(row(page, "destination").locator(".value")).to_have_text("Porto")
    finally:
        context.close()


# ------------------------------------------------------------------ the entry page


def test_the_entry_button_posts_once_however_often_it_is_pressed(page: Page, alice: Agent) -> None:
    # GIVEN a link's entry page
    instance = alice.start({"destination": "Lisbon"})
    page.goto(alice.link(instance))
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    # WHEN its button is pressed twice before any answer (both submits in one task, so
    # nothing can arrive between them)
    with page.expect_navigation():
        disabled = page.evaluate(
            """() => {
                const form = document.querySelector("form.open");
                form.requestSubmit();
                form.requestSubmit();
                return form.querySelector("button").disabled;
            }"""
        )
    # THEN the button was disabled at the first press, one post went out, and the form opened
    assert disabled is True
    assert len(posts) == 1, posts
    assert urlsplit(page.url).path == f"/pages/forms/{instance}"
    expect(page.locator("h1")).to_have_text("Travel expense claim")


def test_without_script_pressing_the_button_again_leads_to_the_form(
    browser: Browser, alice: Agent
) -> None:
    # GIVEN a browser with JavaScript off that opened a link with its button
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        instance = alice.start({"destination": "Lisbon"})
        url = alice.link(instance)
        open_form(page, url)
        # WHEN the person goes back to the entry page and presses the button again
        page.go_back()
        assert urlsplit(page.url).path == urlsplit(url).path
        response = press_open(page)
        # THEN they are on their form again, not on the refusal page
        assert response.status == 200
        assert urlsplit(page.url).path == f"/pages/forms/{instance}"
        assert "Lisbon" in row(page, "destination").inner_text()
        # AND the same link posted from another browser (its own cookies) is still refused
        other = browser.new_context()
        try:
            stranger = other.new_page()
            stranger.goto(url)
            refused = press_open(stranger)
            assert refused.status == 404
            assert stranger.title() == "This link does not open a page"
        finally:
            other.close()
    finally:
        context.close()


def test_without_script_a_second_press_sent_before_the_first_answer_opens_the_form(
    browser: Browser, alice: Agent
) -> None:
    # GIVEN a browser with JavaScript off on a link's entry page
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        instance = alice.start({"destination": "Lisbon"})
        url = alice.link(instance)
        page.goto(url)
        # AND its first press's post reached the API and spent the link, but the person pressed
        # again before the answer came, so the browser dropped it (the post is sent here as
        # that browser sent it, with its cookies; its answer is never given to the browser)
        cookies = {c["name"]: c["value"] for c in context.cookies()}
        assert set(cookies) == {"fwe"}
        with httpx.Client(cookies=cookies) as first:
            assert first.post(url).status_code == 303
        # WHEN the second press's post arrives
        response = press_open(page)
        # THEN the form opens, not the refusal page
        assert response.status == 200
        assert urlsplit(page.url).path == f"/pages/forms/{instance}"
        assert "Lisbon" in row(page, "destination").inner_text()
    finally:
        context.close()
