"""The service's settings as one pydantic-settings model: a prototype, measured by
``bench/libraries.py`` against ``formwork.config.Settings.from_env``, never used to serve.

It holds the same variables with the same defaults and bounds, so building it costs what the
real model would: field patterns, bounds, a ``Literal``, aliases, one validator. What it does
not hold is the hand-written module's error messages (pydantic's ``ValidationError`` would
have to be translated into ``ConfigError`` on top).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

CLAIM = r"^[A-Za-z0-9_:.-]{1,64}$"
REFERENCE = r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$"
ROLE = r"^[A-Za-z0-9][A-Za-z0-9._:@/+=-]{0,127}$"
NAME = r"^[A-Za-z0-9_.@-]{1,200}$"
PREFIX = r"^[A-Za-z0-9/_+=.@-]{1,256}$"


def env(name: str) -> AliasChoices:
    return AliasChoices(name)


class TemporalModel(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="TEMPORAL_", frozen=True, extra="ignore", env_ignore_empty=True
    )

    address: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.\[\]:-]+:\d{1,5}$")] = "localhost:7233"
    namespace: Annotated[str, Field(pattern=NAME)] = "default"
    task_queue: Annotated[str, Field(pattern=NAME)] = "formwork-hooks"
    api_key: Annotated[str | None, Field(repr=False)] = None
    tls: bool = False
    tls_client_cert_path: str | None = None
    tls_client_key_path: str | None = None
    tls_server_ca_cert_path: str | None = None
    tls_server_name: str | None = None
    secret_id: Annotated[str | None, Field(validation_alias=env("FORMWORK_TEMPORAL_SECRET_ID"))] = (
        None
    )


class SettingsModel(BaseSettings):
    model_config = SettingsConfigDict(frozen=True, extra="ignore", env_ignore_empty=True)

    table_name: Annotated[str | None, Field(pattern=r"^[A-Za-z0-9_.-]{3,255}$")] = None
    dynamodb_endpoint_url: Annotated[str | None, Field(pattern=r"^https?://[^\s/]+(/\S*)?$")] = None
    region: Annotated[
        str,
        Field(
            pattern=r"^[a-z]{2}(-[a-z]+)+-\d{1,2}$",
            validation_alias=AliasChoices("AWS_REGION", "AWS_DEFAULT_REGION"),
        ),
    ] = "us-east-1"
    tenant_claim: Annotated[str | None, Field(pattern=CLAIM)] = "tenant"
    roles_claim: Annotated[str, Field(pattern=CLAIM)] = "roles"
    forms: Annotated[str, Field(pattern=REFERENCE, validation_alias=env("FORMWORK_FORMS"))] = (
        "forms.examples:EXAMPLES"
    )
    max_body_bytes: Annotated[
        int, Field(ge=1, le=6 * 1024 * 1024, validation_alias=env("FORMWORK_MAX_BODY_BYTES"))
    ] = 65536
    dispatch: Annotated[
        Literal["inprocess", "temporal"], Field(validation_alias=env("FORMWORK_DISPATCH"))
    ] = "inprocess"
    hook_wait_ms: Annotated[
        int, Field(ge=0, le=60_000, validation_alias=env("FORMWORK_HOOK_WAIT_MS"))
    ] = 1500
    hook_max_attempts: Annotated[
        int, Field(ge=1, le=100, validation_alias=env("FORMWORK_HOOK_MAX_ATTEMPTS"))
    ] = 5
    hook_timeout_seconds: Annotated[
        int, Field(ge=1, le=86_400, validation_alias=env("FORMWORK_HOOK_TIMEOUT_SECONDS"))
    ] = 300
    hook_heartbeat_seconds: Annotated[
        int, Field(ge=1, le=3_600, validation_alias=env("FORMWORK_HOOK_HEARTBEAT_SECONDS"))
    ] = 30
    redispatch_after_seconds: Annotated[
        int, Field(ge=1, le=604_800, validation_alias=env("FORMWORK_REDISPATCH_AFTER_SECONDS"))
    ] = 600
    replay_window_hours: Annotated[
        int, Field(ge=1, le=8_760, validation_alias=env("FORMWORK_REPLAY_WINDOW_HOURS"))
    ] = 24
    executors: Annotated[
        str | None, Field(pattern=REFERENCE, validation_alias=env("FORMWORK_EXECUTORS"))
    ] = None
    publisher_role: Annotated[
        str, Field(pattern=ROLE, validation_alias=env("FORMWORK_PUBLISHER_ROLE"))
    ] = "form_publisher"
    operator_role: Annotated[
        str, Field(pattern=ROLE, validation_alias=env("FORMWORK_OPERATOR_ROLE"))
    ] = "operator"
    platform_tenant: Annotated[
        str | None, Field(validation_alias=env("FORMWORK_PLATFORM_TENANT"))
    ] = None
    relay_failures_url: Annotated[
        str | None, Field(validation_alias=env("FORMWORK_RELAY_FAILURES_URL"))
    ] = None
    sweeper_function: Annotated[
        str | None, Field(validation_alias=env("FORMWORK_SWEEPER_FUNCTION"))
    ] = None
    builder_max_steps: Annotated[
        int, Field(ge=1, le=1_000, validation_alias=env("FORMWORK_BUILDER_MAX_STEPS"))
    ] = 50
    builder_max_fields: Annotated[
        int, Field(ge=1, le=10_000, validation_alias=env("FORMWORK_BUILDER_MAX_FIELDS"))
    ] = 300
    catalog_ttl_seconds: Annotated[
        float, Field(ge=0, le=3600, validation_alias=env("FORMWORK_CATALOG_TTL_SECONDS"))
    ] = 5.0
    memory: Annotated[bool, Field(validation_alias=env("FORMWORK_MEMORY"))] = True
    fact_keys: Annotated[
        str | None, Field(pattern=REFERENCE, validation_alias=env("FORMWORK_FACT_KEYS"))
    ] = None
    memory_deadline_ms: Annotated[
        int, Field(ge=1, le=5_000, validation_alias=env("FORMWORK_MEMORY_DEADLINE_MS"))
    ] = 200
    context_claims: Annotated[
        str | None, Field(validation_alias=env("FORMWORK_CONTEXT_CLAIMS"))
    ] = None
    webhook_sources: Annotated[
        str | None, Field(validation_alias=env("FORMWORK_WEBHOOK_SOURCES"))
    ] = None
    webhook_secrets: Annotated[
        str | None, Field(repr=False, validation_alias=env("FORMWORK_WEBHOOK_SECRETS"))
    ] = None
    webhook_secret_prefix: Annotated[
        str, Field(pattern=PREFIX, validation_alias=env("FORMWORK_WEBHOOK_SECRET_PREFIX"))
    ] = "formwork/webhooks/"
    notify_secrets: Annotated[
        str | None, Field(repr=False, validation_alias=env("FORMWORK_NOTIFY_SECRETS"))
    ] = None
    notify_prefix: Annotated[
        str, Field(pattern=PREFIX, validation_alias=env("FORMWORK_NOTIFY_SECRET_PREFIX"))
    ] = "formwork/notify/"
    webhook_tolerance: Annotated[
        int, Field(ge=1, le=3600, validation_alias=env("FORMWORK_WEBHOOK_TOLERANCE"))
    ] = 300

    @field_validator("tenant_claim", mode="before")
    @classmethod
    def _single_tenant(cls, value: object) -> object:
        return None if isinstance(value, str) and value.lower() == "none" else value


def load() -> tuple[SettingsModel, TemporalModel]:
    """What a cold start would build: both models, from the environment."""
    return SettingsModel(), TemporalModel()
