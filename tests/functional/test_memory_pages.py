"""The fact editor over API Gateway events (``formwork.aws.memory_pages``, ``docs/pages.md``).

A chatbot backend states the user's facts and mints a link to their fact editor with the JWT;
the browser enters it through the form page's entry page, gets the fact editor's own cookie,
and reads, corrects, deletes, exports and switches memory with plain form posts. Every post
needs the session, its CSRF token and this origin; a resent post applies once; memory off
refuses a correction; and nothing shows or changes one principal's facts through another's
session, in one tenant or across two.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from html import unescape
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest

from forms.storage.facts import InMemoryFactStore
from formwork.aws.http import is_page
from formwork.aws.pages import access
from tests.functional.conftest import SETTINGS, Api, Response, build_event, make_service

ALICE: dict[str, str] = {"sub": "alice", "tenant": "acme"}
BOB: dict[str, str] = {"sub": "bob", "tenant": "acme"}
ALICE_AT_GLOBEX: dict[str, str] = {"sub": "alice", "tenant": "globex"}
T0 = datetime(2026, 9, 3, 10, 0, tzinfo=UTC)
WEIGHT = "/memory/facts/person.weight_kg"
HEIGHT = "/memory/facts/person.height_cm"
SAME_ORIGIN = {"sec-fetch-site": "same-origin"}


class Clock:
    """The App's clock (Unix seconds): a second per reading from ``T0``."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        self.now += timedelta(seconds=1)
        return self.now.timestamp()


