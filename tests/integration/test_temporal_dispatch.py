"""Fault tests of durable dispatch: a real Temporal dev server and the local DynamoDB endpoint.

Each test breaks the path somewhere (a Lambda that dies after its commit, a worker killed in
the middle of an executor, the same occurrence dispatched from everywhere at once, an activity
that fails after its effect was committed) and then asserts on two records: what DynamoDB
holds (the answer, the outbox entry, the executor's revisions) and what Temporal ran (runs per
workflow id, their status, their event histories).

The executors below are test-only and coordinate with the tests through files in the
directory named by ``FORMWORK_TEST_FLAGS`` (a worker is another process): each run appends
``<key> <pid>`` to ``<instance>.runs``; while ``<instance>.block`` exists the executor waits;
while ``<instance>.fail`` exists it raises. The worker processes load these forms through
``FORMWORK_FORMS=tests.integration.test_temporal_dispatch:FORMS``.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from temporalio import activity
from temporalio.api.enums.v1 import EventType, TimeoutType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowExecution, WorkflowExecutionStatus

from forms import Checkpoint, FormDef, FormRegistry, FormService, HookContext, Patch, Step, field
from forms.app import dispatcher_contract
from forms.app.conversation import Caller
from forms.app.dispatcher_contract import RUNS, DispatcherContract, Wiring
from forms.app.hooks import HookRunner
from forms.instance import KNOCK_ON_LIMIT, LOOP_STOPPED, FormInstance, OutboxEntry
from forms.storage.dynamodb import DynamoDBFormStore
from formwork.aws import relay
from formwork.aws.local import LocalContext
from formwork.config import Settings, TemporalSettings
from formwork.infra.local.dynamodb import LocalDynamoDB
from formwork.infra.local.dynamodb_local import DynamoDBLocal
from formwork.infra.local.gateway import dev_token
from formwork.infra.local.stack import LocalStack
from formwork.infra.local.streams import StreamReader
from formwork.infra.local.temporal import LocalTemporal, LocalWorker
from formwork.temporal.activities import HookActivities
from formwork.temporal.dispatch import TemporalConnection, TemporalDispatcher
from formwork.temporal.shared import RUN_HOOK_ACTIVITY, HookInput, HookOutcome, HookPolicy
from formwork.temporal.worker import serve
from formwork.worker import worker_app
from tests.support import Deferred, app_for, form_service

FLAGS = "FORMWORK_TEST_FLAGS"
FORMS_REF = "tests.integration.test_temporal_dispatch:FORMS"
ALICE = Caller("alice", "conv-1")
POLICY = HookPolicy(max_attempts=3, heartbeat_seconds=2.0, timeout_seconds=60.0)
"""Short heartbeats, so a killed worker is noticed in seconds; retries as in production."""
DEADLINE = 60.0


# ---------------------------------------------------------------------------- test-only forms


def _flags(ctx: HookContext) -> Path:
    flags = Path(os.environ[FLAGS])
    with (flags / f"{ctx.instance_id}.runs").open("a") as runs:
        runs.write(f"{ctx.key} {os.getpid()}\n")
    return flags


def stamp(ctx: HookContext) -> Patch:
    """Issues a receipt for the amount (the effect that must land once per key)."""
    flags = _flags(ctx)
    block = flags / f"{ctx.instance_id}.block"
    while block.exists():  # the executor's own wait: the test removes the file
        time.sleep(0.02)
    if (flags / f"{ctx.instance_id}.fail").exists():
        raise RuntimeError("the receipt service is down")
    return Patch({"receipt": f"R-{ctx.key}"})


def file_receipt(ctx: HookContext) -> Patch:
    """Fires when ``stamp``'s receipt lands: a hook started by another hook's run."""
    _flags(ctx)
    return Patch({"filed": True})


class Claim(Step):
    title = "Claim"
    amount: int = field("Amount", on_fill=stamp)
    receipt: str | None = field("Receipt", on_fill=file_receipt)
    filed: bool | None = field("Filed")


class Confirm(Step):
    title = "Confirm"
    confirmed: bool = field("Confirmed")


FORM = FormDef(id="durable-claim", version=1, title="Durable claim", steps=[Claim, Confirm])


def to_two(ctx: HookContext) -> Patch:
    _flags(ctx)
    return Patch({"n": 2})


def to_one(ctx: HookContext) -> Patch:
    _flags(ctx)
    return Patch({"n": 1})


class Counter(Step):
    title = "Counter"
    n: int = field("N")


LOOP = FormDef(
    id="ping-pong",
    version=1,
    title="Ping pong",
    steps=[Counter],
    checkpoints=[
        Checkpoint("ping", when=lambda v: v.n == 1, run=to_two),
        Checkpoint("pong", when=lambda v: v.n == 2, run=to_one),
    ],
)
"""Two checkpoints whose executors set each other's trigger: a loop no compiler can see."""
FORMS = (FORM, LOOP)


