"""Powertools' and Temporal's re-exporting packages, loaded a name at a time (a cold start).

Python runs a package's ``__init__`` before any module in it, so importing the one resolver a
function uses (``aws_lambda_powertools.event_handler.api_gateway``) still runs
``aws_lambda_powertools/event_handler/__init__.py``, which imports every resolver Powertools
has (AppSync's with ``asyncio``, Bedrock's, VPC Lattice's, the HTTP resolver's), and
``aws_lambda_powertools/utilities/data_classes/__init__.py``, which imports the data class of
every event source Lambda knows (S3, SQS, Kinesis, CodePipeline, ...). A tool call uses one
resolver and one event class; together the rest were about a tenth of ``import
formwork.aws.api``. The batch utility's ``__init__`` imports its processors, the async one
with ``asyncio``: the relay takes only its exceptions (``formwork.aws.relay.partial_response``).
Temporal's ``temporalio.service`` imports the messages of every service it has a client for;
the backlog function asks the workflow service alone, and the cloud, operator and test
services' packages (their messages, some forty modules) were 0.07x ``import boto3`` of its
cold start.

These ``__init__`` files only re-export names from their submodules (Temporal's also, in a
``try`` block, its gRPC stubs when ``grpc`` is installed: those names are left to the real
``__init__``). ``install`` puts a finder first on ``sys.meta_path`` that, for the packages in
``DEFERRED`` and nothing else, returns the package's own spec with a loader that runs no code
at import: the package module gets a PEP 562 ``__getattr__`` that imports a re-exported name
from the submodule its ``__init__`` takes it from (read from that file's ``from .x import y``
statements), a submodule by its name, and, for any other name (``__all__`` among them), runs
the real ``__init__`` once and answers from it. So ``from aws_lambda_powertools.event_handler
import APIGatewayHttpResolver`` imports ``api_gateway`` and what it needs, and nothing else;
any name the package has is still there. A package whose ``__init__`` does anything but
re-export (a statement other than its docstring, ``from`` imports of its own submodules and
``__all__``) is imported as usual, so a Powertools (or Temporal) release that changes one costs
the cold start again rather than changing behaviour. A package imported before ``install`` ran
is left as it is.

``formwork.aws`` (``functions/__init__.py``) installs it, so it applies before any handler
module imports Powertools.
"""

from __future__ import annotations

import ast
import importlib
import importlib.machinery
import sys
import threading
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from importlib.abc import Loader

DEFERRED = frozenset(
    {
        "aws_lambda_powertools.event_handler",
        "aws_lambda_powertools.utilities.batch",
        "aws_lambda_powertools.utilities.data_classes",
        # temporalio.service imports every service's messages; the backlog uses the workflow
        # service's alone (its task queue's DescribeTaskQueue), never these three
        "temporalio.api.cloud.cloudservice.v1",
        "temporalio.api.operatorservice.v1",
        "temporalio.api.testservice.v1",
    }
)
"""The packages whose ``__init__`` runs on first need (each only re-exports)."""


def reexports(source: str, package: str) -> dict[str, str] | None:
    """Each name a package's ``__init__`` (``source``) re-exports, and the submodule it comes
    from; None when the file does anything else (then it runs as usual)."""
    names: dict[str, str] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.level == 1:
                module = f"{package}.{node.module}"
            elif node.level == 0 and node.module.startswith(f"{package}."):
                module = node.module
            else:
                return None
            for alias in node.names:
                if alias.name == "*":
                    return None
                names[alias.asname or alias.name] = module
        elif _is_docstring(node) or _is_all(node) or _is_optional(node):
            continue  # an optional part's names are left to the real ``__init__``
        else:
            return None
    return names


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def _is_all(node: ast.stmt) -> bool:
    return isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["__all__"]


def _is_optional(node: ast.stmt) -> bool:
    """``try:`` imports (and ``__all__.extend(...)``) ``except ImportError: pass``: names a
    package has when an optional dependency is installed (temporalio's gRPC stubs)."""
    if not isinstance(node, ast.Try) or node.orelse or node.finalbody or len(node.handlers) != 1:
        return False
    handler = node.handlers[0]
    if handler.type is None or ast.unparse(handler.type) != "ImportError" or handler.name:
        return False
    return all(map(_import_or_extend, node.body)) and all(
        isinstance(stmt, ast.Pass) for stmt in handler.body
    )


def _import_or_extend(node: ast.stmt) -> bool:
    if isinstance(node, ast.Import | ast.ImportFrom):
        return True
    return isinstance(node, ast.Expr) and ast.unparse(node.value).startswith("__all__.extend(")


def package_getattr(
    module: ModuleType, names: dict[str, str], run_init: Callable[[], None]
) -> Callable[[str], Any]:
    """The ``__getattr__`` of a package whose ``__init__`` has not run: a re-exported name from
    its submodule, a submodule by name, anything else from the real ``__init__`` (run once; a
    thread that asks meanwhile waits for it)."""
    package = module.__name__
    ran = False
    running = threading.RLock()

    def lookup(name: str) -> Any:
        nonlocal ran
        if name in names and not ran:
            value = getattr(importlib.import_module(names[name]), name)
            setattr(module, name, value)
            return value
        if not name.startswith("__"):
            try:
                return importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as error:
                if error.name != f"{package}.{name}":
                    raise
        with running:
            if not ran:
                ran = True
                run_init()
        if name in module.__dict__:
            return module.__dict__[name]
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return lookup


class _DeferredInit:
    """The loader of a package in ``DEFERRED``: the real loader's module, its ``__init__``
    left for ``package_getattr`` to run; anything else is the real loader's."""

    def __init__(self, loader: Any, names: dict[str, str]) -> None:
        self.loader = loader
        self.names = names

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        created: ModuleType | None = self.loader.create_module(spec)
        return created

    def exec_module(self, module: ModuleType) -> None:
        def run_init() -> None:
            self.loader.exec_module(module)

        module.__getattr__ = package_getattr(module, self.names, run_init)  # type: ignore[method-assign]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loader, name)


class DeferredInitFinder:
    """On ``sys.meta_path``: the spec of a package in ``DEFERRED`` with ``_DeferredInit`` as
    its loader; no spec (the next finder's turn) for any other name."""

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        del target
        if name not in DEFERRED:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not spec.origin:
            return None
        with open(spec.origin, encoding="utf-8") as file:
            names = reexports(file.read(), name)
        if names is None:
            return None
        spec.loader = cast("Loader", _DeferredInit(spec.loader, names))
        return spec


def install() -> None:
    """Put ``DeferredInitFinder`` first on ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, DeferredInitFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, DeferredInitFinder())
