"""The builder agent loop (``formwork.agents``), offline: recorded Bedrock Converse and OpenAI
chat-completions responses played against an in-memory ``BuilderService``.

A turn that adds, inspects and gates a field; "make this required" on the selection; the step
cap; Stop (every outstanding call answered cancelled, recorded, replayed the same); the system
prompt rebuilt mid-turn; compaction that never parts a result from its call; both vendors'
request shapes; truncated responses; odd tool-call ids; the HTTP backend over a fake
transport, its failures as data; a provider failure mid-turn.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import threading
import urllib.error
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from forms.app.builder import BUILDER_ARGUMENTS, CANCELLED, BuilderService
from forms.app.catalog import Catalog
from forms.documents import Selection
from forms.registry import FormRegistry
from forms.storage.documents import InMemoryFormDocumentStore
from forms.storage.drafts import InMemoryDraftStore
from forms.surface.formats import model_tools, tool_definitions
from forms.surface.tools import check_id
from formwork.agents import (
    BACKEND_UNAVAILABLE,
    DEFAULT_KEEP_MESSAGES,
    DEFAULT_MAX_STEPS,
    DEFAULT_MAX_TOKENS,
    AssistantTurn,
    Backend,
    BedrockConverse,
    BuilderAgent,
    CallResult,
    Entry,
    HttpBackend,
    OpenAIChat,
    Provider,
    ServiceBackend,
    ToolCall,
    ToolResults,
    TurnFailed,
    UserText,
    chat_messages,
    compact,
    converse_messages,
    dump_transcript,
    load_transcript,
    safe_call_id,
    system_prompt,
)
from formwork.agents.context import SUMMARY_LINES
from tests.support import T0, TickingClock, builder_for

ROOT = Path(__file__).resolve().parents[2]
RECORDINGS = ROOT / "tests" / "recordings" / "builder_agent"
ANA = "acme/ana"
FORM = "contact-us"
TOOLS = model_tools(BUILDER_ARGUMENTS)


def load(name: str) -> list[dict[str, Any]]:
    responses: list[dict[str, Any]] = json.loads(
        (RECORDINGS / f"{name}.json").read_text(encoding="utf-8")
    )["responses"]
    return responses


class RecordedConverse:
    """A stand-in for ``boto3.client("bedrock-runtime")``: ``converse`` answers the next
    recorded response and keeps a copy of each request; ``during`` runs inside each call."""

    def __init__(self, responses: list[dict[str, Any]], during: Callable[[], None] = lambda: None):
        self.responses = list(responses)
        self.requests: list[dict[str, Any]] = []
        self.during = during

    def converse(self, **request: Any) -> dict[str, Any]:
        self.requests.append(json.loads(json.dumps(request)))
        self.during()
        if not self.responses:
            raise RuntimeError("no recorded response left")
        return self.responses.pop(0)

    def systems(self) -> list[str]:
        return [str(r["system"][0]["text"]) for r in self.requests]

    def messages(self, n: int) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = self.requests[n]["messages"]
        return messages


class RecordedPost:
    """A stand-in for ``OpenAIChat``'s POST, like ``RecordedConverse``."""

    def __init__(self, responses: list[dict[str, Any]], during: Callable[[], None] = lambda: None):
        self.responses = list(responses)
        self.requests: list[dict[str, Any]] = []
        self.during = during

    def __call__(
        self, url: str, headers: Mapping[str, str], body: Mapping[str, Any]
    ) -> dict[str, Any]:
        self.requests.append(
            {"url": url, "headers": dict(headers), "body": json.loads(json.dumps(body))}
        )
        self.during()
        if not self.responses:
            raise RuntimeError("no recorded response left")
        return self.responses.pop(0)

    def systems(self) -> list[str]:
        return [str(r["body"]["messages"][0]["content"]) for r in self.requests]

    def messages(self, n: int) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = self.requests[n]["body"]["messages"][1:]
        return messages


Recorded = RecordedConverse | RecordedPost


def bedrock(name: str, during: Callable[[], None] = lambda: None) -> tuple[Provider, Recorded]:
    client = RecordedConverse(load(f"bedrock_{name}"), during)
    return BedrockConverse(client, "anthropic.claude-3-5-haiku-20241022-v1:0"), client


def openai(name: str, during: Callable[[], None] = lambda: None) -> tuple[Provider, Recorded]:
    post = RecordedPost(load(f"openai_{name}"), during)
    return OpenAIChat("https://llm.example.test/v1", "sk-test", "gpt-4.1-mini", post=post), post


PROVIDERS = pytest.mark.parametrize("make", [bedrock, openai], ids=["bedrock", "openai"])


def new_service() -> BuilderService:
    catalog = Catalog(FormRegistry([]), InMemoryFormDocumentStore(), timer=lambda: 0.0)
    return builder_for(InMemoryDraftStore(), catalog, clock=TickingClock(T0))


@pytest.fixture
def service() -> BuilderService:
    """A contact form: an optional Email and a "Call me back" checkbox, in step Contact."""
    builder = new_service()
    made = builder.call(
        ANA,
        FORM,
        "create_form",
        "setup-1",
        {
            "title": "Contact us",
            "steps": [
                {
                    "title": "Contact",
                    "items": [
                        {"kind": "email", "label": "Email", "required": False},
                        {"kind": "boolean", "label": "Call me back"},
                    ],
                }
            ],
        },
    )
    assert made["ok"], made
    return builder


def items(service: BuilderService) -> dict[str, dict[str, Any]]:
    document = service.draft(ANA, FORM).document
    dumped = document.model_dump(mode="json", exclude_none=True)
    return {item["id"]: item for step in dumped["steps"] for item in step["items"]}


