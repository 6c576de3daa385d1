"""``formwork.client`` against the real tool API on a loopback socket.

The API is the Lambda handler with an App over an in-memory ``FormService`` (the travel claim),
behind the local gateway (``formwork.infra.local.gateway``: API Gateway's events, dev tokens), on a
port of 127.0.0.1. A thin function in front of the handler records what reached it and can
lose an answer after the handler ran; a store that loses commits makes the service answer
``busy``; a proxy can drop the connection after the API answered. Covered: the tools in each
shape, a call and its result, retries under the same id (busy, 5xx, a dropped connection)
that apply once, retries spent, status lines, auth failures and bad requests, the builder's
tools and calls (with the editor's selection and Stop), strict mode (the tools typed for the
forms asked for, and a call sent with its format whose ``null`` answers are left out), the
async client, the retry policy's waits, the public surface, and a newer API's answers
(``httpx.MockTransport``: status values and keys this client does not know are kept, not
refused; an answer whose envelope does not read is still not a tool result).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

import formwork.client
from forms import Caller, ConflictError, FormService, InMemoryFormStore
from forms.examples.travel_claim import travel_claim
from forms.instance import Commit, FormInstance
from forms.surface.formats import tool_definitions
from forms.surface.strict import strict_definitions
from formwork.aws.api import lambda_handler
from formwork.client import (
    AsyncFormwork,
    AuthError,
    ConversationStatus,
    Formwork,
    RequestRefused,
    Retry,
    ServiceUnavailable,
    ToolResult,
)
from formwork.config import Settings
from formwork.infra.local.gateway import LocalGateway
from tests.support import app_for, service_for

CONVERSATION = "chat-9"
ALICE = Caller(principal="alice", conversation_id=CONVERSATION)
QUICK = Retry(attempts=4, backoff=0.0)
"""Retries without waits: the tests synchronise on answers, never on time."""


class LosingStore(InMemoryFormStore):
    """The in-memory store; the next ``lose`` commits lose to another writer (nothing saved)."""

    def __init__(self) -> None:
        super().__init__()
        self.lose = 0

    def commit(self, commit: Commit) -> FormInstance:
        if self.lose:
            self.lose -= 1
            current = super().get(commit.instance_id)
            raise ConflictError(commit.instance_id, commit.expected_version, current)
        return super().commit(commit)


class LocalApi:
    """The tool API on 127.0.0.1 (``url``): the handler over ``service`` behind the local
    gateway. ``seen`` lists ``(method, path, tool_call_id)`` of every request the function got,
    ``queries`` the query parameters of each (``{}`` for none), in the same order; ``answers``
    each tool call's JSON answer as the handler gave it. ``lose_answers`` ids get a
    502 the first time, after the handler ran; ``always`` replaces every answer (a status);
    principals in ``forbidden`` get a 403, as from an authorizer that checks scopes."""

    def __init__(self, service: FormService) -> None:
        self.service = service
        self.app = app_for(service, settings=Settings(tenant_claim=None))  # dev:alice is "alice"
        self.seen: list[tuple[str, str, str | None]] = []
        self.queries: list[dict[str, str]] = []
        self.answers: list[dict[str, Any]] = []
        self.lose_answers: set[str] = set()
        self.always: int | None = None
        self.forbidden: set[str] = set()
        self.gateway = LocalGateway(self.function, port=0)

    @property
    def url(self) -> str:
        return self.gateway.url

    def function(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        method = event["requestContext"]["http"]["method"]
        body = json.loads(event["body"]) if event.get("body") else {}
        call_id = body.get("tool_call_id") if isinstance(body, dict) else None
        self.seen.append((method, event["rawPath"], call_id))
        self.queries.append(dict(event.get("queryStringParameters") or {}))
        claims = event["requestContext"]["authorizer"]["jwt"]["claims"]
        if claims["sub"] in self.forbidden:
            return {"statusCode": 403, "body": json.dumps({"message": "Forbidden"})}
        if self.always is not None:
            return {"statusCode": self.always, "body": json.dumps({"message": "gateway"})}
        response: dict[str, Any] = lambda_handler(event, context, app=self.app)
        if method == "POST" and response["statusCode"] == 200:
            self.answers.append(json.loads(response["body"]))
        if call_id in self.lose_answers:
            self.lose_answers.discard(call_id)
            return {"statusCode": 502, "body": json.dumps({"message": "Bad Gateway"})}
        return response

    def ids_seen(self) -> list[str | None]:
        return [call_id for method, _, call_id in self.seen if method == "POST"]

    def __enter__(self) -> LocalApi:
        self.gateway.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.gateway.stop()


def travel_service(store: InMemoryFormStore | None = None) -> FormService:
    """The travel claim over ``store``; one retry of a lost commit inside the service, so two
    lost commits make a call ``busy``."""
    return service_for(travel_claim, store=store, max_conflict_retries=1)


@pytest.fixture
def store() -> LosingStore:
    return LosingStore()


@pytest.fixture
def api(store: LosingStore) -> Iterator[LocalApi]:
    with LocalApi(travel_service(store)) as running:
        yield running


@pytest.fixture
def client(api: LocalApi) -> Iterator[Formwork]:
    with Formwork(api.url, token="dev:alice", retry=QUICK) as made:
        yield made


def revisions_of(service: FormService, field: str) -> list[tuple[Any, str | None]]:
    """(value, tool_call_id) of every revision of ``field`` in alice's travel claim."""
    (instance,) = service.store.list_conversation("alice", CONVERSATION)
    return [(r.value, r.tool_call_id) for r in instance.field(field).revisions]


