"""The reference chat loop (``formwork.agents.chat_loop``), offline, against the real tool API.

Formwork is the Lambda handler over an in-memory ``FormService`` behind the local gateway on
127.0.0.1 (``tests.unit.test_client.LocalApi``), reached through ``formwork.client``. The
model is recorded (``tests/recordings/chat_loop``): for OpenAI, the real ``openai`` SDK talks
to a stub ``/v1/chat/completions`` on 127.0.0.1 that answers the recorded completions; for
Bedrock, a stand-in for boto3's ``bedrock-runtime`` client answers the recorded Converse
responses. Both fill the travel claim to its submission, and the tests read the stored
instance; so does the OpenAI SDK in strict mode (``OpenAIChat(strict=...)``: the strict tools,
a ``null`` for every field the person did not mention, each call sent with its format). Also:
the status lines in every prompt, the tools as served, the step cap, the API's refusals and
failures as data, Stop, and the example script.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import openai
import pytest

from forms.instance import FormInstance
from forms.surface.formats import Format, tool_definitions
from forms.surface.strict import strict_definitions
from formwork.agents import (
    BedrockConverse,
    Completion,
    OpenAIChat,
    ServedTool,
    ToolCall,
    TurnFailed,
    Usage,
    UserText,
)
from formwork.agents.chat_loop import (
    FORM_INSTRUCTIONS,
    ChatAgent,
    chat_prompt,
    openai_sdk_post,
)
from formwork.agents.transcript import Entry
from formwork.client import Formwork, Retry
from formwork.examples import chat_loop as example
from tests.support import TRAVEL_ANSWERS
from tests.unit.test_client import CONVERSATION, LocalApi, travel_service

ROOT = Path(__file__).resolve().parents[2]
RECORDINGS = ROOT / "tests" / "recordings" / "chat_loop"
QUICK = Retry(attempts=3, backoff=0.0)
COMPLETED_ANSWERS = {
    **TRAVEL_ANSWERS,
    "purpose": "client kickoff",
    "total": "1950",  # a Decimal, stored as its canonical JSON
}


def recording(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((RECORDINGS / f"{name}.json").read_text("utf-8"))
    return loaded


class CompletionsStub:
    """An OpenAI-compatible ``POST /v1/chat/completions`` on 127.0.0.1 that answers the
    recorded completions in order (the last again and again with ``repeat``), keeping each
    request's JSON body."""

    def __init__(self, responses: list[dict[str, Any]], repeat: bool = False) -> None:
        self.responses = list(responses)
        self.repeat = repeat
        self.requests: list[dict[str, Any]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                status, answer = stub.answer(self.path, json.loads(body))
                payload = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,))

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if path != "/v1/chat/completions":
            return 404, {"error": {"message": f"no route {path}"}}
        self.requests.append(body)
        if not self.responses:
            return 500, {"error": {"message": "no recorded response left"}}
        return 200, self.responses[0] if self.repeat else self.responses.pop(0)

    def systems(self) -> list[str]:
        return [str(r["messages"][0]["content"]) for r in self.requests]

    def tools(self, n: int) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = self.requests[n]["tools"]
        return tools

    def results_sent(self) -> list[dict[str, Any]]:
        """Every tool result the model was sent, the first time it was sent."""
        seen: dict[str, dict[str, Any]] = {}
        for request in self.requests:
            for message in request["messages"]:
                if message["role"] == "tool":
                    seen.setdefault(message["tool_call_id"], json.loads(message["content"]))
        return list(seen.values())

    def __enter__(self) -> CompletionsStub:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


