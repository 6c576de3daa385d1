"""A person's browser on the form page, over plain HTTP (urllib), as ``make demo`` uses a link.

``PageVisit.open(url)`` does what a browser does with a page link (``docs/pages.md``): it
fetches the link (the entry page, "Open your form": nothing spent), posts the entry page's
form to the same URL as the button does, with ``Sec-Fetch-Site: same-origin`` (a browser sends
it for a post from the page's own origin; the API takes no other), takes the session cookie
from the ``303``, and follows the redirect with it to the form page. ``again(url)`` posts a
link once more: from a fresh ``PageVisit`` (a browser holding no session, the link forwarded)
a spent link is refused.

What the page shows is read from its HTML with the standard library's ``html.parser``: the
``h1`` (the form's title), the status (``#form-status``), and each field by its
``data-field`` attribute (its label, its badge, the value shown); on other pages, the text of
each element marked ``data-shown`` (the approval's state, the canvas's items, the fact
editor's values) and the page's own forms, marked ``page-form`` (the approver's decision, a
fact's correction). ``get(url)`` fetches with the browser's cookies, as the canvas's script
polls its version route. A dozen
lines of parsing over stable attributes the page renders for this purpose; a parsing library
(BeautifulSoup, lxml) would add a dependency to the ``local`` extra without saving any.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http.cookies import SimpleCookie
from urllib.parse import urlencode, urljoin, urlsplit

TIMEOUT_SECONDS = 30.0
VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta"})


@dataclass(frozen=True, slots=True)
class FieldShown:
    id: str
    label: str
    badge: str
    value: str | None


@dataclass(frozen=True, slots=True)
class FormShown:
    """A form the page offers on a field: its classes (``field-form answer``...), where it
    posts, what it would send as it stands (hidden inputs, text inputs' values, checked
    boxes, textareas), in page order, and its named submit buttons (``("action", "answer")``
    for Save): a browser adds the pressed one's name and value."""

    classes: tuple[str, ...]
    action: str
    sends: tuple[tuple[str, str], ...]
    buttons: tuple[tuple[str, str], ...] = ()


@dataclass(slots=True)
class PageShown:
    """What a page says, as text: its ``h1``, its status, its fields in page order, and the
    forms each field offers (by field id)."""

    title: str = ""
    status: str = ""
    fields: list[FieldShown] = field(default_factory=list)
    forms: dict[str, list[FormShown]] = field(default_factory=dict)
    """The forms each field offers, by field id; the page's own forms (outside any field,
    marked ``page-form``) under ``""``."""
    shown: dict[str, str] = field(default_factory=dict)
    """The text of each element marked ``data-shown="<name>"``, by name."""

    def field(self, field_id: str) -> FieldShown | None:
        return next((f for f in self.fields if f.id == field_id), None)

    def form(self, field_id: str, kind: str) -> FormShown | None:
        """The form of class ``kind`` (``answer``, ``move``...) the field offers, if any."""
        return next((f for f in self.forms.get(field_id, []) if kind in f.classes), None)


@dataclass(frozen=True, slots=True)
class Hop:
    """One request the browser made: method, path, status, and a word on what it got."""

    method: str
    path: str
    status: int
    note: str = ""


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is answered to the caller, which follows it with the cookie itself."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


