"""The first memory call of a process against the second: where a cold start's time goes.

``python -m bench.memory_first_call [--rounds N]`` starts AWS's DynamoDB Local, creates the
table from ``template.yaml``, states alice's date of birth and weight, and then, in fresh
interpreters (one per variant and round, interleaved), builds the App as the Lambda does
(``formwork.bootstrap`` on the environment's settings) and serves two ``form_start`` calls of
the health check-in for alice through ``formwork.aws.api.lambda_handler``. The JVM is warmed
before (each request the calls make, on a scratch partition), so what is measured is the
function's own first call, not DynamoDB Local's.

Variants, each in a process of its own:

- **as shipped**: the first call prepares memory (``Memory.prepare``) before the read's clock;
- **unprepared**: ``Memory.prepare`` made a no-op, so the read, the apply and the recording load
  what they need as they go (how memory ran before it had the step);
- **read alone**: no ``form_start``; the read of alice's memory started and waited for with
  the main thread idle, twice, so the difference with the first call's read is what the
  start's own work beside it costs (the GIL, and the machine's two cores).
- **delivery**: the shipped 200 ms deadline (the others wait up to 5 s), and after each
  ``form_start`` the agent's next call on the form (a ``form_fill`` of another field): whether
  memory's fill and offer reached the form within the first call (the start), and by the
  second (a recall that came late is delivered there, as offers), for the process's first
  start (cold) and its second (warm), and whether memory wrote any value after the start
  (a late fill; the goal is none, and 99% delivered by the second call).

Reported for each call: the read (worker start to end), when the main thread asked for it
(after the start's commit; the deadline used to be judged by this), the worker's CPU time, each
fact-store request, the thread start, the imports that ran inside the window, and, for the
first call, the one-time preparation (before the clock) and what the process loaded before the
read started (the vocabulary's build among it). Each figure is also given as a ratio to the
second call of the same process, the baseline: absolute times do not carry from one machine
or run to the next. The deadline is 5 s in these processes (but **delivery**'s), so every
read completes and its real duration is measured; whether it fits 200 ms is said beside it.
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import builtins
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

VARIANTS = ("as shipped", "unprepared", "read alone", "delivery")
PRINCIPAL = ("acme", "alice")
DEFAULT_DEADLINE_MS = 200
"""The deadline the figures are compared with (the processes themselves wait up to 5 s)."""


# ---------------------------------------------------------------------------- the child


class _Probe:
    """What one process records: marks on the clock, imports per thread, requests per thread,
    the worker's CPU time. Installed before the handler is imported."""

    def __init__(self) -> None:
        self.clock = time.perf_counter
        self.marks: dict[str, float] = {}
        self.imports: list[tuple[str, str, float, float]] = []
        self.requests: list[tuple[str, str, float, float]] = []
        self.worker_cpu: list[float] = []
        self.vocabulary_build = 0.0
        self._depth = threading.local()
        self._import = builtins.__import__
        builtins.__import__ = self._timed_import  # type: ignore[assignment]

    def reset(self) -> None:
        self.marks, self.imports, self.requests, self.worker_cpu = {}, [], [], []

    def mark(self, label: str) -> None:
        self.marks.setdefault(label, self.clock())

    def _timed_import(
        self,
        name: str,
        globals_: Any = None,
        locals_: Any = None,
        fromlist: Sequence[str] = (),
        level: int = 0,
    ) -> Any:
        if level or name in sys.modules or getattr(self._depth, "inside", False):
            return self._import(name, globals_, locals_, fromlist, level)
        self._depth.inside = True
        started = self.clock()
        try:
            return self._import(name, globals_, locals_, fromlist, level)
        finally:
            self._depth.inside = False
            thread = threading.current_thread().name
            self.imports.append((thread, name, started, self.clock()))

    def watch_client(self, client: Any) -> Any:
        """Time every DynamoDB request ``client`` makes, by thread."""
        begun: dict[int, float] = {}

        def before(**_: Any) -> None:
            begun[threading.get_ident()] = self.clock()

        def after(event_name: str, **_: Any) -> None:
            start = begun.pop(threading.get_ident(), self.clock())
            thread = threading.current_thread().name
            self.requests.append((thread, event_name.rsplit(".", 1)[1], start, self.clock()))

        client.meta.events.register("before-call.dynamodb.*", before)
        client.meta.events.register("after-call.dynamodb.*", after)
        return client


