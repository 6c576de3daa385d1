"""Functional tests of the Lambda handler: API Gateway events in, responses out.

The handler runs as Lambda runs it (``functions.api.lambda_handler`` with a context object),
on a ``FormService`` over ``InMemoryFormStore`` injected with ``formwork.bootstrap.use_service``.
Events are built from the payload v2 fixtures in ``tests/events``.
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from itertools import count
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from forms import FormRegistry, FormService, InMemoryFormStore, InProcessDispatcher
from forms.examples import EXAMPLES
from forms.instance import Commit, FormInstance, NewCall
from formwork.bootstrap import use_service
from formwork.config import Settings
from functions.api import lambda_handler
from functions.local import LocalContext

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
    ticks = count(1)
    ids = count(1)
    return FormService(
        FormRegistry(EXAMPLES),
        store if store is not None else RecordingStore(),
        InProcessDispatcher(),
        clock=lambda: T0 + timedelta(seconds=next(ticks)),
        new_id=lambda: f"fi_{next(ids)}",
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
    """Sends events to the handler the way API Gateway would."""

    def __init__(self, service: FormService) -> None:
        self.service = service
        self.calls = count(1)

    def send(self, event: dict[str, Any]) -> Response:
        return Response(lambda_handler(event, LocalContext()))

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
def api(service: FormService) -> Iterator[Api]:
    with use_service(service, settings=SETTINGS):
        yield Api(service)
