"""The hook path, measured from outside: what a tool call that fires an executor costs on
Temporal against in-process dispatch, on the local stack (``make dev``'s), and where the
difference goes.

Two local stacks on one DynamoDB Local: one with in-process dispatch, one with the Temporal dev
server and a worker (``infra.local.stack``). Each round starts a travel claim over HTTP twice on
each stack, in turns: once over the policy cap (its checkpoint's executor fires and the call
waits for it, ``FORMWORK_HOOK_WAIT_MS``) and once under it (no executor). Client-side times,
medians and p99 of this run; ratios within it.

Then the same firing call in this process, through ``functions.api.lambda_handler`` with the
Temporal stack's settings (its table, its Temporal, its worker), with the dispatcher's three
steps timed: starting the run (one ``start_workflow`` RPC), recording ``dispatched_at`` (one
compare-and-set commit), and waiting for the run's result (the worker picks up the workflow
task, schedules the activity, picks it up, runs the executor and commits its effects, then
the workflow task that completes the run). Last, a floor: a bare workflow running one no-op
activity on a dev server of its own, worker and client in this process
(``bench.backend.bare_temporal``).

    python -m bench.hook_path_perf            # prints the report, writes it to the run's folder
    python -m bench.hook_path_perf --publish  # writes bench/results/hook_path.md (tracked)
    python -m bench.hook_path_perf --rounds 5 # a smoke run
"""

from __future__ import annotations

import argparse
import os
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Coroutine
from statistics import median, quantiles
from typing import Any

from bench.backend import bare_temporal
from bench.backend.client import ApiClient
from bench.backend.inprocess import (
    body_of,
    function_environment,
    invoke,
    lambda_like_environment,
    tool_event,
)
from bench.reports import stamped
from bench.runs import output_dir
from infra.local.dynamodb_local import DynamoDBLocal
from infra.local.stack import LocalStack

OVER_CAP = {"form": "travel-claim", "values": {"full_name": "Ana", "total": 9999}}
UNDER_CAP = {"form": "travel-claim", "values": {"full_name": "Ana", "total": 100}}


def p99(values: list[float]) -> float:
    return quantiles(values, n=100)[-1] if len(values) > 1 else values[0]


def outside(rounds: int, server: DynamoDBLocal) -> dict[tuple[str, str], list[float]]:
    """HTTP times (ms) by (dispatch, firing or not)."""
    times: dict[tuple[str, str], list[float]] = defaultdict(list)
    stacks = {
        "in-process": LocalStack(api_port=0, quiet=True, dynamodb=server, table_name=name()),
        "Temporal": LocalStack(
            api_port=0,
            quiet=True,
            dynamodb=server,
            table_name=name(),
            temporal=True,
            temporal_port=0,
        ),
    }
    try:
        clients = {}
        for label, stack in stacks.items():
            stack.start()
            clients[label] = ApiClient(stack.api_url, "bench")
        for n in range(rounds + 5):  # the first five warm each stack up, untimed
            for label, client in clients.items():
                for kind, tool_input in (("fires", OVER_CAP), ("fires none", UNDER_CAP)):
                    reply = client.call(f"c{n}-{kind[-4:]}", "form_start", f"call-{n}", tool_input)
                    assert reply.ok, reply.body
                    assert bool(reply.body.get("fired")) == (kind == "fires"), reply.body
                    if n >= 5:
                        times[(label, kind)].append(reply.seconds * 1000)
        return times
    finally:
        for stack in stacks.values():
            stack.stop()


