"""The form tools in OpenAI's strict mode, typed for a set of forms.

Strict mode (structured outputs: ``"strict": true`` on a function tool) makes the model's
arguments follow the schema exactly, and takes only a subset of JSON Schema: every object
closed (``additionalProperties: false``) with every property in ``required``, a property that
may be left out written as a union with ``null``, and only the keywords it lists (``type``,
``enum``, ``anyOf``, ``description``, ``pattern``, ``format`` among nine formats, the numeric
bounds, ``minItems``/``maxItems``; no ``default``, ``oneOf``, ``minLength``...).

The compact surface cannot be made strict as it is: ``values`` is an open map (field id ->
answer) and ``form_revise.value`` takes any JSON value. Both are typed from the forms a caller
can use (``strict_tools``): ``values`` becomes an object of their field ids, each typed as its
field and nullable, ``value`` the union of their answers' shapes, ``form`` one of their ids,
``decline`` one of the ids a user may decline. So a strict export belongs to a set of forms.

Since every field id is a key of ``values``, the model sends ``null`` for each one it has no
answer to: ``strict_arguments`` reads such a call's ``null`` answers as not given (everywhere
else a ``null`` answer is refused, with a hint to retract instead).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from forms.surface.formats import StrictFormat, as_nullable, one_line
from forms.surface.tools import TOOLS, ToolSpec

if TYPE_CHECKING:
    from forms.compiled import CompiledForm

STRICT_STRING_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
"""The string formats strict mode takes; a field's other formats are left to the server."""
_KEPT = frozenset(
    {
        "type",
        "enum",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
    }
)
"""Keywords kept as they are (``description``, ``anyOf``, ``items`` and ``properties`` are
walked). Everything else strict mode refuses (``default``, ``minLength``, ``maxLength``,
``title``, ``examples``, ``uniqueItems``...) is left out: the server still checks each answer
against its field and answers a bad one as data, so the strict schema may take more than the
field, never less."""
_SCALARS = frozenset({"string", "number", "integer", "boolean"})
_NULL = {"type": "null"}
_REGEX_BEYOND = re.compile(r"\(\?[=!<P]|\\[1-9AZz]")
"""Pattern syntax beyond strict mode's regular expressions (lookaround, named groups,
backreferences, Python's anchors): such a pattern is left to the server."""
_JSON_KINDS: dict[type, str] = {str: "string", bool: "boolean", int: "integer", float: "number"}


class NotStrict(ValueError):
    """A type strict mode cannot express: a map with open keys, a value of any type, a
    recursive type."""


def strict_definitions(fmt: StrictFormat, forms: Sequence[CompiledForm]) -> list[dict[str, Any]]:
    """The form tools, ``"strict": true``, typed for ``forms``, in ``fmt``'s shape: Chat
    Completions' (``openai-strict``) or the Responses API's (``openai-responses-strict``).
    Raises ``NotStrict`` for a field strict mode cannot type."""
    entries: list[dict[str, Any]] = []
    for tool in strict_tools(forms):
        definition = {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.input_schema(),
            "strict": True,
        }
        if fmt == "openai-strict":
            entries.append({"type": "function", "function": definition})
        else:
            entries.append({"type": "function", **definition})
    return entries


