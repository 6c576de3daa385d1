"""The builder's canvas in headless Chromium, on the local stack as ``make dev`` runs it.

The builder agent's side goes over HTTP with dev tokens: its tool calls
(``POST /builder/forms/{form_id}/tools/{tool}``) and the link to the canvas
(``POST /builder/forms/{form_id}/page-links``). The person's side is the browser: the link's
entry page, its button, then the canvas, which shows a field the agent adds while it is open
(no reload); a click selects a field and the agent's next ``update_field`` without an id edits
it; undo restores a deleted field with its settings; the publish button shows only to a
publisher, and a forged publish post from anyone else is refused. Axe-clean, no wider than a
phone. The run writes the canvas's screenshots (``builder-canvas``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Page, expect

from formwork.infra.local.stack import LocalStack
from tests.browser.conftest import (
    PHONE,
    Console,
    axe_violations,
    horizontal_overflow,
    screenshots,
)
from tests.browser.test_live_updates import SHOWN_WITHIN_MS, mark_loaded, not_reloaded


class BuilderAgent:
    """A builder agent's calls on one draft of its own, over HTTP, as one person."""

    def __init__(self, url: str, token: str, form: str) -> None:
        self.http = httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30
        )
        self.form = form

    def call(self, tool: str, payload: dict[str, Any]) -> dict[str, Any]:
        body = {"tool_call_id": f"toolu_{uuid.uuid4().hex[:12]}", "input": payload}
        response = self.http.post(f"/builder/forms/{self.form}/tools/{tool}", json=body)
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()
        return result

    def draft(self) -> dict[str, Any]:
        response = self.http.get(f"/builder/forms/{self.form}")
        assert response.status_code == 200, response.text
        found: dict[str, Any] = response.json()
        return found

    def items(self) -> list[dict[str, Any]]:
        return [item for step in self.draft()["document"]["steps"] for item in step["items"]]

    def link(self) -> str:
        response = self.http.post(f"/builder/forms/{self.form}/page-links")
        assert response.status_code == 200, response.text
        url: str = response.json()["url"]
        return url


@pytest.fixture
def form() -> str:
    return f"contact-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def ana(stack: LocalStack, form: str) -> Iterator[BuilderAgent]:
    """Ana's builder agent (no publisher role), on a contact form with an email field."""
    agent = BuilderAgent(stack.api_url, "dev:acme:ana", form)
    made = agent.call(
        "create_form",
        {"title": "Contact us", "steps": [{"title": "Contact"}, {"title": "Details"}]},
    )
    assert made["ok"], made
    agent.call("add_field", {"step": "contact", "field": {"kind": "email", "label": "Email"}})
    agent.call(
        "add_field",
        {
            "step": "details",
            "field": {"kind": "integer", "label": "Age", "minimum": 18, "layout": {"w": 6}},
        },
    )
    yield agent
    agent.http.close()


@pytest.fixture
def cy(stack: LocalStack, form: str, ana: BuilderAgent) -> Iterator[BuilderAgent]:
    """Cy, of the same tenant, holding the publisher role, on Ana's draft."""
    agent = BuilderAgent(stack.api_url, "dev:acme:cy;roles=form_publisher", form)
    yield agent
    agent.http.close()


def open_canvas(page: Page, agent: BuilderAgent) -> None:
    response = page.goto(agent.link())
    assert response is not None and response.status == 200
    with page.expect_navigation():
        page.get_by_role("button", name="Open the form you are building").click()
    assert urlsplit(page.url).path == f"/pages/canvas/{agent.form}"


def item(page: Page, ref: str) -> Any:
    return page.locator(f'[data-item="{ref}"]')


