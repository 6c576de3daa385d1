"""Signed webhooks, the application's part: the scheme, the delivery log, secrets, events.

- ``signing``: the signature scheme (``sign``, ``verify``), refusals, ``SourceLimits``, the
  inbound body ``WebhookStart``;
- ``log``: the ``DeliveryLog`` port and its rules (``claim_delivery``, ``bind_signature``);
- ``memory`` and ``dynamodb``: its adapters, ``InMemoryDeliveryLog`` and
  ``DynamoDBDeliveryLog`` (the forms table, through an injected boto3 client);
- ``contract``: ``DeliveryLogContract``, the pytest suite every delivery log passes;
- ``secrets``: the ``SecretSource`` port and its adapters, ``StaticSecrets`` and
  ``SecretsManagerSecrets``;
- ``events``: the outbound ``FormEvent``, its bytes and its headers.

The HTTP route and the outbound POST are the Lambda shell's (``functions.webhooks``); which
log and which secrets a process uses is ``formwork.bootstrap``'s choice. Nothing here reads a
clock, draws randomness, or imports an AWS library on import. ``contract`` is not re-exported
(it imports pytest).
"""

from formwork.webhooks.dynamodb import DynamoDBDeliveryLog
from formwork.webhooks.events import (
    EventType,
    FormEvent,
    delivery_headers,
    event_body,
    form_event,
    live_values,
)
from formwork.webhooks.log import (
    DEFAULT_LEASE,
    DEFAULT_RETENTION,
    Claim,
    Claimed,
    DeliveryConflict,
    DeliveryLog,
    DeliveryRecord,
    InProgress,
    Replay,
    Reused,
    bind_signature,
    claim_delivery,
    decide,
    finish_delivery,
    release_delivery,
)
from formwork.webhooks.memory import InMemoryDeliveryLog
from formwork.webhooks.secrets import (
    SECRET_MAX_AGE,
    Direction,
    SecretsManagerSecrets,
    SecretSource,
    SecretsUnavailable,
    StaticSecrets,
    parse_secret_value,
)
from formwork.webhooks.signing import (
    ANY,
    DEFAULT_TOLERANCE,
    DELIVERY_HEADER,
    DELIVERY_PATTERN,
    EVENT_HEADER,
    FORM_ID_PATTERN,
    ID_PATTERN,
    MAX_METADATA_BYTES,
    MAX_SIGNATURE_HEADER,
    MIN_SECRET_LENGTH,
    PRINCIPAL_PATTERN,
    SCHEME,
    SIGNATURE_HEADER,
    SOURCE_PATTERN,
    TENANT_PATTERN,
    TIMESTAMP_HEADER,
    NotAllowed,
    SignatureRefused,
    SourceLimits,
    WebhookRefused,
    WebhookStart,
    candidates,
    check_delivery,
    check_secret,
    check_source,
    parse_timestamp,
    principal_tenant,
    sign,
    sign_all,
    signature,
    signature_matches,
    signed_digest,
    tool_call_id,
    verify,
)

__all__ = [
    "ANY",
    "DEFAULT_LEASE",
    "DEFAULT_RETENTION",
    "DEFAULT_TOLERANCE",
    "DELIVERY_HEADER",
    "DELIVERY_PATTERN",
    "EVENT_HEADER",
    "FORM_ID_PATTERN",
    "ID_PATTERN",
    "MAX_METADATA_BYTES",
    "MAX_SIGNATURE_HEADER",
    "MIN_SECRET_LENGTH",
    "PRINCIPAL_PATTERN",
    "SCHEME",
    "SECRET_MAX_AGE",
    "SIGNATURE_HEADER",
    "SOURCE_PATTERN",
    "TENANT_PATTERN",
    "TIMESTAMP_HEADER",
    "Claim",
    "Claimed",
    "DeliveryConflict",
    "DeliveryLog",
    "DeliveryRecord",
    "Direction",
    "DynamoDBDeliveryLog",
    "EventType",
    "FormEvent",
    "InMemoryDeliveryLog",
    "InProgress",
    "NotAllowed",
    "Replay",
    "Reused",
    "SecretSource",
    "SecretsManagerSecrets",
    "SecretsUnavailable",
    "SignatureRefused",
    "SourceLimits",
    "StaticSecrets",
    "WebhookRefused",
    "WebhookStart",
    "bind_signature",
    "candidates",
    "check_delivery",
    "check_secret",
    "check_source",
    "claim_delivery",
    "decide",
    "delivery_headers",
    "event_body",
    "finish_delivery",
    "form_event",
    "live_values",
    "parse_secret_value",
    "parse_timestamp",
    "principal_tenant",
    "release_delivery",
    "sign",
    "sign_all",
    "signature",
    "signature_matches",
    "signed_digest",
    "tool_call_id",
    "verify",
]
