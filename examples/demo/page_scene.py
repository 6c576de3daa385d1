"""The form page in the demo: before the travel claim is sent, the person reviews it in a browser.

Over HTTP only (the page is served by the API): the chatbot's backend mints a link to the
claim's page with the user's token (``POST /conversations/{id}/page-links``), and the person's
browser (``examples.demo.page_visit``, plain HTTP) opens it: the entry page, the button's post
(``Sec-Fetch-Site: same-origin``), the ``303`` with the session cookie, the page. The demo
prints what the page shows (its title, where the claim stands, the answers the conversation
corrected, each with its badge) and checks it against what the tools said, then posts the link
from another browser (the link forwarded) to show that a link opens once. In process there is
no page: one line says so.
"""

from __future__ import annotations

from examples.demo.driver import Demo
from examples.demo.page_visit import FieldShown, PageVisit, VisitError, path_of
from examples.demo.printing import compact, expect, say
from examples.demo.transports import OverHttp

SHOWN = ("destination", "mode", "flight_number", "total")
"""The claim's fields the demo reads off the page: the ones the conversation corrected."""


def review_on_the_page(demo: Demo, instance: str, title: str) -> None:
    """The person opens the page of ``instance`` (a form titled ``title``) from a link."""
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
        page, _ = browser.open(url)
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
