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
| ``FORMWORK_HOOK_MAX_ATTEMPTS`` | attempts of an executor before its failure is final | ``5`` |
| ``FORMWORK_HOOK_TIMEOUT_SECONDS`` | one attempt's time limit (start to close) | ``300`` |
| ``FORMWORK_HOOK_HEARTBEAT_SECONDS`` | a silent worker is presumed dead after this | ``30`` |
| ``FORMWORK_REDISPATCH_AFTER_SECONDS`` | re-dispatch a hook still pending this long | ``600`` |
| ``TEMPORAL_ADDRESS`` | Temporal frontend ``host:port`` | ``localhost:7233`` |
| ``TEMPORAL_NAMESPACE`` | Temporal namespace | ``default`` |
| ``TEMPORAL_TASK_QUEUE`` | task queue of the hook workers | ``formwork-hooks`` |
| ``TEMPORAL_API_KEY`` | Temporal Cloud API key (turns TLS on) | unset |
| ``TEMPORAL_TLS`` | ``true``: TLS with system roots, no client certificate | ``false`` |
| ``TEMPORAL_TLS_CLIENT_CERT_PATH`` | mTLS client certificate (PEM) | unset |
| ``TEMPORAL_TLS_CLIENT_KEY_PATH`` | mTLS client key (PEM) | unset |
| ``TEMPORAL_TLS_SERVER_CA_CERT_PATH`` | CA bundle of the server (PEM) | system roots |
| ``TEMPORAL_TLS_SERVER_NAME`` | server name to verify, when it differs from the address | unset |
| ``FORMWORK_WEBHOOK_SECRETS`` | JSON ``{source: secret(s)}``: the only webhook secrets | unset |
| ``FORMWORK_WEBHOOK_SECRET_PREFIX`` | else Secrets Manager ``<prefix><source>`` | see below |
| ``FORMWORK_WEBHOOK_TOLERANCE`` | seconds a signed webhook timestamp may be off | ``300`` |
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NoReturn

DEFAULT_REGION = "us-east-1"
DEFAULT_FORMS = "forms.examples:EXAMPLES"
DEFAULT_ROLES_CLAIM = "roles"
DEFAULT_MAX_BODY_BYTES = 65536
MAX_BODY_BYTES_LIMIT = 6 * 1024 * 1024
"""Lambda's synchronous payload limit: a larger setting could never be reached."""

_TABLE = re.compile(r"[A-Za-z0-9_.-]{3,255}")
_REGION = re.compile(r"[a-z]{2}(-[a-z]+)+-\d{1,2}")
_CLAIM = re.compile(r"[A-Za-z0-9_:.-]{1,64}")
_FORMS = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*")
_ADDRESS = re.compile(r"[A-Za-z0-9_.\[\]:-]+:\d{1,5}")
_NAME = re.compile(r"[A-Za-z0-9_.@-]{1,200}")

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

    TLS is on when ``tls`` is true, when an API key is set (Temporal Cloud), or when any of
    the certificate paths is set (mTLS); the paths are read when connecting, not here.
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

    @property
    def uses_tls(self) -> bool:
        return bool(self.tls or self.api_key or self.tls_cert or self.tls_ca)


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
"""Source ``crm`` reads the Secrets Manager secret ``formwork/webhooks/crm`` by default."""
DEFAULT_WEBHOOK_TOLERANCE = 300
_SECRET_PREFIX = re.compile(r"[A-Za-z0-9/_+=.@-]{1,256}")


@dataclass(frozen=True, slots=True)
class WebhookSettings:
    """Inbound webhooks (``POST /webhooks/{source}``): whose secrets, and how much clock skew.

    ``secrets`` set (``FORMWORK_WEBHOOK_SECRETS``): those sources and secrets, and no others
    (local and dev). Unset: source ``s`` has the secret(s) in Secrets Manager under
    ``secret_prefix + s``. Secrets are never shown in ``repr`` or in error messages.
    """

    secrets: tuple[tuple[str, tuple[str, ...]], ...] | None = field(default=None, repr=False)
    secret_prefix: str = DEFAULT_WEBHOOK_SECRET_PREFIX
    tolerance: int = DEFAULT_WEBHOOK_TOLERANCE

    def __post_init__(self) -> None:
        from forms.webhooks import MIN_SECRET_LENGTH, check_secret, check_source

        for source, keys in self.secrets or ():
            if not check_source(source):
                _fail(
                    "FORMWORK_WEBHOOK_SECRETS",
                    source,
                    "source names of 1-32 lower-case letters, digits, _ and -",
                )
            if not keys or not all(check_secret(key) for key in keys):
                raise ConfigError(
                    f"FORMWORK_WEBHOOK_SECRETS: the secret of source {source!r} is not valid: "
                    f"expected a string of at least {MIN_SECRET_LENGTH} characters, or a "
                    "non-empty list of them"
                )
        if not _SECRET_PREFIX.fullmatch(self.secret_prefix):
            _fail(
                "FORMWORK_WEBHOOK_SECRET_PREFIX",
                self.secret_prefix,
                "a Secrets Manager name prefix (letters, digits, / _ + = . @ -)",
            )
        tolerance = self.tolerance
        if (
            isinstance(tolerance, bool)
            or not isinstance(tolerance, int)
            or not 1 <= tolerance <= 3600
        ):
            _fail("FORMWORK_WEBHOOK_TOLERANCE", str(tolerance), "a whole number of seconds, 1-3600")

    def static_keys(self, source: str) -> tuple[str, ...] | None:
        """The configured secrets of ``source`` (empty: not a known source), or None when
        secrets come from Secrets Manager."""
        if self.secrets is None:
            return None
        return dict(self.secrets).get(source, ())

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> WebhookSettings:
        env = os.environ if environ is None else environ
        raw_secrets = env.get("FORMWORK_WEBHOOK_SECRETS", "").strip()
        raw_tolerance = env.get("FORMWORK_WEBHOOK_TOLERANCE", "").strip()
        tolerance = DEFAULT_WEBHOOK_TOLERANCE
        if raw_tolerance:
            if not re.fullmatch(r"\d{1,9}", raw_tolerance):
                _fail("FORMWORK_WEBHOOK_TOLERANCE", raw_tolerance, "a whole number of seconds")
            tolerance = int(raw_tolerance)
        return cls(
            secrets=parse_webhook_secrets(raw_secrets) if raw_secrets else None,
            secret_prefix=env.get("FORMWORK_WEBHOOK_SECRET_PREFIX", "").strip()
            or DEFAULT_WEBHOOK_SECRET_PREFIX,
            tolerance=tolerance,
        )


def parse_webhook_secrets(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``{"source": "secret", "other": ["new", "old"]}`` as sorted pairs; the text itself is
    never echoed in an error (it holds secrets)."""
    import json

    problem = ConfigError(
        "FORMWORK_WEBHOOK_SECRETS is not valid: expected a JSON object mapping each source "
        'name to its secret or a list of secrets, such as {"crm": "..."}'
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
