"""Compiling steps and fields: their checks, their compiled index and the names they answer to.

``check_steps`` checks each step class: a snake_case id used once, a title, callable hooks, and
type annotations and ``field(...)`` declarations that match one to one; ``check_unique_fields``
that a field is declared in one step only. ``build_index`` turns steps and fields into
``CompiledStep`` and ``CompiledField`` in definition order, compiling each field's type (its
annotation resolved in the step's module) and checking that its example is a valid answer.
``check_aliases`` and ``check_step_aliases`` build the alias indexes: every id, label and
declared alias, normalised, names exactly one field (or step), so resolving a spelling is never
a guess.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from forms.compile_checks import Problems, arity, fail
from forms.compiled import CompiledField, CompiledStep, normalise
from forms.definition import FieldSpec, FormDef, Step
from forms.errors import InvalidFormDefinition
from forms.schema import FieldType, Rejected, field_type

_STEP_ID = re.compile(r"^[a-z][a-z0-9_]{0,62}$")
_PARENTHESIS = re.compile(r"\s*\([^()]*\)\s*$")


def check_steps(definition: FormDef, problems: Problems) -> list[type[Step]]:
    """Each step's own rules, each broken one recorded in ``problems``. Returns the steps the
    index can be built from (Step classes, each id once), whatever else they break."""
    if not definition.steps:
        with problems.each():
            raise fail(definition, "has no steps")
    seen: set[str] = set()
    usable: list[type[Step]] = []
    for step in definition.steps:
        is_step = isinstance(step, type) and issubclass(step, Step)
        if is_step and _shadowing(step):
            with problems.each():
                _check_names_free(definition, step)
            continue  # its own methods are gone: nothing more can be asked of it
        if is_step and step.step_id() not in seen:
            usable.append(step)
        with problems.each():
            _check_step(definition, step, seen)
    return usable


STEP_METHODS = frozenset(
    name
    for name, value in vars(Step).items()
    if isinstance(value, classmethod) and not name.startswith("_")
)
"""What a field may not be called: the Step methods the compiler asks a step class."""


def _shadowing(step: type[Step]) -> list[str]:
    return sorted(n for n in STEP_METHODS if isinstance(step.__dict__.get(n), FieldSpec))


def _check_names_free(definition: FormDef, step: type[Step]) -> None:
    if names := _shadowing(step):
        raise fail(
            definition,
            f"step class {step.__name__}: {', '.join(repr(n) for n in names)} "
            f"{'is a name' if len(names) == 1 else 'are names'} the compiler asks every step "
            f"for ({', '.join(sorted(STEP_METHODS))}); rename the field",
        )


def _check_step(definition: FormDef, step: type[Step], seen: set[str]) -> None:
    if not (isinstance(step, type) and issubclass(step, Step)):
        raise fail(definition, f"{step!r} is not a Step subclass")
    step_id = step.step_id()
    if not _STEP_ID.match(step_id):
        raise fail(definition, f"step id {step_id!r} must be snake_case")
    if step_id in seen:
        raise fail(definition, f"step id {step_id!r} is used twice")
    seen.add(step_id)
    _check_annotations_are_fields(definition, step)
    title = step.setting("title")
    if not isinstance(title, str) or not title.strip():
        raise fail(definition, f"step {step_id!r} has no title")
    for name in ("preview", "guidance"):
        if step.setting(name) is not None and not isinstance(step.setting(name), str):
            raise fail(definition, f"step {step_id!r}: {name} must be text")
    if not step.field_specs():
        raise fail(definition, f"step {step_id!r} declares no fields")
    for name in ("when", "on_complete"):
        value = step.setting(name)
        if value is not None and not callable(value):
            raise fail(definition, f"step {step_id!r}: {name} is not callable")


def _check_annotations_are_fields(definition: FormDef, step: type[Step]) -> None:
    """Every annotation is a field(...) and every field(...) has an annotation (its type)."""
    specs = step.field_specs()
    annotated = inspect.get_annotations(step)
    for name, value in vars(step).items():
        if isinstance(value, FieldSpec) and name not in annotated:
            raise fail(
                definition,
                f"step {step.step_id()!r}: {name!r} is declared with field(...) but has no type "
                f"annotation; write `{name}: <type> = field(...)`",
            )
    for name in inspect.get_annotations(step):
        if name.startswith("_"):
            raise fail(definition, f"step {step.step_id()!r}: field {name!r} may not start with _")
        if name not in specs and not str(inspect.get_annotations(step)[name]).startswith(
            ("ClassVar", "typing.ClassVar")
        ):
            raise fail(
                definition,
                f"step {step.step_id()!r}: {name!r} is annotated but not declared with field(...)",
            )


def _resolve_hints(definition: FormDef, step: type[Step]) -> dict[str, Any]:
    """The step's own field annotations, evaluated in its module (string annotations too)."""
    module = sys.modules.get(step.__module__)
    namespace = dict(vars(module)) if module is not None else {}
    hints: dict[str, Any] = {}
    for name, annotation in inspect.get_annotations(step).items():
        if not isinstance(annotation, str):
            hints[name] = annotation
            continue
        try:
            hints[name] = eval(annotation, namespace, dict(vars(step)))
        except Exception as exc:
            raise fail(
                definition,
                f"step {step.step_id()!r}: cannot resolve the type of {name!r} "
                f"({annotation}): {exc}",
            ) from exc
    return hints


