"""Deployment settings, read once from the environment and checked when read.

Every variable the tool API reads is here; nothing else in ``functions/`` touches
``os.environ``. A bad value fails with a ``ConfigError`` that names the variable, what it holds
and what it should hold, so a misconfigured deployment fails its first request loudly instead
of misbehaving quietly.

| variable | meaning | default |
| --- | --- | --- |
| ``TABLE_NAME`` | DynamoDB table of form instances | required to build the DynamoDB store |
| ``DYNAMODB_ENDPOINT_URL`` | local endpoint (moto); unset in AWS | unset |
| ``AWS_REGION`` / ``AWS_DEFAULT_REGION`` | region of the table | ``us-east-1`` |
| ``TENANT_CLAIM`` | JWT claim naming the tenant (principal ``tenant/sub``) | unset |
| ``ROLES_CLAIM`` | JWT claim listing the caller's roles (approvals) | ``roles`` |
| ``FORMWORK_FORMS`` | ``module:attr``, a sequence of ``FormDef`` | ``forms.examples:EXAMPLES`` |
| ``FORMWORK_MAX_BODY_BYTES`` | largest request body accepted (bytes) | ``65536`` |
| ``FORMWORK_DISPATCH`` | how hooks run: ``inprocess`` or ``temporal`` | ``inprocess`` |
| ``FORMWORK_HOOK_WAIT_MS`` | how long a tool call waits for its hooks (Temporal) | ``1500`` |
| ``FORMWORK_REPLAY_WINDOW_HOURS`` | how long a retried tool call gets its first result | ``24`` |
| ``FORMWORK_HOOK_MAX_ATTEMPTS`` | attempts of an executor before its failure is final | ``5`` |
| ``FORMWORK_HOOK_TIMEOUT_SECONDS`` | one attempt's time limit (start to close) | ``300`` |
| ``FORMWORK_HOOK_HEARTBEAT_SECONDS`` | a silent worker is presumed dead after this | ``30`` |
| ``FORMWORK_REDISPATCH_AFTER_SECONDS`` | re-dispatch a hook still pending this long | ``600`` |
| ``TEMPORAL_ADDRESS`` | Temporal frontend ``host:port`` | ``localhost:7233`` |
| ``TEMPORAL_NAMESPACE`` | Temporal namespace | ``default`` |
| ``TEMPORAL_TASK_QUEUE`` | task queue of the hook workers | ``formwork-hooks`` |
| ``TEMPORAL_API_KEY`` | Temporal Cloud API key (turns TLS on); local and dev only | unset |
| ``FORMWORK_TEMPORAL_SECRET_ID`` | secret (ARN or name) with the API key or mTLS material | unset |
| ``TEMPORAL_TLS`` | ``true``: TLS with system roots, no client certificate | ``false`` |
| ``TEMPORAL_TLS_CLIENT_CERT_PATH`` | mTLS client certificate (PEM) | unset |
| ``TEMPORAL_TLS_CLIENT_KEY_PATH`` | mTLS client key (PEM) | unset |
| ``TEMPORAL_TLS_SERVER_CA_CERT_PATH`` | CA bundle of the server (PEM) | system roots |
| ``TEMPORAL_TLS_SERVER_NAME`` | server name to verify, when it differs from the address | unset |
| ``FORMWORK_WEBHOOK_SOURCES`` | JSON: the inbound sources, their tenants and forms | none |
| ``FORMWORK_WEBHOOK_SECRETS`` | JSON ``{source: secret(s)}``: inbound secrets (dev) | unset |
| ``FORMWORK_WEBHOOK_SECRET_PREFIX`` | else Secrets Manager ``<prefix><source>`` | see below |
| ``FORMWORK_NOTIFY_SECRETS`` | JSON ``{name: secret(s)}``: outbound secrets (dev) | unset |
| ``FORMWORK_NOTIFY_SECRET_PREFIX`` | else Secrets Manager ``<prefix><name>`` | see below |
| ``FORMWORK_WEBHOOK_TOLERANCE`` | seconds a signed webhook timestamp may be off | ``300`` |
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NoReturn

from formwork.webhooks import (
    ANY,
    FORM_ID_PATTERN,
    MIN_SECRET_LENGTH,
    TENANT_PATTERN,
    SourceLimits,
    check_secret,
    check_source,
)

DEFAULT_REGION = "us-east-1"
DEFAULT_FORMS = "forms.examples:EXAMPLES"
DEFAULT_ROLES_CLAIM = "roles"
DEFAULT_MAX_BODY_BYTES = 65536
DEFAULT_REPLAY_WINDOW_HOURS = 24
MAX_BODY_BYTES_LIMIT = 6 * 1024 * 1024
"""Lambda's synchronous payload limit: a larger setting could never be reached."""

