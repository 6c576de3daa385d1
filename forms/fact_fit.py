"""Type fit: can every value of a fact key fill a field of some type?

Part of the core, beside the vocabulary (``forms.vocabulary``) whose keys it fits: the compile
check (a field that declares ``memory="person.weight_kg"``) and recall ask the same
question. It is answered on the JSON schemas pydantic builds for both types, the way
``forms.type_strings`` reads them, so whatever pydantic accepts as a field annotation
(``int``, ``Decimal``, ``date``, ``EmailStr``, ``Literal[...]``, an ``Enum``, ``X | None``,
``Annotated[int, Field(ge=0)]``...) is read the same way. Each schema is taken apart into
*kinds*: ``integer``, ``number``, ``decimal``, ``boolean``, ``string`` (with its format:
``date``, ``email``...), one ``choice`` per option, or ``other`` (a list, an object: nothing a
fact holds). A fact fits a field when each of its kinds is accepted by one of the field's:

* a kind accepts itself (a date fills a date field, a choice the same option);
* a number field (``float`` or ``Decimal``) accepts an integer, a float or a decimal fact;
  an integer field accepts only integers (a decimal would lose its fraction);
* a text field (``str``) accepts text and email addresses (an email is text), not dates,
  times or other formatted strings (a date mapped to a text field is a mistake in the form);
* a choice fact fits a field that takes every one of its options; free text never fits a
  choice field (``str`` into ``Literal[...]`` does not fit).

Constraints (bounds, lengths, patterns) are not part of the fit: they are checked on each
value at recall, and a value the field refuses is not recalled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from forms.schema import FieldType, field_type
from forms.type_strings import Node, as_json, choices_of, union_branches, unwrap

if TYPE_CHECKING:
    from forms.vocabulary import FactKey


class Kind(NamedTuple):
    """One kind of value a type accepts: its name, the string format or the option's JSON,
    and for a choice the option itself."""

    name: str
    detail: str | None = None
    value: Any = None


class TypeFit(NamedTuple):
    """Whether a fact fits a field; when it does not, ``reason`` says why."""

    fits: bool
    reason: str | None = None

    def __bool__(self) -> bool:
        return self.fits


_NUMBERS = frozenset({"integer", "number", "decimal"})
_TEXT_FORMATS = frozenset({None, "email"})
"""String formats whose values are plain text in Python (an ``EmailStr`` is a ``str``)."""


class _KindSchema(GenerateJsonSchema):
    """A Decimal as one ``decimal`` node, not pydantic's ``number or string``."""

    def decimal_schema(self, schema: core_schema.DecimalSchema) -> JsonSchemaValue:
        return {"type": "number", "format": "decimal"}


def kinds_of(field: FieldType) -> tuple[Kind, ...]:
    """The kinds of value a compiled type accepts, in schema order, without duplicates."""
    schema = field.adapter.json_schema(mode="validation", schema_generator=_KindSchema)
    return tuple(dict.fromkeys(_kinds(schema, schema, frozenset())))


def _kinds(node: Node, root: Node, seen: frozenset[str]) -> list[Kind]:
    resolved, seen = unwrap(node, root, seen)
    if resolved is None:
        return [Kind("other")]
    choices = choices_of(resolved)
    if choices is not None:
        return [Kind("choice", as_json(option), option) for option in choices]
    branches = union_branches(resolved)
    if branches is not None:
        return [kind for branch in branches for kind in _kinds(branch, root, seen)]
    kind = resolved.get("type")
    if isinstance(kind, list):
        return [
            found
            for name in kind
            if name != "null"
            for found in _kinds({**resolved, "type": name}, root, seen)
        ]
    if kind in ("boolean", "integer"):
        return [Kind(kind)]
    if kind == "number":
        return [Kind("decimal" if resolved.get("format") == "decimal" else "number")]
    if kind == "string":
        return [Kind("string", resolved.get("format"))]
    return [Kind("other", str(kind))]


def _value_kind(option: Any) -> Kind:
    if isinstance(option, bool):
        return Kind("boolean")
    if isinstance(option, int):
        return Kind("integer")
    if isinstance(option, float):
        return Kind("number")
    if isinstance(option, str):
        return Kind("string")
    return Kind("other")


def accepts(field: Kind, fact: Kind) -> bool:
    """Whether a field of kind ``field`` takes every value of kind ``fact``."""
    if fact.name == "choice":
        if field.name == "choice":
            return field.detail == fact.detail
        return accepts(field, _value_kind(fact.value))
    if field.name == "string":
        return fact.name == "string" and (
            fact.detail == field.detail or (field.detail is None and fact.detail in _TEXT_FORMATS)
        )
    if field.name in ("number", "decimal"):
        return fact.name in _NUMBERS
    return field.name in ("integer", "boolean") and fact.name == field.name


def fits(fact: tuple[Kind, ...], field: tuple[Kind, ...]) -> bool:
    """Whether every kind of the fact is accepted by some kind of the field."""
    return all(any(accepts(f, k) for f in field) for k in fact)


def type_fit(fact: FactKey, field: FieldType | Any) -> TypeFit:
    """Whether every value of ``fact`` can fill a field of this type (a ``FieldType``, or an
    annotation as a field declares it); when it cannot, the reason."""
    if not isinstance(field, FieldType):
        try:
            field = field_type(field)
        except TypeError as exc:
            return TypeFit(False, str(exc))
    if fits(fact.kinds, kinds_of(field)):
        return TypeFit(True)
    return TypeFit(
        False, f"{fact.key} holds {fact.type.type_string}; the field takes {field.type_string}"
    )
