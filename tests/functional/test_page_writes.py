"""The form page's writes over API Gateway events (``formwork.aws.form_page``): a person's
moves posted as plain HTML forms, each a ``user`` revision through the tools' write path.

A post must come from this API's own pages, hold the instance's session cookie and its CSRF
token; anything else is the one refusal page and writes nothing. A move that lands redirects
back to the page (Post/Redirect/Get); one that does not shows the page with the reason and
keeps what the person typed."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any
from urllib.parse import urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.functional.conftest import ALICE, Response, build_event
from tests.functional.test_pages import FROM_THE_PAGE, Browser, Pages, refused, serve


class Forms(HTMLParser):
    """Every ``<form>`` of a page: its classes, hidden and typed inputs (name, value) and the
    ``data-field`` of the field item it sits in."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.forms: list[dict[str, Any]] = []
        self._field: str | None = None
        self._form: dict[str, Any] | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "li" and "data-field" in a:
            self._field = a["data-field"]
        if tag == "form" and a.get("method") == "post":
            self._form = {"class": a.get("class", ""), "field": self._field, "inputs": []}
            self._form["buttons"] = []
            self.forms.append(self._form)
        if tag == "button" and self._form is not None and a.get("name") == "action":
            self._form["buttons"].append(a.get("value", ""))
        if tag in ("input", "textarea") and self._form is not None:
            kind = a.get("type", "text")
            if kind in ("radio", "checkbox") and "checked" not in a:
                return
            self._form["inputs"].append((a.get("name", ""), a.get("value", "")))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._form = None

    def find(self, action: str, field: str | None = None) -> list[tuple[str, str]]:
        """The fields the browser sends when ``action`` is pressed: the form's inputs, and
        the pressed button's ``action`` when the action is a button's."""
        for form in self.forms:
            if field is not None and form["field"] != field:
                continue
            if dict(form["inputs"]).get("action") == action:
                return list(form["inputs"])
            if action in form["buttons"]:
                return [*form["inputs"], ("action", action)]
        raise AssertionError(f"no {action} form for {field}")


class Person(Browser):
    """A browser on one form page, sending its forms as a person does."""

    def __init__(self, pages: Pages, instance: str) -> None:
        super().__init__(pages.api)
        self.instance = instance
        self.path = f"/pages/forms/{instance}"
        page = self.open(pages.link(instance))
        assert page.status == 200, page

    def forms(self) -> Forms:
        return Forms(self.get(self.path).text)

    def send(
        self,
        action: str,
        field: str | None = None,
        value: str | list[str] | None = None,
        *,
        form: list[tuple[str, str]] | None = None,
        headers: dict[str, str] | None = None,
        changed: dict[str, str] | None = None,
    ) -> Response:
        """Fill the page's ``action`` form (for ``field``) with ``value`` and send it."""
        inputs = form if form is not None else self.forms().find(action, field)
        sent = [(k, v) for k, v in inputs if k != "value" or value is None]
        if value is not None:
            sent += [("value", v) for v in ([value] if isinstance(value, str) else value)]
        sent = [(k, (changed or {}).get(k, v)) for k, v in sent]
        return self.post_form(self.path, sent, headers if headers is not None else FROM_THE_PAGE)

    def post_form(
        self, path: str, fields: list[tuple[str, str]], headers: dict[str, str]
    ) -> Response:
        event = build_event("POST", path, claims=None, headers=headers)
        event["headers"]["content-type"] = "application/x-www-form-urlencoded"
        event["body"] = urlencode(fields)
        return self._send(event)


@pytest.fixture
def pages() -> Pages:
    return serve()


def status_line(pages: Pages) -> str:
    lines: list[str] = pages.api.status().json()["lines"]
    return "\n".join(lines)


def revision(pages: Pages, instance: str, field: str) -> dict[str, Any]:
    read = pages.api.call("form_read", form="travel-claim", instance=instance, part=field).json()
    history: list[dict[str, Any]] = read["revisions"]
    return history[-1]


