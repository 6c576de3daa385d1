"""A tool's result as one typed model: what the HTTP API documents (its OpenAPI schema), what
the client returns and what the agents read, one class for all three; and a conversation's
status lines (``ConversationStatus``), one class for the API's document and the client alike.

A result is built as plain data (``forms.surface.results``) and sent as JSON; ``ToolResult``
is how a reader types it. It names the envelope every result leads with (``ok``, then
``summary``, or ``error``, ``message`` and ``hint``) and the keys the reads and the closing
calls share; every other key is kept as sent (``extra``), and ``to_dict`` gives back the answer
exactly as it came, for the model to read.
"""

# Real annotations (no ``from __future__ import annotations``): pydantic compiles each string
# annotation back into its type at import (``typing.ForwardRef``), 32 here on every cold start.
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr
from pydantic.json_schema import SkipJsonSchema

from forms.statuses import EntryStatus, FieldRowStatus, InstanceStatus, StepState

BUSY = "busy"
"""The error code of a write that lost to other writers every time; nothing was saved, and
the same call (same id) may be sent again."""


class FieldRow(BaseModel):
    """A field as a read shows it (docs/tools.md); more keys may come (type, value, ask, ...)."""

    model_config = ConfigDict(extra="allow", defer_build=True)  # built on first use

    id: str
    label: str
    status: FieldRowStatus = Field(description="docs/engine.md, Statuses")


class StepRow(BaseModel):
    """A step of the outline, or the step a read shows; more keys may come."""

    model_config = ConfigDict(extra="allow", defer_build=True)  # built on first use

    step: str
    title: str
    state: SkipJsonSchema[None] | StepState = Field(
        default=None, description="docs/engine.md, Statuses"
    )
    fields: SkipJsonSchema[None] | list[FieldRow] = None


class HookRow(BaseModel):
    """A hook occurrence the call fired, and where it stands (docs/dispatch.md)."""

    model_config = ConfigDict(extra="allow", defer_build=True)  # built on first use

    key: str
    status: EntryStatus


class HandoverRef(BaseModel):
    """The other end of a handover: a form and its instance."""

    model_config = ConfigDict(extra="allow", defer_build=True)  # built on first use

    form: str
    instance: str


class ToolResult(BaseModel):
    """A tool's result: it leads with ``ok``, then a sentence (``summary``) or, for a call
    that could not run, ``error`` and ``message``; the rest depends on the tool
    (docs/tools.md)."""

    model_config = ConfigDict(
        extra="allow",
        frozen=True,
        defer_build=True,  # no tool call validates it: the API document and clients do
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
    # Read as false when absent (a first answer); the document says what the wire carries: the
    # key is present (true) only on a replay.
    replayed: Literal[True] | SkipJsonSchema[Literal[False]] = Field(
        default=False,
        description="Present when this is the first result of a retried call",
        json_schema_extra={"default": None},
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

    # Not in the document's schema (it is one of the keys the rest of a result may hold), but
    # typed here: most results carry it.
    status_line: SkipJsonSchema[str | None] = None

    _raw: dict[str, Any] = PrivateAttr(default_factory=dict)
    _tool_call_id: str = PrivateAttr(default="")
    _attempts: int = PrivateAttr(default=1)

    @classmethod
    def from_answer(
        cls,
        answer: Mapping[str, Any],
        tool_call_id: str,
        attempts: int = 1,
        *,
        typed: Mapping[str, Any] | None = None,
    ) -> "ToolResult":
        """The result the API answered for the call sent under ``tool_call_id``, sent
        ``attempts`` times; ``ValidationError`` when the answer is not a tool result.

        ``typed`` is the part of ``answer`` to type (default: all of it): a reader that
        cannot type some keys (``formwork.client``'s, reading a newer API) leaves them out,
        and they are kept as sent (``to_dict``, ``get``, ``untyped``)."""
        result = cls.model_validate(answer if typed is None else typed)
        result._raw = dict(answer)
        result._tool_call_id = tool_call_id
        result._attempts = attempts
        return result

    @property
    def tool_call_id(self) -> str:
        """The id the call was sent under (the caller's, or one a client made), every attempt
        alike."""
        return self._tool_call_id

    @property
    def attempts(self) -> int:
        """How many times the call was sent."""
        return self._attempts

    @property
    def busy(self) -> bool:
        """A write that lost to other writers every time: nothing was saved, and the same call
        (same id) may be sent again."""
        return not self.ok and self.error == BUSY

    @property
    def untyped(self) -> tuple[str, ...]:
        """Keys this model names that the answer carried but that were not typed (``typed``
        left them out): their attributes read as their defaults, ``get`` has them as sent."""
        fields = type(self).model_fields
        return tuple(k for k in self._raw if k in fields and k not in self.model_fields_set)

    def to_dict(self) -> dict[str, Any]:
        """The result as the API sent it, every key in its order."""
        return dict(self._raw) if self._raw else self.model_dump(exclude_unset=True)

    def get(self, key: str, default: Any = None) -> Any:
        """One key of the result, named in the model or not."""
        return self.to_dict().get(key, default)


class ConversationStatus(BaseModel):
    """A conversation's status lines, one per open form (with its ``later:`` and rejection
    lines), for the system prompt: what ``GET /conversations/{id}/status`` answers. Not an
    instance's status (``forms.statuses.Status``). Empty when every form there is closed."""

    # Built on first use: only the status route and the client's status() read it.
    model_config = ConfigDict(extra="allow", frozen=True, defer_build=True)

    conversation_id: str
    lines: list[str] = Field(
        description="Tier-0 status lines of the conversation's open forms, for the system prompt"
    )

    @property
    def text(self) -> str:
        """The lines as one block of text."""
        return "\n".join(self.lines)
