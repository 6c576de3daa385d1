"""Functional tests of the Lambda handler: API Gateway events in, responses out.

The handler runs as Lambda runs it (``formwork.aws.api.lambda_handler`` with a context object),
served by an App (``formwork.bootstrap``) over a ``FormService`` on ``InMemoryFormStore``,
handed to it with ``app=``. Events are built from the payload v2 fixtures in ``tests/events``.

The fixtures build on each other: ``store`` → ``service`` → ``app`` → ``api``; a test module
replaces the one it needs another of (``app`` with webhook parts, ``service`` over other forms).
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from itertools import count
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from forms import FormService, InMemoryFormStore
from forms.examples import EXAMPLES
from forms.instance import Commit, FormInstance, NewCall
from formwork.aws.api import lambda_handler
from formwork.aws.local import LocalContext
from formwork.bootstrap import App
from formwork.config import Settings
from tests.support import TickingClock, app_for, service_for

EVENTS = Path(__file__).resolve().parents[1] / "events"
T0 = datetime(2025, 3, 10, 9, 0, tzinfo=UTC)
SETTINGS = Settings(tenant_claim="tenant")
ALICE: dict[str, str] = {"sub": "alice", "tenant": "acme"}
BOB: dict[str, str] = {"sub": "bob", "tenant": "acme"}


def load_event(name: str) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((EVENTS / f"{name}.json").read_text())
    return event


class RecordingStore(InMemoryFormStore):
    """The in-memory store, counting the writes to instances that reach it (recording a refused
    call's id, which changes no instance, is not counted)."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def create(self, instance: FormInstance, call: NewCall | None = None) -> None:
        self.writes += 1
        super().create(instance, call)

    def commit(self, commit: Commit) -> FormInstance:
        self.writes += 1
        return super().commit(commit)


def make_service(store: InMemoryFormStore | None = None) -> FormService:
    """The examples on ``store`` (default: a fresh ``RecordingStore``), hooks in process, a
    clock ticking a second per reading from ``T0``, ids ``fi_1``, ``fi_2``, ..."""
    return service_for(
        *EXAMPLES,
        store=store if store is not None else RecordingStore(),
        clock=TickingClock(T0),
    )


def build_event(
    method: str,
    path: str,
    *,
    query: Mapping[str, str] | None = None,
    body: str | bytes | None = None,
    headers: Mapping[str, str] | None = None,
    claims: Mapping[str, Any] | None = ALICE,
    base64_body: bool = False,
) -> dict[str, Any]:
    """A payload v2 event shaped like the fixtures; ``claims=None`` leaves out the authorizer."""
    event = copy.deepcopy(load_event("list_tools"))
    event["routeKey"] = event["requestContext"]["routeKey"] = "$default"
    event["rawPath"] = event["requestContext"]["http"]["path"] = path
    event["requestContext"]["http"]["method"] = method
    event["rawQueryString"] = urlencode(query or {})
    if query:
        event["queryStringParameters"] = dict(query)
    if claims is None:
        del event["requestContext"]["authorizer"]
        del event["headers"]["authorization"]
    else:
        event["requestContext"]["authorizer"]["jwt"]["claims"] = dict(claims)
    if body is not None:
        event["headers"]["content-type"] = "application/json"
        if base64_body:
            raw = body.encode() if isinstance(body, str) else body
            event["body"] = base64.b64encode(raw).decode()
            event["isBase64Encoded"] = True
        else:
            assert isinstance(body, str)
            event["body"] = body
    event["headers"].update(headers or {})
    return event


class Response:
    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw
        self.status: int = raw["statusCode"]
        self.headers: dict[str, str] = {k.lower(): v for k, v in raw.get("headers", {}).items()}
        self.text: str = raw.get("body", "")

    def json(self) -> Any:
        return json.loads(self.text)

    def __repr__(self) -> str:
        return f"<Response {self.status} {self.text[:200]}>"


class Api:
    """Sends events to the handler the way API Gateway would, served by ``app``."""

    def __init__(self, app: App, calls: Iterator[int] | None = None) -> None:
        self.app = app
        self.calls = calls if calls is not None else count(1)

    @classmethod
    def over(cls, service: FormService, settings: Settings = SETTINGS, **parts: Any) -> Api:
        """An Api whose App serves ``service`` with ``settings`` and ``parts``."""
        return cls(app_for(service, settings=settings, **parts))

    @property
    def service(self) -> FormService:
        return self.app.service

    def using(self, *, settings: Settings | None = None, **parts: Any) -> Api:
        """This Api's service (and tool-call ids) on a new App: ``settings`` (default: this
        App's) and ``parts`` (the webhook parts, say), every other part built afresh."""
        settings = settings if settings is not None else self.app.settings
        return Api(app_for(self.service, settings=settings, **parts), self.calls)

    def send(self, event: dict[str, Any]) -> Response:
        return Response(lambda_handler(event, LocalContext(), app=self.app))

    def get(self, path: str, **kwargs: Any) -> Response:
        return self.send(build_event("GET", path, **kwargs))

    def post(self, path: str, body: Any, **kwargs: Any) -> Response:
        text = body if isinstance(body, str | bytes) else json.dumps(body)
        return self.send(build_event("POST", path, body=text, **kwargs))

    def call(
        self,
        tool: str,
        conversation: str = "conv-1",
        tool_call_id: str | None = None,
        claims: Mapping[str, Any] | None = ALICE,
        **tool_input: Any,
    ) -> Response:
        envelope = {"tool_call_id": tool_call_id or f"call_{next(self.calls)}", "input": tool_input}
        return self.post(f"/conversations/{conversation}/tools/{tool}", envelope, claims=claims)

    def status(self, conversation: str = "conv-1", **kwargs: Any) -> Response:
        return self.get(f"/conversations/{conversation}/status", **kwargs)


@pytest.fixture
def store() -> RecordingStore:
    return RecordingStore()


@pytest.fixture
def service(store: RecordingStore) -> FormService:
    return make_service(store)


@pytest.fixture
def app(service: FormService) -> App:
    """The App the handler serves with: ``service`` and ``SETTINGS``, every other part built
    on first use from the defaults."""
    return app_for(service, settings=SETTINGS)


@pytest.fixture
def api(app: App) -> Api:
    return Api(app)