def build_index(
    definition: FormDef, usable: Sequence[type[Step]], problems: Problems
) -> tuple[dict[str, CompiledStep], dict[str, CompiledField]]:
    """The compiled steps and fields in definition order. A field that cannot be built is
    recorded in ``problems`` and left out (the compiler stops after this stage then)."""
    steps: dict[str, CompiledStep] = {}
    fields: dict[str, CompiledField] = {}
    for step_number, step in enumerate(usable):
        step_id = step.step_id()
        hints: dict[str, Any] = {}
        with problems.each():
            hints = _resolve_hints(definition, step)
        first = len(fields)
        names: list[str] = []
        for name, spec in step.field_specs().items():
            with problems.each():
                fields[name] = _build_field(
                    definition, step_id, name, spec, hints.get(name), len(fields)
                )
                names.append(name)
        when = step.predicate()
        when_arity = 0
        with problems.each():
            when_arity = arity(definition, when, f"step {step_id!r} when", (1, 2)) if when else 0
        steps[step_id] = CompiledStep(
            id=step_id,
            title=str(step.setting("title")).strip(),
            preview=str(step.setting("preview") or "").strip(),
            guidance=step.setting("guidance"),
            index=step_number,
            fields=tuple(names),
            first_field=first,
            when=when,
            when_arity=when_arity,
            on_complete=step.completion_executor(),
        )
    return steps, fields


def _build_field(
    definition: FormDef,
    step_id: str,
    name: str,
    spec: FieldSpec,
    annotation: Any,
    index: int,
) -> CompiledField:
    where = f"field {name!r} (step {step_id!r})"
    if annotation is None:
        raise fail(definition, f"{where} has no type annotation")
    if not spec.label.strip():
        raise fail(definition, f"{where} has an empty label")
    try:
        ftype = field_type(annotation, example=spec.example)
    except TypeError as exc:
        raise fail(definition, f"{where}: {exc}") from exc
    _check_example(definition, where, spec, ftype)
    for label, fn in (("when", spec.when), ("on_fill", spec.on_fill)):
        if fn is not None and not callable(fn):
            raise fail(definition, f"{where}: {label} is not callable")
    when_arity = arity(definition, spec.when, f"{where} when", (1, 2)) if spec.when else 0
    return CompiledField(
        id=name,
        label=spec.label.strip(),
        step=step_id,
        index=index,
        type=ftype,
        ask=spec.ask,
        when=spec.when,
        when_arity=when_arity,
        on_fill=spec.on_fill,
        decided_by_approver=spec.decided_by_approver,
        example=spec.example,
        no_preference=spec.no_preference,
        aliases=tuple(spec.aliases),
        memory=spec.memory,
    )


def _check_example(definition: FormDef, where: str, spec: FieldSpec, ftype: FieldType) -> None:
    """A field's example is shown to the agent as the shape of an answer: it must be one."""
    if spec.example is None:
        return
    if not isinstance(spec.example, str) or not spec.example.strip():
        raise fail(definition, f"{where}: example must be a non-empty string")
    outcome = ftype.validate(spec.example)
    if isinstance(outcome, Rejected):
        raise fail(
            definition,
            f"{where}: example {spec.example!r} is not a valid answer: {outcome.message}",
        )


def check_unique_fields(definition: FormDef) -> None:
    owner: dict[str, str] = {}
    for step in definition.steps:
        for name in step.field_specs():
            if name in owner:
                raise fail(
                    definition,
                    f"field {name!r} is declared in step {owner[name]!r} and {step.step_id()!r}",
                )
            owner[name] = step.step_id()


def check_aliases(definition: FormDef, fields: Mapping[str, CompiledField]) -> dict[str, str]:
    """The alias index: every field's id, label and declared aliases, normalised. Each key names
    one field, so resolving a spelling is never a guess."""
    aliases: dict[str, str] = {}
    written: dict[str, str] = {}
    for field_id, compiled in fields.items():
        for alias in compiled.aliases:
            if not isinstance(alias, str) or len(normalise(alias)) < 2:
                raise fail(
                    definition,
                    f"field {field_id!r}: alias {alias!r} is not a spelling of two or more "
                    "letters or digits; aliases=[...] lists whole spellings",
                )
        for spelling in (field_id, compiled.label, *compiled.aliases):
            key = normalise(spelling)
            if not key:
                raise fail(definition, f"field {field_id!r}: {spelling!r} has no letters/digits")
            other = aliases.setdefault(key, field_id)
            if other != field_id:
                raise fail(
                    definition,
                    f"fields {other!r} and {field_id!r} collide once case and punctuation are "
                    f"stripped ({written[key]!r} and {spelling!r} -> {key!r}); rename, relabel "
                    "or drop an alias of one of them",
                )
            written.setdefault(key, spelling)
    # A label's closing parenthesis (a unit, a qualifier) is often left out: "Total amount" for
    # "Total amount (EUR)". The shortened label is a spelling too, when no other field has it.
    shortened: dict[str, list[str]] = {}
    for field_id, compiled in fields.items():
        short = _PARENTHESIS.sub("", compiled.label)
        key = normalise(short)
        if short != compiled.label and key and key not in aliases:
            shortened.setdefault(key, []).append(field_id)
    aliases.update({key: owners[0] for key, owners in shortened.items() if len(owners) == 1})
    return aliases


def check_step_aliases(steps: Mapping[str, CompiledStep]) -> dict[str, str]:
    aliases: dict[str, str] = {}
    for step_id, step in steps.items():
        for spelling in (step_id, step.title):
            key = normalise(spelling)
            if key and aliases.setdefault(key, step_id) != step_id:
                raise InvalidFormDefinition(
                    f"steps {aliases[key]!r} and {step_id!r} collide once normalised ({key!r})"
                )
    return aliases
