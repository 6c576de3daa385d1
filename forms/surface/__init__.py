"""What the model reads: the tool specs and their input schemas, the vendor export shapes, the
form's views and status lines, and the results and errors a tool call returns.

Built on the pure core (the modules directly in ``forms``) and nothing else; the application
layer (``forms.app``) uses it to answer tool calls.

``__all__`` is the surface's public API: what the application layer and the shells (the Lambda
functions, the client, the agents, MCP) may use. Each name is loaded from its module on first
use (PEP 562), not when the package is imported, so a handler that needs one pays for no other;
``from forms.surface import ToolResult`` and ``from forms.surface.tool_result import
ToolResult`` name the same object. ``status_line`` is the module, whose ``status_line`` is
imported from it: a function loaded lazily under a module's name would stand in for the module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from forms.lazy import exports

if TYPE_CHECKING:
    from forms.surface.facts import (
        REFUSAL_STATUS,
        changed,
        fact_body,
        fact_lines,
        revision_body,
        settings_body,
    )
    from forms.surface.formats import (
        FORMATS,
        STRICT_FORMATS,
        TOOL_FORMATS,
        Format,
        StrictFormat,
        Tool,
        ToolFormat,
        model_tools,
        tool_definitions,
    )
    from forms.surface.outline import outline_lines
    from forms.surface.plain import inline, result_text
    from forms.surface.recalled import (
        CLAIM_PREFIX,
        from_account,
        late_clause,
        memory_mark,
        short_label,
        standing,
    )
    from forms.surface.results import (
        Result,
        as_json,
        cleared_result,
        closed_since,
        count,
        describe_validation,
        error_result,
        fill_result,
        hook_report,
        not_ready,
        recalled_summary,
        revise_result,
        submitted_result,
        with_status_line,
    )
    from forms.surface.strict import NotStrict, strict_arguments, strict_definitions
    from forms.surface.tool_result import (
        BUSY,
        ConversationStatus,
        FieldRow,
        HandoverRef,
        HookRow,
        StepRow,
        ToolResult,
    )
    from forms.surface.tools import (
        ID_PATTERN,
        TOOLS,
        TOOLS_BY_NAME,
        WRITES,
        FormAbandonArgs,
        FormFillArgs,
        FormListArgs,
        FormReadArgs,
        FormReviseArgs,
        FormStartArgs,
        ToolSpec,
        check_id,
    )
    from forms.surface.unavailable import (
        BACKEND_UNAVAILABLE,
        builder_unavailable,
        forms_unavailable,
    )
    from forms.surface.view import (
        closed_view,
        field_row,
        field_view,
        outline_view,
        step_state,
        step_view,
        undo_redo,
    )

_EXPORTS = {
    "REFUSAL_STATUS": "forms.surface.facts",
    "changed": "forms.surface.facts",
    "fact_body": "forms.surface.facts",
    "fact_lines": "forms.surface.facts",
    "revision_body": "forms.surface.facts",
    "settings_body": "forms.surface.facts",
    "FORMATS": "forms.surface.formats",
    "STRICT_FORMATS": "forms.surface.formats",
    "TOOL_FORMATS": "forms.surface.formats",
    "Format": "forms.surface.formats",
    "StrictFormat": "forms.surface.formats",
    "Tool": "forms.surface.formats",
    "ToolFormat": "forms.surface.formats",
    "model_tools": "forms.surface.formats",
    "tool_definitions": "forms.surface.formats",
    "outline_lines": "forms.surface.outline",
    "inline": "forms.surface.plain",
    "result_text": "forms.surface.plain",
    "CLAIM_PREFIX": "forms.surface.recalled",
    "from_account": "forms.surface.recalled",
    "late_clause": "forms.surface.recalled",
    "memory_mark": "forms.surface.recalled",
    "short_label": "forms.surface.recalled",
    "standing": "forms.surface.recalled",
    "Result": "forms.surface.results",
    "as_json": "forms.surface.results",
    "cleared_result": "forms.surface.results",
    "closed_since": "forms.surface.results",
    "count": "forms.surface.results",
    "describe_validation": "forms.surface.results",
    "error_result": "forms.surface.results",
    "fill_result": "forms.surface.results",
    "hook_report": "forms.surface.results",
    "not_ready": "forms.surface.results",
    "recalled_summary": "forms.surface.results",
    "revise_result": "forms.surface.results",
    "submitted_result": "forms.surface.results",
    "with_status_line": "forms.surface.results",
    "NotStrict": "forms.surface.strict",
    "strict_arguments": "forms.surface.strict",
    "strict_definitions": "forms.surface.strict",
    "BUSY": "forms.surface.tool_result",
    "ConversationStatus": "forms.surface.tool_result",
    "FieldRow": "forms.surface.tool_result",
    "HandoverRef": "forms.surface.tool_result",
    "HookRow": "forms.surface.tool_result",
    "StepRow": "forms.surface.tool_result",
    "ToolResult": "forms.surface.tool_result",
    "ID_PATTERN": "forms.surface.tools",
    "TOOLS": "forms.surface.tools",
    "TOOLS_BY_NAME": "forms.surface.tools",
    "WRITES": "forms.surface.tools",
    "FormAbandonArgs": "forms.surface.tools",
    "FormFillArgs": "forms.surface.tools",
    "FormListArgs": "forms.surface.tools",
    "FormReadArgs": "forms.surface.tools",
    "FormReviseArgs": "forms.surface.tools",
    "FormStartArgs": "forms.surface.tools",
    "ToolSpec": "forms.surface.tools",
    "check_id": "forms.surface.tools",
    "BACKEND_UNAVAILABLE": "forms.surface.unavailable",
    "builder_unavailable": "forms.surface.unavailable",
    "forms_unavailable": "forms.surface.unavailable",
    "closed_view": "forms.surface.view",
    "field_row": "forms.surface.view",
    "field_view": "forms.surface.view",
    "outline_view": "forms.surface.view",
    "step_state": "forms.surface.view",
    "step_view": "forms.surface.view",
    "undo_redo": "forms.surface.view",
}
"""Each public name, by the module that defines it."""

__all__ = [
    "BACKEND_UNAVAILABLE",
    "BUSY",
    "CLAIM_PREFIX",
    "FORMATS",
    "ID_PATTERN",
    "REFUSAL_STATUS",
    "STRICT_FORMATS",
    "TOOLS",
    "TOOLS_BY_NAME",
    "TOOL_FORMATS",
    "WRITES",
    "ConversationStatus",
    "FieldRow",
    "FormAbandonArgs",
    "FormFillArgs",
    "FormListArgs",
    "FormReadArgs",
    "FormReviseArgs",
    "FormStartArgs",
    "Format",
    "HandoverRef",
    "HookRow",
    "NotStrict",
    "Result",
    "StepRow",
    "StrictFormat",
    "Tool",
    "ToolFormat",
    "ToolResult",
    "ToolSpec",
    "as_json",
    "builder_unavailable",
    "changed",
    "check_id",
    "cleared_result",
    "closed_since",
    "closed_view",
    "count",
    "describe_validation",
    "error_result",
    "fact_body",
    "fact_lines",
    "field_row",
    "field_view",
    "fill_result",
    "forms_unavailable",
    "from_account",
    "hook_report",
    "inline",
    "late_clause",
    "memory_mark",
    "model_tools",
    "not_ready",
    "outline_lines",
    "outline_view",
    "recalled_summary",
    "result_text",
    "revise_result",
    "revision_body",
    "settings_body",
    "short_label",
    "standing",
    "status_line",
    "step_state",
    "step_view",
    "strict_arguments",
    "strict_definitions",
    "submitted_result",
    "tool_definitions",
    "undo_redo",
    "with_status_line",
]


# Hidden from type checkers: ``from forms.surface import Typo`` stays an error.
if not TYPE_CHECKING:
    __getattr__, __dir__ = exports(globals(), _EXPORTS)  # forms.lazy: loaded on first read
