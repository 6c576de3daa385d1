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

Numbers are bounded even when the annotation declares no bound (:data:`MAX_INTEGER`,
:data:`DECIMAL_LIMIT`, :data:`DECIMAL_MAX_DIGITS`; floats are always finite), per side: a
declared ``ge``/``gt`` replaces the default lower bound, a declared ``le``/``lt`` the upper one.
The type string names declared bounds only; a value past a default one is rejected with a hint
naming the accepted range.

A rejection carries a short message and, where the intended value is clear, a hint naming the
exact JSON to send (``send the JSON boolean true (no quotes)``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, cast

from pydantic import PydanticUndefinedAnnotation, PydanticUserError, TypeAdapter, ValidationError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import ErrorDetails, SchemaValidator, core_schema

_Node = dict[str, Any]

MAX_INTEGER = 2**53 - 1
"""Default bound on an integer's magnitude: the largest integer every JSON reader keeps exact."""
DECIMAL_LIMIT = Decimal(10**15)
"""Default exclusive bound on a Decimal's magnitude."""
DECIMAL_MAX_DIGITS = 30
"""Default limit on a Decimal's digits (which also bounds its exponent)."""


@dataclass(frozen=True, slots=True)
class Accepted:
    """A valid value: ``json_value`` is what to store, ``typed`` the validated Python value.

    ``coerced`` is True when ``accept`` read another encoding of it (``"yes"`` for ``true``).
    """

    json_value: Any
    typed: Any
    coerced: bool = False


@dataclass(frozen=True, slots=True)
class Rejected:
    """An invalid value: what was expected and what came, plus the JSON to send if known."""

    message: str
    hint: str | None


@dataclass(frozen=True, slots=True, eq=False)
class FieldType:
    """Compiled, immutable facts about one field's annotation. Build once per field."""

    annotation: Any
    adapter: TypeAdapter[Any] = field(repr=False)
    optional: bool
    type_string: str
    json_schema: dict[str, Any] = field(repr=False)
    _shape: _Node = field(repr=False)  # schema variant for describing: a Decimal is one node
    _validator: SchemaValidator = field(repr=False)  # the adapter's, plus the default bounds
    example: str | None = None

    def validate(self, value: object) -> Accepted | Rejected:
        """Validate a JSON-like value strictly; never raises for bad input.

        The value is serialised with ``json.dumps`` first, so tuples arrive as lists and
        non-string dict keys as strings, exactly as if the value had come over the wire.
        """
        outcome = self._check(value)
        if isinstance(outcome, Accepted | Rejected):
            return outcome
        return _reject(outcome[1], self._shape, self.example)

    def accept(self, value: object) -> Accepted | Rejected:
        """``validate``, also reading an unambiguous encoding of the value (see the module).

        A value read that way comes back with ``coerced=True``; if what it encodes is itself
        invalid (``"0"`` for an integer > 0), the rejection is about that value.
        """
        outcome = self._check(value)
        if isinstance(outcome, Accepted | Rejected):
            return outcome
        sent, errors = outcome
        fixed = _coerce(sent, errors, self._shape)
        if fixed is None:
            return _reject(errors, self._shape, self.example)
        again = self.validate(fixed[0])
        if isinstance(again, Accepted):
            return Accepted(again.json_value, again.typed, coerced=True)
        return again

    def _check(self, value: object) -> Accepted | Rejected | tuple[Any, list[ErrorDetails]]:
        """Accepted, Rejected before validating, or the value as JSON with pydantic's errors."""
        try:
            raw = json.dumps(value, allow_nan=False)
        except (TypeError, ValueError, RecursionError):
            return Rejected(f"expected a JSON value, got {_unencodable(value)}", None)
        try:
            typed = self._validator.validate_json(raw, strict=True)
        except ValidationError as error:
            return json.loads(raw), error.errors(include_url=False)
        return Accepted(self.adapter.dump_python(typed, mode="json"), typed)


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
    bounded = cast(core_schema.CoreSchema, _with_default_bounds(adapter.core_schema))
    # not prebuilt: a nested model would otherwise reuse its own validator, without the bounds
    validator = SchemaValidator(bounded, _use_prebuilt=False)
    try:
        validator.validate_json("null", strict=True)
        optional = True
    except ValidationError:
        optional = False
    type_string = _describe(shape, shape)
    if example is not None:
        type_string = _with_example(shape, type_string, example)
    return FieldType(annotation, adapter, optional, type_string, schema, shape, validator, example)


def _unencodable(value: object) -> str:
    if isinstance(value, float):
        return "a non-finite number"
    if isinstance(value, int):
        return "a number with too many digits"
    return f"a Python {type(value).__name__}"


# ---------------------------------------------------------------- default bounds


def _with_default_bounds(node: Any, depth: int = 0) -> Any:
    """A copy of a pydantic core schema with the default bounds on every number node.

    The schema is copied, never changed: model classes share theirs with pydantic.
    """
    if depth > 200:
        raise TypeError("unsupported field annotation: its schema nests too deeply")
    if isinstance(node, list):
        return [_with_default_bounds(item, depth + 1) for item in node]
    if not isinstance(node, dict):
        return node
    copy = {
        key: value
        if key in ("metadata", "serialization")
        else _with_default_bounds(value, depth + 1)
        for key, value in node.items()
    }
    kind = copy.get("type")
    if kind == "int":
        _bound(copy, -MAX_INTEGER, MAX_INTEGER, inclusive=True)
    elif kind == "decimal":
        _bound(copy, -DECIMAL_LIMIT, DECIMAL_LIMIT, inclusive=False)
        copy.setdefault("max_digits", DECIMAL_MAX_DIGITS)
        copy.pop("allow_inf_nan", None)
    elif kind == "float":
        copy["allow_inf_nan"] = False
    return copy


def _bound(node: dict[str, Any], low: Any, high: Any, *, inclusive: bool) -> None:
    if not {"ge", "gt"} & node.keys():
        node["ge" if inclusive else "gt"] = low
    if not {"le", "lt"} & node.keys():
        node["le" if inclusive else "lt"] = high


def _default_bounds(node: _Node) -> _Node:
    """A number node of the shape schema with the default bounds it does not declare."""
    full = dict(node)
    low: int | Decimal
    high: int | Decimal
    if node.get("type") == "integer":
        low, high, inclusive = -MAX_INTEGER, MAX_INTEGER, True
    elif node.get("format") == "decimal":
        low, high, inclusive = -DECIMAL_LIMIT, DECIMAL_LIMIT, False
        full.setdefault("maxDigits", DECIMAL_MAX_DIGITS)
    else:
        return full
    if not {"minimum", "exclusiveMinimum"} & node.keys():
        full["minimum" if inclusive else "exclusiveMinimum"] = low
    if not {"maximum", "exclusiveMaximum"} & node.keys():
        full["maximum" if inclusive else "exclusiveMaximum"] = high
    return full


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


# ---------------------------------------------------------------- type strings

_FORMATS = {
    "date": "date YYYY-MM-DD",
    "date-time": "date-time ISO 8601",
    "time": "time HH:MM[:SS]",
    "duration": "duration ISO 8601",
    "email": "email address",
    "uri": "URL",
    "uuid": "UUID",
}


def _unwrap(
    node: _Node, root: _Node, seen: frozenset[str] = frozenset()
) -> tuple[_Node | None, frozenset[str]]:
    """Resolve ``$ref``/single ``allOf`` and drop a ``null`` branch, so ``X | None`` reads X.

    ``seen`` holds the ``$defs`` names being expanded; meeting one again (a recursive model)
    gives ``None``. Returns the node and ``seen`` plus the names resolved on the way.
    """
    for _ in range(64):
        if "$ref" in node:
            name = str(node["$ref"]).rsplit("/", 1)[-1]
            if name in seen:
                return None, seen
            seen |= {name}
            node = root.get("$defs", {}).get(name, {})
        elif len(node.get("allOf", ())) == 1:
            node = node["allOf"][0]
        elif (branches := _branches(node)) and len(branches) == 1:
            node = branches[0]
        else:
            break
    return node, seen


def _branches(node: _Node) -> list[_Node] | None:
    """The non-null options of a union node, or None if it is not a union."""
    options = node.get("anyOf", node.get("oneOf"))
    if not isinstance(options, list):
        return None
    return [option for option in options if option.get("type") != "null"]


def _describe(node: _Node, root: _Node, seen: frozenset[str] = frozenset()) -> str:
    """A compact type string for a JSON schema node (``root`` holds ``$defs``)."""
    resolved, seen = _unwrap(node, root, seen)
    if resolved is None:
        return "object"
    node = resolved
    options = _options(node)
    if options is not None:
        if len(options) == 1:
            return f"exactly {_json(options[0])}"
        return "one of " + ", ".join(_json(option) for option in options)
    if branches := _branches(node):
        merged = [_options(branch) for branch in branches]
        if all(found is not None for found in merged):
            return _describe({"enum": [o for found in merged for o in found or ()]}, root)
        return " or ".join(dict.fromkeys(_describe(branch, root, seen) for branch in branches))
    kind = node.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"] or ["null"]
        return " or ".join(_describe({**node, "type": k}, root, seen) for k in kinds)
    if kind == "boolean":
        return "true or false"
    if kind == "string":
        return _describe_string(node)
    if kind in ("integer", "number"):
        return _describe_number(node)
    if kind == "array":
        return _describe_array(node, root, seen)
    if kind == "object":
        return _describe_object(node, root, seen)
    return str(kind) if kind else "any JSON value"


def _options(node: _Node) -> list[Any] | None:
    if "const" in node:
        return [node["const"]]
    if isinstance(node.get("enum"), list):
        return [option for option in node["enum"] if option is not None]
    return None


def _describe_string(node: _Node) -> str:
    fmt = node.get("format")
    if fmt in _FORMATS:
        return _FORMATS[fmt]
    text = "string" if fmt is None else f"string ({fmt})"
    if "pattern" in node:
        text += f" matching {node['pattern']}"
    size = _size(node.get("minLength"), node.get("maxLength"), "chars")
    return f"{text}, {size}" if size else text


def _describe_number(node: _Node) -> str:
    decimal = node.get("format") == "decimal"
    text = "integer" if node["type"] == "integer" else "decimal number" if decimal else "number"
    low, high = node.get("minimum"), node.get("maximum")
    strict_bounds = "exclusiveMinimum" in node or "exclusiveMaximum" in node
    if low is not None and high is not None and not strict_bounds:
        joiner = "-" if low >= 0 else " to "
        text += f" {_number(low)}{joiner}{_number(high)}"
    else:
        bounds = [
            f"{op} {_number(node[key])}"
            for key, op in (
                ("minimum", ">="),
                ("exclusiveMinimum", ">"),
                ("maximum", "<="),
                ("exclusiveMaximum", "<"),
            )
            if node.get(key) is not None
        ]
        if bounds:
            text += " " + " and ".join(bounds)
    if "multipleOf" in node:
        text += f", multiple of {_number(node['multipleOf'])}"
    if "decimalPlaces" in node:
        text += f", max {node['decimalPlaces']} decimals"
    if "maxDigits" in node:
        text += f", max {node['maxDigits']} digits"
    return text


def _with_example(shape: _Node, type_string: str, example: str) -> str:
    """The type string with an example: ``text like BL-2041`` for a plain or patterned string
    (the pattern stays the check, not the description), else ``<type>, e.g. <example>``."""
    node = _unwrap(shape, shape)[0] or {}
    if node.get("type") == "string" and "format" not in node:
        size = _size(node.get("minLength"), node.get("maxLength"), "chars")
        return f"text like {example}" + (f", {size}" if size else "")
    return f"{type_string}, e.g. {example}"


def _describe_array(node: _Node, root: _Node, seen: frozenset[str]) -> str:
    if isinstance(node.get("prefixItems"), list):
        return "list [" + ", ".join(_describe(i, root, seen) for i in node["prefixItems"]) + "]"
    items = node.get("items")
    text = "list of unique" if node.get("uniqueItems") else "list of"
    text = f"{text} {_describe(items, root, seen)}" if isinstance(items, dict) else "list"
    size = _size(node.get("minItems"), node.get("maxItems"), "items")
    return f"{text}, {size}" if size else text


def _describe_object(node: _Node, root: _Node, seen: frozenset[str]) -> str:
    properties = node.get("properties")
    if isinstance(properties, dict) and properties:
        required = set(node.get("required", ()))
        keys = ", ".join(
            f"{key}{'' if key in required else '?'}: {_describe(value, root, seen)}"
            for key, value in properties.items()
        )
        return f"object {{{keys}}}"
    extra = node.get("additionalProperties")
    if isinstance(extra, dict) and extra:
        return f"object of {_describe(extra, root, seen)}"
    return "object"


def _size(low: int | None, high: int | None, unit: str) -> str:
    if low is not None and high is not None:
        return f"exactly {_count(low, unit)}" if low == high else f"{low}-{high} {unit}"
    if low is not None:
        return f"at least {_count(low, unit)}"
    return f"at most {_count(high, unit)}" if high is not None else ""


def _count(amount: int, unit: str) -> str:
    return f"{amount} {unit.removesuffix('s') if amount == 1 else unit}"


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, Decimal):
        return format(value.normalize(), "f")
    return str(value)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# ---------------------------------------------------------------- rejections


