"""One write per hook state change, no redundant dispatch: the store writes and Temporal starts
one fired hook costs, counted, on the dev server with a worker process and DynamoDB.

A hook that ends within the tool call's wait is started once and never marked dispatched (its
run committed it done: a mark would be a write that says nothing, racing that commit); the
stream relay, given every record those commits wrote afterwards, starts nothing and writes
nothing (it decides on the stored state, where the hook is done)."""

# ruff: noqa: F811 - the fixtures imported below are parameters of the tests

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from forms.instance import Commit, FormInstance
from forms.storage.dynamodb import DynamoDBFormStore
from formwork.config import Settings
from functions import relay
from functions.local import LocalContext
from infra.local.dynamodb import LocalDynamoDB
from infra.local.streams import StreamReader
from infra.local.temporal import LocalTemporal, LocalWorker
from tests.integration.test_temporal_dispatch import (  # noqa: F401 - fixtures
    POLICY,
    connection,
    executions,
    fill_amount,
    flags,
    outcome_of,
    queue,
    service_with,
    settings,
    start_claim,
    temporal,
    wait_until,
    worker,
    worker_env,
)
from tests.support import app_for
from workflows.dispatch import TemporalConnection, TemporalDispatcher


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
