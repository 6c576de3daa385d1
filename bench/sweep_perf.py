"""What one sweep costs, against the number of instances: the due index (``forms.storage.due``)
beside the table scan it replaced (``DynamoDBOutboxScan``).

On DynamoDB Local: N idle instances (nothing pending) and k due ones (a hook never
dispatched), N growing, one table per N, written with BatchWriteItem straight from
``home_item`` (the items the store writes). For each N a sweep's read is timed (median of
``--repeat``) and its requests and the items DynamoDB read counted. Nothing is asserted;
the ratios are within one run (the largest N against the smallest).

    python -m bench.sweep_perf            # prints the table
    python -m bench.sweep_perf --sizes 1000 4000 16000 --due 20
"""

from __future__ import annotations

import argparse
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from statistics import median
from typing import Any

from forms.storage.contract import at
from forms.storage.due import DueScan
from forms.storage.due_contract import entry, with_outbox
from forms.storage.dynamodb import DynamoDBFormStore, home_item
from forms.storage.dynamodb_outbox import DynamoDBOutboxScan
from infra.local.dynamodb import client, create_table
from infra.local.dynamodb_local import DynamoDBLocal


class Counting:
    """A DynamoDB client that counts the read requests sent through it and the items
    DynamoDB read for them (a Scan's ``ScannedCount``, a Query's ``Count``, a batch's items)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.requests = 0
        self.items = 0

    def scan(self, **request: Any) -> Any:
        page = self.inner.scan(**request)
        self.requests += 1
        self.items += int(page.get("ScannedCount", 0))
        return page

    def query(self, **request: Any) -> Any:
        page = self.inner.query(**request)
        self.requests += 1
        self.items += int(page.get("ScannedCount", 0))
        return page

    def batch_get_item(self, **request: Any) -> Any:
        found = self.inner.batch_get_item(**request)
        self.requests += 1
        self.items += sum(len(items) for items in found.get("Responses", {}).values())
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@dataclass(frozen=True)
class Row:
    way: str
    instances: int
    due: int
    found: int
    requests: int
    items: int
    ms: float


def fill(dynamodb: Any, table: str, idle: int, due: int) -> None:
    """``idle`` instances with nothing pending and ``due`` with a hook never dispatched."""

    def items() -> Iterator[dict[str, Any]]:
        for n in range(idle):
            yield home_item(with_outbox(f"idle_{n}"))
        for n in range(due):
            yield home_item(with_outbox(f"due_{n}", entry(f"due_{n}", created=at(0))))

    batch: list[dict[str, Any]] = []
    for item in items():
        batch.append({"PutRequest": {"Item": item}})
        if len(batch) == 25:
            write(dynamodb, table, batch)
            batch = []
    if batch:
        write(dynamodb, table, batch)


def write(dynamodb: Any, table: str, batch: list[dict[str, Any]]) -> None:
    request = {table: batch}
    while request:
        request = dynamodb.batch_write_item(RequestItems=request).get("UnprocessedItems") or {}


def sweep(dynamodb: Any, table: str, way: str, repeat: int) -> tuple[int, int, int, float]:
    times: list[float] = []
    found = requests = items = 0
    for _ in range(repeat):
        counting = Counting(dynamodb)
        if way == "due index":
            scan: Any = DueScan(DynamoDBFormStore(counting, table), lambda: at(60))
        else:
            scan = DynamoDBOutboxScan(counting, table)
        started = time.perf_counter()
        found = sum(1 for _ in scan.pending())
        times.append((time.perf_counter() - started) * 1000)
        requests, items = counting.requests, counting.items
    return found, requests, items, median(times)


def measure(endpoint: str, sizes: list[int], due: int, repeat: int) -> list[Row]:
    dynamodb = client(endpoint)
    rows: list[Row] = []
    for size in sizes:
        table = f"sweep-{uuid.uuid4().hex[:8]}"
        create_table(dynamodb, table)
        try:
            fill(dynamodb, table, size, due)
            for way in ("due index", "table scan"):
                found, requests, items, ms = sweep(dynamodb, table, way, repeat)
                rows.append(Row(way, size + due, due, found, requests, items, ms))
        finally:
            dynamodb.delete_table(TableName=table)
    return rows


def report(rows: list[Row]) -> str:
    lines = [
        "| sweep read | instances | due | found | requests | items read | median | vs smallest N |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    first: dict[str, Row] = {}
    for row in rows:
        base = first.setdefault(row.way, row)
        lines.append(
            f"| {row.way} | {row.instances:,} | {row.due} | {row.found} | {row.requests} | "
            f"{row.items:,} | {row.ms:.1f} ms | {row.ms / base.ms:.2f}× |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 4_000, 16_000])
    parser.add_argument("--due", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    with DynamoDBLocal() as server:
        rows = measure(server.endpoint, args.sizes, args.due, args.repeat)
    print(report(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
