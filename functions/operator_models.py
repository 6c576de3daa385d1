"""The bodies of the operator routes' answers (``formwork.aws.operator_routes``), for the OpenAPI
document; built on first use, like the other routes' models that the tools do not need."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt

from formwork.aws.models import ON_FIRST_USE


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


class MigrateRequest(BaseModel):
    """``POST /operator/forms/{form_id}/migrate``: a dry run unless ``dry_run`` is false."""

    model_config = ConfigDict(**ON_FIRST_USE, extra="forbid", frozen=True)

    dry_run: StrictBool = Field(
        default=True,
        description="true (the default): say what would happen to each open instance, write "
        "nothing; false: start the run (a Temporal workflow)",
    )
    limit: Annotated[StrictInt, Field(ge=1, le=50)] = Field(
        default=20, description="Dry run: instances per page (1-50)"
    )
    after: Annotated[str, Field(max_length=200)] | None = Field(
        default=None, description="Dry run: next of the previous page"
    )


class InstancePlanRow(BaseModel):
    model_config = ON_FIRST_USE

    instance_id: str
    principal: str = Field(description="Who filled it (of the caller's tenant)")
    conversation_id: str
    from_version: int
    to_version: int
    outcome: str = Field(description="moves, fails (a conversion failed) or no_path")
    moved: list[str] = Field(description="Fields whose answer a rename or conversion carries")
    invalid: list[str] = Field(
        description="Answered fields the current version refuses (kept, asked again)"
    )
    reason: str | None = Field(description="Why it cannot move (fails, no_path)")


class MigrationPlanBody(BaseModel):
    """The 200 of a dry run."""

    model_config = ON_FIRST_USE

    dry_run: bool
    form_id: str
    to_version: int
    instances: list[InstancePlanRow]
    next: str | None = Field(description="Pass as after for the next page; null: none follows")


class MigrationStartedBody(BaseModel):
    """The 202 of a run."""

    model_config = ON_FIRST_USE

    dry_run: bool
    form_id: str
    to_version: int
    workflow_id: str = Field(description="The Temporal workflow moving the instances")
    started: bool = Field(description="false: a run for this form and version was going; joined")
