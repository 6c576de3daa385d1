"""Static extraction of field, step and checkpoint references from form callables.

Form definitions attach plain Python callables to fields and steps: applicability
predicates such as ``lambda v, s: s.step_complete("incident") and v.severity``
and executors such as ``def triage(ctx): ...``.  A misspelt name inside one of
them would otherwise only surface at runtime, usually as a silent ``False``.

:func:`references` reads the callable's source (via :mod:`linecache`), parses
the whole module file once, finds the exact ``def`` or ``lambda`` node the
callable was compiled from and reports every reference it can see:

* ``v.x`` / ``getattr(v, "x")`` on the values root -> field ``x``;
* ``s.step_complete("x")``, ``s.step_applies("x")``, ``s.step_open("x")``
  on the state root -> step ``x``;
* ``s.fired("x")`` on the state root -> checkpoint ``x``;
* ``Jump("x")`` / ``Jump(step="x")`` -> step ``x``;
* ``Patch({"x": ...})`` / ``Patch(values={"x": ...})`` -> field ``x``.

Finding that node is :mod:`forms.callable_source`'s part.  The form compiler
checks these against the form's ids at import time.  Both modules are pure:
they depend on the standard library only.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

from forms.callable_source import FuncNode, Target, locate_function, param_names, resolve_callable

__all__ = ["Ref", "RefKind", "Style", "references"]

RefKind: TypeAlias = Literal["field", "step", "checkpoint"]
Style: TypeAlias = Literal["predicate", "executor"]

_RootKind: TypeAlias = Literal["values", "state", "ctx"]

_STEP_METHODS = frozenset({"step_complete", "step_applies", "step_open"})
_CHECKPOINT_METHODS = frozenset({"fired"})
_CTX_ATTRIBUTES: Mapping[str, _RootKind] = {"values": "values", "state": "state"}


@dataclass(frozen=True, slots=True)
class Ref:
    """One reference to a form id found in a callable's source.

    Attributes:
        kind: what the name must exist as: a field, a step or a checkpoint.
        name: the referenced id, exactly as written.
        where: ``"<file>:<line>"``, the absolute line of the name in the file.
        context: short rendering of the construct, e.g. ``'Jump("review")'``.
    """

    kind: RefKind
    name: str
    where: str
    context: str


def references(fn: Callable[..., object], *, style: Style) -> tuple[Ref, ...] | None:
    """Return every reference in ``fn``'s body, in source order.

    ``style`` says how the parameters are interpreted:

    * ``"predicate"``: parameter 0 is the values root, parameter 1 (if any)
      the state root;
    * ``"executor"``: parameter 0 is a context whose ``.values`` and ``.state``
      are the roots.

    ``functools.partial`` objects, ``__wrapped__`` chains, bound methods and
    callable instances are unwrapped first (bound arguments shift the roots).

    Returns ``None`` when the source cannot be located reliably (builtins,
    code made by ``exec``/``eval``, stale or missing files, ...).  Never raises
    for odd inputs.
    """
    try:
        target = resolve_callable(fn)
        node = locate_function(target.function) if target is not None else None
    except Exception:  # arbitrary user objects may raise anything on attribute access
        return None
    if target is None or node is None:
        return None
    roots = _initial_roots(_root_slots(node, target), style)
    _add_aliases(node, roots)
    return _collect(node, roots, target.function.__code__.co_filename)


# --------------------------------------------------------------------------
# Roots: which names stand for the values, the state and the context
# --------------------------------------------------------------------------


def _root_slots(node: FuncNode, target: Target) -> list[str | None]:
    """Parameter names that receive the caller's positional arguments.

    Parameters filled by a ``partial`` keyword keep their slot but are not
    roots (``None``): the caller's argument can never reach them.
    """
    names = param_names(node)[target.skip :]
    return [None if name in target.bound_keywords else name for name in names]


def _initial_roots(slots: list[str | None], style: Style) -> dict[str, _RootKind]:
    """Map parameter names to the root they stand for, per ``style``."""
    kinds: tuple[_RootKind, ...] = ("values", "state") if style == "predicate" else ("ctx",)
    return {name: kind for name, kind in zip(slots, kinds, strict=False) if name is not None}


def _root_kind(expr: ast.expr, roots: Mapping[str, _RootKind]) -> _RootKind | None:
    """What root ``expr`` evaluates to: a root name, or ``ctx.values``/``ctx.state``."""
    if isinstance(expr, ast.Name):
        return roots.get(expr.id)
    if isinstance(expr, ast.Attribute) and _root_kind(expr.value, roots) == "ctx":
        return _CTX_ATTRIBUTES.get(expr.attr)
    return None


def _add_aliases(node: FuncNode, roots: dict[str, _RootKind]) -> None:
    """Add ``name = <root expr>`` aliases anywhere in the body, to a fixpoint.

    Order and shadowing are ignored: an alias counts everywhere in the body.
    """
    assignments = list(_simple_assignments(node))
    changed = True
    while changed:
        changed = False
        for name, value in assignments:
            kind = _root_kind(value, roots)
            if kind is not None and name not in roots:
                roots[name] = kind
                changed = True


def _simple_assignments(node: FuncNode) -> Iterator[tuple[str, ast.expr]]:
    """Yield ``(name, value)`` for plain assignments to a single name."""
    for sub in _walk_body(node):
        if isinstance(sub, ast.Assign):
            for target in sub.targets:
                if isinstance(target, ast.Name):
                    yield target.id, sub.value
        elif (
            isinstance(sub, ast.AnnAssign | ast.NamedExpr)
            and sub.value is not None
            and isinstance(sub.target, ast.Name)
        ):
            yield sub.target.id, sub.value


def _walk_body(node: FuncNode) -> Iterator[ast.AST]:
    """Every node in the function's body, nested functions included."""
    body: list[ast.stmt] | list[ast.expr] = (
        [node.body] if isinstance(node, ast.Lambda) else node.body
    )
    for part in body:
        yield from ast.walk(part)