class RecordedConverse:
    """A stand-in for ``boto3.client("bedrock-runtime")``: ``converse`` answers the next
    recorded response and keeps a copy of each request."""

    def __init__(self, responses: list[dict[str, Any]]) -> None:
        self.responses = list(responses)
        self.requests: list[dict[str, Any]] = []

    def converse(self, **request: Any) -> dict[str, Any]:
        self.requests.append(json.loads(json.dumps(request)))
        if not self.responses:
            raise RuntimeError("no recorded response left")
        return self.responses.pop(0)

    def systems(self) -> list[str]:
        return [str(r["system"][0]["text"]) for r in self.requests]

    def tools(self, n: int) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = self.requests[n]["toolConfig"]["tools"]
        return tools

    def results_sent(self) -> list[dict[str, Any]]:
        seen: dict[str, dict[str, Any]] = {}
        for request in self.requests:
            for message in request["messages"]:
                for block in message["content"]:
                    if "toolResult" in block:
                        done = block["toolResult"]
                        seen.setdefault(done["toolUseId"], done["content"][0]["json"])
        return list(seen.values())


@pytest.fixture
def api() -> Iterator[LocalApi]:
    with LocalApi(travel_service()) as running:
        yield running


@pytest.fixture
def client(api: LocalApi) -> Iterator[Formwork]:
    with Formwork(api.url, token="dev:alice", retry=QUICK) as made:
        yield made


def claim(api: LocalApi) -> FormInstance:
    (instance,) = api.service.store.list_conversation("alice", CONVERSATION)
    return instance


def answers(instance: FormInstance) -> dict[str, Any]:
    in_force = {f: h.in_force() for f, h in instance.history.items()}
    return {f: r.value for f, r in in_force.items() if r is not None and r.kind == "value"}


def recorded_ids(responses: list[dict[str, Any]]) -> list[str]:
    """The tool-call ids of the recorded responses, in order."""
    ids: list[str] = []
    for response in responses:
        if "choices" in response:
            calls = response["choices"][0]["message"].get("tool_calls") or []
            ids += [c["id"] for c in calls]
        else:
            content = response["output"]["message"]["content"]
            ids += [b["toolUse"]["toolUseId"] for b in content if "toolUse" in b]
    return ids


def replies(responses: list[dict[str, Any]]) -> list[str]:
    """The text of the recorded responses that make no call: each turn's reply."""
    texts: list[str] = []
    for response in responses:
        if "choices" in response:
            message = response["choices"][0]["message"]
            if not message.get("tool_calls"):
                texts.append(message["content"])
        else:
            content = response["output"]["message"]["content"]
            if not any("toolUse" in b for b in content):
                texts.append(content[0]["text"])
    return texts


def play(agent: ChatAgent, turns: list[str]) -> list[Any]:
    """Each of the person's turns in order, the transcript carried from one to the next."""
    transcript: list[Entry] = []
    results = []
    for text in turns:
        result = agent.run_turn(transcript, text)
        transcript = list(result.transcript)
        results.append(result)
    return results


# ------------------------------------------------------------------------------ travel claim


def test_the_real_openai_sdk_fills_the_travel_claim_to_completion(
    api: LocalApi, client: Formwork
) -> None:
    recorded = recording("openai_travel_claim")
    with CompletionsStub(recorded["responses"]) as stub:
        sdk = openai.OpenAI(api_key="sk-test", base_url=stub.base_url, max_retries=0)
        provider = OpenAIChat(stub.base_url, "sk-test", "gpt-4.1-mini", post=openai_sdk_post(sdk))
        agent = ChatAgent(provider, client, CONVERSATION)
        # WHEN the person's four turns are played
        results = play(agent, recorded["turns"])
    check_the_completed_claim(api, recorded["responses"], results, stub)
    # AND the SDK sent what OpenAIChat built: the model, the system prompt first, the tools
    assert all(r["model"] == "gpt-4.1-mini" for r in stub.requests)
    assert all(r["messages"][0]["role"] == "system" for r in stub.requests)


def test_recorded_bedrock_responses_fill_the_travel_claim_to_completion(
    api: LocalApi, client: Formwork
) -> None:
    recorded = recording("bedrock_travel_claim")
    converse = RecordedConverse(recorded["responses"])
    provider = BedrockConverse(converse, "anthropic.claude-3-5-haiku-20241022-v1:0")
    agent = ChatAgent(provider, client, CONVERSATION)
    results = play(agent, recorded["turns"])
    check_the_completed_claim(api, recorded["responses"], results, converse)