class PageVisit:
    """One browser (one cookie jar) visiting pages on one origin."""

    def __init__(self) -> None:
        self.cookies: dict[str, str] = {}
        self.hops: list[Hop] = []
        self._opener = urllib.request.build_opener(_NoRedirect)

    def open(self, url: str, entry_title: str = "Open your form") -> tuple[PageShown, str]:
        """The link at ``url`` opened as a person opens it (its entry page titled
        ``entry_title``); the page it leads to and that page's URL. Raises ``VisitError`` when
        a hop does not answer as a browser expects."""
        status, _, html = self._send("GET", url, note="the entry page")
        entry = read_page(html)
        if status != 200 or entry.title != entry_title:
            raise VisitError(f"GET {path_of(url)} answered {status} {entry.title!r}")
        status, headers, _ = self._send(
            "POST", url, {"Sec-Fetch-Site": "same-origin"}, note="the button"
        )
        location = headers.get("location")
        if status != 303 or not location:
            raise VisitError(f"POST {path_of(url)} answered {status}, not a redirect")
        page_url = urljoin(url, location)
        status, _, html = self._send("GET", page_url, note="the form page")
        page = read_page(html)
        if status != 200:
            raise VisitError(f"GET {path_of(page_url)} answered {status} {page.title!r}")
        return page, page_url

    def answer(
        self, page_url: str, form: FormShown, value: str, press: str = "answer"
    ) -> tuple[PageShown, str]:
        """``form`` (a field's form on the page at ``page_url``) sent with ``value`` typed
        in, as its button whose value is ``press`` (Save: ``answer``) sends it; the page the
        ``303`` leads back to, and its URL."""
        return self.send(page_url, form, {"value": value}, press)

    def send(
        self, page_url: str, form: FormShown, typed: dict[str, str], press: str | None
    ) -> tuple[PageShown, str]:
        """``form`` on the page at ``page_url`` sent with ``typed`` (by input name) typed in,
        as its button whose value is ``press`` sends it (None: its one unnamed button, which
        adds nothing); the page the ``303`` leads back to, and its URL."""
        sent = [(name, typed.get(name, kept)) for name, kept in form.sends]
        if press is not None:
            pressed = [(name, kept) for name, kept in form.buttons if kept == press]
            if not pressed:
                raise VisitError(f"the form has no {press!r} button: {form.buttons}")
            sent.append(pressed[0])
        target = urljoin(page_url, form.action)
        status, headers, html = self._send(
            "POST",
            target,
            {"Sec-Fetch-Site": "same-origin"},
            note="Save",
            body=urlencode(sent).encode(),
        )
        location = headers.get("location")
        if status != 303 or not location:
            raise VisitError(f"POST {path_of(target)} answered {status} {read_page(html).title!r}")
        back = urljoin(target, location)
        status, _, html = self._send("GET", back, note="the form page")
        if status != 200:
            raise VisitError(f"GET {path_of(back)} answered {status}")
        return read_page(html), back

    def get(self, url: str, note: str = "a read") -> tuple[int, str]:
        """``GET url`` with this browser's cookies, as a page's script fetches it (the canvas's
        version route); the status and the body as text."""
        status, _, body = self._send("GET", url, note=note)
        return status, body

    def again(self, url: str) -> tuple[int, PageShown]:
        """The link at ``url`` posted (again), as its entry page's button posts it."""
        status, _, html = self._send(
            "POST", url, {"Sec-Fetch-Site": "same-origin"}, note="the button again"
        )
        return status, read_page(html)

    def _send(
        self,
        method: str,
        url: str,
        headers: dict[str, str] | None = None,
        *,
        note: str,
        body: bytes = b"",
    ) -> tuple[int, dict[str, str], str]:
        sent = {"Accept": "text/html", **(headers or {})}
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        data = body if method == "POST" else None
        if method == "POST":
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        request = urllib.request.Request(url, data, sent, method=method)
        try:
            with self._opener.open(request, timeout=TIMEOUT_SECONDS) as response:
                status, got, body = response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:  # 303 and 404 come this way
            status, got, body = error.code, error.headers, error.read()
        for value in got.get_all("Set-Cookie") or []:
            jar: SimpleCookie = SimpleCookie()
            jar.load(value)
            self.cookies.update({name: morsel.value for name, morsel in jar.items()})
        self.hops.append(Hop(method, urlsplit(url).path, status, note))
        answered = {k.lower(): v for k, v in got.items()}
        return status, answered, body.decode("utf-8", "replace")


