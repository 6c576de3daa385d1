"""One composition root: the clock ``bootstrap`` is given is the time of everything the App's
services write, and of the links its pages mint.

An App on in-memory storage with a frozen clock is driven through the API, as a deployment is:
a form started and answered until an approval is due (its deadline), a fact stated, a draft
edited and a page link minted. Every timestamp stored anywhere is then read back: each is the
frozen instant, or the frozen instant plus what the form or the settings declare (the
approval's timeout, the link's minutes), and the ids are the App's id sources'. A service that
read the real clock would show here.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from forms.examples.purchase_request import purchase_request
from formwork.aws.pages import access
from formwork.bootstrap import App, bootstrap
from formwork.config import Settings
from formwork.storage import InMemoryStorage
from formwork.webhook_settings import WebhookSettings
from tests.functional.conftest import ALICE, Api, build_event

FROZEN = datetime(2031, 5, 6, 7, 8, 9, tzinfo=UTC)
"""The instant the App's clock always reads."""
APPROVAL_TIMEOUT = timedelta(seconds=5 * 24 * 3600)  # the purchase request's finance approval


def frozen_app() -> App:
    ids, tokens = itertools.count(1), itertools.count(1)
    return bootstrap(
        Settings(),
        storage=InMemoryStorage(),
        clock=FROZEN.timestamp,
        new_id=lambda: f"fi_{next(ids)}",
        new_token=lambda n: f"token-{n}-{next(tokens)}",
        backoff=lambda attempt: None,
        webhook_settings=WebhookSettings(),
    )


def instants(value: Any) -> Iterator[datetime]:
    """Every date-time in a JSON-ready value (ISO strings with a time and an offset)."""
    if isinstance(value, dict):
        for item in value.values():
            yield from instants(item)
    elif isinstance(value, list):
        for item in value:
            yield from instants(item)
    elif isinstance(value, str) and "T" in value and len(value) >= 20:
        try:
            found = datetime.fromisoformat(value)
        except ValueError:
            return
        if found.tzinfo is not None:
            yield found


def test_a_frozen_clock_is_the_time_of_every_write_and_link() -> None:
    app = frozen_app()
    api = Api(app)
    # GIVEN a purchase request started and answered until its finance approval is due
    started = api.call(
        "form_start",
        form=purchase_request.id,
        values={"item": "Laser cutter", "supplier": "Acme", "amount": "7200.00"},
    ).json()
    assert started["ok"], started
    instance_id = "fi_1"  # the App's id source named it
    answered = api.call(
        "form_fill",
        form=purchase_request.id,
        values={"budget_line": "BL-2041", "confirmed": True},
    ).json()
    assert answered["ok"], answered
    # AND a fact stated, a draft edited, and a page link minted
    stated = api.send(
        build_event("PUT", "/memory/facts/person.height_cm", body=json.dumps({"value": 173}))
    )
    assert stated.status == 200, stated
    for tool, tool_input in [
        ("create_form", {"title": "Contact us", "steps": [{"title": "Contact"}]}),
        ("add_field", {"field": {"kind": "email", "label": "Email"}}),
    ]:
        body = {"tool_call_id": f"toolu_{tool}", "input": tool_input}
        edited = api.post(f"/builder/forms/contact-us/tools/{tool}", body)
        assert edited.status == 200 and edited.json()["ok"], edited
    link = api.post("/conversations/conv-1/page-links", {"instance_id": instance_id})
    assert link.status == 200, link
    assert app.behind.settle(10.0) == 0  # what memory records behind the answers, done

    # THEN the instance's every timestamp is the frozen instant, but the approval's deadline,
    # which is that instant plus the approval's timeout
    principal = f"{ALICE['tenant']}/{ALICE['sub']}"
    stored = app.store.get(instance_id)
    written = list(instants(stored.model_dump(mode="json")))
    assert len(written) >= 5
    approvals = [e for e in stored.state.outbox.values() if e.deadline is not None]
    assert [e.deadline for e in approvals] == [FROZEN + APPROVAL_TIMEOUT]
    assert set(written) == {FROZEN, FROZEN + APPROVAL_TIMEOUT}
    # AND the records of the two tool calls
    for call_id in ("call_1", "call_2"):
        record = app.store.get_call(principal, "conv-1", call_id)
        assert record is not None
        assert set(instants(record.model_dump(mode="json"))) == {FROZEN}
    # AND the fact's revision
    (revision,) = app.facts.history(principal, "person.height_cm")
    assert set(instants(revision.model_dump(mode="json"))) == {FROZEN}
    # AND the draft's edits
    edits = app.drafts.history("acme", "contact-us")
    assert len(edits) == 2
    assert set(instants([e.model_dump(mode="json") for e in edits])) == {FROZEN}
    # AND the link expires the settings' minutes after the frozen instant
    expires = FROZEN + timedelta(minutes=access.PageSettings.from_env({}).link_minutes)
    assert datetime.fromisoformat(link.json()["expires_at"]) == expires
    token = urlsplit(link.json()["url"]).path.rsplit("/", 1)[1]
    grant = access.read_link(access.page_key(app), token, FROZEN.timestamp())
    assert grant.expires_at == int(expires.timestamp())
    # AND the link's id is the App's token source's
    assert grant.nonce == "token-18-1"
