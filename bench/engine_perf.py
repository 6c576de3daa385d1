"""Engine cost: one fill commit plus the open step's view, against form size and history length.

The measured state follows the anchor: every step before the last three complete on the x
branch... precisely: steps 1-2 complete on the x branch, step 3 open on the y branch with its
name answered and an x-branch answer held; the timed fill writes step 3's email and count.
Larger forms keep that state (later steps do not apply yet). The *open-steps* cases drop the
chain (``synthetic_form(..., chained=False)``): every later step applies and is still to do, so
the status line has all of them ahead (it previews the next three and counts the rest; it once
previewed every one). History length is grown by prior
fills that flip a step-1 answer back and forth (each appends one revision), so the form's shape
is unchanged while its log grows.

Timed: ``plan_fill`` + ``transition`` + ``step_view`` on the same base instance each round (the
engine is pure, so every round does identical work), and the whole tool call through
``FormService.call`` on the in-memory store. Absolute times do not carry from one run or
machine to the next, so every case is also reported as a ratio to a fixed in-process baseline
measured in the same run, interleaved with it (blocks of the baseline and the case in turn):
the standard library's JSON round trip of one small instance's JSON (nothing of Formwork's
own in it, so a change to Formwork cannot move the yardstick). The ratio's range is the
lowest and highest block. Verdicts are given only for goals that compare two figures of the
same run (the peer engine's, side by side, are ``bench.peer_perf``'s).
Nothing here is asserted.

Run: ``make bench`` (or ``.venv/bin/python -m bench.engine_perf [--publish]``): the report goes
to a folder of the run's own (``bench.runs``), or to ``bench/results/engine.md`` with
``--publish``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.document_forms import TENANT_CALLER, prepare_pair
from bench.reports import stamped
from bench.runs import output_dir
from bench.synthetic import synthetic_form, x_branch
from forms import (
    Caller,
    FormInstance,
    FormRegistry,
    FormService,
    InMemoryFormStore,
    compile_form,
    transition,
)
from forms.app.loop import CommitPolicy
from forms.app.service import jittered_backoff
from forms.examples.travel_claim import travel_claim
from forms.operations import Author, plan_fill, touched_steps
from forms.surface.view import step_view

CALLER = Caller("bench", "bench-conversation")


_TICK = timedelta(milliseconds=1)


class Clock:
    """The services' clock here: a millisecond later on every reading, so runs repeat. The
    tick is made once: a ``timedelta`` built on every reading made the clock cost 1.2 µs
    alone (about 2.5 µs in a tool call, which reads it once), charged to Formwork's call;
    production's clock (``datetime.now(UTC)``) costs about 0.5 µs alone, this one 0.2."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += _TICK
        return self.now


def _service(definition: Any) -> FormService:
    return _service_on(FormRegistry([definition]))


def _service_on(forms: Any) -> FormService:
    """A service on ``forms`` (a code registry or a tenant catalog), the in-memory store."""
    counter = iter(range(10**9))
    return FormService(
        forms,
        InMemoryFormStore(),
        None,
        clock=Clock(),
        new_id=lambda: f"fi_{next(counter)}",
        timer=time.monotonic,
        policy=CommitPolicy(backoff=jittered_backoff),
    )


def _ok(result: dict[str, Any]) -> dict[str, Any]:
    if not result.get("ok"):
        raise SystemExit(f"bench setup failed: {result}")
    return result


def prepare_synthetic(
    fields: int, history: int, chained: bool = True, steps: int | None = None
) -> tuple[FormService, FormInstance]:
    definition = synthetic_form(fields, chained, steps)
    size = 10 if steps is None else fields // steps
    service = _service(definition)
    form_id = definition.id
    call = 0

    def fill(values: dict[str, Any]) -> None:
        nonlocal call
        call += 1
        _ok(service.call(CALLER, "form_fill", f"c{call}", {"form": form_id, "values": values}))

    _ok(service.call(CALLER, "form_start", "c0", {"form": form_id}))
    few = len(definition.steps) < 3
    if few:
        # one step only: leave it open (count unanswered) so the timed fills do not close it
        fill({k: v for k, v in x_branch(1, size).items() if k != "count_1"})
    else:
        fill({**x_branch(1, size), **x_branch(2, size)})
    for n in range(history):
        fill({"name_1": "Ada" if n % 2 else "Adam"})
    if not few:
        if size > 5:  # an x-branch answer, held once step 3 turns to y
            fill({"kind_3": "x", "gx1_3": "held soon"})
        fill({"kind_3": "y", "name_3": "Grace"})
    instance = service.store.list_conversation(CALLER.principal, CALLER.conversation_id)[0]
    return service, instance


