"""Reading a builder call's arguments: strict, except for the strings models send for numbers
and booleans.

``parse_arguments`` validates the arguments against the tool's model in pydantic's strict
mode (JSON in, so dates are ISO text). Where the schema wants a number and gets ``"6"``, or a
boolean and gets ``"true"``/``"1"``/``"yes"`` or ``"false"``/``"0"``/``"no"`` (trimmed, any
case), the string is read as the number or boolean, noted as ``Coerced``, and the call is
validated again. Anything else that does not fit is an ``invalid`` ``EditError`` naming each
problem in words (``describe_errors``), with the complaints of the union members the value
plainly was not (a rule that is a condition is not also told it lacks ``all``) left out.

A model is shown an item, a rule and an action as one flat object each (``edit_shapes``), so a
key it sends may be one the schema lists and the kind does not take: that problem names the
kind and the keys it takes (``field.options: kind "integer" takes no options (its keys:
...)``), and a key left out is named (``field.text: Field required``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, get_args

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from forms.documents.edit_errors import EditError
from forms.documents.model import (
    ITEM_MODELS,
    Action,
    AllOf,
    AnyOf,
    Condition,
    Not,
    kinds_of,
)


@dataclass(frozen=True, slots=True)
class Coerced:
    """A string read as the value the schema, or the field a rule reads, wanted there (a
    number, a boolean, one of a choice's options)."""

    at: str
    sent: str
    stored: str | int | float | bool


_TRUE = frozenset({"true", "1", "yes"})
_FALSE = frozenset({"false", "0", "no"})
_INTEGER = re.compile(r"^[+-]?\d+$")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_COERCIBLE = frozenset({"int_type", "float_type", "bool_type"})


def parse_arguments(
    model: type[BaseModel], arguments: Mapping[str, object]
) -> tuple[Any, list[Coerced]]:
    """``arguments`` read strictly into ``model``, and the strings read as numbers or booleans
    on the way; ``EditError("invalid")`` with every remaining problem in words."""
    try:
        data: Any = json.loads(json.dumps(arguments))
    except (TypeError, ValueError) as exc:
        raise EditError("invalid", f"The arguments are not JSON: {exc}.") from None
    coerced: list[Coerced] = []
    for _ in range(10):  # each pass may uncover problems deeper in a union
        try:
            return model.model_validate_json(json.dumps(data), strict=True), coerced
        except ValidationError as exc:
            errors = exc.errors(include_url=False)
        fixed = _coerce(data, errors, coerced)
        if not fixed:
            break
    raise EditError(
        "invalid",
        "The arguments do not fit the tool's schema: " + describe_errors(errors, data) + ".",
        hint_for(
            errors,
            "Send only the keys the schema lists, with the types it gives; an item, a rule or "
            "an action takes only the keys of its kind.",
        ),
    )


CONTROL_HINT = (
    "Send the text named again without control, line-separator or bidi characters: ids, "
    "labels, titles and options are one line; only a description, a step's guidance and a "
    "paragraph keep line breaks. Nothing was applied."
)


def hint_for(errors: Sequence[ErrorDetails], otherwise: str) -> str:
    """The hint of a refusal: ``CONTROL_HINT`` when a text has a character a document refuses
    (``model.check_text``), else ``otherwise``."""
    if any(error["type"] == "control_character" for error in errors):
        return CONTROL_HINT
    return otherwise


def _coerce(data: Any, errors: Sequence[ErrorDetails], coerced: list[Coerced]) -> bool:
    done: set[tuple[str | int, ...]] = set()
    for error in errors:
        if error["type"] not in _COERCIBLE or not isinstance(error["input"], str):
            continue
        path = error_path(data, error["loc"])
        if path is None or path in done:
            continue
        value = _read(error["input"], error["type"])
        if value is None:
            continue
        *parents, last = path
        holder = data
        for key in parents:
            holder = holder[key]
        holder[last] = value
        done.add(path)
        coerced.append(Coerced(".".join(str(p) for p in path), error["input"], value))
    return bool(done)


def _read(text: str, kind: str) -> int | float | bool | None:
    sent = text.strip()
    if kind == "bool_type":
        lowered = sent.lower()
        return True if lowered in _TRUE else False if lowered in _FALSE else None
    if _INTEGER.match(sent):
        return int(sent)
    if kind == "float_type" and _NUMBER.match(sent):
        return float(sent)
    return None


def error_path(data: Any, loc: tuple[int | str, ...]) -> tuple[str | int, ...] | None:
    """Where in ``data`` an error's ``loc`` points (the tags of unions skipped)."""
    path: list[str | int] = []
    here = data
    for part in loc:
        keyed = isinstance(here, dict) and part in here
        if keyed or (isinstance(here, list) and isinstance(part, int) and 0 <= part < len(here)):
            path.append(part)
            here = here[part]
        elif not isinstance(here, dict | list):
            break  # the rest names members of a union the value was tried against
        # else a union's tag ("integer", "Condition") names no key: skip it
    return tuple(path) if path else None


def describe_errors(
    errors: Sequence[ErrorDetails],
    data: Any,
    name: Callable[[tuple[str | int, ...]], str] | None = None,
    limit: int = 6,
) -> str:
    """Pydantic's problems as words, one per place: ``field.minimum: Input should be a valid
    number`` (``data`` is what was validated, to tell its keys from the tags of unions;
    ``name`` says a place in words, dotted keys by default)."""
    lines: dict[str, str] = {}
    for error in _closest(list(errors)):
        loc = error["loc"]
        path = error_path(data, loc) or ()
        keyed = error["type"] in ("extra_forbidden", "missing")
        if keyed and loc[-1] not in path[-1:]:
            path = (*path, loc[-1])
        where = name(path) if name else ".".join(str(p) for p in path)
        message = error["msg"]
        if error["type"] == "extra_forbidden":
            member = _MEMBERS.get(_tag(loc[-2])) if len(loc) > 1 else None
            message = (
                f"{member[0]} takes no {loc[-1]} (its keys: {', '.join(member[1])})"
                if member is not None
                else "is not a key here"
            )
        lines.setdefault(where, f"{where}: {message}" if where else message)
    shown = list(lines.values())
    more = f" (and {len(shown) - limit} more)" if len(shown) > limit else ""
    return "; ".join(shown[:limit]) + more


def _closest(errors: list[ErrorDetails], start: int = 0) -> list[ErrorDetails]:
    """Of the members of a union a value was tried against (a rule: condition, all, any,
    not), the errors of the member that came closest: the fewest errors, nested unions
    decided the same way. The other members' complaints are noise to whoever sent it."""
    kept: list[ErrorDetails] = []
    unions: dict[tuple[int | str, ...], dict[str, list[ErrorDetails]]] = {}
    for error in errors:
        loc = error["loc"]
        at = next((i for i in range(start, len(loc)) if _is_member(loc[i])), None)
        if at is None:
            kept.append(error)
        else:
            unions.setdefault(loc[:at], {}).setdefault(str(loc[at]), []).append(error)
    for prefix, members in unions.items():
        tried = [_closest(found, len(prefix) + 1) for found in members.values()]
        fewest = min(len(errors) for errors in tried)
        kept.extend(next(errors for errors in tried if len(errors) == fewest))
    return kept


def _is_member(part: int | str) -> bool:
    """A union member's name in an error's location (``Condition``, ``int``, ``list[...]``)."""
    return isinstance(part, str) and (
        part[:1].isupper()
        or part in {"int", "float", "bool", "str", "date", "none"}
        or part.startswith(("list[", "function-"))
    )


def _keys(model: type[BaseModel], *left_out: str) -> tuple[str, ...]:
    return tuple(f.alias or k for k, f in model.model_fields.items() if k not in left_out)


def _members() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Each member of the unions an edit validates (an item by its kind, an action by its
    name, a rule by its form), as its tag in an error's location: what to call it, and the
    keys it takes."""
    members: dict[str, tuple[str, tuple[str, ...]]] = {}
    for item in ITEM_MODELS:
        for kind in kinds_of(item):
            members[kind] = (f'kind "{kind}"', _keys(item, "kind"))
    for action in get_args(get_args(Action)[0]):
        (name,) = get_args(action.model_fields["action"].annotation)
        members[name] = (f'action "{name}"', _keys(action, "action"))
    for rule, what in ((Condition, "a condition"), (AllOf, "all"), (AnyOf, "any"), (Not, "not")):
        members[rule.__name__] = (what, _keys(rule))
    return members


def _tag(part: int | str) -> str:
    """A union member's name in a location: ``function-after[_check(), Condition]`` is
    ``Condition``."""
    return str(part).rstrip("]").rsplit(", ", 1)[-1]


_MEMBERS = _members()
