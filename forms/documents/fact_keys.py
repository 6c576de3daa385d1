"""The fact keys a document's fields hold (``memory``), checked against a fact vocabulary.

A field that holds a key (``{"kind": "date", "id": "born", "memory": "person.date_of_birth"}``)
is filled or offered from memory when its form starts, and its answers are remembered under
that key, exactly as a Python field declaring ``field(..., memory=...)``. The document model
checks a key's syntax only; whether the deployment's vocabulary has the key, keeps it (not
``do_not_store``), and whether its values fit the field's type is this check:
``Vocabulary.check_field``, the one ``forms.compile_memory`` runs on a code form's fields, on
the type the field's kind and constraints make (``field_types``), worded as the compiler words
it (``field 'born' (step 'about'): memory='person.dob': unknown fact key ...``).

``compile_document`` runs it with the document's other checks (every problem reported at once)
and the builder's edits run it on the draft after every edit (``edit_checks``), so a key one
refuses, the other refuses too. The vocabulary is the deployment's (None: Formwork's, from
``forms.compile_memory.default_vocabulary``, loaded only when a field holds a key). Documents
sit below memory: nothing here imports ``forms.memory``, the vocabulary being the core's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from forms.compile_memory import default_vocabulary
from forms.documents.field_types import types_of
from forms.documents.model import Divider, FieldDoc, FormDocument, Heading, Paragraph
from forms.schema import FieldType

if TYPE_CHECKING:
    from forms.vocabulary import Vocabulary


@dataclass(frozen=True, slots=True)
class KeyProblem:
    """A field's key the vocabulary refuses: the field, the key, the problem in the compiler's
    words, and the keys it likely meant (for a key the vocabulary does not have)."""

    field: str
    key: str
    message: str
    did_you_mean: tuple[str, ...] = ()


def declares_memory(document: FormDocument) -> bool:
    """Whether any field of ``document`` holds a fact key."""
    return any(True for _ in _holding(document))


def vocabulary_or_default(vocabulary: Vocabulary | None) -> Vocabulary:
    """``vocabulary``, or Formwork's own (``Vocabulary.default()``) when None."""
    return vocabulary if vocabulary is not None else default_vocabulary()


def key_problems(
    document: FormDocument, vocabulary: Vocabulary | None = None
) -> tuple[KeyProblem, ...]:
    """Each key a field of ``document`` holds that ``vocabulary`` (None: Formwork's) refuses,
    in document order. A field whose settings make no type is skipped: the index reports why."""
    held = list(_holding(document))
    if not held:
        return ()
    words = vocabulary_or_default(vocabulary)
    found: list[KeyProblem] = []
    for step_id, item, key in held:
        field_type = _type_of(item)
        if field_type is None:
            continue
        problem = words.check_field(key, field_type)
        if problem is not None:
            close = () if key in words else tuple(words.did_you_mean(key))
            found.append(
                KeyProblem(item.id, key, f"{_where(item.id, step_id, key)}: {problem}", close)
            )
    return tuple(found)


def unknown_key(
    field_id: str, step_id: str, key: str, vocabulary: Vocabulary | None = None
) -> KeyProblem | None:
    """``key`` held by a field, when ``vocabulary`` (None: Formwork's) does not have it, as
    ``key_problems`` words it; None when it does. For a name that is not even a key's syntax
    (``dob``), which no document holds, so ``key_problems`` never sees it."""
    words = vocabulary_or_default(vocabulary)
    if key in words:
        return None
    try:
        words.get(key)
    except KeyError as unknown:  # UnknownFactKey: what check_field says of a key it lacks
        close = tuple(words.did_you_mean(key))
        return KeyProblem(field_id, key, f"{_where(field_id, step_id, key)}: {unknown}", close)
    return None


def fitting_keys(item: FieldDoc, vocabulary: Vocabulary | None = None) -> list[str]:
    """The keys of ``vocabulary`` (None: Formwork's) that ``item`` could hold: kept by memory,
    their values fitting its type, in the vocabulary's order."""
    field_type = _type_of(item)
    if field_type is None:
        return []
    return [
        key.key for key in vocabulary_or_default(vocabulary) if key.storable and key.fit(field_type)
    ]


def _where(field_id: str, step_id: str, key: str) -> str:
    """Where a key is held, as ``forms.compile_memory`` says it of a code form's field."""
    return f"field {field_id!r} (step {step_id!r}): memory={key!r}"


def _holding(document: FormDocument) -> Iterator[tuple[str, FieldDoc, str]]:
    """(step id, field, key) for each field that holds a key, in document order."""
    for step in document.steps:
        for item in step.items:
            if isinstance(item, Heading | Paragraph | Divider):
                continue
            if item.memory is not None:
                yield step.id, item, item.memory


def _type_of(item: FieldDoc) -> FieldType | None:
    """The type of ``item``'s whole answer (what the compiled field's type is), or None when
    its settings make none."""
    settings = types_of(item)
    if settings.annotation is None:
        return None
    try:
        return settings.answer()
    except TypeError:
        return None
