"""The relay's stream batches answer as Powertools' batch processor would.

``formwork.aws.relay.partial_response`` is Powertools' ``process_partial_response`` with a
``BatchProcessor`` for DynamoDB Streams, written out so the relay's cold start does not import
``asyncio`` (the batch package's async processor needs it). Each case runs both on the same
event and the same record handler: the same answer, or the same exception with the same text.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord

from formwork.aws.relay import partial_response


def stream_record(sequence: str, *, failing: bool = False) -> dict[str, Any]:
    return {
        "eventID": sequence,
        "eventName": "MODIFY",
        "eventSource": "aws:dynamodb",
        "dynamodb": {
            "Keys": {"pk": {"S": "I#i1"}, "sk": {"S": "I#i1"}},
            "NewImage": {"fail": {"BOOL": failing}},
            "SequenceNumber": sequence,
        },
    }


def on_record(record: DynamoDBRecord) -> None:
    """Fails the records whose image says so, with a different exception each time."""
    assert record.dynamodb is not None
    if (record.dynamodb.new_image or {}).get("fail"):
        raise RuntimeError(f"refused {record.dynamodb.sequence_number}")


def powertools(event: Any) -> Any:
    processor = BatchProcessor(event_type=EventType.DynamoDBStreams)
    return process_partial_response(event, on_record, processor)


def outcome(answer: Any, event: Any) -> tuple[str, Any]:
    try:
        return "answer", answer(event, on_record) if answer is partial_response else answer(event)
    except Exception as error:
        return type(error).__qualname__, str(error)


EVENTS = {
    "every record succeeds": {"Records": [stream_record("1"), stream_record("2")]},
    "some fail": {
        "Records": [
            stream_record("1", failing=True),
            stream_record("2"),
            stream_record("3", failing=True),
        ]
    },
    "every record fails": {
        "Records": [stream_record("1", failing=True), stream_record("2", failing=True)]
    },
    "no records": {"Records": []},
    "no Records key": {"records": [stream_record("1")]},
    "Records not a list": {"Records": {"a": stream_record("1")}},
    "not a mapping": [stream_record("1")],
}


@pytest.mark.parametrize("case", sorted(EVENTS))
def test_the_answer_is_powertools_answer(case: str) -> None:
    event = EVENTS[case]
    mine, theirs = outcome(partial_response, event), outcome(powertools, event)
    # The tracebacks in an all-failed batch's text differ by the frames of the two loops.
    if mine[0] == "BatchProcessingError":
        assert theirs[0] == mine[0]
        assert [line for line in mine[1].splitlines() if "refused" in line] == [
            line for line in theirs[1].splitlines() if "refused" in line
        ]
        assert mine[1].splitlines()[0] == theirs[1].splitlines()[0]
    else:
        assert mine == theirs


def test_the_relay_imports_no_batch_processor() -> None:
    """Neither ``asyncio`` nor Powertools' batch processor loads with the relay."""
    code = (
        "import sys, formwork.aws.relay\n"
        "print(sorted(m for m in ('asyncio', 'aws_lambda_powertools.utilities.batch.base') "
        "if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"
