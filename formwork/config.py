"""Deployment settings, read once from the environment and checked when read.

Every variable the tool API reads is here, and the webhook route's in
``formwork.webhook_settings``; nothing else in ``functions/`` touches ``os.environ``. A bad
value fails with a ``ConfigError`` that names the variable, what it holds and what it should
hold, so a misconfigured deployment fails its first request loudly instead of misbehaving
quietly.

Hand-written, not a pydantic-settings model: that would add about a fifth of ``import boto3``
to every cold start (docs/libraries.md has the measurement, ``bench/libraries.py`` makes it).
``tests/unit/test_settings_catalogue.py`` checks what this module and
``formwork.webhook_settings`` read against the docs' tables, the template and ``formwork dev``.

| variable | meaning | default |
| --- | --- | --- |
| ``TABLE_NAME`` | DynamoDB table of form instances | required to build the DynamoDB store |
| ``DYNAMODB_ENDPOINT_URL`` | local endpoint (moto); unset in AWS | unset |
| ``AWS_REGION`` / ``AWS_DEFAULT_REGION`` | region of the table | ``us-east-1`` |
| ``TENANT_CLAIM`` | JWT claim naming the tenant (``none``: one tenant), below | ``tenant`` |
| ``ROLES_CLAIM`` | JWT claim listing the caller's roles (approvals) | ``roles`` |
| ``FORMWORK_FORMS`` | ``module:attr``, a sequence of ``FormDef`` | ``forms.examples:EXAMPLES`` |
| ``FORMWORK_EXECUTORS`` | ``module:attr``, a mapping name -> executor (documents) | none |
| ``FORMWORK_PUBLISHER_ROLE`` | the role that may publish a draft | ``form_publisher`` |
| ``FORMWORK_OPERATOR_ROLE`` | the role of the operator routes (``/operator/...``) | ``operator`` |
| ``FORMWORK_PLATFORM_TENANT`` | the tenant whose operators see the relay's failure queue | none |
| ``FORMWORK_RELAY_FAILURES_URL`` | the relay's on-failure SQS queue (operator routes) | unset |
| ``FORMWORK_SWEEPER_FUNCTION`` | the sweeper function a redrive invokes | unset |
| ``FORMWORK_BUILDER_MAX_STEPS`` | the most steps a draft may have (the plan's limit) | ``50`` |
| ``FORMWORK_BUILDER_MAX_FIELDS`` | the most fields and blocks a draft may have | ``300`` |
| ``FORMWORK_CATALOG_TTL_SECONDS`` | how long a tenant's published forms are cached | ``5`` |
| ``FORMWORK_MEMORY`` | memory in this deployment, ``on`` or ``off`` (and per principal) | ``on`` |
| ``FORMWORK_FACT_KEYS`` | ``module:attr``, the extra fact keys (a sequence of ``FactKey``) | none |
| ``FORMWORK_MEMORY_DEADLINE_MS`` | recall's deadline (past it: offered next call) | ``200`` |
| ``FORMWORK_CONTEXT_CLAIMS`` | context defaults (``fact.key=claim,...``; ``off``: none) | below |
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

``TENANT_CLAIM`` names the verified claim that holds the caller's tenant: the principal is
``tenant/sub``, and a token without that claim (or with an empty or malformed one) is refused
(401) on every route. Unset, it is ``tenant``: a deployment is multi-tenant unless it says
otherwise. ``none`` (any case) is a single-tenant deployment: the principal is the ``sub``
alone, and every user of it shares one tenant (its drafts and published forms).

``FORMWORK_CONTEXT_CLAIMS`` defaults to ``person.locale=locale,person.timezone=zoneinfo,
person.currency=currency`` (``locale`` and ``zoneinfo`` are OpenID Connect standard claims).
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
DEFAULT_TENANT_CLAIM = "tenant"
"""``TENANT_CLAIM`` when unset: a deployment that names no tenant claim still refuses tokens
without a tenant, rather than putting all their holders in one tenant."""
SINGLE_TENANT = "none"
"""``TENANT_CLAIM``'s value (any case) for a single-tenant deployment: the principal is the
``sub``, and every user shares one tenant."""
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
DEFAULT_PUBLISHER_ROLE = "form_publisher"
DEFAULT_OPERATOR_ROLE = "operator"
DEFAULT_BUILDER_MAX_STEPS = 50
DEFAULT_BUILDER_MAX_FIELDS = 300
"""``forms.documents.Limits()``'s (a test pins them together: this module imports no engine)."""
DEFAULT_CATALOG_TTL_SECONDS = 5.0
MAX_CATALOG_TTL_SECONDS = 3600.0
DEFAULT_MEMORY_DEADLINE_MS = 200
MAX_MEMORY_DEADLINE_MS = 5_000
"""Recall's deadline is well under a tool call's budget: past it the form opens without memory."""
DEFAULT_CONTEXT_CLAIMS: tuple[tuple[str, str], ...] = (
    ("person.locale", "locale"),
    ("person.timezone", "zoneinfo"),
    ("person.currency", "currency"),
)
"""Which verified claim gives each context default (fact key, claim name): OpenID Connect's
standard ``locale`` and ``zoneinfo``, and a ``currency`` claim a deployment's identity
provider may add."""
OFF_VALUES = frozenset({"", "off", "none"})
"""How ``FORMWORK_CONTEXT_CLAIMS`` turns context defaults off (any case)."""
_FACT_KEY = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+")
"""``forms.memory.vocabulary.KEY_PATTERN`` (this module imports no engine)."""
_CONTEXT_CLAIM = re.compile(r"[A-Za-z0-9_:./#-]{1,128}")
"""A claim name, namespaced ones included (``https://example.com/currency``, as Auth0 asks
custom claims to be)."""
SWITCH_VALUES = {"on": True, "off": False, "true": True, "false": False, "1": True, "0": False}
"""How ``FORMWORK_MEMORY`` may be spelled (any case)."""
_ROLE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/+=-]{0,127}")
"""A role as ``functions.approval_routes.roles_from_claims`` reads one from the claims."""
_TENANT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}")
"""A tenant as ``functions.auth.principal_from_event`` accepts one."""


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
            invalid("TEMPORAL_ADDRESS", self.address, "host:port, for example localhost:7233")
        if not _NAME.fullmatch(self.namespace):
            invalid("TEMPORAL_NAMESPACE", self.namespace, "a namespace name")
        if not _NAME.fullmatch(self.task_queue):
            invalid("TEMPORAL_TASK_QUEUE", self.task_queue, "a task queue name")
        if (self.tls_cert is None) != (self.tls_key is None):
            invalid(
                "TEMPORAL_TLS_CLIENT_CERT_PATH"
                if self.tls_cert is None
                else "TEMPORAL_TLS_CLIENT_KEY_PATH",
                "",
                "both TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH, or neither",
            )
        if self.secret_id is not None:
            if not _SECRET_ID.fullmatch(self.secret_id):
                invalid(
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
    tenant_claim: str | None = DEFAULT_TENANT_CLAIM
    """The claim naming the tenant (``TENANT_CLAIM``): tokens without it are refused. None (set
    ``none``) is a single-tenant deployment, whose principal is the ``sub``; nothing else is."""
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
    executors: str | None = None
    """``module:attribute`` of the executors form documents may name (none by default)."""
    publisher_role: str = DEFAULT_PUBLISHER_ROLE
    """The role a principal needs (in the roles claim) to publish a draft."""
    operator_role: str = DEFAULT_OPERATOR_ROLE
    """The role a principal needs (in the roles claim) for the operator routes, which act
    within the principal's own tenant."""
    platform_tenant: str | None = None
    """The tenant whose operators may read and redrive the relay's failure queue, which is the
    deployment's, not a tenant's (none: nobody may; with ``TENANT_CLAIM=none``, every
    operator)."""
    relay_failures_url: str | None = None
    """The relay's on-failure SQS queue URL (template.yaml's ``RelayFailures``)."""
    sweeper_function: str | None = None
    """The sweeper's function name, invoked (asynchronously) by a redrive."""
    builder_max_steps: int = DEFAULT_BUILDER_MAX_STEPS
    builder_max_fields: int = DEFAULT_BUILDER_MAX_FIELDS
    """The plan's limits of a draft, the same for every tenant of the deployment."""
    catalog_ttl_seconds: float = DEFAULT_CATALOG_TTL_SECONDS
    """How long a tenant's catalog of published forms is kept before it is read again."""
    memory: bool = True
    """Memory for the whole deployment (``FORMWORK_MEMORY``): off, no fact is recorded or
    recalled for anyone, whatever each principal's own switch says."""
    fact_keys: str | None = None
    """``module:attribute`` of the deployment's extra fact keys (none by default)."""
    memory_deadline_ms: int = DEFAULT_MEMORY_DEADLINE_MS
    """How long recall may read the fact store before the form opens without memory."""
    context_claims: tuple[tuple[str, str], ...] = DEFAULT_CONTEXT_CLAIMS
    """``(fact key, claim name)``: the verified claims that give a form's empty fields their
    context defaults (``FORMWORK_CONTEXT_CLAIMS``); empty, none. Only ever read from the
    token API Gateway verified."""
    temporal: TemporalSettings = field(default_factory=TemporalSettings)

    def __post_init__(self) -> None:
        if self.table_name is not None and not _TABLE.fullmatch(self.table_name):
            invalid("TABLE_NAME", self.table_name, "3-255 characters of letters, digits, _ . -")
        url = self.dynamodb_endpoint_url
        if url is not None and not re.fullmatch(r"https?://[^\s/]+(/\S*)?", url):
            invalid("DYNAMODB_ENDPOINT_URL", url, "an http:// or https:// URL")
        if not _REGION.fullmatch(self.region):
            invalid("AWS_REGION", self.region, "a region name such as us-east-1")
        if self.tenant_claim is not None and not _CLAIM.fullmatch(self.tenant_claim):
            invalid("TENANT_CLAIM", self.tenant_claim, "a claim name (letters, digits, _ : . -)")
        if not _CLAIM.fullmatch(self.roles_claim):
            invalid("ROLES_CLAIM", self.roles_claim, "a claim name (letters, digits, _ : . -)")
        if not _FORMS.fullmatch(self.forms):
            invalid("FORMWORK_FORMS", self.forms, '"package.module:attribute"')
        if self.executors is not None and not _FORMS.fullmatch(self.executors):
            invalid("FORMWORK_EXECUTORS", self.executors, '"package.module:attribute"')
        if self.fact_keys is not None and not _FORMS.fullmatch(self.fact_keys):
            invalid("FORMWORK_FACT_KEYS", self.fact_keys, '"package.module:attribute"')
        if not isinstance(self.memory, bool):
            invalid("FORMWORK_MEMORY", str(self.memory), "on or off")
        _check_context_claims(self.context_claims)
        if not isinstance(self.operator_role, str) or not _ROLE.fullmatch(self.operator_role):
            invalid(
                "FORMWORK_OPERATOR_ROLE",
                str(self.operator_role),
                "a role name (1-128 of letters, digits and . _ : @ / + = -)",
            )
        if self.platform_tenant is not None and not _TENANT.fullmatch(self.platform_tenant):
            invalid(
                "FORMWORK_PLATFORM_TENANT",
                self.platform_tenant,
                "a tenant (1-64 of letters, digits and . _ : @ -)",
            )
        if not isinstance(self.publisher_role, str) or not _ROLE.fullmatch(self.publisher_role):
            invalid(
                "FORMWORK_PUBLISHER_ROLE",
                str(self.publisher_role),
                "a role name (1-128 of letters, digits and . _ : @ / + = -)",
            )
        ttl = self.catalog_ttl_seconds
        if (
            isinstance(ttl, bool)
            or not isinstance(ttl, int | float)
            or not 0 <= ttl <= MAX_CATALOG_TTL_SECONDS
        ):
            invalid(
                "FORMWORK_CATALOG_TTL_SECONDS",
                str(ttl),
                f"a number of seconds from 0 to {MAX_CATALOG_TTL_SECONDS:g}",
            )
        if (
            isinstance(self.max_body_bytes, bool)
            or not isinstance(self.max_body_bytes, int)
            or not 1 <= self.max_body_bytes <= MAX_BODY_BYTES_LIMIT
        ):
            invalid(
                "FORMWORK_MAX_BODY_BYTES",
                str(self.max_body_bytes),
                f"a whole number of bytes from 1 to {MAX_BODY_BYTES_LIMIT}",
            )
        if self.dispatch not in DISPATCH_MODES:
            invalid("FORMWORK_DISPATCH", self.dispatch, " or ".join(DISPATCH_MODES))
        for variable, number, low, high in (
            ("FORMWORK_HOOK_WAIT_MS", self.hook_wait_ms, 0, 60_000),
            ("FORMWORK_HOOK_MAX_ATTEMPTS", self.hook_max_attempts, 1, 100),
            ("FORMWORK_HOOK_TIMEOUT_SECONDS", self.hook_timeout_seconds, 1, 86_400),
            ("FORMWORK_HOOK_HEARTBEAT_SECONDS", self.hook_heartbeat_seconds, 1, 3_600),
            ("FORMWORK_REDISPATCH_AFTER_SECONDS", self.redispatch_after_seconds, 1, 604_800),
            ("FORMWORK_REPLAY_WINDOW_HOURS", self.replay_window_hours, 1, 8_760),
            ("FORMWORK_BUILDER_MAX_STEPS", self.builder_max_steps, 1, 1_000),
            ("FORMWORK_BUILDER_MAX_FIELDS", self.builder_max_fields, 1, 10_000),
            ("FORMWORK_MEMORY_DEADLINE_MS", self.memory_deadline_ms, 1, MAX_MEMORY_DEADLINE_MS),
        ):
            if isinstance(number, bool) or not isinstance(number, int) or not low <= number <= high:
                invalid(variable, str(number), f"a whole number from {low} to {high}")

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
                invalid("FORMWORK_MAX_BODY_BYTES", raw_max, "a whole number of bytes")
            max_body = int(raw_max)

        def number(name: str, default: int) -> int:
            raw = get(name)
            if raw is None:
                return default
            if not re.fullmatch(r"\d{1,9}", raw):
                invalid(name, raw, "a whole number")
            return int(raw)

        raw_ttl = get("FORMWORK_CATALOG_TTL_SECONDS")
        ttl = DEFAULT_CATALOG_TTL_SECONDS
        if raw_ttl is not None:
            if not re.fullmatch(r"\d{1,5}(\.\d{1,3})?", raw_ttl):
                invalid("FORMWORK_CATALOG_TTL_SECONDS", raw_ttl, "a number of seconds, such as 5")
            ttl = float(raw_ttl)

        raw_memory = get("FORMWORK_MEMORY")
        memory = True
        if raw_memory is not None:
            if raw_memory.lower() not in SWITCH_VALUES:
                invalid("FORMWORK_MEMORY", raw_memory, "on or off")
            memory = SWITCH_VALUES[raw_memory.lower()]

        raw_context = env.get("FORMWORK_CONTEXT_CLAIMS")  # set but empty: off, not unset
        context_claims = (
            DEFAULT_CONTEXT_CLAIMS if raw_context is None else parse_context_claims(raw_context)
        )

        tls = (get("TEMPORAL_TLS") or "false").lower()
        if tls not in ("true", "false", "1", "0"):
            invalid("TEMPORAL_TLS", tls, "true or false")
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
            tenant_claim=_tenant_claim(get("TENANT_CLAIM")),
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
            executors=get("FORMWORK_EXECUTORS"),
            publisher_role=get("FORMWORK_PUBLISHER_ROLE") or DEFAULT_PUBLISHER_ROLE,
            operator_role=get("FORMWORK_OPERATOR_ROLE") or DEFAULT_OPERATOR_ROLE,
            platform_tenant=get("FORMWORK_PLATFORM_TENANT"),
            relay_failures_url=get("FORMWORK_RELAY_FAILURES_URL"),
            sweeper_function=get("FORMWORK_SWEEPER_FUNCTION"),
            builder_max_steps=number("FORMWORK_BUILDER_MAX_STEPS", DEFAULT_BUILDER_MAX_STEPS),
            builder_max_fields=number("FORMWORK_BUILDER_MAX_FIELDS", DEFAULT_BUILDER_MAX_FIELDS),
            catalog_ttl_seconds=ttl,
            memory=memory,
            fact_keys=get("FORMWORK_FACT_KEYS"),
            memory_deadline_ms=number("FORMWORK_MEMORY_DEADLINE_MS", DEFAULT_MEMORY_DEADLINE_MS),
            context_claims=context_claims,
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


_CONTEXT_EXPECTED = (
    "fact.key=claim pairs, comma-separated, each fact key once (such as "
    "person.locale=locale,person.timezone=zoneinfo), or off"
)


def _tenant_claim(raw: str | None) -> str | None:
    """``TENANT_CLAIM``: unset, ``DEFAULT_TENANT_CLAIM``; ``none``, a single tenant (None)."""
    if raw is None:
        return DEFAULT_TENANT_CLAIM
    return None if raw.lower() == SINGLE_TENANT else raw


def parse_context_claims(raw: str) -> tuple[tuple[str, str], ...]:
    """``FORMWORK_CONTEXT_CLAIMS``'s value as ``(fact key, claim name)`` pairs; empty or
    ``off``: none. A malformed value is a ``ConfigError``."""
    text = raw.strip()
    if text.lower() in OFF_VALUES:
        return ()
    pairs = []
    for item in text.split(","):
        key, sep, claim = (part.strip() for part in item.partition("="))
        if not sep:
            invalid("FORMWORK_CONTEXT_CLAIMS", raw, _CONTEXT_EXPECTED)
        pairs.append((key, claim))
    found = tuple(pairs)
    _check_context_claims(found, raw)
    return found


def _check_context_claims(pairs: object, raw: str | None = None) -> None:
    """Each pair a fact key and a claim name, each fact key once."""
    shown = raw if raw is not None else repr(pairs)
    if not isinstance(pairs, tuple):
        invalid("FORMWORK_CONTEXT_CLAIMS", shown, _CONTEXT_EXPECTED)
    keys: set[str] = set()
    for pair in pairs:
        if (
            not isinstance(pair, tuple)
            or len(pair) != 2
            or not all(isinstance(part, str) for part in pair)
            or not _FACT_KEY.fullmatch(pair[0])
            or len(pair[0]) > 80
            or not _CONTEXT_CLAIM.fullmatch(pair[1])
            or pair[0] in keys
        ):
            invalid("FORMWORK_CONTEXT_CLAIMS", shown, _CONTEXT_EXPECTED)
        keys.add(pair[0])


def invalid(variable: str, value: str, expected: str) -> NoReturn:
    """Raise the ``ConfigError`` of a bad ``value`` of ``variable`` (shortened if long)."""
    shown = value if len(value) <= 80 else value[:77] + "..."
    raise ConfigError(f"{variable}={shown!r} is not valid: expected {expected}")
