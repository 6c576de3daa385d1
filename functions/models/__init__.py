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

Each name is loaded from its module on first use (PEP 562), not with the package, as
``forms.surface`` does: a container that serves tool calls builds the tool routes' models and
the error bodies, never the approvals', the builder's or memory's (``docs/performance.md``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from forms.lazy import exports

if TYPE_CHECKING:
    from forms.surface.tool_result import (
        ConversationStatus,
        FieldRow,
        HandoverRef,
        HookRow,
        StepRow,
        ToolResult,
    )
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
        FORM_ID_PATTERN,
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
    from functions.models.tools import ToolCallRequest, ToolList, WebhookOutcome

_EXPORTS: dict[str, str] = {
    "FieldRow": "forms.surface.tool_result",
    "HandoverRef": "forms.surface.tool_result",
    "HookRow": "forms.surface.tool_result",
    "StepRow": "forms.surface.tool_result",
    "ToolResult": "forms.surface.tool_result",
    "ID_PATTERN": "forms.surface.tools",
    "ApprovalAnswer": "functions.models.approvals",
    "ApprovalDecisionRequest": "functions.models.approvals",
    "ApprovalQueueBody": "functions.models.approvals",
    "ApprovalResult": "functions.models.approvals",
    "BoundAnswerRow": "functions.models.approvals",
    "DecisionNotRecorded": "functions.models.approvals",
    "MAX_NOTE_CHARS": "functions.models.approvals",
    "QueuedApprovalRow": "functions.models.approvals",
    "SettlementRow": "functions.models.approvals",
    "BuilderCallRequest": "functions.models.builder",
    "BuilderResult": "functions.models.builder",
    "BuilderSelection": "functions.models.builder",
    "DraftBody": "functions.models.builder",
    "DraftLine": "functions.models.builder",
    "DraftList": "functions.models.builder",
    "EditLogLine": "functions.models.builder",
    "FormVersionBody": "functions.models.builder",
    "MAX_SELECTION_CHARS": "functions.models.builder",
    "NotPublishableBody": "functions.models.builder",
    "PublishRequest": "functions.models.builder",
    "PublishedVersion": "functions.models.builder",
    "ErrorBody": "functions.models.common",
    "FORM_ID_PATTERN": "functions.models.common",
    "GatewayError": "functions.models.common",
    "IGNORED_IDENTITY_KEYS": "functions.models.common",
    "IgnoresIdentity": "functions.models.common",
    "ON_FIRST_USE": "functions.models.common",
    "OpenApiDocument": "functions.models.common",
    "Unauthorized": "functions.models.common",
    "ConfirmRequest": "functions.models.memory",
    "ExportedKey": "functions.models.memory",
    "FactBody": "functions.models.memory",
    "FactChange": "functions.models.memory",
    "FactChangeKind": "functions.models.memory",
    "FactDeleted": "functions.models.memory",
    "FactDerivation": "functions.models.memory",
    "FactDetail": "functions.models.memory",
    "FactLine": "functions.models.memory",
    "FactList": "functions.models.memory",
    "FactRevisionBody": "functions.models.memory",
    "FactSource": "functions.models.memory",
    "FactSourceIn": "functions.models.memory",
    "FactStatementRequest": "functions.models.memory",
    "FactText": "functions.models.memory",
    "FactUse": "functions.models.memory",
    "FactValueIn": "functions.models.memory",
    "MAX_FACT_TEXT_CHARS": "functions.models.memory",
    "MAX_WORDS_CHARS": "functions.models.memory",
    "MemoryExport": "functions.models.memory",
    "MemoryRefusal": "functions.models.memory",
    "MemorySettingsBody": "functions.models.memory",
    "MemorySettingsRequest": "functions.models.memory",
    "ConversationStatus": "forms.surface.tool_result",
    "ToolCallRequest": "functions.models.tools",
    "ToolList": "functions.models.tools",
    "WebhookOutcome": "functions.models.tools",
}
"""Each public name, by the module that defines it."""

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


# Hidden from type checkers: ``from functions.models import Typo`` stays an error.
if not TYPE_CHECKING:
    __getattr__, __dir__ = exports(globals(), _EXPORTS)  # forms.lazy: loaded on first read
