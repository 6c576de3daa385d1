"""What the API answers, typed: a tool call's result and a conversation's status lines.

A tool call's result is ``forms.surface.ToolResult``, the model the API's own document is built
from: ``ok``, then ``summary`` (success) or ``error``, ``message`` and ``hint`` (a refusal, as
data), and every other key as sent. It carries more than its envelope (``resolved``,
``rejected``, ``unknown``, ``fired``, ``hooks``, the reads' parts, and whatever a later version
of the API adds), and ``to_dict`` gives it back exactly as it came, for the model to read;
``tool_call_id`` is the id the call was sent under (the caller's, or the one the client made),
every attempt alike, and ``attempts`` how many times it was sent.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from forms.surface.tool_result import BUSY, ToolResult

__all__ = ["BUSY", "Status", "ToolResult"]


class Status(BaseModel):
    """A conversation's status lines, one per open form (with its ``later:`` and rejection
    lines), for the system prompt. Empty when every form there is closed, and when the caller
    has no form there at all (the API's 404, which is also what another principal's
    conversation looks like)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    conversation_id: str
    lines: list[str]

    @property
    def text(self) -> str:
        """The lines as one block of text."""
        return "\n".join(self.lines)
