"""Webhooks through the Lambda handler: signed events in, sessions (and refusals) out.

Events are payload v2 requests built from the fixtures (``conftest.build_event``) the way API
Gateway sends them for an ``Authorizer: NONE`` route: no JWT claims. The service runs on the
in-memory store; the delivery log is in memory; the clock is fixed. Every refusal is checked
against what was stored: nothing.

Two inbound sources are configured: ``crm``, limited to the tenant ``acme`` and two forms, and
``billing``, configured with no limits (``"*"``). Outbound notifications sign with secrets of
their own (``notify_secrets``), never the inbound ones.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import replace
from datetime import date, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Annotated, Any, cast

import pytest
from pydantic import Field

from forms import FormService
from forms.app.conversation import Caller
from forms.definition import Checkpoint, FormDef, Step, field
from forms.effects import HandOver
from forms.examples import EXAMPLES
from forms.state import FormState, HookContext, Values
from formwork import application, bootstrap, webhook_secrets
from formwork.aws.notify import DeliveryFailed, deliver, notifier
from formwork.bootstrap import App
from formwork.config import ConfigError, Settings
from formwork.webhook_settings import WebhookSettings
from formwork.webhooks import (
    DEFAULT_LEASE,
    LEGACY_HEADERS_UNTIL,
    DeliveryRecord,
    DynamoDBDeliveryLog,
    FormEvent,
    InMemoryDeliveryLog,
    SecretsManagerSecrets,
    SecretSource,
    SecretsUnavailable,
    SourceLimits,
    StaticSecrets,
    WebhookStart,
    claim_delivery,
    parse_secret_value,
    sign,
    sign_all,
    standard_sign_all,
    tool_call_id,
    verify,
    verify_standard,
)
from tests.functional.conftest import (
    ALICE,
    SETTINGS,
    T0,
    Api,
    RecordingStore,
    Response,
    build_event,
    load_event,
)
from tests.support import FakeSecretsManager, TickingClock, app_for, service_for

ROOT = Path(__file__).resolve().parents[2]
NOW = int(T0.timestamp())
SECRET = "crm-secret-0123456789"
NEW, OLD = "billing-new-0123456789", "billing-old-0123456789"
NOTIFY_SECRET = "crm-notify-0123456789"
"""What notifications to the CRM are signed with: not the CRM's inbound secret."""
CRM_LIMITS = SourceLimits(
    tenants=frozenset({"acme"}), forms=frozenset({"travel-claim", "onboarding"})
)
ANYTHING = SourceLimits(tenants=None, forms=None)
WEBHOOKS = WebhookSettings(
    sources=(("billing", ANYTHING), ("crm", CRM_LIMITS)),
    secrets=(("billing", (NEW, OLD)), ("crm", (SECRET,))),
    notify_secrets=(("crm", (NOTIFY_SECRET,)),),
)
CONVERSATION = "conv-crm"


def start_body(**changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "form": "travel-claim",
        "principal": "acme/alice",
        "conversation_id": CONVERSATION,
        "values": {"full_name": "Ana Ferreira", "destination": "Lisbon"},
        "metadata": {"crm_contact": "C-1187"},
    }
    body.update(changes)
    return body


class Clock:
    def __init__(self, at: float) -> None:
        self.at = at

    def __call__(self) -> float:
        return self.at


class Sender:
    """A CRM posting signed webhooks to the handler."""

    def __init__(self, api: Api, log: InMemoryDeliveryLog, clock: Clock) -> None:
        self.api = api
        self.log = log
        self.clock = clock

    def event(
        self,
        body: Any,
        *,
        source: str = "crm",
        delivery: str | None = "d-1",
        timestamp: int = NOW,
        secret: str = SECRET,
        signature: str | None = None,
        headers: Mapping[str, str] | None = None,
        claims: Mapping[str, Any] | None = None,
        base64_body: bool = False,
        standard: bool = False,
    ) -> dict[str, Any]:
        """The event of a signed request: the deprecated ``X-Formwork-*`` headers, or with
        ``standard`` the Standard Webhooks ones (``signature`` then signs as ``delivery``)."""
        text = body if isinstance(body, str) else json.dumps(body)
        if standard:
            signed = {
                "webhook-timestamp": str(timestamp),
                "webhook-signature": signature
                or standard_sign_all([secret], delivery or "", timestamp, text.encode()),
            }
            if delivery is not None:
                signed["webhook-id"] = delivery
        else:
            signed = {
                "X-Formwork-Timestamp": str(timestamp),
                "X-Formwork-Signature": signature or sign(secret, timestamp, text.encode()),
            }
            if delivery is not None:
                signed["X-Formwork-Delivery"] = delivery
        event = build_event(
            "POST",
            f"/webhooks/{source}",
            body=text,
            claims=claims,
            headers={**signed, **(headers or {})},
            base64_body=base64_body,
        )
        event["routeKey"] = event["requestContext"]["routeKey"] = "POST /webhooks/{source}"
        return event

    def post(self, body: Any, **kwargs: Any) -> Response:
        return self.api.send(self.event(body, **kwargs))


@pytest.fixture
def log() -> InMemoryDeliveryLog:
    return InMemoryDeliveryLog()


@pytest.fixture
def clock() -> Clock:
    return Clock(NOW + 5)


@pytest.fixture
def app(service: FormService, log: InMemoryDeliveryLog, clock: Clock) -> App:
    """The handler's App: the service and settings of ``conftest``, and the webhook parts:
    the two sources, the in-memory ``log`` and the fixed ``clock``."""
    return app_for(
        service, settings=SETTINGS, webhook_settings=WEBHOOKS, delivery_log=log, clock=clock
    )


@pytest.fixture
def crm(api: Api, log: InMemoryDeliveryLog, clock: Clock) -> Sender:
    return Sender(api, log, clock)


def nothing_stored(store: RecordingStore, log: InMemoryDeliveryLog) -> bool:
    return store.writes == 0 and not log.records() and not log.bindings()


def instances(store: RecordingStore) -> list[Any]:
    return store.list_conversation("acme/alice", CONVERSATION)


# ---------------------------------------------------------------------------- a good delivery


def test_a_signed_delivery_starts_a_session_with_webhook_provenance(
    crm: Sender, store: RecordingStore, api: Api
) -> None:
    # GIVEN a CRM opening a travel claim for acme/alice with two seed answers
    # WHEN it posts the signed webhook (no JWT: the route has no authorizer)
    response = crm.post(start_body())
    # THEN a session is created and the answer names it, with the status line
    assert response.status == 201, response
    answer = response.json()
    assert answer["ok"] is True and answer["delivery"] == "d-1"
    assert answer["form"] == "travel-claim" and answer["conversation_id"] == CONVERSATION
    assert answer["status_line"].startswith("[form: travel-claim]")
    assert answer["result"]["summary"].startswith("Started")
    assert response.headers["cache-control"] == "no-store"
    # AND the stored instance is alice's, its seed answers are revisions by the webhook
    (instance,) = instances(store)
    assert instance.id == answer["instance"]
    assert (instance.principal, instance.conversation_id) == ("acme/alice", CONVERSATION)
    for field_id in ("full_name", "destination"):
        (revision,) = instance.history[field_id].revisions
        assert revision.by == "webhook"
        assert revision.actor == "acme/alice"
        assert revision.tool_call_id == "webhook:crm:d-1"
    # AND the agent, holding alice's token, carries on in that conversation
    status = api.status(CONVERSATION, claims=ALICE)
    assert status.status == 200
    assert status.json()["lines"][0].startswith("[form: travel-claim]")
    read = api.call("form_read", CONVERSATION, form="travel-claim").json()
    assert read["ok"] is True and read["instance"] == instance.id