def version(service: BuilderService) -> int:
    return service.draft(ANA, FORM).draft.version


# ---------------------------------------------------------------- request validity


def assert_valid_converse(messages: Sequence[Mapping[str, Any]]) -> None:
    """Bedrock's rules: user first, roles alternate, every toolUse answered by a toolResult
    in the next message and every toolResult answering one in the message before."""
    assert messages and messages[0]["role"] == "user"
    assert all(a["role"] != b["role"] for a, b in itertools.pairwise(messages))
    for i, message in enumerate(messages):
        uses = [b["toolUse"]["toolUseId"] for b in message["content"] if "toolUse" in b]
        answers = [b["toolResult"]["toolUseId"] for b in message["content"] if "toolResult" in b]
        if uses:
            following = messages[i + 1]["content"]
            assert [b["toolResult"]["toolUseId"] for b in following[: len(uses)]] == uses
        if answers:
            before = messages[i - 1]["content"]
            assert answers == [b["toolUse"]["toolUseId"] for b in before if "toolUse" in b]
        assert all(b.get("text", "x").strip() for b in message["content"])


def assert_valid_chat(messages: Sequence[Mapping[str, Any]]) -> None:
    """Chat completions' rules: the ``tool`` messages right after an assistant's tool calls
    answer exactly those calls, in order."""
    pending: list[str] = []
    for message in messages:
        if message["role"] == "tool":
            assert pending and message["tool_call_id"] == pending.pop(0)
            continue
        assert pending == [], "a tool call without its result"
        if message["role"] == "assistant":
            pending = [c["id"] for c in message.get("tool_calls", [])]
            for call in message.get("tool_calls", []):
                assert isinstance(json.loads(call["function"]["arguments"]), dict)
    assert pending == []


def assert_valid(recorded: Recorded, n: int) -> None:
    if isinstance(recorded, RecordedConverse):
        assert_valid_converse(recorded.messages(n))
    else:
        assert_valid_chat(recorded.messages(n))


# ---------------------------------------------------------------- a turn


@PROVIDERS
def test_a_turn_adds_a_field_inspects_it_and_gates_it_on_its_new_id(
    make: Callable[..., tuple[Provider, Recorded]], service: BuilderService
) -> None:
    # GIVEN a model that adds a field, reads it back and sets a rule on its new id
    provider, recorded = make("add_inspect_gate")
    agent = BuilderAgent(provider, ServiceBackend(service, ANA, FORM))
    # WHEN the person asks for it
    turn = agent.run_turn([], "Add a phone number, only if they want a call back.")
    # THEN the draft ends right: the phone field, shown only when call_me_back is true
    phone = items(service)["phone"]
    assert phone["kind"] == "phone"
    assert phone["when"] == {"field": "call_me_back", "op": "equals", "value": True}
    # AND the turn lists each call with its result, four model calls, and the reply
    assert [c.call.name for c in turn.calls] == [
        "add_field",
        "inspect_form",
        "set_conditional_logic",
    ]
    assert all(c.ok and not c.cancelled for c in turn.calls)
    assert turn.calls[1].result["step"] == "contact"
    assert (turn.steps, turn.stopped, len(turn.usage)) == (4, "reply", 4)
    assert "Phone" in turn.reply and turn.input_tokens > 0 and turn.output_tokens > 0
    # AND each call went to the service under the provider's tool-use id
    logged = [line.call_id for line in service.draft(ANA, FORM).log]
    assert logged == ["setup-1", turn.calls[0].call.id, turn.calls[2].call.id]
    assert all(check_id(c.call.id, "id") for c in turn.calls)
    # AND the transcript is the user text, then a turn and its results per call, then the reply
    kinds = [type(e).__name__ for e in turn.transcript]
    assert kinds == ["UserText"] + ["AssistantTurn", "ToolResults"] * 3 + ["AssistantTurn"]
    for n in range(4):
        assert_valid(recorded, n)


@PROVIDERS
def test_the_system_prompt_carries_the_live_draft_and_changes_after_an_edit(
    make: Callable[..., tuple[Provider, Recorded]], service: BuilderService
) -> None:
    provider, recorded = make("add_inspect_gate")
    BuilderAgent(provider, ServiceBackend(service, ANA, FORM)).run_turn([], "Add a phone.")
    first, second, _, fourth = recorded.systems()
    # the instructions: a product assistant that never pastes JSON and builds in small calls
    assert "never paste" in first and "create_form only when the canvas is empty" in first
    # the snapshot of the draft as it is before each model call, and the selection line
    assert 'Form "Contact us" (id contact-us)' in first
    assert 'call_me_back: boolean "Call me back"' in first and "phone:" not in first
    assert first.endswith("Nothing is selected.")
    assert 'phone: phone "Phone"' in second and "when call_me_back" not in second
    assert 'phone: phone "Phone" when call_me_back equals true' in fourth


def test_a_selection_the_draft_no_longer_has_is_said_so(service: BuilderService) -> None:
    document = service.draft(ANA, FORM).document
    prompt = system_prompt(document, Selection(field="fax"))
    assert prompt.endswith('The selected field "fax" is not in the form any more.')
    assert system_prompt(None, None).endswith(
        "The canvas is empty: there is no form yet.\n\nNothing is selected."
    )
    assert 'Selected step "contact": "Contact"' in system_prompt(
        document, Selection(step="contact")
    )