# ------------------------------------------------------------------------------ tools, call


@pytest.mark.parametrize("shape", ["generic", "openai", "bedrock", "anthropic", "mcp"])
def test_the_tools_come_in_the_shape_asked_for(client: Formwork, shape: str) -> None:
    assert client.tools(format=shape) == tool_definitions(shape)  # type: ignore[arg-type]


def test_an_unknown_format_is_a_bad_request_sent_once(client: Formwork, api: LocalApi) -> None:
    with pytest.raises(RequestRefused) as refused:
        client.tools(format="cobol")
    assert refused.value.status == 400 and refused.value.code == "bad_request"
    assert len(api.seen) == 1


def test_a_call_runs_under_the_models_id_and_keeps_every_key(
    client: Formwork, api: LocalApi
) -> None:
    # WHEN a call is sent under the model's id
    result = client.call(
        CONVERSATION,
        "form_start",
        {"form": "travel-claim", "values": {"destination": "Lisbon", "mode": "air"}},
        tool_call_id="call_Lx7",
    )
    # THEN the envelope is typed, and the result is the API's answer, key for key, in order
    assert isinstance(result, ToolResult)
    assert result.ok is True and result.error is None and result.replayed is False
    assert result.summary is not None and "destination" in result.summary
    assert result.tool_call_id == "call_Lx7" and result.attempts == 1
    assert result.to_dict() == api.answers[0]
    assert list(result.to_dict()) == list(api.answers[0])
    assert result.get("instance") == api.answers[0]["instance"]
    # AND the answer is stored under that id
    assert api.ids_seen() == ["call_Lx7"]
    assert revisions_of(api.service, "destination") == [("Lisbon", "call_Lx7")]


def test_a_call_without_an_id_is_sent_under_a_fresh_one(api: LocalApi) -> None:
    with Formwork(api.url, token="dev:alice", new_id=lambda: "fwcall_fresh") as client:
        result = client.call(CONVERSATION, "form_start", {"form": "travel-claim"})
    assert result.ok and result.tool_call_id == "fwcall_fresh"
    assert api.ids_seen() == ["fwcall_fresh"]


def test_a_made_up_id_is_one_the_api_accepts() -> None:
    made = {formwork.client.new_tool_call_id() for _ in range(50)}
    assert len(made) == 50
    assert all(i.startswith("fwcall_") and len(i) == 39 and i.isascii() for i in made)


def test_a_refusal_of_the_tool_is_data_not_an_exception(client: Formwork) -> None:
    result = client.call(CONVERSATION, "form_read", {"form": "no-such-form"}, "call_1")
    assert result.ok is False and result.error == "unknown_form"
    assert result.message and result.hint is not None


# ------------------------------------------------------------------------------ retries


def test_a_busy_call_is_sent_again_under_the_same_id_and_applied_once(
    client: Formwork, api: LocalApi, store: LosingStore
) -> None:
    # GIVEN a claim, and a store whose next two commits lose to other writers: the service
    # gives up on the first send (busy) and saves nothing
    client.call(CONVERSATION, "form_start", {"form": "travel-claim"}, "call_start")
    store.lose = 2
    # WHEN a fill is sent
    result = client.call(
        CONVERSATION,
        "form_fill",
        {"form": "travel-claim", "values": {"full_name": "Ana Ferreira"}},
        "call_fill",
    )
    # THEN the API saw the same id twice: busy first, applied the second time
    assert api.ids_seen() == ["call_start", "call_fill", "call_fill"]
    assert [a.get("error") for a in api.answers[1:]] == ["busy", None]
    assert result.ok is True and result.attempts == 2 and result.tool_call_id == "call_fill"
    # AND the answer is stored once, under that id
    assert revisions_of(api.service, "full_name") == [("Ana Ferreira", "call_fill")]


