"""The bodies of the operator routes' answers (``functions.operator_routes``), for the OpenAPI
document; built on first use, like the other routes' models that the tools do not need."""

from __future__ import annotations

from pydantic import BaseModel, Field

from functions.models import ON_FIRST_USE


class FailedHookRow(BaseModel):
    model_config = ON_FIRST_USE

    key: str = Field(description="The hook occurrence's idempotency key (retry takes it)")
    instance_id: str
    form_id: str
    hook_id: str
    occurrence: int
    attempts: int = Field(description="Attempts made before the failure was final")
    error: str | None = Field(description="The last error recorded")
    failed_at: str | None = Field(description="When the failure became final (ISO 8601)")
    principal: str = Field(description="Who filled the form (of the caller's tenant)")
    conversation_id: str
    form_status: str = Field(description="The form's status now (a closed form may list one)")


class FailedHooksBody(BaseModel):
    """The 200 of ``GET /operator/hooks/failed``."""

    model_config = ON_FIRST_USE

    hooks: list[FailedHookRow]
    next: str | None = Field(description="Pass as after for the next page; null: none follows")


class RetryBody(BaseModel):
    """The 200 of ``POST /operator/hooks/{key}/retry``."""

    model_config = ON_FIRST_USE

    ok: bool
    key: str
    instance_id: str


class FailedBatchRow(BaseModel):
    model_config = ON_FIRST_USE

    message_id: str
    sent_at: str | None = Field(description="When Lambda gave up on the batch")
    condition: str | None = Field(description="Why (RetryAttemptsExhausted, RecordAgeExceeded)")
    shard_id: str | None
    start_sequence: str | None
    end_sequence: str | None
    first_record_at: str | None
    last_record_at: str | None
    batch_size: int | None


class RelayFailuresBody(BaseModel):
    """The 200 of ``GET /operator/relay/failures``."""

    model_config = ON_FIRST_USE

    failures: list[FailedBatchRow]
    approximate_count: int = Field(description="About how many messages the queue holds")


class RedriveBody(BaseModel):
    """The 200 of ``POST /operator/relay/failures/redrive``."""

    model_config = ON_FIRST_USE

    sweep_started: bool = Field(description="false: the queue was empty, nothing was done")
    redriven: list[FailedBatchRow] = Field(description="The messages deleted")
    approximate_remaining: int
