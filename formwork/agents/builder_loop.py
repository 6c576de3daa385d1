"""The builder agent loop: one user turn of a model building a form with the builder tools.

``BuilderAgent.run_turn`` runs the shared tool loop (``formwork.agents.tool_loop``: what one
turn does, in order, the step cap, Stop, truncation, provider failures), with:

* the system prompt, built before each model call: the instructions, the summary of older
  messages, the snapshot of the draft as it is now (read from the backend, so an edit made
  earlier in the turn shows) and the editor's selection line (``context.system_prompt``).
  A draft that cannot be read is said in the prompt and noted in
  ``TurnResult.backend_errors``;
* each tool call sent to the backend under the model's own tool-use id, in a chat of its
  response: the loop draws a chat id once per turn (``new_chat_id``) and sends the calls of
  the turn's n-th model response under ``<chat id>.<n>``. The backend records an id as its
  chat's (``forms.app.calls.scoped_call_id``), so a model server that numbers its calls
  ``call_0``, ``call_1``, ... in every response never has a call answered with another
  one's result, in this chat or any other on the draft; the loop renames no id (only one a
  response repeats within itself). A call cancelled by the abort is sent with
  ``cancelled=True``, so it is recorded as cancelled under its id and applies nothing.

Defaults: ``max_steps`` 12, ``keep_messages`` 12. A backend that cannot be reached is data
(``backend_unavailable``) and is listed in ``TurnResult.backend_errors``; a backend that raises
is answered the same way, so no call is left without a result.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping, Sequence

from forms.app.builder_tools import BUILDER_ARGUMENTS
from forms.documents import FormDocument, Selection
from forms.surface.formats import Tool, model_tools
from forms.surface.unavailable import BACKEND_UNAVAILABLE
from forms.surface.unavailable import builder_unavailable as backend_unavailable
from formwork.agents.backends import Backend, KeepsSelection
from formwork.agents.context import (
    BUILDER_INSTRUCTIONS,
    DEFAULT_KEEP_MESSAGES,
    system_prompt,
)
from formwork.agents.errors import BackendUnavailable
from formwork.agents.tool_loop import (
    DEFAULT_MAX_STEPS,
    Abort,
    CallOutcome,
    StopReason,
    Turn,
    TurnResult,
    run_turn,
)
from formwork.agents.transcript import Entry, JsonDict, Provider, ToolCall

__all__ = [
    "DEFAULT_MAX_STEPS",
    "Abort",
    "BuilderAgent",
    "CallOutcome",
    "StopReason",
    "TurnResult",
    "new_chat_id",
]

_log = logging.getLogger(__name__)


def new_chat_id() -> str:
    """A chat id no other chat has: ``chat-`` and 32 hex digits."""
    return f"chat-{uuid.uuid4().hex}"


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
        new_chat_id: Callable[[], str] = new_chat_id,
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
        self.new_chat_id = new_chat_id

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
        chat = self.new_chat_id()

        def prompt(turn: Turn, summary: tuple[str, ...]) -> str:
            document, problem = self._read(turn)
            shown = chosen
            if shown is None and isinstance(self.backend, KeepsSelection):
                # none given: the builder uses the person's canvas selection, so name it
                shown = self.backend.stored_selection()
            return system_prompt(document, shown, summary, self.instructions, problem)

        def execute(turn: Turn, call: ToolCall, cancelled: bool) -> JsonDict:
            return self._call(turn, call, sent, cancelled, f"{chat}.{turn.steps}")

        return run_turn(
            self.provider,
            transcript,
            text,
            tools=self.tools,
            prompt=prompt,
            execute=execute,
            max_steps=self.max_steps,
            keep_messages=self.keep_messages,
            abort=abort,
            ids_per_response=True,
        )

    def _read(self, turn: Turn) -> tuple[FormDocument | None, str | None]:
        """The draft as it is now, or why it could not be read."""
        try:
            return self.backend.document(), None
        except BackendUnavailable as failure:
            turn.backend_errors.append(str(failure))
            return None, str(failure)

    def _call(
        self,
        turn: Turn,
        call: ToolCall,
        selection: Mapping[str, str] | None,
        cancelled: bool,
        chat: str,
    ) -> JsonDict:
        try:
            result = self.backend.call(call.name, call.id, call.args, selection, cancelled, chat)
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