def _reject(errors: list[ErrorDetails], shape: _Node, example: str | None = None) -> Rejected:
    """Summarise pydantic errors: at most three distinct ones, joined with "; "."""
    explained = dict(_explain(error, shape, example) for error in errors)
    first = list(explained.items())[:3]
    hints = list(dict.fromkeys(hint for _, hint in first if hint))
    return Rejected("; ".join(m for m, _ in first), "; ".join(hints) if hints else None)


def _explain(error: ErrorDetails, shape: _Node, example: str | None) -> tuple[str, str | None]:
    node, path = _locate(shape, error["loc"])
    prefix = f"{path}: " if path else ""
    kind, got = error["type"], error["input"]
    if kind == "missing":
        return f"{prefix}required field is missing", None
    if _branches(node) or kind.endswith(_TYPE_ERROR_ENDINGS) or kind in _TYPE_ERRORS:
        message = f"expected {_describe(node, shape)}, got {_show(got)}"
    else:  # a constraint: pydantic's wording, plus the input when it is a scalar
        message = error["msg"][:1].lower() + error["msg"][1:]
        message += "" if isinstance(got, list | dict) else f", got {_show(got)}"
    make_hint = None if _branches(node) else _HINTS.get(kind)
    hint = make_hint(got, node, error.get("ctx", {})) if make_hint else None
    if kind == "string_pattern_mismatch" and example is not None and not path:
        hint = f"send text like {example} (matching {node.get('pattern')})"
    return prefix + message, prefix + hint if hint else None


