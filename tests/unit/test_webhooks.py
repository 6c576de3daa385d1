"""The pure part of webhooks: signatures, payloads, the delivery log's rules, outbound events.

The delivery log's own promises (compare-and-set, bindings, snapshots) are the contract suite's:
``tests/unit/test_delivery_log.py`` runs it on the in-memory log.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import re
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from forms.instance import HandoverLink
from forms.state import FormState, HookContext, Values
from forms.surface.tools import check_id
from formwork.aws.auth import principal_from_event
from formwork.aws.notify import notifier
from formwork.webhooks import (
    DEFAULT_LEASE,
    DEFAULT_RETENTION,
    PRINCIPAL_PATTERN,
    Claimed,
    DeliveryRecord,
    HandedOverTo,
    InMemoryDeliveryLog,
    InProgress,
    NotAllowed,
    Replay,
    Reused,
    SignatureRefused,
    SourceLimits,
    StaticSecrets,
    WebhookStart,
    bind_signature,
    check_delivery,
    check_source,
    claim_delivery,
    delivery_headers,
    event_body,
    finish_delivery,
    form_event,
    principal_tenant,
    release_delivery,
    sign,
    sign_all,
    signature,
    tool_call_id,
    verify,
    verify_standard,
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"
SECRET = "crm-secret-0123456789"
OLD_SECRET = "old-secret-0123456789"
T = 1_741_597_200
BODY = b'{"form":"travel-claim","principal":"acme/alice","conversation_id":"conv-1"}'
NOW = datetime(2025, 3, 10, 9, 0, tzinfo=UTC)


def refused(code: str, *args: Any, **kwargs: Any) -> None:
    with pytest.raises(SignatureRefused) as caught:
        verify(*args, **kwargs)
    assert caught.value.code == code


# ---------------------------------------------------------------------------- signatures


def test_the_signature_is_hmac_sha256_over_timestamp_dot_body() -> None:
    # GIVEN a secret, a timestamp and a body
    # WHEN the request is signed
    header = sign(SECRET, T, BODY)
    # THEN it is v1=<hex HMAC-SHA256 of "{timestamp}.{body}"> (the documented scheme)
    expected = hmac.new(SECRET.encode(), f"{T}.".encode() + BODY, hashlib.sha256).hexdigest()
    assert header == f"v1={expected}"
    assert re.fullmatch(r"v1=[0-9a-f]{64}", header)
    # AND a pinned vector keeps the scheme from drifting
    assert signature("the-shared-secret-for-crm", T, b"{}") == (
        hmac.new(b"the-shared-secret-for-crm", b"1741597200.{}", hashlib.sha256).hexdigest()
    )


def test_a_signed_request_verifies_and_gives_its_timestamp() -> None:
    assert verify([SECRET], sign(SECRET, T, BODY), str(T), BODY, now=T) == T


@given(
    body=st.binary(max_size=512),
    timestamp=st.integers(min_value=0, max_value=10**11),
    skew=st.integers(min_value=-300, max_value=300),
)
def test_any_body_and_timestamp_round_trip(body: bytes, timestamp: int, skew: int) -> None:
    header = sign(SECRET, timestamp, body)
    assert verify([SECRET], header, str(timestamp), body, now=timestamp + skew) == timestamp


@given(body=st.binary(min_size=1, max_size=256), data=st.data())
def test_changing_any_byte_of_the_body_is_refused(body: bytes, data: st.DataObject) -> None:
    # GIVEN a signed body
    header = sign(SECRET, T, body)
    # WHEN one byte of it is changed in transit
    index = data.draw(st.integers(min_value=0, max_value=len(body) - 1))
    flip = data.draw(st.integers(min_value=1, max_value=255))
    tampered = body[:index] + bytes([body[index] ^ flip]) + body[index + 1 :]
    # THEN the signature no longer matches
    refused("bad_signature", [SECRET], header, str(T), tampered, now=T)


def test_a_tampered_timestamp_is_refused() -> None:
    # GIVEN a request signed at T, whose timestamp header is moved later (to dodge staleness)
    header = sign(SECRET, T, BODY)
    # THEN the signature does not match the new timestamp
    refused("bad_signature", [SECRET], header, str(T + 60), BODY, now=T + 60)


def test_another_secret_and_an_unknown_source_are_refused_alike() -> None:
    header = sign("someone-elses-secret-000", T, BODY)
    with pytest.raises(SignatureRefused) as wrong:
        verify([SECRET], header, str(T), BODY, now=T)
    with pytest.raises(SignatureRefused) as unknown:
        verify([], sign(SECRET, T, BODY), str(T), BODY, now=T)
    assert (wrong.value.code, wrong.value.message) == (unknown.value.code, unknown.value.message)


# ---------------------------------------------------------------------------- source limits


def not_allowed(limits: SourceLimits, principal: str, form: str) -> str | None:
    try:
        limits.check("crm", principal, form)
    except NotAllowed as refused:
        return refused.code
    return None


def test_the_tenant_of_a_principal_is_what_comes_before_the_slash() -> None:
    assert principal_tenant("acme/alice") == "acme"
    assert principal_tenant("alice") is None
    assert principal_tenant("auth0|abc") is None


def test_limits_allow_only_the_named_tenants_and_forms() -> None:
    limits = SourceLimits(tenants=frozenset({"acme", "initech"}), forms=frozenset({"travel"}))
    assert not_allowed(limits, "acme/alice", "travel") is None
    assert not_allowed(limits, "initech/bob", "travel") is None
    assert not_allowed(limits, "globex/alice", "travel") == "tenant_not_allowed"
    assert not_allowed(limits, "acme", "travel") == "tenant_not_allowed"  # a bare sub
    assert not_allowed(limits, "acme-eu/alice", "travel") == "tenant_not_allowed"
    assert not_allowed(limits, "acme/alice", "grant") == "form_not_allowed"


def test_limits_of_none_allow_any_principal_and_any_form() -> None:
    anything = SourceLimits(tenants=None, forms=None)
    assert not_allowed(anything, "globex/mallory", "grant") is None
    assert not_allowed(anything, "mallory", "travel") is None
    any_tenant = SourceLimits(tenants=None, forms=frozenset({"travel"}))
    assert not_allowed(any_tenant, "mallory", "grant") == "form_not_allowed"


@given(principal=st.from_regex(PRINCIPAL_PATTERN, fullmatch=True))
def test_only_a_listed_tenant_passes_a_tenant_limit(principal: str) -> None:
    limits = SourceLimits(tenants=frozenset({"acme"}), forms=None)
    allowed = not_allowed(limits, principal, "travel") is None
    assert allowed == principal.startswith("acme/")


# ---------------------------------------------------------------------------- rotation


def test_a_sender_rotating_sends_both_signatures_and_either_secret_verifies() -> None:
    # GIVEN a sender signing with its new and old secrets
    header = sign_all([SECRET, OLD_SECRET], T, BODY)
    assert header.count("v1=") == 2
    # THEN a receiver still on the old secret, or already on the new one, accepts it
    assert verify([OLD_SECRET], header, str(T), BODY, now=T) == T
    assert verify([SECRET], header, str(T), BODY, now=T) == T


def test_a_receiver_rotating_holds_both_secrets() -> None:
    header = sign(OLD_SECRET, T, BODY)
    assert verify([SECRET, OLD_SECRET], header, str(T), BODY, now=T) == T


def test_entries_of_other_schemes_are_ignored() -> None:
    header = "v2=whatever-comes-next, " + sign(SECRET, T, BODY).upper().replace("V1=", "v1=")
    assert verify([SECRET], header, str(T), BODY, now=T) == T
    refused("bad_signature", [SECRET], "v2=abc", str(T), BODY, now=T)


# ---------------------------------------------------------------------------- constant time


def test_every_candidate_is_compared_in_constant_time_with_no_early_exit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN two receiver secrets and three signatures, the first of which matches
    calls: list[tuple[str, str]] = []
    real = hmac.compare_digest

    def spy(a: str, b: str) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    header = ", ".join([sign(SECRET, T, BODY), "v1=" + "0" * 64, "v1=" + "f" * 64])
    # WHEN it is verified
    assert verify([SECRET, OLD_SECRET], header, str(T), BODY, now=T) == T
    # THEN all six pairs went through hmac.compare_digest, even after the first match
    assert len(calls) == 6


def test_non_ascii_or_malformed_signatures_are_refused_before_comparing() -> None:
    refused("bad_signature", [SECRET], "v1=" + "é" * 64, str(T), BODY, now=T)
    refused("bad_signature", [SECRET], "v1=abc", str(T), BODY, now=T)
    refused("bad_signature", [SECRET], "v1=" + "0" * 64 + ",", str(T), BODY, now=T)
    refused("bad_signature", [SECRET], "v1=" + "0" * 2000, str(T), BODY, now=T)


# ---------------------------------------------------------------------------- staleness


@pytest.mark.parametrize("skew", [-300, 0, 300])
def test_timestamps_within_the_tolerance_either_way_are_accepted(skew: int) -> None:
    assert verify([SECRET], sign(SECRET, T, BODY), str(T), BODY, now=T + skew) == T


@pytest.mark.parametrize("skew", [301, -301, 86_400])
def test_timestamps_outside_the_tolerance_are_stale(skew: int) -> None:
    refused("stale_timestamp", [SECRET], sign(SECRET, T, BODY), str(T), BODY, now=T + skew)


def test_the_tolerance_is_a_parameter() -> None:
    header = sign(SECRET, T, BODY)
    assert verify([SECRET], header, str(T), BODY, now=T + 30, tolerance=30) == T
    refused("stale_timestamp", [SECRET], header, str(T), BODY, now=T + 31, tolerance=30)


def test_a_stale_forgery_is_told_only_that_the_signature_is_bad() -> None:
    # The signature is checked first: an unauthenticated sender learns nothing about clocks.
    refused("bad_signature", [SECRET], "v1=" + "0" * 64, str(T), BODY, now=T + 10_000)


@pytest.mark.parametrize(
    ("header", "timestamp", "code"),
    [
        (None, str(T), "missing_signature"),
        ("", str(T), "missing_signature"),
        ("sig", None, "missing_timestamp"),
        ("sig", "12.5", "bad_timestamp"),
        ("sig", "-1", "bad_timestamp"),
        ("sig", "soon", "bad_timestamp"),
        ("sig", "1" * 13, "bad_timestamp"),
    ],
)
def test_missing_or_malformed_headers_are_refused(
    header: str | None, timestamp: str | None, code: str
) -> None:
    if header == "sig":
        header = sign(SECRET, T, BODY)
    refused(code, [SECRET], header, timestamp, BODY, now=T)


# ---------------------------------------------------------------------------- the payload


def start(**changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "form": "travel-claim",
        "principal": "acme/alice",
        "conversation_id": "conv-1",
        "values": {"full_name": "Ana Ferreira"},
        "metadata": {"crm_contact": "C-1187"},
    }
    body.update(changes)
    return {k: v for k, v in body.items() if v is not ...}


def test_the_documented_payload_validates() -> None:
    payload = WebhookStart.model_validate(start())
    assert payload.principal == "acme/alice"
    assert payload.values == {"full_name": "Ana Ferreira"}
    minimal = WebhookStart.model_validate(start(values=..., metadata=...))
    assert minimal.values == {} and minimal.metadata == {}


@pytest.mark.parametrize(
    "changes",
    [
        {"form": ...},
        {"principal": ...},
        {"conversation_id": ...},
        {"principal": ""},
        {"principal": "acme/alice/extra"},
        {"principal": "/alice"},
        {"principal": "a" * 129},
        {"principal": "al ice"},
        {"conversation_id": "conv 1"},
        {"conversation_id": "c" * 129},
        {"form": ""},
        {"values": ["not", "a", "mapping"]},
        {"metadata": {"blob": "x" * 9000}},
        {"user_id": "mallory"},
    ],
)
def test_payloads_that_break_the_contract_are_refused(changes: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        WebhookStart.model_validate(start(**changes))


@pytest.mark.parametrize(
    ("claims", "tenant_claim"),
    [
        ({"sub": "alice"}, None),
        ({"sub": "auth0|5f7c8ec7c33c6c004bbafe82", "tenant": "acme"}, "tenant"),
        ({"sub": "0d8f2a4e-1b3c-4d5e-8f90-123456789abc", "org": "acme-eu.1"}, "org"),
        ({"sub": "108234567890123456789", "tenant": "t-1"}, "tenant"),
    ],
)
def test_every_principal_a_token_maps_to_can_be_named_by_a_webhook(
    claims: dict[str, str], tenant_claim: str | None
) -> None:
    # GIVEN the principal the API derives from a verified token
    event = {"requestContext": {"authorizer": {"jwt": {"claims": claims}}}}
    principal = principal_from_event(event, tenant_claim)
    # THEN a webhook may start a session for exactly that principal
    assert WebhookStart.model_validate(start(principal=principal)).principal == principal


def test_the_content_digest_ignores_key_order_and_spacing_but_not_content() -> None:
    a = WebhookStart.model_validate_json(json.dumps(start()))
    b = WebhookStart.model_validate_json(json.dumps(dict(reversed(start().items())), indent=2))
    c = WebhookStart.model_validate(start(values={"full_name": "Ana F."}))
    assert a.digest() == b.digest()
    assert a.digest() != c.digest()


def test_the_longest_source_and_delivery_ids_make_a_valid_tool_call_id() -> None:
    source, delivery = "s" * 32, "d" * 80
    assert check_source(source) and check_delivery(delivery)
    assert check_id(tool_call_id(source, delivery), "tool_call_id")
    assert not check_source("CRM") and not check_delivery("a#b")


# ---------------------------------------------------------------------------- delivery log


@pytest.fixture
def log() -> InMemoryDeliveryLog:
    return InMemoryDeliveryLog()


def claim(log: InMemoryDeliveryLog, digest: str = "A", at: datetime = NOW) -> Any:
    return claim_delivery(log, "crm", "d-1", digest, now=at, metadata={"k": 1})


def test_the_first_delivery_claims_the_id(log: InMemoryDeliveryLog) -> None:
    outcome = claim(log)
    assert isinstance(outcome, Claimed)
    assert outcome.record.state == "pending" and outcome.record.version == 1
    assert outcome.record.lease_until == NOW + DEFAULT_LEASE
    assert outcome.record.expires_at == NOW + DEFAULT_RETENTION
    assert log.get("crm", "d-1") == outcome.record


def test_a_finished_delivery_replays_its_outcome_for_the_same_content(
    log: InMemoryDeliveryLog,
) -> None:
    first = claim(log)
    finish_delivery(log, first.record, {"instance": "fi_1"})
    again = claim(log, at=NOW + timedelta(hours=1))
    assert isinstance(again, Replay)
    assert again.record.outcome == {"instance": "fi_1"}


def test_other_content_under_a_used_id_is_refused(log: InMemoryDeliveryLog) -> None:
    first = claim(log)
    assert isinstance(claim(log, digest="B"), Reused)
    finish_delivery(log, first.record, {"instance": "fi_1"})
    assert isinstance(claim(log, digest="B"), Reused)
    assert log.get("crm", "d-1").digest == "A"  # type: ignore[union-attr]


def test_a_live_claim_makes_a_concurrent_delivery_wait(log: InMemoryDeliveryLog) -> None:
    claim(log)
    outcome = claim(log, at=NOW + timedelta(seconds=45))
    assert outcome == InProgress(retry_after=15)


def test_a_claim_whose_lease_ran_out_is_taken_over(log: InMemoryDeliveryLog) -> None:
    # GIVEN a claimant that died before finishing
    claim(log)
    # WHEN the sender retries after the lease
    later = NOW + DEFAULT_LEASE + timedelta(seconds=1)
    outcome = claim(log, at=later)
    # THEN the retry owns it now (compare-and-set on the version)
    assert isinstance(outcome, Claimed)
    assert outcome.record.version == 2 and outcome.record.lease_until == later + DEFAULT_LEASE


def test_a_released_claim_can_be_taken_at_once(log: InMemoryDeliveryLog) -> None:
    first = claim(log)
    release_delivery(log, first.record, now=NOW)
    assert isinstance(claim(log, at=NOW), Claimed)


def test_an_expired_record_is_forgotten(log: InMemoryDeliveryLog) -> None:
    first = claim(log)
    finish_delivery(log, first.record, {"instance": "fi_1"})
    outcome = claim(log, digest="B", at=NOW + DEFAULT_RETENTION)
    assert isinstance(outcome, Claimed) and outcome.record.digest == "B"


def test_finishing_a_claim_that_was_taken_over_leaves_the_new_owner_alone(
    log: InMemoryDeliveryLog,
) -> None:
    first = claim(log)
    second = claim(log, at=NOW + DEFAULT_LEASE * 2)
    stored = finish_delivery(log, first.record, {"instance": "late"})
    assert stored == second.record
    assert log.get("crm", "d-1") == second.record


def test_a_signed_request_is_bound_to_one_delivery_id(log: InMemoryDeliveryLog) -> None:
    # GIVEN a signed request accepted under d-1
    assert bind_signature(log, "crm", T, BODY, "d-1", now=NOW)
    # THEN the same request again under d-1 is fine (a retry), under d-2 it is a replay
    assert bind_signature(log, "crm", T, BODY, "d-1", now=NOW)
    assert not bind_signature(log, "crm", T, BODY, "d-2", now=NOW)
    # AND another source or another body is another request
    assert bind_signature(log, "billing", T, BODY, "d-2", now=NOW)
    assert bind_signature(log, "crm", T, BODY + b" ", "d-2", now=NOW)


def test_a_binding_outlives_the_window_its_timestamp_is_accepted_in(
    log: InMemoryDeliveryLog,
) -> None:
    signed_at = datetime.fromtimestamp(T, UTC)
    assert bind_signature(log, "crm", T, BODY, "d-1", now=signed_at)
    inside = signed_at + timedelta(seconds=300)
    assert not bind_signature(log, "crm", T, BODY, "d-2", now=inside)
    after = signed_at + timedelta(seconds=361)
    assert bind_signature(log, "crm", T, BODY, "d-2", now=after)


def test_records_round_trip_as_json() -> None:
    record = DeliveryRecord(
        source="crm",
        delivery="d-1",
        digest="A",
        state="done",
        claimed_at=NOW,
        lease_until=NOW,
        expires_at=NOW,
        outcome={"instance": "fi_1", "result": {"ok": True}},
    )
    assert DeliveryRecord.model_validate_json(record.model_dump_json()) == record


# ---------------------------------------------------------------------------- outbound


def hook_context(answers: dict[str, Any]) -> HookContext:
    return HookContext(
        values=Values(answers, {k: i for i, k in enumerate(answers)}),
        state=FormState({}, {}, {}, None, True, None),
        answers=answers,
        key="fi_1:form.complete:1",
        hook_id="form.complete",
        occurrence=1,
        instance_id="fi_1",
        form_id="onboarding",
        conversation_id="conv-1",
        principal="acme/alice",
    )


def test_the_outbound_event_carries_the_answers_and_the_idempotency_key() -> None:
    # GIVEN an executor's context on completion, with typed answers
    context = hook_context({"company": "Ferreira Lda", "start": date(2025, 4, 1)})
    # WHEN the event is built
    event = form_event(context, occurred_at=NOW)
    # THEN it names the occurrence's key as its delivery id, and the answers are JSON
    assert event.event == "form.completed" and event.status == "completed"
    assert event.delivery == "fi_1:form.complete:1"
    assert event.values == {"company": "Ferreira Lda", "start": "2025-04-01"}
    assert (event.form, event.instance, event.principal) == ("onboarding", "fi_1", "acme/alice")
    body = json.loads(event_body(event))
    assert body["occurred_at"] == "2025-03-10T09:00:00Z"
    assert body["closed_reason"] is None


def test_a_termination_event_says_why() -> None:
    event = form_event(
        hook_context({}), occurred_at=NOW, status="terminated", closed_reason="ineligible"
    )
    assert (event.event, event.closed_reason) == ("form.terminated", "ineligible")


WENT_TO = HandedOverTo(
    form="enterprise",
    instance="fi_9e",
    reason="annual revenue over 1M",
    carried=("company", "revenue"),
    not_carried={"phone": "the handover to enterprise leaves it behind"},
)


def test_a_handover_event_says_where_the_form_went_and_what_travelled() -> None:
    # GIVEN an executor's context on a form closed by a handover
    context = hook_context({"company": "Acme", "revenue": 2_000_000})
    # WHEN its event is built
    event = form_event(
        context,
        occurred_at=NOW,
        status="handed_over",
        closed_reason="handed over to enterprise fi_9e: annual revenue over 1M",
        handed_over_to=WENT_TO,
    )
    # THEN it is its own event, not a termination, and its body names the target
    assert (event.event, event.status) == ("form.handed_over", "handed_over")
    body = json.loads(event_body(event))
    assert body["handed_over_to"] == {
        "form": "enterprise",
        "instance": "fi_9e",
        "reason": "annual revenue over 1M",
        "carried": ["company", "revenue"],
        "not_carried": {"phone": "the handover to enterprise leaves it behind"},
    }
    assert list(body)[-1] == "handed_over_to"


def test_other_events_have_no_handover_key_and_a_handover_must_name_its_target() -> None:
    completed = form_event(hook_context({}), occurred_at=NOW)
    assert "handed_over_to" not in json.loads(event_body(completed))
    with pytest.raises(ValueError, match="handed_over"):
        form_event(hook_context({}), occurred_at=NOW, status="handed_over")
    with pytest.raises(ValueError, match="handed_over"):
        form_event(hook_context({}), occurred_at=NOW, handed_over_to=WENT_TO)


def closed_context(status: str, handed_to: HandoverLink | None = None) -> HookContext:
    return dataclasses.replace(
        hook_context({"company": "Acme"}),
        key="fi_4a:form.closed:1",
        hook_id="form.closed",
        instance_id="fi_4a",
        form_id="quote",
        status=status,
        closed_reason=f"{status}: why",
        occurred_at=NOW,
        handed_to=handed_to,
    )


def notified(context: HookContext) -> tuple[dict[str, Any], dict[str, str]]:
    """What a notifier sends for ``context``: the event and the headers, once verified."""
    sent: list[tuple[bytes, dict[str, str]]] = []

    def receive(url: str, body: bytes, headers: Any, timeout: float) -> int:
        sent.append((body, dict(headers)))
        return 204

    secrets = StaticSecrets({"crm": (SECRET,)})
    notify = notifier("https://crm.example.com/h", secret="crm", secrets=secrets, http=receive)
    notify(context)
    ((body, headers),) = sent
    stamp = headers["webhook-timestamp"]
    assert verify_standard(
        [SECRET], headers["webhook-id"], headers["webhook-signature"], stamp, body, now=int(stamp)
    )
    return json.loads(body), headers


def test_the_notifier_tells_a_handover_from_a_termination() -> None:
    # GIVEN a form closed by a handover, its link naming the target and what travelled
    link = HandoverLink(
        instance="fi_9e",
        form="enterprise",
        at=NOW,
        carried=("company",),
        dropped={"phone": "enterprise has no field 'phone'"},
        reason="annual revenue over 1M",
    )
    # WHEN the notifier runs on it / THEN it sends form.handed_over, signed, with the link
    event, headers = notified(closed_context("handed_over", link))
    assert (event["event"], event["status"]) == ("form.handed_over", "handed_over")
    assert headers["X-Formwork-Event"] == "form.handed_over"
    assert event["closed_reason"] == "handed_over: why"
    assert event["handed_over_to"] == {
        "form": "enterprise",
        "instance": "fi_9e",
        "reason": "annual revenue over 1M",
        "carried": ["company"],
        "not_carried": {"phone": "enterprise has no field 'phone'"},
    }
    # AND a real termination (or an abandonment) is still form.terminated, with no link
    for status in ("terminated", "abandoned"):
        event, headers = notified(closed_context(status))
        assert (event["event"], event["status"]) == ("form.terminated", "terminated")
        assert event["closed_reason"] == f"{status}: why" and "handed_over_to" not in event


def test_outbound_headers_verify_with_the_receivers_check() -> None:
    event = form_event(hook_context({"company": "Ferreira Lda"}), occurred_at=NOW)
    body = event_body(event)
    headers = delivery_headers(event, body, SECRET, timestamp=T)
    assert headers["X-Formwork-Delivery"] == event.delivery
    assert headers["X-Formwork-Event"] == "form.completed"
    assert (
        verify(
            [SECRET], headers["X-Formwork-Signature"], headers["X-Formwork-Timestamp"], body, now=T
        )
        == T
    )


# ---------------------------------------------------------------------------- the docs


def receiver_snippet() -> Any:
    """``verify_formwork_webhook`` exactly as docs/webhooks.md shows it."""
    text = DOCS.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    (source,) = [b for b in blocks if "def verify_formwork_webhook" in b]
    namespace: dict[str, Any] = {}
    exec(compile(source, str(DOCS), "exec"), namespace)
    return namespace["verify_formwork_webhook"]


def test_the_documented_receiver_check_accepts_what_formwork_sends() -> None:
    check = receiver_snippet()
    event = form_event(hook_context({"company": "Ferreira Lda"}), occurred_at=NOW)
    body = event_body(event)
    headers = {k.lower(): v for k, v in delivery_headers(event, body, SECRET, timestamp=T).items()}
    assert check(SECRET, headers, body, now=T + 10) is True
    assert check(
        SECRET,
        {**headers, "x-formwork-signature": sign_all([OLD_SECRET, SECRET], T, body)},
        body,
        now=T,
    )


def test_the_documented_receiver_check_refuses_forged_tampered_and_stale() -> None:
    check = receiver_snippet()
    body = b'{"event":"form.completed"}'
    headers = {"x-formwork-timestamp": str(T), "x-formwork-signature": sign(SECRET, T, body)}
    assert check("another-secret-0000000", headers, body, now=T) is False
    assert check(SECRET, headers, body + b" ", now=T) is False
    assert check(SECRET, headers, body, now=T + 301) is False
    assert check(SECRET, {**headers, "x-formwork-timestamp": "１２"}, body, now=T) is False
    assert (
        check(SECRET, {**headers, "x-formwork-signature": "v1=" + "é" * 64}, body, now=T) is False
    )
    assert check(SECRET, {}, body, now=T) is False


def test_the_documented_shell_signature_matches() -> None:
    # The docs' openssl pipeline signs "{TS}.{BODY}"; the same bytes give the same signature.
    text = DOCS.read_text(encoding="utf-8")
    assert 'printf \'%s.%s\' "$TS" "$BODY" | openssl dgst -sha256 -hmac "$SECRET"' in text


# ---------------------------------------------------------------------------- the package


def test_every_exported_name_resolves_once() -> None:
    import formwork.webhooks as package

    assert len(set(package.__all__)) == len(package.__all__)
    assert [name for name in package.__all__ if not hasattr(package, name)] == []
    assert {"DeliveryLog", "InMemoryDeliveryLog", "DynamoDBDeliveryLog"} <= set(package.__all__)
    assert "DeliveryLogContract" not in package.__all__


def test_importing_the_package_loads_no_aws_library_and_not_pytest() -> None:
    # GIVEN a fresh interpreter / WHEN every module of the package but the contract is imported
    code = (
        "import json, sys\n"
        "import formwork.webhooks, formwork.webhooks.dynamodb, formwork.webhooks.secrets\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'boto3', 'botocore', 'aws_lambda_powertools', 'pytest'})))\n"
    )
    root = Path(__file__).resolve().parents[2]
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=False
    )
    # THEN none of them was loaded: the adapters take their clients, Powertools comes late
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == []
