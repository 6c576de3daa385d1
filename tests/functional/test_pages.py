"""The form page over API Gateway events: minting a page link, entering with it, the session
cookie, the page itself (``formwork.aws.page_routes``, ``docs/pages.md``).

A link is minted with the caller's JWT for one of their instances; another principal's,
another tenant's, another conversation's or a missing instance is one 404. Whatever is wrong
with a link or a cookie (expired, altered, used twice, minted for someone else, forged,
absent) gets the same refusal page. Every page response carries the security headers, and
every author or user text on the page is escaped.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from html import unescape
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from pydantic import Field

from forms.app import pages as pages_view
from forms.definition import FormDef, Step, field
from forms.storage.memory import InMemoryFormStore
from formwork.aws import page_routes
from formwork.aws.pages import access, render
from formwork.bootstrap import bootstrap
from tests.functional.conftest import (
    ALICE,
    BOB,
    SETTINGS,
    T0,
    Api,
    Response,
    build_event,
    make_service,
)
from tests.support import TickingClock, service_for

ALICE_AT_GLOBEX: dict[str, str] = {"sub": "alice", "tenant": "globex"}
LINK_TTL = access.DEFAULT_LINK_MINUTES * 60


class Clock:
    """The App's clock (unix seconds), still unless a test moves it."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now.timestamp()

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


OWN_ORIGIN = "https://a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com"
"""The API's origin in the test events (their ``requestContext.domainName``)."""
FROM_THE_PAGE = {"sec-fetch-site": "same-origin"}
"""What a browser says of a post made by a page of this API's own origin."""