# ---------------------------------------------------------------------------- stand-ins


class LambdaDied(BaseException):
    """The tool-call Lambda's process ending right after its commit (not an error it handles)."""


class DiesBeforeDispatch:
    def dispatch(
        self, runner: HookRunner, entries: list[OutboxEntry], instance: FormInstance
    ) -> None:
        raise LambdaDied("killed after the commit, before starting any workflow")


class FailsAfterCommit(HookActivities):
    """The real activity, then a failure on the first attempt: its effect is committed, but
    Temporal hears of a failure and retries it."""

    @activity.defn(name=RUN_HOOK_ACTIVITY)
    async def run_hook_activity(self, hook: HookInput) -> HookOutcome:
        outcome = await super().run_hook_activity(hook)
        if activity.info().attempt == 1:
            raise RuntimeError("worker lost after the commit, before reporting")
        return outcome


class ThreadWorker:
    """``formwork.temporal.worker.serve`` on a thread of this process (for stand-in activities)."""

    def __init__(self, settings: Settings, activities_class: type[HookActivities]) -> None:
        self.settings = settings
        self.activities_class = activities_class
        self.ready = threading.Event()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.stop: asyncio.Event | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        async def main() -> None:
            self.loop = asyncio.get_running_loop()
            self.stop = asyncio.Event()
            await serve(
                worker_app(self.settings),
                stop=self.stop,
                ready=self.ready.set,
                sticky_timeout=1.0,
                grace=1.0,
                activities_class=self.activities_class,
            )

        try:
            asyncio.run(main())
        except BaseException as exc:
            self.error = exc
            self.ready.set()

    def __enter__(self) -> ThreadWorker:
        self.thread.start()
        assert self.ready.wait(DEADLINE), "the in-process worker did not start"
        if self.error is not None:
            raise self.error
        return self

    def __exit__(self, *exc: object) -> None:
        if self.loop is not None and self.stop is not None:
            self.loop.call_soon_threadsafe(self.stop.set)
        self.thread.join(DEADLINE)


# ---------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def temporal() -> Iterator[LocalTemporal]:
    with LocalTemporal() as server:
        yield server


@pytest.fixture(scope="module")
def connection(temporal: LocalTemporal) -> Iterator[TemporalConnection]:
    async def connect() -> Client:
        return await Client.connect(temporal.address)

    connection = TemporalConnection(connect)
    yield connection
    connection.close()


@pytest.fixture
def queue() -> str:
    return f"hooks-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(FLAGS, str(tmp_path))
    return tmp_path


@pytest.fixture
def settings(table_settings: Settings, temporal: LocalTemporal, queue: str) -> Settings:
    """What the worker and the relay read from their environment, for this test."""
    return replace(
        table_settings,
        forms=FORMS_REF,
        dispatch="temporal",
        temporal=TemporalSettings(address=temporal.address, task_queue=queue),
    )


@pytest.fixture
def worker_env(settings: Settings, flags: Path) -> dict[str, str]:
    assert settings.table_name and settings.dynamodb_endpoint_url
    return {
        "TABLE_NAME": settings.table_name,
        "DYNAMODB_ENDPOINT_URL": settings.dynamodb_endpoint_url,
        "AWS_ACCESS_KEY_ID": "local",
        "AWS_SECRET_ACCESS_KEY": "local",
        "FORMWORK_FORMS": FORMS_REF,
        "TEMPORAL_ADDRESS": settings.temporal.address,
        "TEMPORAL_TASK_QUEUE": settings.temporal.task_queue,
        FLAGS: str(flags),
    }