def test_the_delivery_is_recorded_with_the_senders_metadata(
    crm: Sender, log: InMemoryDeliveryLog
) -> None:
    crm.post(start_body())
    (record,) = log.records()
    assert (record.source, record.delivery, record.state) == ("crm", "d-1", "done")
    assert record.metadata == {"crm_contact": "C-1187"}
    assert record.digest == WebhookStart.model_validate(start_body()).digest()


def test_a_rejected_seed_value_is_reported_and_the_session_still_starts(
    crm: Sender, store: RecordingStore
) -> None:
    response = crm.post(start_body(values={"full_name": "Ana Ferreira", "staff_id": "nope"}))
    assert response.status == 201
    assert [r["field"] for r in response.json()["result"]["rejected"]] == ["staff_id"]
    assert len(instances(store)) == 1


def test_jwt_claims_sent_along_are_ignored(crm: Sender, store: RecordingStore) -> None:
    # GIVEN a request that also carries someone's verified claims
    response = crm.post(start_body(), claims={"sub": "mallory", "tenant": "evil"})
    # THEN the session belongs to the principal the signed payload names
    assert response.status == 201
    assert store.list_conversation("evil/mallory", CONVERSATION) == []
    assert len(instances(store)) == 1


def test_a_base64_body_is_verified_on_its_decoded_bytes(crm: Sender) -> None:
    assert crm.post(start_body(), base64_body=True).status == 201


# ---------------------------------------------------------------------------- forged


def test_a_forged_signature_is_refused_and_nothing_is_stored(
    crm: Sender, store: RecordingStore, log: InMemoryDeliveryLog
) -> None:
    # GIVEN a request signed with a secret that is not the CRM's
    response = crm.post(start_body(), secret="guessed-secret-000000")
    # THEN it is a 401 with the webhook auth scheme, and nothing was written anywhere
    assert response.status == 401
    assert response.json()["error"] == "bad_signature"
    assert response.headers["www-authenticate"] == "Formwork-HMAC-SHA256"
    assert nothing_stored(store, log)


def test_an_unknown_source_is_refused_like_a_bad_signature(
    crm: Sender, store: RecordingStore, log: InMemoryDeliveryLog
) -> None:
    forged = crm.post(start_body(), secret="guessed-secret-000000").json()
    for source in ("erp", "Crm", "x" * 40):
        response = crm.post(start_body(), source=source)
        assert response.status == 401
        assert response.json() == forged
    assert nothing_stored(store, log)


def test_a_body_changed_after_signing_is_refused(
    crm: Sender, store: RecordingStore, log: InMemoryDeliveryLog
) -> None:
    # GIVEN a signature over one body, sent with a body naming another principal
    signature = sign(SECRET, NOW, json.dumps(start_body()).encode())
    response = crm.post(start_body(principal="acme/bob"), signature=signature)
    assert response.status == 401
    assert response.json()["error"] == "bad_signature"
    assert nothing_stored(store, log)


@pytest.mark.parametrize(
    ("drop", "code"),
    [("X-Formwork-Signature", "missing_signature"), ("X-Formwork-Timestamp", "missing_timestamp")],
)
def test_missing_signature_headers_are_refused(
    crm: Sender, store: RecordingStore, log: InMemoryDeliveryLog, drop: str, code: str
) -> None:
    event = crm.event(start_body())
    del event["headers"][drop]
    response = crm.api.send(event)
    assert (response.status, response.json()["error"]) == (401, code)
    assert nothing_stored(store, log)


# ---------------------------------------------------------------------------- source limits


@pytest.mark.parametrize("principal", ["globex/mallory", "acme-eu/alice"])
def test_a_source_may_not_start_sessions_outside_its_tenants(
    crm: Sender, store: RecordingStore, log: InMemoryDeliveryLog, principal: str
) -> None:
    # GIVEN crm, limited to the tenant acme, signing a start for someone else's user
    response = crm.post(start_body(principal=principal))
    # THEN it is refused with a clear error, and nothing was written anywhere
    assert response.status == 403
    answer = response.json()
    assert set(answer) == {"error", "message"}
    assert answer["error"] == "tenant_not_allowed"
    assert "crm" in answer["message"]
    assert nothing_stored(store, log)


def test_a_source_may_not_start_forms_outside_its_list(
    crm: Sender, store: RecordingStore, log: InMemoryDeliveryLog
) -> None:
    # GIVEN crm, limited to travel claims and onboarding, asking for a grant application
    response = crm.post(start_body(form="grant-application", values={}))
    # THEN it is refused, and nothing was written
    assert (response.status, response.json()["error"]) == (403, "form_not_allowed")
    assert "grant-application" in response.json()["message"]
    assert nothing_stored(store, log)


def test_a_source_configured_for_any_tenant_starts_sessions_for_anyone(
    crm: Sender, store: RecordingStore
) -> None:
    # GIVEN billing, configured explicitly with "tenants": "*" and "forms": "*"
    body = start_body(principal="globex/bob", form="grant-application", values={})
    # THEN it may start any form for a principal of any tenant
    response = crm.post(body, source="billing", secret=NEW, delivery="b-0")
    assert response.status == 201, response
    assert store.list_conversation("globex/bob", CONVERSATION)


def test_a_multi_tenant_deployment_refuses_a_principal_without_a_tenant(
    crm: Sender, store: RecordingStore, log: InMemoryDeliveryLog
) -> None:
    # GIVEN a deployment with a tenant claim, and billing, which may name any tenant
    assert crm.api.app.settings.tenant_claim is not None
    # WHEN it signs a start for a principal with no tenant, which no token could ever reach
    body = start_body(principal="carol", form="grant-application", values={})
    response = crm.post(body, source="billing", secret=NEW, delivery="b-1")
    # THEN it is refused as data, and nothing was written anywhere
    assert (response.status, response.json()["error"]) == (422, "principal_without_tenant")
    assert nothing_stored(store, log)


def test_a_single_tenant_deployment_starts_sessions_for_bare_principals(
    api: Api, log: InMemoryDeliveryLog, clock: Clock, store: RecordingStore
) -> None:
    # GIVEN a deployment that says it is single-tenant
    single = api.using(
        settings=replace(SETTINGS, tenant_claim=None),
        webhook_settings=WEBHOOKS,
        delivery_log=log,
        clock=clock,
    )
    # WHEN billing starts a form for a bare principal (a token's sub there)
    body = start_body(principal="carol", form="grant-application", values={})
    response = Sender(single, log, clock).post(body, source="billing", secret=NEW, delivery="b-2")
    # THEN the session is carol's
    assert response.status == 201, response
    assert store.list_conversation("carol", CONVERSATION)


def test_a_refused_principal_does_not_burn_the_delivery_id(crm: Sender) -> None:
    # GIVEN a start refused for a principal outside the source's tenants
    assert crm.post(start_body(principal="globex/mallory")).status == 403
    # WHEN the sender fixes the principal and retries under the same delivery id
    response = crm.post(start_body(), timestamp=NOW + 1)
    # THEN it starts the session: the refusal recorded nothing
    assert response.status == 201