class Browser:
    """A person's browser on the pages: it opens links and keeps the cookies it is given."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.cookies: dict[str, str] = {}

    def get(self, target: str, headers: dict[str, str] | None = None) -> Response:
        path, _, query = target.partition("?")
        event = build_event(
            "GET", path, claims=None, query=dict(parse_qsl(query)) or None, headers=headers
        )
        return self._send(event)

    def post(self, path: str, headers: dict[str, str] | None = None) -> Response:
        """Submit a form with no fields to ``path`` (the entry page's button)."""
        event = build_event("POST", path, claims=None, headers=headers)
        event["headers"]["content-type"] = "application/x-www-form-urlencoded"
        event["body"] = ""
        return self._send(event)

    def _send(self, event: dict[str, Any]) -> Response:
        if self.cookies:
            event["cookies"] = [f"{k}={v}" for k, v in self.cookies.items()]
        response = self.api.send(event)
        for cookie in response.raw.get("cookies") or []:
            name, _, value = cookie.split(";", 1)[0].partition("=")
            self.cookies[name] = value
        return response

    def open(self, url: str) -> Response:
        """Open a page link as a person does: its entry page, then its button, following the
        redirect."""
        path = urlsplit(url).path
        entered = self.get(path)
        if entered.status != 200:
            return entered
        assert f'<form class="open" method="post" action="{path}">' in entered.text
        opened = self.post(path, FROM_THE_PAGE)
        if opened.status != 303:
            return opened
        return self.get(opened.headers["location"])


class Pages:
    def __init__(self, api: Api, clock: Clock) -> None:
        self.api, self.clock = api, clock

    def mint(
        self, instance: str, conversation: str = "conv-1", claims: dict[str, str] = ALICE
    ) -> Response:
        return self.api.post(
            f"/conversations/{conversation}/page-links", {"instance_id": instance}, claims=claims
        )

    def link(self, instance: str, conversation: str = "conv-1") -> str:
        response = self.mint(instance, conversation)
        assert response.status == 200, response
        url: str = response.json()["url"]
        return url

    def start(self, form: str = "travel-claim", **kwargs: Any) -> str:
        result = self.api.call("form_start", form=form, **kwargs).json()
        assert result["ok"], result
        instance: str = result["instance"]
        return instance

    def browser(self) -> Browser:
        return Browser(self.api)


def serve(*definitions: FormDef, **parts: Any) -> Pages:
    clock = Clock()
    service = service_for(*definitions, clock=TickingClock(T0)) if definitions else make_service()
    return Pages(Api.over(service, SETTINGS, clock=clock, **parts), clock)


@pytest.fixture
def pages() -> Pages:
    return serve()


def refused(response: Response) -> bool:
    return response.status == render.REFUSED_STATUS and response.text == render.refusal_html()


# ---------------------------------------------------------------------------- minting


def test_a_link_is_minted_for_the_callers_own_instance_and_opens_its_page(pages: Pages) -> None:
    # GIVEN alice's travel claim
    instance = pages.start()
    # WHEN her backend mints a page link for it
    minted = pages.mint(instance)
    # THEN it is a link to enter on this API's own domain, expiring in the link lifetime
    assert minted.status == 200, minted
    body = minted.json()
    url = urlsplit(body["url"])
    assert (url.scheme, url.netloc) == ("https", "a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com")
    assert url.path.startswith("/pages/enter/v1.")
    assert body["expires_at"] == (T0 + timedelta(seconds=LINK_TTL)).isoformat()
    # AND opening it shows a page with one button, and the button's post sets a Secure,
    # HttpOnly, SameSite=Strict cookie scoped to /pages/ and sends the browser on to the page
    browser = pages.browser()
    entered = browser.get(url.path)
    assert entered.status == 200 and not session_cookies(entered)
    assert "<h1>Open your form</h1>" in entered.text
    opened = browser.post(url.path, FROM_THE_PAGE)
    assert opened.status == 303
    assert opened.headers["location"] == f"/pages/forms/{instance}"
    (cookie,) = opened.raw["cookies"]
    attributes = {a.strip().split("=")[0].lower() for a in cookie.split(";")[1:]}
    assert {"secure", "httponly", "path", "max-age", "samesite"} <= attributes
    assert "Path=/pages/" in cookie and "SameSite=Strict" in cookie
    page = browser.get(opened.headers["location"])
    assert page.status == 200
    assert "Travel expense claim" in page.text


def test_fetching_a_link_spends_nothing_and_its_button_opens_it_once(pages: Pages) -> None:
    # GIVEN a link to alice's instance
    instance = pages.start()
    path = urlsplit(pages.link(instance)).path
    # WHEN a chat app fetches it to preview it (another site, no cookie kept), twice
    previews = [
        pages.browser().get(path, {"sec-fetch-site": site}) for site in ("cross-site", "none")
    ]
    # THEN each gets the entry page: one button posting to the link itself, no cookie, no
    # script but the page's own file (which only keeps a second press from posting), the
    # page headers
    for preview in previews:
        assert preview.status == 200 and not session_cookies(preview)
        assert f'<form class="open" method="post" action="{path}">' in preview.text
        assert '<button type="submit">Open your form</button>' in preview.text
        assert scripts(preview.text) == [render.static_url("page.js")]
        assert "http-equiv" not in preview.text
        assert preview.headers["content-security-policy"] == render.CSP
        assert preview.headers["referrer-policy"] == "no-referrer"
        assert preview.headers["cache-control"] == "no-store"
    # AND the person's click afterwards still opens the page: the previews spent nothing
    browser = pages.browser()
    assert browser.post(path, FROM_THE_PAGE).status == 303
    assert browser.get(f"/pages/forms/{instance}").status == 200
    # AND a second post of the same link is the refusal
    again = pages.browser()
    assert refused(again.post(path, FROM_THE_PAGE)) and not again.cookies


@pytest.mark.parametrize(
    ("headers", "why"),
    [
        ({"sec-fetch-site": "cross-site"}, "another site's page"),
        ({"sec-fetch-site": "same-site"}, "another origin of the same site"),
        ({"sec-fetch-site": "none"}, "no page at all (typed or bookmarked)"),
        ({"sec-fetch-site": "cross-site", "origin": OWN_ORIGIN}, "Sec-Fetch-Site decides"),
        ({"origin": "https://evil.example"}, "no Sec-Fetch-Site, another origin"),
        ({"origin": "null"}, "no Sec-Fetch-Site, an opaque origin (a sandboxed frame)"),
        ({"origin": "http://a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com"}, "plain http"),
    ],
)
def test_a_post_from_anywhere_but_this_api_is_refused_and_spends_nothing(
    pages: Pages, headers: dict[str, str], why: str
) -> None:
    # GIVEN alice's link, in an attacker's hands (a login CSRF: the victim's browser made to
    # post it, to open the attacker's session)
    instance = pages.start()
    path = urlsplit(pages.link(instance)).path
    # WHEN it is posted from {why}
    victim = pages.browser()
    response = victim.post(path, headers)
    # THEN it is the one refusal, with no cookie
    assert refused(response), why
    assert response.headers["content-security-policy"] == render.CSP
    assert not response.raw.get("cookies") and not victim.cookies
    # AND the link is not spent: its own page's button still opens it
    assert pages.browser().post(path, FROM_THE_PAGE).status == 303


@pytest.mark.parametrize(
    "path", ["/pages/forms/{instance}/version", "/pages/forms/{instance}/x", "/pages/static/a.css"]
)
def test_no_other_post_under_pages_skips_the_jwt(pages: Pages, path: str) -> None:
    # GIVEN alice's instance WHEN a post with no token is sent under /pages/, to neither a
    # link, nor the form page, nor the fact editor's posts
    instance = pages.start()
    response = pages.browser().post(path.format(instance=instance), FROM_THE_PAGE)
    # THEN it is the API's 401, as for any route behind the JWT
    assert response.status == 401 and response.json()["error"] == "unauthorized"


@pytest.mark.parametrize(
    ("headers", "why"),
    [
        (FROM_THE_PAGE, "a page of this origin (Sec-Fetch-Site; any Origin, even null)"),
        ({"sec-fetch-site": "same-origin", "origin": "null"}, "under no-referrer's null Origin"),
        ({"origin": OWN_ORIGIN}, "no Sec-Fetch-Site, this API's own Origin"),
        ({}, "neither header (a client that is no browser)"),
    ],
)
def test_a_post_from_this_apis_own_page_opens_the_link(
    pages: Pages, headers: dict[str, str], why: str
) -> None:
    instance = pages.start()
    path = urlsplit(pages.link(instance)).path
    response = pages.browser().post(path, headers)
    assert response.status == 303, why
    assert response.headers["location"] == f"/pages/forms/{instance}"


@pytest.mark.parametrize(
    ("conversation", "claims", "which"),
    [
        ("conv-1", BOB, "another principal of the same tenant"),
        ("conv-1", ALICE_AT_GLOBEX, "the same sub in another tenant"),
        ("conv-2", ALICE, "another conversation of the same principal"),
    ],
)
def test_a_link_to_anything_but_the_callers_instance_is_the_404_of_a_missing_one(
    pages: Pages, conversation: str, claims: dict[str, str], which: str
) -> None:
    # GIVEN alice's instance in conv-1
    instance = pages.start()
    missing = pages.mint("fi_999", conversation, claims)
    # WHEN {which} asks for a link to it
    foreign = pages.mint(instance, conversation, claims)
    # THEN the answer is the one a missing instance gets, word for word but the id
    assert missing.status == foreign.status == 404, which
    assert foreign.json()["error"] == missing.json()["error"] == "not_found"
    assert foreign.json()["message"].replace(instance, "X") == missing.json()["message"].replace(
        "fi_999", "X"
    )


def test_minting_needs_the_jwt_and_a_well_formed_body(pages: Pages) -> None:
    instance = pages.start()
    anonymous = pages.api.post(
        "/conversations/conv-1/page-links", {"instance_id": instance}, claims=None
    )
    assert anonymous.status == 401
    assert pages.mint("bad id!").status == 400
    extra = pages.api.post(
        "/conversations/conv-1/page-links", {"instance_id": instance, "principal": "acme/bob"}
    )
    assert extra.status == 422


# ---------------------------------------------------------------------------- refusals


def test_expired_altered_reused_foreign_links_and_bad_cookies_are_refused_alike(
    pages: Pages,
) -> None:
    # GIVEN alice's instance, bob's instance, and a link to hers that works once
    instance = pages.start()
    bob_instance = pages.start(conversation="conv-b", claims=BOB)
    first = pages.link(instance)
    browser = pages.browser()
    assert browser.open(first).status == 200
    cookie_name = access.cookie_name(instance)
    good_cookie = browser.cookies[cookie_name]
    refusals: dict[str, Response] = {}
    # WHEN the same link's button is posted again (a second session from one link)
    refusals["reused"] = pages.browser().post(urlsplit(first).path, FROM_THE_PAGE)
    # AND a link whose payload was altered to name bob's instance, or whose MAC was altered
    token = urlsplit(pages.link(instance)).path.rsplit("/", 1)[1]
    _, payload, mac = token.split(".")
    forged = access._b64(access._unb64(payload).replace(instance.encode(), bob_instance.encode()))
    refusals["altered payload"] = pages.browser().get(f"/pages/enter/v1.{forged}.{mac}")
    flipped = ("A" if mac[0] != "A" else "B") + mac[1:]
    refusals["altered mac"] = pages.browser().get(f"/pages/enter/v1.{payload}.{flipped}")
    refusals["garbage"] = pages.browser().get("/pages/enter/not-a-token")
    # (and the same links posted, as if their entry page had been forged)
    refusals["altered payload, posted"] = pages.browser().post(
        f"/pages/enter/v1.{forged}.{mac}", FROM_THE_PAGE
    )
    refusals["altered mac, posted"] = pages.browser().post(
        f"/pages/enter/v1.{payload}.{flipped}", FROM_THE_PAGE
    )
    refusals["garbage, posted"] = pages.browser().post("/pages/enter/not-a-token", FROM_THE_PAGE)
    # AND a link signed with another key (another deployment, the public local key elsewhere)
    other = access.mint_link(b"k" * 40, "acme/alice", "conv-1", instance, int(T0.timestamp()) + 60)
    refusals["other key"] = pages.browser().get(f"/pages/enter/{other}")
    # AND a link opened after it expired
    late = pages.link(instance)
    pages.clock.advance(LINK_TTL)
    refusals["expired"] = pages.browser().open(late)
    refusals["expired, posted"] = pages.browser().post(urlsplit(late).path, FROM_THE_PAGE)
    pages.clock.advance(-LINK_TTL)
    # AND a page asked for with no cookie, a forged cookie, alice's cookie for bob's page
    refusals["no cookie"] = pages.browser().get(f"/pages/forms/{instance}")
    forger = pages.browser()
    forger.cookies[cookie_name] = good_cookie[:-2] + ("AA" if good_cookie[-2:] != "AA" else "BB")
    refusals["forged cookie"] = forger.get(f"/pages/forms/{instance}")
    thief = pages.browser()
    thief.cookies[access.cookie_name(bob_instance)] = good_cookie
    refusals["cookie of another instance"] = thief.get(f"/pages/forms/{bob_instance}")
    # AND a session cookie after it expired
    pages.clock.advance(access.DEFAULT_SESSION_MINUTES * 60)
    refusals["expired session"] = browser.get(f"/pages/forms/{instance}")
    # THEN every one is the same refusal page, with the page headers and no cookie
    for why, response in refusals.items():
        assert refused(response), why
        assert response.headers["content-security-policy"] == render.CSP, why
        assert not response.raw.get("cookies"), why
    assert "expired" in render.refusal_html() and instance not in render.refusal_html()


def test_a_link_is_no_cookie_and_a_cookie_is_no_link(pages: Pages) -> None:
    # GIVEN a valid link token and a valid session cookie of alice's instance
    instance = pages.start()
    url = pages.link(instance)
    token = urlsplit(url).path.rsplit("/", 1)[1]
    browser = pages.browser()
    assert browser.open(url).status == 200
    cookie = browser.cookies[access.cookie_name(instance)]
    # WHEN the link's token is sent as the cookie, and the cookie as a link
    swapped = pages.browser()
    swapped.cookies[access.cookie_name(instance)] = token
    # THEN neither opens anything: each is signed for its own purpose
    assert refused(swapped.get(f"/pages/forms/{instance}"))
    assert refused(pages.browser().get(f"/pages/enter/{cookie}"))


def test_a_valid_session_for_an_instance_not_in_its_conversation_is_refused(
    pages: Pages,
) -> None:
    # GIVEN sessions signed with the deployment's key, as the page would issue them, for an
    # instance that is not (or no longer) in the session's conversation: a missing one, and
    # bob's instance named under alice's principal
    bob_instance = pages.start(conversation="conv-b", claims=BOB)
    key = access.page_key(pages.api.app)
    until = int(T0.timestamp()) + 600
    for principal, conversation, instance in (
        ("acme/alice", "conv-1", "fi_999"),
        ("acme/alice", "conv-b", bob_instance),
        ("globex/bob", "conv-b", bob_instance),
    ):
        link = access.Grant(principal, conversation, instance, until, "n")
        browser = pages.browser()
        browser.cookies[access.cookie_name(instance)] = access.open_session(key, link, until)
        # WHEN the page is asked for THEN it is the refusal: the cookie alone opens nothing
        assert refused(browser.get(f"/pages/forms/{instance}")), (principal, instance)


# ---------------------------------------------------------------------------- headers


def test_every_page_response_carries_the_security_headers(pages: Pages) -> None:
    instance = pages.start()
    browser = pages.browser()
    path = urlsplit(pages.link(instance)).path
    entered = browser.get(path)
    opened = browser.post(path, FROM_THE_PAGE)
    page = browser.get(f"/pages/forms/{instance}")
    css = browser.get(render.static_url("page.css"))
    missing_css = browser.get("/pages/static/nothing.css")
    refusals = (browser.get("/pages/enter/x"), pages.browser().post(path, FROM_THE_PAGE))
    for response in (entered, opened, page, css, missing_css, *refusals):
        assert response.headers["content-security-policy"] == (
            "default-src 'none'; style-src 'self'; img-src 'self'; script-src 'self'; "
            "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        )
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["referrer-policy"] == "no-referrer"
        assert response.headers["x-frame-options"] == "DENY"
    assert page.headers["cache-control"] == "no-store"
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert entered.headers["cache-control"] == opened.headers["cache-control"] == "no-store"
    # the stylesheet is versioned by its content, so it may be cached for long
    assert css.status == 200 and "max-age=31536000" in css.headers["cache-control"]
    assert css.headers["content-type"].startswith("text/css")
    assert refused(missing_css)
    # no script on the page but the page's own file, and no inline style
    assert scripts(page.text) == [render.static_url("page.js")]
    assert "style=" not in page.text


def test_a_plain_http_request_to_the_local_stack_gets_a_cookie_without_secure() -> None:
    # GIVEN the local stack: plain HTTP on a loopback host
    pages = serve()
    instance = pages.start()
    local = {"host": "127.0.0.1:3000", "x-forwarded-proto": "http"}
    minted = pages.api.post(
        "/conversations/conv-1/page-links", {"instance_id": instance}, headers=local
    )
    assert minted.json()["url"].startswith("http://127.0.0.1:3000/pages/enter/")
    path = urlsplit(minted.json()["url"]).path
    # (a browser too old to send Sec-Fetch-Site, its Origin the local stack's own)
    opened = pages.browser().post(path, {**local, "origin": "http://127.0.0.1:3000"})
    (cookie,) = opened.raw["cookies"]
    assert "Secure" not in cookie and "HttpOnly" in cookie
    # AND a non-loopback host claiming plain HTTP still gets https links and Secure cookies
    spoofed = {"host": "evil.example", "x-forwarded-proto": "http"}
    minted = pages.api.post(
        "/conversations/conv-1/page-links", {"instance_id": instance}, headers=spoofed
    )
    assert minted.json()["url"].startswith("https://a1b2c3d4e5.execute-api")


# ---------------------------------------------------------------------------- the page


class Nasty(Step):
    title = '<script>alert("step")</script> {{ 7*7 }}'

    note: Annotated[str, Field(min_length=1)] = field(
        "<script>alert('label')</script> \"quoted\" {{ 7*7 }} {% if 1 %}x{% endif %}"
    )
    other: str | None = field("Other")


NASTY = FormDef(id="nasty", version=1, title="<b>Bold</b> & {{ title }}", steps=[Nasty])


def test_author_and_user_text_is_escaped_everywhere() -> None:
    # GIVEN a form whose title, step title and label hold markup and template syntax, and an
    # answer that does too
    pages = serve(NASTY)
    value = "</textarea><script>alert(1)</script> \"' {{ 7*7 }}"
    instance = pages.start("nasty", values={"note": value})
    # WHEN its page is rendered
    page = pages.browser().open(pages.link(instance))
    assert page.status == 200
    # THEN no tag of theirs reaches the page, the template syntax is text, and every text
    # reads back exactly as written
    assert scripts(page.text) == [render.static_url("page.js")] and "<b>" not in page.text
    text = unescape(page.text)
    shown = re.sub(r"<[^>]*>", " ", page.text)  # what is read, not the random tokens' attributes
    assert "49" not in shown
    for written in (value, NASTY.title, Nasty.title, '"quoted" {{ 7*7 }} {% if 1 %}'):
        assert written in text
    assert "&lt;script&gt;" in page.text and "&#34;" in page.text and "&#39;" in page.text


def test_the_page_shows_a_held_answer_after_a_flip_through_the_tools(pages: Pages) -> None:
    # GIVEN a claim by air with a flight number, then the mode changed to rail by the agent
    instance = pages.start(values={"mode": "air", "flight_number": "TP1234"})
    flip = pages.api.call("form_fill", form="travel-claim", values={"mode": "rail"}).json()
    assert flip["ok"], flip
    # WHEN the person opens the page
    page = pages.browser().open(pages.link(instance))
    # THEN the flight number is there, held, with why, and its value kept
    row = field_row(page.text, "flight_number")
    assert "Held" in row and "TP1234" in row
    assert "does not apply with the current answers" in row
    # AND the mode shows the value in force, who wrote it, and both revisions in its history
    mode = field_row(page.text, "mode")
    assert "rail" in mode and "Written by the agent" in mode
    history = re.search(r"<details.*?</details>", mode, re.S)
    assert history is not None
    assert "air" in history.group(0) and "rail" in history.group(0) and "in force" in mode
    # AND the steps, the definition version and the open state are shown
    assert "version 1" in page.text and "In progress" in page.text
    assert "Pending" in field_row(page.text, "full_name")


def test_the_page_marks_memory_fills_and_offers_with_the_users_words() -> None:
    # GIVEN alice's date of birth and her height in her own words on record
    # (memory judges a fact's age by the service's clock, the real one here, as the App's)
    clock = Clock()
    api = Api(bootstrap(SETTINGS, store=InMemoryFormStore()))
    for key, body in (
        ("person.date_of_birth", {"value": "1990-04-02"}),
        ("person.weight_kg", {"words": "70 kg"}),
        ("person.height_cm", {"words": "5'8\""}),
    ):
        event = build_event("PUT", f"/memory/facts/{key}", body=_json(body))
        assert api.send(event).status == 200
    pages = Pages(api, clock)
    instance = pages.start("health-check")
    # WHEN she opens the page
    page = pages.browser().open(pages.link(instance))
    # THEN the filled date's badge says it is from memory and unconfirmed (not "Answered"),
    # and its note says when she said it, in sentences
    dob = field_row(page.text, "date_of_birth")
    assert badge(dob) == "Filled from memory — not confirmed"
    assert "1990-04-02" in dob and "Filled from memory, not confirmed yet." in dob
    said = f"You said it on {date.today().isoformat()}."
    assert said in note(dob) and "Worked out" not in dob
    # AND the weight is only offered, not answered: its badge says so in words (not a bare
    # "Pending"), and its offer is a sentence of its own
    weight = field_row(page.text, "weight_kg")
    assert badge(weight) == "Offered from memory — not applied"
    assert 'class="value"' not in weight
    assert note(weight) == f"Memory offers: 70 kg. {said}"
    # AND the height read from her words is marked as filled, and says it was derived from them
    height = field_row(page.text, "height_cm")
    assert badge(height) == "Filled from memory — not confirmed"
    assert note(height) == (
        f"Filled from memory, not confirmed yet. Worked out from your words “5'8\"”. {said}"
    )
    # AND no field answered from memory is badged "Answered" anywhere on the page
    assert "Answered" not in {
        badge(field_row(page.text, f)) for f in ("date_of_birth", "height_cm")
    }


def test_a_clause_from_the_engine_reads_as_a_sentence_on_the_page() -> None:
    assert pages_view.sentence("Memory offers: 70 kg") == "Memory offers: 70 kg."
    assert pages_view.sentence("Memory offers: Acme Inc. ") == "Memory offers: Acme Inc."
    assert pages_view.sentence("Worked out from your words “5'8\"”") == (
        "Worked out from your words “5'8\"”."
    )


def test_the_page_shows_an_owed_approval_then_the_decision(pages: Pages) -> None:
    # GIVEN alice's purchase over the threshold, confirmed: finance's approval is owed
    big = {"item": "Laser cutter", "supplier": "Acme", "amount": "7200.00"}
    instance = pages.start("purchase-request", values=big)
    confirm = {"budget_line": "BL-2041", "confirmed": True}
    assert pages.api.call("form_fill", form="purchase-request", values=confirm).json()["ok"]
    # WHEN she opens the page
    page = pages.browser().open(pages.link(instance))
    # THEN the approval is listed as owed, by the finance role, with its due date
    approvals = page.text.split('id="approvals-heading"', 1)[1]
    assert "Finance approval for a purchase over 5,000 EUR" in approvals
    assert "owed" in approvals and "by finance" in approvals and "due " in approvals
    # AND once finance approves, a new page shows it decided and the form closed, submitted
    (approval,) = [e.key for e in pages.api.service.store.get(instance).state.outbox.values()]
    decided = pages.api.post(
        f"/approvals/{approval}",
        {"decision": "approved"},
        claims={"sub": "fin", "tenant": "acme", "roles": "[finance]"},
    )
    assert decided.status == 200, decided
    page = pages.browser().open(pages.link(instance))
    approvals = page.text.split('id="approvals-heading"', 1)[1]
    assert "decided" in approvals and "owed" not in approvals
    assert "Closed: completed" in page.text
    assert "Written by an approver" in field_row(page.text, "finance_decision")


def test_a_complete_open_form_says_it_is_not_submitted_yet(pages: Pages) -> None:
    from tests.support import TRAVEL_ANSWERS

    instance = pages.start(values=TRAVEL_ANSWERS)
    page = pages.browser().open(pages.link(instance))
    assert "Complete, not submitted yet" in page.text
    assert all("Answered" in field_row(page.text, f) for f in TRAVEL_ANSWERS)


TWO_COLUMNS: dict[str, Any] = {
    "id": "two-columns",
    "title": "Two columns",
    "steps": [
        {
            "id": "names",
            "title": "Names",
            "items": [
                {"kind": "heading", "id": "top", "text": "Who", "layout": {"x": 0, "y": 0}},
                {
                    "kind": "short_text",
                    "id": "first",
                    "label": "First name",
                    "layout": {"x": 0, "y": 1, "w": 6},
                },
                {
                    "kind": "short_text",
                    "id": "last",
                    "label": "Last name",
                    "layout": {"x": 6, "y": 1, "w": 6},
                },
                {"kind": "short_text", "id": "nick", "label": "Nickname", "required": False},
            ],
        }
    ],
}


def test_a_document_form_is_laid_out_on_its_12_column_grid() -> None:
    # GIVEN acme's published document placing two fields side by side, started by alice
    from forms.documents.model import FormDocument

    api = Api(bootstrap(SETTINGS, store=InMemoryFormStore()))
    document = FormDocument.model_validate(TWO_COLUMNS)
    api.app.documents.publish("acme", document, by="acme/cy", at=T0)
    pages = Pages(api, Clock())
    instance = pages.start("two-columns")
    # WHEN she opens the page
    page = pages.browser().open(pages.link(instance))
    # THEN the step is a grid, each field at its column and width, an unplaced one full width
    assert '<ul class="fields grid">' in page.text
    first = re.search(r'<li class="([^"]*)" data-field="first"', page.text)
    last = re.search(r'<li class="([^"]*)" data-field="last"', page.text)
    nick = re.search(r'<li class="([^"]*)" data-field="nick"', page.text)
    assert first and "col-start-1 col-span-6" in first.group(1)
    assert last and "col-start-7 col-span-6" in last.group(1)
    assert nick and "col-span-12" in nick.group(1) and "col-start" not in nick.group(1)
    # AND a code form's steps are no grid
    code = pages.browser().open(pages.link(pages.start()))
    assert "grid" not in code.text.split("<main", 1)[1]


def test_a_closed_form_says_so_and_why(pages: Pages) -> None:
    instance = pages.start()
    closed = pages.api.call("form_abandon", form="travel-claim", reason="not travelling <now>")
    assert closed.json()["ok"], closed
    page = pages.browser().open(pages.link(instance))
    assert "Closed: abandoned" in page.text
    assert "not travelling &lt;now&gt;" in page.text


def test_the_page_renders_a_csrf_token_bound_to_its_session(pages: Pages) -> None:
    # GIVEN two sessions on the same instance (two links, two browsers)
    instance = pages.start()
    one, two = pages.browser(), pages.browser()
    first = one.open(pages.link(instance))
    second = two.open(pages.link(instance))
    # THEN each page carries its own session's CSRF token as a hidden input
    tokens = [re.search(r'name="csrf_token" value="([^"]+)"', p.text) for p in (first, second)]
    assert tokens[0] is not None and tokens[1] is not None
    assert tokens[0].group(1) != tokens[1].group(1)


# ---------------------------------------------------------------------------- live updates


def test_the_version_route_answers_the_instances_version_under_the_pages_session(
    pages: Pages,
) -> None:
    # GIVEN alice's travel claim open in her browser
    instance = pages.start()
    browser = pages.browser()
    page = browser.open(pages.link(instance))
    shown = re.search(
        r'<div id="form-page" data-instance="([^"]+)" data-version="(\d+)">', page.text
    )
    assert shown is not None and shown.group(1) == instance
    # WHEN the page's script asks for the instance's version
    before = browser.get(f"/pages/forms/{instance}/version")
    # THEN it is small JSON, the version the page was rendered at, never cached, with the
    # page headers
    assert before.status == 200
    assert before.headers["content-type"] == "application/json"
    assert before.headers["cache-control"] == "no-store"
    assert before.headers["content-security-policy"] == render.CSP
    assert before.headers["x-content-type-options"] == "nosniff"
    assert set(before.json()) == {"version", "updated_at"}
    assert before.json()["version"] == int(shown.group(2))
    # AND an agent's write moves it, and its time
    filled = pages.api.call(
        "form_fill", form="travel-claim", instance=instance, values={"destination": "Porto"}
    )
    assert filled.json()["ok"], filled.json()
    after = browser.get(f"/pages/forms/{instance}/version").json()
    assert after["version"] > before.json()["version"]
    assert after["updated_at"] >= before.json()["updated_at"]
    # AND the page fetched again shows that version
    again = browser.get(f"/pages/forms/{instance}")
    assert f'data-version="{after["version"]}"' in again.text


def test_the_version_route_is_the_one_refusal_without_the_instances_session(
    pages: Pages,
) -> None:
    # GIVEN alice's instance, opened in her browser; bob's, and an instance of alice's
    # namesake at another tenant
    instance = pages.start()
    bob_instance = pages.start(conversation="conv-b", claims=BOB)
    globex_instance = pages.start(claims=ALICE_AT_GLOBEX)
    alice = pages.browser()
    assert alice.open(pages.link(instance)).status == 200
    good = alice.cookies[access.cookie_name(instance)]
    key = access.page_key(pages.api.app)
    until = int(T0.timestamp()) + 600
    refusals: dict[str, Response] = {}
    # WHEN the version is asked for with no cookie, a forged one, alice's cookie under bob's
    # instance's name, and sessions signed for instances not in their principal's
    # conversation (bob's under alice, the other tenant's under acme's alice)
    refusals["no cookie"] = pages.browser().get(f"/pages/forms/{instance}/version")
    forger = pages.browser()
    forger.cookies[access.cookie_name(instance)] = good[:-2] + ("AA" if good[-2:] != "AA" else "BB")
    refusals["forged cookie"] = forger.get(f"/pages/forms/{instance}/version")
    thief = pages.browser()
    thief.cookies[access.cookie_name(bob_instance)] = good
    refusals["another instance's cookie"] = thief.get(f"/pages/forms/{bob_instance}/version")
    for why, principal, conversation, other in (
        ("another principal's instance", "acme/alice", "conv-b", bob_instance),
        ("another tenant's instance", "acme/alice", "conv-1", globex_instance),
        ("a missing instance", "acme/alice", "conv-1", "fi_999"),
    ):
        grant = access.Grant(principal, conversation, other, until, "n")
        browser = pages.browser()
        browser.cookies[access.cookie_name(other)] = access.open_session(key, grant, until)
        refusals[why] = browser.get(f"/pages/forms/{other}/version")
    # AND alice's own session after it expired
    pages.clock.advance(access.DEFAULT_SESSION_MINUTES * 60)
    refusals["expired session"] = alice.get(f"/pages/forms/{instance}/version")
    # THEN each is the one refusal page, as the page itself answers
    for why, response in refusals.items():
        assert refused(response), why
        assert response.headers["content-security-policy"] == render.CSP, why


def test_the_pages_script_is_served_versioned_by_its_content(pages: Pages) -> None:
    # GIVEN the page's script's address, as the pages name it
    url = render.static_url("page.js")
    assert re.fullmatch(r"/pages/static/page\.js\?v=[0-9a-f]{12}", url)
    # WHEN it is fetched THEN it is JavaScript, kept for a year, under the page headers
    script = pages.browser().get(url)
    assert script.status == 200
    assert script.headers["content-type"] == "text/javascript; charset=utf-8"
    assert "immutable" in script.headers["cache-control"]
    assert script.headers["content-security-policy"] == render.CSP
    assert "fetch(" in script.text
    # AND a name that is no shipped file is the refusal
    assert refused(pages.browser().get("/pages/static/other.js"))
    assert refused(pages.browser().get("/pages/static/page.mjs"))


def test_a_second_press_in_the_browser_the_link_opened_goes_to_the_form(pages: Pages) -> None:
    # GIVEN a link whose button alice pressed: the link is spent, her browser holds the session
    instance = pages.start()
    path = urlsplit(pages.link(instance)).path
    alice = pages.browser()
    first = alice.post(path, FROM_THE_PAGE)
    assert first.status == 303
    cookie = alice.cookies[access.cookie_name(instance)]
    # WHEN the same browser posts it again (the button pressed twice, or again after Back)
    again = alice.post(path, FROM_THE_PAGE)
    # THEN it goes to the form too, with no second session
    assert again.status == 303 and again.headers["location"] == f"/pages/forms/{instance}"
    assert not again.raw.get("cookies")
    assert alice.cookies[access.cookie_name(instance)] == cookie
    assert alice.get(again.headers["location"]).status == 200
    # AND any other browser posting it is refused: one with no session, and one with a
    # session of another of alice's instances
    other_instance = pages.start(conversation="conv-2")
    other = pages.browser()
    assert other.open(pages.link(other_instance, "conv-2")).status == 200
    for browser in (pages.browser(), other):
        assert refused(browser.post(path, FROM_THE_PAGE))
    # AND from another site the used link is refused even in alice's browser
    assert refused(alice.post(path, {"sec-fetch-site": "cross-site"}))


def test_the_entry_page_sets_the_browsers_entry_cookie_once(pages: Pages) -> None:
    # GIVEN a link WHEN a browser opens its entry page
    path = urlsplit(pages.link(pages.start())).path
    browser = pages.browser()
    entered = browser.get(path)
    # THEN it is given an entry cookie: random, for the entry pages only, out of scripts'
    # reach, and no session
    (cookie,) = entered.raw["cookies"]
    assert cookie.startswith(f"{page_routes.ENTRY_COOKIE}=")
    assert "Path=/pages/enter/" in cookie and "HttpOnly" in cookie
    assert "SameSite=Strict" in cookie and "Secure" in cookie
    assert re.fullmatch(r"[A-Za-z0-9_-]{24}", browser.cookies[page_routes.ENTRY_COOKIE])
    # AND opening an entry page again keeps the one it has
    assert not browser.get(path).raw.get("cookies")
    # AND another browser gets another
    other = pages.browser()
    other.get(path)
    assert other.cookies[page_routes.ENTRY_COOKIE] != browser.cookies[page_routes.ENTRY_COOKIE]


def test_the_browser_whose_first_press_spent_the_link_is_let_in_by_its_second(
    pages: Pages,
) -> None:
    # GIVEN alice on a link's entry page, pressing its button: the post spends the link, but
    # she pressed again before its answer came (a slow network), so her browser dropped it,
    # session cookie and all
    instance = pages.start()
    path = urlsplit(pages.link(instance)).path
    alice = pages.browser()
    assert alice.get(path).status == 200
    dropped = pages.browser()
    dropped.cookies = dict(alice.cookies)
    assert dropped.post(path, FROM_THE_PAGE).status == 303
    assert access.cookie_name(instance) not in alice.cookies
    # WHEN her second post arrives, with the same entry cookie and no session
    second = alice.post(path, FROM_THE_PAGE)
    # THEN it opens the form, with a session of its own
    assert second.status == 303 and second.headers["location"] == f"/pages/forms/{instance}"
    assert access.cookie_name(instance) in alice.cookies
    assert alice.get(second.headers["location"]).status == 200
    # AND any other browser posting the link is refused: one that opened the entry page (an
    # entry cookie of its own), one with a made-up entry cookie, one with none
    other = pages.browser()
    other.get(path)
    forger = pages.browser()
    forger.cookies[page_routes.ENTRY_COOKIE] = "A" * 24
    for browser in (other, forger, pages.browser()):
        assert refused(browser.post(path, FROM_THE_PAGE))
        assert access.cookie_name(instance) not in browser.cookies


def test_the_claiming_browser_is_let_in_again_only_for_a_moment(pages: Pages) -> None:
    # GIVEN a link spent by a browser that never saw the answer
    instance = pages.start()
    path = urlsplit(pages.link(instance)).path
    alice = pages.browser()
    alice.get(path)
    dropped = pages.browser()
    dropped.cookies = dict(alice.cookies)
    assert dropped.post(path, FROM_THE_PAGE).status == 303
    # WHEN it posts the link again after the window
    pages.clock.advance(page_routes.ENTRY_WINDOW_SECONDS + 1)
    # THEN it is the refusal, as for anyone holding a used link
    assert refused(alice.post(path, FROM_THE_PAGE))
    # AND from another site it is refused within the window too (nothing spent, nothing opened)
    again = pages.browser()
    again.get(path2 := urlsplit(pages.link(instance)).path)
    lost = pages.browser()
    lost.cookies = dict(again.cookies)
    assert lost.post(path2, FROM_THE_PAGE).status == 303
    assert refused(again.post(path2, {"sec-fetch-site": "cross-site"}))


def session_cookies(response: Response) -> list[str]:
    """The cookies a response sets but the browser's entry cookie."""
    return [
        c
        for c in response.raw.get("cookies") or []
        if not c.startswith(f"{page_routes.ENTRY_COOKIE}=")
    ]


def scripts(html: str) -> list[str]:
    """The addresses of a page's scripts; an inline script fails the test."""
    found = re.findall(r"<script([^>]*)>(.*?)</script>", html, re.S)
    assert all(not body.strip() for _, body in found), found
    return [unescape(re.search(r'src="([^"]+)"', attrs).group(1)) for attrs, _ in found]  # type: ignore[union-attr]


def badge(row: str) -> str:
    """The text of a field's badge (its state), as read."""
    found = re.search(r'<span class="badge">(.*?)</span>', row, re.S)
    assert found is not None, row
    return unescape(found.group(1)).strip()


def note(row: str) -> str:
    """The text of a field's memory note, as read: its tags dropped, its spaces collapsed."""
    found = re.search(r'<p class="memory"[^>]*>(.*?)</p>', row, re.S)
    assert found is not None, row
    return " ".join(unescape(re.sub(r"<[^>]*>", " ", found.group(1))).split())


def field_row(html: str, field_id: str) -> str:
    match = re.search(
        rf'<li class="field[^"]*" data-field="{field_id}"[^>]*>(.*?)</li>'
        r'\s*(?=<li class="field|</ul>)',
        html,
        re.S,
    )
    assert match is not None, f"no row for {field_id}"
    return match.group(1)


def _json(body: Any) -> str:
    import json

    return json.dumps(body)


def test_the_readme_shows_the_form_page_screenshot_with_alt_text() -> None:
    # GIVEN the README, WHEN a reader opens it, THEN it shows the form page's screenshot,
    # described in words for who cannot see it, and the picture is there (a PNG)
    root = Path(__file__).resolve().parents[2]
    shown = re.findall(r"!\[([^\]]*)\]\(([^)]+)\)", (root / "README.md").read_text("utf-8"))
    alt = dict((path, text) for text, path in shown).get("docs/images/form-page-desktop.png")
    assert alt is not None and len(alt.split()) >= 5, shown
    assert (root / "docs/images/form-page-desktop.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_form_handed_over_says_to_which_form_and_the_new_one_where_it_came_from() -> None:
    from tests.unit.test_handover import enterprise, quote

    pages = serve(quote, enterprise)
    source = pages.start("quote", values={"company": "Acme", "size": "small"})
    moved = pages.api.call("form_fill", form="quote", values={"revenue": 2_000_000}).json()
    assert moved["closed"] == "handed_over", moved
    target = moved["handed_over_to"]["instance"]
    # WHEN the person opens the quote's page
    page = pages.browser().open(pages.link(source))
    # THEN it is closed as handed over to the enterprise application, why, and no link to it
    assert "Handed over to Enterprise application" in page.text
    assert "annual revenue over 1M" in page.text
    assert target not in page.text
    # AND the enterprise application's page says what it continues, answers in place
    opened = pages.browser().open(pages.link(target))
    assert "Continues" in opened.text and "Quote, with the answers already given" in opened.text
    assert "Acme" in opened.text