def prepare_travel() -> tuple[FormService, FormInstance]:
    service = _service(travel_claim)
    _ok(service.call(CALLER, "form_start", "c0", {"form": "travel-claim"}))
    _ok(
        service.call(
            CALLER,
            "form_fill",
            "c1",
            {"form": "travel-claim", "values": {"full_name": "Ada Lovelace", "staff_id": "AB1234"}},
        )
    )
    instance = service.store.list_conversation(CALLER.principal, CALLER.conversation_id)[0]
    return service, instance


def median_us(work: Callable[[], object], rounds: int, warm: float = 0.5) -> float:
    gc.collect()  # start each case from the same heap state, not the previous case's garbage
    warm_until = time.perf_counter() + warm  # caches, and a CPU that ramps its clock up
    while time.perf_counter() < warm_until:
        work()
    samples = []
    for _ in range(rounds):
        start = time.perf_counter_ns()
        work()
        samples.append(time.perf_counter_ns() - start)
    return statistics.median(samples) / 1000


def engine_round(service: FormService, instance: FormInstance, patch: dict[str, Any]) -> Any:
    form = compile_form(service.registry.latest(instance.form_id, instance.principal).definition)
    author = Author(source="agent", actor="bench", tool_call_id="t")
    now = datetime(2026, 6, 1, tzinfo=UTC)

    def work() -> object:
        plan = plan_fill(form, instance, patch, author, now)
        step = transition(
            form,
            instance,
            plan.changes,
            now,
            touched_steps=touched_steps(form, plan.changes, plan.unchanged),
        )
        open_step = step.evaluation.open_step or next(iter(form.steps))
        return step_view(form, step.after, step.evaluation, open_step)

    return work


def tool_round(
    service: FormService, form_id: str, values: list[dict[str, Any]], caller: Caller = CALLER
) -> Callable[[], dict[str, Any]]:
    counter = iter(range(10**9))

    def work() -> dict[str, Any]:
        n = next(counter)
        return service.call(
            caller, "form_fill", f"t{n}", {"form": form_id, "values": values[n % len(values)]}
        )

    return work


@dataclass(frozen=True)
class Measured:
    """One case: its median time, and its cost as a ratio to the baseline of the same run
    (the median of the blocks' ratios, with the lowest and the highest)."""

    us: float
    ratio: float
    low: float
    high: float

    def cell(self) -> str:
        return f"{self.ratio:.2f}× ({self.low:.2f}-{self.high:.2f})"


def baseline_work(instance: FormInstance) -> Callable[[], object]:
    """The fixed yardstick: ``json.loads`` then ``json.dumps`` of one small instance's JSON
    text, taken once (standard library only: a change to Formwork's models cannot move it)."""
    text = instance.model_dump_json()

    def work() -> object:
        return json.dumps(json.loads(text))

    return work