def _locate(shape: _Node, loc: tuple[int | str, ...]) -> tuple[_Node, str]:
    """Follow an error location into the schema; stop at a union (its tag is in the loc)."""
    node, path = _unwrap(shape, shape)[0] or {}, ""
    for part in loc:
        if _branches(node):
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
        node = _unwrap(node, shape)[0] or {}
    return node, path


def _show(value: Any) -> str:
    """Describe an offending JSON input briefly."""
    if isinstance(value, str):
        return "the string " + _json(value if len(value) <= 40 else value[:37] + "...")
    if value is None or isinstance(value, bool):
        return _json(value)
    if isinstance(value, int | float):
        text = _json(value)
        digits = len(text.lstrip("-"))
        return f"a number with {digits} digits" if digits > 24 else f"the number {text}"
    return "a list" if isinstance(value, list) else "an object"


# ---------------------------------------------------------------- unambiguous encodings


def _coerce(sent: Any, errors: list[ErrorDetails], shape: _Node) -> tuple[Any] | None:
    """``sent`` with every rejected part replaced by the value it unambiguously encodes, or
    None when any error is not of that kind (then the value is rejected as it came)."""
    fixed = sent
    for error in errors:
        node = _node_at(shape, error["loc"])
        found = _unambiguous(error["type"], error["input"], node) if node is not None else ()
        if not found:
            return None
        fixed = _replace(fixed, error["loc"], found[0])
    return (fixed,)