# ---------------------------------------------------------------------------- stale


@pytest.mark.parametrize("skew", [-301, 301, 7 * 86_400])
def test_a_stale_timestamp_is_refused_and_nothing_is_stored(
    crm: Sender, store: RecordingStore, log: InMemoryDeliveryLog, clock: Clock, skew: int
) -> None:
    # GIVEN a correctly signed request whose timestamp is too far from the receiver's clock
    clock.at = NOW + skew
    response = crm.post(start_body())
    # THEN it is refused as stale, and nothing was written
    assert (response.status, response.json()["error"]) == (401, "stale_timestamp")
    assert nothing_stored(store, log)


def test_the_tolerance_is_inclusive_and_configurable(
    api: Api, store: RecordingStore, log: InMemoryDeliveryLog
) -> None:
    strict = WebhookSettings(sources=WEBHOOKS.sources, secrets=WEBHOOKS.secrets, tolerance=30)
    on_time = api.using(webhook_settings=strict, delivery_log=log, clock=Clock(NOW + 30))
    assert Sender(on_time, log, Clock(0)).post(start_body()).status == 201
    late = api.using(webhook_settings=strict, delivery_log=log, clock=Clock(NOW + 31))
    response = Sender(late, log, Clock(0)).post(start_body(), delivery="d-2")
    assert response.json()["error"] == "stale_timestamp"


# ---------------------------------------------------------------------------- replayed


def test_a_reused_delivery_id_with_another_body_is_refused(
    crm: Sender, store: RecordingStore
) -> None:
    # GIVEN a delivery that started a session
    first = crm.post(start_body())
    writes = store.writes
    # WHEN another body comes under the same delivery id (correctly signed)
    response = crm.post(start_body(principal="acme/bob"), timestamp=NOW + 1)
    # THEN it is refused and nothing more was written: bob got no session
    assert response.status == 409
    assert response.json()["error"] == "delivery_reused"
    assert store.writes == writes
    assert store.list_conversation("acme/bob", CONVERSATION) == []
    assert [i.id for i in instances(store)] == [first.json()["instance"]]


def test_a_captured_request_replayed_under_a_fresh_delivery_id_is_refused(
    crm: Sender, store: RecordingStore
) -> None:
    # GIVEN a signed request that was delivered as d-1
    crm.post(start_body())
    writes = store.writes
    # WHEN an eavesdropper replays its exact bytes and signature, inside the window, as d-2
    response = crm.post(start_body(), delivery="d-2")
    # THEN it is refused and no second session exists
    assert (response.status, response.json()["error"]) == (409, "signature_reused")
    assert store.writes == writes
    assert len(instances(store)) == 1


def test_an_idempotent_redelivery_returns_the_original_result(
    crm: Sender, store: RecordingStore, clock: Clock
) -> None:
    # GIVEN a delivery that started a session
    first = crm.post(start_body())
    writes = store.writes
    # WHEN the sender retries it a minute later: same id, same body, signed afresh
    clock.at += 60
    again = crm.post(start_body(), timestamp=NOW + 60)
    # THEN it is a 200 with the first outcome, and nothing was written
    assert again.status == 200
    assert again.json() == {**first.json(), "replayed": True}
    assert store.writes == writes
    # AND the exact captured request replayed as it was is the same idempotent case
    assert crm.post(start_body()).json()["instance"] == first.json()["instance"]
    assert len(instances(store)) == 1


def test_the_same_content_in_another_key_order_is_the_same_delivery(crm: Sender) -> None:
    first = crm.post(start_body())
    reordered = json.dumps(dict(reversed(start_body().items())), indent=1)
    again = crm.post(reordered, timestamp=NOW + 1)
    assert again.status == 200 and again.json()["instance"] == first.json()["instance"]


def test_a_delivery_still_being_handled_asks_the_sender_to_retry(
    crm: Sender, store: RecordingStore, log: InMemoryDeliveryLog
) -> None:
    # GIVEN another attempt holds the claim on d-1 (its lease runs for 60 s from NOW)
    digest = WebhookStart.model_validate(start_body()).digest()
    claim_delivery(log, "crm", "d-1", digest, now=T0)
    # WHEN the same delivery arrives 5 s later
    response = crm.post(start_body())
    # THEN it is told to come back when the lease ends; nothing was created
    assert (response.status, response.json()["error"]) == (409, "delivery_in_progress")
    assert response.headers["retry-after"] == "55"
    assert store.writes == 0


def test_a_delivery_whose_handler_died_before_starting_is_taken_over(
    crm: Sender, store: RecordingStore, log: InMemoryDeliveryLog, clock: Clock
) -> None:
    # GIVEN a claim left by a handler that crashed before creating anything
    digest = WebhookStart.model_validate(start_body()).digest()
    claim_delivery(log, "crm", "d-1", digest, now=T0)
    # WHEN the sender retries after the lease ran out
    clock.at = NOW + DEFAULT_LEASE.total_seconds() + 1
    response = crm.post(start_body(), timestamp=int(clock.at))
    # THEN the retry starts the session
    assert response.status == 201
    assert len(instances(store)) == 1


def test_a_delivery_whose_handler_died_after_starting_is_not_started_twice(
    crm: Sender, service: FormService, store: RecordingStore, log: InMemoryDeliveryLog, clock: Clock
) -> None:
    # GIVEN a handler that claimed d-1, started the session, and died before recording it
    payload = WebhookStart.model_validate(start_body())
    claim_delivery(log, "crm", "d-1", payload.digest(), now=T0)
    started = service.call(
        Caller("acme/alice", CONVERSATION, source="webhook"),
        "form_start",
        tool_call_id("crm", "d-1"),
        {"form": "travel-claim", "values": payload.values},
    )
    # WHEN the sender retries after the lease
    clock.at = NOW + DEFAULT_LEASE.total_seconds() + 1
    response = crm.post(start_body(), timestamp=int(clock.at))
    # THEN it answers with the session that exists (200: nothing new was created)
    assert response.status == 200
    assert response.json()["instance"] == started["instance"]
    assert len(instances(store)) == 1
    (record,) = log.records()
    assert record.state == "done"


# ---------------------------------------------------------------------------- bad requests


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (start_body(principal="acme/alice/x"), 422, "invalid_payload"),
        ({"form": "travel-claim", "conversation_id": CONVERSATION}, 422, "invalid_payload"),
        (start_body(user_id="mallory"), 422, "invalid_payload"),
        (start_body(values="Lisbon"), 422, "invalid_payload"),
        (start_body(form="no-such-form"), 422, "unknown_form"),
        ("[1, 2", 400, "malformed_json"),
        ('{"a": NaN}', 400, "malformed_json"),
    ],
)
def test_a_signed_but_invalid_body_is_refused_and_nothing_is_stored(
    crm: Sender,
    store: RecordingStore,
    log: InMemoryDeliveryLog,
    body: Any,
    status: int,
    code: str,
) -> None:
    response = crm.post(body)
    assert (response.status, response.json()["error"]) == (status, code), response
    assert nothing_stored(store, log)


@pytest.mark.parametrize("delivery", [None, "", "has space", "a#b", "d" * 81])
def test_a_missing_or_malformed_delivery_id_is_refused(
    crm: Sender, store: RecordingStore, log: InMemoryDeliveryLog, delivery: str | None
) -> None:
    response = crm.post(start_body(), delivery=delivery)
    assert (response.status, response.json()["error"]) == (400, "bad_delivery_id")
    assert nothing_stored(store, log)


