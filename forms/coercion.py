"""Reading a rejected answer in another unambiguous encoding (``"yes"`` for ``true``).

``FieldType.accept`` calls :func:`coerce` when strict validation fails. Every error must sit at
a place whose type is not a union and hold a value that stands for exactly one valid value: a
boolean word, a string holding a plain JSON integer or a finite JSON number, or the one option
of a choice equal to it once case, spacing or JSON types are ignored (``forms.schema`` lists
the rules in full). If any error is of another kind, nothing is read and the value is rejected
as it came. Blanks are never read as anything.
"""

from __future__ import annotations

import math
import re
from typing import Any

from pydantic_core import ErrorDetails

from forms.type_strings import Node, as_json, choices_of, union_branches, unwrap


def coerce(sent: Any, errors: list[ErrorDetails], shape: Node) -> tuple[Any] | None:
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


def _node_at(shape: Node, loc: tuple[int | str, ...]) -> Node | None:
    """The schema node at exactly ``loc``, or None past a union or where the loc cannot go."""
    node = unwrap(shape, shape)[0]
    for part in loc:
        if node is None or union_branches(node):
            return None
        if isinstance(part, int) and node.get("type") == "array":
            prefix_items = node.get("prefixItems") or ()
            node = prefix_items[part] if part < len(prefix_items) else node.get("items")
        elif isinstance(part, str) and node.get("type") == "object" and part != "[key]":
            extra = node.get("additionalProperties")
            node = node.get("properties", {}).get(part, extra)
        else:
            return None
        node = unwrap(node, shape)[0] if isinstance(node, dict) else None
    return None if node is None or union_branches(node) else node


_JSON_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_BOOLEAN_WORDS = {"true": True, "yes": True, "false": False, "no": False}


def _unambiguous(kind: str, got: Any, node: Node) -> tuple[Any, ...]:
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
        wanted = loose(got)
        matches = [option for option in choices_of(node) or () if loose(option) == wanted]
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


def loose(value: Any) -> str | None:
    """A value as compared with a choice's options: text without case or extra spacing, a
    scalar as its JSON (None for a list or an object, which match nothing)."""
    if isinstance(value, str):
        return " ".join(value.split()).casefold()
    return None if isinstance(value, list | dict) else as_json(value)
