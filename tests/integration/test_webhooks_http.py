"""Webhooks end to end over HTTP: the local stack, real DynamoDB calls, real sockets.

One ``LocalStack`` for the module (AWS's DynamoDB Local, the table from ``template.yaml``,
the real handler in local execution environments, the local gateway) with
``FORMWORK_WEBHOOK_SOURCES`` (``crm``: tenant ``acme``, travel claims) and
``FORMWORK_WEBHOOK_SECRETS`` in the function's environment. Requests are signed with the real
clock, as a CRM would sign them. What was stored is read back from DynamoDB: a refused webhook
must leave no instance, no conversation index item and no delivery item behind.

The local gateway asks every route for a dev token (API Gateway asks none for this
``Authorizer: NONE`` route), so requests carry one; the handler ignores it.

Also here: Secrets Manager through moto's endpoint, an outbound delivery to a receiver on a
loopback socket, and the development source a plain ``make dev`` stack configures for itself.
The DynamoDB delivery log passes the delivery log contract in
``test_delivery_log_dynamodb.py``.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import boto3
import pytest
from standardwebhooks import Webhook

from forms.storage.dynamodb import DynamoDBFormStore
from formwork.aws.notify import DeliveryFailed, deliver
from formwork.infra.local.__main__ import banner
from formwork.infra.local.dynamodb import LocalDynamoDB
from formwork.infra.local.dynamodb_local import DynamoDBLocal
from formwork.infra.local.stack import LocalStack, local_webhooks
from formwork.webhooks import (
    FormEvent,
    HandedOverTo,
    SecretsManagerSecrets,
    SignatureRefused,
    check_secret,
    sign,
    verify,
)

SECRET = "crm-secret-0123456789"
DEV_TOKEN = "Bearer dev:crm-gateway"
SOURCES = {"crm": {"tenants": ["acme"], "forms": ["travel-claim"]}}


@pytest.fixture(scope="module")
def stack(dynamodb_local: DynamoDBLocal) -> Iterator[LocalStack]:
    environment = {
        "FORMWORK_WEBHOOK_SOURCES": json.dumps(SOURCES),
        "FORMWORK_WEBHOOK_SECRETS": json.dumps({"crm": SECRET}),
    }
    with LocalStack(
        api_port=0,
        max_environments=2,
        environment=environment,
        quiet=True,
        dynamodb=dynamodb_local,
        table_name=f"formwork-{uuid.uuid4().hex[:12]}",
    ) as running:
        yield running


@pytest.fixture(scope="module")
def store(stack: LocalStack) -> DynamoDBFormStore:
    return DynamoDBFormStore(stack.dynamodb_client(), stack.table_name)


@pytest.fixture
def conversation() -> str:
    return f"conv-{uuid.uuid4().hex[:10]}"


def body_for(conversation: str, **changes: Any) -> bytes:
    body = {
        "form": "travel-claim",
        "principal": "acme/alice",
        "conversation_id": conversation,
        "values": {"full_name": "Ana Ferreira", "destination": "Lisbon"},
        **changes,
    }
    return json.dumps(body).encode()


def post(
    stack: LocalStack,
    body: bytes,
    *,
    delivery: str,
    timestamp: int | None = None,
    secret: str = SECRET,
    source: str = "crm",
    standard: bool = False,
) -> tuple[int, dict[str, Any]]:
    """POST a signed webhook: the deprecated X-Formwork-* headers, or with ``standard``
    Standard Webhooks' as the specification's own library signs them."""
    moment = int(time.time()) if timestamp is None else timestamp
    signed = (
        {
            "webhook-id": delivery,
            "webhook-timestamp": str(moment),
            "webhook-signature": Webhook(secret).sign(
                delivery, datetime.fromtimestamp(moment, UTC), body.decode()
            ),
        }
        if standard
        else {
            "X-Formwork-Timestamp": str(moment),
            "X-Formwork-Delivery": delivery,
            "X-Formwork-Signature": sign(secret, moment, body),
        }
    )
    headers = {"Content-Type": "application/json", "Authorization": DEV_TOKEN, **signed}
    request = urllib.request.Request(
        f"{stack.api_url}/webhooks/{source}", body, headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def stored_keys(stack: LocalStack, *fragments: str) -> list[str]:
    """Every item key in the table mentioning any fragment (a conversation, a delivery id)."""
    client = stack.dynamodb_client()
    keys: list[str] = []
    request: dict[str, Any] = {"TableName": stack.table_name}
    while True:
        page = client.scan(**request)
        for item in page.get("Items", []):
            key = f"{item['pk']['S']} {item['sk']['S']}"
            if any(f in key for f in fragments):
                keys.append(key)
        if "LastEvaluatedKey" not in page:
            return keys
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def new_delivery() -> str:
    return f"d-{uuid.uuid4().hex[:12]}"


# ---------------------------------------------------------------------------- inbound


def test_a_signed_webhook_starts_a_session_stored_in_dynamodb(
    stack: LocalStack, store: DynamoDBFormStore, conversation: str
) -> None:
    # GIVEN a CRM signing a start for acme/alice
    delivery = new_delivery()
    # WHEN it posts it through the gateway
    status, answer = post(stack, body_for(conversation), delivery=delivery)
    # THEN the session is in DynamoDB, its seed answers are revisions by the webhook
    assert status == 201, answer
    (instance,) = store.list_conversation("acme/alice", conversation)
    assert instance.id == answer["instance"]
    revision = instance.history["full_name"].revisions[0]
    assert (revision.by, revision.tool_call_id) == ("webhook", f"webhook:crm:{delivery}")
    # AND the delivery and the signed request are recorded, each with a TTL attribute
    client = stack.dynamodb_client()
    item = client.get_item(
        TableName=stack.table_name,
        Key={"pk": {"S": f"W#crm#{delivery}"}, "sk": {"S": "DELIVERY"}},
        ConsistentRead=True,
    )["Item"]
    assert int(item["expires_at"]["N"]) > time.time() + 6 * 86_400
    assert json.loads(item["record"]["S"])["state"] == "done"
    # AND the agent, with alice's token, finds the form in that conversation
    request = urllib.request.Request(
        f"{stack.api_url}/conversations/{conversation}/status",
        headers={"Authorization": "Bearer dev:acme:alice"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        assert json.loads(response.read())["lines"][0].startswith("[form: travel-claim]")


def test_an_idempotent_redelivery_returns_the_same_instance(
    stack: LocalStack, store: DynamoDBFormStore, conversation: str
) -> None:
    delivery = new_delivery()
    body = body_for(conversation)
    first_status, first = post(stack, body, delivery=delivery)
    assert first_status == 201
    # WHEN the sender retries: same id, same body, signed a second later
    status, again = post(stack, body, delivery=delivery, timestamp=int(time.time()) + 1)
    # THEN the first outcome comes back and there is still one session
    assert status == 200
    assert again == {**first, "replayed": True}
    assert len(store.list_conversation("acme/alice", conversation)) == 1


def test_a_forged_webhook_is_refused_and_nothing_reaches_dynamodb(
    stack: LocalStack, conversation: str
) -> None:
    delivery = new_delivery()
    status, answer = post(
        stack, body_for(conversation), delivery=delivery, secret="guessed-secret-000000"
    )
    assert (status, answer["error"]) == (401, "bad_signature")
    assert stored_keys(stack, conversation, delivery) == []


def test_an_unknown_source_is_refused_and_nothing_reaches_dynamodb(
    stack: LocalStack, conversation: str
) -> None:
    delivery = new_delivery()
    status, answer = post(stack, body_for(conversation), delivery=delivery, source="erp")
    assert (status, answer["error"]) == (401, "bad_signature")
    assert stored_keys(stack, conversation, delivery) == []


def test_a_stale_webhook_is_refused_and_nothing_reaches_dynamodb(
    stack: LocalStack, conversation: str
) -> None:
    delivery = new_delivery()
    ten_minutes_ago = int(time.time()) - 600
    status, answer = post(
        stack, body_for(conversation), delivery=delivery, timestamp=ten_minutes_ago
    )
    assert (status, answer["error"]) == (401, "stale_timestamp")
    assert stored_keys(stack, conversation, delivery) == []


def test_a_replayed_delivery_id_with_another_body_is_refused(
    stack: LocalStack, store: DynamoDBFormStore, conversation: str
) -> None:
    # GIVEN a delivery that started a session for alice
    delivery = new_delivery()
    status, first = post(stack, body_for(conversation), delivery=delivery)
    assert status == 201
    # WHEN the same id comes with a body naming bob (correctly signed)
    status, answer = post(stack, body_for(conversation, principal="acme/bob"), delivery=delivery)
    # THEN it is refused, and bob has nothing in DynamoDB
    assert (status, answer["error"]) == (409, "delivery_reused")
    assert store.list_conversation("acme/bob", conversation) == []
    assert [i.id for i in store.list_conversation("acme/alice", conversation)] == [
        first["instance"]
    ]


def test_a_captured_request_replayed_under_a_new_id_is_refused(
    stack: LocalStack, store: DynamoDBFormStore, conversation: str
) -> None:
    # GIVEN a signed request captured on its way in
    body, moment = body_for(conversation), int(time.time())
    assert post(stack, body, delivery=new_delivery(), timestamp=moment)[0] == 201
    # WHEN its bytes and signature are replayed with a fresh delivery id
    replay_id = new_delivery()
    status, answer = post(stack, body, delivery=replay_id, timestamp=moment)
    # THEN it is refused and there is still one session, and no record of the replay's id
    assert (status, answer["error"]) == (409, "signature_reused")
    assert len(store.list_conversation("acme/alice", conversation)) == 1
    assert stored_keys(stack, replay_id) == []


def test_a_principal_of_another_tenant_is_refused_and_nothing_reaches_dynamodb(
    stack: LocalStack, store: DynamoDBFormStore, conversation: str
) -> None:
    # GIVEN crm, configured for the tenant acme only, signing a start for globex's user
    delivery = new_delivery()
    body = body_for(conversation, principal="globex/mallory")
    status, answer = post(stack, body, delivery=delivery)
    # THEN it is a 403 with the error JSON, and DynamoDB holds nothing of it
    assert status == 403
    assert answer == {"error": "tenant_not_allowed", "message": answer["message"]}
    assert stored_keys(stack, conversation, delivery) == []
    assert store.list_conversation("globex/mallory", conversation) == []


def test_a_form_the_source_may_not_start_is_refused_and_nothing_reaches_dynamodb(
    stack: LocalStack, conversation: str
) -> None:
    delivery = new_delivery()
    body = body_for(conversation, form="grant-application", values={})
    status, answer = post(stack, body, delivery=delivery)
    assert (status, answer["error"]) == (403, "form_not_allowed")
    assert stored_keys(stack, conversation, delivery) == []


# ---------------------------------------------------------------------------- make dev


def test_the_local_stack_makes_a_dev_source_only_when_none_is_given() -> None:
    # nothing given: a "crm" source with a fresh secret, any tenant and form
    added, dev = local_webhooks({})
    assert dev is not None and dev[0] == "crm" and len(dev[1]) >= 16
    # a Standard Webhooks secret: whsec_ and 32 random bytes, as off-the-shelf libraries take it
    assert dev[1].startswith("whsec_") and check_secret(dev[1])
    assert json.loads(added["FORMWORK_WEBHOOK_SECRETS"]) == {"crm": dev[1]}
    assert json.loads(added["FORMWORK_WEBHOOK_SOURCES"]) == {"crm": {"tenants": "*", "forms": "*"}}
    assert local_webhooks({})[1] != dev  # drawn per run
    # secrets given: their sources, any tenant and form; no dev secret
    added, dev = local_webhooks({"FORMWORK_WEBHOOK_SECRETS": json.dumps({"erp": SECRET})})
    assert dev is None and "FORMWORK_WEBHOOK_SECRETS" not in added
    assert json.loads(added["FORMWORK_WEBHOOK_SOURCES"]) == {"erp": {"tenants": "*", "forms": "*"}}
    # sources given: used as they are
    assert local_webhooks({"FORMWORK_WEBHOOK_SOURCES": json.dumps(SOURCES)}) == ({}, None)


def test_a_plain_dev_stack_accepts_webhooks_signed_with_the_secret_its_banner_prints(
    monkeypatch: pytest.MonkeyPatch, dynamodb_local: DynamoDBLocal
) -> None:
    # GIVEN a shell with no webhook settings, and the stack started as make dev starts it
    for name in ("FORMWORK_WEBHOOK_SOURCES", "FORMWORK_WEBHOOK_SECRETS"):
        monkeypatch.delenv(name, raising=False)
    with LocalStack(
        api_port=0,
        max_environments=1,
        quiet=True,
        dynamodb=dynamodb_local,
        table_name=f"formwork-{uuid.uuid4().hex[:12]}",
    ) as dev:
        assert dev.dev_webhook is not None
        source, secret = dev.dev_webhook
        # THEN the banner names the route and the secret
        printed = banner(dev)
        assert f"{dev.api_url}/webhooks/{source}" in printed and secret in printed
        # AND a request signed with it starts a session (no 503, no export needed), whether
        # signed by the specification's library or with the deprecated headers
        conversation = f"conv-{uuid.uuid4().hex[:10]}"
        status, answer = post(
            dev,
            body_for(conversation),
            delivery=new_delivery(),
            secret=secret,
            source=source,
            standard=True,
        )
        assert status == 201, answer
        status, answer = post(
            dev, body_for(conversation), delivery=new_delivery(), secret=secret, source=source
        )
        assert status in (200, 201), answer
        # AND a guessed secret still gets nothing
        status, answer = post(
            dev, body_for(conversation), delivery=new_delivery(), secret="guessed-secret-000000"
        )
        assert (status, answer["error"]) == (401, "bad_signature")


NOW = datetime(2025, 3, 10, 9, 0, tzinfo=UTC)


# ---------------------------------------------------------------------------- Secrets Manager


def test_secrets_come_from_secrets_manager_under_the_prefix(moto_server: LocalDynamoDB) -> None:
    # GIVEN moto's endpoint (it serves Secrets Manager too) holding two sources' secrets
    client = boto3.client(
        "secretsmanager",
        endpoint_url=moto_server.endpoint,
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )
    prefix = f"formwork-{uuid.uuid4().hex[:8]}/webhooks/"
    client.create_secret(Name=f"{prefix}crm", SecretString=SECRET)
    client.create_secret(Name=f"{prefix}billing", SecretString=json.dumps([SECRET, "old" * 6]))
    source = SecretsManagerSecrets(client, prefix)
    # THEN each source reads its own, a rotation list reads as several, a missing one as none
    assert source.keys_for("crm") == (SECRET,)
    assert source.keys_for("billing") == (SECRET, "old" * 6)
    assert source.keys_for("erp") == ()


# ---------------------------------------------------------------------------- outbound


class _Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        server: Any = self.server
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {k.lower(): v for k, v in self.headers.items()}
        server.received.append((body, headers))
        try:
            verify(
                [SECRET],
                headers.get("x-formwork-signature"),
                headers.get("x-formwork-timestamp"),
                body,
                now=time.time(),
            )
        except SignatureRefused:
            self.send_response(401)
        else:
            self.send_response(server.status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        del format, args


@pytest.fixture
def receiver() -> Iterator[Any]:
    server: Any = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    server.received = []
    server.status = 204
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(5)


EVENT = FormEvent(
    event="form.completed",
    delivery="fi_1:form.complete:1",
    form="onboarding",
    instance="fi_1",
    principal="acme/alice",
    conversation_id="conv-1",
    status="completed",
    values={"company": "Ferreira Lda"},
    occurred_at=NOW,
)


def test_an_outbound_delivery_is_verified_by_a_real_receiver(receiver: Any) -> None:
    url = f"http://127.0.0.1:{receiver.server_address[1]}/hooks"
    assert deliver(url, SECRET, EVENT, timestamp=int(time.time())) == 204
    ((body, headers),) = receiver.received
    assert json.loads(body)["delivery"] == headers["x-formwork-delivery"] == EVENT.delivery


def test_a_handover_is_delivered_as_its_own_event_the_standard_library_verifies(
    receiver: Any,
) -> None:
    # GIVEN a form handed over to another, as its notifier reports it
    went_to = HandedOverTo(form="enterprise", instance="fi_2", carried=("company",))
    handed = EVENT.model_copy(
        update={"event": "form.handed_over", "status": "handed_over", "handed_over_to": went_to}
    )
    # WHEN it is delivered over a socket
    url = f"http://127.0.0.1:{receiver.server_address[1]}/hooks"
    assert deliver(url, SECRET, handed, timestamp=int(time.time())) == 204
    # THEN the receiver verifies it with the specification's own library, and reads the event
    ((body, headers),) = receiver.received
    event = Webhook(SECRET.encode()).verify(body, headers)
    assert headers["x-formwork-event"] == event["event"] == "form.handed_over"
    assert event["handed_over_to"] == {
        "form": "enterprise",
        "instance": "fi_2",
        "reason": None,
        "carried": ["company"],
        "not_carried": {},
    }


def test_an_outbound_delivery_refused_by_the_receiver_raises(receiver: Any) -> None:
    url = f"http://127.0.0.1:{receiver.server_address[1]}/hooks"
    with pytest.raises(DeliveryFailed) as refused:
        deliver(url, "wrong-secret-00000000", EVENT, timestamp=int(time.time()))
    assert refused.value.status == 401 and not refused.value.retryable
    receiver.status = 503
    with pytest.raises(DeliveryFailed) as down:
        deliver(url, SECRET, EVENT, timestamp=int(time.time()))
    assert down.value.status == 503 and down.value.retryable


def test_an_unreachable_receiver_raises(receiver: Any) -> None:
    port = receiver.server_address[1]
    receiver.shutdown()
    receiver.server_close()
    with pytest.raises(DeliveryFailed) as caught:
        deliver(f"http://127.0.0.1:{port}/hooks", SECRET, EVENT, timestamp=0, timeout=2)
    assert caught.value.status is None