def test_the_body_size_and_content_type_limits_apply(
    crm: Sender, store: RecordingStore, log: InMemoryDeliveryLog
) -> None:
    big = start_body(metadata={}, values={"full_name": "x" * 70_000})
    assert crm.post(big).status == 413
    wrong = crm.post(start_body(), headers={"content-type": "text/plain"})
    assert (wrong.status, wrong.json()["error"]) == (415, "unsupported_media_type")
    assert nothing_stored(store, log)


def test_a_secret_store_outage_is_a_503_to_retry(
    api: Api, store: RecordingStore, log: InMemoryDeliveryLog
) -> None:
    class Down:
        def keys_for(self, source: str) -> tuple[str, ...]:
            raise SecretsUnavailable("the secret store could not be reached")

    down = api.using(webhook_settings=WEBHOOKS, delivery_log=log, secrets=Down(), clock=Clock(NOW))
    response = Sender(down, log, Clock(NOW)).post(start_body())
    assert (response.status, response.json()["error"]) == (503, "secrets_unavailable")
    assert response.headers["retry-after"] == "30"
    assert nothing_stored(store, log)


def test_the_route_is_in_the_openapi_document_with_its_own_security(api: Api) -> None:
    document = json.loads(api.send(load_event("openapi")).text)
    operation = document["paths"]["/webhooks/{source}"]["post"]
    assert operation["security"] == [{"webhookSignature": []}]
    assert {"200", "201", "401", "409"} <= set(operation["responses"])
    scheme = document["components"]["securitySchemes"]["webhookSignature"]
    assert (scheme["type"], scheme["in"], scheme["name"]) == (
        "apiKey",
        "header",
        "X-Formwork-Signature",
    )
    assert document["security"] == [{"bearerAuth": []}]


def test_other_routes_still_need_a_token(api: Api) -> None:
    assert api.get("/tools", claims=None).status == 401
    assert api.get("/webhooks/crm", claims=None).status == 401


# ---------------------------------------------------------------------------- rotation


def test_a_source_with_two_secrets_accepts_either_during_rotation(
    crm: Sender, store: RecordingStore
) -> None:
    old = crm.post(start_body(), source="billing", secret=OLD, delivery="r-1")
    assert old.status == 201
    body = json.dumps(start_body(conversation_id="conv-2")).encode()
    both = sign_all([NEW, "not-yet-known-0000000"], NOW, body)
    new = crm.post(body.decode(), source="billing", delivery="r-2", signature=both)
    assert new.status == 201


# ---------------------------------------------------------------------------- configuration


def test_webhook_settings_are_read_from_the_environment() -> None:
    sources = {
        "crm": {"tenants": ["acme"], "forms": ["travel-claim", "onboarding"]},
        "billing": {"tenants": "*", "forms": "*"},
    }
    settings = WebhookSettings.from_env(
        {
            "FORMWORK_WEBHOOK_SOURCES": json.dumps(sources),
            "FORMWORK_WEBHOOK_SECRETS": json.dumps({"crm": SECRET, "billing": [NEW, OLD]}),
            "FORMWORK_NOTIFY_SECRETS": json.dumps({"crm": NOTIFY_SECRET}),
            "FORMWORK_WEBHOOK_TOLERANCE": "120",
            "FORMWORK_WEBHOOK_SECRET_PREFIX": "acme/hooks/in/",
            "FORMWORK_NOTIFY_SECRET_PREFIX": "acme/hooks/out/",
        }
    )
    assert settings.limits("crm") == CRM_LIMITS
    assert settings.limits("billing") == ANYTHING
    assert settings.limits("erp") is None
    assert settings.static_keys("crm") == (SECRET,)
    assert settings.static_keys("billing") == (NEW, OLD)
    assert settings.static_keys("erp") == ()
    assert settings.static_notify_keys("crm") == (NOTIFY_SECRET,)
    assert settings.static_notify_keys("billing") == ()
    assert (settings.tolerance, settings.secret_prefix, settings.notify_prefix) == (
        120,
        "acme/hooks/in/",
        "acme/hooks/out/",
    )
    assert SECRET not in repr(settings) and NOTIFY_SECRET not in repr(settings)
    defaults = WebhookSettings.from_env({})
    assert defaults.sources == ()
    assert defaults.static_keys("crm") is None and defaults.static_notify_keys("crm") is None
    assert (defaults.tolerance, defaults.secret_prefix, defaults.notify_prefix) == (
        300,
        "formwork/webhooks/",
        "formwork/notify/",
    )


@pytest.mark.parametrize(
    "environ",
    [
        {"FORMWORK_WEBHOOK_SECRETS": "crm=short-but-secret-value"},
        {"FORMWORK_WEBHOOK_SECRETS": '["short-but-secret-value"]'},
        {"FORMWORK_WEBHOOK_SECRETS": '{"crm": 12345678901234567890}'},
        {"FORMWORK_WEBHOOK_SECRETS": '{"crm": "short"}'},
        {"FORMWORK_WEBHOOK_SECRETS": '{"crm": []}'},
        {"FORMWORK_WEBHOOK_SECRETS": '{"CRM!": "long-enough-secret-value"}'},
        {"FORMWORK_NOTIFY_SECRETS": '{"crm": "short"}'},
        {"FORMWORK_NOTIFY_SECRETS": "short-but-secret-value"},
        {"FORMWORK_WEBHOOK_TOLERANCE": "0"},
        {"FORMWORK_WEBHOOK_TOLERANCE": "5m"},
        {"FORMWORK_WEBHOOK_SECRET_PREFIX": "bad prefix"},
        {"FORMWORK_NOTIFY_SECRET_PREFIX": "bad prefix"},
        # the two directions' Secrets Manager names must not overlap
        {"FORMWORK_NOTIFY_SECRET_PREFIX": "formwork/webhooks/"},
        {"FORMWORK_NOTIFY_SECRET_PREFIX": "formwork/webhooks/out-"},
        {"FORMWORK_WEBHOOK_SECRET_PREFIX": "formwork/notify/in/"},
        # one secret may not serve both directions
        {
            "FORMWORK_WEBHOOK_SECRETS": '{"crm": "short-but-secret-value"}',
            "FORMWORK_NOTIFY_SECRETS": '{"erp": ["notify-secret-0000", "short-but-secret-value"]}',
        },
    ],
)
def test_bad_webhook_settings_fail_loudly_without_echoing_secrets(
    environ: dict[str, str],
) -> None:
    with pytest.raises(ConfigError) as caught:
        WebhookSettings.from_env(environ)
    assert "short-but-secret" not in str(caught.value)


