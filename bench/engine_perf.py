"""Engine cost: one fill commit plus the open step's view, against form size and history length.

The measured state follows the anchor: every step before the last three complete on the x
branch... precisely: steps 1-2 complete on the x branch, step 3 open on the y branch with its
name answered and an x-branch answer held; the timed fill writes step 3's email and count.
Larger forms keep that state (later steps do not apply yet). History length is grown by prior
fills that flip a step-1 answer back and forth (each appends one revision), so the form's shape
is unchanged while its log grows.

Timed: ``plan_fill`` + ``transition`` + ``step_view`` on the same base instance each round (the
engine is pure, so every round does identical work), and the whole tool call through
``FormService.call`` on the in-memory store. Medians of many rounds; nothing here is asserted.

Run: ``make bench`` (or ``.venv/bin/python -m bench.engine_perf``).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

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
from forms.examples.travel_claim import travel_claim
from forms.operations import Author, plan_fill, touched_steps
from forms.view import step_view

CALLER = Caller("bench", "bench-conversation")


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now


def _service(definition: Any) -> FormService:
    counter = iter(range(10**9))
    return FormService(
        FormRegistry([definition]),
        InMemoryFormStore(),
        clock=Clock(),
        new_id=lambda: f"fi_{next(counter)}",
    )


def _ok(result: dict[str, Any]) -> dict[str, Any]:
    if not result.get("ok"):
        raise SystemExit(f"bench setup failed: {result}")
    return result


def prepare_synthetic(fields: int, history: int) -> tuple[FormService, FormInstance]:
    definition = synthetic_form(fields)
    service = _service(definition)
    form_id = definition.id
    call = 0

    def fill(values: dict[str, Any]) -> None:
        nonlocal call
        call += 1
        _ok(service.call(CALLER, "form_fill", f"c{call}", {"form": form_id, "values": values}))

    _ok(service.call(CALLER, "form_start", "c0", {"form": form_id}))
    fill({**x_branch(1), **x_branch(2)})
    for n in range(history):
        fill({"name_1": "Ada" if n % 2 else "Adam"})
    if fields >= 30:
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


def median_us(work: Callable[[], object], rounds: int) -> float:
    for _ in range(min(20, rounds)):
        work()
    samples = []
    for _ in range(rounds):
        start = time.perf_counter_ns()
        work()
        samples.append(time.perf_counter_ns() - start)
    return statistics.median(samples) / 1000


def engine_round(service: FormService, instance: FormInstance, patch: dict[str, Any]) -> Any:
    form = compile_form(service.registry.latest(instance.form_id).definition)
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


def tool_round(service: FormService, form_id: str, values: list[dict[str, Any]]) -> Any:
    counter = iter(range(10**9))

    def work() -> object:
        n = next(counter)
        return service.call(
            CALLER, "form_fill", f"t{n}", {"form": form_id, "values": values[n % len(values)]}
        )

    return work


def main(rounds: int = 400) -> None:
    print("Engine: one fill commit + open-step view (in-process, medians in µs)")
    print(f"{'case':<34}{'fields':>7}{'revisions':>11}{'engine':>9}{'tool call':>11}")
    rows: list[tuple[str, int, int, float, float]] = []
    service, instance = prepare_travel()
    patch = {"destination": "Lisbon", "departure_date": "2026-03-03"}
    engine = median_us(engine_round(service, instance, patch), rounds)
    tool = median_us(
        tool_round(service, "travel-claim", [{"destination": "Lisbon"}, {"destination": "Porto"}]),
        rounds,
    )
    rows.append(("travel-claim, step 2/4", 12, instance.revision_count(), engine, tool))
    for fields in (10, 50, 200, 1000):
        for history in (0, 1000, 10000) if fields == 50 else (0,):
            service, instance = prepare_synthetic(fields, history)
            k = 3 if fields >= 30 else 1
            patch = {f"email_{k}": "grace@example.com", f"count_{k}": 7}
            engine = median_us(engine_round(service, instance, patch), rounds)
            tool = median_us(
                tool_round(
                    service,
                    instance.form_id,
                    [{f"email_{k}": "g@example.com"}, {f"email_{k}": "h@example.com"}],
                ),
                rounds,
            )
            rows.append(
                (f"synthetic, {fields} fields", fields, instance.revision_count(), engine, tool)
            )
    for case, fields, revisions, engine, tool in rows:
        print(f"{case:<34}{fields:>7}{revisions:>11}{engine:>9.0f}{tool:>11.0f}")
    base = next(r for r in rows if r[1] == 50 and r[2] < 100)
    deep = max((r for r in rows if r[1] == 50), key=lambda r: r[2])
    print()
    print("anchor (Node 20): travel claim 104 µs; 50 fields 316 µs; after 10,000 revisions 402 µs")
    print(f"10,000 prior revisions vs none, engine: {deep[3] / base[3]:.2f}x (target within 1.10x)")


if __name__ == "__main__":
    main()
