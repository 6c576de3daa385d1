"""The stream relay, the sweeper and the Temporal dispatcher, as Lambda runs them.

DynamoDB Streams events go in (home item images exactly as ``DynamoDBFormStore`` writes
them), partial batch responses come out. The store is the in-memory one; Temporal is a small
stand-in client that keeps runs by workflow id and applies the id policies the way the server
does (``tests/integration/test_temporal_dispatch.py`` checks the same paths against the real
server).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import count
from typing import Any

import pytest
from temporalio.client import WorkflowExecutionStatus
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from forms import FormDef, FormService, HookContext, InMemoryFormStore, Patch, Step
from forms import field as form_field
from forms.app.conversation import Caller
from forms.app.hooks import InProcessDispatcher
from forms.instance import Commit, FormInstance, OutboxEntry
from forms.outbox import due_entries
from forms.storage.dynamodb import home_item
from forms.storage.dynamodb_outbox import PENDING_MARK
from formwork import bootstrap
from formwork.aws import relay
from formwork.aws.local import LocalContext
from formwork.bootstrap import App
from formwork.config import ConfigError, Settings
from formwork.temporal.dispatch import TemporalConnection, TemporalDispatcher
from formwork.temporal.shared import HookInput, HookPolicy
from formwork.temporal.starter import start_hooks
from tests.support import Deferred, app_for, service_for

T0 = datetime(2025, 3, 10, 9, 0, tzinfo=UTC)
ALICE = Caller("alice", "conv-1")
SETTINGS = Settings(dispatch="temporal", redispatch_after_seconds=600)


def stamp(ctx: HookContext) -> Patch:
    return Patch({"receipt": f"R-{ctx.key}"})


class Claim(Step):
    title = "Claim"
    amount: int = form_field("Amount", on_fill=stamp)
    receipt: str | None = form_field("Receipt")


class Confirm(Step):
    title = "Confirm"
    confirmed: bool = form_field("Confirmed")


FORM = FormDef(id="relay-claim", version=1, title="Relay claim", steps=[Claim, Confirm])


# ---------------------------------------------------------------------------- a stand-in Temporal


@dataclass
class Run:
    hook: HookInput
    policy: WorkflowIDReusePolicy
    closed: bool = False


@dataclass
class Started:
    started: bool


@dataclass
class Handle:
    _start_workflow_response: Started


@dataclass
class Description:
    status: WorkflowExecutionStatus


@dataclass
class RunHandle:
    """``client.get_workflow_handle(id)``: what a look at the id's latest run needs."""

    temporal: FakeTemporal
    id: str

    async def describe(self) -> Description:
        self.temporal.calls["describe"] += 1
        if self.id in self.temporal.down:
            raise ConnectionError("temporal is unreachable")
        runs = self.temporal.runs.get(self.id)
        if not runs:
            raise RPCError("workflow not found", RPCStatusCode.NOT_FOUND, b"")
        closed = runs[-1].closed
        return Description(
            WorkflowExecutionStatus.COMPLETED if closed else WorkflowExecutionStatus.RUNNING
        )


@dataclass
class FakeTemporal:
    """Runs by workflow id, with Temporal's conflict and reuse policies; nothing executes.
    ``calls`` counts the requests made of it (``start``, ``describe``)."""

    runs: dict[str, list[Run]] = field(default_factory=dict)
    down: set[str] = field(default_factory=set)
    """Workflow ids whose start fails (the service is unreachable for them)."""
    calls: Counter[str] = field(default_factory=Counter)

    def get_workflow_handle(self, id: str) -> RunHandle:
        return RunHandle(self, id)

    async def start_workflow(
        self,
        workflow: str,
        hook: HookInput,
        *,
        id: str,
        task_queue: str,
        result_type: Any,
        id_conflict_policy: WorkflowIDConflictPolicy,
        id_reuse_policy: WorkflowIDReusePolicy,
        static_summary: str,
    ) -> Handle:
        assert workflow == "HookWorkflow" and hook.key == id and task_queue == "hooks"
        self.calls["start"] += 1
        if id in self.down:
            raise ConnectionError("temporal is unreachable")
        runs = self.runs.setdefault(id, [])
        if runs and not runs[-1].closed:
            assert id_conflict_policy == WorkflowIDConflictPolicy.USE_EXISTING
            return Handle(Started(False))
        if runs and id_reuse_policy == WorkflowIDReusePolicy.REJECT_DUPLICATE:
            raise WorkflowAlreadyStartedError(id, workflow)
        runs.append(Run(hook, id_reuse_policy))
        return Handle(Started(True))

    def close_all(self) -> None:
        for runs in self.runs.values():
            for run in runs:
                run.closed = True


