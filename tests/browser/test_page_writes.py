"""The person's writes on the form page, in a real browser against the local stack: each a
``user`` revision through the tools' write path, seen by the agent over HTTP.

A correction on the page lands as the person's revision and the agent's next status line says
so; what memory offers is applied with one click; the form cannot be sent while memory's fills
stand unconfirmed, and is sent once they are confirmed; a post sent twice applies once; a form
is filled from the keyboard alone; without script, a field the agent changed while the person
typed keeps what they typed and says what changed.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from formwork.infra.local.stack import LocalStack
from tests.browser.conftest import DESKTOP, PHONE, Agent, axe_violations, horizontal_overflow
from tests.browser.conftest import screenshots as take_screenshots
from tests.browser.test_form_page import ALICE, open_form, row

COMPLETE: dict[str, Any] = {
    "full_name": "Alice Smith",
    "staff_id": "AB1234",
    "destination": "Lisbon",
    "departure_date": "2026-03-03",
    "return_date": "2026-03-07",
    "mode": "rail",
    "total": 180,
    "cost_centre": "CC-104",
    "manager_email": "joao.silva@example.com",
    "receipts_attached": True,
}

FormFields = dict[str, str | float | bool]
"""A page form's fields as the request context posts them (``APIRequestContext.post(form=)``)."""


@pytest.fixture
def alice(stack: LocalStack) -> Iterator[Agent]:
    with Agent(stack.api_url, ALICE) as agent:
        yield agent


def history(agent: Agent, instance: str, field: str) -> list[dict[str, Any]]:
    read = agent.call("form_read", {"form": agent.form, "instance": instance, "part": field})
    revisions: list[dict[str, Any]] = read["revisions"]
    return revisions


def save(page: Page, field: str, label: str) -> None:
    """Press the field's Save button and wait for the page it leads to."""
    with page.expect_navigation():
        row(page, field).get_by_role("button", name=f"Save {label}").click()


def test_a_correction_lands_as_the_persons_revision_and_the_agent_hears_of_it(
    page: Page, alice: Agent
) -> None:
    # GIVEN alice's claim with her name as the agent heard it, and her page open
    instance = alice.start({"full_name": "Alice Smith"})
    open_form(page, alice.link(instance))
    # WHEN she corrects it on the page
    page.locator("#input-full_name").fill("Alice Smyth")
    save(page, "full_name", "Full name")
    # THEN the page says it is saved and shows it as hers
    expect(page.locator("#notice")).to_have_text("Saved Full name.")
    expect(row(page, "full_name").locator(".value")).to_have_text("Alice Smyth")
    expect(row(page, "full_name").locator(".meta").first).to_contain_text("Written by you")
    # AND it is a revision by the user, and the agent's next call's status line says so
    latest = history(alice, instance, "full_name")[-1]
    assert (latest["value"], latest["by"]) == ("Alice Smyth", "user"), latest
    result = alice.call("form_read", {"form": "travel-claim", "instance": instance})
    assert "the user changed on their form page: Full name = Alice Smyth" in result["status_line"]


def test_a_memory_offer_is_applied_with_one_click(page: Page, stack: LocalStack) -> None:
    person = f"dev:acme:p{uuid.uuid4().hex[:8]}"
    with Agent(stack.api_url, person, form="health-check") as agent:
        agent.state("person.weight_kg", {"value": 70, "words": "70 kg"})
        instance = agent.start()
        open_form(page, agent.link(instance))
        expect(row(page, "weight_kg").locator(".badge")).to_have_text(
            "Offered from memory — not applied"
        )
        # WHEN the person presses Apply beside the offer
        with page.expect_navigation():
            row(page, "weight_kg").get_by_role("button", name="Apply").click()
        # THEN the weight is answered, by them
        expect(row(page, "weight_kg").locator(".badge")).to_have_text("Answered")
        latest = history(agent, instance, "weight_kg")[-1]
        assert latest["by"] == "user" and latest["value"] in ("70", 70, "70.0"), latest


def test_the_form_is_not_sent_while_memory_fills_are_unconfirmed(
    page: Page, stack: LocalStack
) -> None:
    person = f"dev:acme:p{uuid.uuid4().hex[:8]}"
    with Agent(stack.api_url, person, form="health-check") as agent:
        # GIVEN a check-in whose height memory filled, everything else answered by the agent
        agent.state("person.height_cm", {"words": "5'8\""})
        instance = agent.start()
        agent.fill(instance, {"date_of_birth": "1990-04-02", "weight_kg": 71, "feeling": "good"})
        open_form(page, agent.link(instance))
        # WHEN the person presses Send without confirming the height
        with page.expect_navigation():
            page.get_by_role("button", name="Send the form").click()
        # THEN it is not sent, and the page says what to confirm
        expect(page.locator("#notice")).to_contain_text("Height (cm)")
        expect(page.locator("#notice")).to_contain_text("confirm")
        assert agent.call("form_list", {})["forms"] is not None
        status = agent.call("form_read", {"form": "health-check", "instance": instance})
        assert "status_line" in status  # still open: an open form has a status line
        # WHEN they confirm the answers memory filled, then send
        with page.expect_navigation():
            page.get_by_role("button", name="Confirm these answers").click()
        expect(page.locator("#notice")).to_have_text("Confirmed the answers filled from memory.")
        with page.expect_navigation():
            page.get_by_role("button", name="Send the form").click()
        # THEN it is sent
        expect(page.locator("#notice")).to_have_text("Sent. Your answers are submitted.")
        expect(page.locator("#form-status")).to_contain_text("Closed")
        assert history(agent, instance, "height_cm")[-1]["by"] == "user"