class VisitError(Exception):
    """A hop of a visit did not answer as a browser expects."""


def path_of(url: str) -> str:
    return urlsplit(url).path


def read_page(html: str) -> PageShown:
    """The title, status and fields a page's HTML shows."""
    reader = _Reader()
    reader.feed(html)
    reader.close()
    return reader.page


class _Reader(HTMLParser):
    """Collects the text of the elements ``PageShown`` names. A stack of open elements, each
    with the part of the page its text belongs to (or none)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = PageShown()
        self._open: list[tuple[str, str | None]] = []
        self._field: dict[str, str] | None = None
        self._text: dict[str, list[str]] = {}
        self._form: tuple[tuple[str, ...], str, list[tuple[str, str]]] | None = None
        self._buttons: list[tuple[str, str]] = []
        self._textarea: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        classes = (found.get("class") or "").split()
        if self._form is not None and tag == "input" and found.get("name"):
            checkable = found.get("type") in ("checkbox", "radio")
            if not checkable or "checked" in found:
                self._form[2].append((found["name"] or "", found.get("value") or ""))
        submit = tag == "button" and (found.get("type") or "submit") == "submit"
        if self._form is not None and submit and found.get("name"):
            self._buttons.append((found["name"] or "", found.get("value") or ""))
        if tag in VOID:
            return
        part: str | None = None
        if tag == "form" and (
            "field-form" in classes if self._field is not None else "page-form" in classes
        ):
            self._form = (tuple(classes), found.get("action") or "", [])
            self._buttons = []
            part = "form"
        elif tag == "textarea" and self._form is not None and found.get("name"):
            self._textarea = found["name"]
            part = "textarea"
        if found.get("data-shown"):
            part = "shown:" + (found["data-shown"] or "")
        elif tag == "h1" and not self.page.title:
            part = "title"
        elif found.get("id") == "form-status":
            part = "status"
        elif tag == "li" and found.get("data-field"):
            self._field = {"id": found["data-field"] or ""}
            part = "field"
        elif self._field is not None and tag == "span" and "label" in classes:
            part = "label"
        elif self._field is not None and tag == "span" and "badge" in classes:
            part = "badge"
        elif self._field is not None and tag == "p" and "value" in classes:
            part = "value"
        elif self._open and self._open[-1][1] == "label":
            part = "skip"  # the label's "(optional)"
        self._open.append((tag, part))
        if part is not None:
            self._text[part] = []

    def handle_endtag(self, tag: str) -> None:
        while self._open:
            opened, part = self._open.pop()
            if part is not None:
                self._close(part)
            if opened == tag:
                return

    def handle_data(self, data: str) -> None:
        for _, part in reversed(self._open):
            if part == "skip":
                return
            if part is not None:
                self._text[part].append(data)
                return

    def _close(self, part: str) -> None:
        raw = "".join(self._text.pop(part, []))
        text = " ".join(raw.split())
        if part.startswith("shown:"):
            self.page.shown[part.removeprefix("shown:")] = text
        elif part == "title":
            self.page.title = text
        elif part == "status":
            self.page.status = text
        elif part == "field" and self._field is not None:
            one = self._field
            self.page.fields.append(
                FieldShown(one["id"], one.get("label", ""), one.get("badge", ""), one.get("value"))
            )
            self._field = None
        elif part in ("label", "badge", "value") and self._field is not None:
            self._field[part] = text
        elif part == "form":
            self._close_form()
        elif part == "textarea" and self._form is not None and self._textarea is not None:
            self._form[2].append((self._textarea, raw))
            self._textarea = None

    def _close_form(self) -> None:
        if self._form is not None:
            classes, action, sends = self._form
            owner = self._field["id"] if self._field is not None else ""
            offered = self.page.forms.setdefault(owner, [])
            offered.append(FormShown(classes, action, tuple(sends), tuple(self._buttons)))
        self._form = None