def _instrument(probe: _Probe, variant: str) -> None:
    """Wrap the builders and memory's steps so the probe sees them (nothing else changes)."""
    import formwork.application as application_module
    from forms import vocabulary as vocabulary_module
    from forms.app import memory as memory_module

    build_client = application_module.build_dynamodb_client  # type: ignore[attr-defined]

    def watched_client(settings: Any) -> Any:
        return probe.watch_client(build_client(settings))

    application_module.build_dynamodb_client = watched_client  # type: ignore[attr-defined]

    build_default = vocabulary_module._default

    def timed_default() -> Any:
        started = probe.clock()
        try:
            return build_default()
        finally:
            probe.vocabulary_build += probe.clock() - started

    vocabulary_module._default = timed_default  # type: ignore[assignment]

    memory = memory_module.Memory
    prepare, submit = memory.prepare, memory.submit

    def timed_prepare(self: Any) -> None:
        probe.mark("prepare")
        if variant != "unprepared":
            prepare(self)
        probe.mark("prepared")

    def timed_submit(self: Any, work: Callable[[], Any]) -> Any:
        if "prepare" in probe.marks and "prepared" not in probe.marks:
            return submit(self, work)  # the preparation's own (it starts the thread)
        n = len(probe.worker_cpu)
        probe.worker_cpu.append(0.0)
        probe.mark(f"submit {n}")

        def timed() -> Any:
            probe.mark(f"worker start {n}")
            cpu = time.thread_time()
            try:
                return work()
            finally:
                probe.worker_cpu[n] = time.thread_time() - cpu
                probe.mark(f"worker end {n}")

        return submit(self, timed)

    memory.prepare = timed_prepare  # type: ignore[method-assign]
    memory.submit = timed_submit  # type: ignore[method-assign]
    call = memory_module.MemoryCall
    begin, recalled = call.begin_recall, call.recalled

    def timed_begin(self: Any) -> None:
        probe.mark("begin")
        begin(self)
        probe.mark("begun")

    def timed_recalled(self: Any) -> Any:
        probe.mark("asked")
        return recalled(self)

    call.begin_recall = timed_begin  # type: ignore[method-assign]
    call.recalled = timed_recalled  # type: ignore[method-assign]


def _event(
    conversation: str, tool: str = "form_start", payload: dict[str, Any] | None = None
) -> dict[str, Any]:
    from bench.backend.inprocess import EVENTS

    event: dict[str, Any] = json.loads((EVENTS / "call_tool.json").read_text())
    tenant, sub = PRINCIPAL
    event["requestContext"]["authorizer"]["jwt"]["claims"].update(sub=sub, tenant=tenant)
    path = f"/conversations/{conversation}/tools/{tool}"
    event["rawPath"] = event["requestContext"]["http"]["path"] = path
    event["pathParameters"]["conversation_id"] = conversation
    body = {
        "tool_call_id": f"call-{uuid.uuid4().hex[:8]}",
        "input": payload if payload is not None else {"form": "health-check"},
    }
    event["body"] = json.dumps(body)
    return event


