"""The tool routes' bodies: one tool call, the tool list, a conversation's status lines, and
what a call answers (docs/tools.md)."""

# No ``from __future__ import annotations``: pydantic would compile each string annotation
# back into its type (``typing.ForwardRef``) as the handlers import this module.
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from forms.surface.tools import ID_PATTERN
from formwork.aws.models.common import IgnoresIdentity


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
