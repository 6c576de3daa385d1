"""The approver's queue as pages over API Gateway events (``formwork.aws.approval_pages``).

The chatbot backend (or a notifier) mints a link with the approver's JWT, for their queue or
one approval; the browser enters it through the form page's entry page and gets the queue's
own cookie, which carries the principal and the roles the token held. Deciding from the page
is a plain form post with the session's CSRF token and a nonce, through the same use case as
``POST /approvals/{id}``: a resent post decides once, a changed answer or a closed form is
refused as the API refuses it, the filler never decides their own, and another tenant's
approval is the same refusal as a missing one.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlsplit

import pytest

from formwork.aws.http import is_page
from formwork.aws.pages import access, render
from tests.functional.conftest import ALICE, Api, RecordingStore, Response, build_event
from tests.functional.test_approval_queue_api import GLOBEX_ALICE, GLOBEX_FINANCE
from tests.functional.test_approvals_api import FINANCE, decide, decision_revisions, open_approval
from tests.functional.test_memory_pages import Browser, hidden

FILLER_WITH_ROLE: dict[str, Any] = {**ALICE, "roles": "[finance]"}
SALES: dict[str, Any] = {"sub": "carol", "tenant": "acme", "roles": "[sales]"}
CROSS_SITE = {"sec-fetch-site": "cross-site"}


def mint(api: Api, claims: dict[str, Any] | None = FINANCE, **body: Any) -> Any:
    return api.post("/approvals/page-links", body, claims=claims)


def opened(api: Api, claims: dict[str, Any] = FINANCE, **body: Any) -> tuple[Browser, Any]:
    """A browser that entered a fresh link (the queue, or ``approval_id``'s page)."""
    response = mint(api, claims, **body)
    assert response.status == 200, response
    browser = Browser(api)
    return browser, browser.enter(response.json()["url"])


def page_path(approval_id: str) -> str:
    return "/pages/approvals/" + quote(approval_id, safe="")


def decision_form(html: str, approval_id: str) -> dict[str, str]:
    """The hidden fields of the approval's decide form."""
    return hidden(html, page_path(approval_id))


def refused(response: Response) -> bool:
    return response.status == 404 and response.text == render.refusal_html()


# ------------------------------------------------------------------------- the link


def test_a_link_to_an_approval_names_one_the_caller_may_decide(api: Api) -> None:
    approval_id = open_approval(api)
    instance_id = approval_id.split(":", 1)[0]
    # WHEN the finance approver asks for a link to it THEN it is minted
    assert mint(api, approval_id=approval_id).status == 200
    # AND one who may not decide it, or an approval that is not there, is the same 404
    for claims, wanted in (
        (FINANCE, "fi_nothere:checkpoint.finance_approval:1"),
        (FINANCE, f"{instance_id}:checkpoint.finance_approval:2"),
        (FILLER_WITH_ROLE, approval_id),
        (SALES, approval_id),
        ({"sub": "carol", "tenant": "acme"}, approval_id),
        (GLOBEX_FINANCE, approval_id),
    ):
        response = mint(api, claims, approval_id=wanted)
        assert (response.status, response.json()["error"]) == (404, "unknown_approval"), claims
    # AND a malformed id is a 400, the JWT is required, and the body may be left out
    assert mint(api, approval_id="no spaces").status == 400
    assert mint(api, claims=None).status == 401
    assert api.send(build_event("POST", "/approvals/page-links", claims=FINANCE)).status == 200


def test_the_link_carries_the_roles_under_labels_of_its_own(api: Api) -> None:
    url = mint(api).json()["url"]
    token = urlsplit(url).path.rsplit("/", 1)[1]
    key = access.page_key(api.app)
    now = api.app.now()
    grant = access.read_scoped_link(key, access.APPROVALS, token, now)
    assert (grant.principal, grant.roles, grant.target) == ("acme/bob", ("finance",), "")
    # a queue link is neither a form's link nor the fact editor's, nor the reverse
    with pytest.raises(access.Refused):
        access.read_link(key, token, now)
    with pytest.raises(access.Refused):
        access.read_memory_link(key, token, now)
    memory = access.mint_scoped_link(key, access.MEMORY, "acme/bob", int(now) + 60, ("finance",))
    with pytest.raises(access.Refused):
        access.read_scoped_link(key, access.APPROVALS, memory, now)


# ------------------------------------------------------------------------- the pages


def test_the_queue_shows_what_the_approver_may_decide(api: Api) -> None:
    approval_id = open_approval(api)
    _, page = opened(api)
    assert page.status == 200, page
    assert f'data-approval="{approval_id}"' in page.text
    for shown in ("Laser cutter", "7200.00", "Asked by", "alice", "Decide by", "finance"):
        assert shown in page.text
    # AND the link to one approval opens its page, with the decide form
    _, one = opened(api, approval_id=approval_id)
    assert one.status == 200 and "Waiting for your decision" in one.text
    assert set(decision_form(one.text, approval_id)) == {"csrf_token", "nonce"}


def test_the_pages_need_the_queue_session(api: Api) -> None:
    approval_id = open_approval(api)
    stranger = Browser(api)
    assert refused(stranger.get("/pages/approvals"))
    assert refused(stranger.get(page_path(approval_id)))
    # a fact editor's session under the queue's cookie name is refused
    browser = Browser(api)
    browser.enter(mint_memory(api))
    browser.cookies = {access.APPROVALS.cookie: browser.cookies[access.MEMORY.cookie]}
    assert refused(browser.get("/pages/approvals"))


def mint_memory(api: Api) -> str:
    response = api.post("/memory/page-links", {}, claims=FINANCE)
    assert response.status == 200, response
    url: str = response.json()["url"]
    return url


def test_a_link_opens_once(api: Api) -> None:
    url = mint(api).json()["url"]
    first = Browser(api)
    first.enter(url)
    other = Browser(api)
    assert other.get(urlsplit(url).path).status == 200  # the entry page spends nothing
    assert refused(other.post(urlsplit(url).path))
    # the browser that opened it, pressing again, goes back to the queue
    again = first.post(urlsplit(url).path)
    assert (again.status, again.headers["location"]) == (303, "/pages/approvals")


# ------------------------------------------------------------------------- deciding


def test_a_decision_from_the_page_lands_once(api: Api, store: RecordingStore) -> None:
    approval_id = open_approval(api)
    browser, page = opened(api, approval_id=approval_id)
    fields = {**decision_form(page.text, approval_id), "decision": "approved", "note": "ok <b>"}
    # WHEN the approver approves with a note
    sent = browser.post(page_path(approval_id), fields)
    # THEN a 303 back to the approval, which says it is recorded, by them
    assert sent.status == 303, sent
    assert sent.headers["location"] == page_path(approval_id) + "?done=approved"
    after = browser.get(sent.headers["location"])
    assert "Your decision is recorded: approved." in after.text
    assert "Approved by bob" in after.text and "ok &lt;b&gt;" in after.text
    assert "<textarea" not in after.text  # nothing owed: no form
    # AND the decision is the API's: by the approver, with the note, the form completes
    (revision,) = decision_revisions(store, approval_id)
    assert (revision.by, revision.actor, revision.note) == ("approver", "acme/bob", "ok <b>")
    assert store.get(approval_id.split(":", 1)[0]).state.status == "completed"
    # WHEN the same post is sent again THEN it is answered as the first, and decides nothing
    again = browser.post(page_path(approval_id), fields)
    assert (again.status, again.headers["location"]) == (303, sent.headers["location"])
    assert len(decision_revisions(store, approval_id)) == 1
    # AND the same nonce with another decision is refused
    assert refused(browser.post(page_path(approval_id), {**fields, "decision": "rejected"}))
    # AND the queue lists it as decided, by whom and when
    queue = browser.get("/pages/approvals")
    assert "Nothing is waiting for you." in queue.text and "Approved by bob" in queue.text


def test_a_forged_done_says_nothing(api: Api) -> None:
    approval_id = open_approval(api)
    browser, _ = opened(api, approval_id=approval_id)
    page = browser.get(page_path(approval_id) + "?done=approved")
    assert page.status == 200 and "recorded" not in page.text


@pytest.mark.parametrize(
    "change",
    [
        {"csrf_token": "forged"},
        {"csrf_token": ""},
        {"nonce": "short"},
        {"decision": "maybe"},
        {"decision": ""},
        {"approver": "acme/dave"},
    ],
)
def test_a_bad_post_is_refused_and_decides_nothing(
    api: Api, store: RecordingStore, change: dict[str, str]
) -> None:
    approval_id = open_approval(api)
    browser, page = opened(api, approval_id=approval_id)
    fields = {**decision_form(page.text, approval_id), "decision": "approved", **change}
    assert refused(browser.post(page_path(approval_id), fields))
    assert decision_revisions(store, approval_id) == []


def test_another_sessions_token_a_cross_site_post_or_no_session_is_refused(
    api: Api, store: RecordingStore
) -> None:
    approval_id = open_approval(api)
    browser, page = opened(api, approval_id=approval_id)
    fields = {**decision_form(page.text, approval_id), "decision": "approved"}
    other, _ = opened(api)
    assert refused(other.post(page_path(approval_id), fields))  # another session's token
    assert refused(browser.post(page_path(approval_id), fields, headers=CROSS_SITE))
    assert refused(Browser(api).post(page_path(approval_id), fields))
    assert decision_revisions(store, approval_id) == []
    # AND the same post, from this origin with its session, lands
    assert browser.post(page_path(approval_id), fields).status == 303


def test_a_changed_answer_refuses_the_decision_as_the_api_does(
    api: Api, store: RecordingStore
) -> None:
    # GIVEN the approval's page open WHEN the requester changes an answer it is asked on
    approval_id = open_approval(api)
    browser, page = opened(api, approval_id=approval_id)
    fields = {**decision_form(page.text, approval_id), "decision": "approved", "note": "fine"}
    api.call("form_fill", "conv-1", form="purchase-request", values={"amount": "8100.00"})
    # THEN the page's decision is refused, nothing written, the approval shown withdrawn
    sent = browser.post(page_path(approval_id), fields)
    assert sent.status == 409, sent
    assert "Not recorded" in sent.text and "Withdrawn" in sent.text
    assert ">fine</textarea>" not in sent.text  # no form: nothing is owed on it
    assert decision_revisions(store, approval_id) == []
    # AND the API refuses it alike
    assert decide(api, approval_id).status == 404
    # AND the queue lists the new approval, asked on the new amount
    queue = browser.get("/pages/approvals")
    assert "8100.00" in queue.text and f'data-approval="{approval_id}"' not in queue.text


def test_a_closed_form_cannot_be_decided(api: Api, store: RecordingStore) -> None:
    approval_id = open_approval(api)
    browser, page = opened(api, approval_id=approval_id)
    fields = {**decision_form(page.text, approval_id), "decision": "rejected"}
    api.call("form_abandon", "conv-1", form="purchase-request", reason="not needed")
    sent = browser.post(page_path(approval_id), fields)
    assert sent.status == 409 and "the form is closed" in sent.text
    assert decision_revisions(store, approval_id) == []
    assert decide(api, approval_id).json()["error"] == "form_closed"


# ------------------------------------------------------------------------- whose approvals


def test_two_tenants_each_see_and_decide_only_their_own(api: Api, store: RecordingStore) -> None:
    acme = open_approval(api)
    api.call(
        "form_start",
        "conv-g",
        claims=GLOBEX_ALICE,
        form="purchase-request",
        values={"item": "Drill", "supplier": "Globex", "amount": "9000"},
    )
    globex_browser, globex_queue = opened(api, GLOBEX_FINANCE)
    (globex,) = _listed(globex_queue.text)
    acme_browser, acme_queue = opened(api, FINANCE)
    assert _listed(acme_queue.text) == [acme] and "Drill" not in acme_queue.text
    # another tenant's approval is the refusal, as a missing one, to read and to decide
    assert refused(acme_browser.get(page_path(globex)))
    assert refused(acme_browser.get(page_path("fi_nothere:checkpoint.finance_approval:1")))
    page = acme_browser.get(page_path(acme))
    fields = {**decision_form(page.text, acme), "decision": "approved"}
    assert refused(acme_browser.post(page_path(globex), fields))
    assert decision_revisions(store, globex) == []
    # and each decides their own
    page = globex_browser.get(page_path(globex))
    fields = {**decision_form(page.text, globex), "decision": "approved"}
    assert globex_browser.post(page_path(globex), fields).status == 303


def test_the_filler_holding_the_role_never_decides_their_own(
    api: Api, store: RecordingStore
) -> None:
    approval_id = open_approval(api)
    browser, queue = opened(api, FILLER_WITH_ROLE)
    assert _listed(queue.text) == [] and "Nothing is waiting for you." in queue.text
    assert refused(browser.get(page_path(approval_id)))
    # a decide form lifted from an approver's page, posted with her own session and token
    _, page = opened(api, approval_id=approval_id)
    own = access.scoped_session(api.app, {"cookies": _cookies(browser)}, access.APPROVALS)
    assert own is not None
    fields = {
        "csrf_token": access.csrf_token(access.page_key(api.app), own),
        "nonce": decision_form(page.text, approval_id)["nonce"],
        "decision": "approved",
    }
    assert refused(browser.post(page_path(approval_id), fields))
    assert decision_revisions(store, approval_id) == []


def _cookies(browser: Browser) -> list[str]:
    return [f"{k}={v}" for k, v in browser.cookies.items()]


def _listed(html: str) -> list[str]:
    import re

    return re.findall(r'<li class="aq-item" data-approval="([^"]+)">', html)


# ------------------------------------------------------------------------- the shell


def test_exactly_the_decision_post_skips_the_jwt() -> None:
    def event(method: str, path: str) -> dict[str, Any]:
        return build_event(method, path, claims=None)

    assert is_page(event("POST", "/pages/approvals/fi_1%3Acheckpoint.x%3A1"))
    assert not is_page(event("POST", "/pages/approvals"))
    assert not is_page(event("POST", "/pages/approvals/a/b"))
    assert not is_page(event("POST", "/approvals/page-links"))


def test_the_openapi_document_describes_the_mint_route(api: Api) -> None:
    document = api.get("/openapi.json").json()
    operation = document["paths"]["/approvals/page-links"]["post"]
    assert set(operation["responses"]) == {"200", "400", "401", "404", "413", "415", "422"}
    assert "/pages/approvals" not in document["paths"]
