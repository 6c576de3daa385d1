"""Default bounds on numbers: the limits a field has even when its annotation declares none.

An integer stays within :data:`MAX_INTEGER` either way, a Decimal below :data:`DECIMAL_LIMIT`
with at most :data:`DECIMAL_MAX_DIGITS` digits, and a float is always finite. The bounds apply
per side: a declared ``ge``/``gt`` replaces the default lower bound, a declared ``le``/``lt``
the upper one.

:func:`with_default_bounds` adds them to a copy of pydantic's core schema, which is what values
are validated against; :func:`default_bounds` adds them to a number node of the describing
schema, so a rejection can name the range that was enforced.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from forms.type_strings import Node

MAX_INTEGER = 2**53 - 1
"""Default bound on an integer's magnitude: the largest integer every JSON reader keeps exact."""
DECIMAL_LIMIT = Decimal(10**15)
"""Default exclusive bound on a Decimal's magnitude."""
DECIMAL_MAX_DIGITS = 30
"""Default limit on a Decimal's digits (which also bounds its exponent)."""


def with_default_bounds(node: Any, depth: int = 0) -> Any:
    """A copy of a pydantic core schema with the default bounds on every number node.

    The schema is copied, never changed: model classes share theirs with pydantic.
    """
    if depth > 200:
        raise TypeError("unsupported field annotation: its schema nests too deeply")
    if isinstance(node, list):
        return [with_default_bounds(item, depth + 1) for item in node]
    if not isinstance(node, dict):
        return node
    copy = {
        key: value
        if key in ("metadata", "serialization")
        else with_default_bounds(value, depth + 1)
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


def default_bounds(node: Node) -> Node:
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
