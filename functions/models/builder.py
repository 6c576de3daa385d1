"""The builder routes' bodies: a builder tool call and its result, a draft and its edit log, a
publish and the versions it made (docs/builder.md)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue
from pydantic.json_schema import SkipJsonSchema

from forms.surface.tools import ID_PATTERN
from formwork.aws.models.common import ON_FIRST_USE, IgnoresIdentity

MAX_SELECTION_CHARS = 200
"""The longest step or field reference a selection may hold (``forms.documents`` ``Ref``)."""


class BuilderSelection(BaseModel):
    """What the person has selected in the editor; an edit that leaves out its field or step
    falls back to it ("make this required")."""

    model_config = ConfigDict(**ON_FIRST_USE, extra="forbid", frozen=True)

    field: (
        SkipJsonSchema[None] | Annotated[str, Field(min_length=1, max_length=MAX_SELECTION_CHARS)]
    ) = Field(default=None, description="The selected field's id", examples=["email"])
    step: (
        SkipJsonSchema[None] | Annotated[str, Field(min_length=1, max_length=MAX_SELECTION_CHARS)]
    ) = Field(default=None, description="The selected step's id", examples=["contact"])


class BuilderCallRequest(IgnoresIdentity):
    """One builder tool call: the model's tool-call id and the chat it belongs to, the tool's
    input, the editor's selection, and whether the person stopped it.

    Other keys are refused (422), except the identity keys, which are ignored.
    """

    model_config = ConfigDict(**ON_FIRST_USE, extra="forbid", frozen=True)

    tool_call_id: Annotated[
        str,
        Field(
            pattern=ID_PATTERN,
            description="The model's id for this call, unique within its chat. A retried call "
            "with the same id and chat_id returns the first result and applies nothing twice.",
            examples=["toolu_01"],
        ),
    ]
    chat_id: Annotated[
        str | None,
        Field(
            pattern=ID_PATTERN,
            description="The chat that made the call (the chat backend's id for it): "
            "tool_call_id is recorded as that chat's, so two chats that number their calls "
            "call_0, call_1, ... never meet. Omitted: the call is recorded nowhere, so it is "
            "never replayed (sent again, it runs again) and Stop is not kept for a replay",
            examples=["chat-7f3a"],
        ),
    ] = None
    input: dict[str, JsonValue] | None = Field(
        default=None,
        description="The tool's input, as the model produced it (see GET /builder/tools); "
        "omit for {}",
        examples=[{"field": {"kind": "email", "label": "Email"}}],
    )
    selection: BuilderSelection | None = Field(
        default=None,
        description="The editor's selection, for edits that leave out their field or step",
    )
    cancelled: bool = Field(
        default=False,
        strict=True,
        description="true when the person pressed Stop or closed the panel: the call is "
        "answered and recorded as cancelled, and nothing is applied",
    )


class PublishRequest(IgnoresIdentity):
    """A person publishes a draft. The body may be left out (as ``{}``).

    Other keys are refused (422), except the identity keys, which are ignored: the publisher
    is the verified principal.
    """

    model_config = ConfigDict(**ON_FIRST_USE, extra="forbid", frozen=True)

    expected: SkipJsonSchema[None] | Annotated[int, Field(strict=True, ge=0, le=10**9)] = Field(
        default=None,
        description="The latest published version the publisher saw (0: none yet); when "
        "another publish landed since, 409 and nothing is published",
        examples=[1],
    )


class BuilderResult(BaseModel):
    """A builder tool's result: ``ok``, then a sentence (``summary``) or, for a refusal,
    ``error`` and ``message``; ``inspect_form`` answers what it read (docs/builder.md)."""

    model_config = ConfigDict(
        **ON_FIRST_USE,
        extra="allow",
        json_schema_extra={
            "anyOf": [
                {"properties": {"ok": {"const": True}}},
                {"required": ["error", "message"]},
            ]
        },
    )

    ok: bool = Field(description="Whether the call applied (or, for inspect_form, read)")
    summary: SkipJsonSchema[None] | str = Field(
        default=None, description="What the call did, in one sentence"
    )
    error: SkipJsonSchema[None] | str = Field(
        default=None, description="Why nothing was applied: a stable code, for ok=false"
    )
    message: SkipJsonSchema[None] | str = Field(
        default=None, description="What was wrong, with error"
    )
    hint: SkipJsonSchema[None] | str = Field(default=None, description="What to send instead")
    did_you_mean: SkipJsonSchema[None] | list[str] = Field(
        default=None, description="Ids close to one that was not found"
    )
    notes: SkipJsonSchema[None] | dict[str, JsonValue] = Field(
        default=None,
        description="What the edit did on its own: values coerced, ids rewritten, positions packed",
    )
    replayed: SkipJsonSchema[None] | Literal[True] = Field(
        default=None, description="Present when this is the first result of a retried call"
    )


class EditLogLine(BaseModel):
    """One entry of a draft's edit log (without its document)."""

    model_config = ON_FIRST_USE

    index: int
    tool: str
    call_id: str
    by: str = Field(description="The principal who made the edit")
    at: str = Field(description="When (ISO 8601)")
    summary: str
    prev: int = Field(description="The entry in force before this one (-1: none)")
    in_force: bool


class DraftBody(BaseModel):
    """A draft as its editor shows it: the document, where undo and redo lead, the edit log."""

    model_config = ON_FIRST_USE

    form_id: str
    version: int = Field(description="Goes up by one with every edit, undo and redo")
    document: dict[str, JsonValue] = Field(
        description="The form document as it is now (docs/form-documents.md)"
    )
    undo: str | None = Field(description="What undo_edit would take back, or null")
    redo: str | None = Field(description="What redo_edit would bring back, or null")
    changed_by: str
    changed_at: str = Field(description="When (ISO 8601)")
    log: list[EditLogLine]
    selection: BuilderSelection | None = Field(
        default=None,
        description="What the caller last selected on the draft's canvas, which a tool call "
        "without a selection falls back to; null: nothing",
    )


class DraftLine(BaseModel):
    model_config = ON_FIRST_USE

    form_id: str
    title: str
    version: int
    edits: int = Field(description="Entries in the edit log")
    changed_by: str
    changed_at: str = Field(description="When (ISO 8601)")


class DraftList(BaseModel):
    """The drafts of the caller's tenant, by form id."""

    model_config = ON_FIRST_USE

    drafts: list[DraftLine]


class PublishedVersion(BaseModel):
    """The 200 of a publish: the form and the version it got."""

    model_config = ON_FIRST_USE

    form: str = Field(examples=["job-application"])
    version: int = Field(examples=[1])


class FormVersionBody(BaseModel):
    """One published version of a form of the caller's tenant, as it was published."""

    model_config = ON_FIRST_USE

    form: str
    version: int
    document: dict[str, JsonValue] = Field(description="The form document (immutable)")
    published_by: str = Field(description="The principal who published it")
    published_at: str = Field(description="When (ISO 8601)")


class NotPublishableBody(BaseModel):
    """A 422 of a publish: the body that is not a publish request (``invalid_request``), or a
    draft that does not compile yet (``not_publishable``, with every problem)."""

    model_config = ON_FIRST_USE

    error: str = Field(examples=["not_publishable"])
    message: str
    problems: SkipJsonSchema[None] | list[str] = Field(
        default=None, description="With not_publishable: each thing to fix in the draft"
    )