@PROVIDERS
def test_make_this_required_updates_the_selected_field(
    make: Callable[..., tuple[Provider, Recorded]], service: BuilderService
) -> None:
    # GIVEN the editor has the optional Email field selected
    assert items(service)["email"]["required"] is False
    provider, recorded = make("make_required")
    agent = BuilderAgent(provider, ServiceBackend(service, ANA, FORM), new_chat_id=lambda: "c-1")
    # WHEN the person says "make this required"
    turn = agent.run_turn([], "Make this required.", selection={"field": "email"})
    # THEN the model sent no field, the selection went with the call, and Email is required
    assert turn.calls[0].call.args == {"updates": {"required": True}}
    assert items(service)["email"]["required"] is True
    assert turn.calls[0].result["summary"] == 'Updated field "email": required.'
    # AND the model was told what "this" is
    assert 'Selected field "email": "Email" (email) in step "Contact"' in recorded.systems()[0]
    assert turn.reply == "Email is required now."
    # AND a replay of the call in its chat (same id, same selection) applies nothing more
    call = turn.calls[0].call
    again = service.call(
        ANA, FORM, call.name, call.id, call.args, selection={"field": "email"}, chat="c-1.1"
    )
    assert again == {**turn.calls[0].result, "replayed": True}


# ---------------------------------------------------------------- both vendors' shapes


def test_bedrock_requests_are_in_the_converse_shape(service: BuilderService) -> None:
    provider, client = bedrock("add_inspect_gate")
    BuilderAgent(provider, ServiceBackend(service, ANA, FORM)).run_turn([], "Add a phone.")
    assert isinstance(client, RecordedConverse)
    first, second = client.requests[0], client.requests[1]
    assert set(first) == {"modelId", "system", "messages", "toolConfig", "inferenceConfig"}
    assert first["toolConfig"]["tools"] == tool_definitions("bedrock", TOOLS)
    assert first["inferenceConfig"] == {"maxTokens": DEFAULT_MAX_TOKENS}
    assert first["messages"] == [{"role": "user", "content": [{"text": "Add a phone."}]}]
    user, assistant, results = second["messages"]
    assert user == first["messages"][0]
    assert assistant == {
        "role": "assistant",
        "content": [
            {"text": "I'll add a Phone field to the Contact step first."},
            {
                "toolUse": {
                    "toolUseId": "tooluse_Xq3LbR7mT0uY2sWkP9aZ1c",
                    "name": "add_field",
                    "input": {"field": {"kind": "phone", "label": "Phone"}},
                }
            },
        ],
    }
    (block,) = results["content"]
    assert block["toolResult"]["toolUseId"] == "tooluse_Xq3LbR7mT0uY2sWkP9aZ1c"
    assert block["toolResult"]["status"] == "success"
    assert block["toolResult"]["content"][0]["json"]["summary"].startswith('Added field "phone"')


def test_openai_requests_are_in_the_chat_completions_shape(service: BuilderService) -> None:
    post = RecordedPost(load("openai_add_inspect_gate"))
    provider = OpenAIChat(
        "https://llm.example.test/v1/",
        "sk-test",
        "m",
        post=post,
        max_tokens_param="max_completion_tokens",
    )
    BuilderAgent(provider, ServiceBackend(service, ANA, FORM)).run_turn([], "Add a phone.")
    first, second = post.requests[0], post.requests[1]
    assert first["url"] == "https://llm.example.test/v1/chat/completions"
    assert first["headers"]["Authorization"] == "Bearer sk-test"
    body = first["body"]
    assert set(body) == {"model", "messages", "tools", "max_completion_tokens"}
    assert body["tools"] == tool_definitions("openai", TOOLS)
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    system, user, assistant, tool = second["body"]["messages"]
    assert (system["role"], user) == ("system", {"role": "user", "content": "Add a phone."})
    assert assistant == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_kT8d2VxQmB4nLz0wRy6pHs1J",
                "type": "function",
                "function": {
                    "name": "add_field",
                    "arguments": json.dumps({"field": {"kind": "phone", "label": "Phone"}}),
                },
            }
        ],
    }
    assert tool["role"] == "tool" and tool["tool_call_id"] == "call_kT8d2VxQmB4nLz0wRy6pHs1J"
    assert json.loads(tool["content"])["ok"] is True


def test_a_refused_call_is_a_bedrock_tool_result_with_status_error() -> None:
    transcript: list[Entry] = [
        UserText("Delete the only step."),
        AssistantTurn("", (ToolCall("delete_step", {}, "t1"),)),
        ToolResults((CallResult("t1", {"ok": False, "error": "only_step", "message": "No."}),)),
    ]
    (_, _, results) = converse_messages(transcript)
    assert results["content"][0]["toolResult"]["status"] == "error"


