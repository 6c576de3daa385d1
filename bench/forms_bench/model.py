"""The bench's vocabulary: what the scripted user says, what an agent sees and what it does.

A scenario is a list of user turns. Each turn carries the utterance (what a real model reads)
and structured intents (what an offline persona reads): the facts the user gives, a correction,
an answer taken back, a correction reverted, or a question about what is left. The user side is
scripted, never simulated, so differences between cells come from the agent side alone.

An agent sees an ``Observation`` (the tier-0 status lines, the tool results so far in this turn,
and the user turn) and answers with tool calls (run in order, then it is asked again) or with a
message to the user (which ends the turn).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

JsonDict = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Begin:
    """The user wants this form (the turn that opens a conversation about it)."""

    form: str


@dataclass(frozen=True, slots=True)
class Give:
    """The user states answers: field id -> the JSON value the field's type accepts."""

    facts: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Correct:
    """The user changes answers given earlier."""

    facts: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class TakeBack:
    """The user takes an answer back ("leave that off")."""

    field: str


@dataclass(frozen=True, slots=True)
class Revert:
    """The user goes back on their last correction of a field ("it was X after all")."""

    field: str


@dataclass(frozen=True, slots=True)
class AskRemaining:
    """The user asks what else is needed."""


@dataclass(frozen=True, slots=True)
class Confirm:
    """The user confirms the answers read back: the form may be submitted."""


Intent = Begin | Give | Correct | TakeBack | Revert | AskRemaining | Confirm


@dataclass(frozen=True, slots=True)
class UserTurn:
    text: str
    intents: tuple[Intent, ...] = ()

    def facts(self) -> dict[str, Any]:
        """Every answer this turn gives or corrects, in the order the user said them."""
        merged: dict[str, Any] = {}
        for intent in self.intents:
            if isinstance(intent, Give | Correct):
                merged.update(intent.facts)
        return merged

    def mentions(self) -> set[str]:
        """Every field the user speaks about in this turn (given, corrected, taken back)."""
        named = set(self.facts())
        named |= {i.field for i in self.intents if isinstance(i, TakeBack | Revert)}
        return named

    def begins(self) -> str | None:
        return next((i.form for i in self.intents if isinstance(i, Begin)), None)


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str
    args: JsonDict
    id: str = ""
    """The agent's own id for the call (a provider's tool-use id, or a persona's counter)."""


@dataclass(frozen=True, slots=True)
class Message:
    """Text to the user; it ends the agent's turn."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolResult:
    call: ToolCall
    result: JsonDict


@dataclass(frozen=True, slots=True)
class Observation:
    status: tuple[str, ...]
    """The tier-0 status lines of the conversation's open forms, as the system prompt has them."""
    results: tuple[ToolResult, ...]
    """Every tool result so far in this user turn, oldest first."""
    user: UserTurn
    turn: int


Action = list[ToolCall] | Message


@runtime_checkable
class Agent(Protocol):
    name: str

    def act(self, observation: Observation) -> Action: ...


@dataclass(slots=True)
class Usage:
    """What one model call cost, as the provider reported it."""

    input_tokens: int = 0
    output_tokens: int = 0
    truncated: bool = False
    stop_reason: str = ""


@runtime_checkable
class MeteredAgent(Agent, Protocol):
    """An agent backed by a real model: the harness collects usage after each call."""

    def take_usage(self) -> list[Usage]: ...


@dataclass(frozen=True, slots=True)
class Scenario:
    id: str
    form: str
    claim: str
    """The design claim the scenario puts to the test."""
    turns: tuple[UserTurn, ...]
    checks: tuple[Any, ...] = field(default=())
    """``forms_bench.graders.Check`` objects."""
