"""The Standard Webhooks scheme: what Formwork signs verifies with the specification's own
library (``standardwebhooks``), what that library signs verifies with Formwork, and the
refusals (tampering, staleness, malformed headers) are clear ``SignatureRefused`` codes.

The deprecated ``X-Formwork-*`` scheme keeps its tests in ``test_webhooks.py``; here it is only
checked that outbound deliveries still carry it, until the date the docs promise.
"""

from __future__ import annotations

import base64
import re
import shutil
import subprocess
import time
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from standardwebhooks import Webhook, WebhookVerificationError

from forms.state import FormState, HookContext, Values
from formwork.webhooks import (
    ID_HEADER,
    LEGACY_HEADERS_UNTIL,
    STANDARD_SIGNATURE_HEADER,
    STANDARD_TIMESTAMP_HEADER,
    SignatureRefused,
    check_secret,
    delivery_headers,
    event_body,
    form_event,
    standard_headers,
    standard_sign_all,
    standard_signature,
    verify,
    verify_standard,
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"
KEY = bytes(range(32))
SECRET = "whsec_" + base64.b64encode(KEY).decode()
OLD_SECRET = "whsec_" + base64.b64encode(bytes(range(100, 132))).decode()
PLAIN = "crm-secret-0123456789"
"""A secret of the deprecated scheme's shape (no ``whsec_``): keyed with its UTF-8 bytes."""
T = 1_741_597_200
MSG = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W"
BODY = b'{"form":"travel-claim","principal":"acme/alice","conversation_id":"conv-1"}'


def refused(code: str, *args: Any, **kwargs: Any) -> None:
    with pytest.raises(SignatureRefused) as caught:
        verify_standard(*args, **kwargs)
    assert caught.value.code == code


def library_headers(secret: str, msg_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """What a sender using the specification's library sends."""
    signature = Webhook(secret).sign(msg_id, datetime.fromtimestamp(timestamp, UTC), body.decode())
    return {
        ID_HEADER: msg_id,
        STANDARD_TIMESTAMP_HEADER: str(timestamp),
        "webhook-signature": signature,
    }


# ---------------------------------------------------------------------------- the scheme


def test_the_specifications_published_vector_is_reproduced() -> None:
    # GIVEN the example of the Standard Webhooks specification (secret, id, timestamp, body)
    secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    body = b'{"test": 2432232314}'
    # WHEN Formwork signs it
    signature = standard_signature(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body)
    # THEN it is the signature the specification gives
    assert signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def test_what_formwork_signs_verifies_with_the_specifications_library() -> None:
    headers = standard_headers([SECRET], MSG, T, BODY)
    assert re.fullmatch(r"v1,[A-Za-z0-9+/]{43}=", headers[STANDARD_SIGNATURE_HEADER])
    # the library reads its own clock: sign at "now" for it
    now = int(time.time())
    fresh = standard_headers([SECRET], MSG, now, BODY)
    assert Webhook(SECRET).verify(BODY, fresh) == {
        "form": "travel-claim",
        "principal": "acme/alice",
        "conversation_id": "conv-1",
    }


def test_what_the_specifications_library_signs_verifies_with_formwork() -> None:
    headers = library_headers(SECRET, MSG, T, BODY)
    assert (
        verify_standard(
            [SECRET],
            headers[ID_HEADER],
            headers["webhook-signature"],
            headers[STANDARD_TIMESTAMP_HEADER],
            BODY,
            now=T,
        )
        == T
    )


def test_a_secret_without_the_prefix_is_keyed_with_its_utf8_bytes() -> None:
    # the library takes raw key bytes: a receiver holding a plain secret passes its bytes
    assert standard_signature(PLAIN, MSG, T, BODY) == Webhook(PLAIN.encode()).sign(
        MSG, datetime.fromtimestamp(T, UTC), BODY.decode()
    )


@given(
    body=st.binary(max_size=300),  # signed byte for byte, UTF-8 or not
    timestamp=st.integers(min_value=0, max_value=10**10),
    skew=st.integers(min_value=-300, max_value=300),
)
def test_any_body_and_timestamp_round_trip(body: bytes, timestamp: int, skew: int) -> None:
    header = standard_sign_all([SECRET], MSG, timestamp, body)
    assert (
        verify_standard([SECRET], MSG, header, str(timestamp), body, now=timestamp + skew)
        == timestamp
    )


@pytest.mark.parametrize(
    ("msg_id", "timestamp", "body"),
    [
        ("msg_other", T, BODY),  # the id is signed: another id does not verify
        (MSG, T + 1, BODY),  # a timestamp moved to dodge staleness
        (MSG, T, BODY + b" "),  # a body changed in transit
    ],
)
def test_changing_the_id_the_timestamp_or_the_body_is_refused(
    msg_id: str, timestamp: int, body: bytes
) -> None:
    header = standard_sign_all([SECRET], MSG, T, BODY)
    refused("bad_signature", [SECRET], msg_id, header, str(timestamp), body, now=T)


def test_a_wrong_secret_and_no_secret_are_refused_alike() -> None:
    header = standard_sign_all([SECRET], MSG, T, BODY)
    refused("bad_signature", [OLD_SECRET], MSG, header, str(T), BODY, now=T)
    refused("bad_signature", [], MSG, header, str(T), BODY, now=T)


def test_a_body_that_is_not_utf8_is_signed_and_checked_byte_for_byte() -> None:
    header = standard_sign_all([SECRET], MSG, T, b"\xff\xfe")
    assert verify_standard([SECRET], MSG, header, str(T), b"\xff\xfe", now=T) == T
    refused("bad_signature", [SECRET], MSG, header, str(T), b"\xff\xfd", now=T)


# ---------------------------------------------------------------------------- replay window


def test_the_replay_window_is_the_tolerance_either_way_inclusive() -> None:
    header = standard_sign_all([SECRET], MSG, T, BODY)
    for now in (T - 300, T + 300):
        assert verify_standard([SECRET], MSG, header, str(T), BODY, now=now) == T
    for now in (T - 301, T + 301):
        refused("stale_timestamp", [SECRET], MSG, header, str(T), BODY, now=now)
    # AND the tolerance is the deployment's (FORMWORK_WEBHOOK_TOLERANCE), not a fixed five minutes
    assert verify_standard([SECRET], MSG, header, str(T), BODY, now=T + 900, tolerance=900) == T
    refused("stale_timestamp", [SECRET], MSG, header, str(T), BODY, now=T + 61, tolerance=60)


def test_a_stale_request_with_a_bad_signature_says_only_bad_signature() -> None:
    # nothing about timing is told to a sender that has not proven itself
    header = standard_sign_all([OLD_SECRET], MSG, T, BODY)
    refused("bad_signature", [SECRET], MSG, header, str(T), BODY, now=T + 10_000)


# ---------------------------------------------------------------------------- rotation


def test_several_signatures_verify_with_any_secret_held_during_a_rotation() -> None:
    # GIVEN a sender signing with its new and its old secret (space-separated, as specified)
    header = standard_sign_all([SECRET, OLD_SECRET], MSG, T, BODY)
    assert len(header.split(" ")) == 2
    # THEN a receiver holding either, or both, verifies it
    for keys in ([SECRET], [OLD_SECRET], [OLD_SECRET, SECRET]):
        assert verify_standard(keys, MSG, header, str(T), BODY, now=T) == T
    # AND so does the specification's library, with either secret
    now = int(time.time())
    fresh = standard_headers([SECRET, OLD_SECRET], MSG, now, BODY)
    for secret in (SECRET, OLD_SECRET):
        Webhook(secret).verify(BODY, fresh)


def test_entries_of_another_version_are_skipped() -> None:
    good = standard_signature(SECRET, MSG, T, BODY)
    header = f"v1a,{base64.b64encode(b'x' * 64).decode()} {good} v2,anything"
    assert verify_standard([SECRET], MSG, header, str(T), BODY, now=T) == T


# ---------------------------------------------------------------------------- malformed


@pytest.mark.parametrize(
    "header",
    [
        "v1",  # no comma
        "v1,not base64!",
        "v1," + base64.b64encode(b"short").decode(),
        "v1,=====",
    ],
)
def test_a_malformed_v1_entry_is_a_clear_refusal_never_an_exception(header: str) -> None:
    refused("bad_signature", [SECRET], MSG, header, str(T), BODY, now=T)


def test_missing_and_bad_headers_each_say_which() -> None:
    header = standard_sign_all([SECRET], MSG, T, BODY)
    refused("missing_signature", [SECRET], MSG, None, str(T), BODY, now=T)
    refused("missing_signature", [SECRET], MSG, "  ", str(T), BODY, now=T)
    refused("bad_signature", [SECRET], MSG, "v2,abc", str(T), BODY, now=T)
    refused("bad_signature", [SECRET], MSG, "v1,x " * 300, str(T), BODY, now=T)
    refused("missing_id", [SECRET], None, header, str(T), BODY, now=T)
    refused("missing_timestamp", [SECRET], MSG, header, None, BODY, now=T)
    refused("bad_timestamp", [SECRET], MSG, header, "1.5", BODY, now=T)
    with pytest.raises(WebhookVerificationError):  # what the library says to the same request
        Webhook(SECRET).verify(BODY, {ID_HEADER: MSG, "webhook-signature": header})


# ---------------------------------------------------------------------------- secrets


@pytest.mark.parametrize(
    ("secret", "usable"),
    [
        (SECRET, True),
        ("whsec_" + base64.b64encode(bytes(24)).decode(), True),
        ("whsec_" + base64.b64encode(bytes(64)).decode(), True),
        ("whsec_" + base64.b64encode(bytes(23)).decode(), False),  # too short a key
        ("whsec_" + base64.b64encode(bytes(65)).decode(), False),
        ("whsec_not-base64-at-all!!", False),
        (PLAIN, True),  # the deprecated scheme's kind: 16 characters or more
        ("short", False),
    ],
)
def test_a_secret_is_a_whsec_key_of_24_to_64_bytes_or_16_characters(
    secret: str, usable: bool
) -> None:
    assert check_secret(secret) is usable


# ---------------------------------------------------------------------------- outbound


def hook_context() -> HookContext:
    answers = {"company": "Ferreira Lda"}
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


def test_a_notification_carries_the_standard_headers_and_until_the_promised_date_the_old() -> None:
    event = form_event(hook_context(), occurred_at=datetime(2025, 3, 10, 9, tzinfo=UTC))
    body = event_body(event)
    headers = delivery_headers(event, body, [SECRET, OLD_SECRET], timestamp=T)
    # THEN the standard headers: the id is the delivery id, one signature per secret
    assert headers[ID_HEADER] == event.delivery
    assert headers[STANDARD_TIMESTAMP_HEADER] == str(T)
    for secret in (SECRET, OLD_SECRET):
        assert verify_standard(
            [secret], event.delivery, headers[STANDARD_SIGNATURE_HEADER], str(T), body, now=T
        )
    # AND the deprecated ones, verifying as before, each secret signing
    for secret in (SECRET, OLD_SECRET):
        assert verify(
            [secret], headers["X-Formwork-Signature"], headers["X-Formwork-Timestamp"], body, now=T
        )
    assert headers["X-Formwork-Delivery"] == event.delivery


def test_the_deprecation_date_is_the_one_the_docs_promise() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert f"until {LEGACY_HEADERS_UNTIL}" in text
    date.fromisoformat(LEGACY_HEADERS_UNTIL)


# ---------------------------------------------------------------------------- the docs


def doc_blocks(language: str) -> list[str]:
    text = DOCS.read_text(encoding="utf-8")
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.DOTALL)


def test_the_documented_receiver_accepts_what_formwork_sends_and_refuses_the_rest() -> None:
    (source,) = [b for b in doc_blocks("python") if "def verify_notification" in b]
    namespace: dict[str, Any] = {}
    exec(compile(source, str(DOCS), "exec"), namespace)
    check = namespace["verify_notification"]
    event = form_event(hook_context(), occurred_at=datetime(2025, 3, 10, 9, tzinfo=UTC))
    body = event_body(event)
    now = int(time.time())  # the library reads its own clock
    headers = delivery_headers(event, body, [SECRET, OLD_SECRET], timestamp=now)
    assert check(SECRET, headers, body)["delivery"] == event.delivery
    assert check(OLD_SECRET, headers, body) is not None
    assert check("whsec_" + base64.b64encode(bytes(32)).decode(), headers, body) is None
    assert check(SECRET, headers, body + b" ") is None
    stale = delivery_headers(event, body, [SECRET], timestamp=now - 301)
    assert check(SECRET, stale, body) is None
    assert check(SECRET, {**headers, "webhook-signature": "v1"}, body) is None


def test_the_documented_sender_signs_what_formwork_verifies() -> None:
    (source,) = [b for b in doc_blocks("python") if "Webhook(secret).sign" in b]
    namespace: dict[str, Any] = {}
    exec(compile(source.replace('"whsec_..."', repr(SECRET)), str(DOCS), "exec"), namespace)
    request = namespace["request"]
    headers = {k.lower(): v for k, v in request.header_items()}
    assert verify_standard(
        [SECRET],
        headers["webhook-id"],
        headers["webhook-signature"],
        headers["webhook-timestamp"],
        request.data,
        now=time.time(),
    )


@pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl on this machine")
def test_the_documented_shell_signature_matches() -> None:
    (block,) = [b for b in doc_blocks("sh") if "webhook-signature" in b]
    # every line up to the curl: the variables, with the test's secret
    script = re.sub(r"SECRET='[^']*'", f"SECRET='{SECRET}'", block.split("curl ")[0])
    script += 'printf "%s\\n%s\\n%s\\n" "$ID" "$TS" "$SIG"\n'
    run = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    msg_id, timestamp, signature = run.stdout.split()
    body = re.search(r"BODY='(.*)'", block)
    assert body is not None
    assert standard_signature(SECRET, msg_id, int(timestamp), body.group(1).encode()) == (
        f"v1,{signature}"
    )


def test_a_bad_whsec_secret_in_the_settings_is_a_config_error_that_does_not_echo_it() -> None:
    from formwork.config import ConfigError
    from formwork.webhook_settings import WebhookSettings

    bad = "whsec_" + base64.b64encode(bytes(8)).decode()  # 8 bytes: too short a key
    with pytest.raises(ConfigError, match="whsec_ and the base64 of 24 to 64 bytes") as caught:
        WebhookSettings.from_env({"FORMWORK_WEBHOOK_SECRETS": f'{{"crm": "{bad}"}}'})
    assert bad not in str(caught.value)
    good = WebhookSettings.from_env({"FORMWORK_WEBHOOK_SECRETS": f'{{"crm": "{SECRET}"}}'})
    assert good.static_keys("crm") == (SECRET,)
