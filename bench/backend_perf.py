"""Backend performance (issue 5, section 2): prints tables, asserts nothing.

1. One ``form_fill`` end to end: ``FormService.call``, ``formwork.aws.api.lambda_handler``
   in-process (in-memory and DynamoDB stores), and over the local HTTP API. Median and p99.
2. DynamoDB requests per tool call by kind (read, write, conflict), from boto3's event hooks.
3. Cold start: import time of each Lambda handler module, as a ratio to ``import boto3`` timed
   in the same rounds, with bytecode cached and without.
4. Load on the local API: concurrent conversations, and concurrent writers on one instance,
   with every write read back.
5. A one-field ``form_fill`` over HTTP against a bare handler on the same gateway that sends
   only its ``Query`` and ``TransactWriteItems``, on DynamoDB Local (``bench.http_floor_perf``).
6. Capacity units per call against the length of history, on DynamoDB Local
   (``bench.backend.capacity``).

The engine's own cost (form size, history length) is ``bench/engine_perf.py``.

Run: ``.venv/bin/python -m bench.backend_perf`` (a few minutes on 2 cores). It starts local
stacks on free loopback ports (the DynamoDB emulators, the local gateway, execution
environments) and stops them at the end; writes ``perf.md`` to the run's folder
(``bench.runs``), or to ``bench/results/perf.md`` with ``--publish``; progress goes to stderr.
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
from statistics import median

from bench import http_floor_perf
from bench.backend import capacity, cold_start, dynamo_requests, emulator, latency, load, targets
from bench.backend.inprocess import lambda_like_environment
from bench.backend.stats import duration, ratio, table
from bench.reports import stamped
from bench.runs import RESULTS as RESULTS_DIR
from bench.runs import output_dir
from formwork.infra.local.dynamodb import LocalDynamoDB
from formwork.infra.local.dynamodb_local import DynamoDBLocal

RESULTS = RESULTS_DIR / "perf.md"
ELSEWHERE = (
    "Two backend measurements are reports of their own: one sweep's read against the number "
    "of instances, [sweep.md](sweep.md) (`python -m bench.sweep_perf --publish`), and what a "
    "tool call that fires an executor costs on Temporal, [hook_path.md](hook_path.md) "
    "(`python -m bench.hook_path_perf --publish`)."
)
"""The line that points to the backend reports this bench does not write."""
EMULATOR_SIZES = (10, 2000)


@dataclass(frozen=True, slots=True)
class Plan:
    memory_rounds: int = 200
    remote_rounds: int = 50
    import_runs: int = 15
    conversations: int = 100
    writers: int = 20
    writer_rounds: int = 5
    emulator_samples: int = 5
    growth_calls: int = 300
    growth_window: int = 20
    floor_rounds: int = http_floor_perf.ROUNDS
    floor_warmup: int = http_floor_perf.WARMUP

    @classmethod
    def quick(cls) -> Plan:
        return cls(10, 3, 1, 10, 4, 2, 2, 10, 5, 20, 5)


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
    parser.add_argument(
        "--out", type=Path, default=None, help="the report's path (default: the run's folder)"
    )
    parser.add_argument(
        "--publish", action="store_true", help=f"write the tracked report, {RESULTS}"
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    plan = Plan.quick() if args.quick else Plan()
    lambda_like_environment()
    began = time.perf_counter()

    # Cold start first, while nothing else runs on the machine.
    progress(f"cold start: {plan.import_runs} rounds of fresh interpreters (bytecode and none)")
    cold = cold_start.measure(plan.import_runs)
    profile = cold_start.import_profile("formwork.aws.api")

    progress("DynamoDB emulators: stock moto, the bench's, DynamoDB Local")
    emulators = [
        (name, emulator.request_cost(kind, EMULATOR_SIZES, plan.emulator_samples))
        for name, kind in (
            ("moto (formwork.infra.local.dynamodb)", LocalDynamoDB),
            ("bench emulator", emulator.EmulatedDynamoDB),
            ("DynamoDB Local (formwork.infra.local.dynamodb_local)", DynamoDBLocal),
        )
    ]
    progress(f"form_fill over HTTP on three local stacks, {plan.growth_calls} calls each")
    growth = emulator.fill_growth(plan.growth_calls, plan.growth_window)

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
    progress(f"form_fill over HTTP against its storage floor, {plan.floor_rounds} rounds")
    floor = http_floor_perf.measure(plan.floor_rounds, plan.floor_warmup)
    progress("capacity units per call on DynamoDB Local")
    with DynamoDBLocal() as server:
        units = capacity.run(server.endpoint)
    elapsed = time.perf_counter() - began

    report = render(
        plan,
        args.quick,
        cold,
        profile,
        emulators,
        growth,
        latencies,
        requests,
        loads,
        environments,
        floor,
    )
    report += "\n\n" + "\n".join(capacity_section(units))
    report += f"\n\nWhole run: {elapsed:.0f} s.\n\n{ELSEWHERE}\n"
    print(report)
    if not args.no_write:
        out: Path = args.out or output_dir(args.publish) / "perf.md"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(stamped("perf.md", report))
        progress(f"wrote {out}")
    return 0


def capacity_section(rows: list[capacity.Row]) -> list[str]:
    """What a call consumes on DynamoDB, by the length of the instance's history."""
    cold = {
        r.revisions: r.units.read for r in rows if r.call == "form_fill" and r.container == "cold"
    }
    warm = {
        r.revisions: r.units.read for r in rows if r.call == "form_fill" and r.container == "warm"
    }
    deepest = max(cold)
    return [
        "## Capacity units per call, against history (DynamoDB Local)",
        "",
        "`ReturnConsumedCapacity=TOTAL` on AWS's DynamoDB Local (`bench/backend/capacity.py`): a",
        "travel claim with 0, 1,000 and 10,000 prior revisions of one field; a one-field",
        "`form_fill` and a `form_read`, from a container that never saw the instance (*cold*: a",
        "fresh store) and from one that has (*warm*).",
        "",
        *capacity.report(rows),
        "",
        "| goal | measured | verdict |",
        "|---|---|---|",
        f"| a write call's reads do not grow with history | form_fill, cold: {cold[0]:g} read "
        f"units at 0 revisions, {cold[deepest]:g} at {deepest:,}; warm: {warm[0]:g} and "
        f"{warm[deepest]:g} | {'met' if cold[deepest] <= cold[0] * 1.5 else 'missed (cold)'} |",
    ]