def test_unparseable_openai_arguments_are_kept_and_refused_as_data(
    service: BuilderService,
) -> None:
    response = json.loads(json.dumps(load("openai_make_required")[0]))
    response["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = '{"updates": '
    post = RecordedPost([response, load("openai_make_required")[1]])
    agent = BuilderAgent(
        OpenAIChat("https://x.test", "k", "m", post=post), ServiceBackend(service, ANA, FORM)
    )
    before = version(service)
    turn = agent.run_turn([], "Make this required.", selection={"field": "email"})
    # THEN the call is kept as the model sent it, and answered that its arguments were not
    # valid JSON, saying where, as data; nothing reached the draft
    assert turn.calls[0].call.args == {"unparsed_arguments": '{"updates": '}
    assert turn.calls[0].result == {
        "ok": False,
        "error": "bad_request",
        "message": "The arguments of update_field were not valid JSON: Expecting value at "
        "line 1, column 13 (character 13).",
        "hint": "Send the call again with the arguments of update_field as one JSON object.",
        "at": {"line": 1, "column": 13, "character": 13},
    }
    assert items(service)["email"]["required"] is False and version(service) == before
    assert_valid_chat(post.messages(1))


@pytest.mark.parametrize(
    ("sent", "kind"), [("[1, 2]", "an array"), ('"email"', "a string"), ("null", "null")]
)
def test_arguments_that_are_json_but_not_an_object_say_so(
    service: BuilderService, sent: str, kind: str
) -> None:
    response = json.loads(json.dumps(load("openai_make_required")[0]))
    response["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = sent
    post = RecordedPost([response, load("openai_make_required")[1]])
    agent = BuilderAgent(
        OpenAIChat("https://x.test", "k", "m", post=post), ServiceBackend(service, ANA, FORM)
    )
    turn = agent.run_turn([], "Make this required.", selection={"field": "email"})
    result = turn.calls[0].result
    assert (result["error"], result["message"]) == (
        "bad_request",
        f"The arguments of update_field must be a JSON object, not {kind}.",
    )


def test_an_unknown_tool_is_answered_with_every_tool_the_model_was_given(
    service: BuilderService,
) -> None:
    # GIVEN a model that calls a tool by a name it half remembers
    post = numbering([("inspect", {}), ("redo", {})], "Done.")
    agent = BuilderAgent(local_model(post), ServiceBackend(service, ANA, FORM))
    # WHEN the turn runs in process
    turn = agent.run_turn([], "Look at the form.")
    # THEN the hint names every tool of its tool list, and the likeliest one
    names = [tool.name for tool in agent.tools]
    assert len(names) == len(BUILDER_ARGUMENTS) and "undo_edit" in names
    first, second = (c.result for c in turn.calls)
    assert (first["error"], first["did_you_mean"], second["did_you_mean"]) == (
        "unknown_tool",
        ["inspect_form"],
        ["redo_edit"],
    )
    assert first["hint"] == "The tools are: " + ", ".join(names) + "."


# ---------------------------------------------------------------- the step cap


def wandering(times: int) -> list[dict[str, Any]]:
    """The wandering step ``times`` over, each under its own toolUseId."""
    (step,) = load("bedrock_wandering")
    played = []
    for n in range(times):
        response = json.loads(json.dumps(step))
        response["output"]["message"]["content"][1]["toolUse"]["toolUseId"] = f"tooluse_wander_{n}"
        played.append(response)
    return played


def test_the_step_cap_stops_a_wandering_model_at_twelve_model_calls(
    service: BuilderService,
) -> None:
    # GIVEN a model that would keep calling tools for ever
    client = RecordedConverse(wandering(20))
    agent = BuilderAgent(BedrockConverse(client, "m"), ServiceBackend(service, ANA, FORM))
    assert agent.max_steps == DEFAULT_MAX_STEPS == 12
    # WHEN a turn runs
    turn = agent.run_turn([], "Check the form.")
    # THEN it stops after twelve model calls, every call of them answered
    assert (turn.stopped, turn.steps, len(client.requests)) == ("step_cap", 12, 12)
    assert len(turn.calls) == 12 and all(c.ok for c in turn.calls)
    assert isinstance(turn.transcript[-1], ToolResults)
    assert_valid_converse(converse_messages(turn.transcript))


def test_the_turn_after_the_step_cap_is_told_and_sees_the_capped_results(
    service: BuilderService,
) -> None:
    # GIVEN a turn stopped at the step cap, its last call an inspect_form
    client = RecordedConverse([*wandering(12), *load("bedrock_make_required")[1:]])
    agent = BuilderAgent(BedrockConverse(client, "m"), ServiceBackend(service, ANA, FORM))
    capped = agent.run_turn([], "Check the form.")
    assert capped.stopped == "step_cap"
    read = capped.calls[-1].result
    assert read["ok"] is True and "form" in read
    # WHEN the person's next message is sent
    after = agent.run_turn(capped.transcript, "Go on.")
    # THEN the model is told its previous turn was stopped at the cap
    system = client.systems()[12]
    assert "stopped at the step cap (12 model calls) before you replied" in system
    # AND the capped turn's request, last call and its result are sent as they were
    messages = client.messages(12)
    assert_valid_converse(messages)
    assert messages[0]["content"] == [{"text": "Check the form."}]
    (use,) = [b["toolUse"] for b in messages[1]["content"] if "toolUse" in b]
    assert use["toolUseId"] == capped.calls[-1].call.id
    answer = messages[2]["content"][0]["toolResult"]
    assert answer["toolUseId"] == use["toolUseId"] and answer["content"] == [{"json": read}]
    assert messages[2]["content"][1:] == [{"text": "Go on."}]
    # AND the turn after that one is not told again
    client.responses.append(load("bedrock_make_required")[1])
    agent.run_turn(after.transcript, "Thanks.")
    assert "step cap" not in client.systems()[-1]


def test_the_step_cap_is_configurable(service: BuilderService) -> None:
    client = RecordedConverse(wandering(5))
    agent = BuilderAgent(
        BedrockConverse(client, "m"), ServiceBackend(service, ANA, FORM), max_steps=3
    )
    turn = agent.run_turn([], "Check the form.")
    assert (turn.stopped, turn.steps, len(client.requests)) == ("step_cap", 3, 3)
    with pytest.raises(ValueError):
        BuilderAgent(BedrockConverse(client, "m"), ServiceBackend(service, ANA, FORM), max_steps=0)


# ---------------------------------------------------------------- Stop


@PROVIDERS
def test_stop_while_the_model_answers_cancels_every_call_and_applies_nothing(
    make: Callable[..., tuple[Provider, Recorded]], service: BuilderService
) -> None:
    # GIVEN the person presses Stop while the model's three calls are on their way
    stop = threading.Event()
    provider, recorded = make("three_fields", stop.set)
    agent = BuilderAgent(provider, ServiceBackend(service, ANA, FORM), new_chat_id=lambda: "c-1")
    before = version(service)
    # WHEN the turn runs
    turn = agent.run_turn([], "Add company, phone and website.", abort=stop)
    # THEN every call was answered cancelled, nothing was applied, and the turn ended
    assert turn.stopped == "aborted" and turn.steps == 1
    assert [c.cancelled for c in turn.calls] == [True, True, True]
    assert [c.result for c in turn.calls] == [CANCELLED] * 3
    assert version(service) == before and set(items(service)) == {"email", "call_me_back"}
    # AND each id is recorded: a replay of it (a resumed stream) gets the cancelled answer
    for done in turn.calls:
        call = done.call
        replayed = service.call(ANA, FORM, call.name, call.id, call.args, chat="c-1.1")
        assert replayed == {**CANCELLED, "replayed": True}
    assert version(service) == before
    # AND the next turn's request is valid: every call has its result
    after = agent.run_turn(turn.transcript, "Sorry, go on.", abort=threading.Event())
    assert after.stopped == "reply" and after.reply.startswith("Understood")
    assert_valid(recorded, 1)
    assert len(recorded.requests) == 2


def test_stop_after_the_first_call_cancels_only_the_ones_not_yet_run(
    service: BuilderService,
) -> None:
    stop = threading.Event()

    class StopAfterFirst:
        """The service, with Stop pressed once the first call has been applied."""

        def __init__(self, inner: Backend) -> None:
            self.inner = inner

        def call(self, *args: Any) -> dict[str, Any]:
            result = self.inner.call(*args)
            stop.set()
            return result

        def document(self) -> Any:
            return self.inner.document()

    provider, _ = bedrock("three_fields")
    agent = BuilderAgent(provider, StopAfterFirst(ServiceBackend(service, ANA, FORM)))
    turn = agent.run_turn([], "Add company, phone and website.", abort=stop)
    assert [c.cancelled for c in turn.calls] == [False, True, True]
    assert turn.calls[0].ok and [c.result["error"] for c in turn.calls[1:]] == ["cancelled"] * 2
    assert set(items(service)) == {"email", "call_me_back", "company"}
    assert_valid_converse(converse_messages(turn.transcript))


def test_stop_before_the_turn_starts_calls_no_model(service: BuilderService) -> None:
    stop = threading.Event()
    stop.set()
    provider, recorded = bedrock("three_fields")
    turn = BuilderAgent(provider, ServiceBackend(service, ANA, FORM)).run_turn(
        [], "Add company.", abort=stop
    )
    assert (turn.stopped, turn.steps, turn.calls, recorded.requests) == ("aborted", 0, (), [])
    assert turn.transcript == (UserText("Add company."),)


# ---------------------------------------------------------------- truncated


@PROVIDERS
def test_a_truncated_response_makes_no_call(
    make: Callable[..., tuple[Provider, Recorded]], service: BuilderService
) -> None:
    # GIVEN a response cut off by the output limit in the middle of a create_form call
    provider, _ = make("truncated_call")
    before = version(service)
    # WHEN the turn runs
    turn = BuilderAgent(provider, ServiceBackend(service, ANA, FORM)).run_turn([], "Build it all.")
    # THEN nothing was called, the turn says why it ended, and usage counts the cut-off output
    assert (turn.stopped, turn.steps, turn.calls) == ("truncated", 1, ())
    assert turn.usage[0].truncated and turn.output_tokens == 8192
    assert version(service) == before
    assert all(not isinstance(e, ToolResults) for e in turn.transcript)
    assert not any(isinstance(e, AssistantTurn) and e.calls for e in turn.transcript)


# ---------------------------------------------------------------- tool-call ids


def test_ids_an_openai_compatible_server_sends_are_mapped_to_valid_unique_ids(
    service: BuilderService,
) -> None:
    # GIVEN a server whose ids carry a space and a slash, are missing, or repeat
    post = RecordedPost(load("openai_compatible_ids"))
    minted = iter(["minted-1", "minted-2"])
    provider = OpenAIChat(
        "http://localhost:8080/v1", "k", "local", post=post, new_id=lambda: next(minted)
    )
    # WHEN a turn runs
    turn = BuilderAgent(provider, ServiceBackend(service, ANA, FORM)).run_turn([], "Add them.")
    # THEN every id is valid: mapped deterministically, minted when missing, and a later
    # response's "call_0" is sent as the model sent it, in a chat of its own
    ids = [c.call.id for c in turn.calls]
    assert ids == [safe_call_id("call 0/add"), "minted-1", "call_0", "call_0"]
    assert ids[0] == safe_call_id("call 0/add") != "call 0/add" and check_id(ids[0], "id")
    # AND so every call applied (a reused id would have replayed the first call's answer)
    assert all(c.ok for c in turn.calls), [c.result for c in turn.calls]
    assert items(service)["website"]["label"] == "Company website"
    assert {"company", "website", "phone"} <= set(items(service))
    # AND the next requests carry the same ids on both sides
    assert_valid_chat(post.messages(3))
    sent = [m["tool_call_id"] for m in post.messages(3) if m["role"] == "tool"]
    assert sent == ids


def numbering(*responses: list[tuple[str, dict[str, Any]]] | str) -> RecordedPost:
    """A server that numbers its tool calls ``call_0``, ``call_1``, ... in every response
    (as some local servers do): each response is a list of (tool, arguments), or a reply."""
    answers: list[dict[str, Any]] = []
    for response in responses:
        if isinstance(response, str):
            message: dict[str, Any] = {"role": "assistant", "content": response}
        else:
            calls = [
                {
                    "id": f"call_{n}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
                for n, (name, args) in enumerate(response)
            ]
            message = {"role": "assistant", "content": "", "tool_calls": calls}
        answers.append({"choices": [{"message": message, "finish_reason": "stop"}]})
    return RecordedPost(answers)


def local_model(post: RecordedPost) -> OpenAIChat:
    return OpenAIChat("http://localhost:8080/v1", "k", "local", post=post)


PHONE = {"field": {"kind": "phone", "label": "Phone"}}
SITE = {"field": {"kind": "url", "label": "Website"}}


@pytest.mark.parametrize("over", ["service", "http"])
def test_a_second_chat_on_a_draft_applies_calls_its_server_numbers_like_the_first(
    service: BuilderService, over: str
) -> None:
    # GIVEN a first chat on the draft whose server numbered its calls call_0, call_1
    def backend() -> Backend:
        if over == "service":
            return ServiceBackend(service, ANA, FORM)
        return HttpBackend("https://api.example.test", TOKEN, FORM, send=FakeBuilderApi(service))

    first = BuilderAgent(local_model(numbering([("add_field", PHONE)], "Added Phone.")), backend())
    assert first.run_turn([], "Add a phone field.").calls[0].ok
    # WHEN a second chat (another agent, a new transcript) sends call_0 with the same input,
    # then call_0 and call_1 with other input
    post = numbering(
        [("add_field", PHONE)], [("add_field", SITE), ("delete_field", {"field": "phone"})], "Ok."
    )
    turn = BuilderAgent(local_model(post), backend()).run_turn([], "Phone again, and a site.")
    # THEN every call applied: none was answered with the first chat's result
    results = [c.result for c in turn.calls]
    assert [r.get("ok") for r in results] == [True, True, True], results
    assert not any("replayed" in r for r in results)
    assert results[0]["summary"] == 'Added field "phone_2" (phone) to step "Contact".'
    assert set(items(service)) == {"email", "call_me_back", "phone_2", "website"}
    # AND the backend got each id as the model sent it
    assert [c.call.id for c in turn.calls] == ["call_0", "call_0", "call_1"]
    assert_valid_chat(post.messages(2))


def test_one_agent_starting_a_new_chat_does_not_replay_the_last_one(
    service: BuilderService,
) -> None:
    # GIVEN one agent, kept by a chat backend for every chat of the draft
    post = numbering([("add_field", PHONE)], "Added.", [("add_field", PHONE)], "Added again.")
    agent = BuilderAgent(local_model(post), ServiceBackend(service, ANA, FORM))
    agent.run_turn([], "Add a phone field.")
    # WHEN a new chat (an empty transcript) makes the same call under the same id
    again = agent.run_turn([], "Add a phone field.")
    # THEN it applied
    assert again.calls[0].result["summary"] == 'Added field "phone_2" (phone) to step "Contact".'


def test_a_call_sent_again_in_its_own_chat_is_still_a_replay(service: BuilderService) -> None:
    # GIVEN a turn whose add_field went out as call_0, in the chat the agent drew
    backend = ServiceBackend(service, ANA, FORM)
    post = numbering([("add_field", PHONE)], "Added.")
    turn = BuilderAgent(local_model(post), backend, new_chat_id=lambda: "chat-7").run_turn(
        [], "Add a phone field."
    )
    before = version(service)
    # WHEN the same call reaches the backend again in that chat (a resumed stream)
    call = turn.calls[0].call
    replayed = backend.call(call.name, call.id, call.args, None, False, "chat-7.1")
    # THEN it gets the first result and applies nothing; in another chat, it is a new call
    assert replayed == {**turn.calls[0].result, "replayed": True}
    assert version(service) == before
    assert backend.call(call.name, call.id, call.args, None, False, "chat-8.1")["ok"]
    assert version(service) == before + 1


# ---------------------------------------------------------------- compaction


def history(turns: int) -> list[Entry]:
    """``turns`` earlier turns: a request, a call, its result, a reply. The second turn's
    call was refused and the third's cancelled."""
    entries: list[Entry] = []
    for n in range(1, turns + 1):
        result: dict[str, Any] = {"ok": True, "summary": f'Added field "f{n}" (short_text).'}
        if n == 2:
            result = {"ok": False, "error": "not_found", "message": "There is no step 'x'."}
        if n == 3:
            result = dict(CANCELLED)
        entries += [
            UserText(f"Request {n}: add field f{n}."),
            AssistantTurn("", (ToolCall("add_field", {"field": {"kind": "short_text"}}, f"h{n}"),)),
            ToolResults((CallResult(f"h{n}", result),)),
            AssistantTurn(f"Reply {n}."),
        ]
    return entries


def test_compaction_keeps_the_last_n_and_summarises_the_rest() -> None:
    transcript = history(5)  # 20 entries, a UserText every 4
    window = compact(transcript, keep=6)
    # the kept window is the last 6 at most, from the first UserText among them
    assert window.kept == tuple(transcript[16:])
    assert window.summary == (
        "The person said: Request 1: add field f1.",
        'Applied (add_field): Added field "f1" (short_text).',
        "You replied: Reply 1.",
        "The person said: Request 2: add field f2.",
        "Refused (add_field, not_found): There is no step 'x'.",
        "You replied: Reply 2.",
        "The person said: Request 3: add field f3.",
        "Cancelled (add_field): nothing was applied.",
        "You replied: Reply 3.",
        "The person said: Request 4: add field f4.",
        'Applied (add_field): Added field "f4" (short_text).',
        "You replied: Reply 4.",
    )
    assert DEFAULT_KEEP_MESSAGES == 12 and compact(transcript).kept == tuple(transcript[8:])


def test_compaction_never_parts_a_result_from_its_call() -> None:
    transcript = history(6)
    for keep in range(1, len(transcript) + 2):
        kept = compact(transcript, keep).kept
        # THEN the window starts with something the person said, and both vendors accept it
        assert isinstance(kept[0], UserText), keep
        assert_valid_converse(converse_messages(kept))
        assert_valid_chat(chat_messages(kept))


def test_a_turn_longer_than_the_window_is_kept_whole() -> None:
    long_turn: list[Entry] = [UserText("Do a lot.")]
    for n in range(8):
        long_turn += [
            AssistantTurn("", (ToolCall("inspect_form", {}, f"r{n}"),)),
            ToolResults((CallResult(f"r{n}", {"ok": True}),)),
        ]
    window = compact([*history(2), *long_turn], keep=4)
    assert window.kept == tuple(long_turn)
    assert window.summary[0] == "The person said: Request 1: add field f1."


def test_the_summary_is_bounded() -> None:
    summary = compact(history(40), keep=4).summary
    assert len(summary) == SUMMARY_LINES + 1
    assert summary[0] == f"({39 * 3 - SUMMARY_LINES} earlier lines left out)"
    assert summary[-1] == "You replied: Reply 39."


@PROVIDERS
def test_a_turn_sends_the_kept_window_and_the_summary_in_the_system_prompt(
    make: Callable[..., tuple[Provider, Recorded]], service: BuilderService
) -> None:
    # GIVEN five earlier turns and a window of six messages
    provider, recorded = make("make_required")
    agent = BuilderAgent(provider, ServiceBackend(service, ANA, FORM), keep_messages=6)
    # WHEN a turn runs
    turn = agent.run_turn(history(5), "Make this required.", selection={"field": "email"})
    # THEN the first request carries the fifth turn and the new text, the rest summarised
    assert turn.stopped == "reply" and len(turn.transcript) == 20 + 1 + 3
    system = recorded.systems()[0]
    assert "Earlier in this conversation" in system
    assert "- The person said: Request 4: add field f4." in system
    assert "Request 5" not in system and "Cancelled (add_field)" in system
    texts = json.dumps(recorded.messages(0))
    assert "Request 5" in texts and "Request 4" not in texts
    assert_valid(recorded, 0)
    assert_valid(recorded, 1)


# ---------------------------------------------------------------- the transcript as JSON


def test_a_transcript_round_trips_through_json(service: BuilderService) -> None:
    provider, _ = bedrock("add_inspect_gate")
    turn = BuilderAgent(provider, ServiceBackend(service, ANA, FORM)).run_turn([], "Add a phone.")
    stored = json.loads(json.dumps(dump_transcript(turn.transcript)))
    assert tuple(load_transcript(stored)) == turn.transcript
    with pytest.raises(ValueError):
        load_transcript([{"system": "x"}])


# ---------------------------------------------------------------- the HTTP backend

TOKEN = "dev:acme:ana"


class FakeBuilderApi:
    """The builder routes over an in-memory service, as a ``send`` function: the bearer token
    ``dev:acme:ana`` is the principal ``acme/ana``; each request is kept. ``fail`` answers
    instead of the service: an HTTP status, or an exception to raise."""

    def __init__(self, service: BuilderService) -> None:
        self.service = service
        self.requests: list[dict[str, Any]] = []
        self.fail: dict[str, int | OSError] = {}

    def __call__(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes | None
    ) -> tuple[int, bytes]:
        sent = json.loads(body) if body else None
        self.requests.append({"method": method, "url": url, "headers": dict(headers), "body": sent})
        failure = self.fail.get(method)
        if isinstance(failure, OSError):
            raise failure
        if failure is not None:
            return failure, b'{"message":"Service Unavailable"}'
        if headers.get("Authorization") != f"Bearer {TOKEN}":
            return 401, b'{"error":"unauthorized","message":"no token"}'
        parts = urlsplit(url).path.split("/")  # /builder/forms/<form>[/tools/<tool>]
        form = parts[3]
        if method == "GET":
            try:
                view = self.service.draft(ANA, form)
            except Exception:
                return 404, b'{"error":"not_found","message":"no draft"}'
            return 200, json.dumps(view.as_json()).encode()
        from formwork.aws.models import BuilderCallRequest

        request = BuilderCallRequest.model_validate(sent)
        tool = parts[5]
        if tool not in BUILDER_ARGUMENTS:
            return 404, b'{"error":"unknown_tool","message":"there is no such builder tool"}'
        selection = request.selection.model_dump(exclude_none=True) if request.selection else None
        result = self.service.call(
            ANA,
            form,
            tool,
            request.tool_call_id,
            request.input or {},
            selection=selection or None,
            cancelled=request.cancelled,
            chat=request.chat_id,
        )
        return 200, json.dumps(result).encode()


def test_the_http_backend_runs_a_turn_through_the_api(service: BuilderService) -> None:
    # GIVEN the agent over the builder's HTTP API
    api = FakeBuilderApi(service)
    backend = HttpBackend("https://api.example.test/", TOKEN, FORM, send=api)
    provider, recorded = openai("add_inspect_gate")
    # WHEN a turn runs
    agent = BuilderAgent(provider, backend, new_chat_id=lambda: "chat-9")
    turn = agent.run_turn([], "Add a phone, only for call backs.")
    # THEN the draft ends right, and the prompt saw the draft the API returned
    assert turn.stopped == "reply" and turn.backend_errors == ()
    assert items(service)["phone"]["when"]["field"] == "call_me_back"
    assert 'phone: phone "Phone" when call_me_back equals true' in recorded.systems()[3]
    # AND each call was one POST in the route's body shape, between GETs of the draft
    posts = [r for r in api.requests if r["method"] == "POST"]
    assert [urlsplit(r["url"]).path for r in posts] == [
        f"/builder/forms/{FORM}/tools/{tool}"
        for tool in ("add_field", "inspect_form", "set_conditional_logic")
    ]
    assert posts[0]["body"] == {
        "tool_call_id": "call_kT8d2VxQmB4nLz0wRy6pHs1J",
        "chat_id": "chat-9.1",
        "input": {"field": {"kind": "phone", "label": "Phone"}},
        "cancelled": False,
    }
    assert [r["method"] for r in api.requests].count("GET") == 4


def test_the_http_backend_sends_the_selection_and_cancelled(service: BuilderService) -> None:
    api = FakeBuilderApi(service)
    backend = HttpBackend("https://api.example.test", TOKEN, FORM, send=api)
    cancelled = backend.call(
        "add_field", "c1", {"field": {"kind": "url"}}, {"field": "email"}, True
    )
    assert cancelled == CANCELLED
    assert api.requests[-1]["body"]["selection"] == {"field": "email"}
    assert api.requests[-1]["body"]["cancelled"] is True
    assert backend.document() == service.draft(ANA, FORM).document
    assert (
        HttpBackend("https://api.example.test", TOKEN, "no-such-form", send=api).document() is None
    )


def test_an_http_failure_comes_back_as_data_and_is_named_in_the_turn(
    service: BuilderService,
) -> None:
    # GIVEN an API that cannot be reached for writes, then answers 503
    api = FakeBuilderApi(service)
    api.fail["POST"] = urllib.error.URLError("connection refused")
    backend = HttpBackend("https://api.example.test", TOKEN, FORM, send=api)
    unreachable = backend.call("add_field", "c1", {}, None, False)
    api.fail["POST"] = 503
    unavailable = backend.call("add_field", "c2", {}, None, False)
    # THEN both are results for the model, not exceptions
    assert unreachable["ok"] is False and unreachable["error"] == BACKEND_UNAVAILABLE
    assert "connection refused" in unreachable["message"]
    assert unavailable["error"] == BACKEND_UNAVAILABLE and "HTTP 503" in unavailable["message"]
    # AND a turn goes on to the model's reply, and says what failed
    provider, recorded = openai("make_required")
    turn = BuilderAgent(provider, backend).run_turn(
        [], "Make this required.", selection={"field": "email"}
    )
    assert turn.stopped == "reply" and turn.calls[0].result["error"] == BACKEND_UNAVAILABLE
    assert len(turn.backend_errors) == 1 and "update_field" in turn.backend_errors[0]
    assert items(service)["email"]["required"] is False
    assert json.loads(recorded.messages(1)[-1]["content"])["error"] == BACKEND_UNAVAILABLE


def test_a_draft_that_cannot_be_read_is_said_in_the_prompt_and_the_turn(
    service: BuilderService,
) -> None:
    api = FakeBuilderApi(service)
    api.fail["GET"] = 500
    provider, recorded = openai("make_required")
    backend = HttpBackend("https://api.example.test", TOKEN, FORM, send=api)
    turn = BuilderAgent(provider, backend).run_turn(
        [], "Make this required.", selection={"field": "email"}
    )
    assert "could not be read just now (reading the draft: HTTP 500)" in recorded.systems()[0]
    assert 'The editor has the field "email" selected.' in recorded.systems()[0]
    assert len(turn.backend_errors) == 2 and turn.calls[0].ok  # two reads failed, the call did not


def test_a_refusal_of_the_call_by_the_api_is_data_not_a_backend_failure(
    service: BuilderService,
) -> None:
    backend = HttpBackend("https://api.example.test", TOKEN, FORM, send=FakeBuilderApi(service))
    refused = backend.call("add_widget", "c1", {}, None, False)
    assert refused == {
        "ok": False,
        "error": "unknown_tool",
        "message": "there is no such builder tool",
    }
    wrong_token = HttpBackend(
        "https://api.example.test", "dev:x", FORM, send=FakeBuilderApi(service)
    )
    assert wrong_token.call("add_field", "c2", {}, None, False)["error"] == BACKEND_UNAVAILABLE


# ---------------------------------------------------------------- cold start


def test_the_lambda_handlers_do_not_import_the_agent_loop() -> None:
    # GIVEN a fresh interpreter WHEN the API handler module is imported
    code = (
        "import json, sys, formwork.aws.api; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('formwork.agents'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    # THEN nothing of formwork.agents was loaded
    assert json.loads(done.stdout) == []


# ---------------------------------------------------------------- a provider failure


def test_a_provider_failure_mid_turn_raises_with_the_turn_so_far(service: BuilderService) -> None:
    # GIVEN a model that answers once, then fails (throttled, say)
    responses = load("bedrock_add_inspect_gate")[:1]
    agent = BuilderAgent(
        BedrockConverse(RecordedConverse(responses), "m"), ServiceBackend(service, ANA, FORM)
    )
    # WHEN the turn runs
    with pytest.raises(TurnFailed) as failed:
        agent.run_turn([], "Add a phone.")
    # THEN the partial turn has the applied call with its result: a valid next transcript
    partial = failed.value.partial
    assert partial.stopped == "failed" and partial.steps == 1
    assert [c.call.name for c in partial.calls] == ["add_field"] and partial.calls[0].ok
    assert "phone" in items(service)
    assert_valid_converse(converse_messages(partial.transcript))
