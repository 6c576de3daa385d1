"""The signature schemes both directions share.

The scheme is the Standard Webhooks specification (standardwebhooks.com), so a sender or
receiver verifies with off-the-shelf code (the ``standardwebhooks`` package, Svix's libraries,
any of the specification's reference libraries)::

    webhook-id:        d_01HQ...                     (unique per delivery; the same on retries)
    webhook-timestamp: 1741597200                    (unix seconds, when it was signed)
    webhook-signature: v1,<base64> [v1,<base64> ...] (HMAC-SHA256 of "{id}.{timestamp}.{body}")

keyed with the secret's bytes: a ``whsec_<base64>`` secret (the specification's form) is its
base64-decoded bytes, any other secret its UTF-8 bytes. The HMAC itself is the
``standardwebhooks`` package's (``standard_signature``); the parsing of the headers, the
configurable tolerance and the constant-time comparison of every candidate with every key
are ours (its ``Webhook.verify`` fixes the tolerance at five minutes, reads the clock itself,
holds one key, and says only "no match" whatever is wrong). Entries with another version
(``v1a,``) are ignored. The id is covered by the signature, so a captured request cannot be
replayed under another id.

Until ``LEGACY_HEADERS_UNTIL`` (docs/webhooks.md, "Deprecated headers") the scheme Formwork used
before is still accepted inbound and still sent outbound beside the standard headers:

    X-Formwork-Timestamp: 1741597200                 (unix seconds, when it was signed)
    X-Formwork-Delivery:  d_01HQ...                  (unique per delivery; the same on retries)
    X-Formwork-Signature: v1=<hex>[, v1=<hex> ...]   (HMAC-SHA256 of "{timestamp}.{body}")

``v1`` is the lower-case hex HMAC-SHA256, keyed with the shared secret's UTF-8 bytes (a
``whsec_`` secret's too), of the ASCII timestamp, a dot and the raw body bytes; the delivery
id is not signed, so ``log.bind_signature`` ties each signed request to its id. A sender
rotating its secret sends one ``v1=`` per secret; a receiver holding several secrets accepts
any one match. Entries with another scheme tag are ignored.

``verify_standard`` and ``verify`` (the deprecated scheme's) check the signature
(constant-time comparisons, every candidate compared) and then that the timestamp is within a
tolerance of ``now``. A proven request may still ask for more than its source may do: that,
and the inbound body, is ``formwork.webhooks.inbound`` (``SourceLimits``, ``WebhookStart``,
``tool_call_id``, the patterns of the names a request carries); the refusals are
``formwork.webhooks.errors``. Their names are importable from here too.

Nothing here reads a clock or draws randomness: timestamps, ``now`` and secrets are arguments.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
from collections.abc import Sequence
from datetime import UTC, datetime

from formwork.webhooks.errors import NotAllowed, SignatureRefused, WebhookRefused
from formwork.webhooks.inbound import (
    ANY,
    DELIVERY_PATTERN,
    FORM_ID_PATTERN,
    ID_PATTERN,
    MAX_METADATA_BYTES,
    PRINCIPAL_PATTERN,
    SOURCE_PATTERN,
    TENANT_PATTERN,
    SourceLimits,
    WebhookStart,
    check_delivery,
    check_source,
    principal_tenant,
    tool_call_id,
)

__all__ = [
    "ANY",
    "DEFAULT_TOLERANCE",
    "DELIVERY_HEADER",
    "DELIVERY_PATTERN",
    "EVENT_HEADER",
    "FORM_ID_PATTERN",
    "ID_HEADER",
    "ID_PATTERN",
    "LEGACY_HEADERS_UNTIL",
    "MAX_METADATA_BYTES",
    "MAX_SIGNATURE_HEADER",
    "MAX_STANDARD_KEY_BYTES",
    "MIN_SECRET_LENGTH",
    "MIN_STANDARD_KEY_BYTES",
    "PRINCIPAL_PATTERN",
    "SCHEME",
    "SECRET_PREFIX",
    "SIGNATURE_HEADER",
    "SOURCE_PATTERN",
    "STANDARD_SIGNATURE_HEADER",
    "STANDARD_TIMESTAMP_HEADER",
    "TENANT_PATTERN",
    "TIMESTAMP_HEADER",
    "NotAllowed",
    "SignatureRefused",
    "SourceLimits",
    "WebhookRefused",
    "WebhookStart",
    "candidates",
    "check_delivery",
    "check_secret",
    "check_source",
    "parse_timestamp",
    "principal_tenant",
    "sign",
    "sign_all",
    "signature",
    "signature_matches",
    "signed_digest",
    "standard_candidates",
    "standard_headers",
    "standard_key",
    "standard_sign_all",
    "standard_signature",
    "tool_call_id",
    "verify",
    "verify_standard",
]

SCHEME = "v1"
ID_HEADER = "webhook-id"
STANDARD_TIMESTAMP_HEADER = "webhook-timestamp"
STANDARD_SIGNATURE_HEADER = "webhook-signature"
"""The Standard Webhooks headers (the specification writes them lower-case)."""
SECRET_PREFIX = "whsec_"
"""A Standard Webhooks secret: ``whsec_`` and the base64 of 24 to 64 random bytes."""
MIN_STANDARD_KEY_BYTES = 24
MAX_STANDARD_KEY_BYTES = 64

TIMESTAMP_HEADER = "X-Formwork-Timestamp"
SIGNATURE_HEADER = "X-Formwork-Signature"
DELIVERY_HEADER = "X-Formwork-Delivery"
"""The deprecated headers (accepted and sent until ``LEGACY_HEADERS_UNTIL``)."""
EVENT_HEADER = "X-Formwork-Event"
"""The event type of an outbound notification (not part of either signature; kept)."""
LEGACY_HEADERS_UNTIL = "2027-06-30"
"""The last day the ``X-Formwork-*`` signature headers are accepted inbound and sent outbound,
as docs/webhooks.md promises (a test holds the two together)."""

DEFAULT_TOLERANCE = 300
"""Seconds a signed timestamp may be away from the receiver's clock, either way."""