@pytest.fixture
def worker(worker_env: dict[str, str]) -> Iterator[LocalWorker]:
    with LocalWorker(worker_env, sticky_timeout=1.0, grace=1.0, quiet=True) as running:
        yield running


@pytest.fixture
def dispatcher(connection: TemporalConnection, queue: str) -> TemporalDispatcher:
    return TemporalDispatcher(connection, task_queue=queue, policy=POLICY, wait_ms=0)


def service_with(store: DynamoDBFormStore, dispatcher: Any) -> FormService:
    return form_service(FormRegistry(FORMS), store, dispatcher)


# ---------------------------------------------------------------------------- helpers


def start_claim(service: FormService, caller: Caller = ALICE) -> str:
    result = service.call(caller, "form_start", f"start-{uuid.uuid4().hex[:8]}", {"form": FORM.id})
    assert result["ok"], result
    instance_id: str = result["instance"]
    return instance_id


def fill_amount(service: FormService, amount: int = 120, caller: Caller = ALICE) -> dict[str, Any]:
    values = {"form": FORM.id, "values": {"amount": amount}}
    return service.call(caller, "form_fill", f"fill-{uuid.uuid4().hex[:8]}", values)


def stamp_key(instance: FormInstance) -> str:
    (key,) = [k for k, e in instance.state.outbox.items() if e.hook_id == "field.amount.filled"]
    return key


def runs(flags: Path, instance_id: str, key: str | None = None) -> list[tuple[str, int]]:
    path = flags / f"{instance_id}.runs"
    if not path.exists():
        return []
    found = [(k, int(pid)) for k, pid in (line.split() for line in path.read_text().splitlines())]
    return [r for r in found if key is None or r[0] == key]


def executor_revisions(store: DynamoDBFormStore, instance_id: str, field_id: str) -> list[Any]:
    history = store.get(instance_id).field(field_id)
    return [r for r in history.revisions if r.by == "executor"]


def wait_until(condition: Callable[[], bool], what: str, timeout: float = DEADLINE) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def outcome_of(connection: TemporalConnection, key: str) -> HookOutcome:
    """The result of the latest run of ``key`` (waits for it)."""

    async def result() -> HookOutcome:
        client = await connection.client()
        outcome: HookOutcome = await client.get_workflow_handle(
            key, result_type=HookOutcome
        ).result()
        return outcome

    return connection.run(result(), timeout=DEADLINE)


def executions(connection: TemporalConnection, key: str) -> list[WorkflowExecution]:
    """Every run Temporal's visibility lists under workflow id ``key``."""

    async def listed() -> list[WorkflowExecution]:
        client = await connection.client()
        return [w async for w in client.list_workflows(f'WorkflowId = "{key}"')]

    return connection.run(listed(), timeout=DEADLINE)


def closed_executions(
    connection: TemporalConnection, key: str, count: int
) -> list[WorkflowExecution]:
    """Visibility is eventually consistent: poll until ``count`` closed runs are listed."""
    found: list[WorkflowExecution] = []

    def listed() -> bool:
        nonlocal found
        found = executions(connection, key)
        return len(found) >= count and all(
            w.status not in (None, WorkflowExecutionStatus.RUNNING) for w in found
        )

    wait_until(listed, f"{count} closed run(s) of {key} in visibility")
    return found


def history(
    connection: TemporalConnection, key: str, run_id: str | None = None
) -> list[HistoryEvent]:
    async def fetch() -> list[HistoryEvent]:
        client = await connection.client()
        fetched = await client.get_workflow_handle(key, run_id=run_id).fetch_history()
        return list(fetched.events)

    return connection.run(fetch(), timeout=DEADLINE)


def of_type(events: list[HistoryEvent], kind: int) -> list[HistoryEvent]:
    return [e for e in events if e.event_type == kind]


