"""The approver's queue in headless Chromium, on the local stack as ``make dev`` runs it.

A requester files a purchase request over the threshold through the tool API (an agent's
calls, dev tokens); the finance approver's link is minted with their dev token (``POST
/approvals/page-links``, the role in the token's roles claim) and opened in the browser: the
entry page, its button, the queue. The queue shows only what this person may decide (their
tenant, their role, never a form they filled); a decision from an approval's page lands once
however often the form is sent; axe-clean, no wider than a phone. Each test runs in a tenant
of its own, so the package's shared stack holds no one else's approvals for it. The run
writes the screenshots ``approval-queue`` and ``approval-page``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from playwright.sync_api import Page

from formwork.infra.local.gateway import dev_token
from formwork.infra.local.stack import LocalStack
from tests.browser.conftest import PHONE, Agent, axe_violations, horizontal_overflow, screenshots

BIG = {"item": "Laser cutter", "supplier": "Acme", "amount": "7200.00"}


class Tenant:
    """A tenant of its own on the shared stack: a requester, and tokens for its people."""

    def __init__(self, stack: LocalStack) -> None:
        self.stack = stack
        self.name = f"t{uuid.uuid4().hex[:8]}"

    def person(self, sub: str, roles: tuple[str, ...] = ()) -> Agent:
        token = dev_token(sub, self.name, roles=roles).removeprefix("Bearer ")
        return Agent(self.stack.api_url, token, form="purchase-request")

    def request(self, values: dict[str, Any] | None = None) -> str:
        """A purchase request by alice, over the threshold: its approval id."""
        with self.person("alice") as alice:
            result = alice.call("form_start", {"form": alice.form, "values": values or BIG})
        (approval_id,) = result["fired"]
        return str(approval_id)


@pytest.fixture
def tenant(stack: LocalStack) -> Tenant:
    return Tenant(stack)


@pytest.fixture
def finance(tenant: Tenant) -> Iterator[Agent]:
    """The tenant's finance approver (their token holds the role)."""
    with tenant.person("bob", ("finance",)) as bob:
        yield bob


def approvals_link(agent: Agent, approval_id: str | None = None) -> str:
    body = {} if approval_id is None else {"approval_id": approval_id}
    response = agent.http.post("/approvals/page-links", json=body)
    assert response.status_code == 200, response.text
    url: str = response.json()["url"]
    return url


def open_link(page: Page, url: str) -> None:
    """Open a link as the person does: its entry page, then its button."""
    response = page.goto(url)
    assert response is not None and response.status == 200
    assert page.locator("h1").inner_text() == "Open your approvals"
    with page.expect_navigation():
        page.get_by_role("button", name="Open your approvals").click()


def listed(page: Page) -> list[str]:
    ids: list[str] = page.locator(".aq-item[data-approval]").evaluate_all(
        "(items) => items.map((i) => i.dataset.approval)"
    )
    return ids


def owed(agent: Agent) -> list[dict[str, Any]]:
    response = agent.http.get("/approvals")
    assert response.status_code == 200, response.text
    rows: list[dict[str, Any]] = response.json()["owed"]
    return rows


# ------------------------------------------------------------------------- the queue


def test_the_queue_shows_only_what_the_person_may_decide(
    page: Page, tenant: Tenant, finance: Agent, stack: LocalStack
) -> None:
    # GIVEN a request in this tenant, and one in another tenant
    mine = tenant.request()
    elsewhere = Tenant(stack).request()
    # WHEN the finance approver opens their queue
    open_link(page, approvals_link(finance))
    assert urlsplit(page.url).path == "/pages/approvals"
    # THEN it lists their tenant's request, with its answers, who asked and the deadline
    assert listed(page) == [mine] and elsewhere not in listed(page)
    item = page.locator(f'[data-approval="{mine}"]')
    text = item.inner_text()
    assert "Laser cutter" in text and "7200.00" in text and "alice" in text
    assert "Decide by" in text
    assert axe_violations(page) == []
    screenshots(page, "approval-queue")
    # AND the requester holding the role herself, or someone of another role, sees none of it
    for sub, roles in (("alice", ("finance",)), ("carol", ("sales",))):
        with tenant.person(sub, roles) as other:
            open_link(page, approvals_link(other))
            assert listed(page) == []
            assert page.get_by_text("Nothing is waiting for you.").count() == 1


