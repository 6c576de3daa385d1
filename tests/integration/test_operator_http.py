"""The operator routes end to end: the local stack as ``make dev`` runs it (DynamoDB Local,
the table and its indexes from ``template.yaml``, the real handler, the local gateway), with
dev tokens of two tenants. A hook failed for good is listed for its tenant's operator only,
another tenant's operator gets the same 404 as for a missing hook, and a retry reopens it; a
migration's dry run reads the open-form index on DynamoDB Local."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from forms.instance import Commit, OutboxEntry
from forms.storage.dynamodb import DynamoDBFormStore
from formwork.infra.local.dynamodb_local import DynamoDBLocal
from formwork.infra.local.gateway import dev_token
from formwork.infra.local.stack import LocalStack
from tests.integration.stacks import local_stack
from tests.integration.test_approval_queue_http import send

OLGA = dev_token("olga", "acme", roles=["operator"])
GUS = dev_token("gus", "globex", roles=["operator"])
ALICE = dev_token("alice", "acme")


@pytest.fixture(scope="module")
def stack(dynamodb_local: DynamoDBLocal) -> Iterator[LocalStack]:
    with local_stack(dynamodb_local) as running:
        yield running


def failed_hook(stack: LocalStack) -> str:
    """A travel claim of acme's alice whose hook failed for good (written as the engine
    records one); its key."""
    conversation = f"conv-{uuid.uuid4().hex[:10]}"
    envelope = {"tool_call_id": f"start-{conversation}", "input": {"form": "travel-claim"}}
    path = f"/conversations/{conversation}/tools/form_start"
    status, result = send(stack, "POST", path, ALICE, envelope)
    assert status == 200 and result["ok"], result
    store = DynamoDBFormStore(stack.dynamodb_client(), stack.table_name)
    instance = store.get(str(result["instance"]))
    now = datetime.now(UTC)
    entry = OutboxEntry(
        key=f"{instance.id}:field.destination.filled:1",
        hook_id="field.destination.filled",
        occurrence=1,
        status="failed",
        attempts=3,
        error="RuntimeError: the CRM is down",
        created_at=now,
        finished_at=now,
    )
    outbox = {**instance.state.outbox, entry.key: entry}
    state = instance.state.model_copy(update={"outbox": outbox, "updated_at": now})
    store.commit(Commit(instance_id=instance.id, expected_version=instance.version, state=state))
    return entry.key


def listed(stack: LocalStack, authorization: str) -> list[str]:
    status, body = send(stack, "GET", "/operator/hooks/failed", authorization)
    assert status == 200, body
    return [row["key"] for row in body["hooks"]]


def test_failed_hooks_are_their_tenants_and_a_retry_reopens_one(stack: LocalStack) -> None:
    key = failed_hook(stack)
    # THEN acme's operator lists it (the index is eventually consistent: DynamoDB Local's is not)
    assert key in listed(stack, OLGA)
    assert key not in listed(stack, GUS)
    # AND globex's operator gets the same 404 as for a hook that does not exist
    foreign = send(stack, "POST", f"/operator/hooks/{key}/retry", GUS)
    missing = send(stack, "POST", "/operator/hooks/fi_nothing:field.x.filled:1/retry", GUS)
    assert foreign[0] == missing[0] == 404 and foreign[1]["error"] == missing[1]["error"]
    # AND without the role it is 403
    assert send(stack, "GET", "/operator/hooks/failed", ALICE)[0] == 403
    # WHEN acme's operator retries it
    status, body = send(stack, "POST", f"/operator/hooks/{key}/retry", OLGA)
    assert status == 200 and body["key"] == key, body


def test_a_migrations_dry_run_reads_the_open_form_index(stack: LocalStack) -> None:
    status, body = send(stack, "POST", "/operator/forms/travel-claim/migrate", OLGA, {})
    assert status == 200, body
    assert body["dry_run"] and body["instances"] == []  # every claim is on the current version
    assert send(stack, "POST", "/operator/forms/nothing/migrate", OLGA, {})[0] == 404
