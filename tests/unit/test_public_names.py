"""The shells use the application and the model-facing surface through their public names only.

``forms.app`` and ``forms.surface`` each name their public API in ``__all__``. The rule, read
from the shells' source (``formwork.aws``, ``formwork``, ``formwork.temporal``, ``formwork.infra``,
``formwork.examples``;
the benches and the tests may reach inside): a shell imports a name of either package only if
the package's ``__all__`` lists it, from the package (``from forms.app import FormService``) or
from a module of it (``from forms.app.service import FormService``; the same object, so a
shell's import line may name the module it means, and a module the name is re-exported from
serves as well). Never a private (``_x``) name, and never a module as such (``import
forms.app.service``, ``from forms.app import service``) unless ``__all__`` lists it: a few
public names are modules, each named for the one use case it serves (``forms.app.canvas``,
whose ``canvas`` a shell imports from it), as a package's attribute of a module's name is that
module once it is loaded (Python sets it), never a function loaded lazily in its place.
``NOT_YET_PUBLIC`` names what a shell still imports that is not public, each with why.

Read with ``ast`` as the import direction test reads (``imported``): imports inside functions
count, and so do those under ``if TYPE_CHECKING`` (a type a shell names is its API too).
The packages' own lists are checked here as well: ``__all__`` is the lazily loaded map
(``_EXPORTS``, PEP 562), which is the names the type checker sees, and the public modules; the
map holds no module's name; each name is the object of the module the map names; and importing
a package loads none of its modules.
"""

from __future__ import annotations

import ast
import functools
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.test_import_direction import ROOT, imported, modules

PACKAGES = ("forms.app", "forms.surface")
SHELLS = ("formwork.aws", "formwork", "formwork.temporal", "formwork.infra", "formwork.examples")

NOT_YET_PUBLIC: dict[tuple[str, str], str] = {
    ("forms.app.behind", "PROCESS"): (
        "the process-wide Behind a Memory built without one shares, and what an "
        "AfterResponse built by hand waits for (formwork.aws.after_response's default; the "
        "function's own waits for its App's, App.behind). Issue 25 item 2 makes such "
        "globals parts of the App: PROCESS goes then, and is not made public meanwhile"
    ),
}
"""(module, name) a shell imports that its package does not make public, and why it stays."""


def init(package: str) -> Path:
    return ROOT.joinpath(*package.split("."), "__init__.py")


@functools.cache
def assigned(package: str, target: str) -> ast.expr:
    """The value the package's ``__init__`` assigns to ``target`` at its top level."""
    tree = ast.parse(init(package).read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == target for t in node.targets
        ):
            return node.value
    raise AssertionError(f"{package} assigns no {target}")


def public(package: str) -> list[str]:
    """The package's ``__all__``, as written."""
    value = ast.literal_eval(assigned(package, "__all__"))
    assert isinstance(value, list)
    return value


def exported(package: str) -> dict[str, str]:
    """The package's lazy map: each public name, by the module it is loaded from."""
    value = ast.literal_eval(assigned(package, "_EXPORTS"))
    assert isinstance(value, dict)
    return value


def typed(package: str) -> dict[str, str]:
    """The names the package's ``if TYPE_CHECKING:`` block imports, by their module."""
    tree = ast.parse(init(package).read_text())
    return {
        alias.name: stmt.module
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
        for stmt in node.body
        if isinstance(stmt, ast.ImportFrom) and stmt.module
        for alias in stmt.names
    }


def is_module(package: str, name: str) -> bool:
    path = ROOT.joinpath(*package.split("."), name)
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def refusals(path: Path) -> list[tuple[str, str, str]]:
    """(where, module, name) of each import in ``path`` that is not a public name of the
    application or the surface, at any depth of the file."""
    found: list[tuple[str, str, str]] = []
    for line, module, names in imported(path):
        package = next((p for p in PACKAGES if module == p or module.startswith(p + ".")), None)
        if package is None:
            continue
        where = f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name}:{line}"
        if not names and module != package and module[len(package) + 1 :] not in public(package):
            found.append((where, module, "(the module)"))
        found += [
            (where, module, name)
            for name in names
            if name.startswith("_") or name not in public(package)
        ]
    return found


