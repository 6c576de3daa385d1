"""The webhook route's body: what ``POST /webhooks/{source}`` answers (docs/webhooks.md), a
tool result inside. Apart from the tool routes' bodies: the route and this model load with the
first request for it (``formwork.aws.webhook_route``), not with the handler."""

# No ``from __future__ import annotations``: pydantic would compile each string annotation
# back into its type (``typing.ForwardRef``).
from typing import Literal

from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

from forms.surface.tool_result import ToolResult
from formwork.aws.models.common import ON_FIRST_USE


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