@pytest.mark.parametrize(
    ("sources", "complaint"),
    [
        ("crm", "JSON object"),
        ('["crm"]', "JSON object"),
        ('{"crm": {}}', "tenants"),
        # no tenant restriction is never implied: "*" has to be written out
        ('{"crm": {"forms": "*"}}', "tenants"),
        ('{"crm": {"tenants": "*"}}', "forms"),
        ('{"crm": {"tenants": [], "forms": "*"}}', "tenants"),
        ('{"crm": {"tenants": "any", "forms": "*"}}', "tenants"),
        ('{"crm": {"tenants": ["acme/x"], "forms": "*"}}', "tenants"),
        ('{"crm": {"tenants": ["acme"], "forms": []}}', "forms"),
        ('{"crm": {"tenants": ["acme"], "forms": "*", "rate": 5}}', "tenants"),
        ('{"CRM!": {"tenants": "*", "forms": "*"}}', "CRM!"),
    ],
)
def test_bad_webhook_sources_fail_loudly(sources: str, complaint: str) -> None:
    with pytest.raises(ConfigError, match="FORMWORK_WEBHOOK_SOURCES") as caught:
        WebhookSettings.from_env({"FORMWORK_WEBHOOK_SOURCES": sources})
    assert complaint in str(caught.value)


# ---------------------------------------------------------------------------- Secrets Manager


class Later(datetime):
    """``datetime`` whose ``now`` runs ``shift`` ahead: Powertools' cache reads the time so."""

    shift = timedelta(0)

    @classmethod
    def now(cls, tz: tzinfo | None = None) -> Later:
        return cast(Later, datetime.now(tz) + cls.shift)


def test_secrets_are_fetched_once_per_container_and_refreshed_after_five_minutes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from aws_lambda_powertools.utilities.parameters import base

    monkeypatch.setattr(base, "datetime", Later)
    monkeypatch.setattr(Later, "shift", timedelta(0))
    client = FakeSecretsManager({"formwork/webhooks/crm": SECRET})
    source = SecretsManagerSecrets(client, "formwork/webhooks/")
    assert source.keys_for("crm") == (SECRET,)
    monkeypatch.setattr(Later, "shift", timedelta(seconds=290))
    assert source.keys_for("crm") == (SECRET,)
    assert client.calls == ["formwork/webhooks/crm"]
    monkeypatch.setattr(Later, "shift", timedelta(seconds=301))
    assert source.keys_for("crm") == (SECRET,)
    assert len(client.calls) == 2


def test_a_missing_secret_of_a_configured_source_gives_no_keys() -> None:
    client = FakeSecretsManager({})
    source = SecretsManagerSecrets(client, "formwork/webhooks/")
    assert source.keys_for("erp") == ()
    assert client.calls == ["formwork/webhooks/erp"]


@pytest.mark.parametrize("error", ["AccessDeniedException", "ThrottlingException"])
def test_other_secret_store_failures_are_unavailable(error: str) -> None:
    source = SecretsManagerSecrets(FakeSecretsManager({}, error=error), "p/")
    with pytest.raises(SecretsUnavailable, match=error):
        source.keys_for("crm")


def test_a_too_short_secret_in_the_store_is_a_misconfiguration() -> None:
    client = FakeSecretsManager({"p/crm": "short"})
    with pytest.raises(SecretsUnavailable):
        SecretsManagerSecrets(client, "p/").keys_for("crm")


def test_unknown_sources_are_refused_without_reading_any_secret(
    api: Api, store: RecordingStore, log: InMemoryDeliveryLog
) -> None:
    # GIVEN secrets in Secrets Manager (a fake that counts reads) and only crm configured
    client = FakeSecretsManager({"formwork/webhooks/crm": SECRET})
    settings = WebhookSettings(sources=(("crm", CRM_LIMITS),))
    secrets = SecretsManagerSecrets(client, settings.secret_prefix)
    served = api.using(
        webhook_settings=settings, delivery_log=log, secrets=secrets, clock=Clock(NOW)
    )
    sender = Sender(served, log, Clock(NOW))
    forged = sender.post(start_body(), secret="guessed-secret-000000").json()
    reads = len(client.calls)
    # WHEN more made-up sources arrive than any cache would hold
    answers = {
        json.dumps(sender.post(start_body(), source=f"made-up-{n}").json()) for n in range(300)
    }
    # THEN every one is refused as a bad signature, and none cost a secret read
    assert answers == {json.dumps(forged)}
    assert len(client.calls) == reads == 1
    assert nothing_stored(store, log)


def test_a_source_with_a_secret_but_no_configuration_is_unknown(
    api: Api, store: RecordingStore, log: InMemoryDeliveryLog
) -> None:
    # GIVEN a secret for "erp" but no entry for it in FORMWORK_WEBHOOK_SOURCES
    settings = WebhookSettings(
        sources=(("crm", CRM_LIMITS),), secrets=(("crm", (SECRET,)), ("erp", (NEW,)))
    )
    served = api.using(webhook_settings=settings, delivery_log=log, clock=Clock(NOW))
    response = Sender(served, log, Clock(NOW)).post(start_body(), source="erp", secret=NEW)
    # THEN it is refused like any unknown source
    assert (response.status, response.json()["error"]) == (401, "bad_signature")
    assert nothing_stored(store, log)


def test_without_configured_sources_every_webhook_is_refused(
    api: Api, store: RecordingStore, log: InMemoryDeliveryLog
) -> None:
    # GIVEN the default: secrets may exist, but no FORMWORK_WEBHOOK_SOURCES
    settings = WebhookSettings.from_env({"FORMWORK_WEBHOOK_SECRETS": json.dumps({"crm": SECRET})})
    assert settings.sources == ()
    served = api.using(webhook_settings=settings, delivery_log=log, clock=Clock(NOW))
    response = Sender(served, log, Clock(NOW)).post(start_body())
    assert (response.status, response.json()["error"]) == (401, "bad_signature")
    assert nothing_stored(store, log)


def test_a_secret_value_is_one_secret_or_a_json_array_while_rotating() -> None:
    assert parse_secret_value(f"  {SECRET}\n") == (SECRET,)
    assert parse_secret_value(json.dumps([NEW, OLD])) == (NEW, OLD)
    assert parse_secret_value("[not json") == ("[not json",)
    assert parse_secret_value("") == ()


# ---------------------------------------------------------------------------- outbound


class Receiver:
    """A stand-in for the receiver's HTTP endpoint: records requests, answers ``status``."""

    def __init__(self, status: int = 204) -> None:
        self.status = status
        self.requests: list[tuple[str, bytes, dict[str, str]]] = []

    def __call__(self, url: str, body: bytes, headers: Mapping[str, str], timeout: float) -> int:
        self.requests.append((url, body, dict(headers)))
        if self.status == 0:
            raise ConnectionRefusedError("connection refused")
        return self.status


class Company(Step):
    title = "Company"
    company: Annotated[str, Field(min_length=2)] = field("Company name")
    start_date: date = field("Start date")


URL = "https://crm.example.com/hooks/formwork"


def outbound_secrets(webhooks: WebhookSettings = WEBHOOKS) -> SecretSource:
    """The outbound secret source an App builds from ``webhooks``."""
    return app_for(webhook_settings=webhooks).secret_source("outbound")


def onboarding(receiver: Receiver) -> FormDef:
    return FormDef(
        id="onboarding",
        version=1,
        title="Customer onboarding",
        steps=[Company],
        on_close=notifier(
            URL,
            secret="crm",
            secrets=outbound_secrets(),
            http=receiver,
            clock=lambda: NOW + 7,
        ),
        closes_on_complete=True,
    )


def signed_for_the_crm(key: str, headers: Mapping[str, str], payload: bytes) -> bool:
    """Whether a notification verifies the Standard Webhooks way with the CRM's outbound
    secret, under delivery id ``key``, when the notifier's clock says it was sent."""
    stamp = verify_standard(
        [NOTIFY_SECRET],
        key,
        headers["webhook-signature"],
        headers["webhook-timestamp"],
        payload,
        now=NOW + 7,
    )
    return stamp == NOW + 7