# ---------------------------------------------------------------------------- fixtures


@pytest.fixture
def temporal() -> FakeTemporal:
    return FakeTemporal()


@pytest.fixture
def connection(temporal: FakeTemporal) -> Iterator[TemporalConnection]:
    async def connect() -> Any:
        return temporal

    connection = TemporalConnection(connect)
    yield connection
    connection.close()


@dataclass
class World:
    """One store, one clock (``now``, moved by the tests) and one id sequence."""

    store: InMemoryFormStore = field(default_factory=InMemoryFormStore)
    now: datetime = T0
    ids: Iterator[int] = field(default_factory=lambda: count(1))

    def service(self, dispatcher: Any) -> FormService:
        return service_for(
            FORM,
            store=self.store,
            dispatcher=dispatcher,
            clock=lambda: self.now,
            new_id=lambda: f"fi_{next(self.ids)}",
        )


@pytest.fixture
def world() -> World:
    return World()


@pytest.fixture
def store(world: World) -> InMemoryFormStore:
    return world.store


@pytest.fixture
def dispatcher(connection: TemporalConnection) -> TemporalDispatcher:
    return TemporalDispatcher(connection, task_queue="hooks", policy=HookPolicy(), wait_ms=0)


@pytest.fixture
def service(dispatcher: TemporalDispatcher, world: World) -> FormService:
    return world.service(dispatcher)


@pytest.fixture
def app(service: FormService) -> App:
    """What the relay's Lambda runs with: ``service`` (Temporal dispatch) and ``SETTINGS``."""
    return app_for(service, settings=SETTINGS)


def committed_not_dispatched(world: World, conversation: str = "conv-1") -> tuple[str, str]:
    """An instance whose amount hook is in the outbox, never dispatched."""
    lost = world.service(Deferred())
    caller = Caller("alice", conversation)
    started = lost.call(caller, "form_start", "c1", {"form": FORM.id})
    filled = lost.call(caller, "form_fill", "c2", {"form": FORM.id, "values": {"amount": 5}})
    return started["instance"], filled["fired"][0]


# ---------------------------------------------------------------------------- events


_SEQUENCE = count(100)


def state_image(instance: FormInstance) -> dict[str, Any]:
    """The home item ``DynamoDBFormStore`` writes for ``instance`` (its own item builder)."""
    return home_item(instance)


def record(image: dict[str, Any] | None, name: str = "MODIFY") -> dict[str, Any]:
    keys = (
        {"pk": {"S": "I#x"}, "sk": {"S": "STATE"}}
        if image is None
        else {
            "pk": image["pk"],
            "sk": image["sk"],
        }
    )
    dynamodb: dict[str, Any] = {
        "ApproximateCreationDateTime": 1741597200,
        "Keys": keys,
        "SequenceNumber": str(next(_SEQUENCE)),
        "SizeBytes": 100,
        "StreamViewType": "NEW_AND_OLD_IMAGES",
    }
    if image is not None and name != "REMOVE":
        dynamodb["NewImage"] = image
    if name != "INSERT":
        dynamodb["OldImage"] = image or {}
    return {
        "eventID": f"event-{dynamodb['SequenceNumber']}",
        "eventName": name,
        "eventVersion": "1.1",
        "eventSource": "aws:dynamodb",
        "awsRegion": "us-east-1",
        "dynamodb": dynamodb,
        "eventSourceARN": "arn:aws:dynamodb:us-east-1:000000000000:table/formwork/stream/x",
    }


def deliver(app: App, *records: dict[str, Any]) -> dict[str, Any]:
    """The relay's answer to one batch of stream ``records``, running with ``app``."""
    response: dict[str, Any] = relay.lambda_handler(
        {"Records": list(records)}, LocalContext(), app=app
    )
    return response


def policies(temporal: FakeTemporal, key: str) -> list[WorkflowIDReusePolicy]:
    return [run.policy for run in temporal.runs.get(key, [])]


