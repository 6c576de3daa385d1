"""The hook path, measured from outside: what a tool call that fires an executor costs on
Temporal against in-process dispatch, on the local stack (``make dev``'s), and where the
difference goes.

Two local stacks on one DynamoDB Local: one with in-process dispatch, one with the Temporal dev
server and a worker (``formwork.infra.local.stack``). Each round starts a travel claim over
HTTP twice on each stack, in turns: once over the policy cap (its checkpoint's executor fires and
the call
waits for it, ``FORMWORK_HOOK_WAIT_MS``) and once under it (no executor). Client-side times,
medians and p99 of this run; ratios within it.

Then the same firing call in this process, through ``formwork.aws.api.lambda_handler`` with the
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
from formwork.infra.local.dynamodb_local import DynamoDBLocal
from formwork.infra.local.stack import LocalStack

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


MODES = {"local first": True, "ordinary": False}
"""The two ways a waited-for hook's first attempt can run, alternated call by call in one run:
as a local activity in the run's first workflow task (the dispatcher's default), or as an
ordinary activity like every later attempt (``TemporalDispatcher.local_first`` off)."""


class Timed:
    """The dispatcher's steps of each call (ms), by ``MODES``: the mode of the calls in hand
    is ``mode``."""

    def __init__(self) -> None:
        self.by_mode: dict[str, dict[str, list[float]]] = {m: defaultdict(list) for m in MODES}
        self.waits_ended: dict[str, list[float]] = defaultdict(list)
        """When each wait returned (wall clock, the server's too: one machine)."""
        self.mode = "local first"

    def add(self, step: str, started: float) -> None:
        self.by_mode[self.mode][step].append((time.perf_counter() - started) * 1000)
        if step == "_wait":
            self.waits_ended[self.mode].append(time.time())

    def clear(self) -> None:
        self.by_mode[self.mode].clear()
        self.waits_ended[self.mode].clear()

    def run(self, original: Callable[..., Any]) -> Callable[..., Any]:
        """``TemporalConnection.run``, each coroutine it runs timed under its name."""

        def timed(self_: Any, coro: Coroutine[Any, Any, Any], timeout: Any = None) -> Any:
            started = time.perf_counter()
            try:
                return original(self_, coro, timeout)
            finally:
                self.add(getattr(coro, "__qualname__", "").rsplit(".", 1)[-1], started)

        return timed

    def mark(self, original: Callable[..., Any]) -> Callable[..., Any]:
        """``FormService.mark_dispatched``, timed."""

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.add("mark_dispatched", started)

        return timed


def breakdown(rounds: int, server: DynamoDBLocal) -> dict[str, dict[str, list[float]]]:
    """The firing call in this process on the Temporal stack, its dispatch steps timed (ms),
    by ``MODES``."""
    from formwork.bootstrap import bootstrap
    from formwork.config import Settings
    from formwork.temporal import dispatch

    timed = Timed()
    keys: dict[str, list[str]] = defaultdict(list)
    original_run = dispatch.TemporalConnection.run
    stack = LocalStack(
        api_port=0, quiet=True, dynamodb=server, table_name=name(), temporal=True, temporal_port=0
    )
    stack.start()
    saved = dict(os.environ)
    try:
        os.environ.update({**function_environment(stack.table_name), **stack.wired_environment})
        app = bootstrap(Settings.from_env())
        dispatcher = app.dispatcher
        assert isinstance(dispatcher, dispatch.TemporalDispatcher), dispatcher
        app.service.mark_dispatched = timed.mark(app.service.mark_dispatched)  # type: ignore[method-assign]
        dispatch.TemporalConnection.run = timed.run(original_run)  # type: ignore[method-assign]
        for n in range(rounds + 5):
            for mode, local_first in MODES.items():
                timed.mode, dispatcher.local_first = mode, local_first
                event = tool_event(f"b{n}-{local_first}", "form_start", f"call-{n}", OVER_CAP)
                started = time.perf_counter()
                response = invoke(event, app)
                total = (time.perf_counter() - started) * 1000
                if n < 5:  # warming up, untimed
                    timed.clear()
                    continue
                timed.by_mode[mode]["whole call"].append(total)
                keys[mode] += body_of(response).get("fired", [])
        connection = dispatch.connection_for(app.settings.temporal)
        for mode, steps in timed.by_mode.items():
            read_histories(connection, keys[mode], timed.waits_ended[mode], steps)
        return timed.by_mode
    finally:
        dispatch.TemporalConnection.run = original_run  # type: ignore[method-assign]
        os.environ.clear()
        os.environ.update(saved)
        stack.stop()


PICKED = "workflow task picked up"
RAN = "workflow task run"
ACTIVITY_RUN = "activity run (executor, its commit)"
SECOND = "second workflow task, to completion"
HISTORY_STEPS = (
    (PICKED, "WORKFLOW_TASK_SCHEDULED", "WORKFLOW_TASK_STARTED"),
    (RAN, "WORKFLOW_TASK_STARTED", "WORKFLOW_TASK_COMPLETED"),
    ("activity picked up", "ACTIVITY_TASK_SCHEDULED", "ACTIVITY_TASK_STARTED"),
    (ACTIVITY_RUN, "ACTIVITY_TASK_STARTED", "ACTIVITY_TASK_COMPLETED"),
    (SECOND, "ACTIVITY_TASK_COMPLETED", "WORKFLOW_EXECUTION_COMPLETED"),
    ("run start to completion", "WORKFLOW_EXECUTION_STARTED", "WORKFLOW_EXECUTION_COMPLETED"),
)
"""Gaps between events of a run's history (the server's clock): where a run's time goes. A run
whose first attempt was local has one workflow task, whose run holds the executor and its
commit, and no activity events."""


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


def tables(
    times: dict[tuple[str, str], list[float]],
    by_mode: dict[str, dict[str, list[float]]],
    bare: dict[str, list[float]],
) -> str:
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
    local, ordinary = by_mode["local first"], by_mode["ordinary"]
    lines += [
        "",
        "| step of a firing call on Temporal (in this process) | first attempt local: p50 | "
        "p99 | every attempt an activity: p50 | p99 | local vs activity (p50) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for step in (
        "whole call",
        "_start",
        "mark_dispatched",
        "_wait",
        *(step for step, _, _ in HISTORY_STEPS),
        SEEN,
    ):
        cells = []
        for steps in (local, ordinary):
            found = steps.get(step) or [0.0]
            cells.append(f"{median(found):.1f} ms | {p99(found):.1f} ms")
        one, other = p50_of(local, step), p50_of(ordinary, step)
        ratio = f"{one / other:.2f}×" if other > 0 and one > 0 else "–"
        lines.append(f"| {step} | {cells[0]} | {cells[1]} | {ratio} |")
    lines += [
        "",
        "| floor: a bare one-activity workflow (no Formwork) | p50 | p99 |",
        "|---|---:|---:|",
    ]
    for step, found in bare.items():
        lines.append(f"| {step} | {median(found):.1f} ms | {p99(found):.1f} ms |")
    return "\n".join(lines)


def p50_of(steps: dict[str, list[float]], step: str) -> float:
    return median(steps.get(step) or [0.0])


def findings(
    times: dict[tuple[str, str], list[float]],
    by_mode: dict[str, dict[str, list[float]]],
    bare: dict[str, list[float]],
) -> str:
    """What this run's figures say: the extra a firing call pays on Temporal, what the local
    first attempt saves against an ordinary activity, and what is left."""
    local, ordinary = by_mode["local first"], by_mode["ordinary"]
    extra = median(times[("Temporal", "fires")]) - median(times[("in-process", "fires")])
    quiet = median(times[("Temporal", "fires none")]) - median(times[("in-process", "fires none")])
    saved = p50_of(ordinary, "whole call") - p50_of(local, "whole call")
    ratio = p50_of(local, "whole call") / p50_of(ordinary, "whole call")
    picked, ran = p50_of(local, PICKED), p50_of(local, RAN)
    second = p50_of(ordinary, SECOND)
    start, mark, seen = (
        p50_of(local, "_start"),
        p50_of(local, "mark_dispatched"),
        p50_of(local, SEEN),
    )
    executor = p50_of(ordinary, ACTIVITY_RUN)
    floor = median(bare.get("start to result") or [0.0])
    floor_picked = median(bare.get(PICKED) or [0.0])
    write = (
        "no dispatch write for a hook done within the wait (`mark_dispatched` "
        f"{mark:.1f} ms at p50)"
        if mark < 1
        else f"the dispatch write {mark:.1f} ms"
    )
    return (
        f"On Temporal a firing call paid {extra:+.1f} ms at p50 over in-process in this run "
        f"(the first attempt local, the default), and a call that fires nothing {quiet:+.1f} ms. "
        f"In this process, calls alternating the two ways: the local first attempt took "
        f"{ratio:.2f}× the time of an ordinary activity ({saved:.1f} ms less at p50), the "
        f"second workflow task ({second:.0f} ms from the activity's end to the run completed) "
        f"being gone. What still bounds it: the run's one workflow task, picked up "
        f"{picked:.0f} ms after the start and run in {ran:.0f} ms (the executor and its commit, "
        f"{executor:.0f} ms as an activity, what in-process pays too, inside it), on a server "
        f"where a bare one-activity workflow with nothing of Formwork's takes {floor:.0f} ms "
        f"from start to result (its first workflow task alone waits {floor_picked:.0f} ms to "
        f"be picked up). Formwork's own parts: the start {start:.1f} ms, the result seen "
        f"{seen:.1f} ms after the run completed (a long poll), and {write}. "
        "[docs/dispatch.md](../../docs/dispatch.md#what-a-firing-call-costs-on-temporal)"
        " has what was tried."
    )


def render(
    rounds: int,
    times: dict[tuple[str, str], list[float]],
    by_mode: dict[str, dict[str, list[float]]],
    bare: dict[str, list[float]],
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
            "Temporal stack, its first attempt made as a local activity and as an ordinary "
            "activity in alternate calls, the dispatcher's steps timed and the run's history "
            "read (server's clock), and last a floor: a bare workflow running one no-op "
            "activity on a dev server of its own, its worker and client in one process "
            "(`bench/backend/bare_temporal.py`). The machine is shared (2 cores): absolute "
            "times move by tens of percent from one run to the next; compare within the run. "
            "Nothing here is asserted.",
            "",
            tables(times, by_mode, bare),
            "",
            findings(times, by_mode, bare),
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
        by_mode = breakdown(args.rounds, server)
    bare = bare_temporal.measure(args.rounds)
    text = render(args.rounds, times, by_mode, bare)
    print(text)
    out = output_dir(args.publish) / "hook_path.md"
    out.write_text(stamped("hook_path.md", text))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
