"""Formwork's forms engine: definitions as code, an append-only revision log per field,
held answers, rising-edge executors with idempotency keys, and the agent tool surface.

The engine is pure (standard library and pydantic): no clocks, ids, network or storage inside
it. ``FormService`` is the composition root that wires it to a store and a dispatcher.
"""

from forms.app.approvals import Approver
from forms.app.hooks import InProcessDispatcher
from forms.app.service import Caller, FormService
from forms.compiled import CompiledForm
from forms.compiler import compile_form
from forms.definition import Approval, Checkpoint, FormDef, Migration, Step, field
from forms.effects import Complete, Effect, Fail, Jump, Patch, Terminate
from forms.engine import evaluate, transition
from forms.errors import (
    ConflictError,
    FormworkError,
    InvalidFormDefinition,
    StoreError,
    ToolError,
)
from forms.evaluation import Evaluation
from forms.instance import (
    Commit,
    FieldChange,
    FieldHistory,
    FormInstance,
    InstanceState,
    Revision,
    apply_commit,
)
from forms.registry import FormRegistry
from forms.state import FormState, HookContext, Values
from forms.storage import FormStore, InMemoryFormStore
from forms.surface.tools import TOOLS, ToolSpec

__all__ = [
    "TOOLS",
    "Approval",
    "Approver",
    "Caller",
    "Checkpoint",
    "Commit",
    "CompiledForm",
    "Complete",
    "ConflictError",
    "Effect",
    "Evaluation",
    "Fail",
    "FieldChange",
    "FieldHistory",
    "FormDef",
    "FormInstance",
    "FormRegistry",
    "FormService",
    "FormState",
    "FormStore",
    "FormworkError",
    "HookContext",
    "InMemoryFormStore",
    "InProcessDispatcher",
    "InstanceState",
    "InvalidFormDefinition",
    "Jump",
    "Migration",
    "Patch",
    "Revision",
    "Step",
    "StoreError",
    "Terminate",
    "ToolError",
    "ToolSpec",
    "Values",
    "apply_commit",
    "compile_form",
    "evaluate",
    "field",
    "transition",
]
