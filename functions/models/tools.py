"""The tool routes' bodies: one tool call, the tool list, a conversation's status lines, and
what a call answers (docs/tools.md), also as a webhook's outcome."""

# No ``from __future__ import annotations``: pydantic would compile each string annotation
# back into its type (``typing.ForwardRef``) as the handlers import this module.
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue
from pydantic.json_schema import SkipJsonSchema

from forms.surface.tool_result import ToolResult
from forms.surface.tools import ID_PATTERN
from formwork.aws.models.common import ON_FIRST_USE, IgnoresIdentity


class ToolCallRequest(IgnoresIdentity):
    """One tool call: the model's tool-call id and the tool's input.

    Other keys are refused (422), except the identity keys above, which are ignored.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=False)  # built at import

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


class ToolList(BaseModel):
    tools: list[dict[str, Any]] = Field(
        description="Tool definitions in the requested format, in surface order"
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