def _node_at(shape: _Node, loc: tuple[int | str, ...]) -> _Node | None:
    """The schema node at exactly ``loc``, or None past a union or where the loc cannot go."""
    node = _unwrap(shape, shape)[0]
    for part in loc:
        if node is None or _branches(node):
            return None
        if isinstance(part, int) and node.get("type") == "array":
            prefix_items = node.get("prefixItems") or ()
            node = prefix_items[part] if part < len(prefix_items) else node.get("items")
        elif isinstance(part, str) and node.get("type") == "object" and part != "[key]":
            extra = node.get("additionalProperties")
            node = node.get("properties", {}).get(part, extra)
        else:
            return None
        node = _unwrap(node, shape)[0] if isinstance(node, dict) else None
    return None if node is None or _branches(node) else node


_JSON_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_BOOLEAN_WORDS = {"true": True, "yes": True, "false": False, "no": False}


def _unambiguous(kind: str, got: Any, node: _Node) -> tuple[Any, ...]:
    """The one value ``got`` stands for at a node of this type, or () if it is not clear."""
    if got is None or (isinstance(got, str) and not got.strip()):
        return ()
    text = got.strip() if isinstance(got, str) else None
    if kind in ("bool_type", "bool_parsing") and node.get("type") == "boolean" and text:
        word = text.casefold()
        return (_BOOLEAN_WORDS[word],) if word in _BOOLEAN_WORDS else ()
    short = text is not None and len(text) <= 32
    if kind in ("int_type", "int_parsing") and node.get("type") == "integer" and short:
        return (int(text),) if text and _JSON_INTEGER.fullmatch(text) else ()
    if kind in ("float_type", "float_parsing") and node.get("type") == "number" and short:
        number = float(text) if text and _JSON_NUMBER.fullmatch(text) else math.nan
        return (number,) if math.isfinite(number) else ()
    if kind in ("literal_error", "enum"):
        wanted = _loose(got)
        matches = [option for option in _options(node) or () if _loose(option) == wanted]
        return (matches[0],) if wanted is not None and len(matches) == 1 else ()
    return ()


