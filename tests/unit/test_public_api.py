"""The public surface of ``forms`` is what ``__all__`` names; pin it so changes are deliberate."""

import importlib
import json
import subprocess
import sys
from pathlib import Path

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
    "HandOver",
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


def test_each_name_is_the_object_its_module_defines() -> None:
    # GIVEN the package, whose names load lazily WHEN each is read THEN it is the very object
    # of the module it is loaded from (``from forms import X`` and ``forms.module.X`` agree)
    assert set(forms._EXPORTS) == EXPECTED
    for name, module in forms._EXPORTS.items():
        assert getattr(forms, name) is getattr(importlib.import_module(module), name)
    assert set(dir(forms)) >= EXPECTED


def test_importing_forms_loads_none_of_the_engine_until_a_name_is_used() -> None:
    # GIVEN a fresh interpreter
    code = (
        "import json, sys\n"
        "import forms\n"
        "alone = sorted(m for m in sys.modules if m.startswith('forms.'))\n"
        "from forms import ToolError\n"
        "errors = sorted(m for m in sys.modules if m.startswith('forms.'))\n"
        "print(json.dumps([alone, errors]))\n"
    )
    # WHEN forms is imported, then one name from it
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        check=True,
    )
    # THEN the package alone loads no submodule, and a name loads only its own module
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [[], ["forms.errors"]]
