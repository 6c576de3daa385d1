"""The builder's canvas over API Gateway events (``formwork.aws.canvas_pages``, ``docs/pages.md``).

A builder agent builds a draft through the tool route; the person mints a link to the draft's
canvas with their JWT, enters it through the form page's entry page and gets the canvas's own
cookie. The canvas shows the draft as the form it will be (steps, the 12-column grid, each
field's kind, constraints in the compiler's words and rules in words, the edit log with who
made each edit, the compiler's problems, the published versions). A click selects a field or a
step for the agent's next call without an id, per person; undo and redo go through the edit
log; publishing needs the publisher role held when the link was minted. Every post needs the
session, its CSRF token and this origin; another tenant's draft is the same 404 as a missing
one.
"""

from __future__ import annotations

import re
from html import unescape
from typing import Any
from urllib.parse import urlsplit

import pytest

from formwork.aws.http import is_page
from tests.functional.conftest import Api, Response, make_service
from tests.functional.test_builder_api import ANA, EMAIL, FORM, OTHER, PUBLISHER, Builder
from tests.functional.test_memory_pages import Browser, Clock

CANVAS = f"/pages/canvas/{FORM}"
BEN: dict[str, str] = {"sub": "ben", "tenant": "acme"}


class Canvas:
    """The API (the builder agent's and the person's JWT) and browsers on the canvas."""

    def __init__(self) -> None:
        self.api = Api.over(make_service(), clock=Clock())
        self.builder = Builder(self.api)

    def build(self) -> None:
        self.builder.call(
            "create_form",
            input={"title": "Contact us", "steps": [{"title": "Contact"}, {"title": "More"}]},
        )
        self.builder.call("add_field", input={"step": "contact", **EMAIL})
        self.builder.call(
            "add_field",
            input={
                "step": "contact",
                "field": {
                    "kind": "integer",
                    "label": "Age",
                    "minimum": 18,
                    "maximum": 99,
                    "layout": {"w": 6},
                    "when": {"field": "email", "op": "answered"},
                },
            },
        )

    def link(self, claims: dict[str, str] = ANA, form: str = FORM) -> Response:
        return self.api.post(f"/builder/forms/{form}/page-links", {}, claims=claims)

    def opened(self, claims: dict[str, str] = ANA) -> tuple[Browser, Response]:
        minted = self.link(claims)
        assert minted.status == 200, minted
        browser = Browser(self.api)
        return browser, browser.enter(minted.json()["url"])


def hidden(page: Response, action: str, ref: str | None = None) -> dict[str, str]:
    """The hidden fields of the canvas's form for ``action`` (on ``ref``, for a selection)."""
    for form in re.findall(r"<form[^>]*>(.*?)</form>", page.text, re.S):
        fields = {
            name: unescape(value)
            for name, value in re.findall(r'name="([a-z_]+)" value="([^"]*)"', form)
        }
        if fields.get("action") == action and (ref is None or fields.get("field") == ref):
            return fields
    raise AssertionError(f"no {action} form for {ref}")


def text(page: Response) -> str:
    return unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.text)))


@pytest.fixture
def canvas() -> Canvas:
    made = Canvas()
    made.build()
    return made


def test_the_canvas_shows_the_draft_as_the_form_it_will_be(canvas: Canvas) -> None:
    browser, page = canvas.opened()
    assert page.status == 200, page
    shown = text(page)
    assert "Contact us" in shown and "Step 1: Contact" in shown and "Step 2: More" in shown
    assert "email · email · required" in shown
    assert "Accepts integer 18-99" in shown  # the compiler's words for the constraint
    assert "Asked only when email answered" in shown  # the rule in the outline's words
    assert 'class="field cv-item col-start-1 col-span-6' in page.text  # the 12-column grid
    assert "Agent" in shown and 'Added field "age"' in shown  # the edit log, by whom
    assert "Before it can be published" in shown and "Not published yet" in shown
    assert 'id="cv-publish"' not in page.text  # Ana holds no publisher role
    assert browser.get(f"{CANVAS}/version").json()["version"] == 3


def test_the_problems_are_the_ones_publishing_refuses_with(canvas: Canvas) -> None:
    refused = canvas.api.post(f"/builder/forms/{FORM}/publish", {}, claims=PUBLISHER)
    assert refused.status == 422, refused
    problems = refused.json()["problems"]
    assert problems == ["form 'contact-us': step 'more' declares no fields"]
    browser, page = canvas.opened()
    listed = re.search(r'<ul id="cv-problem-list">(.*?)</ul>', page.text, re.S)
    assert listed is not None
    assert [unescape(p) for p in re.findall(r"<li>(.*?)</li>", listed.group(1))] == problems
    canvas.builder.call(
        "add_field", input={"step": "more", "field": {"kind": "url", "label": "Site"}}
    )
    assert "Ready to publish" in text(browser.get(CANVAS))


def test_another_tenants_draft_is_the_same_404_as_a_missing_one(canvas: Canvas) -> None:
    foreign = canvas.link(OTHER)
    missing = canvas.link(ANA, form="no-such-form")
    assert foreign.status == missing.status == 404
    assert foreign.json()["error"] == missing.json()["error"] == "not_found"
    # a globex session cannot read acme's canvas either: its cookie is for its own draft
    browser, _ = canvas.opened()
    stranger = Browser(canvas.api)
    stranger.cookies = dict(browser.cookies)
    stranger.cookies = {k: v + "x" for k, v in stranger.cookies.items()}
    assert stranger.get(CANVAS).status == 404


