"""The fact editor in headless Chromium, on the local stack as ``make dev`` runs it.

The chatbot backend's side goes over HTTP with dev tokens: it states the person's facts
(``PUT /memory/facts/{key}``) and mints a link to their fact editor (``POST
/memory/page-links``). The person's side is the browser: the link's entry page, its button,
then the editor, where they read each fact with their own words, correct one (the next form
offers the corrected value), delete one (it is never recalled again) and turn memory off (the
next form recalls nothing); by keyboard alone, axe-clean, and no wider than a phone. Another
person's facts never show. The run writes the editor's screenshots (``memory-editor``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from playwright.sync_api import Page

from formwork.infra.local.stack import LocalStack
from tests.browser.conftest import (
    PHONE,
    Agent,
    axe_violations,
    horizontal_overflow,
    screenshots,
)


@pytest.fixture
def person(stack: LocalStack) -> Iterator[Agent]:
    """A person of their own (facts are per principal), on the health check-in form."""
    with Agent(stack.api_url, f"dev:acme:p{uuid.uuid4().hex[:8]}", form="health-check") as agent:
        agent.state("person.height_cm", {"words": "5'8\""})
        agent.state("person.weight_kg", {"words": "70 kg"})
        yield agent


def memory_link(agent: Agent) -> str:
    """A link to the person's fact editor, as the chatbot backend mints one."""
    response = agent.http.post("/memory/page-links")
    assert response.status_code == 200, response.text
    url: str = response.json()["url"]
    return url


def open_editor(page: Page, agent: Agent) -> None:
    """Open a fresh link as the person does: its entry page, then its button."""
    response = page.goto(memory_link(agent))
    assert response is not None and response.status == 200
    assert page.locator("h1").inner_text() == "Open your memory"
    with page.expect_navigation():
        page.get_by_role("button", name="Open your memory").click()
    assert urlsplit(page.url).path == "/pages/memory"


def fact(page: Page, key: str) -> Any:
    return page.locator(f'[data-fact="{key}"]')


def submit(page: Page, button: Any) -> None:
    with page.expect_navigation():
        button.click()


def listed(agent: Agent) -> dict[str, Any]:
    response = agent.http.get("/memory/facts")
    assert response.status_code == 200, response.text
    return {line["key"]: line for line in response.json()["facts"]}


def form_row(page: Page, agent: Agent, field_id: str) -> str:
    """A new check-in started by the agent, its page opened: the field's entry."""
    instance = agent.start()
    response = agent.http.post(
        f"/conversations/{agent.conversation}/page-links", json={"instance_id": instance}
    )
    assert response.status_code == 200, response.text
    page.goto(response.json()["url"])
    with page.expect_navigation():
        page.get_by_role("button", name="Open your form").click()
    page.wait_for_url(f"**/pages/forms/{quote(instance, safe='')}")
    text: str = page.locator(f'[data-field="{field_id}"]').inner_text()
    return text


# ------------------------------------------------------------------------- the editor


def test_the_person_reads_corrects_deletes_and_switches_off(page: Page, person: Agent) -> None:
    # GIVEN facts the chatbot backend stated WHEN the person opens their fact editor
    open_editor(page, person)
    # THEN each fact shows with the words they said, its decay class and what a form does
    height = fact(page, "person.height_cm").inner_text()
    assert "173 cm" in height and "“5'8\"”" in height and "Worked out from your words" in height
    assert "(years)" in height and "Fills forms" in height
    weight = fact(page, "person.weight_kg").inner_text()
    assert "70 kg" in weight and "(weeks)" in weight and "Only offered" in weight
    assert axe_violations(page) == []
    screenshots(page, "memory-editor")
    # WHEN they correct their weight
    fact(page, "person.weight_kg").get_by_label("Correct weight").fill("72 kg")
    submit(page, fact(page, "person.weight_kg").get_by_role("button", name="Save correction"))
    # THEN the page says so, shows the new value, and keeps the old one in its history
    assert "Corrected." in page.get_by_role("status").inner_text()
    assert "72 kg" in fact(page, "person.weight_kg").locator(".value").inner_text()
    history = fact(page, "person.weight_kg").locator("details")
    history.locator("summary").click()
    assert "Said: 70 kg" in history.inner_text() and "Corrected: 72 kg" in history.inner_text()
    # AND the next form offers the corrected value
    assert str(listed(person)["person.weight_kg"]["value"]) == "72"
    assert "Memory offers: 72 kg." in form_row(page, person, "weight_kg")
    # WHEN they delete their height
    open_editor(page, person)
    submit(page, fact(page, "person.height_cm").get_by_role("button", name="Delete height"))
    # THEN it is gone from the page and from memory, and no form recalls it
    assert fact(page, "person.height_cm").count() == 0
    assert "person.height_cm" not in listed(person)
    assert "173" not in form_row(page, person, "height_cm")
    # WHEN they turn memory off
    open_editor(page, person)
    submit(page, page.get_by_role("button", name="Turn memory off"))
    # THEN the page says memory is off, and the next form recalls nothing
    assert page.get_by_role("heading", name="Memory is off").count() == 1
    assert "Not used: your memory is off." in fact(page, "person.weight_kg").inner_text()
    assert person.http.get("/memory/settings").json()["enabled"] is False
    assert "Memory offers" not in form_row(page, person, "weight_kg")


def test_another_persons_facts_never_show(page: Page, person: Agent, stack: LocalStack) -> None:
    with Agent(stack.api_url, f"dev:acme:q{uuid.uuid4().hex[:8]}") as other:
        other.state("person.weight_kg", {"words": "95 kg"})
        open_editor(page, person)
        assert "95 kg" not in page.locator("main").inner_text()
        open_editor(page, other)
        assert "95 kg" in page.locator("main").inner_text()
        assert "173 cm" not in page.locator("main").inner_text()


def test_the_editor_is_used_by_keyboard_alone(page: Page, person: Agent) -> None:
    # GIVEN the link's entry page: Tab past the skip link reaches its button, Enter opens
    page.goto(memory_link(person))
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert urlsplit(page.url).path == "/pages/memory"
    # WHEN the person tabs through the editor THEN every control is reached, each named
    names: list[str] = []
    for _ in range(40):
        page.keyboard.press("Tab")
        name = page.evaluate(
            """() => {
                const e = document.activeElement;
                const label = e.labels && e.labels.length ? e.labels[0].innerText : "";
                return (label || e.innerText || e.getAttribute("aria-label") || "").trim();
            }"""
        )
        name = " ".join(name.split())  # a visually hidden part reads as its own line
        if name == "Correct weight":
            break
        names.append(name)
    assert "Turn memory off" in names and "Delete height" in names and "Save correction" in names
    # AND the correction is typed and sent from the keyboard
    page.keyboard.type("71 kg")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert "71 kg" in fact(page, "person.weight_kg").locator(".value").inner_text()


def test_axe_and_a_phone_sized_viewport(page: Page, person: Agent) -> None:
    page.set_viewport_size(PHONE)
    page.goto(memory_link(person))
    assert axe_violations(page) == [] and horizontal_overflow(page) == 0
    with page.expect_navigation():
        page.get_by_role("button", name="Open your memory").click()
    page.evaluate("() => document.querySelectorAll('details').forEach((d) => { d.open = true })")
    assert axe_violations(page) == []
    assert horizontal_overflow(page) == 0
