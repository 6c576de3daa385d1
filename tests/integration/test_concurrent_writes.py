"""Concurrent writers to distinct fields of one instance, on DynamoDB, on a CPU-starved machine.

The commit loop counts conflicts, never time (``forms.app.loop``): a write overtaken by
others is planned again on what they wrote, so every writer lands, however much of the
machine's time other work eats. Here every core is kept busy for the test's duration (a
busy-loop process per core, and a busy-loop thread in the test's own process, which takes the
GIL from the writers), and a dozen writers commit at the same moment, with the service's real
jittered backoff, against moto's server and DynamoDB Local.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from forms import Caller, FormDef, FormRegistry, InProcessDispatcher, Step, field
from forms.storage.dynamodb import DynamoDBFormStore
from tests.support import form_service

WRITERS = 12
CALLER = Caller("alice", "conv-race")


class Many(Step, title="Many"):
    f00: str | None = field("Field 0")
    f01: str | None = field("Field 1")
    f02: str | None = field("Field 2")
    f03: str | None = field("Field 3")
    f04: str | None = field("Field 4")
    f05: str | None = field("Field 5")
    f06: str | None = field("Field 6")
    f07: str | None = field("Field 7")
    f08: str | None = field("Field 8")
    f09: str | None = field("Field 9")
    f10: str | None = field("Field 10")
    f11: str | None = field("Field 11")


MANY = FormDef(id="many", version=1, title="Many", steps=[Many])


@pytest.fixture
def starved_cpu() -> Iterator[None]:
    """Every core busy until the test ends: a busy-loop process per core, and a busy-loop
    thread here (holding the GIL the writers' threads need). Stopped after the test."""
    burners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(os.cpu_count() or 1)
    ]
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            sum(range(1_000))

    spinner = threading.Thread(target=spin, daemon=True)
    spinner.start()
    try:
        yield
    finally:
        stop.set()
        spinner.join(timeout=10)
        for burner in burners:
            burner.kill()
            burner.wait(timeout=10)


def test_writers_to_distinct_fields_all_land_while_the_cpu_is_starved(
    store: DynamoDBFormStore, starved_cpu: None
) -> None:
    # GIVEN one open form, and a dozen writers lined up, each to write a field of its own,
    # through a service with its default conflict bounds and real backoff
    service = form_service(FormRegistry([MANY]), store, InProcessDispatcher())
    started = service.call(CALLER, "form_start", "race-start", {"form": "many"})
    assert started["ok"], started
    instance = started["instance"]
    barrier = threading.Barrier(WRITERS)
    results: dict[int, dict[str, Any]] = {}

    def write(n: int) -> None:
        payload = {"form": "many", "instance": instance, "values": {f"f{n:02d}": f"value {n}"}}
        barrier.wait(timeout=60)
        results[n] = service.call(CALLER, "form_fill", f"race-{n:02d}", payload)

    # WHEN they all write at the same moment
    threads = [threading.Thread(target=write, args=(n,)) for n in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    # THEN every one landed (none answered busy), and every value is stored once
    assert sorted(results) == list(range(WRITERS))
    for n, result in results.items():
        assert result["ok"] is True, (n, result)
    stored = store.get(instance)
    for n in range(WRITERS):
        log = stored.field(f"f{n:02d}")
        assert [(r.value, r.tool_call_id) for r in log.revisions] == [
            (f"value {n}", f"race-{n:02d}")
        ]