def breakdown(rounds: int, server: DynamoDBLocal) -> dict[str, list[float]]:
    """The firing call in this process on the Temporal stack, its dispatch steps timed (ms)."""
    from formwork.bootstrap import bootstrap
    from formwork.config import Settings
    from workflows import dispatch

    steps: dict[str, list[float]] = defaultdict(list)
    waits_ended: list[float] = []
    """When each wait returned (wall clock, the server's too: one machine)."""
    original_run = dispatch.TemporalConnection.run

    def timed_run(
        self: dispatch.TemporalConnection, coro: Coroutine[Any, Any, Any], timeout: Any = None
    ) -> Any:
        started = time.perf_counter()
        try:
            return original_run(self, coro, timeout)
        finally:
            step = getattr(coro, "__qualname__", "").rsplit(".", 1)[-1]
            steps[step].append((time.perf_counter() - started) * 1000)
            if step == "_wait":
                waits_ended.append(time.time())

    stack = LocalStack(
        api_port=0, quiet=True, dynamodb=server, table_name=name(), temporal=True, temporal_port=0
    )
    stack.start()
    saved = dict(os.environ)
    try:
        os.environ.update({**function_environment(stack.table_name), **stack.wired_environment})
        app = bootstrap(Settings.from_env())
        service = app.service
        mark: Callable[..., Any] = service.mark_dispatched

        def timed_mark(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return mark(*args, **kwargs)
            finally:
                steps["mark_dispatched"].append((time.perf_counter() - started) * 1000)

        service.mark_dispatched = timed_mark  # type: ignore[method-assign]
        dispatch.TemporalConnection.run = timed_run  # type: ignore[method-assign]
        keys: list[str] = []
        for n in range(rounds + 5):
            started = time.perf_counter()
            response = invoke(tool_event(f"b{n}", "form_start", f"call-{n}", OVER_CAP), app)
            total = (time.perf_counter() - started) * 1000
            if n < 5:
                steps.clear()
                waits_ended.clear()
            else:
                steps["whole call"].append(total)
                keys += body_of(response).get("fired", [])
        read_histories(dispatch.connection_for(app.settings.temporal), keys, waits_ended, steps)
        return steps
    finally:
        dispatch.TemporalConnection.run = original_run  # type: ignore[method-assign]
        os.environ.clear()
        os.environ.update(saved)
        stack.stop()


HISTORY_STEPS = (
    ("workflow task picked up", "WORKFLOW_TASK_SCHEDULED", "WORKFLOW_TASK_STARTED"),
    ("workflow task run", "WORKFLOW_TASK_STARTED", "WORKFLOW_TASK_COMPLETED"),
    ("activity picked up", "ACTIVITY_TASK_SCHEDULED", "ACTIVITY_TASK_STARTED"),
    ("activity run (executor, its commit)", "ACTIVITY_TASK_STARTED", "ACTIVITY_TASK_COMPLETED"),
    (
        "second workflow task, to completion",
        "ACTIVITY_TASK_COMPLETED",
        "WORKFLOW_EXECUTION_COMPLETED",
    ),
    ("run start to completion", "WORKFLOW_EXECUTION_STARTED", "WORKFLOW_EXECUTION_COMPLETED"),
)
"""Gaps between events of a run's history (the server's clock): where a run's time goes."""


async def gaps(connection: Any, key: str) -> dict[str, float]:
    """The ``HISTORY_STEPS`` of the run of ``key``, in ms (first occurrence of each event)."""
    from temporalio.api.enums.v1 import EventType

    client = await connection.client()
    history = await client.get_workflow_handle(key).fetch_history()
    when: dict[str, float] = {}
    for event in history.events:
        name = EventType.Name(event.event_type).removeprefix("EVENT_TYPE_")
        when.setdefault(name, event.event_time.ToDatetime().timestamp())
    found = {
        step: (when[end] - when[start]) * 1000
        for step, start, end in HISTORY_STEPS
        if start in when and end in when
    }
    found["completed at"] = when["WORKFLOW_EXECUTION_COMPLETED"]
    return found


SEEN = "the call sees the result (after the run completed)"


def read_histories(
    connection: Any, keys: list[str], waits_ended: list[float], steps: dict[str, list[float]]
) -> None:
    """Add each run's ``HISTORY_STEPS`` to ``steps``, and how long after its completion the
    call's wait returned (``SEEN``)."""
    for key, ended in zip(keys, waits_ended, strict=True):
        found = connection.run(gaps(connection, key), timeout=30)
        completed = found.pop("completed at")
        for step, ms in found.items():
            steps[step].append(ms)
        steps[SEEN].append((ended - completed) * 1000)


def name() -> str:
    return f"hooks-{uuid.uuid4().hex[:8]}"


def tables(times: dict[tuple[str, str], list[float]], steps: dict[str, list[float]]) -> str:
    lines = [
        "| dispatch | call | calls | p50 | p99 | p50 vs in-process | p50 extra |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for kind in ("fires", "fires none"):
        base = median(times[("in-process", kind)])
        for label in ("in-process", "Temporal"):
            found = times[(label, kind)]
            lines.append(
                f"| {label} | {kind} an executor | {len(found)} | {median(found):.1f} ms | "
                f"{p99(found):.1f} ms | {median(found) / base:.2f}× | "
                f"{median(found) - base:+.1f} ms |"
            )
    lines += [
        "",
        "| step of a firing call on Temporal (in this process) | p50 | p99 | share of the call |",
        "|---|---:|---:|---:|",
    ]
    whole = median(steps["whole call"])
    for step in (
        "whole call",
        "_start",
        "mark_dispatched",
        "_wait",
        *(step for step, _, _ in HISTORY_STEPS),
        SEEN,
        *(step for step in steps if step.startswith("bare ")),
    ):
        found = steps.get(step, [0.0])
        lines.append(
            f"| {step} | {median(found):.1f} ms | {p99(found):.1f} ms | "
            f"{median(found) / whole:.0%} |"
        )
    return "\n".join(lines)


BARE = "bare one-activity workflow (no Formwork): "


def findings(times: dict[tuple[str, str], list[float]], steps: dict[str, list[float]]) -> str:
    """What this run's figures say: the extra a firing call pays on Temporal, and which parts
    of it are the workflow's tasks and which are Formwork's."""

    def p50(step: str) -> float:
        return median(steps.get(step) or [0.0])

    extra = median(times[("Temporal", "fires")]) - median(times[("in-process", "fires")])
    quiet = median(times[("Temporal", "fires none")]) - median(times[("in-process", "fires none")])
    picked, ran = p50("workflow task picked up"), p50("workflow task run")
    second = p50("second workflow task, to completion")
    workflow = picked + ran + second
    bare, bare_picked = p50(BARE + "start to result"), p50(BARE + "workflow task picked up")
    start, mark, activity = p50("_start"), p50("mark_dispatched"), p50("activity picked up")
    executor, seen = p50("activity run (executor, its commit)"), p50(SEEN)
    ours = start + mark + activity + seen
    bound = (
        "the two workflow tasks of a `HookWorkflow`"
        if workflow >= ours
        else "Formwork's own parts, more than the workflow's tasks"
    )
    write = (
        "no dispatch write for a hook done within the wait (`mark_dispatched` "
        f"{mark:.1f} ms at p50)"
        if mark < 1
        else f"the dispatch write {mark:.1f} ms"
    )
    return (
        f"On Temporal a firing call paid {extra:+.1f} ms at p50 over in-process in this run, "
        f"and a call that fires nothing {quiet:+.1f} ms. What bounds it: {bound} (the first "
        f"picked up in {picked:.0f} ms and run in {ran:.0f} ms; {second:.0f} ms from the "
        f"activity's end to the run completed: {workflow:.0f} ms together), on a server where "
        f"a bare one-activity workflow with nothing of Formwork's takes {bare:.0f} ms from "
        f"start to result (its first workflow task alone waits {bare_picked:.0f} ms to be "
        f"picked up). Formwork's own parts: the start {start:.1f} ms, the activity picked up "
        f"in {activity:.1f} ms, the executor and its commit {executor:.0f} ms (what in-process "
        f"pays too), the result seen {seen:.1f} ms after the run completed (a long poll), and "
        f"{write}. [docs/dispatch.md](../../docs/dispatch.md#what-a-firing-call-costs-on-temporal)"
        " has what was tried."
    )


def render(
    rounds: int, times: dict[tuple[str, str], list[float]], steps: dict[str, list[float]]
) -> str:
    """The report of one run (title first, for ``stamped``)."""
    return "\n".join(
        [
            "# The hook path on Temporal",
            "",
            f"Written by `python -m bench.hook_path_perf --rounds {rounds}`. Two local stacks on "
            "one DynamoDB Local (in-process dispatch; the Temporal dev server and one worker), a "
            "travel claim started over HTTP over its policy cap (its checkpoint's executor "
            "fires; the call waits for it) or under it (nothing fires), in turns; client-side "
            "times, ratios within this run. Then the firing call in the bench's process on the "
            "Temporal stack, the dispatcher's steps timed and the run's history read (server's "
            "clock), and last a floor: a bare workflow running one no-op activity on a dev "
            "server of its own, its worker and client in one process "
            "(`bench/backend/bare_temporal.py`). The machine is shared (2 cores): absolute "
            "times move by tens of percent from one run to the next; compare within the run. "
            "Nothing here is asserted.",
            "",
            tables(times, steps),
            "",
            findings(times, steps),
            "",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument(
        "--publish", action="store_true", help="write bench/results/hook_path.md (tracked)"
    )
    args = parser.parse_args(argv)
    lambda_like_environment()
    with DynamoDBLocal() as server:
        times = outside(args.rounds, server)
        steps = breakdown(args.rounds, server)
    for step, found in bare_temporal.measure(args.rounds).items():
        steps[BARE + step] = found
    text = render(args.rounds, times, steps)
    print(text)
    out = output_dir(args.publish) / "hook_path.md"
    out.write_text(stamped("hook_path.md", text))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