def test_a_link_opens_once_and_a_form_link_is_never_a_canvas_link(canvas: Canvas) -> None:
    url = canvas.link().json()["url"]
    path = urlsplit(url).path
    first = Browser(canvas.api)
    first.enter(url)
    other = Browser(canvas.api)
    assert other.post(path).status == 404  # spent
    assert first.get(CANVAS).status == 200
    assert Browser(canvas.api).get(CANVAS).status == 404  # no cookie


def test_a_click_selects_for_the_agents_next_call_per_person(canvas: Canvas) -> None:
    ana, page = canvas.opened(ANA)
    picked = ana.post(CANVAS, hidden(page, "select", "age"))
    assert picked.status == 303 and picked.headers["location"] == f"{CANVAS}?done=select"
    again = ana.get(picked.headers["location"])
    assert 'Selected field "age"' in text(again)
    assert "cv-item col-start-1 col-span-6 cv-selected" in again.text
    # the agent's next call without an id edits the clicked field
    made = canvas.builder.call("update_field", input={"updates": {"required": False}})
    assert made["ok"] is True and "age" in made["summary"], made
    fields = canvas.builder.draft()["document"]["steps"][0]["items"]
    assert [f["id"] for f in fields if f.get("required") is False] == ["age"]
    # Ben, of the same tenant, selected nothing: his call without an id names no field
    ben = canvas.builder.call("update_field", claims=BEN, input={"updates": {"required": True}})
    assert ben["ok"] is False and ben["error"] == "no_selection", ben
    # a step is selected the same way
    step = ana.post(CANVAS, hidden(ana.get(CANVAS), "select", "more"))
    assert step.status == 303
    added = canvas.builder.call("add_field", input={"field": {"kind": "phone", "label": "Tel"}})
    assert added["ok"] is True
    steps = canvas.builder.draft()["document"]["steps"]
    assert [i["id"] for i in steps[1]["items"]] == ["tel"]


def test_a_selection_of_something_not_in_the_draft_is_refused(canvas: Canvas) -> None:
    ana, page = canvas.opened()
    fields = {**hidden(page, "select", "age"), "field": "nope"}
    refused = ana.post(CANVAS, fields)
    assert refused.status == 422 and "no longer in the form" in text(refused)


def test_undo_and_redo_go_through_the_edit_log_once_per_post(canvas: Canvas) -> None:
    canvas.builder.call("delete_field", input={"field": "age"})
    ana, page = canvas.opened()
    undo = hidden(page, "undo")
    assert ana.post(CANVAS, undo).status == 303
    assert "age" in [i["id"] for i in canvas.builder.draft()["document"]["steps"][0]["items"]]
    restored = canvas.builder.draft()["document"]["steps"][0]["items"][1]
    assert restored["minimum"] == 18 and restored["layout"]["w"] == 6
    assert ana.post(CANVAS, undo).status == 303  # the same post again: replayed, not moved
    assert canvas.builder.draft()["version"] == 5
    redo = hidden(ana.get(CANVAS), "redo")
    assert ana.post(CANVAS, redo).status == 303
    assert "age" not in [i["id"] for i in canvas.builder.draft()["document"]["steps"][0]["items"]]


def test_publish_needs_the_role_held_when_the_link_was_minted(canvas: Canvas) -> None:
    canvas.builder.call(
        "add_field", input={"step": "more", "field": {"kind": "url", "label": "Site"}}
    )
    ana, page = canvas.opened(ANA)
    forged = {**hidden(page, "undo"), "action": "publish", "version": "0"}
    refused = ana.post(CANVAS, forged)
    assert refused.status == 403 and "form_publisher" in text(refused)
    assert canvas.api.post(f"/builder/forms/{FORM}/publish", {}, claims=ANA).status == 403
    assert canvas.api.get(f"/forms/{FORM}/versions/1", claims=ANA).status == 404
    cy, page = canvas.opened(PUBLISHER)
    publish = hidden(page, "publish")
    landed = cy.post(CANVAS, publish)
    assert landed.status == 303, landed
    assert canvas.api.get(f"/forms/{FORM}/versions/1", claims=ANA).status == 200
    shown = text(cy.get(f"{CANVAS}?done=publish"))
    assert "Published." in shown and "Version 1" in shown
    assert cy.post(CANVAS, publish).status == 409  # resent: nothing published again
    assert canvas.api.get(f"/forms/{FORM}/versions/2", claims=ANA).status == 404


@pytest.mark.parametrize(
    "change",
    ["cross_site", "no_cookie", "bad_csrf", "no_key", "unknown_field", "a_value"],
)
def test_a_post_without_origin_session_csrf_or_a_proper_form_is_refused(
    canvas: Canvas, change: str
) -> None:
    ana, page = canvas.opened()
    fields = hidden(page, "undo")
    headers: dict[str, str] | None = None
    if change == "cross_site":
        headers = {"sec-fetch-site": "cross-site"}
    elif change == "no_cookie":
        ana.cookies.clear()
    elif change == "bad_csrf":
        fields["csrf_token"] = "x" * 43
    elif change == "no_key":
        fields.pop("key")
    elif change == "unknown_field":
        fields["evil"] = "1"
    elif change == "a_value":
        fields["value"] = "1"
    before = canvas.builder.draft()["version"]
    assert ana.post(CANVAS, fields, headers=headers).status == 404
    assert canvas.builder.draft()["version"] == before


def test_only_the_canvas_posts_skip_the_jwt() -> None:
    def event(method: str, path: str) -> dict[str, Any]:
        return {"rawPath": path, "requestContext": {"http": {"method": method}}}

    assert is_page(event("POST", "/pages/canvas/contact-us"))
    assert is_page(event("GET", "/pages/canvas/contact-us/version"))
    assert not is_page(event("POST", "/builder/forms/contact-us/page-links"))
    assert not is_page(event("POST", "/pages/canvas/contact-us/extra"))
