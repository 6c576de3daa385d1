"""A document's fields as types: the annotation each field's kind and constraints make, and
the index of every field that rules and ``set`` actions are checked against.

``index_document`` is what ``compile_document`` checks a document's references with, and what
the builder's edits check a draft with after every edit (``edit_checks``); ``read_set`` is how
both read a checkpoint's ``set`` value. Edit time and publish time run the same checks, so a
rule or a value one refuses, the other refuses too.

A field's types depend on its settings only (kind, ``required``, constraints, options), never
on its id, label, help, aliases, rule or fact key, and building one (a pydantic schema and
validator) costs far more than the rest of an edit. So they are built from the settings alone
and kept by them (``types_of``): an edit of a 300-field draft builds the types of the fields
whose settings are new, not of all 300. Keeping them changes no result: the same settings always
make the same types.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import EmailStr, Field
from pydantic_core import SchemaError, SchemaValidator, core_schema

from forms.compile_steps import STEP_METHODS
from forms.documents.kinds import KIND
from forms.documents.model import (
    BooleanField,
    ChoiceField,
    ContactField,
    DateField,
    DecimalField,
    Divider,
    FieldDoc,
    FormDocument,
    Heading,
    IntegerField,
    Paragraph,
    SetAction,
    TextField,
)
from forms.documents.rules import RuleField
from forms.schema import Accepted, FieldType, field_type

_NOT_TYPE = frozenset(
    {"id", "label", "help", "when", "aliases", "on_fill", "layout", "example", "memory"}
)
"""The keys of a field its types do not read. Every other key (``kind``, ``required``, the
constraints, the options) is part of the settings its types are kept by."""
_STAND_INS = {"id": "field", "label": "Field"}
"""What a field is rebuilt with in place of the keys its settings leave out."""
_KEPT = 1_024
"""The most settings whose types are kept (the least recently used go first)."""


# ---------------------------------------------------------------------- one field's types


class FieldTypes:
    """What one field's settings make of it: its annotation, or why it has none (``invalid``:
    constraints that contradict each other), and its types, each built on first use."""

    def __init__(self, item: FieldDoc) -> None:
        self._item = item
        self.annotation: Any | None = None
        self.invalid: str | None = None
        try:
            base = _base_annotation(item)
        except ValueError as exc:
            self.invalid = str(exc)
        else:
            self.annotation = base if item.required else base | None
        self._one: FieldType | None = None
        self._answer: FieldType | None = None

    def one(self) -> FieldType:
        """What one value a rule compares is read as: an option, for a multiple choice; the
        field's own type otherwise. ``TypeError`` when pydantic cannot build it."""
        assert self.annotation is not None, "a field with invalid settings has no type"
        if self._one is None:
            self._one = field_type(_item_annotation(self._item, self.annotation))
        return self._one

    def answer(self) -> FieldType:
        """The type of the field's whole answer: what a ``set`` action writes."""
        if self._answer is None:
            item = self._item
            multiple = isinstance(item, ChoiceField) and item.kind == "multiple_choice"
            self._answer = field_type(self.annotation) if multiple else self.one()
        return self._answer


def types_of(item: FieldDoc) -> FieldTypes:
    """The ``FieldTypes`` of ``item``'s settings: built the first time those settings are
    seen, then kept."""
    return _kept(type(item), item.model_dump_json(exclude=set(_NOT_TYPE)))


@functools.lru_cache(maxsize=_KEPT)
def _kept(model: type[FieldDoc], settings: str) -> FieldTypes:
    # Built from the settings alone, so what is kept cannot depend on a key they leave out.
    return FieldTypes(model.model_validate({**json.loads(settings), **_STAND_INS}))


# ---------------------------------------------------------------------- the index


@dataclass(frozen=True, slots=True)
class FieldIndex:
    """What rules and ``set`` actions are checked against: every field's kind, type and
    position (``known``), its types (``types``, by id), the position of each step's first
    field (``first_field``, by step id), and what was wrong with an item on the way
    (``problems``: contradicting constraints, block ids used twice, field ids that are names
    of ``Step`` methods)."""

    known: Mapping[str, RuleField]
    first_field: Mapping[str, int]
    problems: tuple[str, ...]
    types: Mapping[str, FieldTypes]


