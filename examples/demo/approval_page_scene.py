"""The approver's queue in the demo: finance decides the purchase request from its page.

Over HTTP only (the page is served by the API): a notifier mints a link to the approval's page
with the approver's token (``POST /approvals/page-links``, the finance role in its roles
claim), and the approver's browser (``formwork.examples.demo.page_visit``, plain HTTP) opens it: the
entry page, the button's post, the ``303`` with the queue's session cookie, the approval's
page with the answers it is asked on. The approver types a note and presses Approve (the
page's form, CSRF token and nonce as rendered, the ``303`` back), and the page says the
decision is recorded and where the form now stands. Sent again, the same form decides nothing
more. In process there is no page: the decision goes through ``FormService.decide`` directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from forms.app.approvals import Decision
from formwork.examples.demo.driver import Demo
from formwork.examples.demo.page_scene import short
from formwork.examples.demo.page_visit import PageVisit, VisitError
from formwork.examples.demo.printing import compact, expect, say
from formwork.examples.demo.transports import OverHttp, token_for

PRESS = {"approved": "Approve", "rejected": "Reject"}


def decide_on_the_page(
    demo: Demo,
    who: str,
    approver: str,
    roles: Sequence[str],
    approval_id: str,
    decision: Decision,
    note: str,
) -> tuple[int, dict[str, Any]]:
    """``approver`` decides ``approval_id`` from its page over HTTP (in process, through the
    API's use case as before); ``(200, {"ok", "form_status"})`` once it landed.

    A script, long on purpose: read top to bottom it is the transcript the demo prints, each
    turn's words, call and check in the order shown; cut into functions it would stop
    reading as the conversation."""
    transport = demo.transport
    if not isinstance(transport, OverHttp):
        print("\n  (in process there is no approval page: over HTTP finance decides there)")
        return demo.decide(who, approver, roles, approval_id, decision, note=note)
    print()
    say("", f"({who} gets a link to the approval in a notification; the notifier mints it", 2)
    say("", "with the approver's token)", 10)
    say("api:   ", f"POST /approvals/page-links {compact({'approval_id': approval_id})}")
    say("", f"Authorization: {token_for(approver, roles)}", indent=11)
    status, link = transport.approvals_link(approver, roles, approval_id)
    expect(status == 200 and "url" in link, f"a link to the approval, got {status}: {link}")
    url = str(link["url"])
    say("result: ", f"{status} {short(url)} (opens once; expires {link['expires_at']})")
    print()
    say("", "(the approver opens it in a browser)", 2)
    browser = PageVisit()
    try:
        page, page_url = browser.open(url, "Open your approvals")
    except VisitError as failed:
        expect(False, f"the link to open the approval's page ({failed})")
        return 404, {}
    entry, button, shown = browser.hops
    cookie = ", ".join(f"{name}=…" for name in browser.cookies)
    say("browser: ", f"GET {short(entry.path)} → {entry.status} “Open your approvals”")
    say(
        "browser: ",
        f"POST {short(button.path)} (the button) → {button.status} to {shown.path}, "
        f"Set-Cookie {cookie}",
    )
    say("page:    ", f"“{page.title}”: {page.shown.get('state', '')}")
    (form,) = page.forms.get("", [None])
    expect(form is not None, "the approval's page to offer the decision")
    assert form is not None
    say("browser: ", f"types the note {note!r}, presses {PRESS[decision]}")
    try:
        after, _ = browser.send(page_url, form, {"note": note}, decision)
    except VisitError as failed:
        expect(False, f"the decision to land from the page ({failed})")
        return 409, {}
    posted, back = browser.hops[-2:]
    say("browser: ", f"POST {posted.path} → {posted.status}; GET {back.path} → {back.status}")
    say("page:    ", f"{after.shown.get('notice', '')} {after.shown.get('outcome', '')}")
    say("", after.shown.get("form-status", ""), indent=13)
    recorded = f"Your decision is recorded: {decision}."
    expect(after.shown.get("notice") == recorded, f"the page to say {recorded!r}")
    # the same form sent again (the browser's "resubmit?"): answered alike, decides nothing
    again, _ = browser.send(page_url, form, {"note": note}, decision)
    expect(again.shown.get("notice") == recorded, "a resent decision answered as the first")
    say("browser: ", "(the same form sent again) → the same 303: applied once")
    status_text = after.shown.get("form-status", "").removeprefix("The form is now ")
    return 200, {"ok": True, "form_status": status_text.split(" ", 1)[0].rstrip(".")}