def test_a_post_sent_twice_applies_once(page: Page, alice: Agent) -> None:
    instance = alice.start({"full_name": "Alice Smith"})
    open_form(page, alice.link(instance))
    form = row(page, "full_name").locator("form.answer")
    fields: FormFields = form.evaluate(
        "(f) => Object.fromEntries([...new FormData(f)].filter(([k]) => k !== 'value'))"
    )
    fields |= {"value": "Alice Smyth", "action": "answer"}  # what pressing Save adds
    # WHEN the browser sends the same post twice (a double click on a slow network, a resend)
    answers = [
        page.request.post(page.url.split("?")[0], form=fields, max_redirects=0) for _ in range(2)
    ]
    # THEN both are answered as landed, and it is applied once
    assert [a.status for a in answers] == [303, 303]
    values = [r["value"] for r in history(alice, instance, "full_name")]
    assert values == ["Alice Smith", "Alice Smyth"]


def test_a_double_send_sends_once(page: Page, alice: Agent) -> None:
    # GIVEN a complete claim (the travel claim stays open for corrections until sent)
    instance = alice.start(COMPLETE)
    open_form(page, alice.link(instance))
    form = page.locator("section.send form")
    fields: FormFields = form.evaluate("(f) => Object.fromEntries(new FormData(f))")
    # WHEN its Send is posted twice (a double click on a slow network, a resend)
    answers = [
        page.request.post(page.url.split("?")[0], form=fields, max_redirects=0) for _ in range(2)
    ]
    # THEN both land as the one call, and it is sent once
    assert [a.status for a in answers] == [303, 303]
    listed = alice.call("form_list", {})
    mine = [f for f in listed["started"] if f["instance"] == instance]
    assert mine and mine[0]["status"].startswith("completed"), listed
    page.reload()
    expect(page.locator("#form-status")).to_contain_text("Closed")


def test_a_form_is_filled_from_the_keyboard_alone(page: Page, alice: Agent) -> None:
    instance = alice.start()
    open_form(page, alice.link(instance))
    # WHEN the person tabs to the first answer, types it and presses Enter
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "input-full_name":
            break
    else:
        pytest.fail("Tab never reached the first answer")
    page.keyboard.type("Alice Smith")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    # THEN it is saved
    expect(page.locator("#notice")).to_have_text("Saved Full name.")
    assert history(alice, instance, "full_name")[-1]["value"] == "Alice Smith"


def test_without_script_a_change_meanwhile_keeps_what_the_person_typed(
    browser: Browser, alice: Agent
) -> None:
    context = browser.new_context(java_script_enabled=False, viewport=DESKTOP)
    try:
        page = context.new_page()
        instance = alice.start({"full_name": "Alice Smith"})
        open_form(page, alice.link(instance))
        # GIVEN the person types a new name, and the agent writes the name meanwhile
        page.locator("#input-full_name").fill("Alice Smyth")
        alice.fill(instance, {"full_name": "Alicia Smith"})
        # WHEN the person saves
        with page.expect_navigation():
            row(page, "full_name").get_by_role("button", name="Save Full name").click()
        # THEN nothing is overwritten: the page says what changed and keeps what they typed
        expect(page.locator("#notice")).to_contain_text("Full name was changed while you were")
        expect(row(page, "full_name").locator(".value")).to_have_text("Alicia Smith")
        expect(page.locator("#input-full_name")).to_have_value("Alice Smyth")
        assert history(alice, instance, "full_name")[-1]["value"] == "Alicia Smith"
        # AND saving again replaces it, knowingly
        with page.expect_navigation():
            row(page, "full_name").get_by_role("button", name="Save Full name").click()
        expect(row(page, "full_name").locator(".value")).to_have_text("Alice Smyth")
    finally:
        context.close()


def test_a_refused_value_is_shown_beside_its_field_accessibly(page: Page, alice: Agent) -> None:
    instance = alice.start()
    open_form(page, alice.link(instance))
    page.locator("#input-staff_id").fill("nope")
    save(page, "staff_id", "Staff ID")
    problem = page.locator("#problem-staff_id")
    expect(problem).to_contain_text("Staff ID")
    expect(page.locator("#input-staff_id")).to_have_value("nope")
    expect(page.locator("#input-staff_id")).to_have_attribute("aria-invalid", "true")
    assert axe_violations(page) == []
    take_screenshots(page, "form-page-refused")
    page.set_viewport_size(PHONE)
    assert horizontal_overflow(page) == 0
