"""Counting the DynamoDB requests a boto3 client sends, from botocore's event hooks.

``RequestLog(client)`` registers three hooks on the client: ``before-call`` (one API call, what
the caller asked for), ``after-call`` (its outcome: the error code of a refused call, such as a
cancelled transaction) and ``before-send`` (one HTTP attempt; more attempts than calls means
botocore retried). ``take()`` returns what was seen since the last ``take`` as a ``Tally``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["read", "write", "other"]

READ_OPERATIONS = frozenset(
    {"GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems", "ExecuteStatement"}
)
WRITE_OPERATIONS = frozenset(
    {
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "BatchWriteItem",
        "TransactWriteItems",
        "BatchExecuteStatement",
        "ExecuteTransaction",
    }
)


def kind_of(operation: str) -> Kind:
    """Whether a DynamoDB operation reads items, writes them, or neither (DescribeTable...)."""
    if operation in READ_OPERATIONS:
        return "read"
    if operation in WRITE_OPERATIONS:
        return "write"
    return "other"


@dataclass(frozen=True, slots=True)
class Tally:
    """The requests of one tool call, in the order they were sent."""

    operations: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()
    """``operation:ErrorCode`` of each call DynamoDB refused (e.g. a cancelled transaction)."""
    attempts: int = 0
    """HTTP attempts; above ``len(operations)`` when botocore retried."""

    @property
    def reads(self) -> int:
        return sum(1 for op in self.operations if kind_of(op) == "read")

    @property
    def writes(self) -> int:
        return sum(1 for op in self.operations if kind_of(op) == "write")

    @property
    def retries(self) -> int:
        return max(0, self.attempts - len(self.operations))

    def describe(self) -> str:
        """Operations with their counts, in first-seen order (``-`` for none)."""
        if not self.operations:
            return "-"
        counts = Counter(self.operations)
        return ", ".join(op if counts[op] == 1 else f"{op}×{counts[op]}" for op in counts)


class RequestLog:
    """The DynamoDB requests one boto3 client sends (see the module docstring)."""

    def __init__(self, client: Any) -> None:
        self._operations: list[str] = []
        self._refused: list[str] = []
        self._attempts = 0
        events = client.meta.events
        # First among handlers of the same pattern: before-call and before-send stop at the
        # first handler that answers, and a count must not be hidden by one that does.
        events.register_first("before-call.dynamodb.*", self._before_call)
        events.register_first("after-call.dynamodb.*", self._after_call)
        events.register_first("before-send.dynamodb.*", self._before_send)

    def _before_call(self, event_name: str, **_: Any) -> None:
        self._operations.append(event_name.rsplit(".", 1)[1])

    def _after_call(self, event_name: str, parsed: Any = None, **_: Any) -> None:
        error = parsed.get("Error") if isinstance(parsed, dict) else None
        if isinstance(error, dict) and error.get("Code"):
            self._refused.append(f"{event_name.rsplit('.', 1)[1]}:{error['Code']}")

    def _before_send(self, **_: Any) -> None:
        self._attempts += 1

    def take(self) -> Tally:
        """What was sent since the last ``take`` (and forget it)."""
        tally = Tally(tuple(self._operations), tuple(self._refused), self._attempts)
        self._operations, self._refused, self._attempts = [], [], 0
        return tally
