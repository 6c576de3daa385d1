"""What one sweep costs, against the number of instances: the due index (``forms.storage.due``)
beside the table scan it replaced (``DynamoDBOutboxScan``).

On DynamoDB Local: N idle instances (nothing pending) and k due ones (a hook never
dispatched), N growing, one table per N, written with BatchWriteItem straight from
``home_item`` (the items the store writes). For each N a sweep's read is timed (median of
``--repeat``) and its requests and the items DynamoDB read counted. Nothing is asserted;
the ratios are within one run (the largest N against the smallest).

    python -m bench.sweep_perf            # prints the report, writes it to the run's folder
    python -m bench.sweep_perf --publish  # writes bench/results/sweep.md (tracked)
    python -m bench.sweep_perf --sizes 1000 4000 16000 --due 20
"""

from __future__ import annotations

import argparse
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from statistics import median
from typing import Any

from bench.reports import stamped
from bench.runs import output_dir
from forms.storage.contract import at
from forms.storage.due import DUE_SHARDS, DueScan
from forms.storage.due_contract import entry, with_outbox
from forms.storage.dynamodb import DynamoDBFormStore, home_item
from forms.storage.dynamodb_outbox import DynamoDBOutboxScan
from formwork.infra.local.dynamodb import client, create_table
from formwork.infra.local.dynamodb_local import DynamoDBLocal


class Counting:
    """A DynamoDB client that counts the read requests sent through it and the items
    DynamoDB read for them (a Scan's ``ScannedCount``, a Query's ``Count``, a batch's items)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.requests = 0
        self.items = 0
        self.kinds: Counter[str] = Counter()

    def scan(self, **request: Any) -> Any:
        page = self.inner.scan(**request)
        self.requests += 1
        self.kinds["Scan"] += 1
        self.items += int(page.get("ScannedCount", 0))
        return page

    def query(self, **request: Any) -> Any:
        page = self.inner.query(**request)
        self.requests += 1
        self.kinds["Query"] += 1
        self.items += int(page.get("ScannedCount", 0))
        return page

    def batch_get_item(self, **request: Any) -> Any:
        found = self.inner.batch_get_item(**request)
        self.requests += 1
        self.kinds["BatchGetItem"] += 1
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
    kinds: dict[str, int]


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


def sweep(
    dynamodb: Any, table: str, way: str, repeat: int
) -> tuple[int, int, int, float, dict[str, int]]:
    times: list[float] = []
    found = requests = items = 0
    kinds: dict[str, int] = {}
    for _ in range(repeat):
        counting = Counting(dynamodb)
        if way == "due index":
            scan: Any = DueScan(DynamoDBFormStore(counting, table), lambda: at(60))
        else:
            scan = DynamoDBOutboxScan(counting, table)
        started = time.perf_counter()
        found = sum(1 for _ in scan.pending())
        times.append((time.perf_counter() - started) * 1000)
        requests, items, kinds = counting.requests, counting.items, dict(counting.kinds)
    return found, requests, items, median(times), kinds


def measure(endpoint: str, sizes: list[int], due: int, repeat: int) -> list[Row]:
    dynamodb = client(endpoint)
    rows: list[Row] = []
    for size in sizes:
        table = f"sweep-{uuid.uuid4().hex[:8]}"
        create_table(dynamodb, table)
        try:
            fill(dynamodb, table, size, due)
            for way in ("due index", "table scan"):
                found, requests, items, ms, kinds = sweep(dynamodb, table, way, repeat)
                rows.append(Row(way, size + due, due, found, requests, items, ms, kinds))
        finally:
            dynamodb.delete_table(TableName=table)
    return rows


def table(rows: list[Row]) -> str:
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


FLAT = 1.25
"""A due-index median at most this many times the smallest N's reads as flat (the machine is
shared: medians of one run move by tens of percent; the smallest N's also warms the JVM)."""


def _requests(kinds: dict[str, int]) -> str:
    named = {"Query": "Queries", "BatchGetItem": "BatchGetItems", "Scan": "Scans"}
    parts = []
    order = {kind: n for n, kind in enumerate(named)}
    for kind, count in sorted(kinds.items(), key=lambda item: order.get(item[0], len(order))):
        part = f"{count} {named.get(kind, kind) if count != 1 else kind}"
        if kind == "Query" and count == DUE_SHARDS:
            part += " (one per shard)"
        parts.append(part)
    return " and ".join(parts) if parts else "none"


def findings(rows: list[Row]) -> str:
    """What this run's rows say: whether the due index's read stays flat in N, and how the
    scan's grows."""
    index = [r for r in rows if r.way == "due index"]
    scan = [r for r in rows if r.way == "table scan"]
    if len(index) < 2 or len(scan) < 2:
        return "One size only: nothing to compare within the run."
    first, last = index[0], index[-1]
    ratio = last.ms / first.ms
    same = all((r.requests, r.items) == (first.requests, first.items) for r in index)
    if same:
        reads = (
            f"The due index reads the same {first.requests} requests "
            f"({_requests(first.kinds)}) and {first.items:,} items whatever N is"
        )
    else:
        reads = (
            f"The due index's read grows with N: {first.requests} requests and "
            f"{first.items:,} items at {first.instances:,} instances, {last.requests} and "
            f"{last.items:,} at {last.instances:,}"
        )
    verdict = "flat" if same and ratio <= FLAT else "grows"
    grown = scan[-1].ms / scan[0].ms
    times = scan[-1].instances / scan[0].instances
    all_items = all(r.items == r.instances for r in scan)
    return (
        f"{reads}: {verdict} ({ratio:.2f}× from {first.instances:,} to {last.instances:,} "
        f"instances). The scan reads {'every item' if all_items else 'the table'}: "
        f"{grown:.{0 if grown >= 10 else 1}f}× at {times:.0f}× the instances."
    )


def render(rows: list[Row], due: int, repeat: int) -> str:
    """The report of one run (title first, for ``stamped``)."""
    return "\n".join(
        [
            "# The sweeper: one sweep against the number of instances",
            "",
            "Written by `python -m bench.sweep_perf` (DynamoDB Local). N idle instances "
            f"(nothing pending) and {due} due (a hook never dispatched), one table per N; the "
            "sweep's read of what is due, through the due index (`forms.storage.due`, what the "
            "sweeper reads) and through the table scan it replaced (`DynamoDBOutboxScan`). "
            "Requests and items read are what DynamoDB is sent and reads; times are DynamoDB "
            f"Local's, medians of {repeat}; ratios within this run, against the smallest N (the "
            "first due-index row includes the JVM warming up). Nothing here is asserted.",
            "",
            table(rows),
            "",
            findings(rows),
            "",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 4_000, 16_000])
    parser.add_argument("--due", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--publish", action="store_true", help="write bench/results/sweep.md (tracked)"
    )
    args = parser.parse_args(argv)
    with DynamoDBLocal() as server:
        rows = measure(server.endpoint, args.sizes, args.due, args.repeat)
    text = render(rows, args.due, args.repeat)
    print(text)
    out = output_dir(args.publish) / "sweep.md"
    out.write_text(stamped("sweep.md", text))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
