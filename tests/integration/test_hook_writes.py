"""One write per hook state change, no redundant dispatch: the store writes and Temporal starts
one fired hook costs, counted, on the dev server with a worker process and DynamoDB.

A hook that ends within the tool call's wait is started once and never marked dispatched (its
run committed it done: a mark would be a write that says nothing, racing that commit); the
stream relay, given every record those commits wrote afterwards, starts nothing and writes
nothing (it decides on the stored state, where the hook is done). Nor does it when the record
arrives while the hook still runs and the call still waits for it (the entry then says never
dispatched): it looks at the run first, finds it going, and leaves it alone."""

# ruff: noqa: F811 - the fixtures imported below are parameters of the tests

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from forms.instance import Commit, FormInstance
from forms.storage.dynamodb import DynamoDBFormStore
from formwork.aws import relay
from formwork.aws.local import LocalContext
from formwork.config import Settings
from formwork.infra.local.dynamodb import LocalDynamoDB
from formwork.infra.local.streams import StreamReader
from formwork.infra.local.temporal import LocalTemporal, LocalWorker
from formwork.temporal import starter
from formwork.temporal.dispatch import TemporalConnection, TemporalDispatcher
from tests.integration.test_temporal_dispatch import (  # noqa: F401 - fixtures
    POLICY,
    connection,
    executions,
    fill_amount,
    flags,
    outcome_of,
    queue,
    runs,
    service_with,
    settings,
    start_claim,
    temporal,
    wait_until,
    worker,
    worker_env,
)
from tests.support import app_for


class Counting:
    """Counts what the code under test sends: commits to the store, start RPCs to Temporal."""

    def __init__(self, store: DynamoDBFormStore, connection: TemporalConnection) -> None:
        self.sent: Counter[str] = Counter()
        commit = store.commit
        run = connection.run

        def counted_commit(change: Commit) -> FormInstance:
            self.sent["commit"] += 1
            return commit(change)

        def counted_run(coro: Any, timeout: float | None = None) -> Any:
            self.sent[getattr(coro, "__qualname__", "").rsplit(".", 1)[-1]] += 1
            return run(coro, timeout)

        store.commit = counted_commit  # type: ignore[method-assign, assignment]
        connection.run = counted_run  # type: ignore[method-assign]


def test_a_hook_done_within_the_wait_costs_one_start_and_no_dispatch_write(
    store: DynamoDBFormStore,
    connection: TemporalConnection,
    queue: str,
    settings: Settings,
    local_dynamodb: LocalDynamoDB,
    table: str,
    temporal: LocalTemporal,
    worker: LocalWorker,
    flags: Path,
) -> None:
    # GIVEN a tool call that waits for its hooks, and a claim started
    dispatcher = TemporalDispatcher(connection, task_queue=queue, policy=POLICY, wait_ms=20_000)
    service = service_with(store, dispatcher)
    instance_id = start_claim(service)
    stream = StreamReader(local_dynamodb.endpoint, table)
    stream.read()  # the start's records: not what is counted
    counting = Counting(store, connection)

    # WHEN the agent fills the amount (its hook issues a receipt, whose own hook files it)
    result = fill_amount(service)
    key = result["fired"][0]
    assert {"key": key, "status": "done"} in result["hooks"]

    # THEN the call committed once (the answer), started one run, waited for it, and recorded
    # no dispatch: the run had committed the entry done
    assert counting.sent == Counter({"commit": 1, "_start": 1, "_wait": 1})
    entry = store.get(instance_id).state.outbox[key]
    assert entry.status == "done" and entry.dispatched_at is None
    assert len(executions(connection, key)) == 1

    # AND once the follow-up hook is done too, the relay, given every record written since,
    # starts nothing and writes nothing
    wait_until(
        lambda: all(e.status == "done" for e in store.get(instance_id).state.outbox.values()),
        "the follow-up hook to finish",
    )
    counting.sent.clear()
    app = app_for(service, settings=settings)
    response = relay.lambda_handler({"Records": stream.read()}, LocalContext(), app=app)
    assert response == {"batchItemFailures": []}
    assert counting.sent == Counter()
    assert all(len(executions(connection, k)) == 1 for k in store.get(instance_id).state.outbox)
    assert outcome_of(connection, key).status == "done"


def test_a_record_arriving_while_its_hook_runs_starts_nothing_and_writes_nothing(
    store: DynamoDBFormStore,
    connection: TemporalConnection,
    queue: str,
    settings: Settings,
    local_dynamodb: LocalDynamoDB,
    table: str,
    temporal: LocalTemporal,
    worker: LocalWorker,
    flags: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN Temporal starts counted wherever they come from (the call, the relay, the worker's
    # follow-ups go through formwork.temporal.starter in this process; the worker's own are its)
    started: Counter[str] = Counter()
    start_hook = starter.start_hook

    async def counted_start(client: Any, hook: Any, **options: Any) -> bool:
        started[hook.key] += 1
        return await start_hook(client, hook, **options)

    monkeypatch.setattr(starter, "start_hook", counted_start)
    dispatcher = TemporalDispatcher(connection, task_queue=queue, policy=POLICY, wait_ms=20_000)
    service = service_with(store, dispatcher)
    instance_id = start_claim(service)
    stream = StreamReader(local_dynamodb.endpoint, table)
    stream.read()  # the start's records: not what is counted

    # WHEN the agent fills the amount and its hook's executor is still running (blocked), the
    # call waiting for it, as the answer's stream record reaches the relay
    (flags / f"{instance_id}.block").touch()
    answered: list[dict[str, Any]] = []
    call = threading.Thread(target=lambda: answered.append(fill_amount(service)))
    call.start()
    wait_until(lambda: len(runs(flags, instance_id)) == 1, "the executor to start")
    ((key, _pid),) = runs(flags, instance_id)
    counting = Counting(store, connection)
    app = app_for(service, settings=settings)
    response = relay.lambda_handler({"Records": stream.read()}, LocalContext(), app=app)

    # THEN the relay started nothing and wrote nothing (it looked at the run: going)
    assert response == {"batchItemFailures": []}
    assert started == Counter({key: 1})
    assert counting.sent == Counter({"_start": 1})  # the look, through the connection
    assert store.get(instance_id).state.outbox[key].dispatched_at is None

    # AND once the executor goes on, the call sees it done and the relay, given every record
    # written since, starts nothing: one start per hook, the one run under its key
    (flags / f"{instance_id}.block").unlink()
    call.join(timeout=60)
    assert {"key": key, "status": "done"} in answered[0]["hooks"]
    wait_until(
        lambda: all(e.status == "done" for e in store.get(instance_id).state.outbox.values()),
        "the follow-up hook to finish",
    )
    relay.lambda_handler({"Records": stream.read()}, LocalContext(), app=app)
    assert started[key] == 1
    assert all(len(executions(connection, k)) == 1 for k in store.get(instance_id).state.outbox)