# ---------------------------------------------------------------------------- the stream relay


def test_a_hook_committed_but_never_dispatched_is_started_and_recorded(
    app: App, store: InMemoryFormStore, temporal: FakeTemporal, world: World
) -> None:
    # GIVEN a committed hook occurrence whose tool call died before dispatching it
    instance_id, key = committed_not_dispatched(world)

    # WHEN its home item's record comes through the stream
    response = deliver(app, record(state_image(store.get(instance_id))))

    # THEN the relay started one run under the key (first dispatch: no reuse of closed ids)
    assert response == {"batchItemFailures": []}
    assert policies(temporal, key) == [WorkflowIDReusePolicy.REJECT_DUPLICATE]
    (run,) = temporal.runs[key]
    assert (run.hook.instance_id, run.hook.policy) == (instance_id, HookPolicy())
    # AND recorded the dispatch on the entry
    assert store.get(instance_id).state.outbox[key].dispatched_at == T0


def test_replayed_and_stale_records_start_no_second_run(
    app: App, store: InMemoryFormStore, temporal: FakeTemporal, world: World
) -> None:
    # GIVEN a hook dispatched from its stream record, whose run then finished
    instance_id, key = committed_not_dispatched(world)
    stale = record(state_image(store.get(instance_id)))
    deliver(app, stale)
    temporal.close_all()

    # WHEN the same record is delivered again (a retried batch), twice
    responses = [deliver(app, stale), deliver(app, stale)]

    # THEN nothing failed and there is still one run for the key
    assert responses == [{"batchItemFailures": []}] * 2
    assert len(temporal.runs[key]) == 1


def test_records_that_need_no_dispatch_are_skipped(
    app: App, store: InMemoryFormStore, temporal: FakeTemporal, world: World
) -> None:
    # GIVEN an instance whose hook was dispatched a minute ago (still pending: it runs)
    instance_id, key = committed_not_dispatched(world)
    deliver(app, record(state_image(store.get(instance_id))))
    world.now = T0 + timedelta(minutes=1)
    current = state_image(store.get(instance_id))
    revision_item = {"pk": {"S": f"I#{instance_id}"}, "sk": {"S": "R#0000000002#000"}}
    call_item = {"pk": {"S": "P#alice#C#conv-1"}, "sk": {"S": "C#call-1"}}

    # WHEN the stream brings that home item, a revision item, a call record, and a removal
    response = deliver(
        app,
        record(current),
        record(revision_item, "INSERT"),
        record(call_item, "INSERT"),
        record(current, "REMOVE"),
    )

    # THEN none of them starts anything
    assert response == {"batchItemFailures": []}
    assert len(temporal.runs[key]) == 1


def test_a_hook_whose_run_is_going_when_its_record_arrives_is_started_once_and_written_once(
    store: InMemoryFormStore, temporal: FakeTemporal, world: World, connection: TemporalConnection
) -> None:
    # GIVEN a tool call that started its hook's run and is still waiting for it: the stored
    # entry says never dispatched (the call records it only if the run outlasts its wait)
    calling = TemporalDispatcher(connection, task_queue="hooks", policy=HookPolicy(), wait_ms=0)
    service = world.service(calling)
    caller = Caller("alice", "conv-1")
    started = service.call(caller, "form_start", "c1", {"form": FORM.id})
    instance_id = started["instance"]
    before = world.service(Deferred())
    key = before.call(caller, "form_fill", "c2", {"form": FORM.id, "values": {"amount": 5}})[
        "fired"
    ][0]
    entry = store.get(instance_id).state.outbox[key]
    asyncio.run(start_hooks(temporal, [calling.run_input(entry)], task_queue="hooks"))  # type: ignore[arg-type, list-item]
    assert temporal.calls == Counter({"start": 1})
    commits = count_commits(store)

    # WHEN the answer's record reaches the relay, and the sweeper looks too
    app = app_for(service, settings=SETTINGS)
    response = deliver(app, record(state_image(store.get(instance_id))))
    swept = relay.sweep_handler({"instance_ids": [instance_id]}, LocalContext(), app=app)

    # THEN neither started anything nor wrote anything: one look each at the run, going
    assert response == {"batchItemFailures": []} and swept["dispatched"] == []
    assert temporal.calls == Counter({"start": 1, "describe": 2})
    assert len(temporal.runs[key]) == 1 and commits() == 0
    assert store.get(instance_id).state.outbox[key].dispatched_at is None

    # AND once that run has closed without finishing the entry, the next record counts it
    # dispatched (no start: REJECT_DUPLICATE would refuse it) and records it, so it is
    # started again after FORMWORK_REDISPATCH_AFTER_SECONDS
    temporal.close_all()
    deliver(app, record(state_image(store.get(instance_id))))
    assert temporal.calls["start"] == 1 and commits() == 1
    assert store.get(instance_id).state.outbox[key].dispatched_at == T0