def _delivered(app: Any, invoke: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    """One start and the agent's next call on it: where memory's values reached the form."""
    conversation = f"bench-{uuid.uuid4().hex[:8]}"
    t = time.perf_counter()
    started = json.loads(invoke(_event(conversation), app=app)["body"])
    start_ms = round((time.perf_counter() - t) * 1000, 2)
    instance = started["instance"]
    filled = _by_memory(app, instance)
    payload = {"form": "health-check", "instance": instance, "values": {"feeling": "good"}}
    t = time.perf_counter()
    after = json.loads(invoke(_event(conversation, "form_fill", payload), app=app)["body"])
    next_ms = round((time.perf_counter() - t) * 1000, 2)
    return {
        "first": "memory" in started.get("summary", ""),
        "second": bool(after.get("offered_late")),
        "late fills": _by_memory(app, instance) - filled,
        "start ms": start_ms,
        "next ms": next_ms,
    }


def _by_memory(app: Any, instance_id: str) -> int:
    """How many values memory has written into the instance."""
    stored = app.service.store.get(instance_id)
    return sum(r.by == "memory" for h in stored.history.values() for r in h.revisions)


def _figures(probe: _Probe, started: float, ended: float) -> dict[str, Any]:
    """One call's figures, in milliseconds from the read's start (``begin``)."""
    marks = probe.marks
    zero = marks.get("prepared", marks.get("begin", started))

    def ms(a: float, b: float) -> float:
        return round((b - a) * 1000, 2)

    read_end = marks.get("worker end 0")
    worker = [r for r in probe.requests if r[0] != "MainThread" and r[2] >= zero]
    return {
        "total": ms(started, ended),
        "before read": ms(started, marks.get("prepare", zero)),
        "prepare": ms(marks.get("prepare", zero), zero),
        "thread start": ms(marks["submit 0"], marks["worker start 0"]),
        "read": ms(marks["worker start 0"], read_end) if read_end else None,
        "read from begin": ms(zero, read_end) if read_end else None,
        "asked": ms(zero, marks["asked"]) if "asked" in marks else None,
        "worker cpu": round(probe.worker_cpu[0] * 1000, 2),
        "requests": [(op, ms(a, b)) for _, op, a, b in worker],
        "main requests": [
            (op, ms(a, b)) for t, op, a, b in probe.requests if t == "MainThread" and a >= zero
        ],
        "imports in window": [
            (t, name, ms(a, b))
            for t, name, a, b in probe.imports
            if a >= zero and (read_end is None or a <= read_end) and b - a > 0.0005
        ],
        "imports in prepare": round(
            sum(b - a for t, _, a, b in probe.imports if marks.get("prepare", zero) <= a < zero)
            * 1000,
            2,
        ),
    }


def child(variant: str) -> None:
    """One fresh process: the handler imported as Lambda does, then two calls (or two reads)."""
    probe = _Probe()
    started = probe.clock()
    import formwork.aws.api  # noqa: F401 (the execution environment's init)

    init = probe.clock() - started
    _instrument(probe, variant)
    from formwork.aws.local import invoke
    from formwork.process import app as process_app

    app = process_app()
    calls = []
    before: dict[str, float] = {}
    if variant == "delivery":
        calls = [_delivered(app, invoke) for _ in range(2)]  # cold, then warm
    elif variant == "read alone":
        service_started = probe.clock()
        memory = app.service.memory
        assert memory is not None
        before["service build"] = round((probe.clock() - service_started) * 1000, 2)
        for _ in range(2):
            probe.reset()
            call = memory.call("/".join(PRINCIPAL), "conv", time.monotonic)
            t = probe.clock()
            call.begin_recall()
            known = call.recalled()
            figures = _figures(probe, t, probe.clock())
            figures["outcome"] = "read" if known is not None else "missed"
            calls.append(figures)
    else:
        for n in range(2):
            probe.reset()
            t = probe.clock()
            response = invoke(_event(f"bench-{uuid.uuid4().hex[:8]}-{n}"), app=app)
            figures = _figures(probe, t, probe.clock())
            summary = json.loads(response["body"]).get("summary", "")
            figures["outcome"] = "recalled" if "from memory" in summary else "not recalled"
            calls.append(figures)
    report = {
        "variant": variant,
        "init": round(init * 1000, 2),
        "vocabulary build": round(probe.vocabulary_build * 1000, 2),
        **before,
        "calls": calls,
    }
    sys.stderr.write("\nFIGURES " + json.dumps(report) + "\n")


# ---------------------------------------------------------------------------- the parent


def _seed(client: Any, table: str) -> dict[str, tuple[float, float]]:
    """Alice's date of birth (long ago: it fills) and weight (10 days: it is offered); and a
    scratch principal's reads and writes, so the JVM has served each request many times.
    Returns DynamoDB Local's own first and last time for each request (ms), as it warmed."""
    from forms.memory import Source, Statement, Vocabulary, plan_statement
    from forms.storage.dynamodb import DynamoDBFormStore
    from forms.storage.dynamodb_facts import DynamoDBFactStore

    facts = DynamoDBFactStore(client, table)
    timed: dict[str, list[float]] = {}

    def time_it(name: str, request: Callable[[], object]) -> None:
        started = time.perf_counter()
        request()
        timed.setdefault(name, []).append((time.perf_counter() - started) * 1000)

    now = datetime.now(UTC)
    for principal in ("/".join(PRINCIPAL), "bench/warm-up"):
        for key, value, age in (
            ("person.date_of_birth", "1990-04-02", 600),
            ("person.weight_kg", "70", 10),
        ):
            statement = Statement(
                key=key,
                value=value,
                source=Source(kind="api"),
                stated_at=now - timedelta(days=age),
            )
            head = facts.head(principal, key)
            planned = plan_statement(statement, head, vocabulary=Vocabulary.default(), now=now)
            time_it("TransactWriteItems", lambda: facts.append(principal, planned))  # type: ignore[arg-type]  # noqa: B023
    store = DynamoDBFormStore(client, table)
    for _ in range(20):  # the JVM's first requests of each kind are its own cold start
        time_it("GetItem", lambda: facts.settings("bench/warm-up"))
        time_it("Query", lambda: facts.heads("bench/warm-up"))
        time_it("Query (forms)", lambda: store.list_conversation("bench/warm-up", "none"))
    return {name: (ms[0], ms[-1]) for name, ms in timed.items()}


def _run_child(variant: str, environment: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "bench.memory_first_call", "--child", variant],
        env=environment,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    marker = done.stderr.rfind("FIGURES ")
    if done.returncode != 0 or marker < 0:
        raise RuntimeError(f"{variant}: the child failed:\n{done.stderr[-3000:]}")
    figures: dict[str, Any] = json.loads(done.stderr[marker + len("FIGURES ") :])
    return figures


def _median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _cell(values: Sequence[float | None], base: float | None = None) -> str:
    """Median (lowest-highest) in ms, and the ratio of the median to ``base``."""
    present = [v for v in values if v is not None]
    if not present:
        return "-"
    middle = statistics.median(present)
    text = f"{middle:.0f} ({min(present):.0f}-{max(present):.0f})"
    if base:
        text += f" ×{middle / base:.1f}"
    return text


def _request_ms(calls: Sequence[dict[str, Any]], operation: str) -> list[float | None]:
    return [next((ms for op, ms in call["requests"] if op == operation), None) for call in calls]


ROWS: tuple[tuple[str, Callable[[dict[str, Any]], float | None]], ...] = (
    ("whole call", lambda c: c["total"]),
    ("before the read (service build, compile, ...)", lambda c: c["before read"]),
    ("prepare (before the clock)", lambda c: c["prepare"]),
    ("  of which imports", lambda c: c["imports in prepare"]),
    ("thread start (submit to worker)", lambda c: c["thread start"]),
    ("read (worker start to end)", lambda c: c["read"]),
    ("  worker CPU", lambda c: c["worker cpu"]),
    ("  settings GetItem", lambda c: _request_ms([c], "GetItem")[0]),
    ("  heads Query", lambda c: _request_ms([c], "Query")[0]),
    ("main thread asked for it (from the read's start)", lambda c: c["asked"]),
)
"""The figures of each call, as printed."""


def _row(
    label: str,
    pick: Callable[[dict[str, Any]], float | None],
    first: Sequence[dict[str, Any]],
    second: Sequence[dict[str, Any]],
) -> str:
    """One figure: the first calls' median and range, as a ratio to the second calls'."""
    base = _median([pick(c) for c in second])
    earlier, later = _cell([pick(c) for c in first], base), _cell([pick(c) for c in second])
    return f"| {label} | {earlier} | {later} |"


def report(runs: Sequence[dict[str, Any]], jvm: dict[str, tuple[float, float]]) -> list[str]:
    lines = [
        "DynamoDB Local's own cold start (the JVM's first request of a kind, then its last of "
        "the warm-up, ms; warmed before any process below): "
        + ", ".join(f"{k} {a:.0f} then {b:.0f}" for k, (a, b) in jvm.items())
    ]
    for variant in VARIANTS:
        mine = [r for r in runs if r["variant"] == variant]
        if not mine or variant == "delivery":
            continue
        first = [r["calls"][0] for r in mine]
        second = [r["calls"][1] for r in mine]
        lines.append(f"\n## {variant} ({len(mine)} fresh processes)\n")
        lines.append("| ms (median, range) | first call | second call (baseline) |")
        lines.append("|---|--:|--:|")

        lines.extend(_row(label, pick, first, second) for label, pick in ROWS)
        fits = sum(1 for c in first if (c["read from begin"] or 1e9) <= DEFAULT_DEADLINE_MS)
        old = sum(
            1
            for c in first
            if max(c["read from begin"] or 1e9, c["asked"] or 0) <= DEFAULT_DEADLINE_MS
        )
        outcomes = sorted({c["outcome"] for c in first})
        lines.append(
            f"\nfirst calls whose read fits {DEFAULT_DEADLINE_MS} ms: {fits}/{len(first)} "
            f"(judged by when the main thread asked, as before: {old}/{len(first)}); "
            f"outcomes: {', '.join(outcomes)}"
        )
        seen: dict[str, list[float]] = {}
        for call in first:
            for thread, name, ms in call["imports in window"]:
                seen.setdefault(
                    f"{name} ({'worker' if thread != 'MainThread' else 'main'})", []
                ).append(ms)
        if seen:
            listed = ", ".join(f"{k} {statistics.median(v):.1f}" for k, v in sorted(seen.items()))
            lines.append(f"imports inside the first read's window (ms, median): {listed}")
        init = statistics.median(r["init"] for r in mine)
        vocabulary = statistics.median(r["vocabulary build"] for r in mine)
        lines.append(
            f"process: import formwork.aws.api {init:.0f} ms; Vocabulary.default() built in "
            f"{vocabulary:.0f} ms (before any read: the registry's compile check)"
        )
    return lines + delivery_report([r for r in runs if r["variant"] == "delivery"])


def delivery_report(runs: Sequence[dict[str, Any]]) -> list[str]:
    """Recall delivered within the first and by the second call, cold and warm."""
    if not runs:
        return []
    lines = [
        f"\n## delivery ({len(runs)} fresh processes, the shipped "
        f"{DEFAULT_DEADLINE_MS} ms deadline)\n",
        "| starts | count | within the first call | by the second call (goal 99%) "
        "| late fills (goal 0) | start ms (median) | next call ms (median) |",
        "|---|--:|--:|--:|--:|--:|--:|",
    ]
    for n, label in enumerate(("cold (a process's first)", "warm (its second)")):
        calls = [r["calls"][n] for r in runs]
        first = sum(c["first"] for c in calls)
        second = sum(c["first"] or c["second"] for c in calls)
        late = sum(c["late fills"] for c in calls)
        lines.append(
            f"| {label} | {len(calls)} | {first} ({100 * first / len(calls):.0f}%) "
            f"| {second} ({100 * second / len(calls):.0f}%) | {late} "
            f"| {statistics.median(c['start ms'] for c in calls):.0f} "
            f"| {statistics.median(c['next ms'] for c in calls):.0f} |"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.memory_first_call", description=__doc__)
    parser.add_argument("--rounds", type=int, default=5, help="fresh processes per variant")
    parser.add_argument(
        "--busy", type=int, default=0, help="CPU-bound processes beside, for a loaded machine"
    )
    parser.add_argument("--child", choices=VARIANTS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child)
        return
    from formwork.infra.local.dynamodb import client, create_table
    from formwork.infra.local.dynamodb_local import DynamoDBLocal

    with DynamoDBLocal() as dynamodb:
        table = f"formwork-bench-{uuid.uuid4().hex[:8]}"
        local = client(dynamodb.endpoint)
        create_table(local, table)
        jvm = _seed(local, table)
        environment = {
            **os.environ,
            "TABLE_NAME": table,
            "DYNAMODB_ENDPOINT_URL": dynamodb.endpoint,
            "TENANT_CLAIM": "tenant",
            "AWS_REGION": "us-east-1",
            "FORMWORK_MEMORY_DEADLINE_MS": "5000",
            "POWERTOOLS_LOG_LEVEL": "ERROR",
            "POWERTOOLS_METRICS_NAMESPACE": "FormworkBench",
        }
        busy = [
            subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)
        ]
        runs = []
        try:
            for n in range(args.rounds):
                for variant in VARIANTS:  # interleaved: the machine's drift hits each alike
                    shipped = {"FORMWORK_MEMORY_DEADLINE_MS": str(DEFAULT_DEADLINE_MS)}
                    env = {**environment, **shipped} if variant == "delivery" else environment
                    runs.append(_run_child(variant, env))
                print(f"round {n + 1}/{args.rounds} done", file=sys.stderr)
        finally:
            for process in busy:
                process.kill()
                process.wait()
    if args.busy:
        print(f"with {args.busy} CPU-bound processes beside")
    print("\n".join(report(runs, jvm)))


if __name__ == "__main__":
    main()
