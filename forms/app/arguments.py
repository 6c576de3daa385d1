"""A tool's input, validated into its arguments' model (``forms.surface.tools``).

Each model is checked by its own pydantic validator, except for one part of the way it gets
there. pydantic's ``JsonValue`` (a fill's and a start's ``values``, a revision's ``value``)
picks the check of each value by calling a Python function on it (``_get_type_name``: about
1.2k machine instructions a value under cachegrind, a tenth of a one-value fill's
validation). Every call is first validated by a copy of the model's schema in which that
pick is ``type`` itself, keyed by the JSON types (``_exact``): a value of exactly ``str``,
``int``, ``float``, ``bool``, ``None``, ``list`` or ``dict`` (what parsed JSON is made of)
gets the check the model's own pick gives it (whose tag is then its type's name), so on such
input the copy returns the same model, field for field. A value of any other type (a
subclass, a decimal, a date) has no check in the copy, which refuses it; every refusal is
then validated again by the model's own validator, which answers as it always did: the same
values, the same errors and messages (``tests/unit/test_rec_arguments.py`` holds the two to
the same answers on random input).

A ``form_fill``'s fields are what its write reads, not its model (``fill_fields``): they are
validated by a typed-dict copy of that same schema, which makes the dict the model's
``__dict__`` would be without the model (~4k instructions less a call), its one rule after
the fields (something to do) checked on the dict. Anything that copy refuses, or that has
nothing to do, is the model's own answer, its refusal included
(``tests/unit/test_hplan_fill_fields.py`` holds the two to the same answers on random input).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pydantic.types
from pydantic import ValidationError
from pydantic_core import CoreSchema, SchemaValidator

from forms.errors import BadRequest
from forms.surface.results import describe_validation
from forms.surface.tools import ToolSpec

Validate = Callable[[object], Any]

_PICK: object = getattr(pydantic.types, "_get_type_name", None)
"""pydantic's own pick of a ``JsonValue``'s check (a private name: a pydantic without it, or
with another pick, leaves every model to its own validator alone, as ``_exact`` finds no
definition to copy)."""

_JSON_TYPES: dict[str, type] = {
    kind.__name__: kind for kind in (str, int, float, bool, type(None), list, dict)
}
"""The tags of ``JsonValue``'s choices, each the name of the type it is picked for."""


def arguments(spec: ToolSpec, payload: object) -> Any:
    """``payload`` validated into ``spec``'s arguments' model; ``BadRequest`` naming what is
    wrong (the model's own validator's errors) when it is not valid."""
    validators = _VALIDATORS.get(spec.args)
    if validators is None:
        validators = _VALIDATORS[spec.args] = _validators(spec.args)
    fast, full = validators
    try:
        if fast is not None:
            try:
                return fast(payload)
            except ValidationError:  # not plain JSON, or not valid: the model's own answer
                pass
        return full(payload)
    except ValidationError as exc:
        raise BadRequest(describe_validation(exc), "check the tool's input schema") from None


def fill_fields(spec: ToolSpec, payload: object) -> dict[str, Any]:
    """A ``form_fill``'s arguments (``spec``: the tool's) as their model's ``__dict__`` holds
    them (every field, defaults filled, in order), validated without the model (see above);
    ``BadRequest`` naming what is wrong, as ``arguments``, when they are not valid."""
    model = spec.args
    try:
        validate = _FIELDS[model]
    except KeyError:  # the first fill: its validator built now, not on a cold start's import
        validate = _FIELDS[model] = _fields_validator(model)
    if validate is not None:
        try:
            given: dict[str, Any] = validate(payload)
        except ValidationError:  # not plain JSON, or not valid: the model's own answer
            pass
        else:  # the model's ``_something_to_do``, on its fields
            if given["values"] or given["decline"] or given["submit"]:
                return given
    return arguments(spec, payload).__dict__  # type: ignore[no-any-return]


def _fields_validator(model: Any) -> Validate | None:
    """A validator of ``model``'s fields into a dict: a typed-dict copy of its ``_exact``
    schema, with its fields, their defaults and its extra behaviour, and without its model
    validator (which the caller spells out); None when ``_exact`` makes no copy."""
    schema = _exact(model.__pydantic_core_schema__)
    if schema is None:
        return None
    inner = _model_schema(schema)
    typed = {
        name: {
            "type": "typed-dict-field",
            "schema": field["schema"],
            "required": field["schema"]["type"] != "default",
        }
        for name, field in inner["schema"]["fields"].items()
    }
    extra = inner.get("config", {}).get("extra_fields_behavior", "ignore")
    fields = {"type": "typed-dict", "fields": typed, "extra_behavior": extra}
    return SchemaValidator({**schema, "schema": fields}).validate_python


def _validators(model: Any) -> tuple[Validate | None, Validate]:
    """The model's own validator (``model_validate``'s, without its wrapper; read through
    pydantic's metaclass, ~1k instructions, so kept from the model's first call, its build
    deferred to then: a cold start builds only the one it needs), and the copy with
    ``JsonValue``'s pick in C (None when the model holds no ``JsonValue``)."""
    full: Validate = model.__pydantic_validator__.validate_python
    schema: CoreSchema = model.__pydantic_core_schema__
    fast = _exact(schema)
    if fast is None:
        return None, full
    return SchemaValidator(fast, _config(schema)).validate_python, full


def _exact(schema: Any) -> Any:
    """``schema`` with each ``JsonValue`` definition's pick made by ``type``, keyed by the
    types its tags name; None when it has none. The dicts on the way are copied, the rest
    shared (a validator reads its schema, never changes it)."""
    if schema.get("type") != "definitions":
        return None
    definitions = [_picked_by_type(definition) for definition in schema["definitions"]]
    if all(a is b for a, b in zip(definitions, schema["definitions"], strict=True)):
        return None
    return {**schema, "definitions": definitions}


def _picked_by_type(definition: Any) -> Any:
    """A ``JsonValue`` definition with its pick made by ``type``; any other as it is."""
    python = definition.get("python_schema")
    if (
        definition.get("type") != "json-or-python"
        or python.get("type") != "tagged-union"
        or _PICK is None
        or python.get("discriminator") is not _PICK
        or not python["choices"].keys() <= _JSON_TYPES.keys()
    ):
        return definition
    choices = {_JSON_TYPES[tag]: check for tag, check in python["choices"].items()}
    return {**definition, "python_schema": {**python, "choices": choices, "discriminator": type}}


def _config(schema: Any) -> Any:
    """The core config the model's validator was built with: the one its model schema
    carries (pydantic hands the same to both)."""
    return _model_schema(schema).get("config")


def _model_schema(schema: Any) -> Any:
    """The model's own schema within ``schema`` (under its definitions and validators)."""
    inner = schema["schema"]
    while inner.get("type") != "model":
        inner = inner["schema"]
    return inner


_VALIDATORS: dict[type, tuple[Validate | None, Validate]] = {}
"""Each arguments' model's two validators, by the model, made on its first call."""

_FIELDS: dict[type, Validate | None] = {}
"""``fill_fields``' validator, made on the first fill (None: the model has no copy)."""


__all__ = ["arguments", "fill_fields"]
