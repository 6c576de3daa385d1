"""Hints: the exact JSON to send instead, when what a rejected value meant is clear.

Each pydantic error type that can have one maps to a function in :data:`HINTS`, called with the
value that came, the schema node it was checked against and the error's context: ``send the
JSON boolean true (no quotes)`` for ``"yes"``, ``send the number 1200 without quotes`` for
``"1,200"``, ``wrap it in a JSON list: ["red"]`` for ``"red"``. A number past a bound is told
the accepted range, with the default bounds when one of those was hit. A function returns None
when it cannot tell what was meant: no hint is better than a wrong one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from forms.coercion import loose
from forms.number_bounds import default_bounds
from forms.type_strings import Node, as_json, choices_of, count, describe_number

_TRUE = {"true", "yes", "y", "1", "on"}
_FALSE = {"false", "no", "n", "0", "off"}
_NUMBER = re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?", re.ASCII)
_ISO_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]", re.ASCII)


def _bool_hint(got: Any, node: Node, ctx: Mapping[str, Any]) -> str:
    word = got.strip().casefold() if isinstance(got, str) else as_json(got)
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


def _choice_hint(got: Any, node: Node, ctx: Mapping[str, Any]) -> str | None:
    options = choices_of(node) or []
    matches = [option for option in options if loose(option) == loose(got)]
    if len(matches) == 1:
        return f"send exactly {as_json(matches[0])}"
    return "send one of " + ", ".join(as_json(option) for option in options) if options else None


def _date_hint(got: Any, node: Node, ctx: Mapping[str, Any]) -> str:
    if isinstance(got, str) and _ISO_DATE_TIME.match(got):
        return f'send only the date: "{got[:10]}"'
    return 'send the date as "YYYY-MM-DD"'


def _list_hint(got: Any, node: Node, ctx: Mapping[str, Any]) -> str | None:
    if _encodes(got, list):
        return "send a JSON list, not a string containing one"
    if isinstance(got, list | dict):
        return None
    wrapped = as_json([got])
    return f"wrap it in a JSON list: {wrapped}" if len(wrapped) <= 80 else "wrap it in a JSON list"


def _string_hint(got: Any, node: Node, ctx: Mapping[str, Any]) -> str | None:
    if isinstance(got, int | float) and not isinstance(got, bool):
        return f"send it as a JSON string: {as_json(as_json(got))}"
    return None


def _object_hint(got: Any, node: Node, ctx: Mapping[str, Any]) -> str | None:
    return "send a JSON object, not a string containing one" if _encodes(got, dict) else None


def _encodes(got: Any, kind: type) -> bool:
    """Whether ``got`` is a string holding JSON of the given kind (a double-encoded value)."""
    try:
        return isinstance(got, str) and isinstance(json.loads(got), kind)
    except ValueError:
        return False


def _length_hint(got: Any, node: Node, ctx: Mapping[str, Any]) -> str | None:
    unit = "characters" if isinstance(got, str) else "items"
    if "min_length" in ctx:
        return f"send at least {count(ctx['min_length'], unit)}"
    return f"send at most {count(ctx['max_length'], unit)}" if "max_length" in ctx else None


def _int_hint(got: Any, node: Node, ctx: Mapping[str, Any]) -> str | None:
    return _number_hint(got, whole=True)


def _float_hint(got: Any, node: Node, ctx: Mapping[str, Any]) -> str | None:
    return _number_hint(got, whole=False)


def _datetime_hint(got: Any, node: Node, ctx: Mapping[str, Any]) -> str:
    return 'send an ISO 8601 date-time, e.g. "2026-03-01T14:30:00Z"'


def _time_hint(got: Any, node: Node, ctx: Mapping[str, Any]) -> str:
    return 'send the time as "HH:MM" or "HH:MM:SS"'


def _pattern_hint(got: Any, node: Node, ctx: Mapping[str, Any]) -> str:
    return f"send a string matching {ctx.get('pattern', node.get('pattern'))}"


_DECLARES = {
    "greater_than": ("minimum", "exclusiveMinimum"),
    "greater_than_equal": ("minimum", "exclusiveMinimum"),
    "less_than": ("maximum", "exclusiveMaximum"),
    "less_than_equal": ("maximum", "exclusiveMaximum"),
    "decimal_max_digits": ("maxDigits",),
    "decimal_whole_digits": ("maxDigits",),
}


def _range_hint(node: Node, kind: str) -> str | None:
    """The accepted range of a number, with the default bounds when one of those was hit."""
    if node.get("type") not in ("integer", "number"):
        return None
    declared = any(key in node for key in _DECLARES.get(kind, ()))
    text = describe_number(node if declared else default_bounds(node))
    return f"send {'an' if text[0] in 'aeiou' else 'a'} {text}"


def _bound_hint(kind: str) -> Hint:
    return lambda got, node, ctx: _range_hint(node, kind)


Hint = Callable[[Any, Node, Mapping[str, Any]], str | None]
HINTS: dict[str, Hint] = {
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
