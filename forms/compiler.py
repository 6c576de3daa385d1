"""``compile_form``: check a definition once and turn it into an immutable, cached index.

The compiled form is what the engine and the tools use: fields and steps in definition order,
each field's type facts (optionality, type string, validator), the alias index that lets an
agent say ``Full name`` or ``full_name`` for ``full_name``, the hook ids, and the migrations.

Each rule is one ``check_*`` function raising ``InvalidFormDefinition`` with a message naming
what is wrong; the compiler collects them (``forms.compile_checks.Problems``) and reports every
problem of a definition at once. The form's own rules are here; the rules of each kind live
beside this module: steps and fields in ``forms.compile_steps``, checkpoints and approvals in
``forms.compile_checkpoints``; the fact keys fields declare in ``forms.compile_memory``.
References from predicates and executors (``v.some_field``,
``s.step_complete("some_step")``, ``Jump("some_step")``, ``Patch({"some_field": ...})``) are
read from the source and checked by ``forms.compile_references``, so a typo fails at import
time, not as a silent false.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from forms.compile_checkpoints import build_checkpoints, check_approvals
from forms.compile_checks import Problems, fail
from forms.compile_memory import check_memory
from forms.compile_references import check_references
from forms.compile_steps import (
    build_index,
    check_aliases,
    check_step_aliases,
    check_steps,
    check_unique_fields,
)
from forms.compiled import (
    CompiledCheckpoint,
    CompiledField,
    CompiledForm,
    CompiledStep,
    Hook,
    normalise,
)
from forms.definition import FormDef, Migration
from forms.errors import InvalidFormDefinition

if TYPE_CHECKING:
    from forms.vocabulary import Vocabulary

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


_CACHE: weakref.WeakKeyDictionary[FormDef, CompiledForm] = weakref.WeakKeyDictionary()
_CHECKED: weakref.WeakKeyDictionary[FormDef, list[Vocabulary | None]] = weakref.WeakKeyDictionary()
"""Per definition that declares fact keys, the vocabularies they were found in (None:
Formwork's), so a definition registered again is not checked again."""


def compile_form(definition: FormDef, *, vocabulary: Vocabulary | None = None) -> CompiledForm:
    """Check ``definition`` and return its compiled index (cached per definition object).

    The fact keys its fields declare (``memory=``) are checked against ``vocabulary``, the
    deployment's (None: Formwork's own, ``Vocabulary.default()``), once per vocabulary."""
    cached = _CACHE.get(definition)
    if cached is None:
        cached = _compile(definition, vocabulary)
        _CACHE[definition] = cached
        if cached.memory_fields:
            _CHECKED[definition] = [vocabulary]
    elif cached.memory_fields:
        checked = _CHECKED.setdefault(definition, [])
        if not any(known is vocabulary for known in checked):
            problems = Problems()
            check_memory(definition, cached.fields, vocabulary, problems)
            problems.stop_if_any()
            checked.append(vocabulary)
    return cached


def _compile(definition: FormDef, vocabulary: Vocabulary | None) -> CompiledForm:
    problems = Problems()
    with problems.each():
        _check_form_header(definition)
    # the structure: what every later check reads, so it must be whole before they run
    usable = check_steps(definition, problems)
    steps, fields = build_index(definition, usable, problems)
    checkpoints = build_checkpoints(definition, problems)
    problems.stop_if_any()
    # the rules over the structure, each reported on its own
    aliases: dict[str, str] = {}
    step_aliases: dict[str, str] = {}
    migrations: dict[int, Migration] = {}
    with problems.each():
        check_unique_fields(definition)
    with problems.each():
        aliases = check_aliases(definition, fields)
    with problems.each():
        step_aliases = check_step_aliases(steps)
    field_index = {f: i for i, f in enumerate(fields)}
    step_index = {s: i for i, s in enumerate(steps)}
    check_references(definition, fields, steps, checkpoints, field_index, step_index, problems)
    with problems.each():
        migrations = _check_migrations(definition, fields)
    checkpoints = check_approvals(definition, fields, checkpoints, problems)
    check_memory(definition, fields, vocabulary, problems)
    for target, renames in definition.hands_over_to.items():
        for old in renames:
            if old not in fields:
                with problems.each():
                    raise fail(
                        definition,
                        f"hands_over_to[{target!r}] renames {old!r}, which is not a field",
                    )
    problems.stop_if_any()
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


def _check_form_header(definition: FormDef) -> None:
    if not isinstance(definition.id, str) or not _FORM_ID.match(definition.id):
        raise InvalidFormDefinition(
            f"form id {definition.id!r} must be lowercase letters, digits and hyphens, "
            "starting with a letter, at most 63 characters"
        )
    if type(definition.version) is not int or definition.version < 1:
        raise fail(definition, f"version must be a positive integer, got {definition.version!r}")
    if not definition.title.strip():
        raise fail(definition, "title is empty")
    for name in ("on_complete", "on_close"):
        executor = getattr(definition, name)
        if executor is not None and not callable(executor):
            raise fail(definition, f"{name} is not callable")


def _check_migrations(
    definition: FormDef, fields: Mapping[str, CompiledField]
) -> dict[int, Migration]:
    found: dict[int, Migration] = {}
    for migration in definition.migrations:
        if not 1 <= migration.from_version < definition.version:
            raise fail(
                definition,
                f"migration from version {migration.from_version} must be below "
                f"{definition.version}",
            )
        if migration.from_version in found:
            raise fail(definition, f"two migrations from version {migration.from_version}")
        for old, new in migration.renames.items():
            renamed_later = any(
                new in later.renames
                for later in definition.migrations
                if later.from_version > migration.from_version
            )
            if new not in fields and not renamed_later:
                raise fail(definition, f"migration renames {old!r} to unknown field {new!r}")
        for name in migration.convert:
            if name not in fields:
                raise fail(definition, f"migration converts unknown field {name!r}")
        found[migration.from_version] = migration
    return found


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
