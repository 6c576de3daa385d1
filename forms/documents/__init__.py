"""Forms as data: the document model, its rule language, its compilation by the one compiler
(``docs/form-documents.md``), and the builder's edits of a draft."""

from forms.documents.build import ExecutorRegistry, compile_document, to_definition
from forms.documents.edits import (
    TOOL_ARGUMENTS,
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

__all__ = [
    "TOOL_ARGUMENTS",
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
