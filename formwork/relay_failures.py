"""The relay's failure queue on SQS and the sweeper on Lambda, for the operator routes
(``forms.app.operations``: ``FailureQueue`` and ``Sweeper``).

boto3 clients are made by the App (``formwork.bootstrap``) on first use; what the tools
function may do with them is exactly this (template.yaml): ``sqs:GetQueueAttributes``,
``sqs:ReceiveMessage`` and ``sqs:DeleteMessage`` on the relay's queue, and
``lambda:InvokeFunction`` on the sweeper.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from forms.app.operations import FailedBatch, Received, batch_from_message

RECEIVE_BATCH = 10
"""SQS's most messages per ReceiveMessage."""
HIDE_SECONDS = 60
"""How long messages a redrive received stay hidden: the sweeper's asynchronous invoke is
accepted in well under that; messages it did not get to delete come back after it."""


class SqsFailureQueue:
    """The relay's on-failure queue (``RelayFailures``) through an SQS client."""

    def __init__(self, client: Any, queue_url: str) -> None:
        self._client = client
        self._url = queue_url

    def count(self) -> int:
        found = self._client.get_queue_attributes(
            QueueUrl=self._url, AttributeNames=["ApproximateNumberOfMessages"]
        )
        return int(found.get("Attributes", {}).get("ApproximateNumberOfMessages", 0))

    def peek(self, limit: int) -> list[FailedBatch]:
        # VisibilityTimeout 0: reading back hides nothing from a redrive or another reader. So
        # a second receive may hand back the same messages: it stops at the first that brings
        # nothing new, which may be short of ``limit`` (``count`` is the queue's size).
        return [r.batch for r in self._receive(limit, visibility=0)]

    def receive(self, limit: int) -> list[Received]:
        return self._receive(limit, visibility=HIDE_SECONDS)

    def delete(self, handles: Sequence[str]) -> None:
        for start in range(0, len(handles), RECEIVE_BATCH):
            chunk = handles[start : start + RECEIVE_BATCH]
            self._client.delete_message_batch(
                QueueUrl=self._url,
                Entries=[{"Id": str(n), "ReceiptHandle": h} for n, h in enumerate(chunk)],
            )

    def _receive(self, limit: int, *, visibility: int) -> list[Received]:
        found: dict[str, Received] = {}
        while len(found) < limit:
            answer = self._client.receive_message(
                QueueUrl=self._url,
                MaxNumberOfMessages=min(RECEIVE_BATCH, limit - len(found)),
                VisibilityTimeout=visibility,
                WaitTimeSeconds=0,
            )
            messages = answer.get("Messages", [])
            fresh = [m for m in messages if m["MessageId"] not in found]
            if not fresh:
                break  # the queue is empty, or (visible messages) it handed back what we have
            for message in fresh:
                batch = batch_from_message(message["MessageId"], message.get("Body", ""))
                found[message["MessageId"]] = Received(batch, message["ReceiptHandle"])
        return list(found.values())[:limit]


class LambdaSweeper:
    """Starts the sweeper function (``SweeperFunction``) asynchronously, with no event: a
    full sweep."""

    def __init__(self, client: Any, function_name: str) -> None:
        self._client = client
        self._name = function_name

    def start(self) -> None:
        self._client.invoke(FunctionName=self._name, InvocationType="Event", Payload=b"{}")