_TABLE = re.compile(r"[A-Za-z0-9_.-]{3,255}")
_REGION = re.compile(r"[a-z]{2}(-[a-z]+)+-\d{1,2}")
_CLAIM = re.compile(r"[A-Za-z0-9_:.-]{1,64}")
_FORMS = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*")
_ADDRESS = re.compile(r"[A-Za-z0-9_.\[\]:-]+:\d{1,5}")
_NAME = re.compile(r"[A-Za-z0-9_.@-]{1,200}")
_SECRET_ID = re.compile(r"[A-Za-z0-9/_+=.@:-]{1,2048}")
"""A Secrets Manager ``SecretId``: a secret's name or its ARN."""

DISPATCH_MODES = ("inprocess", "temporal")
DEFAULT_TEMPORAL_ADDRESS = "localhost:7233"
DEFAULT_TEMPORAL_NAMESPACE = "default"
DEFAULT_TASK_QUEUE = "formwork-hooks"
DEFAULT_HOOK_WAIT_MS = 1500
DEFAULT_HOOK_MAX_ATTEMPTS = 5
DEFAULT_HOOK_TIMEOUT_SECONDS = 300
DEFAULT_HOOK_HEARTBEAT_SECONDS = 30
DEFAULT_REDISPATCH_AFTER_SECONDS = 600


class ConfigError(ValueError):
    """An environment variable is missing or holds a value the tool API cannot use."""


@dataclass(frozen=True, slots=True)
class TemporalSettings:
    """How to reach Temporal: a local dev server, a self-hosted cluster, or Temporal Cloud.

    The variables are the ones Temporal's own CLI and SDKs read (``temporal env``), so one
    environment serves the worker, the functions and the ``temporal`` command alike.

    TLS is on when ``tls`` is true, when an API key is set (Temporal Cloud), when any of
    the certificate paths is set (mTLS), or when the credentials come from Secrets Manager
    (``secret_id``); the paths and the secret are read when connecting, not here.

    ``secret_id`` (``FORMWORK_TEMPORAL_SECRET_ID``) is how a deployment passes credentials:
    the secret holds the API key, or a JSON object with the API key and/or the mTLS client
    certificate and key (``workflows.client`` reads it). ``api_key`` and the certificate paths
    are for local and development use; neither may be set beside a secret.
    """

    address: str = DEFAULT_TEMPORAL_ADDRESS
    namespace: str = DEFAULT_TEMPORAL_NAMESPACE
    task_queue: str = DEFAULT_TASK_QUEUE
    api_key: str | None = field(default=None, repr=False)
    tls: bool = False
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_ca: str | None = None
    tls_server_name: str | None = None
    secret_id: str | None = None

    def __post_init__(self) -> None:
        if not _ADDRESS.fullmatch(self.address):
            _fail("TEMPORAL_ADDRESS", self.address, "host:port, for example localhost:7233")
        if not _NAME.fullmatch(self.namespace):
            _fail("TEMPORAL_NAMESPACE", self.namespace, "a namespace name")
        if not _NAME.fullmatch(self.task_queue):
            _fail("TEMPORAL_TASK_QUEUE", self.task_queue, "a task queue name")
        if (self.tls_cert is None) != (self.tls_key is None):
            _fail(
                "TEMPORAL_TLS_CLIENT_CERT_PATH"
                if self.tls_cert is None
                else "TEMPORAL_TLS_CLIENT_KEY_PATH",
                "",
                "both TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH, or neither",
            )
        if self.secret_id is not None:
            if not _SECRET_ID.fullmatch(self.secret_id):
                _fail(
                    "FORMWORK_TEMPORAL_SECRET_ID",
                    self.secret_id,
                    "a Secrets Manager secret name or ARN",
                )
            if self.api_key is not None or self.tls_cert is not None:
                raise ConfigError(
                    "FORMWORK_TEMPORAL_SECRET_ID is set together with TEMPORAL_API_KEY or "
                    "TEMPORAL_TLS_CLIENT_CERT_PATH/TEMPORAL_TLS_CLIENT_KEY_PATH: take the "
                    "credentials from the secret or from those variables, not both"
                )

    @property
    def uses_tls(self) -> bool:
        return bool(self.tls or self.api_key or self.tls_cert or self.tls_ca or self.secret_id)