def index_document(document: FormDocument) -> FieldIndex:
    """The ``FieldIndex`` of ``document``: what ``compile_document`` checks rules against, for
    whoever checks a rule before the document compiles (the builder's edits)."""
    problems: list[str] = []
    known: dict[str, RuleField] = {}
    types: dict[str, FieldTypes] = {}
    first_field: dict[str, int] = {}
    blocks: set[str] = set()
    position = 0
    for step in document.steps:
        first_field[step.id] = position
        for item in step.items:
            if isinstance(item, Heading | Paragraph | Divider):
                if item.id in blocks:
                    problems.append(f"block id {item.id!r} is used twice")
                blocks.add(item.id)
                continue
            at, position = position, position + 1
            if item.id in STEP_METHODS:
                problems.append(
                    f"field id {item.id!r} is a name the compiler asks every step for "
                    f"({', '.join(sorted(STEP_METHODS))}); rename the field"
                )
            settings = types_of(item)
            if settings.invalid is not None:
                problems.append(f"field {item.id!r}: {settings.invalid}")
            if settings.annotation is None or item.id in known:
                continue  # a duplicate id is the compiler's to report
            try:
                item_type = settings.one()
            except TypeError as exc:
                problems.append(f"field {item.id!r}: {exc}")
                continue
            known[item.id] = RuleField(item.kind, item_type, at)
            types[item.id] = settings
    return FieldIndex(known, first_field, tuple(problems), types)


def read_set(action: SetAction, index: FieldIndex, where: str) -> Accepted | str:
    """The value ``action`` writes, as its field's type reads it (what the compiled checkpoint
    patches), or what is wrong with it, in words: the field is not one of ``index``'s, or its
    type does not take the value."""
    settings = index.types.get(action.field)
    if settings is None:
        return f"{where} sets {action.field!r}, which is not a field"
    outcome = settings.answer().accept(action.value)
    if not isinstance(outcome, Accepted):
        return f"{where} sets {action.field!r} to {action.value!r}: {outcome.message}"
    return outcome


# ---------------------------------------------------------------------- annotations


def _base_annotation(item: FieldDoc) -> Any:
    """The annotation of a required field of ``item``'s kind and constraints (``ValueError``
    when the constraints contradict each other)."""
    if isinstance(item, TextField):
        _ordered(item.min_length, item.max_length, "min_length", "max_length")
        if item.pattern is not None:
            _compiles(item.pattern)
        default = KIND[item.kind].longest
        return Annotated[
            str,
            Field(
                min_length=item.min_length or 1,
                max_length=item.max_length or default,
                pattern=item.pattern,
            ),
        ]
    if isinstance(item, ContactField):
        pattern = KIND[item.kind].pattern
        if pattern is None:
            return EmailStr
        return Annotated[str, Field(pattern=pattern, max_length=2_000)]
    if isinstance(item, IntegerField):
        _ordered(item.minimum, item.maximum, "minimum", "maximum")
        return Annotated[int, Field(ge=item.minimum, le=item.maximum)]
    if isinstance(item, DecimalField):
        _ordered(item.minimum, item.maximum, "minimum", "maximum")
        low = None if item.minimum is None else Decimal(str(item.minimum))
        high = None if item.maximum is None else Decimal(str(item.maximum))
        return Annotated[Decimal, Field(ge=low, le=high, decimal_places=item.decimal_places)]
    if isinstance(item, DateField):
        _ordered(item.earliest, item.latest, "earliest", "latest")
        return Annotated[date, Field(ge=item.earliest, le=item.latest)]
    if isinstance(item, ChoiceField):
        values = [o.value for o in item.options]
        if len(set(values)) != len(values):
            raise ValueError("two options have the same value")
        choice = Literal[tuple(values)]  # type: ignore[valid-type]
        if item.kind == "single_choice":
            return choice
        _ordered(item.min_selected, item.max_selected, "min_selected", "max_selected")
        return Annotated[
            list[choice],  # type: ignore[valid-type]
            Field(min_length=item.min_selected or 1, max_length=item.max_selected or len(values)),
        ]
    if isinstance(item, BooleanField) and item.must_be_true:
        return Literal[True]
    return bool


def _item_annotation(item: FieldDoc, annotation: Any) -> Any:
    """What one value a rule compares is checked against: the option type of a multiple
    choice, else the field's own type."""
    if isinstance(item, ChoiceField) and item.kind == "multiple_choice":
        return Literal[tuple(o.value for o in item.options)]
    return annotation


def _compiles(pattern: str) -> None:
    """``ValueError`` unless ``pattern`` compiles both in Python and in the engine pydantic
    validates answers with (which takes no look-around and no backreferences)."""
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"pattern {pattern!r} does not compile: {exc}") from None
    try:
        SchemaValidator(core_schema.str_schema(pattern=pattern))
    except SchemaError as exc:
        reason = str(exc).strip().splitlines()[-1].removeprefix("error: ")
        raise ValueError(f"pattern {pattern!r} does not compile: {reason}") from None


def _ordered(low: Any, high: Any, low_name: str, high_name: str) -> None:
    if low is not None and high is not None and low > high:
        raise ValueError(f"{low_name} {low} is over {high_name} {high}")
