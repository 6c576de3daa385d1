"""The builder agent loop names the person's canvas selection when the chat sends none
(``KeepsSelection``), and the builder's fallback applies "make this required" to it."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from forms.app.builder import BuilderService
from forms.documents import Selection
from forms.storage.selections import InMemorySelectionStore
from formwork.agents import BuilderAgent, HttpBackend, Provider, ServiceBackend
from formwork.agents.backends import KeepsSelection
from tests.unit.test_builder_agent import (
    ANA,
    FORM,
    PROVIDERS,
    Recorded,
    items,
    service,  # noqa: F401 (a fixture, used by name)
)


def with_selections(builder: BuilderService) -> BuilderService:
    """``builder`` (the agent tests' contact form) keeping selections beside its drafts."""
    builder.selections = InMemorySelectionStore(builder.store)
    return builder


@PROVIDERS
def test_make_this_required_uses_the_canvas_selection_when_the_chat_sends_none(
    make: Callable[..., tuple[Provider, Recorded]],
    service: BuilderService,  # noqa: F811 (the agent tests' fixture)
) -> None:
    with_selections(service)
    service.select(ANA, FORM, Selection(field="email"))  # the person clicked Email
    provider, recorded = make("make_required")
    backend = ServiceBackend(service, ANA, FORM)
    assert isinstance(backend, KeepsSelection)
    agent = BuilderAgent(provider, backend, new_chat_id=lambda: "c-1")
    turn = agent.run_turn([], "Make this required.")
    assert 'Selected field "email": "Email" (email) in step "Contact"' in recorded.systems()[0]
    assert turn.calls[0].call.args == {"updates": {"required": True}}
    assert items(service)["email"]["required"] is True


def test_the_http_backend_names_the_selection_its_last_draft_read_answered() -> None:
    document = {"id": FORM, "title": "Contact us", "steps": [{"id": "contact", "title": "C"}]}
    answers: list[tuple[int, bytes]] = [
        (200, json.dumps({"document": document, "selection": {"step": "contact"}}).encode()),
        (200, json.dumps({"document": document, "selection": None}).encode()),
        (200, json.dumps({"document": document, "selection": {"nope": 1}}).encode()),
        (404, b"{}"),
    ]
    sent: list[str] = []

    def send(
        method: str, url: str, headers: Mapping[str, str], body: bytes | None
    ) -> tuple[int, bytes]:
        sent.append(method)
        return answers.pop(0)

    backend: Any = HttpBackend("https://api.test", "t", FORM, send=send)
    assert backend.stored_selection() is None  # nothing read yet
    backend.document()
    assert backend.stored_selection() == Selection(step="contact")
    assert sent == ["GET"]  # naming it costs no request of its own
    backend.document()
    assert backend.stored_selection() is None
    backend.document()
    assert backend.stored_selection() is None  # not a selection
    assert backend.document() is None and backend.stored_selection() is None