@dataclass(frozen=True, slots=True)
class Settings:
    """What the tool API needs from its deployment. Checked on construction."""

    table_name: str | None = None
    dynamodb_endpoint_url: str | None = None
    region: str = DEFAULT_REGION
    tenant_claim: str | None = None
    roles_claim: str = DEFAULT_ROLES_CLAIM
    """The claim listing the caller's roles (Cognito: ``cognito:groups``); an approver needs
    the role an approval names in it."""
    forms: str = DEFAULT_FORMS
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    dispatch: str = "inprocess"
    hook_wait_ms: int = DEFAULT_HOOK_WAIT_MS
    hook_max_attempts: int = DEFAULT_HOOK_MAX_ATTEMPTS
    hook_timeout_seconds: int = DEFAULT_HOOK_TIMEOUT_SECONDS
    hook_heartbeat_seconds: int = DEFAULT_HOOK_HEARTBEAT_SECONDS
    redispatch_after_seconds: int = DEFAULT_REDISPATCH_AFTER_SECONDS
    replay_window_hours: int = DEFAULT_REPLAY_WINDOW_HOURS
    """How long a retried tool call gets its first result; later, ``tool_call_expired``."""
    temporal: TemporalSettings = field(default_factory=TemporalSettings)

    def __post_init__(self) -> None:
        if self.table_name is not None and not _TABLE.fullmatch(self.table_name):
            _fail("TABLE_NAME", self.table_name, "3-255 characters of letters, digits, _ . -")
        url = self.dynamodb_endpoint_url
        if url is not None and not re.fullmatch(r"https?://[^\s/]+(/\S*)?", url):
            _fail("DYNAMODB_ENDPOINT_URL", url, "an http:// or https:// URL")
        if not _REGION.fullmatch(self.region):
            _fail("AWS_REGION", self.region, "a region name such as us-east-1")
        if self.tenant_claim is not None and not _CLAIM.fullmatch(self.tenant_claim):
            _fail("TENANT_CLAIM", self.tenant_claim, "a claim name (letters, digits, _ : . -)")
        if not _CLAIM.fullmatch(self.roles_claim):
            _fail("ROLES_CLAIM", self.roles_claim, "a claim name (letters, digits, _ : . -)")
        if not _FORMS.fullmatch(self.forms):
            _fail("FORMWORK_FORMS", self.forms, '"package.module:attribute"')
        if (
            isinstance(self.max_body_bytes, bool)
            or not isinstance(self.max_body_bytes, int)
            or not 1 <= self.max_body_bytes <= MAX_BODY_BYTES_LIMIT
        ):
            _fail(
                "FORMWORK_MAX_BODY_BYTES",
                str(self.max_body_bytes),
                f"a whole number of bytes from 1 to {MAX_BODY_BYTES_LIMIT}",
            )
        if self.dispatch not in DISPATCH_MODES:
            _fail("FORMWORK_DISPATCH", self.dispatch, " or ".join(DISPATCH_MODES))
        for variable, number, low, high in (
            ("FORMWORK_HOOK_WAIT_MS", self.hook_wait_ms, 0, 60_000),
            ("FORMWORK_HOOK_MAX_ATTEMPTS", self.hook_max_attempts, 1, 100),
            ("FORMWORK_HOOK_TIMEOUT_SECONDS", self.hook_timeout_seconds, 1, 86_400),
            ("FORMWORK_HOOK_HEARTBEAT_SECONDS", self.hook_heartbeat_seconds, 1, 3_600),
            ("FORMWORK_REDISPATCH_AFTER_SECONDS", self.redispatch_after_seconds, 1, 604_800),
            ("FORMWORK_REPLAY_WINDOW_HOURS", self.replay_window_hours, 1, 8_760),
        ):
            if isinstance(number, bool) or not isinstance(number, int) or not low <= number <= high:
                _fail(variable, str(number), f"a whole number from {low} to {high}")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``environ`` (default ``os.environ``); empty values count as unset."""
        env = os.environ if environ is None else environ

        def get(name: str) -> str | None:
            value = env.get(name, "").strip()
            return value or None

        raw_max = get("FORMWORK_MAX_BODY_BYTES")
        max_body = DEFAULT_MAX_BODY_BYTES
        if raw_max is not None:
            if not re.fullmatch(r"\d{1,9}", raw_max):
                _fail("FORMWORK_MAX_BODY_BYTES", raw_max, "a whole number of bytes")
            max_body = int(raw_max)

        def number(name: str, default: int) -> int:
            raw = get(name)
            if raw is None:
                return default
            if not re.fullmatch(r"\d{1,9}", raw):
                _fail(name, raw, "a whole number")
            return int(raw)

        tls = (get("TEMPORAL_TLS") or "false").lower()
        if tls not in ("true", "false", "1", "0"):
            _fail("TEMPORAL_TLS", tls, "true or false")
        temporal = TemporalSettings(
            address=get("TEMPORAL_ADDRESS") or DEFAULT_TEMPORAL_ADDRESS,
            namespace=get("TEMPORAL_NAMESPACE") or DEFAULT_TEMPORAL_NAMESPACE,
            task_queue=get("TEMPORAL_TASK_QUEUE") or DEFAULT_TASK_QUEUE,
            api_key=get("TEMPORAL_API_KEY"),
            tls=tls in ("true", "1"),
            tls_cert=get("TEMPORAL_TLS_CLIENT_CERT_PATH"),
            tls_key=get("TEMPORAL_TLS_CLIENT_KEY_PATH"),
            tls_ca=get("TEMPORAL_TLS_SERVER_CA_CERT_PATH"),
            tls_server_name=get("TEMPORAL_TLS_SERVER_NAME"),
            secret_id=get("FORMWORK_TEMPORAL_SECRET_ID"),
        )
        return cls(
            table_name=get("TABLE_NAME"),
            dynamodb_endpoint_url=get("DYNAMODB_ENDPOINT_URL"),
            region=get("AWS_REGION") or get("AWS_DEFAULT_REGION") or DEFAULT_REGION,
            tenant_claim=get("TENANT_CLAIM"),
            roles_claim=get("ROLES_CLAIM") or DEFAULT_ROLES_CLAIM,
            forms=get("FORMWORK_FORMS") or DEFAULT_FORMS,
            max_body_bytes=max_body,
            dispatch=(get("FORMWORK_DISPATCH") or "inprocess").lower(),
            hook_wait_ms=number("FORMWORK_HOOK_WAIT_MS", DEFAULT_HOOK_WAIT_MS),
            hook_max_attempts=number("FORMWORK_HOOK_MAX_ATTEMPTS", DEFAULT_HOOK_MAX_ATTEMPTS),
            hook_timeout_seconds=number(
                "FORMWORK_HOOK_TIMEOUT_SECONDS", DEFAULT_HOOK_TIMEOUT_SECONDS
            ),
            hook_heartbeat_seconds=number(
                "FORMWORK_HOOK_HEARTBEAT_SECONDS", DEFAULT_HOOK_HEARTBEAT_SECONDS
            ),
            redispatch_after_seconds=number(
                "FORMWORK_REDISPATCH_AFTER_SECONDS", DEFAULT_REDISPATCH_AFTER_SECONDS
            ),
            replay_window_hours=number("FORMWORK_REPLAY_WINDOW_HOURS", DEFAULT_REPLAY_WINDOW_HOURS),
            temporal=temporal,
        )

    def require_table(self) -> str:
        """The table name, or a ``ConfigError`` saying it must be set to use DynamoDB."""
        if self.table_name is None:
            raise ConfigError(
                "TABLE_NAME is not set: the DynamoDB store needs the table's name "
                "(template.yaml sets it to the FormsTable resource)"
            )
        return self.table_name


def _fail(variable: str, value: str, expected: str) -> NoReturn:
    shown = value if len(value) <= 80 else value[:77] + "..."
    raise ConfigError(f"{variable}={shown!r} is not valid: expected {expected}")


# ---------------------------------------------------------------------------- webhooks

DEFAULT_WEBHOOK_SECRET_PREFIX = "formwork/webhooks/"
"""Inbound source ``crm`` reads the Secrets Manager secret ``formwork/webhooks/crm`` by default."""
DEFAULT_NOTIFY_SECRET_PREFIX = "formwork/notify/"
"""``notifier(..., secret="crm")`` signs with the secret ``formwork/notify/crm`` by default."""
DEFAULT_WEBHOOK_TOLERANCE = 300
_SECRET_PREFIX = re.compile(r"[A-Za-z0-9/_+=.@-]{1,256}")

Secrets = tuple[tuple[str, tuple[str, ...]], ...]
"""``(name, secrets)`` pairs, sorted by name; each name's secrets newest first."""