def check_the_completed_claim(
    api: LocalApi,
    responses: list[dict[str, Any]],
    results: list[Any],
    model: CompletionsStub | RecordedConverse,
) -> None:
    ids = recorded_ids(responses)
    fmt: Format = "openai" if isinstance(model, CompletionsStub) else "bedrock"
    # THEN every turn ended with the model's reply, after the recorded number of model calls
    assert [r.stopped for r in results] == ["reply"] * 4
    assert [r.reply for r in results] == replies(responses)
    assert [r.steps for r in results] == [3, 2, 3, 2]
    assert sum(r.input_tokens for r in results) == sum(
        (u.get("prompt_tokens") or u.get("inputTokens"))
        for u in (resp["usage"] for resp in responses)
    )
    assert all(r.backend_errors == () for r in results)
    # AND the claim is stored complete and submitted, with every answer
    instance = claim(api)
    assert (instance.state.status, instance.state.closed_reason) == ("completed", "submitted")
    assert answers(instance) == COMPLETED_ANSWERS
    # AND each call reached the API once, under the model's own id, and wrote under it
    assert api.ids_seen() == ids
    assert instance.field("full_name").revisions[0].tool_call_id == ids[2]
    assert [r.tool_call_id for r in instance.field("cost_centre").revisions] == [ids[4]]
    # AND the model was given each result exactly as the API answered it
    assert model.results_sent() == api.answers
    assert results[2].calls[0].result["rejected"][0]["field"] == "cost_centre"
    # AND the tools exactly as GET /tools serves them in the provider's shape, every call sent
    # back with that format
    assert all(model.tools(n) == tool_definitions(fmt) for n in range(len(responses)))
    assert call_queries(api) == [{"format": fmt}] * len(ids)
    # AND, before every model call, the status lines as they stood then
    systems = model.systems()
    assert len(systems) == len(responses) == status_reads(api)
    assert all(s.startswith(FORM_INSTRUCTIONS) for s in systems)
    assert "No form is open in this conversation." in systems[0]
    assert '[form: travel-claim] step 1/4 "Claimant" · pending: Full name, Staff ID' in systems[2]
    assert 'step 4/4 "Approval" · pending: Cost centre, Manager' in systems[4]
    assert systems[6].endswith('step 4/4 "Approval" · pending: Cost centre')
    assert "complete (still open for corrections)" in systems[7]
    assert "No form is open in this conversation." in systems[9]  # submitted: closed


def status_reads(api: LocalApi) -> int:
    return sum(1 for method, path, _ in api.seen if method == "GET" and path.endswith("/status"))


def call_queries(api: LocalApi) -> list[dict[str, str]]:
    """The query parameters of every tool call the API got, in order."""
    return [q for (method, _, _), q in zip(api.seen, api.queries, strict=True) if method == "POST"]


def tools_queries(api: LocalApi) -> list[dict[str, str]]:
    """The query parameters of every ``GET /tools`` the API got."""
    return [q for (_, path, _), q in zip(api.seen, api.queries, strict=True) if path == "/tools"]