def assert_ran_once(connection: TemporalConnection, key: str) -> HistoryEvent:
    """Exactly one run under ``key``, completed, that scheduled its activity once; returns
    the activity's started event (it carries the attempt that succeeded)."""
    (execution,) = closed_executions(connection, key, 1)
    assert execution.status == WorkflowExecutionStatus.COMPLETED
    events = history(connection, key, execution.run_id)
    assert len(of_type(events, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)) == 1
    assert len(of_type(events, EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)) == 1
    (started,) = of_type(events, EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED)
    return started


def crash_after_commit(store: DynamoDBFormStore) -> tuple[str, str]:
    """A claim whose amount was committed by a Lambda that died before dispatching."""
    dying = service_with(store, DiesBeforeDispatch())
    instance_id = start_claim(dying)
    with pytest.raises(LambdaDied):
        fill_amount(dying)
    instance = store.get(instance_id)
    key = stamp_key(instance)
    assert instance.field("amount").in_force().value == 120  # type: ignore[union-attr]
    entry = instance.state.outbox[key]
    assert entry.status == "pending" and entry.dispatched_at is None
    return instance_id, key


# ------------------------------------------------------------------ 1. crash after commit


def test_crash_after_commit_the_stream_relay_dispatches(
    store: DynamoDBFormStore,
    dispatcher: TemporalDispatcher,
    connection: TemporalConnection,
    local_dynamodb: LocalDynamoDB,
    table: str,
    settings: Settings,
    worker: LocalWorker,
    flags: Path,
) -> None:
    # GIVEN an answer committed by a tool-call Lambda that died before dispatching its hook
    instance_id, key = crash_after_commit(store)
    assert executions(connection, key) == []

    # WHEN the relay gets the table's stream (every item the commits wrote)
    event = {"Records": StreamReader(local_dynamodb.endpoint, table).read()}
    app = app_for(service_with(store, dispatcher), settings=settings)
    response = relay.lambda_handler(event, LocalContext(), app=app)

    # THEN nothing is reported failed, and the hook runs as the workflow named by its key
    assert response == {"batchItemFailures": []}
    outcome = outcome_of(connection, key)
    assert (outcome.key, outcome.status, outcome.attempt) == (key, "done", 1)
    assert assert_ran_once(connection, key).activity_task_started_event_attributes.attempt == 1
    # AND the store holds the answer, the receipt once, and the entry done and dispatched
    instance = store.get(instance_id)
    assert instance.field("amount").in_force().value == 120  # type: ignore[union-attr]
    assert [r.value for r in executor_revisions(store, instance_id, "receipt")] == [f"R-{key}"]
    entry = instance.state.outbox[key]
    assert entry.status == "done" and entry.dispatched_at is not None
    assert runs(flags, instance_id, key) == [(key, worker.pid)]
    # AND the hook its effect fired was started by the activity, under its own key
    (follow,) = outcome.dispatched
    assert outcome_of(connection, follow).status == "done"
    assert executor_revisions(store, instance_id, "filed")[0].value is True


def test_crash_after_commit_the_sweeper_dispatches(
    store: DynamoDBFormStore,
    dispatcher: TemporalDispatcher,
    connection: TemporalConnection,
    settings: Settings,
    worker: LocalWorker,
    flags: Path,
) -> None:
    # GIVEN an answer committed by a Lambda that died before dispatching, and no stream relay
    instance_id, key = crash_after_commit(store)

    # WHEN the scheduled sweeper scans the table
    app = app_for(service_with(store, dispatcher), settings=settings)
    swept = relay.sweep_handler({}, LocalContext(), app=app)

    # THEN it dispatched that hook, which ran once
    assert swept["dispatched"] == [key] and swept["failed"] == {}
    assert outcome_of(connection, key).status == "done"
    assert_ran_once(connection, key)
    assert len(executor_revisions(store, instance_id, "receipt")) == 1
    assert store.get(instance_id).state.outbox[key].dispatched_at is not None
    assert runs(flags, instance_id, key) == [(key, worker.pid)]
    # AND a later sweep finds nothing left to do
    wait_until(
        lambda: all(e.status == "done" for e in store.get(instance_id).state.outbox.values()),
        "the follow-up hook to finish",
    )
    assert relay.sweep_handler({}, LocalContext(), app=app)["dispatched"] == []


