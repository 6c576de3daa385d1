"""Finding the ``def`` or ``lambda`` node a Python callable was compiled from.

:func:`resolve_callable` peels ``functools.partial`` objects, bound methods, ``__wrapped__``
chains and callable instances off a callable, down to a plain function and the leading
parameters already bound. :func:`locate_function` reads that function's module source through
:mod:`linecache`, parses it once (the parse is cached) and picks the one node the function's
code was compiled from: by first line, parameter names and name, and for a lambda by the
instruction positions its body must enclose, so two lambdas on one line are told apart. When
the node is not certain the answer is ``None``: a wrong node would report the wrong references.
The module is pure: it depends on the standard library only.
"""

from __future__ import annotations

import ast
import functools
import inspect
import linecache
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import FunctionType
from typing import TypeAlias

FuncNode: TypeAlias = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
_Position: TypeAlias = tuple[int, int, int, int]

_MAX_UNWRAP_LAYERS = 32


# --------------------------------------------------------------------------
# Resolving the callable to a plain Python function
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Target:
    """A plain function plus how many leading parameters are already bound."""

    function: FunctionType
    skip: int
    bound_keywords: frozenset[str]


def resolve_callable(obj: object) -> Target | None:
    """Peel partials, methods, wrappers and callable instances off ``obj``."""
    skip = 0
    bound: set[str] = set()
    for _ in range(_MAX_UNWRAP_LAYERS):
        if isinstance(obj, functools.partial):
            skip += len(obj.args)
            bound.update(obj.keywords)
            obj = obj.func
        elif inspect.ismethod(obj):
            skip += 1
            obj = obj.__func__
        elif hasattr(obj, "__wrapped__"):
            obj = obj.__wrapped__
        elif isinstance(obj, FunctionType):
            return Target(obj, skip, frozenset(bound))
        elif isinstance(obj, type):
            return None
        else:
            call = inspect.getattr_static(type(obj), "__call__", None)
            if not isinstance(call, FunctionType | staticmethod):
                return None
            skip += 0 if isinstance(call, staticmethod) else 1
            obj = call.__func__ if isinstance(call, staticmethod) else call
    return None


# --------------------------------------------------------------------------
# Locating the AST node the function was compiled from
# --------------------------------------------------------------------------


def locate_function(fn: FunctionType) -> FuncNode | None:
    """Find the unique ``def``/``lambda`` node ``fn`` was compiled from."""
    code = fn.__code__
    lines = linecache.getlines(code.co_filename, fn.__globals__)
    if not lines:
        return None
    candidates = _index_source("".join(lines)).get(code.co_firstlineno, ())
    expected_params = list(code.co_varnames[: code.co_argcount])
    matching = [n for n in candidates if param_names(n) == expected_params]
    if code.co_name == "<lambda>":
        lambdas = [n for n in matching if isinstance(n, ast.Lambda)]
        return _pick_lambda(lambdas, _real_positions(code.co_positions()))
    defs = [n for n in matching if not isinstance(n, ast.Lambda) and n.name == code.co_name]
    return defs[0] if len(defs) == 1 else None


@functools.lru_cache(maxsize=64)
def _index_source(source: str) -> Mapping[int, tuple[FuncNode, ...]]:
    """Parse a module once and index its functions by possible first line.

    A ``def`` is indexed under its own line and its first decorator's line
    (``co_firstlineno`` uses the latter); a lambda under its ``lambda`` line.
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    index: dict[int, list[FuncNode]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Lambda):
            index.setdefault(node.lineno, []).append(node)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for line in {node.lineno, *(d.lineno for d in node.decorator_list)}:
                index.setdefault(line, []).append(node)
    return {line: tuple(nodes) for line, nodes in index.items()}


def param_names(node: FuncNode) -> list[str]:
    """Names of the positional parameters, in order."""
    return [a.arg for a in (*node.args.posonlyargs, *node.args.args)]


def _real_positions(
    positions: Iterable[tuple[int | None, int | None, int | None, int | None]],
) -> list[_Position]:
    """Keep instruction positions that cover real source text.

    Bookkeeping instructions (``RESUME``, implicit returns) carry empty or
    missing spans and say nothing about where the lambda is.
    """
    real: list[_Position] = []
    for line, end_line, col, end_col in positions:
        if line is None or end_line is None or col is None or end_col is None:
            continue
        if (end_line, end_col) > (line, col):
            real.append((line, end_line, col, end_col))
    return real


def _pick_lambda(lambdas: Sequence[ast.Lambda], positions: list[_Position]) -> ast.Lambda | None:
    """Choose the lambda whose body encloses all of the code's positions.

    Containing candidates are nested in one another (a lambda inside a lambda),
    so the innermost, the one whose body starts last, is the one compiled.
    Without position information only an unambiguous single candidate is used.
    """
    if not positions:
        return lambdas[0] if len(lambdas) == 1 else None
    containing = [n for n in lambdas if all(_encloses(n.body, p) for p in positions)]
    if not containing:
        return None
    return max(containing, key=lambda n: (n.body.lineno, n.body.col_offset))


def _encloses(node: ast.expr, position: _Position) -> bool:
    """Whether ``node``'s source span contains the instruction span."""
    line, end_line, col, end_col = position
    if node.end_lineno is None or node.end_col_offset is None:
        return False
    starts_inside = (line, col) >= (node.lineno, node.col_offset)
    ends_inside = (end_line, end_col) <= (node.end_lineno, node.end_col_offset)
    return starts_inside and ends_inside