def _replace(value: Any, loc: tuple[int | str, ...], new: Any) -> Any:
    """``value`` (parsed JSON, owned by the caller) with ``new`` at ``loc``."""
    if not loc:
        return new
    parent = value
    for part in loc[:-1]:
        parent = parent[part]
    parent[loc[-1]] = new
    return value


_TRUE = {"true", "yes", "y", "1", "on"}
_FALSE = {"false", "no", "n", "0", "off"}
_NUMBER = re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?", re.ASCII)
_ISO_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]", re.ASCII)


def _bool_hint(got: Any, node: _Node, ctx: Mapping[str, Any]) -> str:
    word = got.strip().casefold() if isinstance(got, str) else _json(got)
    if word in _TRUE or word in _FALSE:
        return f"send the JSON boolean {'true' if word in _TRUE else 'false'} (no quotes)"
    return "send the JSON boolean true or false (no quotes)"


def _number_hint(got: Any, *, whole: bool) -> str | None:
    if isinstance(got, float):  # only integer fields reject a JSON float
        if got.is_integer() and abs(got) < 1e16:
            return f"send {int(got)}"
        return f"send a whole number, not {got}"
    number = _parse_number(got) if isinstance(got, str) else None
    if number is None:
        return None
    if whole and number != number.to_integral_value():
        return f"send a whole number without quotes ({got.strip()} is not whole)"
    return f"send the number {int(number) if whole else format(number, 'f')} without quotes"


def _parse_number(text: str) -> Decimal | None:
    """Read a numeric string, dropping unambiguous thousands separators ("1,200")."""
    text = text.strip()
    if not _NUMBER.fullmatch(text) or not any(c.isdigit() for c in text):
        return None
    try:
        number = Decimal(text.replace(",", ""))
    except InvalidOperation:
        return None
    return number if abs(number.adjusted()) <= 30 else None


def _choice_hint(got: Any, node: _Node, ctx: Mapping[str, Any]) -> str | None:
    options = _options(node) or []
    matches = [option for option in options if _loose(option) == _loose(got)]
    if len(matches) == 1:
        return f"send exactly {_json(matches[0])}"
    return "send one of " + ", ".join(_json(option) for option in options) if options else None


def _loose(value: Any) -> str | None:
    if isinstance(value, str):
        return " ".join(value.split()).casefold()
    return None if isinstance(value, list | dict) else _json(value)


def _date_hint(got: Any, node: _Node, ctx: Mapping[str, Any]) -> str:
    if isinstance(got, str) and _ISO_DATE_TIME.match(got):
        return f'send only the date: "{got[:10]}"'
    return 'send the date as "YYYY-MM-DD"'


def _list_hint(got: Any, node: _Node, ctx: Mapping[str, Any]) -> str | None:
    if _encodes(got, list):
        return "send a JSON list, not a string containing one"
    if isinstance(got, list | dict):
        return None
    wrapped = _json([got])
    return f"wrap it in a JSON list: {wrapped}" if len(wrapped) <= 80 else "wrap it in a JSON list"


def _string_hint(got: Any, node: _Node, ctx: Mapping[str, Any]) -> str | None:
    if isinstance(got, int | float) and not isinstance(got, bool):
        return f"send it as a JSON string: {_json(_json(got))}"
    return None


