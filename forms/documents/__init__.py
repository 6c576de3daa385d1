"""Forms as data: the document model, its rule language, its compilation by the one compiler
(``docs/form-documents.md``), and the builder's edits of a draft (its tools: ``BUILDER_TOOLS``).

Every name in ``__all__`` is loaded from its module on first use (PEP 562): a service whose
callers use only code forms never loads the document model or the edit engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from forms.lazy import exports

if TYPE_CHECKING:
    from forms.documents.build import ExecutorRegistry, compile_document, to_definition
    from forms.documents.edit_tools import (
        BUILDER_TOOLS,
        BUILDER_TOOLS_BY_NAME,
        TOOL_ARGUMENTS,
        BuilderTool,
    )
    from forms.documents.edits import (
        Edited,
        EditError,
        Limits,
        Selection,
        apply_edit,
        inspect,
        outline,
        selection_line,
    )
    from forms.documents.model import FormDocument

_EXPORTS = {
    "ExecutorRegistry": "forms.documents.build",
    "compile_document": "forms.documents.build",
    "to_definition": "forms.documents.build",
    "BUILDER_TOOLS": "forms.documents.edit_tools",
    "BUILDER_TOOLS_BY_NAME": "forms.documents.edit_tools",
    "TOOL_ARGUMENTS": "forms.documents.edit_tools",
    "BuilderTool": "forms.documents.edit_tools",
    "Edited": "forms.documents.edits",
    "EditError": "forms.documents.edits",
    "Limits": "forms.documents.edits",
    "Selection": "forms.documents.edits",
    "apply_edit": "forms.documents.edits",
    "inspect": "forms.documents.edits",
    "outline": "forms.documents.edits",
    "selection_line": "forms.documents.edits",
    "FormDocument": "forms.documents.model",
}
"""Where each public name lives: imported from there the first time it is asked for."""

__all__ = [
    "BUILDER_TOOLS",
    "BUILDER_TOOLS_BY_NAME",
    "TOOL_ARGUMENTS",
    "BuilderTool",
    "EditError",
    "Edited",
    "ExecutorRegistry",
    "FormDocument",
    "Limits",
    "Selection",
    "apply_edit",
    "compile_document",
    "inspect",
    "outline",
    "selection_line",
    "to_definition",
]

if not TYPE_CHECKING:  # hidden from type checkers: a misspelt import stays an error
    __getattr__, __dir__ = exports(globals(), _EXPORTS)  # forms.lazy: loaded on first read