@pytest.fixture
def outbound(log: InMemoryDeliveryLog) -> tuple[Receiver, FormService, Api]:
    receiver = Receiver()
    service = service_for(*EXAMPLES, onboarding(receiver), clock=TickingClock(T0))
    api = Api.over(service, webhook_settings=WEBHOOKS, delivery_log=log, clock=Clock(NOW + 5))
    return receiver, service, api


def test_a_completed_form_notifies_its_receiver_signed_with_the_occurrence_key(
    outbound: tuple[Receiver, FormService, Api],
) -> None:
    receiver, service, api = outbound
    # GIVEN a CRM starting an onboarding form with one of its two answers
    crm = Sender(api, InMemoryDeliveryLog(), Clock(0))
    body = start_body(form="onboarding", values={"company": "Ferreira Lda"}, metadata={})
    started = crm.post(body)
    assert started.status == 201 and receiver.requests == []
    # WHEN the agent fills in the last answer, and submits once the user confirms
    done = api.call(
        "form_fill",
        CONVERSATION,
        form="onboarding",
        values={"start_date": "2025-04-01"},
        submit=True,
    )
    assert done.json()["closed"] == "completed"
    # THEN the receiver got one signed notification with the live answers
    ((url, payload, headers),) = receiver.requests
    assert url == URL
    instance = started.json()["instance"]
    key = f"{instance}:form.closed:1"
    assert headers["X-Formwork-Delivery"] == key
    assert headers["X-Formwork-Event"] == "form.completed"
    # signed the Standard Webhooks way (webhook-id is the occurrence key), and the old way
    assert headers["webhook-id"] == key
    assert signed_for_the_crm(key, headers, payload)
    assert (
        verify(
            [NOTIFY_SECRET],
            headers["X-Formwork-Signature"],
            headers["X-Formwork-Timestamp"],
            payload,
            now=NOW + 7,
        )
        == NOW + 7
    )
    event = json.loads(payload)
    assert event == {
        "event": "form.completed",
        "delivery": key,
        "form": "onboarding",
        "instance": instance,
        "principal": "acme/alice",
        "conversation_id": CONVERSATION,
        "status": "completed",
        "closed_reason": None,
        "values": {"company": "Ferreira Lda", "start_date": "2025-04-01"},
        # when the form completed (the occurrence's commit), not when the notice was sent
        "occurred_at": event["occurred_at"],
    }
    outbox = service.store.get(instance).state.outbox[key]
    assert outbox.status == "done"
    assert event["occurred_at"] == outbox.created_at.isoformat().replace("+00:00", "Z")


class Quote(Step):
    title = "Quote"
    company: Annotated[str, Field(min_length=2)] = field("Company name")
    revenue: int = field("Annual revenue (EUR)")
    phone: str | None = field("Phone")


class Enterprise(Step):
    title = "Enterprise"
    company: Annotated[str, Field(min_length=2)] = field("Company name")
    annual_revenue: int = field("Annual revenue (EUR)")
    seats: int = field("Seats")


def handing_over(receiver: Receiver) -> tuple[Receiver, FormService, Api]:
    """A quote that hands over to an enterprise application over 1M of revenue (a checkpoint)
    and notifies the receiver however it closes; the service and its API."""
    quote = FormDef(
        id="quote",
        version=1,
        title="Quote",
        steps=[Quote],
        hands_over_to={"enterprise": {"revenue": "annual_revenue"}},
        checkpoints=[
            Checkpoint(
                "big",
                when=lambda v: v.revenue is not None and v.revenue > 1_000_000,
                run=lambda ctx: HandOver("enterprise", "annual revenue over 1M"),
            )
        ],
        on_close=onboarding(receiver).on_close,
    )
    enterprise = FormDef(id="enterprise", version=1, title="Enterprise", steps=[Enterprise])
    service = service_for(quote, enterprise, clock=TickingClock(T0))
    return receiver, service, Api.over(service, webhook_settings=WEBHOOKS, clock=Clock(NOW + 5))


def test_a_handover_notifies_its_own_event_naming_the_target_signed_like_the_others() -> None:
    receiver, service, api = handing_over(Receiver())
    # GIVEN a quote with a company and a phone number
    started = api.call(
        "form_start", CONVERSATION, form="quote", values={"company": "Acme", "phone": "+351 1"}
    )
    assert started.status == 200, started.json()
    # WHEN an answer makes its checkpoint hand the conversation over to the enterprise form
    filled = api.call("form_fill", CONVERSATION, form="quote", values={"revenue": 2_000_000})
    assert filled.json()["closed"] == "handed_over"
    target = filled.json()["handed_over_to"]["instance"]
    # THEN the receiver got one form.handed_over, signed the Standard Webhooks way
    ((_, payload, headers),) = receiver.requests
    source = started.json()["instance"]
    key = f"{source}:form.closed:1"
    assert (headers["webhook-id"], headers["X-Formwork-Event"]) == (key, "form.handed_over")
    assert signed_for_the_crm(key, headers, payload)
    event = json.loads(payload)
    # AND it names the instance that took over and what travelled, and is not a termination
    assert (event["event"], event["status"]) == ("form.handed_over", "handed_over")
    assert event["closed_reason"] == (f"handed over to enterprise {target}: annual revenue over 1M")
    assert event["handed_over_to"] == {
        "form": "enterprise",
        "instance": target,
        "reason": "annual revenue over 1M",
        "carried": ["company", "revenue"],
        "not_carried": {"phone": "enterprise has no field 'phone'"},
    }
    assert service.store.get(source).state.outbox[key].status == "done"


def test_a_handover_by_the_tool_is_a_handover_and_a_termination_a_termination() -> None:
    receiver, _, api = handing_over(Receiver())
    # GIVEN two quotes in two conversations
    for conversation in ("conv-a", "conv-b"):
        assert api.call("form_start", conversation, form="quote").status == 200
    # WHEN the agent hands one over with form_start's from, and the user abandons the other
    handover: dict[str, Any] = {"form": "enterprise", "values": {"seats": 3}, "from": "quote"}
    moved = api.call("form_start", "conv-a", **handover)
    assert moved.status == 200, moved.json()
    abandon = api.call("form_abandon", "conv-b", form="quote", reason="no longer needed")
    assert abandon.json()["ok"] is True
    # THEN the first is notified as handed over to the instance that started, with no reason
    ((_, handed, first), (_, abandoned, second)) = receiver.requests
    assert (first["X-Formwork-Event"], second["X-Formwork-Event"]) == (
        "form.handed_over",
        "form.terminated",
    )
    went = json.loads(handed)["handed_over_to"]
    assert (went["instance"], went["reason"], went["carried"]) == (
        moved.json()["instance"],
        None,
        [],
    )
    # AND the abandoned one as a termination with its reason, without a handover key
    ended = json.loads(abandoned)
    assert (ended["status"], ended["closed_reason"]) == ("terminated", "no longer needed")
    assert "handed_over_to" not in ended


