"""Formwork's forms engine: definitions as code, an append-only revision log per field,
held answers, rising-edge executors with idempotency keys, and the agent tool surface.

The engine is pure (standard library and pydantic): no clocks, ids, network or storage inside
it. ``FormService`` is the composition root that wires it to a store and a dispatcher.

Every name in ``__all__`` is loaded from its module on first use (PEP 562), not when the
package is imported: a Lambda handler that needs only the errors or the tool surface does not
pay for the whole engine at a cold start. ``from forms import X`` works as ever.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from forms.app.approvals import Approver
    from forms.app.conversation import Caller
    from forms.app.hooks import InProcessDispatcher
    from forms.app.service import FormService
    from forms.compiled import CompiledForm
    from forms.compiler import compile_form
    from forms.definition import Approval, Checkpoint, FormDef, Migration, Step, field
    from forms.effects import Complete, Effect, Fail, HandOver, Jump, Patch, Terminate
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

_EXPORTS: dict[str, str] = {
    "Approver": "forms.app.approvals",
    "InProcessDispatcher": "forms.app.hooks",
    "Caller": "forms.app.conversation",
    "FormService": "forms.app.service",
    "CompiledForm": "forms.compiled",
    "compile_form": "forms.compiler",
    "Approval": "forms.definition",
    "Checkpoint": "forms.definition",
    "FormDef": "forms.definition",
    "Migration": "forms.definition",
    "Step": "forms.definition",
    "field": "forms.definition",
    "Complete": "forms.effects",
    "Effect": "forms.effects",
    "Fail": "forms.effects",
    "HandOver": "forms.effects",
    "Jump": "forms.effects",
    "Patch": "forms.effects",
    "Terminate": "forms.effects",
    "evaluate": "forms.engine",
    "transition": "forms.engine",
    "ConflictError": "forms.errors",
    "FormworkError": "forms.errors",
    "InvalidFormDefinition": "forms.errors",
    "StoreError": "forms.errors",
    "ToolError": "forms.errors",
    "Evaluation": "forms.evaluation",
    "Commit": "forms.instance",
    "FieldChange": "forms.instance",
    "FieldHistory": "forms.instance",
    "FormInstance": "forms.instance",
    "InstanceState": "forms.instance",
    "Revision": "forms.instance",
    "apply_commit": "forms.instance",
    "FormRegistry": "forms.registry",
    "FormState": "forms.state",
    "HookContext": "forms.state",
    "Values": "forms.state",
    "FormStore": "forms.storage",
    "InMemoryFormStore": "forms.storage",
    "TOOLS": "forms.surface.tools",
    "ToolSpec": "forms.surface.tools",
}
"""Where each public name lives: imported from there the first time it is asked for."""

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
    "HandOver",
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


if not TYPE_CHECKING:  # hidden from type checkers: ``from forms import Typo`` stays an error

    def __getattr__(name: str) -> Any:
        """A public name, imported from its module on first access and kept (PEP 562)."""
        module = _EXPORTS.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