def sent_arguments(responses: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The arguments of every recorded OpenAI tool call, decoded."""
    return [
        json.loads(c["function"]["arguments"])
        for r in responses
        for c in r["choices"][0]["message"].get("tool_calls") or []
    ]


def test_the_openai_sdk_in_strict_mode_fills_the_travel_claim_to_completion(
    api: LocalApi, client: Formwork
) -> None:
    recorded = recording("openai_strict_travel_claim")
    responses = recorded["responses"]
    with CompletionsStub(responses) as stub:
        sdk = openai.OpenAI(api_key="sk-test", base_url=stub.base_url, max_retries=0)
        provider = OpenAIChat(
            stub.base_url,
            "sk-test",
            "gpt-4.1-mini",
            post=openai_sdk_post(sdk),
            strict=["travel-claim"],
        )
        agent = ChatAgent(provider, client, CONVERSATION)
        # WHEN the person's four turns are played against a model in strict mode
        results = play(agent, recorded["turns"])
    # THEN every turn ended with the model's reply, and nothing failed
    assert [r.stopped for r in results] == ["reply"] * 4
    assert [r.reply for r in results] == replies(responses)
    assert [r.steps for r in results] == [3, 2, 2, 2]
    assert all(r.backend_errors == () for r in results)
    # AND the claim is stored complete and submitted, with every answer and nothing else
    instance = claim(api)
    assert (instance.state.status, instance.state.closed_reason) == ("completed", "submitted")
    assert answers(instance) == COMPLETED_ANSWERS
    assert instance.field("distance_km").revisions == ()  # sent as null on every call
    ids = recorded_ids(responses)
    assert api.ids_seen() == ids
    assert [r.tool_call_id for r in instance.field("cost_centre").revisions] == [ids[3]]
    # AND the model sent a null for every field it had no answer to, and none was refused,
    # because every call went with the strict format
    fills = [a for a in sent_arguments(responses) if "values" in a]
    assert all(a["values"]["distance_km"] is None for a in fills)
    assert all(
        done.result["ok"] and "rejected" not in done.result for r in results for done in r.calls
    )
    assert call_queries(api) == [{"format": "openai-strict"}] * len(ids)
    # AND the tools were read once, typed for the travel claim, and sent to the model as served
    assert tools_queries(api) == [{"format": "openai-strict", "forms": "travel-claim"}]
    strict = strict_definitions("openai-strict", [api.service.registry.latest("travel-claim")])
    assert all(stub.tools(n) == strict for n in range(len(responses)))
    assert all(t["function"]["strict"] is True for t in strict)
    assert stub.results_sent() == api.answers


def test_strict_mode_without_forms_types_the_tools_for_every_form_the_caller_can_start(
    api: LocalApi, client: Formwork
) -> None:
    sent: list[dict[str, Any]] = []

    def post(url: str, headers: Any, body: Any) -> dict[str, Any]:
        sent.append(dict(body))
        answer: dict[str, Any] = recording("openai_strict_travel_claim")["responses"][2]
        return answer  # a reply, no call

    provider = OpenAIChat("http://model.test/v1", "k", "m", post=post, strict=True)
    assert (provider.tool_format, provider.tool_forms) == ("openai-strict", None)
    ChatAgent(provider, client, CONVERSATION).run_turn([], "Hi")
    assert tools_queries(api) == [{"format": "openai-strict"}]
    forms = api.service.registry.forms("alice")
    assert sent[0]["tools"] == strict_definitions("openai-strict", forms)
    # one form id may be given as a string; an empty list names no form at all
    assert OpenAIChat("u", "k", "m", strict="travel-claim").tool_forms == ("travel-claim",)
    assert OpenAIChat("u", "k", "m").tool_format == "openai"
    with pytest.raises(ValueError, match="names no form"):
        OpenAIChat("u", "k", "m", strict=[])


# ------------------------------------------------------------------------------ the loop


def test_the_step_cap_stops_a_wandering_model(api: LocalApi, client: Formwork) -> None:
    wandering = recording("openai_wandering")["responses"]
    with CompletionsStub(wandering, repeat=True) as stub:
        sdk = openai.OpenAI(api_key="sk-test", base_url=stub.base_url, max_retries=0)
        provider = OpenAIChat(stub.base_url, "sk-test", "gpt-4.1-mini", post=openai_sdk_post(sdk))
        agent = ChatAgent(provider, client, CONVERSATION, max_steps=3)
        result = agent.run_turn([], "Hi, I want to claim for a trip.")
    # THEN three model calls, three reads, each under its own id though the server repeats one
    assert result.stopped == "step_cap" and result.steps == 3 and len(stub.requests) == 3
    first = recorded_ids(wandering)[0]
    assert api.ids_seen() == [first, f"{first}.2", f"{first}.3"]
    assert [c.result["error"] for c in result.calls] == ["unknown_form"] * 3


class Scripted:
    """A provider that answers the completions given, in order, and keeps each call's
    system prompt; ``during`` runs inside each call."""

    tool_format = "openai"

    def __init__(self, *completions: Completion, during: Any = None) -> None:
        self.completions = list(completions)
        self.systems: list[str] = []
        self.during = during

    def complete(self, system: str, transcript: Any, tools: Any) -> Completion:
        self.systems.append(system)
        if self.during is not None:
            self.during()
        return self.completions.pop(0)


def calls(*made: ToolCall) -> Completion:
    return Completion(made, "", Usage(100, 10, stop_reason="tool_calls"))


def reply(text: str) -> Completion:
    return Completion((), text, Usage(100, 10, stop_reason="stop"))


def test_a_call_the_api_refuses_is_data_for_the_model(api: LocalApi, client: Formwork) -> None:
    provider = Scripted(
        calls(ToolCall("form_update", {"form": "travel-claim"}, "call_u1")),
        reply("Sorry, let me try that differently."),
    )
    result = ChatAgent(provider, client, CONVERSATION).run_turn([], "Book it")
    (done,) = result.calls
    assert done.result["ok"] is False and done.result["error"] == "unknown_tool"
    assert "form_fill" in done.result["message"]  # the API lists the tools
    assert result.stopped == "reply" and result.backend_errors == ()


def test_an_api_that_fails_is_data_for_the_model_and_named_in_the_turn(
    api: LocalApi, client: Formwork
) -> None:
    # GIVEN an agent that has its tools, then an API that answers 503 to everything
    provider = Scripted(
        reply("Hello!"),
        calls(ToolCall("form_list", {}, "call_f1")),
        reply("I can't reach the forms right now."),
    )
    agent = ChatAgent(provider, client, CONVERSATION)
    first = agent.run_turn([], "Hi")
    api.always = 503
    # WHEN the model makes a call
    result = agent.run_turn(first.transcript, "What forms are there?")
    # THEN the call is answered backend_unavailable, sent under one id every attempt
    (done,) = result.calls
    assert done.result["error"] == "backend_unavailable" and "HTTP 503" in done.result["message"]
    assert api.ids_seen() == ["call_f1"] * QUICK.attempts
    # AND the prompt said the status could not be read, and the turn names both failures
    assert "could not be read just now" in provider.systems[-1]
    assert len(result.backend_errors) == 3  # status, the call, status again
    assert result.backend_errors[1].startswith("form_list (call_f1): ")


def test_tools_that_cannot_be_read_fail_the_turn_before_any_model_call(api: LocalApi) -> None:
    provider = Scripted(reply("never"))
    with Formwork(api.url, token="dev:alice", retry=QUICK) as client:
        api.always = 500
        with pytest.raises(TurnFailed, match="the tools could not be read") as failed:
            ChatAgent(provider, client, CONVERSATION).run_turn([], "Hi")
    assert provider.systems == []
    assert failed.value.partial.transcript == (UserText("Hi"),)


def test_stop_during_the_model_call_sends_no_call(api: LocalApi, client: Formwork) -> None:
    stop = threading.Event()
    provider = Scripted(
        calls(
            ToolCall("form_start", {"form": "travel-claim"}, "call_s1"),
            ToolCall("form_list", {}, "call_s2"),
        ),
        during=stop.set,
    )
    result = ChatAgent(provider, client, CONVERSATION).run_turn([], "Start a claim", abort=stop)
    assert result.stopped == "aborted"
    assert [c.result["error"] for c in result.calls] == ["cancelled", "cancelled"]
    assert all(c.cancelled for c in result.calls)
    assert api.ids_seen() == []  # nothing was sent
    assert api.service.store.list_conversation("alice", CONVERSATION) == []


def test_a_provider_without_a_tool_format_needs_one_named(client: Formwork) -> None:
    class Plain:
        def complete(self, system: str, transcript: Any, tools: Any) -> Completion:
            return reply("hi")

    with pytest.raises(ValueError, match="tool_format"):
        ChatAgent(Plain(), client, CONVERSATION)
    assert ChatAgent(Plain(), client, CONVERSATION, tool_format="bedrock").tool_format == (
        "bedrock"
    )


def test_the_prompt_carries_the_status_lines_or_says_why_not() -> None:
    lines = ['[form: travel-claim] step 2/4 "Trip" · pending: Destination']
    assert chat_prompt(lines).endswith(
        "Open forms in this conversation, as they stand now:\n[form: travel-claim] step 2/4 "
        '"Trip" · pending: Destination'
    )
    assert chat_prompt([]).endswith("No form is open in this conversation.")
    summarised = chat_prompt(lines, ["The person said: hi"], "Be brief.")
    assert summarised.startswith("Be brief.\n\nEarlier in this conversation")
    assert "could not be read just now (HTTP 503)" in chat_prompt([], problem="HTTP 503")


def test_served_tools_are_sent_as_served_and_read_for_other_shapes() -> None:
    bedrock = ServedTool.read("bedrock", tool_definitions("bedrock"))
    generic = tool_definitions("generic")
    # a provider of the served shape sends them as they are; another renders them again
    converse = RecordedConverse([{"output": {"message": {"content": []}}, "stopReason": "x"}])
    BedrockConverse(converse, "m").complete("s", [UserText("hi")], bedrock)
    assert converse.requests[0]["toolConfig"]["tools"] == tool_definitions("bedrock")
    chat = OpenAIChat("http://x.test/v1", "k", "m")
    assert chat.body("s", [], bedrock)["tools"] == tool_definitions("openai")
    assert [t.name for t in bedrock] == [t["name"] for t in generic]
    assert [t.input_schema() for t in bedrock] == [t["input_schema"] for t in generic]
    with pytest.raises(ValueError, match="not a tool definition"):
        ServedTool.read("openai", [{"type": "function"}])


# ------------------------------------------------------------------------------ the example


def test_the_example_chats_over_stdin_and_stdout(api: LocalApi) -> None:
    recorded = recording("openai_travel_claim")
    out = io.StringIO()
    with CompletionsStub(recorded["responses"]) as stub:
        args = example.parse(
            ["--model", "openai:gpt-4.1-mini", "--url", api.url, "--conversation", CONVERSATION]
        )
        environ = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": stub.base_url}
        code = example.run(args, iter([*recorded["turns"], ""]), out, environ)
    assert code == 0
    printed = out.getvalue()
    assert "model> Done: your travel claim has been submitted." in printed
    assert "Saved 1 (cost_centre)." in printed
    assert claim(api).state.status == "completed"
    # the stdlib transport sent the key; the SDK is not needed
    assert all(r["model"] == "gpt-4.1-mini" for r in stub.requests)


def test_the_example_runs_strict_mode_for_the_forms_named(api: LocalApi) -> None:
    recorded = recording("openai_strict_travel_claim")
    out = io.StringIO()
    with CompletionsStub(recorded["responses"]) as stub:
        model = ["--model", "openai:gpt-4.1-mini", "--strict", "travel-claim"]
        args = example.parse([*model, "--url", api.url, "--conversation", CONVERSATION])
        environ = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": stub.base_url}
        assert example.run(args, iter(recorded["turns"]), out, environ) == 0
    assert "model> Done: your travel claim has been submitted." in out.getvalue()
    assert claim(api).state.closed_reason == "submitted"
    assert tools_queries(api) == [{"format": "openai-strict", "forms": "travel-claim"}]


def test_a_model_that_is_not_named_right_is_refused() -> None:
    with pytest.raises(SystemExit, match="openai:<model> or bedrock:<model id>"):
        example.provider_for("gpt-4", {})
    with pytest.raises(SystemExit, match="use it with openai"):
        example.provider_for("bedrock:anthropic.claude", {}, strict="")
    every = example.provider_for("openai:m", {}, strict="")
    assert isinstance(every, OpenAIChat) and every.tool_format == "openai-strict"
    assert every.tool_forms is None


def test_the_lambda_handlers_import_neither_the_client_nor_the_chat_loop() -> None:
    probe = (
        "import sys, formwork.aws.api; "
        "print(sorted(m for m in sys.modules if m.startswith(('formwork.client', "
        "'formwork.agents', 'httpx', 'openai'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"
