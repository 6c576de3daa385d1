"""The shape of the tree, checked: which package may import which.

``forms`` (the engine, its tool surface and application service) imports nothing of the project
outside itself, and inside it the layers point one way: the pure core (the modules directly in
``forms/``) imports only the core; forms as data (``forms.documents``) imports the core;
memory (``forms.memory``: facts, decay, statements, recall) imports the core and sits above
it and the documents, which never import it, not even for an annotation: the fact vocabulary
the compile check reads is the core's (``forms.vocabulary``, re-exported by memory); the
model-facing surface (``forms.surface``) imports the core and memory; the storage ports and
adapters (``forms.storage``) import the core, the documents and the facts they store; the
application (``forms.app``) imports all of them; nothing of the engine imports the examples.

Above the engine the units point one way too: ``formwork.temporal`` (the Temporal adapter, in
``workflows/``: the dispatcher, the workflows, what serves them) < ``formwork`` (the settings,
the one bootstrap, the processes) < ``formwork.aws`` (the Lambda handlers, in ``functions/``) <
``formwork.infra`` and ``formwork.examples`` (the local stack, the demo). ``formwork`` is the
composition root: the only unit that knows every adapter, so it imports ``formwork.temporal``
(bootstrap builds the Temporal dispatcher when ``FORMWORK_DISPATCH=temporal``), and
``formwork.temporal`` imports nothing else of ``formwork``: it is given its settings as values
of its own types (``formwork.temporal.settings``, which ``formwork.config`` re-exports) and its
App as a protocol, and the worker's process, which calls ``bootstrap``, is ``formwork.worker``.
``formwork.aws`` and ``formwork.temporal`` never import each other. No package imports a
package that imports it back, directly or round a loop, when the code runs (``ALLOWED_BACK``
names the exceptions, each with its reason), and no two modules import each other either.

Read from the source with ``ast``, so imports inside functions count too (they run when the
function does), and nothing is imported to check it. Two kinds of import are left out of the
graphs, as they never run when a module is imported: a name used only in annotations, under
``if TYPE_CHECKING``, and what a module's ``if __name__ == "__main__":`` block imports when it
is run as a program (``python -m formwork.temporal.worker``, the worker's command of earlier
releases, starts ``formwork.worker``).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Iterator, Set
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS: dict[str, str] = {
    "forms": "forms",
    "formwork": "formwork",
    "formwork.temporal": "workflows",
    "formwork.aws": "functions",
    "formwork.infra": "infra",
    "formwork.examples": "examples",
    "bench": "bench",
    "tests": "tests",
}
"""Each unit of the tree (a package, or a shell inside ``formwork``) and the folder its source
is in: the shells install inside the distribution's own package (``functions/`` is
``formwork.aws``; ``formwork/aws`` is a symlink to it, which the walk of ``formwork/`` does not
follow), so the composition root ``formwork`` is the modules of ``formwork/`` itself."""
PROJECT = tuple(FOLDERS)
SHIPPED = (
    "forms",
    "formwork",
    "formwork.temporal",
    "formwork.aws",
    "formwork.infra",
    "formwork.examples",
)
"""The units the distribution installs: the import graphs' nodes. The benches and the tests
are left out: nothing shipped imports them (``MAY_NOT_IMPORT``), and they lean on each other
(a bench builds on ``tests.support``, ``tests/bench`` tests the benches)."""

SHELLS = {"formwork.temporal", "formwork.aws", "formwork.infra", "formwork.examples"}
MAY_NOT_IMPORT: dict[str, set[str]] = {
    "forms": {"formwork", *SHELLS, "bench", "tests"},
    "formwork.aws": {"formwork.temporal", "formwork.infra", "formwork.examples", "bench", "tests"},
    "formwork.temporal": {
        "formwork",
        "formwork.aws",
        "formwork.infra",
        "formwork.examples",
        "bench",
        "tests",
    },
    "formwork": {"formwork.aws", "bench", "tests"},
    "formwork.infra": {"bench", "tests"},
    "formwork.examples": {"bench", "tests"},
}


def unit_of(module: str) -> str:
    """The unit a module belongs to: the longest unit its dotted name starts with
    (``formwork.aws.api`` is the Lambda shell's, ``formwork.bootstrap`` the composition
    root's); a module of no unit (the standard library, a dependency) is its top-level name."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in FOLDERS:
            return ".".join(parts[:n])
    return parts[0]


def modules(unit: str) -> Iterator[Path]:
    yield from sorted((ROOT / FOLDERS[unit]).rglob("*.py"))


TYPE_CHECKING = "TYPE_CHECKING"
PROGRAM = "__name__ == '__main__'"
NOT_ON_IMPORT = (TYPE_CHECKING, PROGRAM)
"""The blocks (by their ``if`` test) whose imports never run when their module is imported:
annotations only, and what a module does when it is run as a program."""


@functools.cache
def parsed(path: Path) -> ast.Module:
    """A source file's tree, read once per run (every test walks the same files)."""
    return ast.parse(path.read_text(), filename=str(path))


def imported(
    path: Path, *, leave_out: tuple[str, ...] = ()
) -> Iterator[tuple[int, str, tuple[str, ...]]]:
    """(line, module, names) for every import in a file, at any depth, but those under an
    ``if`` whose test is in ``leave_out`` (``NOT_ON_IMPORT``: only what runs on import)."""
    tree = parsed(path)
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in leave_out:
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
    # annotations count (a type is a dependency too); a program's own block may start another
    # package's program (the worker's command of earlier releases)
    forbidden = MAY_NOT_IMPORT[package]
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in modules(package)
        for line, module, _ in imported(path, leave_out=(PROGRAM,))
        if unit_of(module) in forbidden
    ]
    assert found == []


