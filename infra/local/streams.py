"""A local event source mapping: a table's DynamoDB stream, delivered to a function in batches.

In AWS, Lambda polls the stream and invokes the relay with batches shaped like
``{"Records": [...]}``, retrying from the first record the function reports as failed
(``ReportBatchItemFailures``). ``StreamReader`` reads the local DynamoDB's stream
(``GetRecords``, DynamoDB Local's or moto's: both serve NEW_AND_OLD_IMAGES on the DynamoDB
endpoint) into that shape; ``StreamPoller`` does the polling, filtering, batching and retrying
for ``make dev``.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

from formwork.infra.local.runtime import Function

Record = dict[str, Any]


def lambda_record(raw: Record, stream_arn: str, region: str) -> Record:
    """One GetRecords record as the Lambda event carries it (JSON: times as epoch seconds)."""
    record = dict(raw)
    dynamodb = dict(record.get("dynamodb", {}))
    created = dynamodb.get("ApproximateCreationDateTime")
    if isinstance(created, datetime):
        dynamodb["ApproximateCreationDateTime"] = created.timestamp()
    record["dynamodb"] = dynamodb
    record["eventSourceARN"] = stream_arn
    record.setdefault("awsRegion", region)
    return record


def is_home_record(record: Record) -> bool:
    """The filter the template puts on the relay's event source: instance home items only
    (sort key starting ``I#``)."""
    keys = record.get("dynamodb", {}).get("Keys", {})
    return str(keys.get("sk", {}).get("S", "")).startswith("I#")


class StreamReader:
    """Reads a table's stream from its oldest record on, shard by shard."""

    def __init__(self, endpoint: str, table: str, region: str = "us-east-1") -> None:
        import boto3

        options: dict[str, Any] = {
            "endpoint_url": endpoint,
            "region_name": region,
            "aws_access_key_id": "local",
            "aws_secret_access_key": "local",
        }
        self.region = region
        self.streams = boto3.client("dynamodbstreams", **options)
        described = boto3.client("dynamodb", **options).describe_table(TableName=table)
        self.arn: str = described["Table"]["LatestStreamArn"]
        self._iterators: dict[str, str | None] = {}

    def read(self, limit: int = 1000) -> list[Record]:
        """Records written since the last read (all of them, the first time), oldest first."""
        shards = self.streams.describe_stream(StreamArn=self.arn)["StreamDescription"]["Shards"]
        records: list[Record] = []
        for shard in shards:
            shard_id = shard["ShardId"]
            if shard_id not in self._iterators:
                self._iterators[shard_id] = self.streams.get_shard_iterator(
                    StreamArn=self.arn, ShardId=shard_id, ShardIteratorType="TRIM_HORIZON"
                )["ShardIterator"]
            iterator = self._iterators[shard_id]
            if iterator is None:
                continue
            page = self.streams.get_records(ShardIterator=iterator, Limit=limit)
            self._iterators[shard_id] = page.get("NextShardIterator")
            records += [lambda_record(r, self.arn, self.region) for r in page["Records"]]
        return records


class StreamPoller:
    """Polls a stream and invokes ``function`` with batches, as Lambda's event source mapping.

    Records that ``accept`` refuses are skipped (the template's filter criteria). A batch whose
    response lists failures is retried from the first failed record, up to ``max_retries``
    times; then its records are dropped with a message, as Lambda would send the batch's
    coordinates to the on-failure destination (the sweeper catches up on what they held).
    """

    def __init__(
        self,
        reader: StreamReader,
        function: Function,
        *,
        batch_size: int = 25,
        interval: float = 0.25,
        max_retries: int = 5,
        accept: Callable[[Record], bool] = is_home_record,
    ) -> None:
        self.reader = reader
        self.function = function
        self.batch_size = batch_size
        self.interval = interval
        self.max_retries = max_retries
        self.accept = accept
        self._buffer: list[Record] = []
        self._retries = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def poll_once(self) -> int:
        """Read what is new, deliver one batch; the number of records delivered."""
        self._buffer += [r for r in self.reader.read() if self.accept(r)]
        if not self._buffer:
            return 0
        batch = self._buffer[: self.batch_size]
        try:
            response = self.function.invoke({"Records": batch})
            failed = {
                str(item.get("itemIdentifier"))
                for item in (response or {}).get("batchItemFailures", [])
            }
        except Exception as exc:  # the whole invocation failed: retry the whole batch
            print(f"relay: invocation failed: {exc}", file=sys.stderr, flush=True)
            failed = {batch[0]["dynamodb"]["SequenceNumber"]}
        if not failed:
            del self._buffer[: len(batch)]
            self._retries = 0
            return len(batch)
        first = min(i for i, r in enumerate(batch) if r["dynamodb"]["SequenceNumber"] in failed)
        self._retries += 1
        if self._retries > self.max_retries:
            print(
                f"relay: dropping {len(batch) - first} record(s) after {self.max_retries} "
                "retries (the sweeper will catch up)",
                file=sys.stderr,
                flush=True,
            )
            del self._buffer[: len(batch)]
            self._retries = 0
        else:
            del self._buffer[:first]
        return first

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.poll_once()
            except Exception as exc:  # the endpoint went away, or a bug: say so, keep polling
                print(f"relay: polling the stream failed: {exc}", file=sys.stderr, flush=True)

    def start(self) -> StreamPoller:
        self._thread = threading.Thread(target=self._run, name="stream-poller", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
