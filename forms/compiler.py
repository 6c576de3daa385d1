"""``compile_form``: check a definition once and turn it into an immutable, cached index.

The compiled form is what the engine and the tools use: fields and steps in definition order,
each field's type facts (optionality, type string, validator), the alias index that lets an
agent say ``Full name`` or ``full_name`` for ``full_name``, the hook ids, and the migrations.

Each rule is one ``_check_*`` function raising ``InvalidFormDefinition`` with a message naming
what is wrong. References from predicates and executors (``v.some_field``,
``s.step_complete("some_step")``, ``Jump("some_step")``, ``Patch({"some_field": ...})``) are
read from the source and checked here, so a typo fails at import time, not as a silent false.
"""

from __future__ import annotations

import difflib
import inspect
import re
import sys
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any, Literal

from forms.compiled import (
    CompiledCheckpoint,
    CompiledField,
    CompiledForm,
    CompiledStep,
    Hook,
    normalise,
)
from forms.definition import Approval, Checkpoint, FieldSpec, FormDef, Migration, Step
from forms.errors import InvalidFormDefinition
from forms.refs import Ref, references
from forms.schema import FieldType, Rejected, field_type

__all__ = [
    "CompiledCheckpoint",
    "CompiledField",
    "CompiledForm",
    "CompiledStep",
    "Hook",
    "compile_form",
    "normalise",
]

_FORM_ID = re.compile(r"^[a-z][a-z0-9-]{0,62}$")
_STEP_ID = re.compile(r"^[a-z][a-z0-9_]{0,62}$")
_PARENTHESIS = re.compile(r"\s*\([^()]*\)\s*$")
_CHECKPOINT_ID = re.compile(r"^[a-z](?:[a-z0-9_]{0,62}|[a-z0-9-]{0,62})$")
"""snake_case or kebab-case (not both in one id): a checkpoint id is a name in a string, like
a form id, so either spelling is accepted."""


_CACHE: weakref.WeakKeyDictionary[FormDef, CompiledForm] = weakref.WeakKeyDictionary()


def compile_form(definition: FormDef) -> CompiledForm:
    """Check ``definition`` and return its compiled index (cached per definition object)."""
    cached = _CACHE.get(definition)
    if cached is None:
        cached = _compile(definition)
        _CACHE[definition] = cached
    return cached


def _compile(definition: FormDef) -> CompiledForm:
    _check_form_header(definition)
    _check_steps(definition)
    steps, fields = _build_index(definition)
    checkpoints = _build_checkpoints(definition)
    _check_unique_fields(definition)
    aliases = _check_aliases(definition, fields)
    step_aliases = _check_step_aliases(steps)
    field_index = {f: i for i, f in enumerate(fields)}
    step_index = {s: i for i, s in enumerate(steps)}
    _check_references(definition, fields, steps, checkpoints, field_index, step_index)
    migrations = _check_migrations(definition, fields)
    checkpoints = _check_approvals(definition, fields, checkpoints)
    hooks = _hooks(definition, fields, steps, checkpoints)
    return CompiledForm(
        definition=definition,
        id=definition.id,
        version=definition.version,
        title=definition.title,
        description=definition.description,
        fields=MappingProxyType(fields),
        steps=MappingProxyType(steps),
        checkpoints=MappingProxyType(checkpoints),
        hooks=hooks,
        field_index=MappingProxyType(field_index),
        step_index=MappingProxyType(step_index),
        aliases=MappingProxyType(aliases),
        step_aliases=MappingProxyType(step_aliases),
        migrations=MappingProxyType(migrations),
        closes_on_complete=definition.closes_on_complete,
        on_complete=definition.on_complete,
    )


def _fail(definition: FormDef, message: str) -> InvalidFormDefinition:
    return InvalidFormDefinition(f"form {definition.id!r}: {message}")


def _check_form_header(definition: FormDef) -> None:
    if not isinstance(definition.id, str) or not _FORM_ID.match(definition.id):
        raise InvalidFormDefinition(
            f"form id {definition.id!r} must be lowercase letters, digits and hyphens, "
            "starting with a letter, at most 63 characters"
        )
    if type(definition.version) is not int or definition.version < 1:
        raise _fail(definition, f"version must be a positive integer, got {definition.version!r}")
    if not definition.title.strip():
        raise _fail(definition, "title is empty")
    for name in ("on_complete", "on_close"):
        executor = getattr(definition, name)
        if executor is not None and not callable(executor):
            raise _fail(definition, f"{name} is not callable")