def test_no_private_name_is_imported_from_another_package() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {name} from {module}"
        for package in MAY_NOT_IMPORT
        for path in modules(package)
        for line, module, names in imported(path)
        if unit_of(module) in PROJECT and unit_of(module) != package
        for name in names
        if name.startswith("_")
    ]
    assert found == []


def test_the_check_sees_the_imports_it_is_about() -> None:
    # the scan is not vacuous: the shells do import the application and the engine, and the
    # composition root the Temporal adapter
    def targets(package: str, leave_out: tuple[str, ...] = ()) -> set[str]:
        return {
            unit_of(m) for p in modules(package) for _, m, _ in imported(p, leave_out=leave_out)
        }

    assert {"forms", "formwork"} <= targets("formwork.aws")
    assert "forms" in targets("formwork.temporal") and "formwork.temporal" in targets("formwork")
    # AND the one import of formwork in workflows is the old command's, run as a program only
    assert "formwork" in targets("formwork.temporal") - targets("formwork.temporal", (PROGRAM,))
    # the units are told apart inside formwork
    assert unit_of("formwork.aws.pages.render") == "formwork.aws"
    assert unit_of("formwork.bootstrap") == unit_of("formwork") == "formwork"
    assert unit_of("pydantic.main") == "pydantic"


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


def module_name(path: Path) -> str:
    """The dotted name a source file is imported by (``functions/api.py``:
    ``formwork.aws.api``)."""
    folder, *rest = path.relative_to(ROOT).with_suffix("").parts
    unit = next(u for u, f in FOLDERS.items() if f == folder)
    parts = [unit, *rest]
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
    ]
    assert found == []


def test_the_core_checks_fact_keys_without_memory() -> None:
    # the layer test is not vacuous for memory: the core does check fact keys, against a
    # vocabulary of its own (the one Formwork's forms are given when they are given none),
    # and memory builds on that vocabulary, not the other way round
    edges = {
        (module_name(path), target)
        for path in modules("forms")
        for _, module, names in imported(path)
        for target in resolved(module, names)
    }
    assert ("forms.compile_memory", "forms.vocabulary") in edges
    assert ("forms.memory.recall", "forms.vocabulary") in edges
    assert layer_of("forms.vocabulary") == CORE
    assert not {(a, b) for a, b in edges if layer_of(a) == CORE and layer_of(b) == "forms.memory"}


def test_the_core_is_where_the_layers_say() -> None:
    # the layer test is not vacuous: the modules are found where the layers say
    layers = {layer_of(module_name(p)) for p in modules("forms")}
    assert set(LAYERS) <= layers
    assert layer_of("forms.engine") == CORE and layer_of("forms.app.loop") == "forms.app"