# ------------------------------------------------------------------ 2. worker killed


def killed_mid_executor(
    store: DynamoDBFormStore,
    dispatcher: TemporalDispatcher,
    worker_env: dict[str, str],
    flags: Path,
) -> tuple[str, str, int]:
    """A claim's amount hook dispatched by ``dispatcher`` to a worker process of its own, that
    worker killed (no shutdown) while the executor is blocked mid-call, then the executor let
    go: (the instance id, the hook's key, the killed worker's pid)."""
    first = LocalWorker(worker_env, sticky_timeout=1.0, grace=1.0, quiet=True).start()
    service = service_with(store, dispatcher)
    instance_id = start_claim(service)
    (flags / f"{instance_id}.block").touch()
    key: str = fill_amount(service)["fired"][0]
    wait_until(lambda: len(runs(flags, instance_id, key)) == 1, "the executor to start")
    first_pid = first.pid
    assert first_pid is not None
    first.kill()
    (flags / f"{instance_id}.block").unlink()
    return instance_id, key, first_pid


def test_worker_killed_mid_executor_is_retried_with_the_same_key(
    store: DynamoDBFormStore,
    dispatcher: TemporalDispatcher,
    connection: TemporalConnection,
    worker_env: dict[str, str],
    flags: Path,
) -> None:
    # GIVEN a worker process running an executor that is blocked mid-call
    # WHEN that worker is killed (no shutdown) and another one takes over
    instance_id, key, first_pid = killed_mid_executor(store, dispatcher, worker_env, flags)
    with LocalWorker(worker_env, sticky_timeout=1.0, grace=1.0, quiet=True) as second:
        outcome = outcome_of(connection, key)

        # THEN Temporal ran the attempt again on the new worker, with the same key
        assert outcome.status == "done" and outcome.attempt == 2
        assert runs(flags, instance_id, key) == [(key, first_pid), (key, second.pid)]
        started = assert_ran_once(connection, key).activity_task_started_event_attributes
        assert started.attempt == 2
        assert started.last_failure.timeout_failure_info.timeout_type == (
            TimeoutType.TIMEOUT_TYPE_HEARTBEAT
        )
    # AND its effect was applied once
    assert [r.value for r in executor_revisions(store, instance_id, "receipt")] == [f"R-{key}"]
    entry = store.get(instance_id).state.outbox[key]
    assert entry.status == "done" and entry.attempts == 1  # the killed attempt left no trace


