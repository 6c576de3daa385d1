"""The public surface of ``forms`` is what ``__all__`` names; pin it so changes are deliberate."""

import forms

EXPECTED = {
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
}


def test_all_names_exactly_the_public_surface() -> None:
    # GIVEN the package WHEN its __all__ is read THEN it is the pinned set, and each name exists
    assert set(forms.__all__) == EXPECTED
    for name in forms.__all__:
        assert getattr(forms, name) is not None
