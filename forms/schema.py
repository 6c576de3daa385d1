"""Field types: compile an annotation once, describe it to a model, validate its values.

A form field is declared with a Python annotation. :func:`field_type` compiles it into a
:class:`FieldType` holding a pydantic ``TypeAdapter``, a short *type string* that names exactly
what the schema accepts (``true or false``, never ``yes / no``), and two ways to check a value.

``validate`` reads a value as JSON in pydantic's strict mode, so nothing crosses JSON types:

* ``"42"`` is not an integer, ``"yes"``/``"true"``/``1`` are not booleans, ``3.0`` is not an
  integer; an integer is accepted for a float field.
* JSON has no date type, so ISO strings are accepted for ``date``/``datetime``/``time``.
* ``Decimal`` accepts a JSON number or a numeric string (also ``" 1.5 "``, ``"1e3"``,
  ``"1_000"``); it is stored as a JSON string such as ``"1.50"`` (trailing zeros kept).
* Nested models take a JSON object, validated strictly field by field; unknown keys follow the
  model's ``extra`` setting (ignored by default).

``accept`` is ``validate`` for an answer being written: when strict validation fails only
because a value came in another unambiguous encoding, it reads that encoding and says so
(``Accepted.coerced``). The encodings read, and only at a place whose type is not a union:

* a boolean: the strings ``"true"``, ``"false"``, ``"yes"``, ``"no"`` (any case, trimmed).
  Not ``"1"``/``"0"``, ``1``/``0``, ``"y"``/``"on"``: a digit in a yes/no field is as likely a
  count meant for another field, so those stay rejected with a hint naming the boolean;
* an integer: a string holding exactly a JSON integer (``"6"``, ``" -3 "``); not ``"6.0"``,
  ``"6.5"``, ``"1e3"``, ``"1,200"`` or ``"007"`` (a fraction, an exponent, a separator or a
  leading zero says the sender was not writing a plain integer);
* a float: a string holding exactly a finite JSON number (``"0.7"``, ``"1e3"``);
* a choice (``Literal``/``Enum``): the one option equal to the value once case and spacing are
  ignored (``"Kitchen Speaker"`` for ``"kitchen speaker"``), or once JSON types are (``2`` for
  ``"2"``, ``false`` for ``"False"``, ``"1"`` for ``1``); never when two options match.

Blanks (``""``, whitespace, ``null``) are never read as anything. Strings are never made from
numbers (``2134`` for a postcode may have lost a leading zero).

Numbers are bounded even when the annotation declares no bound (``MAX_INTEGER``,
``DECIMAL_LIMIT``, ``DECIMAL_MAX_DIGITS``; floats are always finite), per side: a declared
``ge``/``gt`` replaces the default lower bound, a declared ``le``/``lt`` the upper one. The type
string names declared bounds only; a value past a default one is rejected with a hint naming the
accepted range.

A rejection carries a short message and, where the intended value is clear, a hint naming the
exact JSON to send (``send the JSON boolean true (no quotes)``).

This module compiles the type and summarises rejections; the parts live beside it: type strings
in ``forms.type_strings``, the default bounds in ``forms.number_bounds``, the encodings read in
``forms.coercion`` and the hints in ``forms.hints``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple, cast

from pydantic import PydanticUndefinedAnnotation, PydanticUserError, TypeAdapter, ValidationError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import ErrorDetails, SchemaValidator, core_schema

from forms.coercion import coerce
from forms.hints import HINTS
from forms.number_bounds import with_default_bounds
from forms.type_strings import Node, as_json, describe, union_branches, unwrap, with_example


class Accepted(NamedTuple):
    """A valid value: ``json_value`` is what to store, ``typed`` the validated Python value.

    ``coerced`` is True when ``accept`` read another encoding of it (``"yes"`` for ``true``).
    A named tuple (immutable, built at a fraction of a frozen dataclass's cost): one per
    answer written.
    """

    json_value: Any
    typed: Any
    coerced: bool = False


@dataclass(frozen=True, slots=True)
class Rejected:
    """An invalid value: what was expected and what came, plus the JSON to send if known."""

    message: str
    hint: str | None


Checked = Accepted | Rejected | tuple[Any, list[ErrorDetails]]
"""What ``FieldType.check`` finds: a value accepted as sent, one refused before validation,
or the value as JSON with pydantic's errors, for ``FieldType.settle``."""


@dataclass(frozen=True, slots=True, eq=False)
class FieldType:
    """Compiled, immutable facts about one field's annotation. Build once per field."""

    annotation: Any
    adapter: TypeAdapter[Any] = field(repr=False)
    optional: bool
    type_string: str
    json_schema: dict[str, Any] = field(repr=False)
    _shape: Node = field(repr=False)  # schema variant for describing: a Decimal is one node
    _validator: SchemaValidator = field(repr=False)  # the adapter's, plus the default bounds
    example: str | None = None
    _serialize: Callable[..., Any] | None = field(default=None, repr=False)
    """The adapter's serializer as ``dump_python(typed, mode="json")`` calls it, or None where
    that gives back the value validated as it is (a plain text, integer or boolean)."""

    def validate(self, value: object) -> Accepted | Rejected:
        """Validate a JSON-like value strictly; never raises for bad input.

        The value is serialised with ``json.dumps`` first, so tuples arrive as lists and
        non-string dict keys as strings, exactly as if the value had come over the wire.
        """
        outcome = self.check(value)
        if isinstance(outcome, _CHECKED):
            return outcome
        return _reject(outcome[1], self._shape, self.example)

    def accept(self, value: object) -> Accepted | Rejected:
        """``validate``, also reading an unambiguous encoding of the value (see the module).

        A value read that way comes back with ``coerced=True``; if what it encodes is itself
        invalid (``"0"`` for an integer > 0), the rejection is about that value.
        """
        return self.settle(self.check(value), lenient=True)

    def settle(self, outcome: Checked, lenient: bool) -> Accepted | Rejected:
        """What ``check``'s ``outcome`` comes to: ``accept``'s answer when ``lenient``, else
        ``validate``'s. (``forms.operations.plan_fill`` checks first and settles only what
        ``check`` did not accept: most answers are valid as sent.)"""
        if isinstance(outcome, _CHECKED):
            return outcome
        sent, errors = outcome
        fixed = coerce(sent, errors, self._shape) if lenient else None
        if fixed is None:
            return _reject(errors, self._shape, self.example)
        again = self.validate(fixed[0])
        if isinstance(again, Accepted):
            return Accepted(again.json_value, again.typed, coerced=True)
        return again

    def check(self, value: object) -> Checked:
        """Accepted, Rejected before validating, or the value as JSON with pydantic's errors
        (``settle`` says what those come to)."""
        try:  # a text (most answers) as the encoder's own ``encode`` would write it
            raw = _encode_text(value) if type(value) is str else _encode(value)
        except (TypeError, ValueError, RecursionError):
            return Rejected(f"expected a JSON value, got {_unencodable(value)}", None)
        try:
            typed = self._validator.validate_json(raw, strict=True)
        except ValidationError as error:
            return json.loads(raw), error.errors(include_url=False)
        # the serializer without the wrapper of ``dump_python``, which passes a dozen defaults
        # on (this runs for every answer written), and not at all for a plain text, integer or
        # boolean; the named tuple made by ``tuple.__new__`` (its own ``__new__`` is Python)
        serialize = self._serialize
        stored = typed if serialize is None else serialize(typed, mode="json")
        return _tuple_new(Accepted, (stored, typed, False))


_CHECKED = (Accepted, Rejected)
"""What ``check`` returns decided, as a tuple: ``Accepted | Rejected`` would build a union
object on every call."""
_tuple_new = tuple.__new__
_encode = json.JSONEncoder(allow_nan=False).encode
"""``json.dumps(value, allow_nan=False)``: the same text, from one encoder (``dumps`` builds
a new one on each call for its non-default argument)."""
_encode_text = json.encoder.encode_basestring_ascii
"""What the encoder's ``encode`` returns for a ``str``, called without its Python layer."""
_AS_VALIDATED = frozenset({"str", "int", "bool"})
"""Core schema types whose validated value (strict, from JSON: an exact ``str``, ``int`` or
``bool``) is its own JSON-mode dump, unless the schema names a serializer of its own."""


def field_type(annotation: Any, example: str | None = None) -> FieldType:
    """Compile ``annotation``; raise ``TypeError`` if pydantic cannot build a schema for it.

    ``example`` (an answer as text, such as ``"BL-2041"``) replaces a string's pattern in the
    type string: ``text like BL-2041``. The pattern stays the check.
    """
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(annotation)
        schema = adapter.json_schema(mode="validation")
        shape = adapter.json_schema(mode="validation", schema_generator=_ShapeSchema)
    except (PydanticUserError, PydanticUndefinedAnnotation) as exc:
        reason = str(exc).splitlines()[0]
        raise TypeError(f"unsupported field annotation {annotation!r}: {reason}") from exc
    bounded = cast(core_schema.CoreSchema, with_default_bounds(adapter.core_schema))
    # not prebuilt: a nested model would otherwise reuse its own validator, without the bounds
    validator = SchemaValidator(bounded, _use_prebuilt=False)
    try:
        validator.validate_json("null", strict=True)
        optional = True
    except ValidationError:
        optional = False
    type_string = describe(shape, shape)
    if example is not None:
        type_string = with_example(shape, type_string, example)
    core = adapter.core_schema
    as_validated = core["type"] in _AS_VALIDATED and "serialization" not in core
    serialize = None if as_validated else adapter.serializer.to_python
    return FieldType(
        annotation, adapter, optional, type_string, schema, shape, validator, example, serialize
    )


def _unencodable(value: object) -> str:
    if isinstance(value, float):
        return "a non-finite number"
    if isinstance(value, int):
        return "a number with too many digits"
    return f"a Python {type(value).__name__}"


def json_depth(value: object) -> int:
    """Nesting depth of a JSON-like value: scalars 0, ``[]``/``{}`` 1, ``[[1]]`` 2.

    Iterative, so hostile depth cannot exhaust the stack. Raises ``ValueError`` on a cycle.
    """
    if not isinstance(value, list | tuple | dict):
        return 0
    deepest, path, stack = 0, [id(value)], [_children(value)]
    on_path = set(path)
    while stack:
        deepest = max(deepest, len(stack))
        child = next(stack[-1], stack)  # the stack itself marks exhaustion
        if child is stack:
            stack.pop()
            on_path.discard(path.pop())
        elif isinstance(child, list | tuple | dict):
            if id(child) in on_path:
                raise ValueError("a cyclic value has no JSON depth")
            path.append(id(child))
            on_path.add(id(child))
            stack.append(_children(child))
    return deepest


def _children(container: list[Any] | tuple[Any, ...] | dict[Any, Any]) -> Iterator[Any]:
    return iter(container.values() if isinstance(container, dict) else container)


class _ShapeSchema(GenerateJsonSchema):
    """Describe a Decimal as one ``decimal`` number node rather than ``number or string``."""

    def decimal_schema(self, schema: core_schema.DecimalSchema) -> JsonSchemaValue:
        node: JsonSchemaValue = {"type": "number", "format": "decimal"}
        self.update_with_validations(node, schema, self.ValidationsMapping.numeric)
        if "decimal_places" in schema:
            node["decimalPlaces"] = schema["decimal_places"]
        if "max_digits" in schema:
            node["maxDigits"] = schema["max_digits"]
        return node


# ---------------------------------------------------------------- rejections


def _reject(errors: list[ErrorDetails], shape: Node, example: str | None = None) -> Rejected:
    """Summarise pydantic errors: at most three distinct ones, joined with "; "."""
    explained = dict(_explain(error, shape, example) for error in errors)
    first = list(explained.items())[:3]
    hints = list(dict.fromkeys(hint for _, hint in first if hint))
    return Rejected("; ".join(m for m, _ in first), "; ".join(hints) if hints else None)


def _explain(error: ErrorDetails, shape: Node, example: str | None) -> tuple[str, str | None]:
    node, path = _locate(shape, error["loc"])
    prefix = f"{path}: " if path else ""
    kind, got = error["type"], error["input"]
    if kind == "missing":
        return f"{prefix}required field is missing", None
    if union_branches(node) or kind.endswith(_TYPE_ERROR_ENDINGS) or kind in _TYPE_ERRORS:
        message = f"expected {describe(node, shape)}, got {_show(got)}"
    else:  # a constraint: pydantic's wording, plus the input when it is a scalar
        message = error["msg"][:1].lower() + error["msg"][1:]
        message += "" if isinstance(got, list | dict) else f", got {_show(got)}"
    make_hint = None if union_branches(node) else HINTS.get(kind)
    hint = make_hint(got, node, error.get("ctx", {})) if make_hint else None
    if kind == "string_pattern_mismatch" and example is not None and not path:
        hint = f"send text like {example} (matching {node.get('pattern')})"
    return prefix + message, prefix + hint if hint else None


def _locate(shape: Node, loc: tuple[int | str, ...]) -> tuple[Node, str]:
    """Follow an error location into the schema; stop at a union (its tag is in the loc)."""
    node, path = unwrap(shape, shape)[0] or {}, ""
    for part in loc:
        if union_branches(node):
            break
        if isinstance(part, int) and node.get("type") == "array":
            prefix_items = node.get("prefixItems") or ()
            node = prefix_items[part] if part < len(prefix_items) else node.get("items", {})
            path += f"[{part}]"
        elif isinstance(part, str) and node.get("type") == "object" and part != "[key]":
            extra = node.get("additionalProperties")
            node = node.get("properties", {}).get(part, extra if isinstance(extra, dict) else {})
            path += f".{part}" if path else part
        else:
            break
        node = unwrap(node, shape)[0] or {}
    return node, path


def _show(value: Any) -> str:
    """Describe an offending JSON input briefly."""
    if isinstance(value, str):
        return "the string " + as_json(value if len(value) <= 40 else value[:37] + "...")
    if value is None or isinstance(value, bool):
        return as_json(value)
    if isinstance(value, int | float):
        text = as_json(value)
        digits = len(text.lstrip("-"))
        return f"a number with {digits} digits" if digits > 24 else f"the number {text}"
    return "a list" if isinstance(value, list) else "an object"


# Errors about the kind of value (not a constraint on it) read "expected <type>, got <input>".
_TYPE_ERROR_ENDINGS = ("_type", "_parsing")
_TYPE_ERRORS = {"literal_error", "enum", "int_from_float", "date_from_datetime_inexact"}