# --------------------------------------------------------------------------
# Collecting references
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Found:
    """A reference plus the source position of its name, for ordering."""

    line: int
    col: int
    kind: RefKind
    name: str
    context: str


def _collect(node: FuncNode, roots: Mapping[str, _RootKind], filename: str) -> tuple[Ref, ...]:
    """All references in the body, ordered by where their names appear."""
    found: list[_Found] = []
    for sub in _walk_body(node):
        if isinstance(sub, ast.Attribute):
            found.extend(_from_attribute(sub, roots))
        elif isinstance(sub, ast.Call):
            found.extend(_from_call(sub, roots))
    found.sort(key=lambda f: (f.line, f.col))
    return tuple(Ref(f.kind, f.name, f"{filename}:{f.line}", f.context) for f in found)


def _from_attribute(node: ast.Attribute, roots: Mapping[str, _RootKind]) -> list[_Found]:
    """``v.x`` (a load on the values root) is a reference to field ``x``."""
    if not isinstance(node.ctx, ast.Load) or _root_kind(node.value, roots) != "values":
        return []
    line = node.end_lineno if node.end_lineno is not None else node.lineno
    col = node.end_col_offset if node.end_col_offset is not None else node.col_offset
    return [_Found(line, col, "field", node.attr, ast.unparse(node))]


def _from_call(node: ast.Call, roots: Mapping[str, _RootKind]) -> list[_Found]:
    """References made by calls: getattr, state methods, Jump and Patch."""
    func = node.func
    if isinstance(func, ast.Name) and func.id == "getattr":
        return _from_getattr(node, roots)
    if _callee_name(func) == "Jump":
        return _from_jump(node)
    if _callee_name(func) == "Patch":
        return _from_patch(node)
    if isinstance(func, ast.Attribute) and _root_kind(func.value, roots) == "state":
        return _from_state_method(node, func)
    return []


def _callee_name(func: ast.expr) -> str | None:
    """``Jump`` for both ``Jump(...)`` and ``actions.Jump(...)``."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _from_getattr(node: ast.Call, roots: Mapping[str, _RootKind]) -> list[_Found]:
    """``getattr(v, "x")`` with a constant name is a reference to field ``x``."""
    if len(node.args) < 2 or _root_kind(node.args[0], roots) != "values":
        return []
    name = _string(node.args[1])
    if name is None:
        return []
    context = f"getattr({ast.unparse(node.args[0])}, {_quote(name)})"
    return [_at(node.args[1], "field", name, context)]


def _from_state_method(node: ast.Call, func: ast.Attribute) -> list[_Found]:
    """``s.step_complete("x")`` and friends name a step; ``s.fired("x")`` a checkpoint."""
    kind: RefKind
    if func.attr in _STEP_METHODS:
        kind = "step"
    elif func.attr in _CHECKPOINT_METHODS:
        kind = "checkpoint"
    else:
        return []
    name = _string(node.args[0]) if node.args else None
    if name is None:
        return []
    return [_at(node.args[0], kind, name, f"{ast.unparse(func)}({_quote(name)})")]


def _from_jump(node: ast.Call) -> list[_Found]:
    """``Jump("x")`` or ``Jump(step="x")`` names step ``x``."""
    callee = ast.unparse(node.func)
    found: list[_Found] = []
    if node.args and (name := _string(node.args[0])) is not None:
        found.append(_at(node.args[0], "step", name, f"{callee}({_quote(name)})"))
    for keyword in node.keywords:
        if keyword.arg == "step" and (name := _string(keyword.value)) is not None:
            found.append(_at(keyword.value, "step", name, f"{callee}(step={_quote(name)})"))
    return found


def _from_patch(node: ast.Call) -> list[_Found]:
    """Each constant key of ``Patch({...})`` / ``Patch(values={...})`` names a field."""
    callee = ast.unparse(node.func)
    dicts = [node.args[0]] if node.args else []
    dicts += [k.value for k in node.keywords if k.arg == "values"]
    found: list[_Found] = []
    for literal in dicts:
        if not isinstance(literal, ast.Dict):
            continue
        for key in literal.keys:
            name = _string(key) if key is not None else None
            if key is not None and name is not None:
                found.append(_at(key, "field", name, f"{callee} key {_quote(name)}"))
    return found


def _string(node: ast.expr) -> str | None:
    """The value of a string constant, else ``None``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _quote(name: str) -> str:
    """Render a name as a double-quoted string literal."""
    return json.dumps(name, ensure_ascii=False)


def _at(node: ast.expr, kind: RefKind, name: str, context: str) -> _Found:
    """A reference located at ``node``'s start."""
    return _Found(node.lineno, node.col_offset, kind, name, context)
