"""The request and response bodies of the tool API, as pydantic models.

Powertools validates requests against these models and builds the OpenAPI document from the
same models, so the document cannot drift from what the handler accepts. One module per
concern: what every body shares and the error bodies (``common``), the tool routes
(``tools``), the approvals (``approvals``), the builder (``builder``) and memory
(``memory``); every name is importable from ``functions.models`` as well. A tool's result is
``forms.surface.ToolResult``, the one model the client and the agents read too.

Optional keys of a response are ``SkipJsonSchema[None] | ...``: the key may be absent, but is
never ``null``. A body that is a union or a mapping subclasses ``RootModel[Any]`` and annotates
``root``, the same schema as ``RootModel[X]``, which would build a second model (the
parametrized one) for each.
"""

from forms.surface.tool_result import FieldRow, HandoverRef, HookRow, StepRow, ToolResult
from forms.surface.tools import ID_PATTERN
from functions.models.approvals import (
    MAX_NOTE_CHARS,
    ApprovalAnswer,
    ApprovalDecisionRequest,
    ApprovalQueueBody,
    ApprovalResult,
    BoundAnswerRow,
    DecisionNotRecorded,
    QueuedApprovalRow,
    SettlementRow,
)
from functions.models.builder import (
    FORM_ID_PATTERN,
    MAX_SELECTION_CHARS,
    BuilderCallRequest,
    BuilderResult,
    BuilderSelection,
    DraftBody,
    DraftLine,
    DraftList,
    EditLogLine,
    FormVersionBody,
    NotPublishableBody,
    PublishedVersion,
    PublishRequest,
)
from functions.models.common import (
    IGNORED_IDENTITY_KEYS,
    ON_FIRST_USE,
    ErrorBody,
    GatewayError,
    IgnoresIdentity,
    OpenApiDocument,
    Unauthorized,
)
from functions.models.memory import (
    MAX_FACT_TEXT_CHARS,
    MAX_WORDS_CHARS,
    ConfirmRequest,
    ExportedKey,
    FactBody,
    FactChange,
    FactChangeKind,
    FactDeleted,
    FactDerivation,
    FactDetail,
    FactLine,
    FactList,
    FactRevisionBody,
    FactSource,
    FactSourceIn,
    FactStatementRequest,
    FactText,
    FactUse,
    FactValueIn,
    MemoryExport,
    MemoryRefusal,
    MemorySettingsBody,
    MemorySettingsRequest,
)
from functions.models.tools import ConversationStatus, ToolCallRequest, ToolList, WebhookOutcome

__all__ = [
    "FORM_ID_PATTERN",
    "ID_PATTERN",
    "IGNORED_IDENTITY_KEYS",
    "MAX_FACT_TEXT_CHARS",
    "MAX_NOTE_CHARS",
    "MAX_SELECTION_CHARS",
    "MAX_WORDS_CHARS",
    "ON_FIRST_USE",
    "ApprovalAnswer",
    "ApprovalDecisionRequest",
    "ApprovalQueueBody",
    "ApprovalResult",
    "BoundAnswerRow",
    "BuilderCallRequest",
    "BuilderResult",
    "BuilderSelection",
    "ConfirmRequest",
    "ConversationStatus",
    "DecisionNotRecorded",
    "DraftBody",
    "DraftLine",
    "DraftList",
    "EditLogLine",
    "ErrorBody",
    "ExportedKey",
    "FactBody",
    "FactChange",
    "FactChangeKind",
    "FactDeleted",
    "FactDerivation",
    "FactDetail",
    "FactLine",
    "FactList",
    "FactRevisionBody",
    "FactSource",
    "FactSourceIn",
    "FactStatementRequest",
    "FactText",
    "FactUse",
    "FactValueIn",
    "FieldRow",
    "FormVersionBody",
    "GatewayError",
    "HandoverRef",
    "HookRow",
    "IgnoresIdentity",
    "MemoryExport",
    "MemoryRefusal",
    "MemorySettingsBody",
    "MemorySettingsRequest",
    "NotPublishableBody",
    "OpenApiDocument",
    "PublishRequest",
    "PublishedVersion",
    "QueuedApprovalRow",
    "SettlementRow",
    "StepRow",
    "ToolCallRequest",
    "ToolList",
    "ToolResult",
    "Unauthorized",
    "WebhookOutcome",
]
