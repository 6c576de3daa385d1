"""Slow hooks never hold a tool call (``forms.hook_speed``): one declared slow, or learned slow
from its runs, is started and not waited for, and the result says it is running; a fast one
is waited for as before. The Temporal dispatcher against a stand-in client whose runs end when
the test says."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

from forms import FormDef, FormRegistry, FormService, HookContext, Patch, Step, field
from forms.app.conversation import Caller
from forms.hook_speed import HookTimes, declared_slow, slow
from forms.storage import InMemoryFormStore
from formwork.temporal.dispatch import TemporalConnection, TemporalDispatcher
from formwork.temporal.shared import HookPolicy
from tests.support import form_service

WAIT_MS = 5_000
"""The call's wait: long, so a call that waited shows in the time it took."""


@slow
def file_with_registry(ctx: HookContext) -> Patch:
    return Patch({"filed": True})


def stamp(ctx: HookContext) -> Patch:
    return Patch({"receipt": "R"})


class Claim(Step):
    title = "Claim"
    amount: int = field("Amount", on_fill=stamp)
    deed: str = field("Deed", on_fill=file_with_registry)
    receipt: str | None = field("Receipt")
    filed: bool | None = field("Filed")


FORM = FormDef(id="speed-claim", version=1, title="Speed claim", steps=[Claim])


class Client:
    """Starts runs and hands out handles whose ``result()`` ends when ``finish`` says (or at
    once for keys in ``quick``)."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.awaited: list[str] = []
        self.quick: set[str] = set()

    async def start_workflow(self, workflow: str, hook: Any, **options: Any) -> Any:
        self.started.append(options["id"])
        return None

    def get_workflow_handle(self, key: str) -> Any:
        client = self

        class Handle:
            async def result(self) -> None:
                client.awaited.append(key)
                if key not in client.quick:
                    await asyncio.sleep(3600)  # a run that does not end within the wait

        return Handle()


@pytest.fixture
def client() -> Client:
    return Client()


@pytest.fixture
def dispatcher(client: Client) -> Iterator[TemporalDispatcher]:
    async def connect() -> Any:
        return client

    connection = TemporalConnection(connect)
    yield TemporalDispatcher(connection, task_queue="hooks", policy=HookPolicy(), wait_ms=WAIT_MS)
    connection.close()


def fill(service: FormService, conversation: str, values: dict[str, Any]) -> dict[str, Any]:
    caller = Caller("alice", conversation)
    started = service.call(caller, "form_start", f"s-{conversation}", {"form": FORM.id})
    assert started["ok"], started
    fill_input = {"form": FORM.id, "values": values}
    result = service.call(caller, "form_fill", f"f-{conversation}", fill_input)
    assert result["ok"], result
    return result


def test_a_hook_declared_slow_is_started_and_not_waited_for(
    dispatcher: TemporalDispatcher, client: Client
) -> None:
    assert declared_slow(file_with_registry) and not declared_slow(stamp)
    service = form_service(FormRegistry([FORM]), InMemoryFormStore(), dispatcher)
    began = time.monotonic()
    result = fill(service, "c1", {"deed": "D-1"})
    took = time.monotonic() - began
    (key,) = result["fired"]
    assert client.started == [key] and client.awaited == []
    assert result["hooks"] == [{"key": key, "status": "pending"}]
    assert "(running)" in result["status_line"]
    assert took < WAIT_MS / 1000 / 2, took


def test_a_fast_hook_is_still_waited_for(dispatcher: TemporalDispatcher, client: Client) -> None:
    service = form_service(FormRegistry([FORM]), InMemoryFormStore(), dispatcher)
    dispatcher.wait_ms = 50
    result = fill(service, "c1", {"amount": 10})
    (key,) = result["fired"]
    assert client.awaited == [key]  # waited (and, this run not ending, recorded as slow)


def test_a_hook_learned_slow_is_no_longer_waited_for(
    dispatcher: TemporalDispatcher, client: Client
) -> None:
    service = form_service(FormRegistry([FORM]), InMemoryFormStore(), dispatcher)
    dispatcher.wait_ms = 20
    window = dispatcher.times.window
    for n in range(window):  # runs that outlast the wait (each counts as taking all of it)
        fill(service, f"c{n}", {"amount": n + 1})
    assert len(client.awaited) == window
    result = fill(service, "next", {"amount": 99})
    (key,) = result["fired"]
    assert key in client.started and key not in client.awaited
    assert result["hooks"] == [{"key": key, "status": "pending"}]


def test_hook_times_learn_slow_probe_and_learn_back() -> None:
    times = HookTimes(window=3, probe_every=4)
    hook = ("form", "field.x.filled")
    for _ in range(2):
        times.record(hook, 2_000)
    assert not times.slow(hook, 1_500)  # not enough runs yet
    times.record(hook, 2_000)
    answers = [times.slow(hook, 1_500) for _ in range(8)]
    assert answers == [True, True, True, False, True, True, True, False]  # a probe every 4th
    for _ in range(3):
        times.record(hook, 100)  # the probes found it fast again
    assert not times.slow(hook, 1_500)
    assert not times.slow(("form", "other"), 1_500)
    with pytest.raises(ValueError):
        HookTimes(window=0)
