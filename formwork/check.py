"""``formwork check``: compile the forms a ``module:attribute`` names and say where each fault is.

The attribute may be one ``FormDef``, a sequence of them, or a ``FormRegistry``. Each form is
compiled on its own, so a fault in one does not hide the faults of the others, and then they
are registered together (two definitions of one version, ids that collide). The compiler stops
at the first rule a form breaks, so a form reports one fault per run. A module that fails to
import (a syntax error, a registry built at import from a broken form) is a fault too, located
at the line of the module that raised.

Locations are ``path:line`` of the part the message names: the reference a predicate or an
executor makes (the compiler gives its line), else the field's annotation, the step's class,
the checkpoint's ``Checkpoint(...)``, or the form's ``FormDef(...)`` call.
"""

from __future__ import annotations

import ast
import inspect
import os
import pkgutil
import re
import sys
import textwrap
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType

import forms
from forms import (
    CompiledForm,
    FormDef,
    FormRegistry,
    InvalidFormDefinition,
    Step,
    compile_form,
)

_ENGINE = Path(forms.__file__).resolve().parent
_REFERENCE = re.compile(r" ?\((?P<path>[^()\s]+\.py):(?P<line>\d+)\)")
_PART = re.compile(r"^form '[^']*': (?P<kind>field|step|checkpoint)(?: id)? '(?P<name>[^']+)'")


class LoadError(Exception):
    """The reference names nothing loadable: a usage error, not a fault in a form."""


@dataclass(frozen=True, slots=True)
class Fault:
    """One definition error: where it is (``path:line``, or empty when unknown) and what."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


@dataclass(slots=True)
class Report:
    """What checking one reference found: the forms that compiled and every fault."""

    reference: str
    compiled: list[CompiledForm] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.faults


def check(reference: str) -> Report:
    """Load ``reference`` (``module:attribute``) and check every form it holds.

    Raises ``LoadError`` when the module does not exist, lacks the attribute, or the attribute
    holds no forms; anything the module raises while importing is reported as a fault.
    """
    module_name, attribute = split(reference)
    report = Report(reference)
    try:
        value = pkgutil.resolve_name(reference)
    except AttributeError as exc:
        if module_name in sys.modules:  # imported: the attribute is what is missing
            raise LoadError(f"{reference}: module {module_name!r} has no {attribute!r}") from None
        report.faults.extend(_import_faults(exc))
        return report
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module_name + ".").startswith(exc.name + "."):
            raise LoadError(f"{reference}: no module named {exc.name!r}") from None
        report.faults.extend(_import_faults(exc))
        return report
    except SyntaxError as exc:
        where = f"{_shown(exc.filename)}:{exc.lineno}" if exc.filename else ""
        report.faults.append(Fault(where, f"SyntaxError: {exc.msg}"))
        return report
    except Exception as exc:
        report.faults.extend(_import_faults(exc))
        return report
    module = sys.modules[module_name]
    definitions = _definitions(reference, value)
    # a registry's forms are checked against its own fact vocabulary (Formwork's otherwise)
    vocabulary = value.vocabulary if isinstance(value, FormRegistry) else None
    together = FormRegistry(vocabulary=vocabulary)
    for definition in definitions:
        try:
            compile_form(definition, vocabulary=vocabulary)
            report.compiled.append(together.register(definition))
        except InvalidFormDefinition as exc:
            report.faults.extend(_fault(definition, problem, module) for problem in exc.problems)
    return report


def _fault(definition: FormDef, message: str, module: ModuleType) -> Fault:
    """The fault at its location; a location the message gives is not repeated in it."""
    return Fault(locate(definition, message, module), _REFERENCE.sub("", message, count=1))


def split(reference: str) -> tuple[str, str]:
    module_name, colon, attribute = reference.partition(":")
    if not colon or not module_name or not attribute.isidentifier():
        raise LoadError(f"{reference!r}: expected MODULE:ATTRIBUTE, e.g. forms.examples:EXAMPLES")
    return module_name, attribute


def _definitions(reference: str, value: object) -> list[FormDef]:
    if isinstance(value, FormDef):
        return [value]
    if isinstance(value, FormRegistry):
        return [form.definition for form in value.forms()]
    if (
        isinstance(value, Sequence)
        and not isinstance(value, str)
        and value
        and all(isinstance(item, FormDef) for item in value)
    ):
        return list(value)
    raise LoadError(
        f"{reference}: expected a FormDef, a non-empty sequence of FormDef or a FormRegistry, "
        f"found {type(value).__name__}"
    )


def _import_faults(exc: BaseException) -> list[Fault]:
    """The module raised while importing: at the deepest line of the user's code that raised,
    the error (each of its problems, for a definition compiled while importing)."""
    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if not frame.filename.startswith("<") and _ENGINE not in Path(frame.filename).parents
    ]
    where = f"{_shown(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
    name = type(exc).__name__
    messages = exc.problems if isinstance(exc, InvalidFormDefinition) else (str(exc),)
    return [Fault(where, f"{name}: {message}".rstrip(": ")) for message in messages]


# ---------------------------------------------------------------------------------- locations


def locate(definition: FormDef, message: str, module: ModuleType) -> str:
    """``path:line`` of the part of ``definition`` that ``message`` names ("" if unknown)."""
    found = _REFERENCE.search(message)
    if found:
        return f"{_shown(found['path'])}:{found['line']}"
    part = _PART.match(message)
    place: tuple[str, int] | None = None
    if part is not None and part["kind"] == "field":
        place = _field_line(definition, part["name"])
    elif part is not None and part["kind"] == "step":
        place = _step_line(definition, part["name"])
    elif part is not None:
        place = _call_line("Checkpoint", part["name"], _files(definition, module))
    place = place or _assignment_line(definition, module)
    place = place or _call_line("FormDef", definition.id, _files(definition, module))
    if place is None:
        path = getattr(module, "__file__", None)
        return _shown(path) if path else ""
    return f"{_shown(place[0])}:{place[1]}"


def _steps(definition: FormDef) -> Iterator[type[Step]]:
    steps = definition.steps if isinstance(definition.steps, Sequence) else ()
    yield from (s for s in steps if isinstance(s, type) and issubclass(s, Step))


def _class_source(step: type[Step]) -> tuple[str, int, ast.ClassDef] | None:
    try:
        path = inspect.getsourcefile(step)
        lines, start = inspect.getsourcelines(step)
    except (OSError, TypeError):
        return None
    node = ast.parse(textwrap.dedent("".join(lines))).body[0]
    if path is None or not isinstance(node, ast.ClassDef):
        return None
    return path, start, node


def _step_line(definition: FormDef, step_id: str) -> tuple[str, int] | None:
    for step in _steps(definition):
        if step.step_id() == step_id and (source := _class_source(step)):
            return source[0], source[1]
    return None


def _field_line(definition: FormDef, field_id: str) -> tuple[str, int] | None:
    for step in _steps(definition):
        source = _class_source(step)
        if source is None:
            continue
        path, start, node = source
        for statement in node.body:
            target = statement.target if isinstance(statement, ast.AnnAssign) else None
            if isinstance(target, ast.Name) and target.id == field_id:
                return path, start + statement.lineno - 1
    return None


def _files(definition: FormDef, module: ModuleType) -> list[str]:
    """Where the form may be written: the named module, then its steps' modules."""
    candidates = [getattr(module, "__file__", None)]
    candidates += [inspect.getsourcefile(step) for step in _steps(definition)]
    return list(dict.fromkeys(path for path in candidates if path))


