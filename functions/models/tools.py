"""The tool routes' bodies: one tool call, the tool list, a conversation's status lines, and
what a call answers (docs/tools.md), also as a webhook's outcome."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue
from pydantic.json_schema import SkipJsonSchema

from forms.statuses import EntryStatus, FieldRowStatus, InstanceStatus, StepState
from functions.models.common import ID_PATTERN, ON_FIRST_USE, IgnoresIdentity


class ToolCallRequest(IgnoresIdentity):
    """One tool call: the model's tool-call id and the tool's input.

    Other keys are refused (422), except the identity keys above, which are ignored.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool_call_id: Annotated[
        str,
        Field(
            pattern=ID_PATTERN,
            description="The model's id for this call (OpenAI call_..., Anthropic toolu_..., "
            "Bedrock tooluse_...). A retried call with the same id returns the first result "
            "and applies nothing twice.",
            examples=["call_01"],
        ),
    ]
    input: dict[str, JsonValue] | None = Field(
        default=None,
        description="The tool's input, as the model produced it (see GET /tools); omit for {}",
        examples=[{"form": "travel-claim", "values": {"destination": "Lisbon"}}],
    )


class FieldRow(BaseModel):
    """A field as a read shows it (docs/tools.md); more keys may come (type, value, ask, ...)."""

    model_config = ConfigDict(extra="allow")

    id: str
    label: str
    status: FieldRowStatus = Field(description="docs/engine.md, Statuses")


class StepRow(BaseModel):
    """A step of the outline, or the step a read shows; more keys may come."""

    model_config = ConfigDict(extra="allow")

    step: str
    title: str
    state: SkipJsonSchema[None] | StepState = Field(
        default=None, description="docs/engine.md, Statuses"
    )
    fields: SkipJsonSchema[None] | list[FieldRow] = None


class HookRow(BaseModel):
    """A hook occurrence the call fired, and where it stands (docs/dispatch.md)."""

    model_config = ConfigDict(extra="allow")

    key: str
    status: EntryStatus


class HandoverRef(BaseModel):
    """The other end of a handover: a form and its instance."""

    model_config = ConfigDict(extra="allow")

    form: str
    instance: str


class ToolResult(BaseModel):
    """A tool's result: it leads with ``ok``, then a sentence (``summary``) or, for a call
    that could not run, ``error`` and ``message``; the rest depends on the tool
    (docs/tools.md)."""

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "anyOf": [{"required": ["summary"]}, {"required": ["error", "message"]}]
        },
    )

    ok: bool = Field(description="Whether the call landed")
    summary: SkipJsonSchema[None] | str = Field(
        default=None, description="What the call did, in one sentence"
    )
    error: SkipJsonSchema[None] | str = Field(
        default=None, description="Why the call could not run: a stable code, for ok=false"
    )
    message: SkipJsonSchema[None] | str = Field(
        default=None, description="What was wrong, with error"
    )
    hint: SkipJsonSchema[None] | str = Field(default=None, description="What to send instead")
    did_you_mean: SkipJsonSchema[None] | list[str] = Field(
        default=None, description="Ids close to an unknown one the call named (form, step, field)"
    )
    replayed: SkipJsonSchema[None] | Literal[True] = Field(
        default=None, description="Present when this is the first result of a retried call"
    )
    closed: SkipJsonSchema[None] | InstanceStatus = Field(
        default=None, description="The instance's status, when the call closed it"
    )
    state: SkipJsonSchema[None] | StepState = Field(
        default=None, description="A step read: where the step stands"
    )
    fields: SkipJsonSchema[None] | list[FieldRow] = Field(
        default=None, description="A step read: its fields and their statuses"
    )
    steps: SkipJsonSchema[None] | list[StepRow] = Field(
        default=None, description="An outline or closed read: every step and its fields"
    )
    hooks: SkipJsonSchema[None] | list[HookRow] = Field(
        default=None, description="The hook occurrences the call fired, as they stand"
    )
    handed_over_to: SkipJsonSchema[None] | HandoverRef = Field(
        default=None, description="The form and instance that took over (docs/tools.md)"
    )
    handed_over_from: SkipJsonSchema[None] | HandoverRef = Field(
        default=None, description="The instance this one took over from (docs/tools.md)"
    )
    not_carried: SkipJsonSchema[None] | dict[str, str] = Field(
        default=None, description="A handover: source field id -> why it was not carried"
    )


class ToolList(BaseModel):
    tools: list[dict[str, Any]] = Field(
        description="Tool definitions in the requested format, in surface order"
    )


class ConversationStatus(BaseModel):
    model_config = ON_FIRST_USE

    conversation_id: str
    lines: list[str] = Field(
        description="Tier-0 status lines of the conversation's open forms, for the system prompt"
    )


class WebhookOutcome(BaseModel):
    """The 201 (and, replayed, 200) of ``POST /webhooks/{source}`` (docs/webhooks.md)."""

    model_config = ON_FIRST_USE

    ok: Literal[True] = True
    delivery: str = Field(description="The delivery id (webhook-id, or X-Formwork-Delivery)")
    form: str = Field(description="The form id started")
    instance: str = Field(description="The form instance")
    conversation_id: str
    status_line: SkipJsonSchema[None] | str = None
    result: ToolResult = Field(description="form_start's result")
    replayed: SkipJsonSchema[None] | Literal[True] = Field(
        default=None, description="Present on a re-delivery: the first outcome, unchanged"
    )