def shell_refusals() -> list[tuple[str, str, str]]:
    return [found for shell in SHELLS for path in modules(shell) for found in refusals(path)]


def test_the_shells_import_only_public_names() -> None:
    found = [
        f"{where} imports {name} from {module}"
        for where, module, name in shell_refusals()
        if (module, name) not in NOT_YET_PUBLIC
    ]
    assert found == []


def test_each_name_not_yet_public_is_still_imported_and_still_not_public() -> None:
    # the list of exceptions holds nothing stale: a shell still imports each, and it is still
    # refused (not made public since)
    refused = {(module, name) for _, module, name in shell_refusals()}
    assert set(NOT_YET_PUBLIC) <= refused


def test_the_check_refuses_what_the_rule_says(tmp_path: Path) -> None:
    # GIVEN a shell's module with every kind of import the rule is about, one inside a
    # function and one for annotations only
    source = tmp_path / "shell.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "from forms.app import FormService\n"
        "from forms.app.service import FormService as Service\n"
        "from forms.app.service import _private\n"
        "from forms.app import service\n"
        "import forms.app.loop\n"
        "import forms.surface\n"
        "import forms.app.canvas\n"
        "from forms.app import canvas\n"
        "from forms.app.canvas import canvas as draw\n"
        "from forms.app.canvas import CanvasItem\n"
        "from forms.engine import evaluate\n"
        "if TYPE_CHECKING:\n"
        "    from forms.surface.view import private_helper\n"
        "def later() -> None:\n"
        "    from forms.surface.tools import ToolSpec, not_listed\n"
    )
    # WHEN it is checked THEN what is public passes (from the package or from a module of
    # it, a public module), and the rest is refused, whatever depth it is imported at
    assert [(module, name) for _, module, name in refusals(source)] == [
        ("forms.app.service", "_private"),
        ("forms.app", "service"),
        ("forms.app.loop", "(the module)"),
        ("forms.app.canvas", "CanvasItem"),
        ("forms.surface.view", "private_helper"),
        ("forms.surface.tools", "not_listed"),
    ]


def test_the_check_sees_the_shells_imports() -> None:
    # not vacuous: the shells do import the application and the surface, from both packages
    seen = {
        (module.split(".")[1], name)
        for shell in SHELLS
        for path in modules(shell)
        for _, module, names in imported(path)
        if module.startswith(PACKAGES)
        for name in names
    }
    assert {("app", "FormService"), ("surface", "ToolResult")} <= seen


@pytest.mark.parametrize("package", PACKAGES)
def test_all_is_the_lazy_map_and_what_the_type_checker_sees(package: str) -> None:
    names = public(package)
    assert len(names) == len(set(names))
    assert set(names) == set(exported(package)) | {n for n in names if is_module(package, n)}
    assert typed(package) == exported(package)
    # a name loaded lazily in a module's name would stand in for the module on the package:
    # ``import forms.app.x as m`` would then be given the function
    assert [name for name in exported(package) if is_module(package, name)] == []


@pytest.mark.parametrize("package", PACKAGES)
def test_each_public_name_is_the_object_its_module_defines(package: str) -> None:
    # GIVEN the package, whose names load lazily WHEN each is read THEN it is the object of the
    # module the map names
    loaded = importlib.import_module(package)
    for name, module in exported(package).items():
        assert getattr(loaded, name) is getattr(importlib.import_module(module), name), name
    assert set(dir(loaded)) >= set(exported(package))


def test_importing_the_packages_loads_none_of_their_modules() -> None:
    # GIVEN a fresh interpreter WHEN both packages are imported, then one name of the
    # application THEN the packages alone load no module of theirs, and the name its own
    code = (
        "import json, sys\n"
        "import forms.app, forms.surface\n"
        "def loaded(): return sorted(m for m in sys.modules if m.startswith(('forms.app.', "
        "'forms.surface.')))\n"
        "alone = loaded()\n"
        "from forms.app import Behind\n"
        "print(json.dumps([alone, loaded()]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [[], ["forms.app.behind"]]
