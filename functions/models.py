"""The request and response bodies of the tool API, as pydantic models.

Powertools validates requests against these models and builds the OpenAPI document from the
same models, so the document cannot drift from what the handler accepts.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    RootModel,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from forms.statuses import EntryStatus, FieldRowStatus, InstanceStatus, StepState

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$"
"""The ids ``forms.app.service.check_id`` accepts (a test pins the two together)."""

IGNORED_IDENTITY_KEYS = frozenset({"principal", "user_id", "userId", "user", "sub", "tenant"})
"""Envelope keys that name a caller. They are dropped, never honoured and never an error:
the principal comes only from the verified token, and a client that sends its user id out of
habit should not be broken by it."""

ON_FIRST_USE = ConfigDict(defer_build=True)
"""The config of the models that only the approval, status, webhook, builder, memory and
document routes use:
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


MAX_FACT_TEXT_CHARS = 4000
MAX_WORDS_CHARS = 1000
"""The longest text value and stated words a fact may hold (``forms.memory.facts``'s
``FactValue`` and ``Words``; a test pins them together: this module imports no engine)."""

FactText = Annotated[StrictStr, Field(max_length=MAX_FACT_TEXT_CHARS)]
FactValueIn = FactText | StrictInt | StrictFloat | StrictBool
"""A fact's value as a request sends it: one JSON scalar (never an object, a list or null)."""


class _IgnoresIdentity(BaseModel):
    """A request body whose identity keys are dropped, never honoured and never an error."""

    model_config = ON_FIRST_USE

    @model_validator(mode="before")
    @classmethod
    def _ignore_identity(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if k not in IGNORED_IDENTITY_KEYS}
        return data


class FactSourceIn(BaseModel):
    """Where a stated fact comes from, as the chatbot backend says it."""

    model_config = ConfigDict(**ON_FIRST_USE, extra="forbid", frozen=True)

    kind: Literal["conversation", "tool_call", "api"]
    ref: SkipJsonSchema[None] | Annotated[str, Field(min_length=1, max_length=200)] = None