def test_what_a_notification_receiver_holds_cannot_start_sessions(
    outbound: tuple[Receiver, FormService, Api],
) -> None:
    receiver, _, api = outbound
    # GIVEN the CRM received a signed notification (so it knows the outbound secret "crm")
    crm = Sender(api, InMemoryDeliveryLog(), Clock(0))
    values = {"company": "Ferreira Lda", "start_date": "2025-04-01"}
    assert crm.post(start_body(form="onboarding", values=values, metadata={})).status == 201
    ((_, payload, headers),) = receiver.requests
    assert verify([NOTIFY_SECRET], headers["X-Formwork-Signature"], str(NOW + 7), payload, now=NOW)
    # WHEN someone holding that secret signs a request in as the source of the same name
    forged = crm.post(start_body(conversation_id="conv-x"), secret=NOTIFY_SECRET, delivery="x-1")
    # THEN it does not verify
    assert (forged.status, forged.json()["error"]) == (401, "bad_signature")


def test_a_notifier_never_signs_with_an_inbound_secret(log: InMemoryDeliveryLog) -> None:
    # GIVEN "billing", an inbound source with secrets, and no outbound secret of that name
    receiver = Receiver(204)
    secrets = outbound_secrets()
    notify = notifier(URL, secret="billing", secrets=secrets, http=receiver, clock=lambda: NOW)
    # THEN notifying with it fails rather than signing with the inbound secret
    with pytest.raises(DeliveryFailed, match="notify"):
        notify(hook_context())
    assert receiver.requests == []


def test_a_failing_receiver_makes_the_hook_fail_visibly_so_it_is_retried(
    outbound: tuple[Receiver, FormService, Api],
) -> None:
    receiver, service, api = outbound
    receiver.status = 503
    crm = Sender(api, InMemoryDeliveryLog(), Clock(0))
    values = {"company": "Ferreira Lda", "start_date": "2025-04-01"}
    started = crm.post(start_body(form="onboarding", values=values, metadata={}))
    assert started.status == 201
    instance = started.json()["instance"]
    entry = service.store.get(instance).state.outbox[f"{instance}:form.closed:1"]
    assert entry.attempts >= 1 and entry.error is not None and "503" in entry.error
    assert len(receiver.requests) == entry.attempts
    assert {h["X-Formwork-Delivery"] for _, _, h in receiver.requests} == {entry.key}


@pytest.mark.parametrize(
    ("status", "retryable"), [(500, True), (429, True), (408, True), (400, False), (301, False)]
)
def test_deliver_raises_on_anything_but_a_2xx(status: int, retryable: bool) -> None:
    event = FormEvent(
        event="form.completed",
        delivery="fi_1:form.complete:1",
        form="onboarding",
        instance="fi_1",
        principal="alice",
        conversation_id="c",
        status="completed",
        values={},
        occurred_at=T0,
    )
    assert deliver(URL, SECRET, event, timestamp=NOW, http=Receiver(200)) == 200
    with pytest.raises(DeliveryFailed) as caught:
        deliver(URL, SECRET, event, timestamp=NOW, http=Receiver(status))
    assert (caught.value.status, caught.value.retryable) == (status, retryable)
    with pytest.raises(DeliveryFailed) as down:
        deliver(URL, SECRET, event, timestamp=NOW, http=Receiver(0))
    assert (down.value.status, down.value.retryable) == (None, True)


@pytest.mark.parametrize(
    "url", ["http://crm.example.com/hook", "ftp://crm.example.com/", "https:///nohost", "hook"]
)
def test_notifier_urls_must_be_https_except_to_loopback(url: str) -> None:
    with pytest.raises(ValueError):
        notifier(url, secret="crm")
    assert callable(notifier("http://127.0.0.1:8080/hook", secret="crm"))
    assert callable(notifier("http://localhost/hook", secret="crm"))


def hook_context() -> HookContext:
    return HookContext(
        values=Values({}, {}),
        state=FormState({}, {}, {}, None, True, None),
        answers={},
        key="fi_1:form.complete:1",
        hook_id="form.complete",
        occurrence=1,
        instance_id="fi_1",
        form_id="onboarding",
        conversation_id="c",
        principal="alice",
    )


def test_an_unknown_outbound_secret_fails_the_attempt(log: InMemoryDeliveryLog) -> None:
    receiver = Receiver(204)
    secrets = outbound_secrets()
    notify = notifier(URL, secret="nobody", secrets=secrets, http=receiver, clock=lambda: NOW)
    with pytest.raises(DeliveryFailed):
        notify(hook_context())
    assert receiver.requests == []


def test_outbound_secrets_come_from_secrets_manager_under_their_own_prefix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN Secrets Manager holding an inbound and an outbound secret, both named "crm"
    client = FakeSecretsManager(
        {"formwork/webhooks/crm": SECRET, "formwork/notify/crm": NOTIFY_SECRET}
    )
    monkeypatch.setattr(webhook_secrets, "build_secrets_client", lambda settings: client)
    settings = WebhookSettings(sources=(("crm", CRM_LIMITS),))
    receiver = Receiver(204)
    secrets = outbound_secrets(settings)
    notify = notifier(URL, secret="crm", secrets=secrets, http=receiver, clock=lambda: NOW)
    # WHEN a notification goes out
    notify(hook_context())
    # THEN it is signed with the outbound secret, read from the notify prefix only
    ((_, body, headers),) = receiver.requests
    assert verify([NOTIFY_SECRET], headers["X-Formwork-Signature"], str(NOW), body, now=NOW)
    assert client.calls == ["formwork/notify/crm"]


def test_records_are_json_all_the_way_down(crm: Sender, log: InMemoryDeliveryLog) -> None:
    crm.post(start_body())
    (record,) = log.records()
    assert DeliveryRecord.model_validate_json(record.model_dump_json()) == record


# ---------------------------------------------------------------------------- the parts, built


def test_the_delivery_log_is_on_the_table_when_one_is_named() -> None:
    assert isinstance(bootstrap.build_delivery_log(Settings()), InMemoryDeliveryLog)
    on_table = Settings(table_name="formwork-test", dynamodb_endpoint_url="http://127.0.0.1:1")
    assert isinstance(bootstrap.build_delivery_log(on_table), DynamoDBDeliveryLog)


def test_each_direction_reads_its_own_secrets_and_never_the_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN configured secrets on both sides
    static = [
        webhook_secrets.build_secret_source(Settings(), WEBHOOKS, direction)
        for direction in ("inbound", "outbound")
    ]
    # THEN each side holds only its own
    assert [source.keys_for("crm") for source in static] == [(SECRET,), (NOTIFY_SECRET,)]
    assert static[1].keys_for("billing") == ()
    # GIVEN Secrets Manager instead (no configured secrets), holding both under one name
    client = FakeSecretsManager(
        {"formwork/webhooks/crm": SECRET, "formwork/notify/crm": NOTIFY_SECRET}
    )
    monkeypatch.setattr(webhook_secrets, "build_secrets_client", lambda settings: client)
    managed = [
        webhook_secrets.build_secret_source(Settings(), WebhookSettings(), direction)
        for direction in ("inbound", "outbound")
    ]
    # THEN each side reads under its own prefix only
    assert [source.keys_for("crm") for source in managed] == [(SECRET,), (NOTIFY_SECRET,)]
    assert client.calls == ["formwork/webhooks/crm", "formwork/notify/crm"]


