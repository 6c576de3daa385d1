"""The shape of the tree, checked: which package may import which.

``forms`` (the engine, its tool surface and application service) imports nothing of the project
outside itself; ``functions`` (the Lambda shell) and ``workflows`` (the Temporal shell) are
siblings that never import each other; both reach the application through ``formwork`` (the
settings and the one bootstrap), which sits above them. Read from the source with ``ast``, so
imports inside functions count too, and nothing is imported to check it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ("forms", "formwork", "functions", "workflows", "infra", "examples", "bench", "tests")

MAY_NOT_IMPORT: dict[str, set[str]] = {
    "forms": {"formwork", "functions", "workflows", "infra", "examples", "bench", "tests"},
    "functions": {"workflows", "infra", "examples", "bench", "tests"},
    "workflows": {"functions", "infra", "examples", "bench", "tests"},
    "formwork": {"bench", "tests"},
}


def modules(package: str) -> Iterator[Path]:
    yield from sorted((ROOT / package).rglob("*.py"))


def imported(path: Path) -> Iterator[tuple[int, str, tuple[str, ...]]]:
    """(line, module, names) for every import in a file, at any depth."""
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, ()
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module, tuple(a.name for a in node.names)


@pytest.mark.parametrize("package", sorted(MAY_NOT_IMPORT))
def test_each_package_imports_only_what_sits_below_it(package: str) -> None:
    forbidden = MAY_NOT_IMPORT[package]
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in modules(package)
        for line, module, _ in imported(path)
        if module.split(".")[0] in forbidden
    ]
    assert found == []


def test_no_private_name_is_imported_from_another_package() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {name} from {module}"
        for package in MAY_NOT_IMPORT
        for path in modules(package)
        for line, module, names in imported(path)
        if module.split(".")[0] in PROJECT and module.split(".")[0] != package
        for name in names
        if name.startswith("_")
    ]
    assert found == []


def test_the_check_sees_the_imports_it_is_about() -> None:
    # the scan is not vacuous: the shells do import the application and the engine
    def targets(package: str) -> set[str]:
        return {m.split(".")[0] for p in modules(package) for _, m, _ in imported(p)}

    assert {"forms", "formwork"} <= targets("functions")
    assert {"forms", "formwork"} <= targets("workflows")
    assert "workflows" in targets("formwork")
