"""Forms as data: the document model, its rule language, and its compilation by the one
compiler (``docs/form-documents.md``)."""

from forms.documents.build import ExecutorRegistry, compile_document, to_definition
from forms.documents.model import FormDocument

__all__ = ["ExecutorRegistry", "FormDocument", "compile_document", "to_definition"]