def count_commits(store: InMemoryFormStore) -> Callable[[], int]:
    """How many commits ``store`` takes from now on (a function reading the count)."""
    made = Counter[str]()
    commit = store.commit

    def counted(change: Commit) -> FormInstance:
        made["commit"] += 1
        return commit(change)

    store.commit = counted  # type: ignore[method-assign, assignment]
    return lambda: made["commit"]


def test_a_hook_still_pending_long_after_its_dispatch_is_started_again(
    app: App, store: InMemoryFormStore, temporal: FakeTemporal, world: World
) -> None:
    # GIVEN a hook dispatched, whose run ended without finishing the entry
    instance_id, key = committed_not_dispatched(world)
    deliver(app, record(state_image(store.get(instance_id))))
    temporal.close_all()

    # WHEN a record of the instance arrives past FORMWORK_REDISPATCH_AFTER_SECONDS
    world.now = T0 + timedelta(seconds=SETTINGS.redispatch_after_seconds)
    deliver(app, record(state_image(store.get(instance_id))))

    # THEN a new run starts under the same id, allowed to follow a closed one
    assert policies(temporal, key) == [
        WorkflowIDReusePolicy.REJECT_DUPLICATE,
        WorkflowIDReusePolicy.ALLOW_DUPLICATE,
    ]


def test_a_record_whose_dispatch_fails_is_reported_and_the_others_go_on(
    app: App, store: InMemoryFormStore, temporal: FakeTemporal, world: World
) -> None:
    # GIVEN two instances with undispatched hooks, and Temporal refusing the first one's
    first, first_key = committed_not_dispatched(world, "conv-1")
    second, second_key = committed_not_dispatched(world, "conv-2")
    temporal.down.add(first_key)
    failing = record(state_image(store.get(first)))

    # WHEN both records come in one batch
    response = deliver(app, failing, record(state_image(store.get(second))))

    # THEN the failed record is reported (Lambda retries from it) and the other went through
    assert response == {
        "batchItemFailures": [{"itemIdentifier": failing["dynamodb"]["SequenceNumber"]}]
    }
    assert store.get(first).state.outbox[first_key].dispatched_at is None
    assert store.get(second).state.outbox[second_key].dispatched_at == T0
    assert first_key not in temporal.runs


def test_with_in_process_dispatch_the_relay_and_the_sweeper_do_nothing(
    store: InMemoryFormStore, world: World
) -> None:
    # GIVEN in-process dispatch (it never records dispatch: there is nothing to catch up on)
    instance_id, _ = committed_not_dispatched(world)
    inprocess = app_for(world.service(InProcessDispatcher()))
    # WHEN the relay and the sweeper run
    response = deliver(inprocess, record(state_image(store.get(instance_id))))
    swept = relay.sweep_handler({"instance_ids": [instance_id]}, LocalContext(), app=inprocess)
    # THEN they leave the hook alone
    assert response == {"batchItemFailures": []}
    assert swept["dispatched"] == [] and swept["skipped"] == "inprocess dispatch"
    assert store.get(instance_id).state.outbox


# ---------------------------------------------------------------------------- the sweeper


def test_the_sweeper_dispatches_what_the_named_instances_still_need(
    app: App, store: InMemoryFormStore, temporal: FakeTemporal, world: World
) -> None:
    # GIVEN one instance with an undispatched hook, and an id that is not there
    instance_id, key = committed_not_dispatched(world)

    # WHEN the sweeper is asked about both, twice
    first = relay.sweep_handler({"instance_ids": [instance_id, "fi_gone"]}, LocalContext(), app=app)
    second = relay.sweep_handler({"instance_ids": [instance_id]}, LocalContext(), app=app)

    # THEN the first sweep dispatched the hook; the second found nothing to do
    assert first == {"instances": 2, "dispatched": [key], "failed": {}}
    assert second == {"instances": 1, "dispatched": [], "failed": {}}
    assert len(temporal.runs[key]) == 1


