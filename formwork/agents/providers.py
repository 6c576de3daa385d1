"""Model providers: Amazon Bedrock Converse and any OpenAI-compatible ``/chat/completions``.

Each is stateless over the caller's transcript (``formwork.agents.transcript``): ``complete``
renders the whole transcript into the vendor's messages, sends it with the system prompt and
the tools in the vendor's shape (``forms.surface.formats.tool_definitions``), and reads the
response back into a ``Completion``. The transport is injected: a boto3-like client with
``converse`` for Bedrock, a ``post(url, headers, body)`` function for OpenAI-compatible
endpoints (``urllib_post`` by default), so both are tested offline against recorded responses.

What each vendor is sent:

* Bedrock: consecutive entries of the same role are merged into one message (the results of
  a turn and the person's next text share a user message, results first); a tool result is a
  ``toolResult`` block with ``json`` content and ``status`` ``success`` when ``result["ok"]``,
  else ``error``; blank text blocks are left out (Bedrock refuses them).
* OpenAI-compatible: the system prompt is the first message; an assistant turn carries
  ``tool_calls`` with JSON-string ``arguments``; each result is a ``tool`` message.

Tools are ``Tool``s (a name, a description, an input schema) rendered into the vendor's shape,
or ``ServedTool``s: definitions as an API served them (``GET /tools?format=...``), sent exactly
as served to the provider of their shape (``tool_format``: ``bedrock``, ``openai``, or
``openai-strict`` for an ``OpenAIChat`` asked for strict mode).

What is read back: the token counts as the provider reports them; a response cut off by the
output limit (``stopReason: max_tokens`` / ``finish_reason: length``) is truncated and its
tool calls are dropped (a cut-off tool call is not a call). Arguments that are not a JSON
object are kept as ``{"unparsed_arguments": ...}``, which the loop answers as data
(``arguments_refusal``: not valid JSON, and where). A
tool-call id that fails ``check_id`` is mapped (``safe_call_id``); an OpenAI-compatible call
without an id gets a new one (``new_id``). ``max_tokens`` defaults high (8192): 1024 starved
reasoning models in the bench's first eval.
"""

from __future__ import annotations

import contextlib
import json
import urllib.request
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from forms.surface.formats import Format, StrictFormat, Tool, tool_definitions
from forms.surface.plain import result_text
from formwork.agents.transcript import (
    UNPARSED,
    AssistantTurn,
    Completion,
    Entry,
    JsonDict,
    ToolCall,
    Usage,
    UserText,
    safe_call_id,
)

DEFAULT_MAX_TOKENS = 8192
PostJson = Callable[[str, Mapping[str, str], Mapping[str, Any]], dict[str, Any]]
"""``post(url, headers, body)``: send the JSON body, return the JSON response."""


@dataclass(frozen=True, slots=True)
class ServedTool:
    """A tool definition as an API served it (``GET /tools?format=...``), in the shape
    ``fmt``. A provider of that shape sends it exactly as served; any other provider renders
    it from its name, description and input schema, read from the definition."""

    fmt: str
    definition: JsonDict

    @classmethod
    def read(cls, fmt: str, definitions: Sequence[Mapping[str, Any]]) -> tuple[ServedTool, ...]:
        """The tools of a ``GET /tools`` answer in ``fmt``; ``ValueError`` for an entry that
        names no tool."""
        tools = tuple(cls(fmt, dict(definition)) for definition in definitions)
        for tool in tools:
            if not tool.name:
                raise ValueError(f"not a tool definition: {sorted(tool.definition)}")
        return tools

    def _parts(self) -> tuple[Mapping[str, Any], Any]:
        """The part holding the name and description, and the input schema, in every shape
        the API serves: ``toolSpec`` (Bedrock), ``function`` (OpenAI chat), or flat with
        ``input_schema``, ``inputSchema`` or ``parameters``."""
        if isinstance(self.definition.get("toolSpec"), dict):
            spec = self.definition["toolSpec"]
            return spec, (spec.get("inputSchema") or {}).get("json")
        if isinstance(self.definition.get("function"), dict):
            function = self.definition["function"]
            return function, function.get("parameters")
        flat = self.definition
        for key in ("input_schema", "inputSchema", "parameters"):
            if key in flat:
                return flat, flat[key]
        return flat, None

    @property
    def name(self) -> str:
        return str(self._parts()[0].get("name") or "")

    @property
    def description(self) -> str:
        return str(self._parts()[0].get("description") or "")

    def input_schema(self) -> dict[str, Any]:
        schema = self._parts()[1]
        return dict(schema) if isinstance(schema, dict) else {"type": "object"}