def test_a_field_the_agent_adds_shows_while_the_canvas_is_open(
    page: Page, ana: BuilderAgent, console: Console
) -> None:
    open_canvas(page, ana)
    mark_loaded(page)
    expect(item(page, "email")).to_contain_text("email · required")
    expect(item(page, "age")).to_contain_text("Accepts integer >= 18")
    before = axe_violations(page)
    assert before == []
    added = ana.call("add_field", {"step": "contact", "field": {"kind": "phone", "label": "Tel"}})
    assert added["ok"], added
    expect(item(page, "tel")).to_contain_text("Tel", timeout=SHOWN_WITHIN_MS)
    assert not_reloaded(page)
    expect(page.locator(".cv-edits li").first).to_contain_text('Added field "tel"')
    assert [v for v in axe_violations(page) if v not in before] == []
    assert [e for e in console.errors if not e.startswith("Failed to load resource")] == []


def test_a_click_selects_the_field_the_next_update_without_an_id_edits(
    page: Page, ana: BuilderAgent
) -> None:
    open_canvas(page, ana)
    with page.expect_navigation():
        item(page, "age").get_by_role("button").click()
    expect(page.locator("#cv-selection")).to_contain_text('Selected field "age"')
    expect(item(page, "age").get_by_role("button")).to_have_attribute("aria-pressed", "true")
    made = ana.call("update_field", {"updates": {"required": False}})
    assert made["ok"] and "age" in made["summary"], made
    age = next(i for i in ana.items() if i["id"] == "age")
    assert age["required"] is False
    expect(item(page, "age")).to_contain_text("optional", timeout=SHOWN_WITHIN_MS)


def test_undo_from_the_canvas_restores_a_deleted_field_with_its_settings(
    page: Page, ana: BuilderAgent
) -> None:
    open_canvas(page, ana)
    deleted = ana.call("delete_field", {"field": "age"})
    assert deleted["ok"], deleted
    expect(item(page, "age")).to_have_count(0, timeout=SHOWN_WITHIN_MS)
    with page.expect_navigation():
        page.get_by_role("button", name="Undo").click()
    expect(item(page, "age")).to_contain_text("Accepts integer >= 18")
    age = next(i for i in ana.items() if i["id"] == "age")
    assert age["minimum"] == 18 and age["layout"]["w"] == 6


def test_publish_shows_only_to_a_publisher_and_a_forged_post_is_refused(
    page: Page, ana: BuilderAgent, cy: BuilderAgent
) -> None:
    open_canvas(page, ana)
    expect(page.locator("#cv-publish")).to_have_count(0)
    # a forged publish post, the page's own undo form turned into a publish: refused as the
    # API refuses Ana (403, the role named), nothing published
    page.evaluate(
        """() => {
            const form = document.querySelector('input[name="action"][value="undo"]').form;
            form.querySelector('input[name="action"]').value = "publish";
            form.querySelector('input[name="version"]').value = "0";
            form.submit();
        }"""
    )
    page.wait_for_load_state()
    expect(page.locator("#notice")).to_contain_text("form_publisher")
    assert ana.http.get(f"/forms/{ana.form}/versions/1").status_code == 404
    # Cy, a publisher, sees the button and publishes
    publisher = page.context.new_page()
    open_canvas(publisher, cy)
    with publisher.expect_navigation():
        publisher.get_by_role("button", name="Publish").click()
    expect(publisher.locator("#notice")).to_contain_text("Published")
    expect(publisher.locator("#cv-version-list")).to_contain_text("Version 1")
    assert ana.http.get(f"/forms/{ana.form}/versions/1").status_code == 200


def test_the_canvas_is_axe_clean_and_fits_a_phone(page: Page, ana: BuilderAgent) -> None:
    city = {"kind": "short_text", "label": "City", "layout": {"w": 6}, "max_length": 80}
    city["when"] = {"field": "age", "op": "greater_than", "value": 20}
    assert ana.call("add_field", {"step": "details", "field": city})["ok"]
    open_canvas(page, ana)
    with page.expect_navigation():
        item(page, "email").get_by_role("button").click()
    assert axe_violations(page) == []
    screenshots(page, "builder-canvas")
    page.set_viewport_size(PHONE)
    assert horizontal_overflow(page) == 0
    assert axe_violations(page) == []