def test_a_sweep_of_everything_reads_the_apps_outbox_scan_and_stops_when_told(
    app: App, store: InMemoryFormStore, temporal: FakeTemporal, world: World
) -> None:
    # GIVEN three instances with an undispatched hook, in an in-memory store (its own due
    # index, read by shard), paged one instance at a time
    store.page_size = 1
    found = [committed_not_dispatched(world, f"conv-{n}") for n in range(3)]

    class Ending:
        """A Lambda context whose time is running out: no time for a further page."""

        def get_remaining_time_in_millis(self) -> int:
            return relay.SWEEP_MARGIN_MS - 1

    # WHEN a sweep runs out of time after its first page, and a second has time for all
    short = relay.sweep_handler(None, Ending(), app=app)
    full = relay.sweep_handler(None, LocalContext(), app=app)
    # THEN the first dispatched one instance's hook only; the second, the other two
    (first,) = short["dispatched"]
    assert sorted([first, *full["dispatched"]]) == sorted(key for _, key in found)
    assert all(len(temporal.runs[key]) == 1 for _, key in found)


def test_the_scan_filter_matches_exactly_the_states_with_a_pending_entry(
    store: InMemoryFormStore, world: World
) -> None:
    # GIVEN an instance with a pending hook, and the same after the hook ran
    instance_id, _ = committed_not_dispatched(world)
    pending = state_image(store.get(instance_id))["state"]["S"]
    (key,) = store.get(instance_id).state.outbox
    world.service(None).run_hook(instance_id, key)
    assert store.get(instance_id).state.outbox[key].status == "done"
    done = state_image(store.get(instance_id))["state"]["S"]
    # THEN the marker the sweeper's scan filters on is in the first and not in the second
    assert PENDING_MARK in pending
    assert PENDING_MARK not in done


# ---------------------------------------------------------------------------- the tool path


def test_a_tool_call_dispatches_records_and_returns_when_temporal_is_up(
    service: FormService, store: InMemoryFormStore, temporal: FakeTemporal
) -> None:
    # WHEN the agent fills a field whose hook has an executor
    service.call(ALICE, "form_start", "c1", {"form": FORM.id})
    result = service.call(ALICE, "form_fill", "c2", {"form": FORM.id, "values": {"amount": 5}})
    # THEN its run is started under the key and the dispatch is recorded
    (key,) = result["fired"]
    assert result["ok"] and policies(temporal, key) == [WorkflowIDReusePolicy.REJECT_DUPLICATE]
    assert store.get("fi_1").state.outbox[key].dispatched_at == T0


def test_a_tool_call_keeps_its_answer_when_temporal_is_down(
    service: FormService, store: InMemoryFormStore, temporal: FakeTemporal
) -> None:
    # GIVEN Temporal refusing every start
    temporal.down.add("fi_1:field.amount.filled:1")
    # WHEN the agent fills the field
    service.call(ALICE, "form_start", "c1", {"form": FORM.id})
    result = service.call(ALICE, "form_fill", "c2", {"form": FORM.id, "values": {"amount": 5}})
    # THEN the call succeeds: the answer is stored, the hook waits for the relay, undispatched
    assert result["ok"] is True
    instance = store.get("fi_1")
    assert instance.field("amount").in_force().value == 5  # type: ignore[union-attr]
    (entry,) = instance.state.outbox.values()
    assert (entry.status, entry.dispatched_at) == ("pending", None)
    assert result["hooks"] == [{"key": entry.key, "status": "pending"}]


def test_an_operator_retry_may_start_a_new_run_under_the_same_key(
    service: FormService, store: InMemoryFormStore, temporal: FakeTemporal
) -> None:
    # GIVEN a hook dispatched once, whose run ended with the failure recorded as final
    service.call(ALICE, "form_start", "c1", {"form": FORM.id})
    (key,) = service.call(ALICE, "form_fill", "c2", {"form": FORM.id, "values": {"amount": 5}})[
        "fired"
    ]
    temporal.close_all()
    entry = store.get("fi_1").state.outbox[key]
    failed = entry.model_copy(update={"status": "failed", "attempts": 5, "error": "boom"})
    instance = store.get("fi_1")
    state = instance.state.model_copy(update={"outbox": {key: failed}})
    store.commit(Commit(instance_id="fi_1", expected_version=instance.version, state=state))

    # WHEN an operator retries it
    assert service.retry_hook("fi_1", key)

    # THEN a second run starts under the same workflow id
    assert policies(temporal, key) == [
        WorkflowIDReusePolicy.REJECT_DUPLICATE,
        WorkflowIDReusePolicy.ALLOW_DUPLICATE,
    ]