def _object_hint(got: Any, node: _Node, ctx: Mapping[str, Any]) -> str | None:
    return "send a JSON object, not a string containing one" if _encodes(got, dict) else None


def _encodes(got: Any, kind: type) -> bool:
    """Whether ``got`` is a string holding JSON of the given kind (a double-encoded value)."""
    try:
        return isinstance(got, str) and isinstance(json.loads(got), kind)
    except ValueError:
        return False


def _length_hint(got: Any, node: _Node, ctx: Mapping[str, Any]) -> str | None:
    unit = "characters" if isinstance(got, str) else "items"
    if "min_length" in ctx:
        return f"send at least {_count(ctx['min_length'], unit)}"
    return f"send at most {_count(ctx['max_length'], unit)}" if "max_length" in ctx else None


def _int_hint(got: Any, node: _Node, ctx: Mapping[str, Any]) -> str | None:
    return _number_hint(got, whole=True)


def _float_hint(got: Any, node: _Node, ctx: Mapping[str, Any]) -> str | None:
    return _number_hint(got, whole=False)


def _datetime_hint(got: Any, node: _Node, ctx: Mapping[str, Any]) -> str:
    return 'send an ISO 8601 date-time, e.g. "2026-03-01T14:30:00Z"'


def _time_hint(got: Any, node: _Node, ctx: Mapping[str, Any]) -> str:
    return 'send the time as "HH:MM" or "HH:MM:SS"'


def _pattern_hint(got: Any, node: _Node, ctx: Mapping[str, Any]) -> str:
    return f"send a string matching {ctx.get('pattern', node.get('pattern'))}"


_DECLARES = {
    "greater_than": ("minimum", "exclusiveMinimum"),
    "greater_than_equal": ("minimum", "exclusiveMinimum"),
    "less_than": ("maximum", "exclusiveMaximum"),
    "less_than_equal": ("maximum", "exclusiveMaximum"),
    "decimal_max_digits": ("maxDigits",),
    "decimal_whole_digits": ("maxDigits",),
}


def _range_hint(node: _Node, kind: str) -> str | None:
    """The accepted range of a number, with the default bounds when one of those was hit."""
    if node.get("type") not in ("integer", "number"):
        return None
    declared = any(key in node for key in _DECLARES.get(kind, ()))
    text = _describe_number(node if declared else _default_bounds(node))
    return f"send {'an' if text[0] in 'aeiou' else 'a'} {text}"


def _bound_hint(kind: str) -> _Hint:
    return lambda got, node, ctx: _range_hint(node, kind)


# Errors about the kind of value (not a constraint on it) read "expected <type>, got <input>".
_TYPE_ERROR_ENDINGS = ("_type", "_parsing")
_TYPE_ERRORS = {"literal_error", "enum", "int_from_float", "date_from_datetime_inexact"}

_Hint = Callable[[Any, _Node, Mapping[str, Any]], str | None]
_HINTS: dict[str, _Hint] = {
    "bool_type": _bool_hint,
    "bool_parsing": _bool_hint,
    "int_type": _int_hint,
    "int_parsing": _int_hint,
    "int_from_float": _int_hint,
    "float_type": _float_hint,
    "float_parsing": _float_hint,
    "decimal_type": _float_hint,
    "decimal_parsing": _float_hint,
    "literal_error": _choice_hint,
    "enum": _choice_hint,
    "date_type": _date_hint,
    "date_parsing": _date_hint,
    "date_from_datetime_parsing": _date_hint,
    "date_from_datetime_inexact": _date_hint,
    "datetime_type": _datetime_hint,
    "datetime_parsing": _datetime_hint,
    "datetime_from_date_parsing": _datetime_hint,
    "time_type": _time_hint,
    "time_parsing": _time_hint,
    "list_type": _list_hint,
    "tuple_type": _list_hint,
    "set_type": _list_hint,
    "frozen_set_type": _list_hint,
    "string_type": _string_hint,
    "model_type": _object_hint,
    "model_attributes_type": _object_hint,
    "dict_type": _object_hint,
    "string_too_short": _length_hint,
    "string_too_long": _length_hint,
    "too_short": _length_hint,
    "too_long": _length_hint,
    "string_pattern_mismatch": _pattern_hint,
    **{kind: _bound_hint(kind) for kind in (*_DECLARES, "finite_number")},
}
