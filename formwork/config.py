"""Deployment settings, read once from the environment and checked when read.

Every variable the tool API reads is here, and the webhook route's in
``formwork.webhook_settings``; the handlers (``formwork.aws``) read no other setting from
``os.environ`` but ``LOG_HASH_KEY`` (``formwork.aws.log_hash``). A bad value fails with a
``ConfigError`` that names the variable, what it holds and what it should hold, so a
misconfigured deployment fails its first request loudly instead of misbehaving quietly.

Hand-written, not a pydantic-settings model: that would add about a fifth of ``import boto3``
to every cold start (docs/libraries.md has the measurement, ``bench/libraries.py`` makes it).
``tests/unit/test_settings_catalogue.py`` checks what this module and
``formwork.webhook_settings`` read against the docs' tables, the template and ``formwork dev``.

This module says what each setting is and may hold (``Settings``, checked by concern on
construction); ``formwork.variables`` reads each kind of value from a variable. The Temporal
settings are a type of the Temporal adapter's own (``formwork.temporal.settings.TemporalSettings``,
re-exported here): the adapter is given them as a value, and imports nothing of ``formwork``.

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
from dataclasses import field

from formwork.temporal.settings import ConfigError, TemporalSettings, invalid, settings_class
from formwork.variables import (
    DEFAULT_CONTEXT_CLAIMS,
    Variables,
    check_context_claims,
    check_whole,
    parse_context_claims,
)

__all__ = [
    "DEFAULT_BUILDER_MAX_FIELDS",
    "DEFAULT_BUILDER_MAX_STEPS",
    "DEFAULT_CATALOG_TTL_SECONDS",
    "DEFAULT_CONTEXT_CLAIMS",
    "DEFAULT_FORMS",
    "DEFAULT_HOOK_HEARTBEAT_SECONDS",
    "DEFAULT_HOOK_MAX_ATTEMPTS",
    "DEFAULT_HOOK_TIMEOUT_SECONDS",
    "DEFAULT_HOOK_WAIT_MS",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MEMORY_DEADLINE_MS",
    "DEFAULT_OPERATOR_ROLE",
    "DEFAULT_PUBLISHER_ROLE",
    "DEFAULT_REDISPATCH_AFTER_SECONDS",
    "DEFAULT_REGION",
    "DEFAULT_REPLAY_WINDOW_HOURS",
    "DEFAULT_ROLES_CLAIM",
    "DEFAULT_TENANT_CLAIM",
    "DISPATCH_MODES",
    "MAX_BODY_BYTES_LIMIT",
    "MAX_CATALOG_TTL_SECONDS",
    "MAX_MEMORY_DEADLINE_MS",
    "SINGLE_TENANT",
    "ConfigError",
    "Settings",
    "TemporalSettings",
    "invalid",
    "parse_context_claims",
]
"""What other modules take from here: ``ConfigError``, ``invalid`` and ``TemporalSettings``
among them (defined in ``formwork.temporal.settings``, the Temporal adapter's own), and the context
claims' default and parser (``formwork.variables``)."""

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

DISPATCH_MODES = ("inprocess", "temporal")
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
_ROLE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/+=-]{0,127}")
"""A role as ``formwork.aws.approval_routes.roles_from_claims`` reads one from the claims."""
_TENANT = r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}"
"""A tenant as ``formwork.aws.auth.principal_from_event`` accepts one. A pattern ``re`` compiles
when first used, not at import: only a deployment with a platform tenant reads it."""


