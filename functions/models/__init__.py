"""The request and response bodies of the tool API, as pydantic models.

Powertools validates requests against these models and builds the OpenAPI document from the
same models, so the document cannot drift from what the handler accepts. One module per
concern: what every body shares and the error bodies (``common``), the tool routes
(``tools``), the webhook route (``webhooks``), the approvals (``approvals``), the builder
(``builder``) and memory (``memory``); every name is importable from ``formwork.aws.models``
as well. A tool's result is ``forms.surface.ToolResult``, the one model the client and the
agents read too.

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
    from formwork.aws.models.approvals import (
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
    from formwork.aws.models.builder import (
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
    from formwork.aws.models.common import (
        FORM_ID_PATTERN,
        IGNORED_IDENTITY_KEYS,
        ON_FIRST_USE,
        ErrorBody,
        GatewayError,
        IgnoresIdentity,
        OpenApiDocument,
        Unauthorized,
    )
    from formwork.aws.models.memory import (
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
    from formwork.aws.models.tools import (
        ToolCallRequest,
        ToolList,
    )
    from formwork.aws.models.webhooks import WebhookOutcome

_EXPORTS: dict[str, str] = {
    "FieldRow": "forms.surface.tool_result",
    "HandoverRef": "forms.surface.tool_result",
    "HookRow": "forms.surface.tool_result",
    "StepRow": "forms.surface.tool_result",
    "ToolResult": "forms.surface.tool_result",
    "ID_PATTERN": "forms.surface.tools",
    "ApprovalAnswer": "formwork.aws.models.approvals",
    "ApprovalDecisionRequest": "formwork.aws.models.approvals",
    "ApprovalQueueBody": "formwork.aws.models.approvals",
    "ApprovalResult": "formwork.aws.models.approvals",
    "BoundAnswerRow": "formwork.aws.models.approvals",
    "DecisionNotRecorded": "formwork.aws.models.approvals",
    "MAX_NOTE_CHARS": "formwork.aws.models.approvals",
    "QueuedApprovalRow": "formwork.aws.models.approvals",
    "SettlementRow": "formwork.aws.models.approvals",
    "BuilderCallRequest": "formwork.aws.models.builder",
    "BuilderResult": "formwork.aws.models.builder",
    "BuilderSelection": "formwork.aws.models.builder",
    "DraftBody": "formwork.aws.models.builder",
    "DraftLine": "formwork.aws.models.builder",
    "DraftList": "formwork.aws.models.builder",
    "EditLogLine": "formwork.aws.models.builder",
    "FormVersionBody": "formwork.aws.models.builder",
    "MAX_SELECTION_CHARS": "formwork.aws.models.builder",
    "NotPublishableBody": "formwork.aws.models.builder",
    "PublishRequest": "formwork.aws.models.builder",
    "PublishedVersion": "formwork.aws.models.builder",
    "ErrorBody": "formwork.aws.models.common",
    "FORM_ID_PATTERN": "formwork.aws.models.common",
    "GatewayError": "formwork.aws.models.common",
    "IGNORED_IDENTITY_KEYS": "formwork.aws.models.common",
    "IgnoresIdentity": "formwork.aws.models.common",
    "ON_FIRST_USE": "formwork.aws.models.common",
    "OpenApiDocument": "formwork.aws.models.common",
    "Unauthorized": "formwork.aws.models.common",
    "ConfirmRequest": "formwork.aws.models.memory",
    "ExportedKey": "formwork.aws.models.memory",
    "FactBody": "formwork.aws.models.memory",
    "FactChange": "formwork.aws.models.memory",
    "FactChangeKind": "formwork.aws.models.memory",
    "FactDeleted": "formwork.aws.models.memory",
    "FactDerivation": "formwork.aws.models.memory",
    "FactDetail": "formwork.aws.models.memory",
    "FactLine": "formwork.aws.models.memory",
    "FactList": "formwork.aws.models.memory",
    "FactRevisionBody": "formwork.aws.models.memory",
    "FactSource": "formwork.aws.models.memory",
    "FactSourceIn": "formwork.aws.models.memory",
    "FactStatementRequest": "formwork.aws.models.memory",
    "FactText": "formwork.aws.models.memory",
    "FactUse": "formwork.aws.models.memory",
    "FactValueIn": "formwork.aws.models.memory",
    "MAX_FACT_TEXT_CHARS": "formwork.aws.models.memory",
    "MAX_WORDS_CHARS": "formwork.aws.models.memory",
    "MemoryExport": "formwork.aws.models.memory",
    "MemoryRefusal": "formwork.aws.models.memory",
    "MemorySettingsBody": "formwork.aws.models.memory",
    "MemorySettingsRequest": "formwork.aws.models.memory",
    "ConversationStatus": "forms.surface.tool_result",
    "ToolCallRequest": "formwork.aws.models.tools",
    "ToolList": "formwork.aws.models.tools",
    "WebhookOutcome": "formwork.aws.models.webhooks",
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


# Hidden from type checkers: ``from formwork.aws.models import Typo`` stays an error.
if not TYPE_CHECKING:
    __getattr__, __dir__ = exports(globals(), _EXPORTS)  # forms.lazy: loaded on first read