@dataclass(frozen=True, slots=True)
class WebhookSettings:
    """Webhooks: which sources may call in and what for, whose secrets, how much clock skew.

    Inbound (``POST /webhooks/{source}``). ``sources`` (``FORMWORK_WEBHOOK_SOURCES``) are the
    only sources there are, each with its ``SourceLimits``; a request naming any other is
    refused before any secret is looked up. Their secrets are ``secrets``
    (``FORMWORK_WEBHOOK_SECRETS``, local and dev) when set, else the Secrets Manager secret
    ``secret_prefix + source``.

    Outbound (``functions.webhooks.notifier``). The secret named ``n`` is ``notify_secrets``'s
    (``FORMWORK_NOTIFY_SECRETS``) when set, else the Secrets Manager secret
    ``notify_prefix + n``. The two directions never share a secret: the prefixes may not
    overlap, and a configured secret may not appear on both sides, so whoever receives
    notifications holds nothing that signs a request in.

    Secrets are never shown in ``repr`` or in error messages.
    """

    sources: tuple[tuple[str, SourceLimits], ...] = ()
    secrets: Secrets | None = field(default=None, repr=False)
    secret_prefix: str = DEFAULT_WEBHOOK_SECRET_PREFIX
    notify_secrets: Secrets | None = field(default=None, repr=False)
    notify_prefix: str = DEFAULT_NOTIFY_SECRET_PREFIX
    tolerance: int = DEFAULT_WEBHOOK_TOLERANCE

    def __post_init__(self) -> None:

        for source, _ in self.sources:
            if not check_source(source):
                _fail(
                    "FORMWORK_WEBHOOK_SOURCES",
                    source,
                    "source names of 1-32 lower-case letters, digits, _ and -",
                )
        _check_secrets("FORMWORK_WEBHOOK_SECRETS", self.secrets)
        _check_secrets("FORMWORK_NOTIFY_SECRETS", self.notify_secrets)
        for variable, prefix in (
            ("FORMWORK_WEBHOOK_SECRET_PREFIX", self.secret_prefix),
            ("FORMWORK_NOTIFY_SECRET_PREFIX", self.notify_prefix),
        ):
            if not _SECRET_PREFIX.fullmatch(prefix):
                _fail(
                    variable,
                    prefix,
                    "a Secrets Manager name prefix (letters, digits, / _ + = . @ -)",
                )
        if self.secret_prefix.startswith(self.notify_prefix) or self.notify_prefix.startswith(
            self.secret_prefix
        ):
            raise ConfigError(
                f"FORMWORK_WEBHOOK_SECRET_PREFIX={self.secret_prefix!r} and "
                f"FORMWORK_NOTIFY_SECRET_PREFIX={self.notify_prefix!r} overlap: inbound and "
                "outbound secrets need prefixes of their own, neither starting with the other"
            )
        inbound = {key for _, keys in self.secrets or () for key in keys}
        shared = [name for name, keys in self.notify_secrets or () if inbound & set(keys)]
        if shared:
            raise ConfigError(
                f"FORMWORK_NOTIFY_SECRETS: the secret of {shared[0]!r} is also an inbound "
                "secret in FORMWORK_WEBHOOK_SECRETS; a notification's receiver could then sign "
                "requests in. Give each direction its own secrets"
            )
        tolerance = self.tolerance
        if (
            isinstance(tolerance, bool)
            or not isinstance(tolerance, int)
            or not 1 <= tolerance <= 3600
        ):
            _fail("FORMWORK_WEBHOOK_TOLERANCE", str(tolerance), "a whole number of seconds, 1-3600")

    def limits(self, source: str) -> SourceLimits | None:
        """What ``source`` may do; None: it is not a configured source."""
        return dict(self.sources).get(source)

    def static_keys(self, source: str) -> tuple[str, ...] | None:
        """The configured inbound secrets of ``source`` (empty: none), or None when inbound
        secrets come from Secrets Manager."""
        if self.secrets is None:
            return None
        return dict(self.secrets).get(source, ())

    def static_notify_keys(self, name: str) -> tuple[str, ...] | None:
        """The configured outbound secrets named ``name`` (empty: none), or None when
        outbound secrets come from Secrets Manager."""
        if self.notify_secrets is None:
            return None
        return dict(self.notify_secrets).get(name, ())

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> WebhookSettings:
        env = os.environ if environ is None else environ

        def get(name: str) -> str:
            return env.get(name, "").strip()

        raw_tolerance = get("FORMWORK_WEBHOOK_TOLERANCE")
        tolerance = DEFAULT_WEBHOOK_TOLERANCE
        if raw_tolerance:
            if not re.fullmatch(r"\d{1,9}", raw_tolerance):
                _fail("FORMWORK_WEBHOOK_TOLERANCE", raw_tolerance, "a whole number of seconds")
            tolerance = int(raw_tolerance)
        raw_sources = get("FORMWORK_WEBHOOK_SOURCES")
        raw_secrets = get("FORMWORK_WEBHOOK_SECRETS")
        raw_notify = get("FORMWORK_NOTIFY_SECRETS")
        return cls(
            sources=parse_webhook_sources(raw_sources) if raw_sources else (),
            secrets=parse_webhook_secrets(raw_secrets) if raw_secrets else None,
            secret_prefix=get("FORMWORK_WEBHOOK_SECRET_PREFIX") or DEFAULT_WEBHOOK_SECRET_PREFIX,
            notify_secrets=parse_webhook_secrets(raw_notify, "FORMWORK_NOTIFY_SECRETS")
            if raw_notify
            else None,
            notify_prefix=get("FORMWORK_NOTIFY_SECRET_PREFIX") or DEFAULT_NOTIFY_SECRET_PREFIX,
            tolerance=tolerance,
        )


