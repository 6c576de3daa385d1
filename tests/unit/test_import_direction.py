"""The shape of the tree, checked: which package may import which.

``forms`` (the engine, its tool surface and application service) imports nothing of the project
outside itself, and inside it the layers point one way: the pure core (the modules directly in
``forms/``) imports only the core; forms as data (``forms.documents``) imports the core;
memory (``forms.memory``: the fact vocabulary, facts, recall) imports the core and sits above
it and the documents, which reach it once, for Formwork's own vocabulary when they are given
none (``forms.compile_memory.default_vocabulary``, the one edge that points up); the
model-facing surface (``forms.surface``) imports the core and memory; the storage ports and
adapters (``forms.storage``) import the core, the documents and the facts they store; the
application (``forms.app``) imports all of them; nothing of the engine imports the examples.
``functions`` (the Lambda shell) and ``workflows`` (the Temporal shell) are siblings that never
import each other; both reach the application through ``formwork`` (the settings and the one
bootstrap), which sits above them. No two modules import each other, directly or round a loop,
when the code runs (a name used only in annotations, under ``if TYPE_CHECKING``, may point
back). Read from the source with ``ast``, so imports inside functions count too, and nothing
is imported to check it.
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


def imported(path: Path, *, typing_only: bool = True) -> Iterator[tuple[int, str, tuple[str, ...]]]:
    """(line, module, names) for every import in a file, at any depth; without
    ``typing_only``, the imports under ``if TYPE_CHECKING:`` (never run) are left out."""
    tree = ast.parse(path.read_text(), filename=str(path))
    skipped: set[int] = set()
    if not typing_only:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
                skipped |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
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


CORE = "forms"
LAYERS: dict[str, set[str]] = {
    CORE: {CORE},
    "forms.documents": {CORE, "forms.documents"},
    "forms.memory": {CORE, "forms.memory"},
    "forms.surface": {CORE, "forms.memory", "forms.surface"},
    "forms.storage": {CORE, "forms.documents", "forms.memory", "forms.storage"},
    "forms.app": {
        CORE,
        "forms.documents",
        "forms.memory",
        "forms.surface",
        "forms.storage",
        "forms.app",
    },
}
"""Each layer of ``forms`` and the layers it may import."""
UPWARD = {("forms.compile_memory", "forms.memory.vocabulary")}
"""The one edge from the core to a layer above it, when the code runs: Formwork's own fact
vocabulary, for a form or document declaring keys that was given none
(``forms.compile_memory.default_vocabulary``; every other module asks that function)."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> str | None:
    """The layer a ``forms`` module belongs to (None: the package itself, or the examples)."""
    parts = module.split(".")
    if parts[0] != "forms" or len(parts) == 1 or parts[1] == "examples":
        return None
    sub = f"forms.{parts[1]}"
    return sub if sub in LAYERS else CORE


def resolved(module: str, names: tuple[str, ...]) -> list[str]:
    """The project modules an import statement loads: ``from forms.app import hooks`` loads
    ``forms.app.hooks`` (a submodule), ``from forms.engine import evaluate`` loads
    ``forms.engine``."""
    found = [module]
    for name in names:
        candidate = f"{module}.{name}"
        path = ROOT.joinpath(*candidate.split("."))
        if path.with_suffix(".py").exists() or (path / "__init__.py").exists():
            found.append(candidate)
    return found


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_the_layers_of_forms_point_one_way(layer: str) -> None:
    allowed = LAYERS[layer]
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {target}"
        for path in modules("forms")
        if layer_of(module_name(path)) == layer
        for line, module, names in imported(path)
        for target in resolved(module, names)
        if target.split(".")[0] == "forms" and layer_of(target) not in allowed
        if (module_name(path), target) not in UPWARD
        and not (layer_of(target) == "forms.memory" and typed_only(path, line))
    ]
    assert found == []


def typed_only(path: Path, line: int) -> bool:
    """Whether the import at ``line`` of ``path`` is under ``if TYPE_CHECKING:``: the core and
    the documents name memory's types (``Vocabulary``) in annotations, which may point up."""
    return all(at != line for at, _, _ in imported(path, typing_only=False))


def test_the_core_reaches_memory_through_one_function() -> None:
    # the exception is what it says: one function-level import, and nothing else of the core
    # or the documents imports memory when it runs
    found = {
        (module_name(path), target)
        for path in modules("forms")
        if layer_of(module_name(path)) in (CORE, "forms.documents")
        for _, module, names in imported(path, typing_only=False)
        for target in resolved(module, names)
        if layer_of(target) == "forms.memory"
    }
    assert found == UPWARD
    source = (ROOT / "forms" / "compile_memory.py").read_text()
    top_level = {n.module for n in ast.parse(source).body if isinstance(n, ast.ImportFrom)}
    assert "forms.memory.vocabulary" not in top_level


def test_the_core_is_where_the_layers_say() -> None:
    # the layer test is not vacuous: the modules are found where the layers say
    layers = {layer_of(module_name(p)) for p in modules("forms")}
    assert set(LAYERS) <= layers
    assert layer_of("forms.engine") == CORE and layer_of("forms.app.loop") == "forms.app"


def graph() -> dict[str, set[str]]:
    """Project module -> the project modules it imports when it runs (at any depth)."""
    edges: dict[str, set[str]] = {}
    for package in MAY_NOT_IMPORT:
        for path in modules(package):
            source = module_name(path)
            edges[source] = {
                target
                for _, module, names in imported(path, typing_only=False)
                if module.split(".")[0] in PROJECT
                for target in resolved(module, names)
                if target != source and path.name != "__init__.py"
            }
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(edges.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            group: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(found)


def test_the_import_graph_has_no_cycles() -> None:
    assert cycles(graph()) == []


def test_a_type_only_import_is_left_out_of_the_runtime_graph(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\nimport forms.engine\n"
        "if TYPE_CHECKING:\n    from forms.app import loop\n"
        "def f() -> None:\n    import forms.keys\n"
    )
    assert [m for _, m, _ in imported(source, typing_only=False)] == [
        "typing",
        "forms.engine",
        "forms.keys",
    ]
    assert "forms.app" in [m for _, m, _ in imported(source)]


def test_the_cycle_check_finds_a_cycle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(edges) == [["a", "b", "c"]]