def test_worker_killed_mid_local_first_attempt_runs_it_again_with_the_same_key(
    store: DynamoDBFormStore,
    connection: TemporalConnection,
    queue: str,
    worker_env: dict[str, str],
    flags: Path,
) -> None:
    # GIVEN a tool call that waits for its hook (so its first attempt is a local activity,
    # in the run's workflow task), on a worker whose executor blocks mid-call
    waiting = TemporalDispatcher(connection, task_queue=queue, policy=POLICY, wait_ms=300)
    # WHEN that worker is killed (no shutdown) and another one takes over
    instance_id, key, first_pid = killed_mid_executor(store, waiting, worker_env, flags)
    with LocalWorker(worker_env, sticky_timeout=1.0, grace=1.0, quiet=True) as second:
        outcome = outcome_of(connection, key)

        # THEN the workflow task that held the attempt timed out and the next worker ran the
        # attempt again, with the same key, still as a local activity (no activity task)
        assert outcome.status == "done"
        assert runs(flags, instance_id, key) == [(key, first_pid), (key, second.pid)]
        (execution,) = closed_executions(connection, key, 1)
        events = history(connection, key, execution.run_id)
        assert of_type(events, EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT)
        assert not of_type(events, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
    # AND its effect was applied once
    assert [r.value for r in executor_revisions(store, instance_id, "receipt")] == [f"R-{key}"]
    entry = store.get(instance_id).state.outbox[key]
    assert entry.status == "done" and entry.attempts == 1  # the killed attempt left no trace


# ------------------------------------------------------------------ 3. many dispatches


def test_one_occurrence_dispatched_from_everywhere_at_once_runs_once(
    store: DynamoDBFormStore,
    dispatcher: TemporalDispatcher,
    connection: TemporalConnection,
    local_dynamodb: LocalDynamoDB,
    table: str,
    settings: Settings,
    worker: LocalWorker,
    flags: Path,
) -> None:
    # GIVEN a committed hook occurrence that nobody has dispatched yet
    deferred = Deferred()
    service = service_with(store, deferred)
    instance_id = start_claim(service)
    fill_amount(service)
    (entry,) = deferred.entries
    key = entry.key
    event = {"Records": StreamReader(local_dynamodb.endpoint, table).read()}
    durable = service_with(store, dispatcher)
    app = app_for(durable, settings=settings)
    sweep = {"instance_ids": [instance_id]}

    # WHEN the tool path (and its retries), the relay (and replays of its batch) and the
    # sweeper all dispatch it at the same moment
    calls: list[Callable[[], object]] = (
        [lambda: dispatcher.send(durable, [entry])] * 6
        + [lambda: relay.lambda_handler(event, LocalContext(), app=app)] * 6
        + [lambda: relay.sweep_handler(sweep, LocalContext(), app=app)] * 2
    )
    barrier = threading.Barrier(len(calls))

    def together(call: Callable[[], object]) -> object:
        barrier.wait(DEADLINE)
        return call()

    with ThreadPoolExecutor(len(calls)) as pool:
        results = list(pool.map(together, calls))
        outcome = outcome_of(connection, key)
        # ... and again, replayed after the run has finished
        dispatcher.send(durable, [entry])
        late = relay.lambda_handler(event, LocalContext(), app=app)

    # THEN every dispatch succeeded, and Temporal holds exactly one run for the key
    assert all(r == {"batchItemFailures": []} for r in [*results[6:12], late])
    assert all(r == [key] for r in results[:6])
    assert outcome.status == "done"
    assert_ran_once(connection, key)
    (execution,) = closed_executions(connection, key, 1)
    assert executions(connection, key) == [execution]
    # AND the executor ran once and its effect is stored once
    assert runs(flags, instance_id, key) == [(key, worker.pid)]
    assert len(executor_revisions(store, instance_id, "receipt")) == 1
    assert store.get(instance_id).state.outbox[key].status == "done"


# ------------------------------------------------------------------ 4. retried after commit


def test_activity_retried_after_its_effect_was_committed_applies_it_once(
    store: DynamoDBFormStore,
    dispatcher: TemporalDispatcher,
    connection: TemporalConnection,
    settings: Settings,
    flags: Path,
) -> None:
    # GIVEN a worker whose activity commits the effect, then fails its first attempt
    with ThreadWorker(settings, FailsAfterCommit):
        service = service_with(store, dispatcher)
        instance_id = start_claim(service)
        key = fill_amount(service)["fired"][0]

        # WHEN Temporal retries the activity
        outcome = outcome_of(connection, key)

    # THEN the second attempt found the effect committed and did not run the executor again
    assert (outcome.status, outcome.attempt) == ("done", 2)
    started = assert_ran_once(connection, key).activity_task_started_event_attributes
    assert started.attempt == 2
    assert "worker lost after the commit" in started.last_failure.message
    assert len(runs(flags, instance_id, key)) == 1
    assert [r.value for r in executor_revisions(store, instance_id, "receipt")] == [f"R-{key}"]


# ------------------------------------------------------------------ failures, retries


def test_a_final_failure_is_recorded_and_an_operator_retry_runs_the_same_key(
    store: DynamoDBFormStore,
    connection: TemporalConnection,
    queue: str,
    worker: LocalWorker,
    flags: Path,
) -> None:
    # GIVEN an executor that fails every time, with two attempts allowed
    two = HookPolicy(max_attempts=2, heartbeat_seconds=2.0, timeout_seconds=60.0)
    service = service_with(
        store, TemporalDispatcher(connection, task_queue=queue, policy=two, wait_ms=0)
    )
    instance_id = start_claim(service)
    (flags / f"{instance_id}.fail").touch()
    key = fill_amount(service)["fired"][0]

    # WHEN its retries run out
    (failed,) = closed_executions(connection, key, 1)

    # THEN the failure is recorded on the instance as final, and the run ended failed
    assert failed.status == WorkflowExecutionStatus.FAILED
    entry = store.get(instance_id).state.outbox[key]
    assert (entry.status, entry.attempts) == ("failed", 2)
    assert "receipt service is down" in (entry.error or "")
    assert len(runs(flags, instance_id, key)) == 2

    # WHEN the service is back and an operator retries the hook
    (flags / f"{instance_id}.fail").unlink()
    assert service.retry_hook(instance_id, key)

    # THEN a second run under the same workflow id completes it, with the same key
    assert outcome_of(connection, key).status == "done"
    statuses = sorted(str(w.status) for w in closed_executions(connection, key, 2))
    assert len(statuses) == 2 and statuses == sorted(
        str(s) for s in (WorkflowExecutionStatus.FAILED, WorkflowExecutionStatus.COMPLETED)
    )
    assert [k for k, _ in runs(flags, instance_id, key)] == [key, key, key]
    assert len(executor_revisions(store, instance_id, "receipt")) == 1


# ------------------------------------------------------------------ hooks that loop


def test_checkpoints_that_trigger_each_other_stop_at_the_knock_on_limit(
    store: DynamoDBFormStore,
    dispatcher: TemporalDispatcher,
    worker: LocalWorker,
    flags: Path,
) -> None:
    # GIVEN two checkpoints whose executors set each other's trigger, run as workflows
    service = service_with(store, dispatcher)
    started = service.call(ALICE, "form_start", "start-loop", {"form": LOOP.id})
    instance_id = started["instance"]
    # WHEN the answer that starts the loop is given
    fill = {"form": LOOP.id, "values": {"n": 1}}
    assert service.call(ALICE, "form_fill", "fill-loop", fill)["ok"]

    # THEN the chain of workflows, each started by the one before (the depth travelling on
    # the entries through DynamoDB), stops at the limit: one entry failed, none pending
    def stopped() -> bool:
        entries = store.get(instance_id).state.outbox.values()
        return any(e.status == "failed" for e in entries)

    wait_until(stopped, "the loop to stop")
    entries = sorted(store.get(instance_id).state.outbox.values(), key=lambda e: e.depth)
    assert [e.status for e in entries] == ["done"] * (KNOCK_ON_LIMIT + 1) + ["failed"]
    last = entries[-1]
    assert last.error is not None and last.error.startswith(LOOP_STOPPED)
    assert last.dispatched_at is None  # no workflow was started for it
    assert len(runs(flags, instance_id)) == KNOCK_ON_LIMIT + 1
    # AND the status line tells the agent an operator is needed
    assert any("hooks kept triggering each other" in line for line in service.status(ALICE))


# ------------------------------------------------------------------ waiting in the call


def test_the_tool_call_waits_for_fast_hooks_and_reports_slow_ones_running(
    store: DynamoDBFormStore,
    connection: TemporalConnection,
    queue: str,
    worker: LocalWorker,
    flags: Path,
) -> None:
    # GIVEN a dispatcher that waits up to 20 s for hooks, and a fast executor
    patient = service_with(
        store, TemporalDispatcher(connection, task_queue=queue, policy=POLICY, wait_ms=20_000)
    )
    instance_id = start_claim(patient)

    # WHEN the agent fills the amount
    result = fill_amount(patient)

    # THEN the result already shows the hook done (its effect is in this turn's view)
    key = result["fired"][0]
    assert {"key": key, "status": "done"} in result["hooks"]
    assert store.get(instance_id).field("receipt").in_force() is not None

    # GIVEN a dispatcher that waits 300 ms, and an executor that takes longer
    hasty = service_with(
        store, TemporalDispatcher(connection, task_queue=queue, policy=POLICY, wait_ms=300)
    )
    elsewhere = Caller("alice", "conv-2")
    other = start_claim(hasty, elsewhere)
    (flags / f"{other}.block").touch()
    result = fill_amount(hasty, 80, elsewhere)

    # THEN the call returns with the hook still pending, and the status line says it runs
    slow = result["fired"][0]
    assert result["hooks"] == [{"key": slow, "status": "pending"}]
    assert "(running)" in result["status_line"]
    (flags / f"{other}.block").unlink()
    assert outcome_of(connection, slow).status == "done"


# ------------------------------------------------------------------ the dispatcher contract

CONTRACT_POLICY = HookPolicy(
    max_attempts=3, initial_interval_seconds=0.2, heartbeat_seconds=2.0, timeout_seconds=60.0
)
"""Production's retries, with a short first wait: a failing run is retried within a second."""


class TestTemporalDispatcher(DispatcherContract):
    """What the in-process dispatcher promises, kept by workflows on a real dev server, a worker
    process and the DynamoDB store."""

    @pytest.fixture
    def wiring(
        self,
        table_settings: Settings,
        store: DynamoDBFormStore,
        temporal: LocalTemporal,
        connection: TemporalConnection,
        queue: str,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
    ) -> Iterator[Wiring]:
        monkeypatch.setenv(RUNS, str(tmp_path))
        assert table_settings.table_name and table_settings.dynamodb_endpoint_url
        env = {
            "TABLE_NAME": table_settings.table_name,
            "DYNAMODB_ENDPOINT_URL": table_settings.dynamodb_endpoint_url,
            "AWS_ACCESS_KEY_ID": "local",
            "AWS_SECRET_ACCESS_KEY": "local",
            "FORMWORK_FORMS": "forms.app.dispatcher_contract:FORMS",
            "TEMPORAL_ADDRESS": temporal.address,
            "TEMPORAL_TASK_QUEUE": queue,
            RUNS: str(tmp_path),
        }
        dispatcher = TemporalDispatcher(
            connection, task_queue=queue, policy=CONTRACT_POLICY, wait_ms=0
        )
        service = form_service(FormRegistry(dispatcher_contract.FORMS), store, dispatcher)

        def settle(instance_id: str) -> None:
            def quiet() -> bool:
                outbox = store.get(instance_id).state.outbox.values()
                return all(e.status != "pending" for e in outbox if e.kind == "executor")

            wait_until(quiet, f"the runs of {instance_id} to finish")

        with LocalWorker(env, sticky_timeout=1.0, grace=1.0, quiet=True):
            yield Wiring(service, settle)


# ------------------------------------------------------------------ make dev


def test_the_local_stack_runs_a_hook_as_a_workflow_over_http(
    dynamodb_local: DynamoDBLocal,
) -> None:
    # GIVEN the local stack as `make dev` runs it: DynamoDB Local, Temporal, a worker, the relay
    with LocalStack(
        api_port=0,
        temporal=True,
        temporal_port=0,
        quiet=True,
        dynamodb=dynamodb_local,
        table_name=f"formwork-{uuid.uuid4().hex[:12]}",
    ) as stack:
        assert stack.temporal is not None and stack.poller is not None
        # WHEN a tool call over HTTP crosses the travel claim's policy cap (a checkpoint)
        body = {
            "tool_call_id": "call-1",
            "input": {"form": "travel-claim", "values": {"full_name": "Ana", "total": 9999}},
        }
        request = urllib.request.Request(
            f"{stack.api_url}/conversations/conv-1/tools/form_start",
            data=json.dumps(body).encode(),
            headers={"Authorization": dev_token("alice"), "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=DEADLINE) as response:
            result = json.loads(response.read())

        # THEN the checkpoint ran as the workflow named by its key, within the call's wait,
        # and its rejection is in the same result
        (key,) = result["fired"]
        assert result["hooks"] == [{"key": key, "status": "done"}]
        assert "over the 2000 EUR policy cap" in result["status_line"]

        async def status() -> WorkflowExecutionStatus | None:
            assert stack.temporal is not None
            client = await Client.connect(stack.temporal.address)
            return (await client.get_workflow_handle(key).describe()).status

        assert asyncio.run(status()) == WorkflowExecutionStatus.COMPLETED