def _check_secrets(variable: str, secrets: Secrets | None) -> None:

    for name, keys in secrets or ():
        if not check_source(name):
            _fail(variable, name, "names of 1-32 lower-case letters, digits, _ and -")
        if not keys or not all(check_secret(key) for key in keys):
            raise ConfigError(
                f"{variable}: the secret of {name!r} is not valid: expected a string of at "
                f"least {MIN_SECRET_LENGTH} characters, or a non-empty list of them"
            )


def parse_webhook_secrets(text: str, variable: str = "FORMWORK_WEBHOOK_SECRETS") -> Secrets:
    """``{"crm": "secret", "other": ["new", "old"]}`` as sorted pairs; the text itself is
    never echoed in an error (it holds secrets)."""

    problem = ConfigError(
        f"{variable} is not valid: expected a JSON object mapping each name to its secret or "
        'a list of secrets, such as {"crm": "..."}'
    )
    try:
        loaded = json.loads(text)
    except ValueError:
        raise problem from None
    if not isinstance(loaded, dict):
        raise problem
    pairs: list[tuple[str, tuple[str, ...]]] = []
    for source, value in loaded.items():
        keys = (value,) if isinstance(value, str) else value
        if not isinstance(keys, list | tuple) or not all(isinstance(k, str) for k in keys):
            raise problem
        pairs.append((source, tuple(keys)))
    return tuple(sorted(pairs))