def measure(
    work: Callable[[], object], baseline: Callable[[], object], rounds: int, blocks: int = 5
) -> Measured:
    """``work`` against ``baseline``, in ``blocks`` interleaved pairs of ``rounds // blocks``."""
    per_block = max(1, rounds // blocks)
    median_us(work, 1)  # warm both for half a second each before the first block
    median_us(baseline, 1)
    ratios: list[float] = []
    medians: list[float] = []
    for _ in range(blocks):
        base = median_us(baseline, per_block, warm=0.05)
        case = median_us(work, per_block, warm=0.05)
        ratios.append(case / base)
        medians.append(case)
    return Measured(statistics.median(medians), statistics.median(ratios), min(ratios), max(ratios))


@dataclass(frozen=True)
class Row:
    case: str
    fields: int
    revisions: int
    engine: Measured
    tool: Measured
    status: int
    """The characters of the status line a timed tool call answers with."""
    steps: int = 0
    """The form's steps (0: the travel claim)."""
    chained: bool = True
    authored: bool = True
    """Steps of ten fields with the author's preview (False: a many-step shape)."""


SHAPES: tuple[tuple[int, int, bool, int | None], ...] = (
    (10, 0, True, None),
    (50, 0, True, None),
    (50, 1000, True, None),
    (50, 10000, True, None),
    (200, 0, True, None),
    (1000, 0, True, None),
    (200, 0, False, None),
    (1000, 0, False, None),
    (100, 0, False, 20),
    (1000, 0, True, 10),
    (1000, 0, False, 10),
    (1000, 0, False, 200),
)
"""The synthetic cases: (fields, prior revisions, chained, steps). Chained steps apply one after
the other; unchained ones (*open steps*) all apply from the start. ``steps`` None: ten fields a
step, each with the author's preview; a number: the many-step shapes, the same fields spread
over that many steps, whose previews the status line derives from their labels."""


def document_rows(baseline: Callable[[], object], patch: dict[str, Any], rounds: int) -> list[Row]:
    """The travel claim as a tenant's published document, then the same definition as a code
    form (``bench.document_forms``): the same fills on each."""
    rows = []
    for (service, instance), case in zip(
        prepare_pair(_service_on),
        ("travel-claim as a tenant's document", "the same, as code"),
        strict=True,
    ):
        fills = [{"destination": "Lisbon"}, {"destination": "Porto"}]
        engine = measure(engine_round(service, instance, patch), baseline, rounds)
        tool = measure(tool_round(service, "travel-claim", fills, TENANT_CALLER), baseline, rounds)
        status = _status_chars(service, "travel-claim", fills[0], TENANT_CALLER)
        fields = len(service.registry.latest("travel-claim", instance.principal).fields)
        rows.append(Row(case, fields, instance.revision_count(), engine, tool, status))
    return rows


def _status_chars(
    service: FormService, form_id: str, values: dict[str, Any], caller: Caller = CALLER
) -> int:
    """The length of the status line a one-field fill answers with."""
    result = _ok(service.call(caller, "form_fill", "status", {"form": form_id, "values": values}))
    return len(str(result.get("status_line", "")))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.engine_perf")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="timed rounds per case")
    parser.add_argument(
        "--publish", action="store_true", help="write bench/results/engine.md (tracked)"
    )
    args = parser.parse_args(argv)
    rounds: int = args.rounds
    rows: list[Row] = []
    service, instance = prepare_travel()
    baseline = baseline_work(instance)
    fields = len(service.registry.latest("travel-claim").fields)
    travel_patch: dict[str, Any] = {"destination": "Lisbon", "departure_date": "2026-03-03"}
    engine = measure(engine_round(service, instance, travel_patch), baseline, rounds)
    tool = measure(
        tool_round(service, "travel-claim", [{"destination": "Lisbon"}, {"destination": "Porto"}]),
        baseline,
        rounds,
    )
    status = _status_chars(service, "travel-claim", {"destination": "Lisbon"})
    rows.append(
        Row("travel-claim, step 2/4", fields, instance.revision_count(), engine, tool, status)
    )
    for size, history, chained, steps in SHAPES:
        service, instance = prepare_synthetic(size, history, chained, steps)
        count = len(service.registry.latest(instance.form_id).steps)
        k = 3 if count >= 3 else 1
        patch = {f"email_{k}": "grace@example.com", f"count_{k}": 7}
        engine = measure(engine_round(service, instance, patch), baseline, rounds)
        tool = measure(
            tool_round(
                service,
                instance.form_id,
                [{f"email_{k}": "g@example.com"}, {f"email_{k}": "h@example.com"}],
            ),
            baseline,
            rounds,
        )
        label = f"synthetic, {size} fields" + (
            f", {count} open steps" if not chained else f" in {count} steps" if steps else ""
        )
        status = _status_chars(service, instance.form_id, {f"email_{k}": "i@example.com"})
        rows.append(
            Row(
                label,
                size,
                instance.revision_count(),
                engine,
                tool,
                status,
                count,
                chained,
                steps is None,
            )
        )
    rows += document_rows(baseline, travel_patch, rounds)
    base_us = median_us(baseline, rounds)
    lines = report(rows, base_us, rounds)
    print("\n".join(lines))
    out = output_dir(args.publish) / "engine.md"
    out.write_text(stamped("engine.md", "\n".join(lines) + "\n"))
    print(f"\nwrote {out}")


def report(rows: list[Row], base_us: float, rounds: int) -> list[str]:
    travel = rows[0]
    none = next(r for r in rows if r.fields == 50 and r.revisions < 100)
    deep = max((r for r in rows if r.fields == 50), key=lambda r: r.revisions)
    synthetic = [r for r in rows if r.steps]
    as_document, as_code = rows[-2:]
    published = _quotient(as_document.tool, as_code.tool)
    chained = [r for r in synthetic if r.chained and r.authored]
    largest = next(r for r in chained if r.fields == 1000)
    sizes = [r for r in chained if r.revisions < 100]
    fixed, per_field = _fit([(r.fields, r.tool.us) for r in sizes])
    one_field = _quotient(largest.tool, travel.tool)
    open_20, open_100 = (r for r in synthetic if not r.chained and r.authored)
    few, many = (r for r in synthetic if not r.chained and not r.authored and r.fields == 1000)
    steps_engine = _quotient(many.engine, few.engine)
    steps_tool = _quotient(many.tool, few.tool)
    in_10 = next(r for r in synthetic if r.chained and not r.authored)
    in_10_fill = _quotient(in_10.tool, travel.tool)
    open_fill = _quotient(open_100.tool, travel.tool)
    status_growth = open_100.status / open_20.status
    history_engine = _quotient(deep.engine, none.engine)
    history_tool = _quotient(deep.tool, none.tool)
    lines = [
        "# Engine cost",
        "",
        f"Written by `python -m bench.engine_perf` on {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {rounds} timed rounds per case in five",
        "blocks interleaved with the baseline. Nothing asserted.",
        "",
        "*engine*: `plan_fill` + `transition` + the open step's view, in process, on the same",
        "base instance each round. *tool call*: the whole `FormService.call` (validation, the",
        "commit on the in-memory store, the result with its status line), a one-field fill.",
        "*baseline*: a JSON round trip (`json.loads`, `json.dumps`) of the travel claim's "
        f"instance as JSON text, {base_us:.0f} µs",
        "in this run. Ratios are to the baseline, median of the five blocks (lowest-highest):",
        "compare ratios across runs, not microseconds.",
        "",
        "| case | fields | revisions | engine µs | engine / baseline | tool call µs "
        "| tool call / baseline | status line chars |",
        "|---|--:|--:|--:|--:|--:|--:|--:|",
        *(
            f"| {r.case} | {r.fields} | {r.revisions:,} | {r.engine.us:.0f} | {r.engine.cell()} "
            f"| {r.tool.us:.0f} | {r.tool.cell()} | {r.status:,} |"
            for r in rows
        ),
        "",
        "*open steps*: the synthetic form without its chain, every step applying from the start,",
        "so all of them are ahead in the status line (which previews the next three and counts",
        "the rest). *in N steps*, and the open-step forms of 20, 10 and 200 steps: the many-step",
        "shapes, whose steps carry no author's preview (the status line derives each preview it",
        "shows from the step's labels); 1,000 fields in 10 steps are 100 a step, in 200 steps 5.",
        "The *engine* figure includes the open step's read, which lists every field of that step",
        "(100 rows in 10 steps, 5 in 200), so it follows the size of a step; flatness in the",
        "number of steps is best read on the tool call, whose status line lists at most eight",
        "pending labels.",
        "",
        "*as a tenant's document*: the claim exported as a document (its code predicates and",
        "executor left out, as a document cannot hold them) and published for the caller's",
        "tenant, so the form is found through the catalog; *the same, as code*: that very",
        "definition in the code registry (`bench/document_forms.py`).",
        "",
        "## Goals judged within this run",
        "",
        "| goal | measured (range) | verdict |",
        "|---|---|---|",
        f"| a one-field fill on the 1,000-field form within 2× of the same fill on the "
        f"{travel.fields}-field claim | {ratio_range(one_field)} "
        f"| {goal_verdict(one_field, 2.0)} |",
        f"| the same on 1,000 fields in 100 open steps | {ratio_range(open_fill)} "
        f"| {goal_verdict(open_fill, 2.0)} |",
        f"| the same on 1,000 fields in {in_10.steps} steps of {1000 // in_10.steps} "
        f"| {ratio_range(in_10_fill)} | {goal_verdict(in_10_fill, 2.0)} |",
        f"| flat in steps: a one-field fill on 1,000 fields in {many.steps} open steps within 10% "
        f"of the same in {few.steps} (engine) | {ratio_range(steps_engine)} "
        f"| {goal_verdict(steps_engine, 1.10)} |",
        f"| the same, the whole tool call | {ratio_range(steps_tool)} "
        f"| {goal_verdict(steps_tool, 1.10)} |",
        f"| the status line on 100 open steps within 10% of its length on 20 "
        f"| {status_growth:.2f}× ({open_100.status:,} / {open_20.status:,} chars) "
        f"| {'met' if status_growth <= 1.10 else 'missed'} |",
        f"| a tenant's published form within 10% of the same definition as a code form "
        f"(tool call) | {ratio_range(published)} | {goal_verdict(published, 1.10)} |",
        f"| 10,000 prior revisions cost within 10% of none (engine, 50 fields) "
        f"| {ratio_range(history_engine)} | {goal_verdict(history_engine, 1.10)} |",
        f"| the same, the whole tool call | {ratio_range(history_tool)} "
        f"| {goal_verdict(history_tool, 1.10)} |",
        "",
        f"Cost against form size (tool call, least squares over {len(sizes)} sizes): about "
        f"{fixed:.0f} µs fixed plus {per_field:.2f} µs per field in this run. A write evaluates",
        "only what depends on the fields it changed (`forms/incremental.py`), so nearly all of",
        "the cost is fixed: planning and validating the write, the commit and its copies, the",
        "call record for replays, the result and its status line.",
        "",
        "## The peer engine",
        "",
        "Side by side with Formwork in one run, the engines taking turns: `bench/results/peer.md`",
        "(`python -m bench.peer_perf`; it needs the peer's sources, which this repository does",
        "not hold: `bench/peer/README.md`).",
    ]
    return lines


def _quotient(top: Measured, bottom: Measured) -> tuple[float, float, float]:
    """``top`` over ``bottom`` through their ratios to the same baseline: (value, low, high)."""
    return top.ratio / bottom.ratio, top.low / bottom.high, top.high / bottom.low


def ratio_range(q: tuple[float, float, float]) -> str:
    """A ratio as the reports print it: the value, then the range in brackets."""
    return f"{q[0]:.2f}× ({q[1]:.2f}-{q[2]:.2f})"


def goal_verdict(q: tuple[float, float, float], goal: float) -> str:
    """A ratio ``(value, low, high)`` against an upper bound ``goal``: met only when its
    whole range is at or under it, missed when all of it is over, else within the noise
    (on the side its value falls)."""
    value, low, high = q
    if high <= goal:
        return "met"
    if low > goal:
        return f"missed: {value / goal:.1f}× the goal"
    return "within the noise of the goal" if value <= goal else "missed within the noise"


def _fit(points: list[tuple[int, float]]) -> tuple[float, float]:
    """Least squares ``y = a + b x``: (a, b)."""
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    var = sum((x - mean_x) ** 2 for x, _ in points)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / var
    return mean_y - slope * mean_x, slope


ROUNDS = 1000


if __name__ == "__main__":
    main()
