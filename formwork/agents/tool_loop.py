"""The tool loop both agents run: one user turn of model calls and tool calls.

``BuilderAgent`` (the builder tools on a draft) and ``ChatAgent`` (the form tools in a
conversation) differ in what the model is told and where its calls go; what one turn does is
the same, and lives here. ``run_turn`` takes the two differences as functions: ``prompt``
builds the system prompt before each model call, ``execute`` runs one tool call.

What ``run_turn`` does, in order:

1. appends the person's text to the caller's transcript;
2. before each model call: stops if the abort is set (``aborted``) or the model has been
   called ``max_steps`` times this turn (``step_cap``: a fuse against a wandering loop); else
   splits the transcript into the last ``keep_messages`` entries and a summary of the rest
   (``context.compact``) and asks ``prompt(turn, summary)`` for the system prompt. It is built
   again for every call, so what a call changed earlier in the turn shows in the next one;
3. calls the provider with the kept entries and the tools;
4. a truncated response (cut off by the output limit) ends the turn (``truncated``) with no
   call run; a response without tool calls ends it (``reply``);
5. otherwise runs its calls in order, each through ``execute(turn, call, cancelled)`` under
   the provider's tool-use id. An id the backend would take for another call's is renamed
   first (``unused_ids``): with ``ids_per_response`` (the builder loop, whose backend keeps
   each response's calls apart under a chat id of their own) only an id repeated within the
   response; otherwise (the form tools, whose ids are the conversation's) an id already used
   anywhere in the transcript. A call whose arguments are not a JSON object is answered
   ``bad_request`` without ``execute`` (``arguments_refusal``: not valid JSON, and where the
   parse failed). Before each call the abort is checked: once it is set, that call and
   every later one of the response are executed with ``cancelled=True`` (``execute`` answers
   them without applying anything). Every call gets a result in the transcript, so the next
   request is valid for both vendors; after a cancellation the turn ends (``aborted``). Else,
   back to 2.

The calls of the response that reaches the step cap are run, then the turn ends: the cap
counts model calls. The next turn tells the model its previous turn was stopped at the cap
(``context.step_cap_note``, a line of the summary) and sends that turn's request and its last
response with their results as they were (``context.compact``), however long the turn was.

Failures: a tool call's refusal is data for the model, and ``execute`` never raises (it notes
what it could not do in ``Turn.backend_errors``). A provider that fails raises ``TurnFailed``,
which carries the turn up to that point.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from forms.surface.formats import Tool
from formwork.agents.context import DEFAULT_KEEP_MESSAGES, compact, step_cap_note
from formwork.agents.errors import TurnFailed
from formwork.agents.transcript import (
    AssistantTurn,
    CallResult,
    Entry,
    JsonDict,
    Provider,
    ToolCall,
    ToolResults,
    Usage,
    UserText,
    arguments_refusal,
    safe_call_id,
)

DEFAULT_MAX_STEPS = 12
StopReason = Literal["reply", "step_cap", "aborted", "truncated", "failed"]
"""Why a turn ended; ``failed`` only in ``TurnFailed.partial``."""


class Abort(Protocol):
    """Set when the person presses Stop or closes the panel (a ``threading.Event`` is one)."""

    def is_set(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """One tool call of the turn and its result; ``cancelled`` when it was sent cancelled."""

    call: ToolCall
    result: JsonDict
    cancelled: bool = False

    @property
    def ok(self) -> bool:
        return bool(self.result.get("ok"))


@dataclass(frozen=True, slots=True)
class TurnResult:
    """One turn: the model's last text, every call with its result, the model calls made, why
    the turn ended, the usage of each model call, and the transcript to send next turn."""

    reply: str
    calls: tuple[CallOutcome, ...]
    steps: int
    stopped: StopReason
    usage: tuple[Usage, ...]
    transcript: tuple[Entry, ...]
    backend_errors: tuple[str, ...] = ()
    """What could not be done for want of the backend (calls, and reads for the prompt)."""

    @property
    def input_tokens(self) -> int:
        return sum(u.input_tokens for u in self.usage)

    @property
    def output_tokens(self) -> int:
        return sum(u.output_tokens for u in self.usage)


@dataclass
class Turn:
    """A turn while it runs: the transcript so far and what the turn result will say."""

    entries: list[Entry]
    steps: int = 0
    reply: str = ""
    calls: list[CallOutcome] = field(default_factory=list)
    usage: list[Usage] = field(default_factory=list)
    backend_errors: list[str] = field(default_factory=list)

    def result(self, stopped: StopReason) -> TurnResult:
        return TurnResult(
            reply=self.reply,
            calls=tuple(self.calls),
            steps=self.steps,
            stopped=stopped,
            usage=tuple(self.usage),
            transcript=tuple(self.entries),
            backend_errors=tuple(self.backend_errors),
        )


Prompt = Callable[[Turn, tuple[str, ...]], str]
"""``prompt(turn, summary)``: the system prompt for the next model call, with ``summary``
(the older messages, summarised; may be empty)."""
Execute = Callable[[Turn, ToolCall, bool], JsonDict]
"""``execute(turn, call, cancelled)``: the result of one tool call (every failure as data);
with ``cancelled``, answer the call as cancelled and apply nothing."""


def run_turn(
    provider: Provider,
    transcript: Sequence[Entry],
    text: str,
    *,
    tools: Sequence[Tool],
    prompt: Prompt,
    execute: Execute,
    max_steps: int = DEFAULT_MAX_STEPS,
    keep_messages: int = DEFAULT_KEEP_MESSAGES,
    abort: Abort | None = None,
    ids_per_response: bool = False,
) -> TurnResult:
    """Run the person's ``text`` after ``transcript`` until the model replies, the step cap,
    the abort, or a truncated response (the module says how)."""
    capped = step_cap_note(transcript, max_steps)
    turn = Turn([*transcript, UserText(text)])
    while True:
        if abort is not None and abort.is_set():
            return turn.result("aborted")
        if turn.steps >= max_steps:
            return turn.result("step_cap")
        window = compact(turn.entries, keep_messages)
        system = prompt(turn, (*window.summary, capped) if capped else window.summary)
        try:
            completion = provider.complete(system, window.kept, tools)
        except Exception as failure:
            raise TurnFailed(f"the model call failed: {failure}", turn.result("failed")) from (
                failure
            )
        turn.steps += 1
        turn.usage.append(completion.usage)
        turn.reply = completion.text
        calls = unused_ids(completion.calls, () if ids_per_response else turn.entries)
        if completion.text.strip() or calls:
            turn.entries.append(AssistantTurn(completion.text, calls))
        if completion.usage.truncated:
            return turn.result("truncated")
        if not calls:
            return turn.result("reply")
        if _run_calls(turn, calls, execute, abort):
            return turn.result("aborted")


def _run_calls(
    turn: Turn, calls: Sequence[ToolCall], execute: Execute, abort: Abort | None
) -> bool:
    """Run ``calls`` in order, cancelling every one from the abort on; whether any was."""
    stopping = False
    results: list[CallResult] = []
    for call in calls:
        stopping = stopping or (abort is not None and abort.is_set())
        refused = None if stopping else arguments_refusal(call)
        result = refused if refused is not None else execute(turn, call, stopping)
        results.append(CallResult(call.id, result))
        turn.calls.append(CallOutcome(call, result, stopping))
    turn.entries.append(ToolResults(tuple(results)))
    return stopping


def unused_ids(calls: Sequence[ToolCall], entries: Sequence[Entry]) -> tuple[ToolCall, ...]:
    """``calls`` with any id already used in the transcript (or earlier in ``calls``) renamed
    ``<id>.<n>`` (mapped by ``safe_call_id``): a backend would replay a reused id's first
    result instead of running the call. Vendors' ids are unique; some local servers' are
    not."""
    used = {c.id for e in entries if isinstance(e, AssistantTurn) for c in e.calls}
    fresh: list[ToolCall] = []
    for call in calls:
        call_id, n = call.id, 1
        while call_id in used:
            n += 1
            call_id = safe_call_id(f"{call.id}.{n}")
        used.add(call_id)
        fresh.append(call if call_id == call.id else ToolCall(call.name, call.args, call_id))
    return tuple(fresh)
