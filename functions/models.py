"""The request and response bodies of the tool API, as pydantic models.

Powertools validates requests against these models and builds the OpenAPI document from the
same models, so the document cannot drift from what the handler accepts.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, RootModel, model_validator
from pydantic.json_schema import SkipJsonSchema

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$"
"""The ids ``forms.app.service.check_id`` accepts (a test pins the two together)."""

IGNORED_IDENTITY_KEYS = frozenset({"principal", "user_id", "userId", "user", "sub", "tenant"})
"""Envelope keys that name a caller. They are dropped, never honoured and never an error:
the principal comes only from the verified token, and a client that sends its user id out of
habit should not be broken by it."""

ON_FIRST_USE = ConfigDict(defer_build=True)
"""The config of the models that only the approval, status, webhook and document routes use:
their schemas are built on first use (Powertools builds a route's request and response fields
on that route's first request), not at import, so a cold start that serves ``GET /tools`` or a
tool call never builds them. The models those two use are built at import, once: deferred, each
route's first request would build them again."""


class ToolCallRequest(BaseModel):
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

    @model_validator(mode="before")
    @classmethod
    def _ignore_identity(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if k not in IGNORED_IDENTITY_KEYS}
        return data


MAX_NOTE_CHARS = 1000
"""The longest note an approver may attach (``FormService.decide`` enforces the same)."""


class ApprovalDecisionRequest(BaseModel):
    """An approver's decision on one pending approval.

    Other keys are refused (422), except the identity keys above, which are ignored: the
    approver is the verified principal, never a name in the body.
    """

    model_config = ConfigDict(**ON_FIRST_USE, extra="forbid", frozen=True)

    decision: Literal["approved", "rejected"] = Field(
        description="The decision, written to the approval's decision field as a revision by "
        "the approver",
        examples=["approved"],
    )
    note: Annotated[str, Field(max_length=MAX_NOTE_CHARS)] | None = Field(
        default=None,
        description="The approver's reason, kept on the revision (at most 1000 characters)",
        examples=["within the Q3 budget"],
    )

    @model_validator(mode="before")
    @classmethod
    def _ignore_identity(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if k not in IGNORED_IDENTITY_KEYS}
        return data


FORM_ID_PATTERN = r"^[a-z][a-z0-9-]{0,62}$"
"""A form document's id (``forms.documents.model.FormId``; a test pins the two together)."""
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


class BuilderCallRequest(BaseModel):
    """One builder tool call: the model's tool-call id, the tool's input, the editor's
    selection, and whether the person stopped it.

    Other keys are refused (422), except the identity keys, which are ignored.
    """

    model_config = ConfigDict(**ON_FIRST_USE, extra="forbid", frozen=True)

    tool_call_id: Annotated[
        str,
        Field(
            pattern=ID_PATTERN,
            description="The model's id for this call. A retried call with the same id returns "
            "the first result and applies nothing twice.",
            examples=["toolu_01"],
        ),
    ]
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

    @model_validator(mode="before")
    @classmethod
    def _ignore_identity(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if k not in IGNORED_IDENTITY_KEYS}
        return data


class PublishRequest(BaseModel):
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

    @model_validator(mode="before")
    @classmethod
    def _ignore_identity(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if k not in IGNORED_IDENTITY_KEYS}
        return data


# ---------------------------------------------------------------------------- responses
# Documentation of what the routes answer (the OpenAPI document's response schemas). Optional
# keys are ``SkipJsonSchema[None] | ...``: the key may be absent, but is never ``null``. A body
# that is a union or a mapping subclasses ``RootModel[Any]`` and annotates ``root``, the same
# schema as ``RootModel[X]``, which would build a second model (the parametrized one) for each.


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
    replayed: SkipJsonSchema[None] | Literal[True] = Field(
        default=None, description="Present when this is the first result of a retried call"
    )


class ApprovalResult(BaseModel):
    """What a recorded decision left: the form's status after the decision's edges ran."""

    model_config = ON_FIRST_USE

    ok: Literal[True] = True
    summary: str = Field(examples=["Recorded approved on Finance decision."])
    approval: str = Field(description="The approval id")
    instance: str = Field(description="The form instance the approval belongs to")
    form_status: str = Field(
        description="open, completed, terminated or abandoned", examples=["completed"]
    )
    status_line: SkipJsonSchema[None] | str = Field(
        default=None, description="The form's status line after the decision, if any"
    )


class DecisionNotRecorded(BaseModel):
    """A decision that was not recorded for a reason that passes (``busy``: the form kept
    changing under it): nothing was written; send the same request again."""

    model_config = ON_FIRST_USE

    ok: Literal[False] = False
    error: str = Field(examples=["busy"])
    message: str
    hint: SkipJsonSchema[None] | str = None


class ApprovalAnswer(RootModel[Any]):
    """The 200 of ``POST /approvals/{approval_id}``: recorded, or not recorded (as data)."""

    model_config = ON_FIRST_USE

    root: ApprovalResult | DecisionNotRecorded


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
    delivery: str = Field(description="The X-Formwork-Delivery id")
    form: str = Field(description="The form id started")
    instance: str = Field(description="The form instance")
    conversation_id: str
    status_line: SkipJsonSchema[None] | str = None
    result: ToolResult = Field(description="form_start's result")
    replayed: SkipJsonSchema[None] | Literal[True] = Field(
        default=None, description="Present on a re-delivery: the first outcome, unchanged"
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


class ErrorBody(BaseModel):
    error: str = Field(description="A stable, machine-readable code", examples=["bad_request"])
    message: str = Field(description="What was wrong, for a person or a model to read")


class NotPublishableBody(BaseModel):
    """A 422 of a publish: the body that is not a publish request (``invalid_request``), or a
    draft that does not compile yet (``not_publishable``, with every problem)."""

    model_config = ON_FIRST_USE

    error: str = Field(examples=["not_publishable"])
    message: str
    problems: SkipJsonSchema[None] | list[str] = Field(
        default=None, description="With not_publishable: each thing to fix in the draft"
    )


class GatewayError(BaseModel):
    """An answer API Gateway gives itself, before the function runs: its JWT authorizer's
    ``401 {"message": "Unauthorized"}``. HTTP APIs have no gateway responses to reshape it."""

    message: str = Field(examples=["Unauthorized"])


class Unauthorized(RootModel[Any]):
    """A 401: the function's ``{"error": "unauthorized", ...}``, or API Gateway's own
    ``{"message": "Unauthorized"}`` when its JWT authorizer refused the token."""

    root: ErrorBody | GatewayError


class OpenApiDocument(RootModel[Any]):
    """The OpenAPI 3.1 document (this one)."""

    model_config = ON_FIRST_USE

    root: dict[str, Any]