def test_approvals_are_not_started_as_hook_runs() -> None:
    # GIVEN an outbox with a pending approval and a pending executor
    def entry(key: str, kind: str) -> OutboxEntry:
        return OutboxEntry.model_validate(
            {"key": key, "hook_id": "h", "occurrence": 1, "kind": kind, "created_at": T0}
        )

    outbox = {"a": entry("fi_1:h:1", "approval"), "b": entry("fi_2:h:1", "executor")}
    # THEN only the executor is due for dispatch
    assert [e.key for e in due_entries(outbox, T0, timedelta(minutes=10))] == ["fi_2:h:1"]


# ---------------------------------------------------------------------------- configuration


def test_dispatch_settings_are_read_and_checked() -> None:
    settings = Settings.from_env(
        {
            "FORMWORK_DISPATCH": "temporal",
            "FORMWORK_HOOK_WAIT_MS": "250",
            "FORMWORK_HOOK_MAX_ATTEMPTS": "7",
            "TEMPORAL_ADDRESS": "ns.acct.tmprl.cloud:7233",
            "TEMPORAL_NAMESPACE": "ns.acct",
            "TEMPORAL_TASK_QUEUE": "hooks",
            "TEMPORAL_API_KEY": "secret-key",
        }
    )
    assert (settings.dispatch, settings.hook_wait_ms, settings.hook_max_attempts) == (
        "temporal",
        250,
        7,
    )
    assert settings.temporal.uses_tls and "secret-key" not in repr(settings)
    assert Settings.from_env({}).dispatch == "inprocess"
    assert Settings.from_env({}).hook_wait_ms == 1500


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("FORMWORK_DISPATCH", "sqs"),
        ("FORMWORK_HOOK_WAIT_MS", "soon"),
        ("FORMWORK_HOOK_WAIT_MS", "600000"),
        ("FORMWORK_HOOK_MAX_ATTEMPTS", "0"),
        ("TEMPORAL_ADDRESS", "no-port"),
        ("TEMPORAL_TLS", "maybe"),
        ("TEMPORAL_TLS_CLIENT_CERT_PATH", "/only/the/cert.pem"),
    ],
)
def test_bad_dispatch_settings_name_the_variable(variable: str, value: str) -> None:
    with pytest.raises(ConfigError, match=variable):
        Settings.from_env({variable: value})


def test_the_composition_root_picks_the_dispatcher_without_connecting() -> None:
    temporal = bootstrap.build_dispatcher(Settings(dispatch="temporal"))
    assert isinstance(temporal, TemporalDispatcher) and temporal.wait_ms == 1500
    assert isinstance(bootstrap.build_dispatcher(Settings()), InProcessDispatcher)


def test_the_connection_runs_calls_from_any_thread_on_one_loop(
    connection: TemporalConnection,
) -> None:
    async def loop_id() -> int:
        await connection.client()
        return id(asyncio.get_running_loop())

    assert connection.run(loop_id()) == connection.run(loop_id())


def test_an_old_record_does_not_start_a_run_again_for_a_hook_since_done(
    app: App, service: FormService, store: InMemoryFormStore, temporal: FakeTemporal, world: World
) -> None:
    # GIVEN a hook dispatched, then run to completion
    instance_id, key = committed_not_dispatched(world)
    deliver(app, record(state_image(store.get(instance_id))))
    dispatched = record(state_image(store.get(instance_id)))  # pending, dispatched_at = T0
    service.run_hook(instance_id, key)
    temporal.close_all()

    # WHEN the record showing it dispatched and pending arrives late (a replay, an outage)
    world.now = T0 + timedelta(hours=1)
    response = deliver(app, dispatched)

    # THEN the relay checks the stored entry, finds it done, and starts nothing
    assert response == {"batchItemFailures": []}
    assert len(temporal.runs[key]) == 1