MAX_SIGNATURE_HEADER = 1024
MIN_SECRET_LENGTH = 16

_TIMESTAMP = re.compile(r"^\d{1,12}$")
_HEX = re.compile(r"^[0-9a-fA-F]{64}$")


# ---------------------------------------------------------------------------- signatures


def _key(secret: str | bytes) -> bytes:
    """The deprecated scheme's HMAC key: the secret's UTF-8 bytes, whatever it looks like."""
    return secret.encode("utf-8") if isinstance(secret, str) else secret


def standard_key(secret: str | bytes) -> bytes:
    """The Standard Webhooks HMAC key of a secret: a ``whsec_`` secret's base64-decoded bytes
    (as the specification's libraries read it), any other secret's UTF-8 bytes."""
    if isinstance(secret, bytes):
        return secret
    decoded = _standard_key(secret)
    return decoded if decoded is not None else secret.encode("utf-8")


def _standard_key(secret: str) -> bytes | None:
    """The bytes of a ``whsec_<base64>`` secret; None for any other secret (or bad base64)."""
    if not secret.startswith(SECRET_PREFIX):
        return None
    try:
        return base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
    except (binascii.Error, ValueError):
        return None


def signature(secret: str | bytes, timestamp: int, body: bytes) -> str:
    """The hex HMAC-SHA256 of ``"{timestamp}.{body}"`` under ``secret``."""
    signed = str(int(timestamp)).encode("ascii") + b"." + body
    return hmac.new(_key(secret), signed, hashlib.sha256).hexdigest()


def sign(secret: str | bytes, timestamp: int, body: bytes) -> str:
    """The ``X-Formwork-Signature`` value for one secret: ``v1=<hex>``."""
    return f"{SCHEME}={signature(secret, timestamp, body)}"


def sign_all(keys: Sequence[str | bytes], timestamp: int, body: bytes) -> str:
    """The header value with one ``v1=`` per secret (a sender rotating its secret)."""
    return ", ".join(sign(key, timestamp, body) for key in keys)


