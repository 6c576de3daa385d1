"""What the agent loop raises. A tool call's failure is never here: it goes back to the model
as data. These are the failures the caller of a turn has to handle."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from formwork.agents.tool_loop import TurnResult


class AgentError(Exception):
    """The root of the agent loop's errors."""


class BackendUnavailable(AgentError):
    """The builder backend could not be reached or did not answer as it should (a read of the
    draft over HTTP, say). The loop turns it into a snapshot that says so and notes it in the
    turn result; it does not end the turn."""


class TurnFailed(AgentError):
    """The model provider failed (network, throttling, credentials) in the middle of a turn.

    ``partial`` is the turn up to the failure: every tool call in it has its result, so its
    ``transcript`` is a valid start for the next turn, and the edits it lists were applied."""

    def __init__(self, message: str, partial: TurnResult) -> None:
        super().__init__(message)
        self.partial = partial