def test_a_correction_on_the_page_is_a_user_revision_the_agent_then_hears_of(pages: Pages) -> None:
    # GIVEN alice's travel claim with her name, and her page open
    instance = pages.start(values={"full_name": "Alice Smith"})
    person = Person(pages, instance)
    # WHEN she corrects her name on the page
    response = person.send("answer", "full_name", "Alice Smyth")
    # THEN the post redirects back to the page, which says it was saved
    assert response.status == 303, response.text
    assert response.headers["location"] == f"{person.path}?done=answer&field=full_name"
    page = person.get(response.headers["location"])
    assert "Saved Full name." in page.text and "Alice Smyth" in page.text
    # AND it is her own revision, and the agent's next status line says so
    latest = revision(pages, instance, "full_name")
    assert latest["value"] == "Alice Smyth" and latest["by"] == "user", latest
    assert "the user changed on their form page: Full name = Alice Smyth" in status_line(pages)


def test_a_resent_post_applies_once(pages: Pages) -> None:
    instance = pages.start(values={"full_name": "Alice Smith"})
    person = Person(pages, instance)
    form = person.forms().find("answer", "full_name")
    first = person.send("answer", "full_name", "Alice Smyth", form=form)
    again = person.send("answer", "full_name", "Alice Smyth", form=form)
    assert first.status == again.status == 303
    read = pages.api.call("form_read", form="travel-claim", part="full_name").json()
    assert [r["value"] for r in read["revisions"]] == ["Alice Smith", "Alice Smyth"]


def test_a_field_the_agent_changed_meanwhile_keeps_what_the_person_typed(pages: Pages) -> None:
    instance = pages.start(values={"full_name": "Alice Smith"})
    person = Person(pages, instance)
    form = person.forms().find("answer", "full_name")
    # GIVEN the agent writes the name after the page was rendered
    pages.api.call("form_fill", form="travel-claim", values={"full_name": "Alicia Smith"})
    # WHEN the person's post of the name arrives
    response = person.send("answer", "full_name", "Alice Smyth", form=form)
    # THEN it is not saved: the page shows what stands now and keeps what she typed
    assert response.status == 409
    assert "Full name was changed while you were writing" in response.text
    assert 'value="Alice Smyth"' in response.text and "Alicia Smith" in response.text
    assert revision(pages, instance, "full_name")["value"] == "Alicia Smith"


def test_a_value_the_field_refuses_is_shown_beside_it_with_the_input_kept(pages: Pages) -> None:
    instance = pages.start()
    person = Person(pages, instance)
    response = person.send("answer", "departure_date", "next tuesday")
    assert response.status == 422
    assert 'id="problem-departure_date"' in response.text
    assert 'value="next tuesday"' in response.text and 'aria-invalid="true"' in response.text


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"csrf_token": "forged"}, "a forged CSRF token"),
        ({"csrf_token": ""}, "an empty CSRF token"),
    ],
)
def test_a_post_without_the_sessions_csrf_token_is_refused(
    pages: Pages, change: dict[str, str], why: str
) -> None:
    instance = pages.start(values={"full_name": "Alice Smith"})
    person = Person(pages, instance)
    response = person.send("answer", "full_name", "Mallory", changed=change)
    assert refused(response), why
    assert revision(pages, instance, "full_name")["value"] == "Alice Smith"


def test_a_cross_site_post_or_one_without_the_cookie_is_refused(pages: Pages) -> None:
    instance = pages.start(values={"full_name": "Alice Smith"})
    person = Person(pages, instance)
    form = person.forms().find("answer", "full_name")
    cross = person.send(
        "answer", "full_name", "Mallory", form=form, headers={"sec-fetch-site": "cross-site"}
    )
    assert refused(cross)
    stranger = Browser(pages.api)
    event = build_event("POST", person.path, claims=None, headers=FROM_THE_PAGE)
    event["headers"]["content-type"] = "application/x-www-form-urlencoded"
    event["body"] = urlencode([*form, ("value", "Mallory")])
    assert refused(stranger._send(event))
    assert revision(pages, instance, "full_name")["value"] == "Alice Smith"