def standard_signature(secret: str | bytes, msg_id: str, timestamp: int, body: bytes) -> str:
    """One Standard Webhooks signature, ``v1,<base64>``: the ``standardwebhooks`` package's
    HMAC-SHA256 of ``"{id}.{timestamp}.{body}"`` under ``standard_key(secret)``, the body's
    bytes as they are."""
    moment = datetime.fromtimestamp(int(timestamp), UTC)
    # imported here: the library is in the aws extra, and an install of the engine alone
    # imports this module (formwork check, formwork demo saying which extra it needs)
    from standardwebhooks import Webhook

    return Webhook(standard_key(secret)).sign(msg_id, moment, body)


def standard_sign_all(keys: Sequence[str | bytes], msg_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` value with one ``v1,`` per secret, space-separated (a sender
    rotating its secret)."""
    return " ".join(standard_signature(key, msg_id, timestamp, body) for key in keys)


def standard_headers(
    keys: Sequence[str | bytes], msg_id: str, timestamp: int, body: bytes
) -> dict[str, str]:
    """The three Standard Webhooks headers of one signed request."""
    return {
        ID_HEADER: msg_id,
        STANDARD_TIMESTAMP_HEADER: str(int(timestamp)),
        STANDARD_SIGNATURE_HEADER: standard_sign_all(keys, msg_id, timestamp, body),
    }


def standard_candidates(header: str | None) -> list[bytes]:
    """The ``v1`` signatures a ``webhook-signature`` header carries (decoded), or
    ``SignatureRefused``. Entries of another version are skipped; a malformed ``v1`` entry
    is refused (never an exception out of here)."""
    if header is None or not header.strip():
        raise SignatureRefused(
            "missing_signature", f"the {STANDARD_SIGNATURE_HEADER} header is missing"
        )
    if len(header) > MAX_SIGNATURE_HEADER:
        raise SignatureRefused("bad_signature", f"{STANDARD_SIGNATURE_HEADER} is too long")
    found: list[bytes] = []
    for part in header.split():
        version, comma, value = part.partition(",")
        if version != SCHEME:
            continue
        try:
            decoded = base64.b64decode(value, validate=True) if comma else b""
        except (binascii.Error, ValueError):
            decoded = b""
        if len(decoded) != hashlib.sha256().digest_size:
            raise SignatureRefused(
                "bad_signature",
                f"{STANDARD_SIGNATURE_HEADER} entries look like v1,<base64 of 32 bytes>, "
                "separated by spaces",
            )
        found.append(decoded)
    if not found:
        raise SignatureRefused("bad_signature", f"{STANDARD_SIGNATURE_HEADER} has no v1, signature")
    return found


def verify_standard(
    keys: Sequence[str | bytes],
    msg_id: str | None,
    header: str | None,
    timestamp: str | None,
    body: bytes,
    *,
    now: float,
    tolerance: int = DEFAULT_TOLERANCE,
) -> int:
    """Check a Standard Webhooks request; return its timestamp, or raise ``SignatureRefused``.

    As ``verify``: every key against every candidate in constant time, the signature before
    the timestamp's distance from ``now``; no keys (an unknown source) is a bad signature."""
    given = standard_candidates(header)
    if msg_id is None or not msg_id.strip():
        raise SignatureRefused("missing_id", f"the {ID_HEADER} header is missing")
    moment = parse_timestamp(timestamp, STANDARD_TIMESTAMP_HEADER)
    matched = False
    for key in keys:
        expected = standard_signature(key, msg_id, moment, body)
        digest = base64.b64decode(expected.partition(",")[2])
        for candidate in given:
            matched |= hmac.compare_digest(digest, candidate)
    return _accepted(matched, moment, now, tolerance)


def parse_timestamp(value: str | None, header: str = TIMESTAMP_HEADER) -> int:
    """The unix-seconds timestamp a header holds, or ``SignatureRefused``."""
    if value is None or not value.strip():
        raise SignatureRefused("missing_timestamp", f"the {header} header is missing")
    if not _TIMESTAMP.fullmatch(value.strip()):
        raise SignatureRefused(
            "bad_timestamp", f"{header} must be whole unix seconds, such as 1741597200"
        )
    return int(value.strip())


def candidates(header: str | None) -> list[str]:
    """The ``v1`` signatures a header carries (lower-case hex), or ``SignatureRefused``."""
    if header is None or not header.strip():
        raise SignatureRefused("missing_signature", f"the {SIGNATURE_HEADER} header is missing")
    if len(header) > MAX_SIGNATURE_HEADER:
        raise SignatureRefused("bad_signature", f"{SIGNATURE_HEADER} is too long")
    found: list[str] = []
    for part in header.split(","):
        scheme, _, value = part.strip().partition("=")
        if scheme.strip() != SCHEME:
            continue
        value = value.strip()
        if not _HEX.fullmatch(value):
            raise SignatureRefused(
                "bad_signature", f"{SIGNATURE_HEADER} entries look like v1=<64 hex digits>"
            )
        found.append(value.lower())
    if not found:
        raise SignatureRefused("bad_signature", f"{SIGNATURE_HEADER} has no v1= signature")
    return found


def signature_matches(keys: Sequence[str | bytes], given: Sequence[str], signed: bytes) -> bool:
    """Whether any ``given`` hex signature is the HMAC of ``signed`` under any key.

    Every pair is compared with ``hmac.compare_digest`` and none is skipped, so the time taken
    says nothing about which comparison, or how much of one, matched.
    """
    matched = False
    for key in keys:
        expected = hmac.new(_key(key), signed, hashlib.sha256).hexdigest()
        for candidate in given:
            matched |= hmac.compare_digest(expected, candidate)
    return matched


def verify(
    keys: Sequence[str | bytes],
    header: str | None,
    timestamp: str | None,
    body: bytes,
    *,
    now: float,
    tolerance: int = DEFAULT_TOLERANCE,
) -> int:
    """Check a signed request; return its timestamp, or raise ``SignatureRefused``.

    ``keys`` are the secrets the source may have signed with (none: an unknown source, refused
    exactly like a bad signature). The signature is checked first, then the timestamp against
    ``now`` (seconds), so nothing is said about timing to an unauthenticated sender.
    """
    given = candidates(header)
    moment = parse_timestamp(timestamp)
    signed = str(moment).encode("ascii") + b"." + body
    return _accepted(bool(keys) and signature_matches(keys, given, signed), moment, now, tolerance)


def _accepted(matched: bool, moment: int, now: float, tolerance: int) -> int:
    """``moment``, for a request whose signature ``matched``, signed within ``tolerance``
    seconds of ``now``; else ``SignatureRefused``. The signature first, so nothing is said
    about timing to an unauthenticated sender (both schemes)."""
    if not matched:
        raise SignatureRefused(
            "bad_signature", "the signature does not match (or the source is not known)"
        )
    if abs(now - moment) > tolerance:
        raise SignatureRefused(
            "stale_timestamp",
            f"the timestamp is more than {tolerance} seconds from now; sign each attempt afresh",
        )
    return moment


def signed_digest(timestamp: int, body: bytes) -> str:
    """What identifies one signed request, whatever its delivery id: sha256 of what is signed."""
    return hashlib.sha256(str(int(timestamp)).encode("ascii") + b"." + body).hexdigest()


def check_secret(secret: str) -> bool:
    """A usable secret: ``whsec_`` and the base64 of 24 to 64 bytes (Standard Webhooks'), or
    other text of at least ``MIN_SECRET_LENGTH`` characters."""
    if not isinstance(secret, str):
        return False
    if secret.startswith(SECRET_PREFIX):
        key = _standard_key(secret)
        return key is not None and MIN_STANDARD_KEY_BYTES <= len(key) <= MAX_STANDARD_KEY_BYTES
    return len(secret) >= MIN_SECRET_LENGTH
