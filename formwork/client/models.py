"""What the API answers, typed: a tool call's result and a conversation's status lines.

Both keep every key the API sent, named here or not: a result carries more than its envelope
(``resolved``, ``rejected``, ``unknown``, ``fired``, ``hooks``, the reads' parts, and whatever a
later version of the API adds), and ``to_dict`` gives it back exactly as it came, for the
model to read.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr

BUSY = "busy"
"""The error code of a write that lost to other writers every time; nothing was saved, and
the same call (same id) may be sent again."""


class ToolResult(BaseModel):
    """The result of one tool call: ``ok``, then ``summary`` (success) or ``error``,
    ``message`` and ``hint`` (a refusal, as data), and every other key as sent.

    ``tool_call_id`` is the id the call was sent under (the caller's, or the one the client
    made), every attempt alike; ``attempts`` how many times it was sent."""

    model_config = ConfigDict(extra="allow", frozen=True)

    ok: bool
    summary: str | None = None
    error: str | None = None
    message: str | None = None
    hint: str | None = None
    replayed: bool = False
    """True when the API answered an id it had seen: the first result, applied once."""
    status_line: str | None = None

    _raw: dict[str, Any] = PrivateAttr(default_factory=dict)
    _tool_call_id: str = PrivateAttr(default="")
    _attempts: int = PrivateAttr(default=1)

    @classmethod
    def from_answer(
        cls, answer: dict[str, Any], tool_call_id: str, attempts: int = 1
    ) -> ToolResult:
        """The result the API answered for the call sent under ``tool_call_id``."""
        result = cls.model_validate(answer)
        result._raw = dict(answer)
        result._tool_call_id = tool_call_id
        result._attempts = attempts
        return result

    @property
    def tool_call_id(self) -> str:
        return self._tool_call_id

    @property
    def attempts(self) -> int:
        return self._attempts

    @property
    def busy(self) -> bool:
        return not self.ok and self.error == BUSY

    def to_dict(self) -> dict[str, Any]:
        """The result as the API sent it, every key in its order."""
        return dict(self._raw) if self._raw else self.model_dump(exclude_unset=True)

    def get(self, key: str, default: Any = None) -> Any:
        """One key of the result, named in the model or not."""
        return self.to_dict().get(key, default)


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
