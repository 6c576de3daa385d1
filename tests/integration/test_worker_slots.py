"""A dead worker holds nothing that never started: a worker takes only as many hook activities
as it has executor threads (``formwork.temporal.worker.build_worker``), so a hook queued behind a
busy worker stays in Temporal's task queue, and when that worker dies another picks it up at once,
as its first attempt, instead of after the heartbeat timeout.

On the dev server, with worker processes and DynamoDB."""

# ruff: noqa: F811 - the fixtures imported below are parameters of the tests

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType, PendingActivityState

from forms.app.conversation import Caller
from forms.storage.dynamodb import DynamoDBFormStore
from formwork.infra.local.temporal import LocalWorker
from formwork.temporal.dispatch import TemporalConnection, TemporalDispatcher
from formwork.temporal.shared import HookPolicy
from tests.integration.test_temporal_dispatch import (  # noqa: F401 - fixtures
    connection,
    fill_amount,
    flags,
    history,
    of_type,
    outcome_of,
    queue,
    runs,
    service_with,
    settings,
    start_claim,
    temporal,
    wait_until,
    worker_env,
)

HEARTBEAT = 30.0
"""Production's heartbeat timeout: what a queued hook would have waited for."""
SCHEDULED = PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED
STARTED = PendingActivityState.PENDING_ACTIVITY_STATE_STARTED


def activity_state(connection: TemporalConnection, key: str) -> int | None:
    """The state of the hook's pending activity (None: none pending)."""

    async def describe() -> int | None:
        client = await connection.client()
        found = await client.get_workflow_handle(key).describe()
        pending = found.raw_description.pending_activities
        return pending[0].state if pending else None

    return connection.run(describe(), timeout=10)


def within(seconds: float, condition: Callable[[], bool]) -> bool:
    """Whether ``condition`` holds at some check in the next ``seconds`` (a bounded watch for
    something that must not happen)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
    return False


def test_a_hook_queued_behind_a_worker_that_dies_runs_at_once_on_another(
    store: DynamoDBFormStore,
    connection: TemporalConnection,
    queue: str,
    worker_env: dict[str, str],
    flags: Path,
    request: pytest.FixtureRequest,
) -> None:
    policy = HookPolicy(max_attempts=3, heartbeat_seconds=HEARTBEAT, timeout_seconds=300.0)
    service = service_with(
        store, TemporalDispatcher(connection, task_queue=queue, policy=policy, wait_ms=0)
    )
    # GIVEN a worker with one executor thread, busy with a hook that blocks
    first = LocalWorker(worker_env, sticky_timeout=1.0, grace=1.0, quiet=True, threads=1).start()
    request.addfinalizer(first.kill)  # even when the test fails before it kills it
    busy = start_claim(service)
    (flags / f"{busy}.block").touch()
    busy_key = fill_amount(service)["fired"][0]
    wait_until(lambda: len(runs(flags, busy, busy_key)) == 1, "the blocking executor to start")

    # AND a second hook, queued behind it
    other = Caller("alice", "conv-2")
    queued = start_claim(service, other)
    queued_key = fill_amount(service, 80, other)["fired"][0]
    wait_until(lambda: activity_state(connection, queued_key) is not None, "its activity")
    # which the busy worker does not take (it would, with more slots than threads: it would
    # then hold it, started, in its own process)
    assert not within(1.0, lambda: activity_state(connection, queued_key) == STARTED)
    assert activity_state(connection, queued_key) == SCHEDULED
    assert runs(flags, queued) == []

    # WHEN that worker dies (no shutdown) and another one starts
    first.kill()
    started = time.monotonic()
    with LocalWorker(worker_env, sticky_timeout=1.0, grace=1.0, quiet=True) as second:
        outcome = outcome_of(connection, queued_key)
        took = time.monotonic() - started

        # THEN the queued hook ran on the new worker, as its first attempt, well before a
        # heartbeat timeout could have released it
        assert outcome.status == "done" and outcome.attempt == 1
        assert runs(flags, queued, queued_key) == [(queued_key, second.pid)]
        assert took < HEARTBEAT / 2, took
        events = history(connection, queued_key)
        assert len(of_type(events, EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED)) == 1
        assert of_type(events, EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT) == []
    (flags / f"{busy}.block").unlink()