class _Definitions:
    """The tools in one vendor's shape, rendered again only when the tools change. A
    ``ServedTool`` served in ``served`` (default: ``fmt``) is sent as served: a strict export
    cannot be rendered again from its schema alone, since it is typed for the forms the API
    chose; any other tool is rendered in ``fmt``."""

    def __init__(self, fmt: Format, served: str | None = None) -> None:
        self.fmt = fmt
        self.served = served or fmt
        self._tools: tuple[Tool, ...] | None = None
        self._shaped: list[dict[str, Any]] = []

    def __call__(self, tools: Sequence[Tool]) -> list[dict[str, Any]]:
        key = tuple(tools)
        if key != self._tools:
            self._tools, self._shaped = key, [self._shape(tool) for tool in key]
        return self._shaped

    def _shape(self, tool: Tool) -> dict[str, Any]:
        if isinstance(tool, ServedTool) and tool.fmt == self.served:
            return tool.definition
        return tool_definitions(self.fmt, [tool])[0]


def _json_object(value: object) -> JsonDict:
    """Tool arguments as a dict; anything else kept whole under ``UNPARSED``."""
    if isinstance(value, dict):
        return value
    return {UNPARSED: value}


# ---------------------------------------------------------------- Bedrock Converse


def converse_messages(transcript: Sequence[Entry]) -> list[dict[str, Any]]:
    """The transcript as Bedrock Converse ``messages``."""
    messages: list[dict[str, Any]] = []

    def add(role: str, content: list[dict[str, Any]]) -> None:
        if not content:
            return
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(content)
        else:
            messages.append({"role": role, "content": content})

    for entry in transcript:
        if isinstance(entry, UserText):
            add("user", [{"text": entry.text}] if entry.text.strip() else [])
        elif isinstance(entry, AssistantTurn):
            content: list[dict[str, Any]] = [{"text": entry.text}] if entry.text.strip() else []
            content += [
                {"toolUse": {"toolUseId": c.id, "name": c.name, "input": c.args}}
                for c in entry.calls
            ]
            add("assistant", content)
        else:
            add(
                "user",
                [
                    {
                        "toolResult": {
                            "toolUseId": done.call_id,
                            "content": [{"json": done.result}],
                            "status": "success" if done.result.get("ok") else "error",
                        }
                    }
                    for done in entry.results
                ],
            )
    return messages


class BedrockConverse:
    """Bedrock's Converse API (``bedrock-runtime``), tools in Bedrock's ``toolSpec`` shape."""

    tool_format: Format = "bedrock"
    """The ``GET /tools`` format this provider sends as it is."""

    def __init__(self, client: Any, model_id: str, max_tokens: int = DEFAULT_MAX_TOKENS) -> None:
        self.client = client
        self.model_id = model_id
        self.max_tokens = max_tokens
        self._definitions = _Definitions(self.tool_format)

    def request(
        self, system: str, transcript: Sequence[Entry], tools: Sequence[Tool]
    ) -> dict[str, Any]:
        """The keyword arguments of the ``converse`` call for this transcript."""
        request: dict[str, Any] = {
            "modelId": self.model_id,
            "system": [{"text": system}],
            "messages": converse_messages(transcript),
            "inferenceConfig": {"maxTokens": self.max_tokens},
        }
        if tools:
            request["toolConfig"] = {"tools": self._definitions(tools)}
        return request

    def complete(
        self, system: str, transcript: Sequence[Entry], tools: Sequence[Tool]
    ) -> Completion:
        response = self.client.converse(**self.request(system, transcript, tools))
        return read_converse(response)


def read_converse(response: Mapping[str, Any]) -> Completion:
    """A Converse response as a ``Completion``."""
    message = response.get("output", {}).get("message", {})
    content = message.get("content") or []
    stop = str(response.get("stopReason", ""))
    usage = response.get("usage") or {}
    spent = Usage(
        int(usage.get("inputTokens", 0)),
        int(usage.get("outputTokens", 0)),
        truncated=stop == "max_tokens",
        stop_reason=stop,
    )
    text = "\n".join(str(b["text"]) for b in content if "text" in b)
    calls: tuple[ToolCall, ...] = ()
    if not spent.truncated:
        calls = tuple(
            ToolCall(
                str(b["toolUse"]["name"]),
                _json_object(b["toolUse"].get("input", {})),
                safe_call_id(str(b["toolUse"]["toolUseId"])),
            )
            for b in content
            if "toolUse" in b
        )
    return Completion(calls, text, spent)


# ---------------------------------------------------------------- OpenAI-compatible


def urllib_post(url: str, headers: Mapping[str, str], body: Mapping[str, Any]) -> dict[str, Any]:
    """POST ``body`` as JSON with the standard library; the JSON response (an HTTP error
    status raises ``urllib.error.HTTPError``)."""
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers=dict(headers), method="POST"
    )
    with urllib.request.urlopen(request, timeout=180) as response:
        loaded: dict[str, Any] = json.loads(response.read().decode())
        return loaded


