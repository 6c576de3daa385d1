"""The builder agent loop: one user turn of a model building a form with the builder tools.

What ``BuilderAgent.run_turn`` does, in order:

1. appends the person's text to the caller's transcript;
2. before each model call: stops if the abort is set (``aborted``) or the model has been
   called ``max_steps`` times this turn (``step_cap``, default 12: a fuse against a wandering
   loop); else reads the draft as it is now from the backend, splits the transcript into the
   last ``keep_messages`` (default 12) and a summary of the rest (``context.compact``), and
   builds the system prompt: the instructions, the summary, the snapshot of the draft and the
   selection line. It is rebuilt for every call, so an edit made earlier in the turn shows;
3. calls the provider with the kept messages and the builder tools;
4. a truncated response (cut off by the output limit) ends the turn (``truncated``) with no
   call run; a response without tool calls ends it (``reply``);
5. otherwise runs its calls in order through the backend, each under the provider's tool-use
   id with the editor's selection. Before each call the abort is checked: once it is set,
   that call and every later one of the response are sent with ``cancelled=True``, so each is
   recorded as cancelled under its id (a later replay of the id gets the same answer) and
   applies nothing. Every call gets a result in the transcript, so the next turn's request is
   valid for both vendors; after a cancellation the turn ends (``aborted``). Else, back to 2.

The calls of the response that reaches the step cap are run, then the turn ends: the cap
counts model calls, and their results reach the model on the next turn.

Failures: a tool call's refusal is data for the model. A backend that cannot be reached is
data too (``backend_unavailable``) and is listed in ``TurnResult.backend_errors``. A provider
that fails raises ``TurnFailed``, which carries the turn up to that point.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from forms.app.builder_tools import BUILDER_ARGUMENTS
from forms.documents import FormDocument, Selection
from forms.surface.formats import Tool, model_tools
from formwork.agents.backends import BACKEND_UNAVAILABLE, Backend, backend_unavailable
from formwork.agents.context import (
    BUILDER_INSTRUCTIONS,
    DEFAULT_KEEP_MESSAGES,
    compact,
    system_prompt,
)
from formwork.agents.errors import BackendUnavailable, TurnFailed
from formwork.agents.transcript import (
    AssistantTurn,
    Entry,
    JsonDict,
    Provider,
    ToolCall,
    ToolResult,
    ToolResults,
    Usage,
    UserText,
    safe_call_id,
)

DEFAULT_MAX_STEPS = 12
StopReason = Literal["reply", "step_cap", "aborted", "truncated", "failed"]
"""Why a turn ended; ``failed`` only in ``TurnFailed.partial``."""

_log = logging.getLogger(__name__)


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
    """What could not be done for want of the backend (calls and reads of the draft)."""

    @property
    def input_tokens(self) -> int:
        return sum(u.input_tokens for u in self.usage)

    @property
    def output_tokens(self) -> int:
        return sum(u.output_tokens for u in self.usage)


@dataclass
class _Turn:
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


class BuilderAgent:
    """A model building one draft through a backend, one user turn at a time.

    The agent keeps nothing between turns: the caller keeps the transcript
    (``TurnResult.transcript``) and hands it to the next ``run_turn``."""

    def __init__(
        self,
        provider: Provider,
        backend: Backend,
        *,
        max_steps: int = DEFAULT_MAX_STEPS,
        keep_messages: int = DEFAULT_KEEP_MESSAGES,
        tools: Sequence[Tool] | None = None,
        instructions: str = BUILDER_INSTRUCTIONS,
    ) -> None:
        if max_steps < 1 or keep_messages < 1:
            raise ValueError("max_steps and keep_messages must be at least 1")
        self.provider = provider
        self.backend = backend
        self.max_steps = max_steps
        self.keep_messages = keep_messages
        self.tools: tuple[Tool, ...] = tuple(
            tools if tools is not None else model_tools(BUILDER_ARGUMENTS)
        )
        self.instructions = instructions

    def run_turn(
        self,
        transcript: Sequence[Entry],
        text: str,
        *,
        selection: Selection | Mapping[str, str] | None = None,
        abort: Abort | None = None,
    ) -> TurnResult:
        """Run the person's ``text`` after ``transcript`` until the model replies, the step
        cap, the abort, or a truncated response."""
        chosen = _selection(selection)
        sent = (chosen.model_dump(exclude_none=True) or None) if chosen is not None else None
        turn = _Turn([*transcript, UserText(text)])
        while True:
            if abort is not None and abort.is_set():
                return turn.result("aborted")
            if turn.steps >= self.max_steps:
                return turn.result("step_cap")
            window = compact(turn.entries, self.keep_messages)
            document, problem = self._read(turn)
            system = system_prompt(document, chosen, window.summary, self.instructions, problem)
            try:
                completion = self.provider.complete(system, window.kept, self.tools)
            except Exception as failure:
                raise TurnFailed(f"the model call failed: {failure}", turn.result("failed")) from (
                    failure
                )
            turn.steps += 1
            turn.usage.append(completion.usage)
            turn.reply = completion.text
            calls = _unused_ids(completion.calls, turn.entries)
            if completion.text.strip() or calls:
                turn.entries.append(AssistantTurn(completion.text, calls))
            if completion.usage.truncated:
                return turn.result("truncated")
            if not calls:
                return turn.result("reply")
            if self._run_calls(turn, calls, sent, abort):
                return turn.result("aborted")

    def _read(self, turn: _Turn) -> tuple[FormDocument | None, str | None]:
        """The draft as it is now, or why it could not be read."""
        try:
            return self.backend.document(), None
        except BackendUnavailable as failure:
            turn.backend_errors.append(str(failure))
            return None, str(failure)

    def _run_calls(
        self,
        turn: _Turn,
        calls: Sequence[ToolCall],
        selection: Mapping[str, str] | None,
        abort: Abort | None,
    ) -> bool:
        """Run ``calls`` in order, cancelling every one from the abort on; whether any was."""
        stopping = False
        results: list[ToolResult] = []
        for call in calls:
            stopping = stopping or (abort is not None and abort.is_set())
            result = self._call(turn, call, selection, stopping)
            results.append(ToolResult(call.id, result))
            turn.calls.append(CallOutcome(call, result, stopping))
        turn.entries.append(ToolResults(tuple(results)))
        return stopping

    def _call(
        self, turn: _Turn, call: ToolCall, selection: Mapping[str, str] | None, cancelled: bool
    ) -> JsonDict:
        try:
            result = self.backend.call(call.name, call.id, call.args, selection, cancelled)
        except Exception as failure:  # a backend's bug must not leave a call unanswered
            _log.exception("builder backend failed on %s (%s)", call.name, call.id)
            result = backend_unavailable(type(failure).__name__)
        if result.get("error") == BACKEND_UNAVAILABLE:
            turn.backend_errors.append(f"{call.name} ({call.id}): {result.get('message')}")
        return result


def _selection(selection: Selection | Mapping[str, str] | None) -> Selection | None:
    if selection is None or isinstance(selection, Selection):
        return selection
    return Selection.model_validate(dict(selection))


def _unused_ids(calls: Sequence[ToolCall], entries: Sequence[Entry]) -> tuple[ToolCall, ...]:
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