def _assignment_line(definition: FormDef, module: ModuleType) -> tuple[str, int] | None:
    """The line binding ``definition`` to a module-level name (``travel_claim = FormDef(...)``)."""
    for path in _files(definition, module):
        names = {name for name, value in _globals(path).items() if value is definition}
        for node in _tree(path).body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            targets = [node.target] if isinstance(node, ast.AnnAssign) else targets
            if any(isinstance(t, ast.Name) and t.id in names for t in targets):
                return path, node.lineno
    return None


def _globals(path: str) -> dict[str, object]:
    """The namespace of the loaded module whose file is ``path`` (empty if none is loaded)."""
    for loaded in list(sys.modules.values()):
        if getattr(loaded, "__file__", None) == path:
            return vars(loaded)
    return {}


def _call_line(callee: str, ident: str, paths: Sequence[str]) -> tuple[str, int] | None:
    """The first ``callee(...)`` call whose id (``id=`` or first argument) is ``ident``."""
    for path in paths:
        for node in ast.walk(_tree(path)):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.id if isinstance(node.func, ast.Name) else None
            name = node.func.attr if isinstance(node.func, ast.Attribute) else name
            given = [k.value for k in node.keywords if k.arg == "id"] + node.args[:1]
            if name == callee and any(
                isinstance(g, ast.Constant) and g.value == ident for g in given[:1]
            ):
                return path, node.lineno
    return None


@cache
def _tree(path: str) -> ast.Module:
    try:
        return ast.parse(Path(path).read_text(encoding="utf-8"), filename=path)
    except (OSError, SyntaxError, ValueError):
        return ast.Module(body=[], type_ignores=[])


def _shown(path: str) -> str:
    """``path`` relative to the working directory when it is under it."""
    try:
        return os.path.relpath(path) if not os.path.relpath(path).startswith("..") else path
    except ValueError:
        return path
