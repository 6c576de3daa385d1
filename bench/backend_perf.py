"""Backend performance (issue 5, section 2): prints tables, asserts nothing.

1. One ``form_fill`` end to end: ``FormService.call``, ``functions.api.lambda_handler``
   in-process (in-memory and DynamoDB stores), and over the local HTTP API. Median and p99.
2. DynamoDB requests per tool call by kind (read, write, conflict), from boto3's event hooks.
3. Cold start: import time of each Lambda handler module, as a ratio to ``import boto3``.
4. Load on the local API: concurrent conversations, and concurrent writers on one instance,
   with every write read back.

The engine's own cost (form size, history length) is ``bench/engine_perf.py``.

Run: ``.venv/bin/python -m bench.backend_perf`` (about a minute on 2 cores). It starts a local
stack on free loopback ports (moto's DynamoDB, the local gateway, execution environments) and
stops it at the end; writes ``bench/results/perf.md``; progress goes to stderr.
``--quick`` runs a few rounds of everything (a smoke test; the figures mean little).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from bench.backend import cold_start, dynamo_requests, emulator, latency, load
from bench.backend.inprocess import lambda_like_environment
from bench.backend.stats import duration, table
from infra.local.dynamodb import LocalDynamoDB

RESULTS = Path(__file__).resolve().parent / "results" / "perf.md"
EMULATOR_SIZES = (10, 2000)


@dataclass(frozen=True, slots=True)
class Plan:
    memory_rounds: int = 200
    remote_rounds: int = 50
    import_runs: int = 7
    conversations: int = 100
    writers: int = 20
    writer_rounds: int = 5
    emulator_samples: int = 5

    @classmethod
    def quick(cls) -> Plan:
        return cls(10, 3, 1, 10, 4, 2, 2)


def progress(message: str) -> None:
    print(f"[backend_perf {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def machine() -> str:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    versions = ", ".join(
        f"{name} {metadata.version(name)}"
        for name in ("boto3", "botocore", "aws-lambda-powertools", "pydantic", "moto")
    )
    return (
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC · {platform.machine()} · nproc {cores} · "
        f"Python {platform.python_version()} · {versions}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Backend performance tables (issue 5, §2).")
    parser.add_argument("--quick", action="store_true", help="a few rounds only (smoke test)")
    parser.add_argument("--out", type=Path, default=RESULTS, help=f"default {RESULTS}")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    plan = Plan.quick() if args.quick else Plan()
    lambda_like_environment()
    began = time.perf_counter()

    # Cold start first, while nothing else runs on the machine.
    progress(f"cold start: {plan.import_runs} fresh interpreters per import")
    cold = cold_start.measure(plan.import_runs)
    profile = cold_start.import_profile("functions.api")

    progress("DynamoDB emulator: stock moto and the bench's")
    emulators = [
        (name, emulator.request_cost(kind, EMULATOR_SIZES, plan.emulator_samples))
        for name, kind in (
            ("moto (infra.local.dynamodb)", LocalDynamoDB),
            ("bench emulator", emulator.EmulatedDynamoDB),
        )
    ]

    from forms.storage.dynamodb import DynamoDBFormStore

    progress("starting the local stack (with the bench emulator)")
    with emulator.emulated_stack(api_port=0, dynamodb_port=0, quiet=True) as stack:
        endpoint, table_name = stack.dynamodb_endpoint, stack.table_name
        progress("handler latency")
        latencies = latency.measure(
            endpoint, table_name, stack.api_url, plan.memory_rounds, plan.remote_rounds
        )
        progress("DynamoDB requests per call")
        requests = dynamo_requests.measure(endpoint, table_name)
        progress("load")
        store = DynamoDBFormStore(stack.dynamodb_client(), table_name)
        if load.warm(stack.api_url, stack.max_environments):
            raise SystemExit("bench: warming the execution environments failed")
        loads = [
            load.conversations(stack.api_url, store, plan.conversations),
            load.one_instance(stack.api_url, store, plan.writers, plan.writer_rounds),
        ]
        environments = sum(f.environments for f in stack.functions.values())
    elapsed = time.perf_counter() - began

    report = render(
        plan, args.quick, cold, profile, emulators, latencies, requests, loads, environments
    )
    report += f"\n\nWhole run: {elapsed:.0f} s.\n"
    print(report)
    if not args.no_write:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report)
        progress(f"wrote {args.out}")
    return 0


def render(
    plan: Plan,
    quick: bool,
    cold: list[cold_start.ColdRow],
    profile: list[tuple[str, float]],
    emulators: list[tuple[str, list[emulator.Cost]]],
    latencies: list[latency.LatencyRow],
    requests: list[dynamo_requests.RequestRow],
    loads: list[load.LoadResult],
    environments: int,
) -> str:
    parts = [
        "# Backend performance (issue 5, section 2)",
        "",
        "Written by `python -m bench.backend_perf`: the tables of one run. Nothing here is "
        "asserted; medians and ratios are from this run only. DynamoDB is moto on loopback "
        "(single-threaded), so absolute times are the emulator's, not AWS's; request counts "
        "are what the code sends and carry over to AWS.",
        "",
        f"Machine: {machine()}." + (" **--quick run: too few rounds to read.**" if quick else ""),
        "",
        "## The DynamoDB emulator",
        "",
        "Stock moto's cost grows with the whole table: every `TransactWriteItems` deep-copies "
        "the table once per action, and a base-table `Query` sorts and filters every item. "
        "DynamoDB's does not, so the timed parts below run the local stack on the bench's "
        "emulator (`bench/backend/emulator.py`): the same moto, single-threaded, with those "
        "two scans limited to the items a request names. Request counts do not depend on it.",
        "",
        _render_emulators(emulators),
        "",
        "## 1. One form_fill, end to end",
        "",
        f"A travel claim per conversation ({plan.memory_rounds} in memory, "
        f"{plan.remote_rounds} on DynamoDB), then {latency.FILLS_PER_CONVERSATION} timed "
        "fills of two fields each (history of 1-5 commits). In-process handler calls get a "
        "real API Gateway v2 event (`tests/events/call_tool.json`); its log and metric lines "
        "go to /dev/null. HTTP: one keep-alive connection, client-side time.",
        "",
        latency.render(latencies),
        "",
        *_latency_notes(latencies),
        "## 2. DynamoDB requests per tool call",
        "",
        "Counted with `before-call`/`after-call`/`before-send` hooks on the service's boto3 "
        "client, each call through `lambda_handler` in-process against the local endpoint.",
        "",
        dynamo_requests.render(requests),
        "",
        *_request_notes(requests),
        "",
        "## 3. Cold start: handler import time",
        "",
        f"Median of {plan.import_runs} fresh interpreters each (import only; interpreter "
        "start-up excluded; warm bytecode caches). *Lambda-like* sets `LAMBDA_TASK_ROOT` and "
        "friends, so Powertools' Tracer is on (as `Tracing: Active` makes it in AWS) and "
        "imports and patches the X-Ray SDK. `botocore`: whether the import loads it.",
        "",
        cold_start.render(cold),
        "",
        cold_start.render_profile("functions.api (local)", profile),
        "",
        "## 4. Load on the local API",
        "",
        "Threads released together, each with its own keep-alive connection; throughput is "
        "calls over wall time; latency is per call, client-side, queueing included. *ok* and "
        "*refused* are what the clients were told; *read back* compares that with the table "
        "(through `DynamoDBFormStore`): an acknowledged write must be stored exactly once, a "
        "refused one not at all. Behind the gateway: execution environments (child processes, "
        "one invocation at a time each, so at most that many writers race at once; the rest "
        "queue in the gateway) and one single-threaded moto, on a 2-core machine shared with "
        "the clients and the gateway.",
        "",
        load.render(loads, environments),
        "",
        "## Targets (issue 5) and where we stand",
        "",
        _targets(cold, requests, loads),
    ]
    return "\n".join(parts)


def _latency_notes(rows: list[latency.LatencyRow]) -> list[str]:
    if not any(row.path.startswith("HTTP, gateway with TCP_NODELAY") for row in rows):
        return []
    return [
        "The local gateway leaves Nagle's algorithm on: its response leaves in two writes "
        "(headers, then body) and the second waits for the client's delayed ACK, about 40 ms "
        "on Linux loopback, on every keep-alive request. The diagnostic row turns it off for "
        "its own connection only (`socketserver`'s `disable_nagle_algorithm`, set by the "
        "bench and restored); setting `disable_nagle_algorithm = True` on "
        "`infra.local.gateway._RequestHandler` would fix it.",
        "",
    ]


def _render_emulators(emulators: list[tuple[str, list[emulator.Cost]]]) -> str:
    rows = [
        [name, f"{cost.items:,}", duration(cost.query), duration(cost.transaction)]
        for name, costs in emulators
        for cost in costs
    ]
    return table(
        ["emulator", "items in table", "Query (3-item partition)", "TransactWriteItems (3 Puts)"],
        rows,
    )


def _request_notes(rows: list[dynamo_requests.RequestRow]) -> list[str]:
    return [
        "Why: a tool call names a conversation, not an instance, so the service first runs "
        "`list_conversation`: one Query on the conversation's index partition plus one Query "
        "per instance in it (1 + N, `docs/dynamodb.md`). The commit then reads nothing: the "
        "adapter remembers the state it just read (by instance and version) and sends one "
        "TransactWriteItems conditioned on the version. So a write call is 1 + N reads and 1 "
        "write; a read call 1 + N reads; `form_start` reads the (empty) index once. A "
        "container that never saw the instance costs the same, since the locate step reads it "
        "anyway. A hook that fires (the policy-cap checkpoint) is dispatched in-process after "
        "the commit and reads and commits again. A conflict costs the refused transaction, "
        "one catch-up Query of what changed since the read, and the retried write.",
    ]


def _grouped(rows: list[dynamo_requests.RequestRow]) -> str:
    """``1 R + 1 W: form_start · 2 R + 1 W: form_fill, ...`` (calls grouped by their cost)."""
    groups: dict[str, list[str]] = {}
    for row in rows:
        groups.setdefault(f"{row.tally.reads} R + {row.tally.writes} W", []).append(row.call)
    return " · ".join(f"{cost}: {', '.join(calls)}" for cost, calls in groups.items())


def _targets(
    cold: list[cold_start.ColdRow],
    requests: list[dynamo_requests.RequestRow],
    loads: list[load.LoadResult],
) -> str:
    writes = [r for r in requests if r.kind in ("write", "replay")]
    reads = [r for r in requests if r.kind == "read"]
    met_w = [r.call for r in writes if r.verdict() == "meets"]
    met_r = [r.call for r in reads if r.verdict() == "meets"]
    base = next(r.median for r in cold if r.label == "import boto3")
    handlers = [r for r in cold if r.is_handler]
    worst = max(handlers, key=lambda r: r.median)
    imports = "; ".join(
        f"{r.label.removeprefix('import ')} ({r.environment}) {r.median / base:.2f}×"
        for r in handlers
    )
    refused = sum(sum(r.refused.values()) for r in loads)
    calls = sum(r.calls for r in loads)
    if all(r.all_landed for r in loads):
        load_verdict = "met"
    elif all(r.intact for r in loads):
        load_verdict = (
            f"missed: {refused} of {calls} writes refused as busy (conflict retries "
            "exhausted; nothing saved, the model is told to resend); none lost or duplicated"
        )
    else:
        load_verdict = "NOT met: writes lost, duplicated or stored after a refusal"
    rows = [
        [
            "DynamoDB: ≤1 read + ≤1 write per write call without conflict",
            _grouped(writes),
            f"met by {len(met_w)} of {len(writes)} ({', '.join(met_w) or 'none'}); the rest "
            "read 1 + N to locate the instance (N = forms in the conversation), plus a hook's "
            "own commit when one fires",
        ],
        [
            "DynamoDB: one read per read call",
            _grouped(reads),
            f"met by {len(met_r)} of {len(reads)}; each reads 1 + N (the index, then each "
            "instance)",
        ],
        [
            "Handler import within 1.5× of `import boto3`",
            imports,
            "met"
            if worst.median <= cold_start.TARGET * base
            else f"missed: worst {worst.median / base:.2f}×, {worst.median - base:+.3f} s over "
            "boto3 alone",
        ],
        [
            "Load: every write landed (no target time)",
            "; ".join(f"{r.landed}/{r.calls} landed" for r in loads),
            load_verdict,
        ],
    ]
    return table(["target", "measured", "verdict"], rows)


if __name__ == "__main__":
    raise SystemExit(main())
