"""What the API answers, typed: a tool call's result and a conversation's status lines
(``ConversationStatus``, the model the API's document is built from as well).

A tool call's result is ``forms.surface.ToolResult``, the model the API's own document is built
from: ``ok``, then ``summary`` (success) or ``error``, ``message`` and ``hint`` (a refusal, as
data), and every other key as sent. It carries more than its envelope (``resolved``,
``rejected``, ``unknown``, ``fired``, ``hooks``, the reads' parts, and whatever a later version
of the API adds), and ``to_dict`` gives it back exactly as it came, for the model to read;
``tool_call_id`` is the id the call was sent under (the caller's, or the one the client made),
every attempt alike, and ``attempts`` how many times it was sent.

``read_result`` is how the client reads one, tolerant of a newer API (docs/clients.md,
Compatibility): an answer the model types is typed whole; one it cannot type only because
of keys outside the envelope (a status value or a row shape this version does not know) is
typed without them, and they are kept as sent (``untyped`` names them); an answer whose
envelope does not read is not a tool result.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from forms.surface.tool_result import BUSY, ConversationStatus, ToolResult

__all__ = ["BUSY", "ENVELOPE", "ConversationStatus", "ToolResult", "read_result"]

ENVELOPE = frozenset({"ok", "summary", "error", "message", "hint"})
"""The keys every tool result leads with; an answer whose envelope does not read is refused."""


def read_result(
    answer: Mapping[str, Any], tool_call_id: str, attempts: int = 1, *, builder: bool = False
) -> ToolResult:
    """``answer`` as a ``ToolResult``: typed whole when it can be; else typed without the
    keys outside the envelope that failed, which are kept as sent. ``ValueError`` when it is
    not a tool result: its envelope is not ``ok`` with ``summary``, or with ``error`` and
    ``message``, each of its type (the document's ``anyOf``, checked here as well).

    ``builder``: the answer is a builder tool's, whose reads (``inspect_form``) answer with
    the draft and no sentence: ``ok`` true is enough for it to lead; a refusal still needs
    ``error`` and ``message``."""
    if not _leads(answer, builder=builder):
        raise ValueError("a tool result leads with ok, then summary, or error and message")
    try:
        return ToolResult.from_answer(answer, tool_call_id, attempts)
    except ValidationError as refused:
        failed = {str(error["loc"][0]) if error["loc"] else "" for error in refused.errors()}
        if failed & ENVELOPE or "" in failed:
            raise
    typed = {key: value for key, value in answer.items() if key not in failed}
    return ToolResult.from_answer(answer, tool_call_id, attempts, typed=typed)


def _leads(answer: Mapping[str, Any], *, builder: bool) -> bool:
    """Whether ``answer`` leads as a tool result: ``summary``, or ``error`` and ``message``
    (a builder's success: ``ok`` true)."""
    if builder and answer.get("ok") is True:
        return True
    said = isinstance(answer.get("summary"), str)
    return said or all(isinstance(answer.get(key), str) for key in ("error", "message"))
