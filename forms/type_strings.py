"""Type strings: the short text that tells a model exactly what a field's schema accepts.

:func:`describe` reads a JSON schema node (pydantic's, with a Decimal as one ``decimal`` number
node) and names what it accepts in a few words: ``true or false``, ``integer 1-10``, ``one of
"economy", "business"``, ``list of string, at most 3 items``, ``object {name: string, age?:
integer}``. References and a single ``allOf`` are resolved and a ``null`` branch is dropped, so
``X | None`` reads as X; a recursive model reads ``object`` where it recurs. Only declared bounds
are named, never the default ones (``forms.number_bounds``).

:func:`with_example` puts a field's example in place of a string's pattern (``text like
BL-2041``). The helpers that walk a node (:func:`unwrap`, :func:`union_branches`,
:func:`choices_of`) are shared with the rejection messages and the encodings read.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

Node = dict[str, Any]
"""A node of a JSON schema, as pydantic generates it."""

_FORMATS = {
    "date": "date YYYY-MM-DD",
    "date-time": "date-time ISO 8601",
    "time": "time HH:MM[:SS]",
    "duration": "duration ISO 8601",
    "email": "email address",
    "uri": "URL",
    "uuid": "UUID",
}


def unwrap(
    node: Node, root: Node, seen: frozenset[str] = frozenset()
) -> tuple[Node | None, frozenset[str]]:
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
        elif (branches := union_branches(node)) and len(branches) == 1:
            node = branches[0]
        else:
            break
    return node, seen


def union_branches(node: Node) -> list[Node] | None:
    """The non-null options of a union node, or None if it is not a union."""
    options = node.get("anyOf", node.get("oneOf"))
    if not isinstance(options, list):
        return None
    return [option for option in options if option.get("type") != "null"]


def describe(node: Node, root: Node, seen: frozenset[str] = frozenset()) -> str:
    """A compact type string for a JSON schema node (``root`` holds ``$defs``)."""
    resolved, seen = unwrap(node, root, seen)
    if resolved is None:
        return "object"
    node = resolved
    options = choices_of(node)
    if options is not None:
        if len(options) == 1:
            return f"exactly {as_json(options[0])}"
        return "one of " + ", ".join(as_json(option) for option in options)
    if branches := union_branches(node):
        merged = [choices_of(branch) for branch in branches]
        if all(found is not None for found in merged):
            return describe({"enum": [o for found in merged for o in found or ()]}, root)
        return " or ".join(dict.fromkeys(describe(branch, root, seen) for branch in branches))
    kind = node.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"] or ["null"]
        return " or ".join(describe({**node, "type": k}, root, seen) for k in kinds)
    if kind == "boolean":
        return "true or false"
    if kind == "string":
        return _describe_string(node)
    if kind in ("integer", "number"):
        return describe_number(node)
    if kind == "array":
        return _describe_array(node, root, seen)
    if kind == "object":
        return _describe_object(node, root, seen)
    return str(kind) if kind else "any JSON value"


def choices_of(node: Node) -> list[Any] | None:
    """The options of a choice node (``const`` or ``enum``, without null), or None."""
    if "const" in node:
        return [node["const"]]
    if isinstance(node.get("enum"), list):
        return [option for option in node["enum"] if option is not None]
    return None


def _describe_string(node: Node) -> str:
    fmt = node.get("format")
    if fmt in _FORMATS:
        return _FORMATS[fmt]
    text = "string" if fmt is None else f"string ({fmt})"
    if "pattern" in node:
        text += f" matching {node['pattern']}"
    size = _size(node.get("minLength"), node.get("maxLength"), "chars")
    return f"{text}, {size}" if size else text


def describe_number(node: Node) -> str:
    """``integer``, ``number`` or ``decimal number``, with the bounds and steps the node has."""
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


def with_example(shape: Node, type_string: str, example: str) -> str:
    """The type string with an example: ``text like BL-2041`` for a plain or patterned string
    (the pattern stays the check, not the description), else ``<type>, e.g. <example>``."""
    node = unwrap(shape, shape)[0] or {}
    if node.get("type") == "string" and "format" not in node:
        size = _size(node.get("minLength"), node.get("maxLength"), "chars")
        return f"text like {example}" + (f", {size}" if size else "")
    return f"{type_string}, e.g. {example}"


def _describe_array(node: Node, root: Node, seen: frozenset[str]) -> str:
    if isinstance(node.get("prefixItems"), list):
        return "list [" + ", ".join(describe(i, root, seen) for i in node["prefixItems"]) + "]"
    items = node.get("items")
    text = "list of unique" if node.get("uniqueItems") else "list of"
    text = f"{text} {describe(items, root, seen)}" if isinstance(items, dict) else "list"
    size = _size(node.get("minItems"), node.get("maxItems"), "items")
    return f"{text}, {size}" if size else text


def _describe_object(node: Node, root: Node, seen: frozenset[str]) -> str:
    properties = node.get("properties")
    if isinstance(properties, dict) and properties:
        required = set(node.get("required", ()))
        keys = ", ".join(
            f"{key}{'' if key in required else '?'}: {describe(value, root, seen)}"
            for key, value in properties.items()
        )
        return f"object {{{keys}}}"
    extra = node.get("additionalProperties")
    if isinstance(extra, dict) and extra:
        return f"object of {describe(extra, root, seen)}"
    return "object"


def _size(low: int | None, high: int | None, unit: str) -> str:
    if low is not None and high is not None:
        return f"exactly {count(low, unit)}" if low == high else f"{low}-{high} {unit}"
    if low is not None:
        return f"at least {count(low, unit)}"
    return f"at most {count(high, unit)}" if high is not None else ""


def count(amount: int, unit: str) -> str:
    """``1 item``, ``3 items``."""
    return f"{amount} {unit.removesuffix('s') if amount == 1 else unit}"


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, Decimal):
        return format(value.normalize(), "f")
    return str(value)


def as_json(value: Any) -> str:
    """A value as JSON text, non-ASCII characters kept."""
    return json.dumps(value, ensure_ascii=False)