class Browser:
    """A person's browser on the fact editor: it keeps the cookies it is given."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.cookies: dict[str, str] = {}

    def get(self, path: str) -> Response:
        target, _, query = path.partition("?")
        return self._send(
            build_event(
                "GET", target, claims=None, query=dict([query.split("=")]) if query else None
            )
        )

    def post(
        self, path: str, fields: dict[str, str] | None = None, headers: dict[str, str] | None = None
    ) -> Response:
        event = build_event(
            "POST", path, claims=None, headers=SAME_ORIGIN if headers is None else headers
        )
        event["headers"]["content-type"] = "application/x-www-form-urlencoded"
        event["body"] = urlencode(fields or {})
        return self._send(event)

    def _send(self, event: dict[str, Any]) -> Response:
        if self.cookies:
            event["cookies"] = [f"{k}={v}" for k, v in self.cookies.items()]
        response = self.api.send(event)
        for cookie in response.raw.get("cookies") or []:
            name, _, value = cookie.split(";", 1)[0].partition("=")
            self.cookies[name] = value
        return response

    def enter(self, url: str) -> Response:
        """Open a link: its entry page, its button, then the page the 303 names."""
        path = urlsplit(url).path
        entry = self.get(path)
        assert entry.status == 200, entry
        opened = self.post(path)
        assert opened.status == 303, opened
        return self.get(opened.headers["location"])


class Editor:
    """The API (the chatbot backend's side, with a JWT) and browsers (the person's)."""

    def __init__(self) -> None:
        self.facts = InMemoryFactStore()
        self.api = Api.over(make_service(), SETTINGS, facts=self.facts, clock=Clock())

    def state(self, path: str, body: dict[str, Any], claims: dict[str, str] = ALICE) -> None:
        event = build_event("PUT", path, body=json.dumps(body), claims=claims)
        response = self.api.send(event)
        assert response.status == 200, response

    def link(self, claims: dict[str, str] = ALICE) -> str:
        response = self.api.post("/memory/page-links", {}, claims=claims)
        assert response.status == 200, response
        url: str = response.json()["url"]
        return url

    def opened(self, claims: dict[str, str] = ALICE) -> tuple[Browser, Response]:
        browser = Browser(self.api)
        return browser, browser.enter(self.link(claims))

    def history(self, path: str, claims: dict[str, str] = ALICE) -> list[dict[str, Any]]:
        response = self.api.get(path, claims=claims)
        assert response.status == 200, response
        revisions: list[dict[str, Any]] = response.json()["history"]
        return revisions

    def listed(self, claims: dict[str, str] = ALICE) -> dict[str, Any]:
        response = self.api.get("/memory/facts", claims=claims)
        assert response.status == 200, response
        return {line["key"]: line for line in response.json()["facts"]}


@pytest.fixture
def editor() -> Editor:
    made = Editor()
    made.state(WEIGHT, {"words": "70 kg"})
    made.state(HEIGHT, {"words": "5'8\""})
    return made


def hidden(html: str, action: str) -> dict[str, str]:
    """The hidden fields of the form posting to ``action``."""
    match = re.search(rf'<form [^>]*action="{re.escape(action)}">(.*?)</form>', html, re.S)
    assert match is not None, action
    return {
        name: unescape(value)
        for name, value in re.findall(
            r'<input type="hidden" name="([a-z_]+)" value="([^"]*)">', match.group(1)
        )
    }


def fact_item(html: str, key: str) -> str:
    match = re.search(
        rf'<li class="fe-fact[^"]*" data-fact="{re.escape(key)}">(.*?)</li>'
        r'\s*(?=<li class="fe-fact|</ul>)',
        html,
        re.S,
    )
    assert match is not None, key
    return unescape(match.group(1))


REFUSAL = "This link does not open a page"


# ---------------------------------------------------------------------------- the link


def test_the_link_is_minted_with_the_jwt_and_opens_the_callers_facts(editor: Editor) -> None:
    # GIVEN alice's stated facts WHEN her link is entered through its entry page
    browser = Browser(editor.api)
    path = urlsplit(editor.link()).path
    entry = browser.get(path)
    # THEN the entry page spends nothing and says what it opens
    assert entry.status == 200 and "Open your memory" in entry.text
    opened = browser.post(path)
    # AND its button sets the fact editor's own cookie and 303s to the page
    assert opened.status == 303 and opened.headers["location"] == "/pages/memory"
    cookie = opened.raw["cookies"][0]
    assert cookie.startswith(access.MEMORY_COOKIE + "=")
    assert all(part in cookie for part in ("HttpOnly", "Secure", "SameSite=Strict", "Path=/pages/"))
    page = browser.get("/pages/memory")
    assert page.status == 200
    # AND the page shows each fact with the words she said, the decay and what a form does
    weight = fact_item(page.text, "person.weight_kg")
    assert "70 kg" in weight and "“70 kg”" in weight
    assert "(weeks)" in weight and "Only offered" in weight
    height = fact_item(page.text, "person.height_cm")
    assert "173 cm" in height and "“5'8\"”" in height
    assert "Worked out from your words" in height and "Fills forms" in height
    assert page.headers["content-security-policy"].startswith("default-src 'none'")


def test_minting_needs_the_jwt(editor: Editor) -> None:
    response = editor.api.post("/memory/page-links", {}, claims=None)
    assert response.status == 401


def test_the_link_opens_once_and_a_form_link_is_not_a_memory_link(editor: Editor) -> None:
    url = editor.link()
    path = urlsplit(url).path
    first = Browser(editor.api)
    assert first.post(path).status == 303
    # a second browser posting the same link gets the refusal, no cookie
    second = Browser(editor.api)
    again = second.post(path)
    assert again.status == 404 and REFUSAL in again.text and not again.raw.get("cookies")
    # a memory link's token is no form link, nor a session; a form link is no memory link
    key = b"formwork-local-page-key-public-never-deploy"
    token = path.rsplit("/", 1)[1]
    with pytest.raises(access.Refused):
        access.read_link(key, token, T0.timestamp())
    with pytest.raises(access.Refused):
        access.read_memory_session(key, token, T0.timestamp())
    form_link = access.mint_link(key, "acme/alice", "conv-1", "fi_1", int(T0.timestamp()) + 60)
    with pytest.raises(access.Refused):
        access.read_memory_link(key, form_link, T0.timestamp())
    entered = Browser(editor.api).post(f"/pages/enter/{form_link}")
    assert entered.headers.get("location") != "/pages/memory"
    assert not any(c.startswith(access.MEMORY_COOKIE) for c in entered.raw.get("cookies") or [])


def test_the_page_needs_the_fact_editors_session(editor: Editor) -> None:
    browser = Browser(editor.api)
    # no cookie, a forged one, a form's session under the memory cookie's name: one refusal
    assert browser.get("/pages/memory").status == 404
    browser.cookies[access.MEMORY_COOKIE] = "v1.e30." + "A" * 43
    assert browser.get("/pages/memory").status == 404
    key = b"formwork-local-page-key-public-never-deploy"
    link = access.read_link(
        key,
        access.mint_link(key, "acme/alice", "", "", int(T0.timestamp()) + 600),
        T0.timestamp(),
    )
    browser.cookies[access.MEMORY_COOKIE] = access.open_session(
        key, link, int(T0.timestamp()) + 600
    )
    refused = browser.get("/pages/memory")
    assert refused.status == 404 and REFUSAL in refused.text
    assert browser.get("/pages/memory/export").status == 404


# ---------------------------------------------------------------------------- writes


def test_a_correction_is_a_new_revision_and_a_resent_post_applies_once(editor: Editor) -> None:
    browser, page = editor.opened()
    action = "/pages/memory/facts/person.weight_kg/correct"
    fields = {**hidden(page.text, action), "value": "72 kg"}
    # WHEN she corrects her weight on the page
    done = browser.post(action, fields)
    # THEN it is a correction (Post/Redirect/Get), the old value kept in the history
    assert done.status == 303 and done.headers["location"] == "/pages/memory?done=corrected"
    history = editor.history(WEIGHT)
    assert [rev["change"] for rev in history] == ["stated", "corrected"]
    assert [str(rev["value"]) for rev in history] == ["70", "72"]
    assert editor.listed()["person.weight_kg"]["words"] == "72 kg"
    shown = browser.get(done.headers["location"])
    assert "Corrected." in shown.text and "72 kg" in fact_item(shown.text, "person.weight_kg")
    # AND the same post sent again (a reload, a double click) applies nothing more
    assert browser.post(action, fields).status == 303
    assert len(editor.history(WEIGHT)) == 2


def test_a_deleted_fact_is_never_recalled_again(editor: Editor) -> None:
    browser, page = editor.opened()
    action = "/pages/memory/facts/person.height_cm/delete"
    fields = hidden(page.text, action)
    assert browser.post(action, fields).headers["location"] == "/pages/memory?done=deleted"
    assert "person.height_cm" not in editor.listed()
    assert 'data-fact="person.height_cm"' not in browser.get("/pages/memory").text
    # a resent delete applies once: the key stated again in between stays
    editor.state(HEIGHT, {"value": 180})
    assert browser.post(action, fields).status == 303
    assert str(editor.listed()["person.height_cm"]["value"]) == "180"


def test_a_refused_correction_shows_why_and_writes_nothing(editor: Editor) -> None:
    browser, page = editor.opened()
    action = "/pages/memory/facts/person.weight_kg/correct"
    refused = browser.post(action, {**hidden(page.text, action), "value": "900 kg"})
    assert refused.status == 422 and "Not saved" in refused.text
    assert len(editor.history(WEIGHT)) == 1


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"csrf_token": "forged"}, "another token"),
        ({"csrf_token": ""}, "an empty token"),
        ({"nonce": "short"}, "a malformed nonce"),
    ],
)
def test_a_post_without_the_sessions_csrf_token_is_refused(
    editor: Editor, change: dict[str, str], why: str
) -> None:
    browser, page = editor.opened()
    action = "/pages/memory/facts/person.weight_kg/delete"
    refused = browser.post(action, {**hidden(page.text, action), **change})
    assert refused.status == 404 and REFUSAL in refused.text, why
    assert "person.weight_kg" in editor.listed()


def test_another_sessions_csrf_token_is_refused(editor: Editor) -> None:
    # GIVEN alice's session, another of hers, and bob's (with a weight of his own)
    editor.state(WEIGHT, {"value": 90}, claims=BOB)
    browser, _ = editor.opened()
    _, other = editor.opened()
    _, bobs = editor.opened(BOB)
    action = "/pages/memory/facts/person.weight_kg/delete"
    # WHEN her browser posts with either one's token THEN it is refused, nothing deleted
    for page in (other, bobs):
        assert browser.post(action, hidden(page.text, action)).status == 404
    assert "person.weight_kg" in editor.listed()


@pytest.mark.parametrize(
    "headers",
    [
        {"sec-fetch-site": "cross-site"},
        {"sec-fetch-site": "same-site"},
        {"origin": "https://evil.example"},
        {"origin": "null"},
    ],
)
def test_a_cross_site_post_is_refused(editor: Editor, headers: dict[str, str]) -> None:
    browser, page = editor.opened()
    action = "/pages/memory/facts/person.weight_kg/delete"
    refused = browser.post(action, hidden(page.text, action), headers)
    assert refused.status == 404 and REFUSAL in refused.text
    assert "person.weight_kg" in editor.listed()


def test_a_post_without_the_session_is_refused(editor: Editor) -> None:
    _, page = editor.opened()
    action = "/pages/memory/facts/person.weight_kg/delete"
    stranger = Browser(editor.api)
    assert stranger.post(action, hidden(page.text, action)).status == 404
    assert "person.weight_kg" in editor.listed()


def test_memory_off_on_the_page_stops_recording_and_recall(editor: Editor) -> None:
    browser, page = editor.opened()
    switch = hidden(page.text, "/pages/memory/switch")
    assert switch["enabled"] == "off"
    # WHEN she turns memory off on the page
    assert browser.post("/pages/memory/switch", switch).headers["location"].endswith("done=off")
    # THEN the API says so, and no fact is used by a form
    lines = editor.api.get("/memory/facts", claims=ALICE).json()
    assert lines["memory_enabled"] is False
    assert {line["reason"] for line in lines["facts"]} == {"memory_off"}
    shown = browser.get("/pages/memory")
    assert "Memory is off" in shown.text and "Not used: your memory is off." in shown.text
    # AND a correction is refused, nothing written
    action = "/pages/memory/facts/person.weight_kg/correct"
    refused = browser.post(action, {**hidden(shown.text, action), "value": "72"})
    assert refused.status == 409 and "memory is off" in refused.text
    assert len(editor.history(WEIGHT)) == 1
    # AND the off post resent after she turned it on again does not turn it off
    on = hidden(shown.text, "/pages/memory/switch")
    assert browser.post("/pages/memory/switch", on).headers["location"].endswith("done=on")
    assert browser.post("/pages/memory/switch", switch).status == 303
    assert editor.api.get("/memory/settings", claims=ALICE).json()["enabled"] is True


def test_the_export_is_the_apis(editor: Editor) -> None:
    browser, _ = editor.opened()
    download = browser.get("/pages/memory/export")
    assert download.status == 200
    assert download.headers["content-disposition"].startswith("attachment")
    mine = download.json()
    theirs = editor.api.get("/memory/export", claims=ALICE).json()
    assert {**mine, "exported_at": None} == {**theirs, "exported_at": None}


# ---------------------------------------------------------------------------- principals


@pytest.mark.parametrize("other", [BOB, ALICE_AT_GLOBEX], ids=["same tenant", "another tenant"])
def test_no_session_shows_or_changes_another_principals_facts(
    editor: Editor, other: dict[str, str]
) -> None:
    # GIVEN another principal with facts of their own, one under a key alice lacks
    editor.state(WEIGHT, {"words": "95 kg"}, claims=other)
    editor.state("/memory/facts/person.date_of_birth", {"value": "1980-01-01"}, claims=other)
    browser, page = editor.opened()
    # THEN alice's page shows her facts only
    assert "95 kg" not in page.text and "1980-01-01" not in page.text
    # AND her session's posts reach her facts only: a key only the other has is missing
    csrf = hidden(page.text, "/pages/memory/switch")["csrf_token"]
    action = "/pages/memory/facts/person.date_of_birth/delete"
    refused = browser.post(action, {"csrf_token": csrf, "nonce": "n" * 24})
    assert refused.status == 404 and "no fact person.date_of_birth" in refused.text
    correct = "/pages/memory/facts/person.weight_kg/correct"
    assert browser.post(correct, {**hidden(page.text, correct), "value": "71"}).status == 303
    assert str(editor.listed(other)["person.weight_kg"]["value"]) == "95"
    assert "person.date_of_birth" in editor.listed(other)
    # AND the other's page shows theirs, not hers
    _, theirs = editor.opened(other)
    assert "95 kg" in theirs.text and "71 kg" not in theirs.text


# ---------------------------------------------------------------------------- the JWT


@pytest.mark.parametrize(
    ("method", "path", "page"),
    [
        ("POST", "/pages/memory/switch", True),
        ("POST", "/pages/memory/facts/person.weight_kg/correct", True),
        ("POST", "/pages/memory/facts/person.weight_kg/delete", True),
        ("POST", "/pages/memory", False),
        ("POST", "/pages/memory/export", False),
        ("POST", "/pages/memory/facts/person.weight_kg", False),
        ("POST", "/pages/memory/facts/person.weight_kg/confirm", False),
        ("POST", "/pages/memory/facts/a/b/delete", False),
        ("POST", "/pages/memory/switch/x", False),
        ("PUT", "/pages/memory/switch", False),
        ("DELETE", "/pages/memory/facts/person.weight_kg/delete", False),
        ("POST", "/memory/page-links", False),
    ],
)
def test_only_the_fact_editors_posts_skip_the_jwt(method: str, path: str, page: bool) -> None:
    assert is_page({"rawPath": path, "requestContext": {"http": {"method": method}}}) is page


@pytest.mark.parametrize("path", ["/pages/memory", "/pages/memory/export", "/pages/memory/x"])
def test_other_posts_under_pages_memory_need_the_jwt(editor: Editor, path: str) -> None:
    browser, _ = editor.opened()
    response = browser.post(path, {})
    assert response.status == 401 and response.json()["error"] == "unauthorized"