def test_a_decision_from_the_page_lands_once(page: Page, tenant: Tenant, finance: Agent) -> None:
    # GIVEN the link a notification would carry, to one approval
    approval_id = tenant.request()
    open_link(page, approvals_link(finance, approval_id))
    assert urlsplit(page.url).path == "/pages/approvals/" + quote(approval_id, safe="")
    assert page.get_by_role("heading", name="Waiting for your decision").count() == 1
    assert axe_violations(page) == []
    screenshots(page, "approval-page")
    # WHEN the approver writes a note and approves
    page.get_by_label("Note (optional)").fill("Within budget")
    with page.expect_navigation():
        page.get_by_role("button", name="Approve").click()
    # THEN the page says it is recorded, by them, and offers no second decision
    assert "Your decision is recorded: approved." in page.get_by_role("status").inner_text()
    assert "Approved by bob" in page.locator(".aq-state").inner_text()
    assert page.get_by_role("button", name="Approve").count() == 0
    # AND Back shows the approval as it stands now (pages are never cached): no form to send
    page.go_back()
    assert page.get_by_role("heading", name="Decided").count() == 1
    assert page.get_by_role("button", name="Approve").count() == 0
    # AND the API says the same: settled once, by bob, with the note
    response = finance.http.get("/approvals")
    settled = [row for row in response.json()["settled"] if row["approval_id"] == approval_id]
    assert len(settled) == 1 and settled[0]["settled"]["by"] == "bob"
    assert settled[0]["settled"]["note"] == "Within budget"
    assert owed(finance) == []


def test_a_resent_post_applies_once(page: Page, tenant: Tenant, finance: Agent) -> None:
    """The same form sent twice (a double click on a slow network, without script): the
    second post is answered as the first, and decides nothing again."""
    approval_id = tenant.request()
    open_link(page, approvals_link(finance, approval_id))
    form = page.locator("form.aq-decide")
    fields: dict[str, str] = form.evaluate("(f) => Object.fromEntries(new FormData(f).entries())")
    posted: dict[str, str | float | bool] = {**fields, "decision": "rejected", "note": ""}
    statuses = []
    for _ in range(2):  # the page's own context: its cookies
        response = page.request.post(page.url, form=posted, max_redirects=0)
        statuses.append((response.status, response.headers.get("location")))
    assert statuses[0] == statuses[1] and statuses[0][0] == 303
    page.goto(page.url.split("?")[0] + "?" + str(statuses[0][1]).partition("?")[2])
    assert owed(finance) == []
    assert "Your decision is recorded: rejected." in page.get_by_role("status").inner_text()


def test_axe_and_a_phone_sized_viewport(page: Page, tenant: Tenant, finance: Agent) -> None:
    approval_id = tenant.request()
    page.set_viewport_size(PHONE)
    page.goto(approvals_link(finance))
    assert axe_violations(page) == [] and horizontal_overflow(page) == 0
    with page.expect_navigation():
        page.get_by_role("button", name="Open your approvals").click()
    assert axe_violations(page) == [] and horizontal_overflow(page) == 0
    with page.expect_navigation():
        page.locator(f'[data-approval="{approval_id}"] a').click()
    assert axe_violations(page) == [] and horizontal_overflow(page) == 0
    # the decision is reached and sent by keyboard alone
    page.get_by_label("Note (optional)").focus()
    page.keyboard.type("ok")
    page.keyboard.press("Tab")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert "Your decision is recorded: approved." in page.get_by_role("status").inner_text()
    assert horizontal_overflow(page) == 0