class FactStatementRequest(_IgnoresIdentity):
    """A fact the verified principal states: the value, or the words to read it from, or both.

    Other keys are refused (422), except the identity keys, which are ignored: memory is the
    verified principal's, never one a body names.
    """

    model_config = ConfigDict(**ON_FIRST_USE, extra="forbid", frozen=True)

    value: SkipJsonSchema[None] | FactValueIn = Field(
        default=None,
        description="The value, as the key's type takes it: a number, text, a date as "
        '"1990-05-01", a decimal as a number or a string ("70.5"). Leave it out to have it '
        "read from words.",
        examples=[173],
    )
    words: (
        SkipJsonSchema[None] | Annotated[str, Field(min_length=1, max_length=MAX_WORDS_CHARS)]
    ) = Field(
        default=None,
        description="The words the user said it in. Alone, a rule reads the value from them "
        "(5'8\" is 173 cm), and the fact records the rule; with a value, they must agree.",
        examples=["5'8\""],
    )
    valid_from: SkipJsonSchema[None] | AwareDatetime = Field(
        default=None,
        description="When it became true in the world, if the user said (ISO 8601, with a "
        "time zone); else it holds from when it is stated",
    )
    valid_until: SkipJsonSchema[None] | AwareDatetime = Field(
        default=None,
        description="When it stopped (or stops) being true, if the user said (ISO 8601, with "
        "a time zone)",
    )
    correction: bool = Field(
        default=False,
        strict=True,
        description="true when the value in force was wrong (not changed in the world): it "
        "is replaced over its period, and the wrong value stays in the history",
    )
    stated_at: SkipJsonSchema[None] | AwareDatetime = Field(
        default=None,
        description="When the user said it (ISO 8601, with a time zone), if not just now: "
        "a statement from an earlier conversation. Not in the future",
    )
    source: SkipJsonSchema[None] | FactSourceIn = Field(
        default=None,
        description="Where the user said it: a conversation, a tool call of your agent, or "
        'the API (the default), with its id: {"kind": "tool_call", "ref": "call_Lx7"}',
    )

    @field_validator("value", mode="wrap")
    @classmethod
    def _one_scalar(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """One error that says what a value may be, instead of one per kind it is not."""
        try:
            return handler(value)
        except ValidationError:
            raise ValueError(
                f"a fact's value is one JSON value: text (at most {MAX_FACT_TEXT_CHARS} "
                "characters), a number, or true or false"
            ) from None


class ConfirmRequest(_IgnoresIdentity):
    """The user says the fact in force is still right: an empty object (``{}``)."""

    model_config = ConfigDict(**ON_FIRST_USE, extra="forbid", frozen=True)


class MemorySettingsRequest(_IgnoresIdentity):
    """The verified principal's memory switch."""

    model_config = ConfigDict(**ON_FIRST_USE, extra="forbid", frozen=True)

    enabled: bool = Field(
        strict=True,
        description="false: no fact of yours is recorded or recalled until you turn it on "
        "again (what is stored stays, readable, exportable and deletable)",
        examples=[False],
    )


# ---------------------------------------------------------------------------- responses
# Documentation of what the routes answer (the OpenAPI document's response schemas). Optional
# keys are ``SkipJsonSchema[None] | ...``: the key may be absent, but is never ``null``. A body
# that is a union or a mapping subclasses ``RootModel[Any]`` and annotates ``root``, the same
# schema as ``RootModel[X]``, which would build a second model (the parametrized one) for each.


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


class ApprovalResult(BaseModel):
    """What a recorded decision left: the form's status after the decision's edges ran."""

    model_config = ON_FIRST_USE

    ok: Literal[True] = True
    summary: str = Field(examples=["Recorded approved on Finance decision."])
    approval: str = Field(description="The approval id")
    instance: str = Field(description="The form instance the approval belongs to")
    form_status: InstanceStatus = Field(
        description="The form's status after the decision", examples=["completed"]
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


class BoundAnswerRow(BaseModel):
    model_config = ON_FIRST_USE

    field: str = Field(description="The field's id", examples=["amount"])
    label: str = Field(description="The field's label", examples=["Amount (EUR)"])
    value: JsonValue = Field(description="The answer as it stood when the approval was asked")


class SettlementRow(BaseModel):
    """How an approval was settled."""

    model_config = ON_FIRST_USE

    outcome: str = Field(description="What was written: approved or rejected")
    how: Literal["decided", "expired"] = Field(
        description="decided by an approver, or the declared timeout outcome at the deadline"
    )
    by: str | None = Field(
        description="The approver (the person part of their principal, in the caller's "
        "tenant); null when it expired"
    )
    at: AwareDatetime = Field(description="When it was settled")
    note: str | None = Field(description="The approver's note, if any")
    standing: bool = Field(
        description="Whether the decision is still in force (a changed answer it was bound "
        "to withdraws it)"
    )


class QueuedApprovalRow(BaseModel):
    """One approval as its approver sees it."""

    model_config = ON_FIRST_USE

    approval_id: str = Field(
        description="The id to decide it with (POST /approvals/{approval_id})",
        examples=["fi_1a2b:checkpoint.finance_approval:1"],
    )
    instance_id: str
    form_id: str
    form_title: str
    checkpoint: str = Field(description="The checkpoint's title", examples=["Finance approval"])
    prompt: str | None = Field(description="What the approver is asked, as the form declares")
    role: str = Field(description="The role it needs (one the caller holds)")
    requested_by: str = Field(
        description="Who filled the form: the person part of their principal (the caller's tenant)"
    )
    requested_at: AwareDatetime = Field(description="When the approval was asked")
    deadline: AwareDatetime | None = Field(
        description="When on_timeout applies if nobody decides; null: no deadline"
    )
    on_timeout: str = Field(description="The outcome written at the deadline")
    answers: list[BoundAnswerRow] = Field(
        description="The answers the decision is bound to: a change to any withdraws it"
    )
    settled: SettlementRow | None = Field(description="null while it is owed")


class ApprovalQueueBody(BaseModel):
    """The 200 of ``GET /approvals``."""

    model_config = ON_FIRST_USE

    owed: list[QueuedApprovalRow] = Field(
        description="What the caller may decide now, the earliest deadline first (none last)"
    )
    owed_next: str | None = Field(
        description="Pass as after for the next page of owed; null: nothing follows"
    )
    settled: list[QueuedApprovalRow] = Field(
        description="Approvals the caller could have decided that were settled (decided or "
        "expired) on forms that owe nothing now, the latest first"
    )
    settled_next: str | None = Field(
        description="Pass as settled_after for the next page of settled; null: nothing follows"
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


FactUse = Literal["fill", "offer", "none"]
FactChangeKind = Literal["stated", "corrected", "confirmed", "deleted"]


class FactSource(BaseModel):
    model_config = ON_FIRST_USE

    kind: Literal["conversation", "tool_call", "api"]
    ref: SkipJsonSchema[None] | str = Field(
        default=None, description="The conversation, tool call or API client"
    )


class FactDerivation(BaseModel):
    """A value a rule read from words: ``5'8"`` to 173 by ``feet_inches_to_cm``."""

    model_config = ON_FIRST_USE

    rule: str = Field(examples=["feet_inches_to_cm"])
    words: str = Field(examples=["5'8\""])


class FactBody(BaseModel):
    """A value held over a period of world time, with where it came from."""

    model_config = ON_FIRST_USE

    key: str = Field(examples=["person.height_cm"])
    label: SkipJsonSchema[None] | str = Field(
        default=None, description="The key's label (absent: the key left the vocabulary)"
    )
    value: SkipJsonSchema[None] | str | int | float | bool = Field(
        default=None, description="As the key's type keeps it (JSON); absent only when erased"
    )
    shown: SkipJsonSchema[None] | str = Field(
        default=None, description="The value as people read it", examples=["173 cm"]
    )
    words: SkipJsonSchema[None] | str = Field(default=None, description="As the user said it")
    derivation: SkipJsonSchema[None] | FactDerivation = Field(
        default=None, description="Present when a rule read the value from other words"
    )
    source: FactSource
    stated_at: str = Field(description="When it was said (ISO 8601)")
    confirmed_at: SkipJsonSchema[None] | str = Field(
        default=None, description="When the user last confirmed it"
    )
    valid_from: SkipJsonSchema[None] | str = Field(
        default=None, description="World time: since when it holds (absent: since stated_at)"
    )
    valid_until: SkipJsonSchema[None] | str = Field(
        default=None, description="World time: until when it holds (absent: no end known)"
    )
    recorded_at: str = Field(description="System time: when it was recorded")
    revision: int = Field(description="The seq of the revision that stated or corrected it")
    erased: SkipJsonSchema[None] | Literal[True] = Field(
        default=None,
        description="Present in a timeline read as of a time before a deletion: the value, "
        "words and derivation were erased by it",
    )


class FactLine(FactBody):
    """A fact in force, with what recall would do with it now."""

    model_config = ON_FIRST_USE

    decay: SkipJsonSchema[None] | str = Field(
        default=None,
        description="The key's decay class: never, years, months, steps or weeks",
        examples=["years"],
    )
    age_days: int = Field(description="Whole days since it was last stated or confirmed")
    use: FactUse = Field(
        description="What recall would do with it now: fill an empty field, offer it for the "
        "agent to ask about, or nothing"
    )
    reason: SkipJsonSchema[None] | str = Field(
        default=None,
        description="With use=none, why: memory_off, too_old, not_valid_now, unknown_key",
    )
    note: SkipJsonSchema[None] | str = Field(
        default=None,
        description="With fill or offer, the status line's words",
        examples=["from memory: Height 173 cm (derived from “5'8\"”), said 2026-09-03"],
    )


class FactList(BaseModel):
    """The caller's facts in force, by key."""

    model_config = ON_FIRST_USE

    memory_enabled: bool = Field(
        description="Whether memory is on for the caller (their switch and the deployment's)"
    )
    facts: list[FactLine]


class FactRevisionBody(BaseModel):
    """One change of one key, as appended (the content of revisions a deletion erased is gone:
    ``erased`` is true and value, words and derivation are absent)."""

    model_config = ON_FIRST_USE

    key: str
    seq: int
    change: FactChangeKind
    value: SkipJsonSchema[None] | str | int | float | bool = None
    words: SkipJsonSchema[None] | str = None
    derivation: SkipJsonSchema[None] | FactDerivation = None
    source: FactSource
    stated_at: SkipJsonSchema[None] | str = None
    confirmed_at: SkipJsonSchema[None] | str = None
    valid_from: SkipJsonSchema[None] | str = None
    valid_until: SkipJsonSchema[None] | str = None
    recorded_at: str = Field(description="System time (ISO 8601)")
    erased: bool


class FactDetail(BaseModel):
    """One key of the caller's memory: the fact in force, its periods, every revision."""

    model_config = ON_FIRST_USE

    key: str
    current: FactLine | None = Field(description="The fact in force (null: deleted)")
    timeline: list[FactBody] = Field(
        description="The periods of world time each value held, by start, as believed now "
        "(or at as_of)"
    )
    history: list[FactRevisionBody] = Field(description="Every revision, oldest first")
    as_of: SkipJsonSchema[None] | str = Field(
        default=None, description="With ?as_of: the system time asked about"
    )
    believed: FactBody | None = Field(
        default=None,
        description="Only with ?as_of: the fact in force as believed then (null: none yet, or "
        "deleted by then)",
    )


class FactChange(BaseModel):
    """What a statement or a confirmation appended, and the fact in force after it."""

    model_config = ON_FIRST_USE

    key: str
    change: FactChangeKind = Field(
        description="stated; corrected; confirmed (also the same value stated again)"
    )
    revision: int = Field(description="The seq of the revision appended")
    derivation: SkipJsonSchema[None] | FactDerivation = Field(
        default=None, description="The rule that read the value from the words, when one did"
    )
    fact: FactBody = Field(
        description="The fact in force now (a statement about the past leaves it as it was)"
    )


class FactDeleted(BaseModel):
    """A key forgotten: recall never returns it again; earlier revisions' content is erased."""

    model_config = ON_FIRST_USE

    key: str
    change: Literal["deleted"] = "deleted"
    revision: int = Field(description="The seq of the deletion")
    erased: int = Field(description="Revisions of the key whose content is now erased")
    recorded_at: str


class MemorySettingsBody(BaseModel):
    """The caller's memory switch, and the deployment's."""

    model_config = ON_FIRST_USE

    enabled: bool = Field(description="The caller's switch (on unless turned off)")
    changed_at: str | None = Field(description="When the caller last changed it (null: never)")
    deployment_enabled: bool = Field(
        description="Whether the deployment has memory on (FORMWORK_MEMORY); off, nothing is "
        "recorded or recalled for anyone"
    )


class ExportedKey(BaseModel):
    model_config = ON_FIRST_USE

    key: str
    current: FactBody | None = Field(description="The fact in force (null: deleted)")
    history: list[FactRevisionBody]


class MemoryExport(BaseModel):
    """Everything memory holds of the caller."""

    model_config = ON_FIRST_USE

    principal: str = Field(description="The verified principal the memory belongs to")
    exported_at: str
    settings: MemorySettingsBody
    facts: list[ExportedKey] = Field(description="Every key ever stated, by key")


class MemoryRefusal(BaseModel):
    """A memory request refused; nothing was written."""

    model_config = ON_FIRST_USE

    error: str = Field(description="A stable, machine-readable code", examples=["no_rule"])
    message: str = Field(description="What was wrong")
    hint: SkipJsonSchema[None] | str = Field(default=None, description="What to send instead")
    did_you_mean: SkipJsonSchema[None] | list[str] = Field(
        default=None, description="Fact keys close to one that is not in the vocabulary"
    )


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