def strict_arguments(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A strict call's arguments as the tools read them: an answer of ``null`` in ``values`` is
    one not given (strict mode makes every field id a key), and is left out."""
    values = arguments.get("values")
    if not isinstance(values, Mapping):
        return dict(arguments)
    return {**arguments, "values": {k: v for k, v in values.items() if v is not None}}


@dataclass(frozen=True, slots=True)
class StrictTool:
    """A form tool in strict mode: its argument model's schema made strict, with the
    properties in ``typed`` replaced (``None``: left out)."""

    spec: ToolSpec
    typed: Mapping[str, dict[str, Any] | None]

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def description(self) -> str:
        return self.spec.description

    def input_schema(self) -> dict[str, Any]:
        schema = self.spec.args.model_json_schema()
        properties: dict[str, Any] = {}
        for name, prop in schema.get("properties", {}).items():
            replaced = self.typed.get(name, prop)
            if replaced is not None:
                properties[name] = replaced
        strict = strict_schema({**schema, "properties": properties})
        strict.pop("description", None)  # the model's docstring: the tool's description
        return strict


def strict_tools(forms: Sequence[CompiledForm]) -> tuple[StrictTool, ...]:
    """The form tools in strict mode for ``forms``: ``form`` one of their ids, ``values`` their
    fields by id (in the forms' order; an id two forms share takes either's answers),
    ``value`` the shapes of their answers, ``decline`` the ids a user may decline (left out
    when none may be). A field an approver decides is not the agent's to write: left out."""
    fields: dict[str, list[dict[str, Any]]] = {}
    declinable: list[str] = []
    for form in forms:
        for field in form.fields.values():
            if not field.offered:
                continue
            try:
                typed = strict_schema(field.type.json_schema)
            except NotStrict as error:
                raise NotStrict(f"{form.id} field {field.id!r}: {error}") from None
            kinds = fields.setdefault(field.id, [])
            if typed not in kinds:
                kinds.append(typed)
            if field.declinable and field.id not in declinable:
                declinable.append(field.id)
    answers = {field_id: _or_null(_union(kinds)) for field_id, kinds in fields.items()}
    shapes = [shape for kinds in fields.values() for kind in kinds for shape in _shapes(kind)]
    replaced: dict[str, dict[str, Any] | None] = {
        "values": {
            **_closed(answers),
            "description": "Answers by field id; null for each one not given",
        },
        "value": {**_or_null(_union(shapes)), "description": 'Only with "set"; else null'},
        "decline": None,
        "part": {
            "type": ["string", "null"],
            "description": 'null for the open step; "outline", a step id, or a field id',
        },
    }
    ids = list(dict.fromkeys(form.id for form in forms))
    if ids:
        replaced["form"] = {"type": "string", "enum": ids, "description": "Form id"}
    if declinable:
        replaced["decline"] = {
            "anyOf": [{"type": "array", "items": {"type": "string", "enum": declinable}}, _NULL],
            "description": "Ids the user won't answer or has no preference on",
        }
    return tuple(StrictTool(spec, replaced) for spec in TOOLS)


def strict_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` (a pydantic JSON schema) in the subset strict mode takes: ``$ref`` inlined
    from ``schema``'s ``$defs``; every object closed, every property required (one the model
    may leave out stays as it is: the model sends a value, or ``null`` where ``null`` is one);
    ``oneOf`` as ``anyOf``; ``const`` as a one-value ``enum``; ``X | None`` of a scalar as
    ``{"type": [X, "null"]}``; no keyword strict mode refuses (``_KEPT``). Raises
    ``NotStrict`` for what it cannot express."""
    result: dict[str, Any] = _strict(schema, schema.get("$defs", {}), ())
    return result


def _strict(node: Mapping[str, Any], defs: Mapping[str, Any], seen: tuple[str, ...]) -> Any:
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if name in seen or name not in defs:
            raise NotStrict(f"{name} is a recursive type")
        rest = {k: v for k, v in node.items() if k != "$ref"}
        return _strict({**defs[name], **rest}, defs, (*seen, name))
    merged = node.get("allOf")
    if isinstance(merged, list) and len(merged) == 1:
        rest = {k: v for k, v in node.items() if k != "allOf"}
        return _strict({**merged[0], **rest}, defs, seen)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("anyOf", "oneOf"):
            out["anyOf"] = [_strict(branch, defs, seen) for branch in value]
        elif key == "const":
            out["enum"] = [value]
        elif key == "items" and isinstance(value, Mapping):
            out["items"] = _strict(value, defs, seen)
        elif key == "prefixItems" and "items" not in node:  # a tuple: any of its places
            out["items"] = _union([_strict(place, defs, seen) for place in value])
        elif key == "description":
            out["description"] = one_line(value)
        elif key in _KEPT and _takes(key, value):
            out[key] = value
    if node.get("type") == "object" or "properties" in node:
        if not node.get("properties") and node.get("additionalProperties") not in (None, False):
            raise NotStrict("a map with open keys")
        properties = node.get("properties", {})
        out.update(_closed({k: _strict(v, defs, seen) for k, v in properties.items()}))
    if "enum" in out and "type" not in out:
        out = _typed_enum(out)
    if not ("type" in out or "anyOf" in out):
        raise NotStrict("a value of any type")
    return as_nullable(out, _SCALARS)


def _typed_enum(node: dict[str, Any]) -> dict[str, Any]:
    """An ``enum`` without a ``type`` with one: its values' JSON kind, or a branch per kind."""
    by_kind: dict[str, list[Any]] = {}
    for value in node["enum"]:
        by_kind.setdefault(_JSON_KINDS.get(type(value), "null"), []).append(value)
    rest = {k: v for k, v in node.items() if k != "enum"}
    if len(by_kind) == 1:
        ((kind, values),) = by_kind.items()
        return {**rest, "type": kind, "enum": values}
    return {**rest, "anyOf": [{"type": kind, "enum": values} for kind, values in by_kind.items()]}


def _takes(keyword: str, value: Any) -> bool:
    if keyword == "format":
        return value in STRICT_STRING_FORMATS
    if keyword == "pattern":
        return isinstance(value, str) and not _REGEX_BEYOND.search(value)
    return True


def _closed(properties: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": dict(properties),
        "required": list(properties),
        "additionalProperties": False,
    }


def _admits_null(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    return (
        kind == "null"
        or (isinstance(kind, list) and "null" in kind)
        or None in schema.get("enum", ())
        or any(_admits_null(branch) for branch in schema.get("anyOf", ()))
    )


def _or_null(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema``, or ``null``."""
    if _admits_null(schema):
        return schema
    if "anyOf" in schema:
        return {**schema, "anyOf": [*schema["anyOf"], _NULL]}
    return as_nullable({"anyOf": [schema, _NULL]}, _SCALARS)


def _union(schemas: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One schema taking what any of ``schemas`` takes (each branch once; an ``integer``
    beside a ``number`` says nothing more). ``null`` alone when there is none."""
    distinct: list[dict[str, Any]] = []
    for schema in schemas:
        branches = schema["anyOf"] if set(schema) == {"anyOf"} else [schema]
        distinct.extend(b for b in branches if b not in distinct)
    if {"type": "number"} in distinct and {"type": "integer"} in distinct:
        distinct.remove({"type": "integer"})
    if len(distinct) == 1:
        return distinct[0]
    return {"anyOf": distinct} if distinct else dict(_NULL)


def _shapes(schema: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The JSON shapes ``schema`` takes, without its constraints (``{"type": "string"}`` for a
    pattern, a format or a choice of strings); ``null`` left out."""
    found: list[dict[str, Any]] = []
    for branch in schema.get("anyOf", ()):
        found.extend(_shapes(branch))
    kind = schema.get("type")
    kinds: list[str] = kind if isinstance(kind, list) else [kind] if kind else []
    if not kinds:
        kinds = [_JSON_KINDS[type(v)] for v in schema.get("enum", ()) if type(v) in _JSON_KINDS]
    for each in dict.fromkeys(kinds):
        if each == "array":
            found.append({"type": "array", "items": _union(_shapes(schema.get("items", {})))})
        elif each == "object":
            shaped = {k: _union(_shapes(v)) for k, v in schema.get("properties", {}).items()}
            found.append(_closed(shaped))
        elif each != "null":
            found.append({"type": each})
    return found