def test_a_lost_answer_is_sent_again_and_replayed_not_applied_twice(
    client: Formwork, api: LocalApi
) -> None:
    # GIVEN an API that applies the call, then loses its answer (a 502 on the way back)
    api.lose_answers.add("call_start")
    # WHEN the call is sent
    result = client.call(
        CONVERSATION,
        "form_start",
        {"form": "travel-claim", "values": {"mode": "rail"}},
        "call_start",
    )
    # THEN the retry under the same id is answered with the first result, replayed
    assert api.ids_seen() == ["call_start", "call_start"]
    assert result.ok is True and result.replayed is True and result.attempts == 2
    assert result.get("instance") == api.answers[0]["instance"]
    # AND one instance holds the answer once
    assert len(api.service.store.list_conversation("alice", CONVERSATION)) == 1
    assert revisions_of(api.service, "mode") == [("rail", "call_start")]


class DroppingProxy:
    """An HTTP proxy on 127.0.0.1 in front of ``upstream`` that, for the first ``drop``
    requests, forwards the request, reads the answer, and closes the connection without
    sending it: the API applied the call, and the client got nothing back."""

    def __init__(self, upstream: str, drop: int) -> None:
        self.upstream = urlsplit(upstream)
        self.drop = drop
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                proxy.forward(self)

            def do_GET(self) -> None:
                proxy.forward(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def forward(self, request: BaseHTTPRequestHandler) -> None:
        length = int(request.headers.get("Content-Length") or 0)
        body = request.rfile.read(length) if length else None
        upstream = http.client.HTTPConnection(
            self.upstream.hostname or "127.0.0.1", self.upstream.port
        )
        headers = {k: v for k, v in request.headers.items() if k.lower() != "host"}
        upstream.request(request.command, request.path, body, headers)
        answer = upstream.getresponse()
        payload = answer.read()
        upstream.close()
        if self.drop:
            self.drop -= 1
            request.close_connection = True  # nothing written: the answer is lost
            return
        request.send_response(answer.status)
        for name, value in answer.getheaders():
            if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                request.send_header(name, value)
        request.send_header("Content-Length", str(len(payload)))
        request.end_headers()
        request.wfile.write(payload)

    def __enter__(self) -> DroppingProxy:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def test_a_dropped_connection_is_sent_again_and_replayed(api: LocalApi) -> None:
    # GIVEN a network that drops the connection after the API answered the first send
    with (
        DroppingProxy(api.url, drop=1) as proxy,
        Formwork(proxy.url, token="dev:alice", retry=QUICK) as client,
    ):
        # WHEN a call is sent
        result = client.call(CONVERSATION, "form_start", {"form": "travel-claim"}, "call_dropped")
    # THEN it was sent twice under one id, applied once, and the second answer is the replay
    assert api.ids_seen() == ["call_dropped", "call_dropped"]
    assert result.ok is True and result.replayed is True and result.attempts == 2
    assert len(api.service.store.list_conversation("alice", CONVERSATION)) == 1


def test_busy_on_every_attempt_comes_back_as_data(api: LocalApi, store: LosingStore) -> None:
    with Formwork(api.url, token="dev:alice", retry=Retry(attempts=3, backoff=0)) as client:
        client.call(CONVERSATION, "form_start", {"form": "travel-claim"}, "call_start")
        store.lose = 1_000
        result = client.call(
            CONVERSATION, "form_fill", {"form": "travel-claim", "values": {"total": 10}}, "c2"
        )
    assert result.ok is False and result.busy and result.error == "busy"
    assert result.attempts == 3 and api.ids_seen().count("c2") == 3
    (instance,) = api.service.store.list_conversation("alice", CONVERSATION)
    assert instance.field("total").revisions == ()


def test_5xx_on_every_attempt_raises_with_the_id_to_send_again(api: LocalApi) -> None:
    api.always = 503
    waits: list[float] = []
    retry = Retry(attempts=3, backoff=0.2, max_backoff=0.3, draw=lambda: 1.0)
    client = Formwork(api.url, token="dev:alice", retry=retry, sleep=waits.append)
    with client, pytest.raises(ServiceUnavailable) as unavailable:
        client.call(CONVERSATION, "form_start", {"form": "travel-claim"}, "call_5xx")
    assert unavailable.value.status == 503 and unavailable.value.attempts == 3
    assert unavailable.value.tool_call_id == "call_5xx"
    assert api.ids_seen() == ["call_5xx"] * 3
    assert waits == [0.2, 0.3]  # the ceiling doubles, up to max_backoff


def free_port() -> int:
    """A port of 127.0.0.1 nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_an_api_that_cannot_be_reached_raises_after_jittered_waits() -> None:
    waits: list[float] = []
    draws = iter([0.5, 0.25])
    retry = Retry(attempts=3, backoff=0.4, max_backoff=10, draw=lambda: next(draws))
    with (
        Formwork(
            f"http://127.0.0.1:{free_port()}", "dev:alice", retry=retry, sleep=waits.append
        ) as client,
        pytest.raises(ServiceUnavailable) as unavailable,
    ):
        client.call(CONVERSATION, "form_list", {}, "call_x")
    assert unavailable.value.status is None and unavailable.value.attempts == 3
    assert "ConnectError" in str(unavailable.value)
    assert waits == [0.5 * 0.4, 0.25 * 0.8]


def test_the_waits_are_full_jitter_under_a_doubling_ceiling() -> None:
    half = Retry(backoff=0.25, max_backoff=1.0, draw=lambda: 0.5)
    assert [half.delay(n) for n in range(5)] == [0.125, 0.25, 0.5, 0.5, 0.5]
    assert Retry(draw=lambda: 0.0).delay(3) == 0.0
    with pytest.raises(ValueError, match="at least 1"):
        Retry(attempts=0)


# ------------------------------------------------------------------------------ status


def test_the_status_lines_are_the_services(client: Formwork, api: LocalApi) -> None:
    # GIVEN a conversation with no form yet: no lines (the API's 404)
    assert client.status(CONVERSATION) == ConversationStatus(conversation_id=CONVERSATION, lines=[])
    # WHEN a claim is started
    client.call(CONVERSATION, "form_start", {"form": "travel-claim"}, "call_1")
    # THEN its status line is there, as the service gives it
    status = client.status(CONVERSATION)
    assert status.lines == api.service.status(ALICE)
    assert status.lines[0].startswith('[form: travel-claim] step 1/4 "Claimant"')
    assert status.text == "\n".join(status.lines)


def test_another_principals_conversation_has_no_lines(client: Formwork, api: LocalApi) -> None:
    client.call(CONVERSATION, "form_start", {"form": "travel-claim"}, "call_1")
    with Formwork(api.url, token="dev:bob") as bob:
        assert bob.status(CONVERSATION).lines == []


# ------------------------------------------------------------------------------ refusals


@pytest.mark.parametrize("token", [None, "not-a-dev-token"])
def test_a_missing_or_wrong_token_is_an_auth_error_sent_once(
    api: LocalApi, token: str | None
) -> None:
    with Formwork(api.url, token=token, retry=QUICK) as client:
        with pytest.raises(AuthError) as refused:
            client.call(CONVERSATION, "form_list", {}, "call_1")
        assert refused.value.status == 401
        with pytest.raises(AuthError):
            client.tools()
        with pytest.raises(AuthError):
            client.status(CONVERSATION)
    assert api.seen == []  # the gateway refused them: the function never ran


def test_a_token_without_the_right_is_a_403_auth_error(api: LocalApi) -> None:
    api.forbidden.add("mallory")
    client = Formwork(api.url, token="dev:mallory", retry=QUICK)
    with client, pytest.raises(AuthError) as refused:
        client.call(CONVERSATION, "form_list", {}, "call_1")
    assert refused.value.status == 403 and len(api.seen) == 1


def test_the_token_may_be_read_before_every_send(api: LocalApi) -> None:
    tokens = iter(["dev:alice", "dev:alice2"])
    with Formwork(api.url, token=lambda: next(tokens)) as client:
        client.call(CONVERSATION, "form_start", {"form": "travel-claim"}, "call_1")
        assert client.status(CONVERSATION).lines == []  # alice2 has no form there


def test_an_unknown_tool_and_a_malformed_id_are_bad_requests(
    client: Formwork, api: LocalApi
) -> None:
    with pytest.raises(RequestRefused) as unknown:
        client.call(CONVERSATION, "form_update", {}, "call_1")
    assert unknown.value.status == 404 and unknown.value.code == "unknown_tool"
    assert unknown.value.body is not None and "form_fill" in unknown.value.body["message"]
    with pytest.raises(RequestRefused) as malformed:
        client.call("chat 9!", "form_list", {}, "call_2")
    assert malformed.value.status == 400 and malformed.value.code == "bad_request"
    with pytest.raises(RequestRefused) as bad_id:
        client.call(CONVERSATION, "form_list", {}, "not an id!")
    assert bad_id.value.status in (400, 422)
    assert len(api.seen) == 3  # none of them sent twice


# ------------------------------------------------------------------------------ the builder

FORM = "contact-us"
EMAIL = {"field": {"kind": "email", "label": "Email"}}


def builder_definitions(shape: str) -> list[dict[str, Any]]:
    from forms.app.builder import BUILDER_ARGUMENTS
    from forms.surface.formats import model_tools

    made = tool_definitions(shape, model_tools(BUILDER_ARGUMENTS))  # type: ignore[arg-type]
    loaded: list[dict[str, Any]] = json.loads(json.dumps(made))
    return loaded


def item_ids(api: LocalApi) -> list[str]:
    document = api.app.builder.draft("alice", FORM).document
    return [item.id for step in document.steps for item in step.items]


@pytest.mark.parametrize("shape", ["generic", "mcp"])
def test_the_builder_tools_come_in_the_shape_asked_for(client: Formwork, shape: str) -> None:
    assert client.builder_tools(shape) == builder_definitions(shape)


def test_a_builder_call_edits_the_draft_under_the_models_id(
    client: Formwork, api: LocalApi
) -> None:
    # WHEN a builder agent starts a draft and adds a field, each under its own id
    made = client.builder_call(
        FORM, "create_form", {"title": "Contact us", "steps": [{"title": "Contact"}]}, "b_1"
    )
    added = client.builder_call(FORM, "add_field", EMAIL, "b_2", chat_id="chat-1")
    # THEN each result is the builder's sentence, sent under that id
    assert made.ok is True and made.summary is not None and made.summary.startswith("Created")
    assert added.to_dict() == {
        "ok": True,
        "summary": 'Added field "email" (email) to step "Contact".',
    }
    assert added.tool_call_id == "b_2" and api.ids_seen() == ["b_1", "b_2"]
    # AND the same id again in its chat is the first result, replayed: one field
    again = client.builder_call(FORM, "add_field", EMAIL, "b_2", chat_id="chat-1")
    assert again.replayed is True and again.summary == added.summary
    assert item_ids(api) == ["email"]
    # AND without a chat_id, each call is a chat of its own: the id is never another call's
    other = client.builder_call(FORM, "add_field", EMAIL, "b_2")
    assert other.replayed is False
    assert other.summary == 'Added field "email_2" (email) to step "Contact".'


def test_a_builder_call_carries_the_selection_and_stop(client: Formwork, api: LocalApi) -> None:
    client.builder_call(FORM, "create_form", {"title": "Contact us", "steps": [{"title": "C"}]})
    client.builder_call(FORM, "add_field", EMAIL)
    # WHEN "make this optional" comes with the editor's selection, and a call is cancelled
    optional = client.builder_call(
        FORM, "update_field", {"updates": {"required": False}}, selection={"field": "email"}
    )
    stopped = client.builder_call(
        FORM, "add_field", {"field": {"kind": "url", "label": "Web"}}, "b_stop", cancelled=True
    )
    # THEN the selected field changed, and the cancelled call applied nothing
    assert optional.summary == 'Updated field "email": required.'
    assert (stopped.ok, stopped.error) == (False, "cancelled")
    assert item_ids(api) == ["email"]


def test_a_builder_refusal_is_data_and_an_unknown_builder_tool_raises(
    client: Formwork, api: LocalApi
) -> None:
    refused = client.builder_call(FORM, "inspect_form", {}, "b_1")
    assert (refused.ok, refused.error) == (False, "no_draft")
    with pytest.raises(RequestRefused) as unknown:
        client.builder_call(FORM, "form_fill", {}, "b_2")
    assert unknown.value.status == 404 and unknown.value.code == "unknown_tool"
    assert len(api.seen) == 2


def test_the_async_client_builds_the_same(api: LocalApi) -> None:
    async def session() -> tuple[list[dict[str, Any]], ToolResult]:
        async with AsyncFormwork(api.url, token="dev:alice", retry=QUICK) as client:
            tools = await client.builder_tools("mcp")
            await client.builder_call(
                FORM, "create_form", {"title": "Contact us", "steps": [{"title": "C"}]}, "a_1"
            )
            return tools, await client.builder_call(FORM, "add_field", EMAIL, "a_2")

    tools, added = asyncio.run(session())
    assert tools == builder_definitions("mcp")
    assert added.ok and added.tool_call_id == "a_2"
    assert item_ids(api) == ["email"]


# ------------------------------------------------------------------------------ strict mode

NOT_GIVEN = {
    "full_name": None,
    "staff_id": None,
    "destination": None,
    "departure_date": None,
    "return_date": None,
    "purpose": None,
    "mode": None,
    "flight_number": None,
    "distance_km": None,
    "total": None,
    "cost_centre": None,
    "manager_email": None,
    "receipts_attached": None,
}
"""Every field id of the travel claim the agent writes, unanswered: what strict mode makes a
model send for each one the person said nothing about."""


def strict_fill(**given: Any) -> dict[str, Any]:
    """A ``form_fill`` of the travel claim as a model in strict mode sends it: every argument,
    every field id, ``null`` where there is nothing to say."""
    return {
        "form": "travel-claim",
        "instance": None,
        "values": {**NOT_GIVEN, **given},
        "decline": None,
        "submit": False,
    }


def test_strict_tools_are_typed_for_the_forms_asked_for(client: Formwork, api: LocalApi) -> None:
    claim_form = api.service.registry.latest("travel-claim", "alice")
    # WHEN the strict tools are asked for one form, as a list and as a comma-separated string
    listed = client.tools(format="openai-strict", forms=["travel-claim"])
    spelled = client.tools(format="openai-strict", forms="travel-claim")
    # THEN they are the strict export typed for it, and the forms went comma-separated
    assert listed == spelled == strict_definitions("openai-strict", [claim_form])
    assert api.queries == [{"format": "openai-strict", "forms": "travel-claim"}] * 2
    fill = next(t["function"] for t in listed if t["function"]["name"] == "form_fill")
    assert fill["strict"] is True
    assert set(fill["parameters"]["properties"]["values"]["required"]) == set(NOT_GIVEN)
    # AND without forms, the Responses API's shape is typed for every form alice can start
    responses = client.tools(format="openai-responses-strict")
    assert api.queries[-1] == {"format": "openai-responses-strict"}
    forms = api.service.registry.forms("alice")
    assert responses == strict_definitions("openai-responses-strict", forms)
    assert responses[0]["type"] == "function" and responses[0]["strict"] is True


def test_forms_with_a_format_that_is_not_strict_is_a_bad_request(
    client: Formwork, api: LocalApi
) -> None:
    with pytest.raises(RequestRefused) as refused:
        client.tools(format="openai", forms=["travel-claim"])
    assert refused.value.status == 400 and refused.value.code == "bad_request"
    with pytest.raises(RequestRefused) as unknown:
        client.tools(format="openai-strict", forms=["no-such-form"])
    assert unknown.value.status == 400
    assert len(api.seen) == 2  # neither sent twice


def test_a_strict_call_sent_with_its_format_saves_only_what_was_given(
    client: Formwork, api: LocalApi
) -> None:
    # GIVEN a claim
    client.call(CONVERSATION, "form_start", {"form": "travel-claim"}, "call_start")
    # WHEN a strict call (a null for every field but one) is sent with its format
    result = client.call(
        CONVERSATION,
        "form_fill",
        strict_fill(full_name="Ana Ferreira"),
        "call_strict",
        format="openai-strict",
    )
    # THEN it went with ?format=openai-strict, and the nulls were read as not given
    assert api.queries[-1] == {"format": "openai-strict"}
    assert result.ok is True and result.get("rejected") is None
    assert revisions_of(api.service, "full_name") == [("Ana Ferreira", "call_strict")]
    assert revisions_of(api.service, "staff_id") == []
    # AND the same call without the format is refused null by null: why the format matters
    plain = client.call(CONVERSATION, "form_fill", strict_fill(staff_id="AB1234"), "call_plain")
    assert api.queries[-1] == {}
    assert {r["field"] for r in plain.get("rejected")} == set(NOT_GIVEN) - {"staff_id"}
    assert revisions_of(api.service, "staff_id") == [("AB1234", "call_plain")]


# ------------------------------------------------------------------------------ async


def test_the_async_client_does_the_same(api: LocalApi, store: LosingStore) -> None:
    async def session() -> tuple[list[dict[str, Any]], ToolResult, ToolResult, ConversationStatus]:
        async with AsyncFormwork(api.url, token="dev:alice", retry=QUICK) as client:
            tools = await client.tools(format="bedrock")
            started = await client.call(
                CONVERSATION, "form_start", {"form": "travel-claim"}, "call_a1"
            )
            store.lose = 2
            filled = await client.call(
                CONVERSATION,
                "form_fill",
                {"form": "travel-claim", "values": {"full_name": "Ana Ferreira"}},
                "call_a2",
            )
            return tools, started, filled, await client.status(CONVERSATION)

    tools, started, filled, status = asyncio.run(session())
    assert tools == tool_definitions("bedrock")
    assert started.ok and filled.ok and filled.attempts == 2
    assert api.ids_seen() == ["call_a1", "call_a2", "call_a2"]
    assert revisions_of(api.service, "full_name") == [("Ana Ferreira", "call_a2")]
    assert status.lines == api.service.status(ALICE)


def test_the_async_client_speaks_strict_mode_the_same(api: LocalApi) -> None:
    async def session() -> tuple[list[dict[str, Any]], ToolResult]:
        async with AsyncFormwork(api.url, token="dev:alice", retry=QUICK) as client:
            tools = await client.tools(format="openai-strict", forms=["travel-claim"])
            await client.call(CONVERSATION, "form_start", {"form": "travel-claim"}, "call_s1")
            filled = await client.call(
                CONVERSATION,
                "form_fill",
                strict_fill(staff_id="AB1234"),
                "call_s2",
                format="openai-strict",
            )
            return tools, filled

    tools, filled = asyncio.run(session())
    claim_form = api.service.registry.latest("travel-claim", "alice")
    assert tools == strict_definitions("openai-strict", [claim_form])
    assert api.queries == [
        {"format": "openai-strict", "forms": "travel-claim"},
        {},
        {"format": "openai-strict"},
    ]
    assert filled.ok is True and filled.get("rejected") is None
    assert revisions_of(api.service, "staff_id") == [("AB1234", "call_s2")]


def test_the_async_client_raises_the_same_errors(api: LocalApi) -> None:
    waits: list[float] = []

    async def wait(seconds: float) -> None:
        waits.append(seconds)

    async def refused() -> None:
        async with AsyncFormwork(api.url, retry=QUICK) as client:
            await client.call(CONVERSATION, "form_list", {}, "call_1")

    async def unavailable() -> None:
        retry = Retry(attempts=2, backoff=0.1, draw=lambda: 1.0)
        async with AsyncFormwork(api.url, "dev:alice", retry=retry, sleep=wait) as client:
            await client.call(CONVERSATION, "form_list", {}, "call_2")

    with pytest.raises(AuthError):
        asyncio.run(refused())
    api.always = 500
    with pytest.raises(ServiceUnavailable) as failed:
        asyncio.run(unavailable())
    assert failed.value.tool_call_id == "call_2" and waits == [0.1]


# ------------------------------------------------------------------------------ surface


def test_the_public_surface_is_pinned() -> None:
    assert set(formwork.client.__all__) == {
        "BUSY",
        "DEFAULT_TIMEOUT",
        "NO_RETRY",
        "AsyncFormwork",
        "AuthError",
        "ClientError",
        "ConversationStatus",
        "Formwork",
        "RequestRefused",
        "Retry",
        "ServiceUnavailable",
        "Token",
        "ToolResult",
        "new_tool_call_id",
    }
    for name in formwork.client.__all__:
        assert getattr(formwork.client, name) is not None


def test_status_is_the_deprecated_name_of_conversation_status() -> None:
    # GIVEN the client's old name of a conversation's status lines (an instance's status is
    # forms.statuses.Status)
    # WHEN it is imported THEN it warns, and is the new one
    with pytest.warns(DeprecationWarning, match="ConversationStatus"):
        from formwork.client import Status
    assert Status is ConversationStatus
    assert "Status" not in formwork.client.__all__


def test_errors_share_one_root() -> None:
    for error in (AuthError, RequestRefused, ServiceUnavailable):
        assert issubclass(error, formwork.client.ClientError)


def test_a_mock_transport_needs_no_socket() -> None:
    # httpx's in-memory transport plugs in as it is (for tests of code that uses the client)
    def answer(request: httpx.Request) -> httpx.Response:
        assert request.headers["authorization"] == "Bearer t"
        return httpx.Response(200, json={"ok": True, "summary": "Listed.", "forms": []})

    with Formwork("http://formwork.test", "t", transport=httpx.MockTransport(answer)) as client:
        result = client.call(CONVERSATION, "form_list", {}, "call_1")
    assert result.ok and result.get("forms") == []


# ------------------------------------------------------------------------ a newer API

NEWER = {
    "ok": True,
    "summary": "Saved 1 (destination); the form is archived.",
    "closed": "archived",
    "hooks": [{"key": "fi_1:form.closed:1", "status": "deferred"}],
    "next_actions": [{"tool": "form_read", "why": "to show the archive"}],
    "status_line": "[form: travel-claim] archived",
}
"""What a later version of the API might answer: a status value and a hook status this client
does not know, and a key it has never heard of."""


def answering(body: Any) -> httpx.MockTransport:
    """A transport whose every answer is ``body`` (200, JSON), as from another API version."""
    return httpx.MockTransport(lambda request: httpx.Response(200, json=body))


def call_with(body: Any) -> ToolResult:
    with Formwork("http://formwork.test", "t", transport=answering(body)) as client:
        return client.call(CONVERSATION, "form_fill", {}, "call_1")


def test_a_newer_apis_status_values_and_keys_are_kept_not_refused(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # GIVEN an answer with an unknown status value, an unknown hook status and an unknown key
    # WHEN the client reads it
    with caplog.at_level("INFO", logger="formwork.client"):
        result = call_with(NEWER)
    # THEN it is a tool result: the envelope and what it can type are typed
    assert result.ok and result.summary == NEWER["summary"]
    assert result.status_line == NEWER["status_line"] and result.tool_call_id == "call_1"
    # AND what it cannot type reads as not set on the model, and is kept as sent
    assert result.closed is None and result.hooks is None
    assert result.untyped == ("closed", "hooks")
    assert result.get("closed") == "archived" and result.get("hooks") == NEWER["hooks"]
    assert result.get("next_actions") == NEWER["next_actions"]
    assert result.to_dict() == NEWER and list(result.to_dict()) == list(NEWER)
    # AND the client says so in its log, naming the keys
    assert "closed, hooks" in caplog.text


def test_an_unknown_key_alone_is_typed_as_ever() -> None:
    answer = {"ok": True, "summary": "Listed.", "forms": [], "page": {"next": None}}
    result = call_with(answer)
    assert result.untyped == () and result.get("page") == {"next": None}
    assert result.to_dict() == answer


def test_a_newer_refusal_is_still_data() -> None:
    # an error code and a key this client has never seen: a refusal, typed as any other
    answer = {
        "ok": False,
        "error": "quota_exceeded",
        "message": "Too many forms today.",
        "closed": "archived",
        "retry_after": 30,
    }
    result = call_with(answer)
    assert (result.ok, result.error, result.message) == (False, "quota_exceeded", answer["message"])
    assert result.untyped == ("closed",) and result.get("retry_after") == 30
    assert not result.busy


@pytest.mark.parametrize(
    "body",
    [
        {"summary": "Saved."},  # no ok
        {"ok": "maybe", "summary": "Saved."},  # ok is not a boolean
        {"ok": True, "summary": 3},  # summary is not a sentence
        {"ok": False, "error": "x", "message": ["no"]},  # message is not text
        {"ok": True, "closed": "archived"},  # no summary, nor error and message
        {"ok": False, "error": "x", "closed": "archived"},  # error without a message
        {"ok": True, "summary": "Saved.", "hint": {"send": "this"}},  # hint is not text
        ["ok", True],  # not an object
    ],
)
def test_an_answer_whose_envelope_does_not_read_is_still_not_a_tool_result(body: Any) -> None:
    with pytest.raises(ServiceUnavailable, match="not"):
        call_with(body)


def test_the_async_client_reads_a_newer_api_the_same() -> None:
    async def session() -> ToolResult:
        async with AsyncFormwork("http://formwork.test", "t", transport=answering(NEWER)) as c:
            return await c.call(CONVERSATION, "form_fill", {}, "call_1")

    result = asyncio.run(session())
    assert result.ok and result.untyped == ("closed", "hooks") and result.to_dict() == NEWER


def test_a_builder_read_leads_with_ok_and_the_draft_and_is_a_tool_result() -> None:
    # GIVEN the builder's inspect_form answer: ok and the draft's outline, no sentence
    answer = {"ok": True, "form_id": "contact", "version": 3, "outline": "Contact: email"}
    # WHEN the client reads it as a builder call's answer
    with Formwork("http://formwork.test", "t", transport=answering(answer)) as client:
        result = client.builder_call("contact", "inspect_form", {}, tool_call_id="call_1")
    # THEN it is a tool result, kept as sent; a form tool's answer of that shape still is not
    assert result.ok and result.summary is None and result.to_dict() == answer
    with pytest.raises(ServiceUnavailable, match="not"):
        call_with(answer)
    # AND a builder refusal without its message is not one either
    with (
        Formwork("http://formwork.test", "t", transport=answering({"ok": False})) as client,
        pytest.raises(ServiceUnavailable, match="not"),
    ):
        client.builder_call("contact", "inspect_form", {}, tool_call_id="call_2")
