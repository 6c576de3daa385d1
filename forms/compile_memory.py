"""Checking the fact keys fields declare (``field("Weight (kg)", memory="person.weight_kg")``).

A field that declares a key is filled or offered from memory when its form starts, and its
answers are remembered under that key. The contract between the two is the key's name and
its type, so both are checked when the form is compiled, not discovered missing a month later
(the design note's Rule 7): the key must be in the deployment's vocabulary (the message names
the keys it most likely meant), be one memory keeps (not ``do_not_store``), and every value it
can hold must fit the field's type (``Vocabulary.check_field``). A field only an approver
decides takes no key: memory never writes a decision.

The vocabulary is the deployment's (``FormRegistry(..., vocabulary=...)``), Formwork's own by
default (``default_vocabulary``). The vocabulary is part of the core (``forms.vocabulary``: the
keys and their types, with no memory in it), imported only when a form declares a key and no
vocabulary is given, so forms without keys never load it (nor the email and time-zone types its
keys are built on). Nothing of ``forms.memory`` is imported here: memory sits on the core and
the core never reaches up into it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from forms.compile_checks import Problems, fail
from forms.compiled import CompiledField
from forms.definition import FormDef

if TYPE_CHECKING:
    from forms.vocabulary import Vocabulary


def default_vocabulary() -> Vocabulary:
    """Formwork's own vocabulary (``Vocabulary.default()``), for whoever was given none: loaded
    on the first call, so only forms and documents whose fields hold a key load it."""
    from forms.vocabulary import Vocabulary  # noqa: PLC0415 (on first use: see above)

    return Vocabulary.default()


def declares_memory(fields: Mapping[str, CompiledField]) -> bool:
    """Whether any field declares a fact key."""
    return any(field.memory is not None for field in fields.values())


def check_memory(
    definition: FormDef,
    fields: Mapping[str, CompiledField],
    vocabulary: Vocabulary | None,
    problems: Problems,
) -> None:
    """Every declared fact key against ``vocabulary`` (None: Formwork's), each bad one
    recorded in ``problems``."""
    if not declares_memory(fields):
        return
    if vocabulary is None:
        vocabulary = default_vocabulary()
    for field in fields.values():
        if field.memory is not None:
            with problems.each():
                _check_field(definition, field, vocabulary)


def _check_field(definition: FormDef, field: CompiledField, vocabulary: Vocabulary) -> None:
    where = f"field {field.id!r} (step {field.step!r}): memory={field.memory!r}"
    if not isinstance(field.memory, str):
        raise fail(definition, f"{where}: memory must be a fact key such as 'person.height_cm'")
    if field.decided_by_approver:
        raise fail(definition, f"{where}: a field an approver decides cannot be filled by memory")
    problem = vocabulary.check_field(field.memory, field.type)
    if problem is not None:
        raise fail(definition, f"{where}: {problem}")