def test_another_principals_cookie_does_not_write_alices_instance(pages: Pages) -> None:
    alice = pages.start(values={"full_name": "Alice Smith"})
    bob_call = pages.api.post(
        "/conversations/conv-1/tools/form_start",
        {"tool_call_id": "b1", "input": {"form": "travel-claim"}},
        claims={"sub": "bob", "tenant": ALICE["tenant"]},
    )
    bob = bob_call.json()["instance"]
    minted = pages.mint(bob, claims={"sub": "bob", "tenant": ALICE["tenant"]})
    person = Browser(pages.api)
    person.open(minted.json()["url"])
    # bob's cookie is for his instance only: alice's path has no session for it
    form = Person(pages, alice).forms().find("answer", "full_name")
    event = build_event("POST", f"/pages/forms/{alice}", claims=None, headers=FROM_THE_PAGE)
    event["headers"]["content-type"] = "application/x-www-form-urlencoded"
    event["body"] = urlencode([*form, ("value", "Bob")])
    assert refused(person._send(event))
    assert revision(pages, alice, "full_name")["value"] == "Alice Smith"


@pytest.mark.parametrize(
    "body",
    [
        "value=a&value=b&action=answer&action=undo",
        "%ZZ",
        "x=1",
        "a" * 70_000,
    ],
)
def test_a_malformed_post_is_refused_and_writes_nothing(pages: Pages, body: str) -> None:
    instance = pages.start(values={"full_name": "Alice Smith"})
    person = Person(pages, instance)
    event = build_event("POST", person.path, claims=None, headers=FROM_THE_PAGE)
    event["headers"]["content-type"] = "application/x-www-form-urlencoded"
    event["body"] = body
    response = person._send(event)
    assert response.status < 500 and refused(response)
    assert revision(pages, instance, "full_name")["value"] == "Alice Smith"


def test_undo_and_take_back_from_the_page(pages: Pages) -> None:
    instance = pages.start(values={"full_name": "Alice Smith"})
    person = Person(pages, instance)
    assert person.send("retract", "full_name").status == 303
    assert revision(pages, instance, "full_name")["kind"] == "retraction"
    assert person.send("undo", "full_name").status == 303
    read = pages.api.call("form_read", form="travel-claim", part="full_name").json()
    assert read["value"] == "Alice Smith", read


def test_unknown_actions_and_bad_versions_are_refused(pages: Pages) -> None:
    instance = pages.start(values={"full_name": "Alice Smith"})
    person = Person(pages, instance)
    bad_version = person.send("answer", "full_name", "X", changed={"version": "abc"})
    assert refused(bad_version)
    unknown = person.send("answer", "full_name", "X", changed={"action": "explode"})
    assert unknown.status == 422 and "could not be read" in unknown.text
    assert revision(pages, instance, "full_name")["value"] == "Alice Smith"


# ---------------------------------------------------------------------------- fuzz

PAGE_FIELDS = ["action", "key", "version", "field", "seen", "value", "as", "offer", "csrf_token"]
_person: dict[str, Any] = {}


def fuzzed_person() -> tuple[Pages, Person]:
    """One page session reused across examples (opening one per example costs a service)."""
    if not _person:
        pages = serve()
        instance = pages.start(values={"full_name": "Alice Smith"})
        _person.update(pages=pages, person=Person(pages, instance))
    return _person["pages"], _person["person"]


form_values = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["answer", "undo", "redo", "retract", "decline", "apply", "submit", "1"]),
    st.sampled_from(["full_name", "staff_id", "mode", "total", "0.-1", "1.0", "json"]),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.sampled_from(PAGE_FIELDS), form_values), max_size=12),
    st.booleans(),
)
def test_fuzzed_page_posts_never_fail_and_refusals_write_nothing(
    fields: list[tuple[str, str]], with_csrf: bool
) -> None:
    pages, person = fuzzed_person()
    csrf = dict(person.forms().find("answer", "full_name"))["csrf_token"]
    sent = [(k, v) for k, v in fields if k != "csrf_token" or not with_csrf]
    if with_csrf:
        sent.append(("csrf_token", csrf))
    before = pages.api.app.service.store.get(person.instance)
    response = person.post_form(person.path, sent, FROM_THE_PAGE)
    assert response.status in {303, 404, 409, 422}, response.status
    after = pages.api.app.service.store.get(person.instance)
    if response.status != 303:
        # a refusal writes no answer (a refusal recorded under its key is the call's record)
        assert {f: h.count for f, h in after.history.items()} == {
            f: h.count for f, h in before.history.items()
        }
        assert after.state.status == before.state.status
