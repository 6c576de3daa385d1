"""The conversation as the caller keeps it, in no vendor's shape, and what a model call returns.

A transcript is a list of entries, oldest first:

* ``UserText``: what the person typed;
* ``AssistantTurn``: one model response, its text and its tool calls (name, arguments, id);
* ``ToolResults``: the results of the tool calls of the ``AssistantTurn`` just before it, one
  per call, each under its call's id.

Every tool call has its result in the entry right after its turn (the loop makes sure of it,
Stop included), which is what both vendors require of a request. A provider
(``formwork.agents.providers``) renders the transcript into its vendor's messages on every
call and keeps nothing between calls; ``dump_transcript`` and ``load_transcript`` turn it into
JSON and back, for a chat backend that keeps it between requests.

Tool-call ids are the backend's idempotency keys: they pass ``forms.surface.tools.check_id``.
A provider maps an id that does not (``safe_call_id``, deterministic) and gives one to a call
that came without.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from forms.errors import BadRequest
from forms.surface.formats import Tool
from forms.surface.tools import check_id

JsonDict = dict[str, Any]
UNPARSED = "unparsed_arguments"
"""The one key of a call's arguments when the model's were not a JSON object (kept as sent,
so the transcript holds what the model said; ``arguments_refusal`` answers the call)."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call as the model made it: the tool, its arguments, and its id."""

    name: str
    args: JsonDict
    id: str


@dataclass(frozen=True, slots=True)
class UserText:
    """What the person said."""

    text: str


@dataclass(frozen=True, slots=True)
class AssistantTurn:
    """One model response: its text (may be empty) and its tool calls (may be none)."""

    text: str = ""
    calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True, slots=True)
class CallResult:
    """The result of one tool call, under the call's id."""

    call_id: str
    result: JsonDict


@dataclass(frozen=True, slots=True)
class ToolResults:
    """The results of the calls of the assistant turn just before, in the calls' order."""

    results: tuple[CallResult, ...]


Entry = UserText | AssistantTurn | ToolResults


@dataclass(frozen=True, slots=True)
class Usage:
    """What one model call cost, as the provider reported it. ``truncated``: the response was
    cut off by the output limit (``stop_reason`` ``max_tokens`` on Bedrock, ``length`` on
    OpenAI-compatible endpoints)."""

    input_tokens: int = 0
    output_tokens: int = 0
    truncated: bool = False
    stop_reason: str = ""


@dataclass(frozen=True, slots=True)
class Completion:
    """One model response: the tool calls to run (none when it was truncated: a cut-off tool
    call is not a call), its text, and its usage."""

    calls: tuple[ToolCall, ...]
    text: str
    usage: Usage


class Provider(Protocol):
    """A model behind a vendor API, stateless over the caller's transcript."""

    def complete(
        self, system: str, transcript: Sequence[Entry], tools: Sequence[Tool]
    ) -> Completion:
        """The model's response to ``transcript``, under the ``system`` prompt, with
        ``tools`` offered in the vendor's shape."""
        ...


def safe_call_id(raw: str) -> str:
    """``raw`` when it is a valid tool-call id (``check_id``: 1-128 letters, digits and
    ``. _ : @ -``, starting with a letter or digit), else ``tc_`` and 40 hex digits of its
    SHA-256: the same raw id always maps to the same id. Bedrock's and OpenAI's own ids are
    valid as they are; the mapping is for OpenAI-compatible servers that send other ids."""
    if not raw:
        raise ValueError("a tool call without an id needs a new id, not a mapped one")
    try:
        return check_id(raw, "tool_call_id")
    except BadRequest:
        return "tc_" + hashlib.sha256(raw.encode()).hexdigest()[:40]


def arguments_refusal(call: ToolCall) -> JsonDict | None:
    """The answer to a call whose arguments are not a JSON object (``UNPARSED``, kept as
    sent): that they are not valid JSON, where the parse failed (line, column and character,
    from 1), or that they are JSON but not an object. None for any other call: its arguments
    are the tool's to check."""
    if set(call.args) != {UNPARSED}:
        return None
    sent = call.args[UNPARSED]
    hint = f"Send the call again with the arguments of {call.name} as one JSON object."
    if isinstance(sent, str):
        try:
            sent = json.loads(sent)
        except json.JSONDecodeError as bad:
            return {
                "ok": False,
                "error": "bad_request",
                "message": f"The arguments of {call.name} were not valid JSON: {bad.msg} at "
                f"line {bad.lineno}, column {bad.colno} (character {bad.pos + 1}).",
                "hint": hint,
                "at": {"line": bad.lineno, "column": bad.colno, "character": bad.pos + 1},
            }
        if isinstance(sent, dict):
            return None  # valid JSON after all: the tool checks its keys
    kind = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(sent), "a number"
    )
    return {
        "ok": False,
        "error": "bad_request",
        "message": f"The arguments of {call.name} must be a JSON object, not {kind}.",
        "hint": hint,
    }


def dump_transcript(transcript: Iterable[Entry]) -> list[JsonDict]:
    """The transcript as JSON: ``{"user": text}``, ``{"assistant": text, "calls": [{"id",
    "name", "args"}]}``, ``{"results": [{"call_id", "result"}]}``."""
    out: list[JsonDict] = []
    for entry in transcript:
        if isinstance(entry, UserText):
            out.append({"user": entry.text})
        elif isinstance(entry, AssistantTurn):
            calls = [{"id": c.id, "name": c.name, "args": c.args} for c in entry.calls]
            out.append({"assistant": entry.text, "calls": calls})
        else:
            results = [{"call_id": r.call_id, "result": r.result} for r in entry.results]
            out.append({"results": results})
    return out


def load_transcript(data: Iterable[Mapping[str, Any]]) -> list[Entry]:
    """A transcript from ``dump_transcript``'s JSON; ``ValueError`` for an entry it did not
    write."""
    entries: list[Entry] = []
    for item in data:
        if "user" in item:
            entries.append(UserText(str(item["user"])))
        elif "assistant" in item:
            calls = tuple(
                ToolCall(str(c["name"]), dict(c["args"]), str(c["id"])) for c in item["calls"]
            )
            entries.append(AssistantTurn(str(item["assistant"]), calls))
        elif "results" in item:
            results = tuple(
                CallResult(str(r["call_id"]), dict(r["result"])) for r in item["results"]
            )
            entries.append(ToolResults(results))
        else:
            raise ValueError(f"not a transcript entry: {sorted(item)}")
    return entries