_SOURCES_EXAMPLE = (
    '{"crm": {"tenants": ["acme"], "forms": ["travel-claim"]}, '
    '"intranet": {"tenants": "*", "forms": "*"}}'
)


def parse_webhook_sources(text: str) -> tuple[tuple[str, SourceLimits], ...]:
    """``FORMWORK_WEBHOOK_SOURCES``: each source with the tenants and forms it may start
    sessions for, sorted by source. Both keys are required: ``"*"`` (any) has to be written
    out, a list names each one allowed."""

    variable = "FORMWORK_WEBHOOK_SOURCES"
    try:
        loaded = json.loads(text)
    except ValueError:
        loaded = None
    if not isinstance(loaded, dict):
        _fail(variable, text, f"a JSON object such as {_SOURCES_EXAMPLE}")

    def names(source: str, key: str, value: object, pattern: str) -> frozenset[str] | None:
        if value == ANY:
            return None
        if (
            isinstance(value, list)
            and value
            and all(isinstance(v, str) and re.fullmatch(pattern, v) for v in value)
        ):
            return frozenset(value)
        what = "tenant names" if key == "tenants" else "form ids"
        raise ConfigError(
            f'{variable}: {key!r} of source {source!r} is not valid: expected "*" (any) or '
            f"a non-empty list of {what}"
        )

    sources: list[tuple[str, SourceLimits]] = []
    for source, limits in loaded.items():
        if not isinstance(limits, dict) or set(limits) != {"tenants", "forms"}:
            raise ConfigError(
                f'{variable}: source {source!r} needs exactly the keys "tenants" and '
                f'"forms", each "*" or a list, such as {_SOURCES_EXAMPLE}'
            )
        sources.append(
            (
                source,
                SourceLimits(
                    tenants=names(source, "tenants", limits["tenants"], TENANT_PATTERN),
                    forms=names(source, "forms", limits["forms"], FORM_ID_PATTERN),
                ),
            )
        )
    return tuple(sorted(sources, key=lambda pair: pair[0]))