@settings_class  # a frozen dataclass whose methods are in the bytecode (see there)
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
        # in this order: with several bad values, the first one named is the same every time
        self._check_storage()
        self._check_claims()
        self._check_references()
        self._check_memory()
        self._check_roles()
        self._check_limits()

    def _check_storage(self) -> None:
        """Where the forms are stored: the table, a local endpoint, the region."""
        if self.table_name is not None and not _TABLE.fullmatch(self.table_name):
            invalid("TABLE_NAME", self.table_name, "3-255 characters of letters, digits, _ . -")
        url = self.dynamodb_endpoint_url
        if url is not None and not re.fullmatch(r"https?://[^\s/]+(/\S*)?", url):
            invalid("DYNAMODB_ENDPOINT_URL", url, "an http:// or https:// URL")
        if not _REGION.fullmatch(self.region):
            invalid("AWS_REGION", self.region, "a region name such as us-east-1")

    def _check_claims(self) -> None:
        """Which verified claims name the caller's tenant and roles."""
        if self.tenant_claim is not None and not _CLAIM.fullmatch(self.tenant_claim):
            invalid("TENANT_CLAIM", self.tenant_claim, "a claim name (letters, digits, _ : . -)")
        if not _CLAIM.fullmatch(self.roles_claim):
            invalid("ROLES_CLAIM", self.roles_claim, "a claim name (letters, digits, _ : . -)")

    def _check_references(self) -> None:
        """The ``module:attribute`` references: the forms, the executors, the fact keys."""
        for variable, reference in (
            ("FORMWORK_FORMS", self.forms),
            ("FORMWORK_EXECUTORS", self.executors),
            ("FORMWORK_FACT_KEYS", self.fact_keys),
        ):
            if reference is not None and not _FORMS.fullmatch(reference):
                invalid(variable, reference, '"package.module:attribute"')

    def _check_memory(self) -> None:
        """Memory's switch and the claims that give context defaults."""
        if not isinstance(self.memory, bool):
            invalid("FORMWORK_MEMORY", str(self.memory), "on or off")
        check_context_claims(self.context_claims)

    def _check_roles(self) -> None:
        """The roles of the operator routes and of publishing, and the platform's tenant."""
        if not isinstance(self.operator_role, str) or not _ROLE.fullmatch(self.operator_role):
            invalid("FORMWORK_OPERATOR_ROLE", str(self.operator_role), _ROLE_EXPECTED)
        if self.platform_tenant is not None and not re.fullmatch(_TENANT, self.platform_tenant):
            invalid(
                "FORMWORK_PLATFORM_TENANT",
                self.platform_tenant,
                "a tenant (1-64 of letters, digits and . _ : @ -)",
            )
        if not isinstance(self.publisher_role, str) or not _ROLE.fullmatch(self.publisher_role):
            invalid("FORMWORK_PUBLISHER_ROLE", str(self.publisher_role), _ROLE_EXPECTED)

    def _check_limits(self) -> None:
        """The numbers (sizes, times, counts) and how hooks are dispatched."""
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
        check_whole(
            "FORMWORK_MAX_BODY_BYTES",
            self.max_body_bytes,
            1,
            MAX_BODY_BYTES_LIMIT,
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
            check_whole(variable, number, low, high, f"a whole number from {low} to {high}")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``environ`` (default ``os.environ``); empty values count as unset."""
        read = Variables(os.environ if environ is None else environ)
        # read in this order (then the whole numbers, in the order of the fields below)
        max_body = read.whole(
            "FORMWORK_MAX_BODY_BYTES", DEFAULT_MAX_BODY_BYTES, "a whole number of bytes"
        )
        ttl = read.seconds("FORMWORK_CATALOG_TTL_SECONDS", DEFAULT_CATALOG_TTL_SECONDS)
        memory = read.switch("FORMWORK_MEMORY", default=True)
        context_claims = read.context_claims()
        temporal = read.temporal()
        return cls(
            table_name=read.text("TABLE_NAME"),
            dynamodb_endpoint_url=read.text("DYNAMODB_ENDPOINT_URL"),
            region=read.text("AWS_REGION") or read.text("AWS_DEFAULT_REGION") or DEFAULT_REGION,
            tenant_claim=_tenant_claim(read.text("TENANT_CLAIM")),
            roles_claim=read.text("ROLES_CLAIM") or DEFAULT_ROLES_CLAIM,
            forms=read.text("FORMWORK_FORMS") or DEFAULT_FORMS,
            max_body_bytes=max_body,
            dispatch=(read.text("FORMWORK_DISPATCH") or "inprocess").lower(),
            hook_wait_ms=read.whole("FORMWORK_HOOK_WAIT_MS", DEFAULT_HOOK_WAIT_MS),
            hook_max_attempts=read.whole("FORMWORK_HOOK_MAX_ATTEMPTS", DEFAULT_HOOK_MAX_ATTEMPTS),
            hook_timeout_seconds=read.whole(
                "FORMWORK_HOOK_TIMEOUT_SECONDS", DEFAULT_HOOK_TIMEOUT_SECONDS
            ),
            hook_heartbeat_seconds=read.whole(
                "FORMWORK_HOOK_HEARTBEAT_SECONDS", DEFAULT_HOOK_HEARTBEAT_SECONDS
            ),
            redispatch_after_seconds=read.whole(
                "FORMWORK_REDISPATCH_AFTER_SECONDS", DEFAULT_REDISPATCH_AFTER_SECONDS
            ),
            replay_window_hours=read.whole(
                "FORMWORK_REPLAY_WINDOW_HOURS", DEFAULT_REPLAY_WINDOW_HOURS
            ),
            executors=read.text("FORMWORK_EXECUTORS"),
            publisher_role=read.text("FORMWORK_PUBLISHER_ROLE") or DEFAULT_PUBLISHER_ROLE,
            operator_role=read.text("FORMWORK_OPERATOR_ROLE") or DEFAULT_OPERATOR_ROLE,
            platform_tenant=read.text("FORMWORK_PLATFORM_TENANT"),
            relay_failures_url=read.text("FORMWORK_RELAY_FAILURES_URL"),
            sweeper_function=read.text("FORMWORK_SWEEPER_FUNCTION"),
            builder_max_steps=read.whole("FORMWORK_BUILDER_MAX_STEPS", DEFAULT_BUILDER_MAX_STEPS),
            builder_max_fields=read.whole(
                "FORMWORK_BUILDER_MAX_FIELDS", DEFAULT_BUILDER_MAX_FIELDS
            ),
            catalog_ttl_seconds=ttl,
            memory=memory,
            fact_keys=read.text("FORMWORK_FACT_KEYS"),
            memory_deadline_ms=read.whole(
                "FORMWORK_MEMORY_DEADLINE_MS", DEFAULT_MEMORY_DEADLINE_MS
            ),
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


_ROLE_EXPECTED = "a role name (1-128 of letters, digits and . _ : @ / + = -)"


def _tenant_claim(raw: str | None) -> str | None:
    """``TENANT_CLAIM``: unset, ``DEFAULT_TENANT_CLAIM``; ``none``, a single tenant (None)."""
    if raw is None:
        return DEFAULT_TENANT_CLAIM
    return None if raw.lower() == SINGLE_TENANT else raw