def _check_steps(definition: FormDef) -> None:
    if not definition.steps:
        raise _fail(definition, "has no steps")
    seen: set[str] = set()
    for step in definition.steps:
        if not (isinstance(step, type) and issubclass(step, Step)):
            raise _fail(definition, f"{step!r} is not a Step subclass")
        step_id = step.step_id()
        if not _STEP_ID.match(step_id):
            raise _fail(definition, f"step id {step_id!r} must be snake_case")
        if step_id in seen:
            raise _fail(definition, f"step id {step_id!r} is used twice")
        seen.add(step_id)
        _check_annotations_are_fields(definition, step)
        title = step.setting("title")
        if not isinstance(title, str) or not title.strip():
            raise _fail(definition, f"step {step_id!r} has no title")
        for name in ("preview", "guidance"):
            if step.setting(name) is not None and not isinstance(step.setting(name), str):
                raise _fail(definition, f"step {step_id!r}: {name} must be text")
        if not step.field_specs():
            raise _fail(definition, f"step {step_id!r} declares no fields")
        for name in ("when", "on_complete"):
            value = step.setting(name)
            if value is not None and not callable(value):
                raise _fail(definition, f"step {step_id!r}: {name} is not callable")


def _check_annotations_are_fields(definition: FormDef, step: type[Step]) -> None:
    """Every annotation is a field(...) and every field(...) has an annotation (its type)."""
    specs = step.field_specs()
    annotated = inspect.get_annotations(step)
    for name, value in vars(step).items():
        if isinstance(value, FieldSpec) and name not in annotated:
            raise _fail(
                definition,
                f"step {step.step_id()!r}: {name!r} is declared with field(...) but has no type "
                f"annotation; write `{name}: <type> = field(...)`",
            )
    for name in inspect.get_annotations(step):
        if name.startswith("_"):
            raise _fail(definition, f"step {step.step_id()!r}: field {name!r} may not start with _")
        if name not in specs and not str(inspect.get_annotations(step)[name]).startswith(
            ("ClassVar", "typing.ClassVar")
        ):
            raise _fail(
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
            raise _fail(
                definition,
                f"step {step.step_id()!r}: cannot resolve the type of {name!r} "
                f"({annotation}): {exc}",
            ) from exc
    return hints


def _arity(definition: FormDef, fn: Callable[..., Any], where: str, allowed: Iterable[int]) -> int:
    try:
        params = [
            p
            for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        return max(allowed)
    count = len(params)
    if count not in allowed:
        wanted = " or ".join(str(n) for n in allowed)
        raise _fail(definition, f"{where} takes {count} positional parameters; expected {wanted}")
    return count


def _build_index(
    definition: FormDef,
) -> tuple[dict[str, CompiledStep], dict[str, CompiledField]]:
    steps: dict[str, CompiledStep] = {}
    fields: dict[str, CompiledField] = {}
    for step_number, step in enumerate(definition.steps):
        step_id = step.step_id()
        hints = _resolve_hints(definition, step)
        first = len(fields)
        names: list[str] = []
        for name, spec in step.field_specs().items():
            fields[name] = _build_field(
                definition, step_id, name, spec, hints.get(name), len(fields)
            )
            names.append(name)
        when = step.predicate()
        steps[step_id] = CompiledStep(
            id=step_id,
            title=str(step.setting("title")).strip(),
            preview=str(step.setting("preview") or "").strip(),
            guidance=step.setting("guidance"),
            index=step_number,
            fields=tuple(names),
            first_field=first,
            when=when,
            when_arity=_arity(definition, when, f"step {step_id!r} when", (1, 2)) if when else 0,
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
        raise _fail(definition, f"{where} has no type annotation")
    if not spec.label.strip():
        raise _fail(definition, f"{where} has an empty label")
    try:
        ftype = field_type(annotation, example=spec.example)
    except TypeError as exc:
        raise _fail(definition, f"{where}: {exc}") from exc
    _check_example(definition, where, spec, ftype)
    for label, fn in (("when", spec.when), ("on_fill", spec.on_fill)):
        if fn is not None and not callable(fn):
            raise _fail(definition, f"{where}: {label} is not callable")
    when_arity = _arity(definition, spec.when, f"{where} when", (1, 2)) if spec.when else 0
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
    )


def _check_example(definition: FormDef, where: str, spec: FieldSpec, ftype: FieldType) -> None:
    """A field's example is shown to the agent as the shape of an answer: it must be one."""
    if spec.example is None:
        return
    if not isinstance(spec.example, str) or not spec.example.strip():
        raise _fail(definition, f"{where}: example must be a non-empty string")
    outcome = ftype.validate(spec.example)
    if isinstance(outcome, Rejected):
        raise _fail(
            definition,
            f"{where}: example {spec.example!r} is not a valid answer: {outcome.message}",
        )


def _build_checkpoints(definition: FormDef) -> dict[str, CompiledCheckpoint]:
    found: dict[str, CompiledCheckpoint] = {}
    for checkpoint in definition.checkpoints:
        if not isinstance(checkpoint, Checkpoint):
            raise _fail(definition, f"{checkpoint!r} is not a Checkpoint")
        if not isinstance(checkpoint.id, str) or not _CHECKPOINT_ID.match(checkpoint.id):
            raise _fail(
                definition,
                f"checkpoint id {checkpoint.id!r} must be snake_case or kebab-case: lowercase "
                "letters and digits joined by _ or by -, starting with a letter, at most 63 "
                "characters",
            )
        twin = next((c for c in found if normalise(c) == normalise(checkpoint.id)), None)
        if twin is not None:
            raise _fail(
                definition,
                f"checkpoint id {checkpoint.id!r} is used twice"
                + (f" (as {twin!r})" if twin != checkpoint.id else ""),
            )
        if not callable(checkpoint.when) or (
            checkpoint.run is not None and not callable(checkpoint.run)
        ):
            raise _fail(definition, f"checkpoint {checkpoint.id!r}: when/run must be callable")
        found[checkpoint.id] = CompiledCheckpoint(
            id=checkpoint.id,
            title=checkpoint.title or re.sub(r"[-_]", " ", checkpoint.id),
            when=checkpoint.when,
            when_arity=_arity(definition, checkpoint.when, f"checkpoint {checkpoint.id!r}", (1, 2)),
            run=checkpoint.run,
            approval=checkpoint.approval,
        )
    return found


def _check_unique_fields(definition: FormDef) -> None:
    owner: dict[str, str] = {}
    for step in definition.steps:
        for name in step.field_specs():
            if name in owner:
                raise _fail(
                    definition,
                    f"field {name!r} is declared in step {owner[name]!r} and {step.step_id()!r}",
                )
            owner[name] = step.step_id()


def _check_aliases(definition: FormDef, fields: Mapping[str, CompiledField]) -> dict[str, str]:
    """The alias index: every field's id, label and declared aliases, normalised. Each key names
    one field, so resolving a spelling is never a guess."""
    aliases: dict[str, str] = {}
    written: dict[str, str] = {}
    for field_id, compiled in fields.items():
        for alias in compiled.aliases:
            if not isinstance(alias, str) or len(normalise(alias)) < 2:
                raise _fail(
                    definition,
                    f"field {field_id!r}: alias {alias!r} is not a spelling of two or more "
                    "letters or digits; aliases=[...] lists whole spellings",
                )
        for spelling in (field_id, compiled.label, *compiled.aliases):
            key = normalise(spelling)
            if not key:
                raise _fail(definition, f"field {field_id!r}: {spelling!r} has no letters/digits")
            other = aliases.setdefault(key, field_id)
            if other != field_id:
                raise _fail(
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


def _check_step_aliases(steps: Mapping[str, CompiledStep]) -> dict[str, str]:
    aliases: dict[str, str] = {}
    for step_id, step in steps.items():
        for spelling in (step_id, step.title):
            key = normalise(spelling)
            if key and aliases.setdefault(key, step_id) != step_id:
                raise InvalidFormDefinition(
                    f"steps {aliases[key]!r} and {step_id!r} collide once normalised ({key!r})"
                )
    return aliases


def _check_references(
    definition: FormDef,
    fields: Mapping[str, CompiledField],
    steps: Mapping[str, CompiledStep],
    checkpoints: Mapping[str, CompiledCheckpoint],
    field_index: Mapping[str, int],
    step_index: Mapping[str, int],
) -> None:
    """Every name a predicate or executor mentions must exist, and predicates must look back."""
    for step in steps.values():
        if step.when:
            _check_refs(
                definition,
                step.when,
                "predicate",
                f"step {step.id!r} when",
                fields,
                steps,
                checkpoints,
                step.first_field,
                step.index,
            )
        if step.on_complete:
            _check_refs(
                definition,
                step.on_complete,
                "executor",
                f"step {step.id!r} on_complete",
                fields,
                steps,
                checkpoints,
                None,
                None,
            )
    for f in fields.values():
        if f.when:
            _check_refs(
                definition,
                f.when,
                "predicate",
                f"field {f.id!r} when",
                fields,
                steps,
                checkpoints,
                f.index,
                step_index[f.step],
            )
        if f.on_fill:
            _check_refs(
                definition,
                f.on_fill,
                "executor",
                f"field {f.id!r} on_fill",
                fields,
                steps,
                checkpoints,
                None,
                None,
            )
    for cp in checkpoints.values():
        _check_refs(
            definition,
            cp.when,
            "predicate",
            f"checkpoint {cp.id!r} when",
            fields,
            steps,
            checkpoints,
            None,
            None,
        )
        if cp.run:
            _check_refs(
                definition,
                cp.run,
                "executor",
                f"checkpoint {cp.id!r} run",
                fields,
                steps,
                checkpoints,
                None,
                None,
            )
    if definition.on_close:
        _check_refs(
            definition,
            definition.on_close,
            "executor",
            "form on_close",
            fields,
            steps,
            checkpoints,
            None,
            None,
        )
    if definition.on_complete:
        _check_refs(
            definition,
            definition.on_complete,
            "executor",
            "form on_complete",
            fields,
            steps,
            checkpoints,
            None,
            None,
        )
    del field_index


def _check_refs(
    definition: FormDef,
    fn: Callable[..., Any],
    style: Literal["predicate", "executor"],
    owner: str,
    fields: Mapping[str, CompiledField],
    steps: Mapping[str, CompiledStep],
    checkpoints: Mapping[str, CompiledCheckpoint],
    field_horizon: int | None,
    step_horizon: int | None,
) -> None:
    refs = references(fn, style=style)
    for ref in refs or ():
        _check_ref(definition, ref, owner, fields, steps, checkpoints, field_horizon, step_horizon)


def _check_ref(
    definition: FormDef,
    ref: Ref,
    owner: str,
    fields: Mapping[str, CompiledField],
    steps: Mapping[str, CompiledStep],
    checkpoints: Mapping[str, CompiledCheckpoint],
    field_horizon: int | None,
    step_horizon: int | None,
) -> None:
    at = f"{owner} ({ref.where}): {ref.context}"
    if ref.kind == "field":
        if ref.name not in fields:
            raise _fail(
                definition, f"{at}: {ref.name!r} is not a field{_did_you_mean(ref.name, fields)}"
            )
        if field_horizon is not None and fields[ref.name].index >= field_horizon:
            raise _fail(
                definition,
                f"{at}: {ref.name!r} is declared after what this predicate gates; predicates may "
                "only read fields declared before it",
            )
    elif ref.kind == "step":
        if ref.name not in steps:
            raise _fail(
                definition, f"{at}: {ref.name!r} is not a step{_did_you_mean(ref.name, steps)}"
            )
        if step_horizon is not None and steps[ref.name].index >= step_horizon:
            raise _fail(
                definition,
                f"{at}: step {ref.name!r} is not decided yet at that point; predicates may only "
                "ask about earlier steps",
            )
    else:
        if ref.name not in checkpoints:
            raise _fail(
                definition,
                f"{at}: {ref.name!r} is not a checkpoint{_did_you_mean(ref.name, checkpoints)}",
            )
        if field_horizon is not None or step_horizon is not None:
            raise _fail(definition, f"{at}: only checkpoints and executors may ask fired(...)")


def _did_you_mean(name: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _check_migrations(
    definition: FormDef, fields: Mapping[str, CompiledField]
) -> dict[int, Migration]:
    found: dict[int, Migration] = {}
    for migration in definition.migrations:
        if not 1 <= migration.from_version < definition.version:
            raise _fail(
                definition,
                f"migration from version {migration.from_version} must be below "
                f"{definition.version}",
            )
        if migration.from_version in found:
            raise _fail(definition, f"two migrations from version {migration.from_version}")
        for old, new in migration.renames.items():
            renamed_later = any(
                new in later.renames
                for later in definition.migrations
                if later.from_version > migration.from_version
            )
            if new not in fields and not renamed_later:
                raise _fail(definition, f"migration renames {old!r} to unknown field {new!r}")
        for name in migration.convert:
            if name not in fields:
                raise _fail(definition, f"migration converts unknown field {name!r}")
        found[migration.from_version] = migration
    return found


def _check_approvals(
    definition: FormDef,
    fields: Mapping[str, CompiledField],
    checkpoints: Mapping[str, CompiledCheckpoint],
) -> dict[str, CompiledCheckpoint]:
    """An approval names a decision field that only approvals write, and vice versa, and the
    answers its decision is bound to. Returns the checkpoints with those bindings."""
    owners: dict[str, str] = {}
    bound = dict(checkpoints)
    for cp in checkpoints.values():
        approval = cp.approval
        if approval is None:
            continue
        bound[cp.id] = replace(cp, binds=_approval_binds(definition, cp, approval, fields))
        where = f"checkpoint {cp.id!r}"
        if cp.run is not None:
            raise _fail(definition, f"{where}: an approval checkpoint cannot also have run=")
        if approval.field not in fields:
            raise _fail(
                definition,
                f"{where}: approval field {approval.field!r} is not a field"
                + _did_you_mean(approval.field, fields),
            )
        decision = fields[approval.field]
        if not decision.decided_by_approver:
            raise _fail(
                definition,
                f"{where}: field {approval.field!r} must be declared with decided_by_approver=True",
            )
        for value in ("approved", "rejected"):
            if not hasattr(decision.type.validate(value), "json_value"):
                raise _fail(definition, f"{where}: field {approval.field!r} must accept {value!r}")
        if not approval.role.strip() or approval.timeout_seconds <= 0:
            raise _fail(definition, f"{where}: approval needs a role and a positive timeout")
        if approval.field in owners:
            raise _fail(
                definition,
                f"field {approval.field!r} records two approvals ({owners[approval.field]!r} "
                f"and {cp.id!r})",
            )
        owners[approval.field] = cp.id
    for f in fields.values():
        if f.decided_by_approver and f.id not in owners:
            raise _fail(
                definition,
                f"field {f.id!r} is decided_by_approver but no Checkpoint(approval=...) names it",
            )
    return bound


def _approval_binds(
    definition: FormDef,
    cp: CompiledCheckpoint,
    approval: Approval,
    fields: Mapping[str, CompiledField],
) -> tuple[str, ...]:
    """The fields a decision is bound to: declared, or those the predicate reads."""
    where = f"checkpoint {cp.id!r}"
    if approval.binds is not None:
        names = list(approval.binds)
        for name in names:
            if name not in fields:
                raise _fail(
                    definition,
                    f"{where}: approval binds {name!r}, which is not a field"
                    + _did_you_mean(name, fields),
                )
    else:
        refs = references(cp.when, style="predicate")
        if refs is None:
            raise _fail(
                definition,
                f"{where}: the predicate's source cannot be read to find the answers its "
                "approval depends on; declare them with Approval(binds=[...])",
            )
        names = [r.name for r in refs if r.kind == "field" and r.name in fields]
    chosen = set(names)
    for name in chosen:
        if fields[name].decided_by_approver:
            raise _fail(
                definition,
                f"{where}: approval binds {name!r}, a decision field; bind the answers decided on",
            )
    if not chosen:
        raise _fail(
            definition,
            f"{where}: the approval is bound to no answer; name them with Approval(binds=[...])",
        )
    return tuple(f for f in fields if f in chosen)


def _hooks(
    definition: FormDef,
    fields: Mapping[str, CompiledField],
    steps: Mapping[str, CompiledStep],
    checkpoints: Mapping[str, CompiledCheckpoint],
) -> tuple[Hook, ...]:
    """Every hook in dispatch order: field on-fill, step on-complete, checkpoint, form."""
    return (
        *(
            Hook(f"field.{f.id}.filled", "field", f.id, f.on_fill, title=f.label)
            for f in fields.values()
        ),
        *(
            Hook(f"step.{s.id}.complete", "step", s.id, s.on_complete, title=s.title)
            for s in steps.values()
        ),
        *(
            Hook(f"checkpoint.{c.id}", "checkpoint", c.id, c.run, c.approval, c.title, c.binds)
            for c in checkpoints.values()
        ),
        Hook("form.complete", "form", definition.id, definition.on_complete, title="completion"),
        Hook("form.closed", "form", definition.id, definition.on_close, title="closing"),
    )