def _new_id() -> str:
    return "tc_" + uuid.uuid4().hex


def chat_messages(transcript: Sequence[Entry]) -> list[dict[str, Any]]:
    """The transcript as chat-completions ``messages`` (without the system message)."""
    messages: list[dict[str, Any]] = []
    for entry in transcript:
        if isinstance(entry, UserText):
            messages.append({"role": "user", "content": entry.text})
        elif isinstance(entry, AssistantTurn):
            turn: dict[str, Any] = {"role": "assistant", "content": entry.text or None}
            if entry.calls:
                turn["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": json.dumps(c.args)},
                    }
                    for c in entry.calls
                ]
            messages.append(turn)
        else:
            messages += [
                {
                    "role": "tool",
                    "tool_call_id": done.call_id,
                    "content": result_text(done.result),
                }
                for done in entry.results
            ]
    return messages


class OpenAIChat:
    """Any OpenAI-compatible ``/chat/completions`` endpoint, tools in the ``function`` shape.

    ``max_tokens_param`` names the output limit for endpoints that want another key
    (``max_completion_tokens``); ``new_id`` names a tool call that came without an id.

    ``strict`` asks for the tools in OpenAI's strict mode (``openai-strict``: the model's
    arguments follow the schema exactly, ``docs/tools.md``): ``True`` for the tools typed for
    every form the caller can start, or the ids of the forms to type them for (a strict
    export belongs to a set of forms; fewer forms, fewer tokens). A loop over this provider
    (``ChatAgent``) reads ``tool_format`` and ``tool_forms`` to ask the API for those tools,
    and sends every call back with that format, so the ``null`` answers strict mode makes the
    model send are read as not given. Tools not served by the API (the builder's) are sent in
    the ``function`` shape, not strict."""

    tool_format: Format | StrictFormat
    """The ``GET /tools`` format this provider sends as it is."""
    tool_forms: tuple[str, ...] | None
    """With ``strict``: the forms the tools are typed for (None: every form the caller can
    start)."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        model: str,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        post: PostJson = urllib_post,
        max_tokens_param: str = "max_tokens",
        new_id: Callable[[], str] = _new_id,
        *,
        strict: bool | str | Sequence[str] = False,
    ) -> None:
        if isinstance(strict, bool):
            self.tool_format, self.tool_forms = ("openai-strict" if strict else "openai"), None
        else:
            forms = (strict,) if isinstance(strict, str) else tuple(strict)
            if not forms:
                raise ValueError("strict names no form: pass True for every form, or form ids")
            self.tool_format, self.tool_forms = "openai-strict", forms
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"}
        self.model = model
        self.max_tokens = max_tokens
        self.max_tokens_param = max_tokens_param
        self.post = post
        self.new_id = new_id
        self._definitions = _Definitions("openai", served=self.tool_format)

    def body(self, system: str, transcript: Sequence[Entry], tools: Sequence[Tool]) -> JsonDict:
        """The request body for this transcript."""
        body: JsonDict = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, *chat_messages(transcript)],
            self.max_tokens_param: self.max_tokens,
        }
        if tools:
            body["tools"] = self._definitions(tools)
        return body

    def complete(
        self, system: str, transcript: Sequence[Entry], tools: Sequence[Tool]
    ) -> Completion:
        response = self.post(self.url, self.headers, self.body(system, transcript, tools))
        return self.read(response)

    def read(self, response: Mapping[str, Any]) -> Completion:
        """A chat-completions response as a ``Completion``."""
        choice = (response.get("choices") or [{}])[0]
        message = choice.get("message") or {}
        finish = str(choice.get("finish_reason") or "")
        usage = response.get("usage") or {}
        spent = Usage(
            int(usage.get("prompt_tokens", 0)),
            int(usage.get("completion_tokens", 0)),
            truncated=finish == "length",
            stop_reason=finish,
        )
        text = str(message.get("content") or "")
        calls: list[ToolCall] = []
        if not spent.truncated:
            for raw in message.get("tool_calls") or []:
                function = raw.get("function") or {}
                arguments = function.get("arguments")
                if arguments is None:
                    arguments = {}
                elif isinstance(arguments, str):
                    with contextlib.suppress(ValueError):  # kept as sent, refused as data
                        parsed = json.loads(arguments or "{}")
                        arguments = parsed if isinstance(parsed, dict) else arguments
                raw_id = str(raw.get("id") or "")
                call_id = safe_call_id(raw_id) if raw_id else self.new_id()
                calls.append(ToolCall(str(function.get("name")), _json_object(arguments), call_id))
        return Completion(tuple(calls), text, spent)