def render(
    plan: Plan,
    quick: bool,
    cold: list[cold_start.ColdRow],
    profile: list[tuple[str, float]],
    emulators: list[tuple[str, list[emulator.Cost]]],
    growth: list[emulator.Growth],
    latencies: list[latency.LatencyRow],
    requests: list[dynamo_requests.RequestRow],
    loads: list[load.LoadResult],
    environments: int,
    floor: http_floor_perf.Result,
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
        "two scans limited to the items a request names. Request counts do not depend on it. "
        "AWS's DynamoDB Local (the local stack's default DynamoDB, `make dev`) is timed "
        "beside both.",
        "",
        _render_emulators(emulators),
        "",
        *_growth_section(growth),
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
        f"{plan.import_runs} rounds, each timing every row {cold_start.REPEATS} times in fresh "
        "interpreters (their CPU time, interpreter start-up excluded), each timing beside one "
        "of `import boto3` in the same bytecode mode (B V B V B); a round's ratio is the "
        "least of the row's timings over the least of the boto3 timings beside them: median "
        "over the rounds, range in brackets. "
        "Bytecode *cached*: a warm `__pycache__`, as the Lambda artifact ships it; *none*: "
        "every module compiled from source (no `.pyc` read or written). *Lambda-like* sets "
        "`LAMBDA_TASK_ROOT` and friends, so tracing is on (as `Tracing: Active` makes it in "
        "AWS), and an Extensions API the handlers register with as they initialise: the "
        "Tracer imports the X-Ray SDK on the first invocation, which the "
        "*first GET /tools* rows include. *loaded*: the heavy modules present afterwards. "
        f"The goal (issue 26): every handler's import under {cold_start.TARGET}× "
        "`import boto3` in every round (*meets*); *misses* when the median is over it, "
        "*within noise* in between. The layers below build `import formwork.aws.api` up one "
        "layer at a time (each row imports the layers above it), so each one's increment "
        "says what it adds.",
        "",
        cold_start.render(cold),
        "",
        cold_start.render_layers(cold),
        "",
        cold_start.render_profile("formwork.aws.api (local)", profile),
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
        "## 5. A form_fill over HTTP against its storage floor (issue 26)",
        "",
        http_floor_perf.method(floor),
        "",
        *http_floor_perf.tables(floor),
        "",
        "## Targets (issue 5) and where we stand",
        "",
        targets.render(cold, requests, loads, floor),
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
        "`formwork.infra.local.gateway._RequestHandler` would fix it.",
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


def _growth_section(rows: list[emulator.Growth]) -> list[str]:
    """A one-field form_fill over HTTP on a stack per DynamoDB, first calls and last calls."""
    if not rows:
        return []
    calls, window = rows[0].calls, len(rows[0].first)
    base = next((r for r in rows if r.dynamodb == "DynamoDB Local"), rows[-1])
    first_base, last_base = median(base.first), median(base.last)
    lines = [
        [
            row.dynamodb,
            duration(median(row.first)),
            duration(median(row.last)),
            ratio(median(row.last), median(row.first)),
            ratio(median(row.first), first_base),
            ratio(median(row.last), last_base),
        ]
        for row in rows
    ]
    return [
        f"A one-field `form_fill` over HTTP, {calls} calls in a row on one travel claim (each "
        "commits a revision), on three local stacks side by side that take turns call by "
        "call (`emulator.fill_growth`; one execution environment each, no Temporal, the "
        "gateways with TCP_NODELAY). Medians of the first and the last "
        f"{window} calls; ratios within this run. DynamoDB Local's first calls include its "
        "JVM warming up; stock moto's last ones, a copy of the whole table per transaction.",
        "",
        table(
            [
                "local stack's DynamoDB",
                f"calls 1-{window}",
                f"calls {calls - window + 1}-{calls}",
                "last / first",
                f"first vs {base.dynamodb}",
                f"last vs {base.dynamodb}",
            ],
            lines,
        ),
    ]


def _request_notes(rows: list[dynamo_requests.RequestRow]) -> list[str]:
    return [
        "Why: a tool call names a conversation, not an instance, so the service first runs "
        "`list_conversation`: one Query of the conversation's partition, which holds every "
        "instance's home item (its fields' heads and its state, not its history; "
        "`docs/dynamodb.md`). The commit then reads nothing: the adapter remembers the state "
        "it just read (by instance and version) and sends one write conditioned on the "
        "version. A container that never saw the instance costs the same, since the locate "
        "step reads it anyway. A hook that fires (the policy-cap checkpoint) is dispatched "
        "in-process after the commit and commits again. A conflict costs the refused write, "
        "one GetItem of the home item, and the retried write.",
    ]


if __name__ == "__main__":
    raise SystemExit(main())