def graph() -> dict[str, set[str]]:
    """Shipped module -> the project modules it imports when it runs (at any depth)."""
    edges: dict[str, set[str]] = {}
    for package in SHIPPED:
        for path in modules(package):
            source = module_name(path)
            edges[source] = {
                target
                for _, module, names in imported(path, leave_out=NOT_ON_IMPORT)
                if unit_of(module) in PROJECT
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


def test_a_type_only_or_program_only_import_is_left_out_of_the_runtime_graph(
    tmp_path: Path,
) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\nimport forms.engine\n"
        "if TYPE_CHECKING:\n    from forms.app import loop\n"
        "def f() -> None:\n    import forms.keys\n"
        "if __name__ == '__main__':\n    from formwork.worker import main\n"
    )
    assert [m for _, m, _ in imported(source, leave_out=NOT_ON_IMPORT)] == [
        "typing",
        "forms.engine",
        "forms.keys",
    ]
    assert {"forms.app", "formwork.worker"} <= {m for _, m, _ in imported(source)}


def test_the_cycle_check_finds_a_cycle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(edges) == [["a", "b", "c"]]


# ---------------------------------------------------------------------------- packages

ALLOWED_BACK: dict[tuple[str, str], str] = {
    ("formwork.cli", "formwork.infra.local.__main__"): (
        "the formwork command (the console script) is the program on top of everything, and its "
        "dev subcommand is the local stack's entry, imported in a function when asked for; the "
        "stack runs on formwork (formwork.check), as a program above a library does"
    ),
    ("formwork.cli", "formwork.examples.demo"): (
        "the formwork command's demo subcommand, imported in a function when asked for; the "
        "demo runs on formwork (its settings' defaults), as for dev"
    ),
    ("formwork.aws.pages.posts", "formwork.aws.routing"): (
        "the page forms' post checks log their refusals with the Lambda's one Powertools logger "
        "(formwork.aws.routing.logger), which every route module shares; both sides are the "
        "Lambda shell"
    ),
}
"""Module imports that point back up between packages, each with why it stays: left out of the
package graphs, which are otherwise without a loop."""


def package_of(module: str, *, top: bool) -> str:
    """The package ``module`` belongs to: its unit (``top``: ``forms``, ``formwork`` or one of
    the shells in it), or the folder it is in (a package is its own, ``__init__`` and all)."""
    parts = module.split(".")
    if top:
        return unit_of(module)
    path = ROOT.joinpath(*parts)
    return module if (path / "__init__.py").exists() else ".".join(parts[:-1])


@functools.cache
def module_edges() -> frozenset[tuple[str, str]]:
    """(importer, imported) for every shipped module, packages' ``__init__`` included, and the
    shipped modules it imports when it is imported (at any depth)."""
    return frozenset(
        (module_name(path), target)
        for package in SHIPPED
        for path in modules(package)
        for _, module, names in imported(path, leave_out=NOT_ON_IMPORT)
        if unit_of(module) in SHIPPED
        for target in resolved(module, names)
    )


def package_graph(
    edges: Set[tuple[str, str]], allowed: Iterable[tuple[str, str]], *, top: bool
) -> dict[str, set[str]]:
    """Package -> the packages it imports, from the module ``edges`` less the ``allowed``."""
    graph: dict[str, set[str]] = {}
    for source, target in set(edges) - set(allowed):
        importer, imports = package_of(source, top=top), package_of(target, top=top)
        if importer != imports:
            graph.setdefault(importer, set()).add(imports)
    return graph


@pytest.mark.parametrize("top", [True, False], ids=["top-level", "every-package"])
def test_no_package_imports_a_package_that_imports_it_back(top: bool) -> None:
    # formwork <-> workflows was one (the worker's process called bootstrap from workflows,
    # bootstrap built the Temporal dispatcher): counted with the imports inside functions
    assert cycles(package_graph(module_edges(), ALLOWED_BACK, top=top)) == []


def test_each_edge_allowed_back_is_there_and_closes_a_loop() -> None:
    # the list of exceptions holds nothing stale: each one, counted, makes a package cycle
    edges = module_edges()
    for edge in ALLOWED_BACK:
        assert edge in edges
        others = set(ALLOWED_BACK) - {edge}
        assert cycles(package_graph(edges, others, top=False)) != [], edge


def test_the_package_check_sees_packages_and_their_folders() -> None:
    assert package_of("forms.memory.vocabulary", top=False) == "forms.memory"
    assert package_of("forms.memory", top=False) == "forms.memory"
    assert package_of("formwork.infra.local.__main__", top=False) == "formwork.infra.local"
    assert package_of("forms.memory.vocabulary", top=True) == "forms"
    found = package_graph({("a.x", "b.y"), ("b.y", "a.z"), ("a.x", "a.z")}, (), top=True)
    assert cycles(found) == [["a", "b"]]
    assert ("formwork.services", "formwork.temporal.dispatch") in module_edges()