def test_an_app_builds_each_webhook_part_on_first_use_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN webhook settings in the environment, and a builder that counts its calls
    monkeypatch.setenv("FORMWORK_WEBHOOK_SECRETS", json.dumps({"crm": SECRET}))
    monkeypatch.setenv("FORMWORK_NOTIFY_SECRETS", json.dumps({"crm": NOTIFY_SECRET}))
    monkeypatch.delenv("TABLE_NAME", raising=False)
    built: list[str] = []
    real = webhook_secrets.build_secret_source

    def counting(settings: Settings, webhooks: WebhookSettings, direction: Any) -> Any:
        built.append(direction)
        return real(settings, webhooks, direction)

    monkeypatch.setattr(application, "build_secret_source", counting)
    app = bootstrap.bootstrap()
    # WHEN the inbound secrets and the log are asked for, twice each
    inbound = app.secret_source("inbound")
    assert app.secret_source("inbound") is inbound
    log = app.delivery_log
    assert app.delivery_log is log
    # THEN each was built once, from the environment, and the outbound side not at all
    assert built == ["inbound"]
    assert inbound.keys_for("crm") == (SECRET,)
    assert isinstance(log, InMemoryDeliveryLog)  # no TABLE_NAME
    assert app.secret_source("outbound").keys_for("crm") == (NOTIFY_SECRET,)
    # AND another App builds its own
    other = bootstrap.bootstrap()
    assert other.delivery_log is not log
    assert other.secret_source("inbound") is not inbound


def test_the_webhook_parts_given_to_bootstrap_are_used_as_they_are() -> None:
    log, down = InMemoryDeliveryLog(), StaticSecrets({})
    app = bootstrap.bootstrap(
        Settings(), webhook_settings=WEBHOOKS, delivery_log=log, secrets=down, clock=Clock(NOW)
    )
    assert app.delivery_log is log
    assert app.secret_source("inbound") is down
    assert app.secret_source("outbound").keys_for("crm") == (NOTIFY_SECRET,)  # built
    assert app.webhook_settings is WEBHOOKS
    assert app.now() == NOW
    # AND an App given none uses the real clock
    assert abs(bootstrap.bootstrap(Settings()).now() - time.time()) < 60


def test_a_notifier_given_no_secrets_reads_this_processs_app() -> None:
    # GIVEN a process whose environment holds the outbound secret "crm"
    code = "from formwork.aws.notify import outbound_secret\nprint(outbound_secret('crm'))\n"
    env = {**os.environ, "FORMWORK_NOTIFY_SECRETS": json.dumps({"crm": NOTIFY_SECRET})}
    # WHEN a notifier there asks for it / THEN it comes from the process's App
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == NOTIFY_SECRET


def test_a_forms_module_may_import_the_notifier_from_the_webhook_route_module() -> None:
    # GIVEN the outbound side in formwork.aws.notify, the route in formwork.aws.webhooks
    from formwork.aws import notify, webhooks

    # WHEN a forms module imports the outbound names from the route's module
    # THEN it gets the same objects
    for name in ("DeliveryFailed", "deliver", "notifier", "outbound_secret"):
        assert getattr(webhooks, name) is getattr(notify, name)


# ---------------------------------------------------------------------------- Standard Webhooks


def test_a_standard_webhooks_delivery_starts_a_session(
    crm: Sender, store: RecordingStore, log: InMemoryDeliveryLog
) -> None:
    # GIVEN a CRM signing with the Standard Webhooks headers (webhook-id is the delivery id)
    response = crm.post(start_body(), delivery="msg_1", standard=True)
    # THEN a session is started under that delivery id, as with the deprecated headers
    assert response.status == 201, response
    assert response.json()["delivery"] == "msg_1"
    (instance,) = instances(store)
    assert instance.history["full_name"].revisions[0].tool_call_id == "webhook:crm:msg_1"
    # AND no signature binding was needed: the id is covered by the signature
    assert [r.delivery for r in log.records()] == ["msg_1"] and not log.bindings()


def test_a_standard_request_replayed_under_another_id_does_not_verify(
    crm: Sender, store: RecordingStore
) -> None:
    # GIVEN a standard request delivered as msg_1
    first = crm.event(start_body(), delivery="msg_1", standard=True)
    assert crm.api.send(first).status == 201
    writes = store.writes
    # WHEN an eavesdropper replays its bytes and signature with webhook-id msg_2
    signature = first["headers"]["webhook-signature"]
    response = crm.post(start_body(), delivery="msg_2", standard=True, signature=signature)
    # THEN the signature does not match (the id is signed), and nothing was written
    assert (response.status, response.json()["error"]) == (401, "bad_signature")
    assert store.writes == writes


def test_a_standard_redelivery_returns_the_first_outcome(crm: Sender, clock: Clock) -> None:
    first = crm.post(start_body(), delivery="msg_1", standard=True)
    clock.at += 60
    again = crm.post(start_body(), delivery="msg_1", standard=True, timestamp=NOW + 60)
    assert again.status == 200
    assert again.json() == {**first.json(), "replayed": True}


@pytest.mark.parametrize("skew", [-301, 301])
def test_a_stale_standard_request_is_refused(
    crm: Sender, store: RecordingStore, log: InMemoryDeliveryLog, clock: Clock, skew: int
) -> None:
    clock.at = NOW + skew
    response = crm.post(start_body(), delivery="msg_1", standard=True)
    assert (response.status, response.json()["error"]) == (401, "stale_timestamp")
    assert nothing_stored(store, log)


def test_standard_signatures_of_a_rotation_verify_with_either_secret(crm: Sender) -> None:
    # GIVEN billing holding its new and old secret; a sender signing with new and a future one
    body = json.dumps(start_body()).encode()
    both = standard_sign_all([NEW, "not-yet-known-0000000"], "r-1", NOW, body)
    assert len(both.split(" ")) == 2
    response = crm.post(
        body.decode(), source="billing", delivery="r-1", standard=True, signature=both
    )
    assert response.status == 201
    # AND one signed with the old secret alone verifies too
    old = crm.post(
        start_body(conversation_id="conv-2"),
        source="billing",
        delivery="r-2",
        standard=True,
        secret=OLD,
    )
    assert old.status == 201


@pytest.mark.parametrize(
    ("changes", "status", "error"),
    [
        ({"delivery": None}, 401, "missing_id"),
        ({"signature": "v1"}, 401, "bad_signature"),
        ({"signature": "v1,!!!"}, 401, "bad_signature"),
        ({"delivery": "bad id with spaces"}, 400, "bad_delivery_id"),
        ({"source": "nobody"}, 401, "bad_signature"),
    ],
)
def test_malformed_standard_requests_get_clear_refusals(
    crm: Sender,
    store: RecordingStore,
    log: InMemoryDeliveryLog,
    changes: dict[str, Any],
    status: int,
    error: str,
) -> None:
    response = crm.post(start_body(), **{"delivery": "msg_1", "standard": True, **changes})
    assert (response.status, response.json()["error"]) == (status, error)
    assert nothing_stored(store, log)


def test_the_deprecated_headers_are_still_accepted_until_the_promised_date(
    crm: Sender, caplog: pytest.LogCaptureFixture
) -> None:
    # the deprecated scheme works, and says so in the log (with the last day it is accepted)
    assert crm.post(start_body()).status == 201
    (warning,) = [r for r in caplog.records if "deprecated" in r.getMessage()]
    assert warning.__dict__["accepted_until"] == LEGACY_HEADERS_UNTIL
