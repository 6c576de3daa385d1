"""The relay's failure queue on SQS (``formwork.relay_failures``) against moto's SQS: reading
back hides nothing, a redrive's receive hides what it will delete, deleting takes batches of
ten; and the sweeper is started with an asynchronous invoke of the named function."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from forms.app.operations import redrive
from formwork.relay_failures import LambdaSweeper, SqsFailureQueue


@pytest.fixture
def sqs() -> Iterator[Any]:
    with mock_aws():
        yield boto3.client("sqs", region_name="eu-west-1")


def failure(n: int) -> str:
    info = {"shardId": "shardId-1", "startSequenceNumber": str(n), "batchSize": 25}
    return json.dumps(
        {"requestContext": {"condition": "RetryAttemptsExhausted"}, "DDBStreamBatchInfo": info}
    )


def test_reading_back_hides_nothing_and_a_redrive_deletes_what_it_read(sqs: Any) -> None:
    url = sqs.create_queue(QueueName="relay-failures")["QueueUrl"]
    for n in range(13):
        sqs.send_message(QueueUrl=url, MessageBody=failure(n))
    queue = SqsFailureQueue(sqs, url)
    assert queue.count() == 13
    peeked = queue.peek(12)
    # SQS hands out at most ten a receive, and visible ones again: a read back shows what it
    # was given, each once (approximate_count says how many there are)
    assert 10 <= len(peeked) <= 12 and len({b.message_id for b in peeked}) == len(peeked)
    assert peeked[0].condition == "RetryAttemptsExhausted" and peeked[0].batch_size == 25
    assert queue.count() == 13  # still all there, and visible
    started: list[str] = []

    class Sweeps:
        def start(self) -> None:
            started.append("sweep")

    done = redrive(queue, Sweeps(), limit=12)
    assert started == ["sweep"] and len(done.redriven) == 12
    assert queue.count() == 1


def test_the_sweeper_is_invoked_asynchronously() -> None:
    calls: list[dict[str, Any]] = []

    class Lambda:
        def invoke(self, **request: Any) -> dict[str, Any]:
            calls.append(request)
            return {"StatusCode": 202}

    LambdaSweeper(Lambda(), "formwork-SweeperFunction-abc").start()
    assert calls == [
        {
            "FunctionName": "formwork-SweeperFunction-abc",
            "InvocationType": "Event",
            "Payload": b"{}",
        }
    ]
