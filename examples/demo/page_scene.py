"""The form page in the demo: before the travel claim is sent, the person reviews it in a browser.

Over HTTP only (the page is served by the API): the chatbot's backend mints a link to the
claim's page with the user's token (``POST /conversations/{id}/page-links``), and the person's
browser (``formwork.examples.demo.page_visit``, plain HTTP) opens it: the entry page, the button's
post (``Sec-Fetch-Site: same-origin``), the ``303`` with the session cookie, the page. The demo
prints what the page shows (its title, where the claim stands, the answers the conversation
corrected, each with its badge) and checks it against what the tools said. The person then
corrects the trip's purpose on the page (the field's form, Save, the ``303`` back): the agent's
next status line names the change, and its ``form_read`` shows the revision written by
``user``. Last, another browser (the link forwarded) posts the link again and is refused: a
link opens once. In process there is no page: one line says so.
"""

from __future__ import annotations

from formwork.examples.demo.driver import Demo
from formwork.examples.demo.page_visit import FieldShown, PageShown, PageVisit, VisitError, path_of
from formwork.examples.demo.printing import compact, expect, say
from formwork.examples.demo.transports import OverHttp

SHOWN = ("destination", "mode", "flight_number", "total")
"""The claim's fields the demo reads off the page: the ones the conversation corrected."""


def review_on_the_page(demo: Demo, instance: str, title: str) -> None:
    """The person opens the page of ``instance`` (a form titled ``title``) from a link.

    A script, long on purpose: read top to bottom it is the transcript the demo prints, each
    turn's words, call and check in the order shown; cut into functions it would stop
    reading as the conversation."""
    transport = demo.transport
    if not isinstance(transport, OverHttp):
        print("\n  (in process there is no form page: over HTTP the person reviews it here)")
        return
    print()
    say("", "(agent: offers a link to review the claim before it is sent; the chatbot's", 2)
    say("", "backend mints it with the user's token)", 10)
    path = f"/conversations/{demo.caller.conversation_id}/page-links"
    say("api:   ", f"POST {path} {compact({'instance_id': instance})}")
    status, link = transport.page_link(demo.caller, instance)
    expect(status == 200 and "url" in link, f"a page link from POST {path}, got {status}: {link}")
    url = str(link["url"])
    say("result: ", f"{status} {short(url)} (opens once; expires {link['expires_at']})")

    print()
    say("", "(the person opens the link in a browser)", 2)
    browser = PageVisit()
    try:
        page, page_url = browser.open(url)
    except VisitError as failed:
        expect(False, f"the page link to open the page as a browser opens it ({failed})")
        return
    entry, button, shown = browser.hops
    say("browser: ", f"GET {short(entry.path)} → {entry.status} “Open your form” (nothing spent)")
    cookie = ", ".join(f"{name}=…" for name in browser.cookies)
    say(
        "browser: ",
        f"POST {short(button.path)} (Sec-Fetch-Site: same-origin: the button) → "
        f"{button.status} to {shown.path}, Set-Cookie {cookie}",
    )
    say("browser: ", f"GET {shown.path} (Cookie {cookie}) → {shown.status}")
    answered = sum(1 for f in page.fields if f.value is not None)
    say(
        "page:    ",
        f"“{page.title}”: {page.status}; {answered} of {len(page.fields)} fields show a value",
    )
    for field_id in SHOWN:
        one = page.field(field_id)
        expect(one is not None, f"the page to show the field {field_id}")
        assert one is not None
        say("", describe(one), 13)
    expect(page.title == title, f"the page titled {title!r}, got {page.title!r}")
    expect(
        page.status == "Complete, not submitted yet",
        f"the page to say the claim is complete and not sent, got {page.status!r}",
    )
    for field_id in SHOWN:
        one = page.field(field_id)
        value = demo.value(instance, field_id)
        expect(
            one is not None and one.badge == "Answered" and one.value == shown_as(value),
            f"the page to show {field_id} = {value!r} as answered, got {one}",
        )
    correct_on_the_page(demo, browser, page, page_url, instance)
    print()
    status, refused = PageVisit().again(url)
    say(
        "browser: ",
        f"(another browser, the link forwarded) POST {short(button.path)} → {status} "
        f"“{refused.title}” (a link opens once)",
    )
    expect(status == 404, f"the spent link refused, got {status}")


def describe(field: FieldShown) -> str:
    value = f": {field.value}" if field.value is not None else ""
    return f"{field.label}{value}  [{field.badge}]"


def shown_as(value: object) -> str:
    """A value as the page prints it (its text)."""
    return str(value)


def short(url_or_path: str) -> str:
    """A link's path with its token cut short (the token is a bearer secret for its life)."""
    path = path_of(url_or_path) if "://" in url_or_path else url_or_path
    head, _, token = path.rpartition("/")
    return f"{head}/{token[:12]}…" if len(token) > 16 else path


CORRECTED = ("purpose", "client kickoff and team training")
"""The answer the person corrects on the page, and what they type."""


def correct_on_the_page(
    demo: Demo, browser: PageVisit, page: PageShown, page_url: str, instance: str
) -> None:
    """The person corrects one answer on the page (its form's Save button, a plain post with
    the page's CSRF token); the page shows it, the agent's next status line names it (so the
    agent neither asks again nor writes over it), and the field's history says the user wrote
    it."""
    field_id, typed = CORRECTED
    form = page.form(field_id, "answer")
    expect(form is not None, f"the page to offer a form to correct {field_id}")
    assert form is not None
    before = page.field(field_id)
    assert before is not None
    print()
    say("", f"(the person corrects {before.label.lower()} on the page and presses Save)", 2)
    try:
        after, _ = browser.answer(page_url, form, typed)
    except VisitError as failed:
        expect(False, f"the page to take the person's correction ({failed})")
        return
    save, back = browser.hops[-2:]
    say(
        "browser: ",
        f"POST {save.path} (Sec-Fetch-Site: same-origin; csrf_token, value={typed!r}) → "
        f"{save.status}; GET {back.path} → {back.status}",
    )
    shown = after.field(field_id)
    expect(
        shown is not None and shown.value == typed,
        f"the page to show {field_id} = {typed!r}, got {shown}",
    )
    assert shown is not None
    say("page:    ", describe(shown))
    lines = demo.status()
    for n, line in enumerate(lines.splitlines()):
        say("status: " if n == 0 else "        ", line)
    expect(
        f"{before.label} = {compact(typed)}" in lines or f"{before.label} = {typed}" in lines,
        f"the agent's status line to name the person's change to {field_id}, got {lines!r}",
    )
    r = demo.turn(
        None,
        "form_read",
        {"form": "travel-claim", "part": field_id},
        note="its status line says the user changed an answer on their page; it reads it",
    )
    last = (r.get("revisions") or [{}])[-1]
    expect(
        r.get("value") == typed and last.get("by") == "user",
        f"the tools to read {field_id} = {typed!r}, written by the user, got {r}",
    )
