"""A tool's arguments validated with ``JsonValue``'s pick made in C (``forms.app.arguments``)
answer what the model's own validator answers: the same model, field for field and type for
type, or the same refusal, on random input of every tool, plain JSON or not."""

from __future__ import annotations

import datetime as dt
import enum
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forms.app import arguments as module
from forms.app.arguments import arguments
from forms.errors import BadRequest
from forms.surface.results import describe_validation
from forms.surface.tools import TOOLS, ToolSpec
from tests.support import exact_types


class Colour(enum.Enum):
    RED = "red"


class Size(enum.IntEnum):
    BIG = 3


class Word(str):
    pass


class Count(int):
    pass


class Items(list[Any]):
    pass


class Mapping(dict[str, Any]):
    pass


_text = st.text(max_size=70) | st.sampled_from(["", "a", "x" * 64, "x" * 65, "set", "undo"])
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | _text
)
_odd = st.sampled_from(
    [
        Decimal("1.50"),
        dt.date(2026, 1, 2),
        dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
        Colour.RED,
        Size.BIG,
        Word("word"),
        Count(7),
        b"bytes",
        (1, "two"),
        {3, 4},
        object(),
        1 + 2j,
    ]
)


def _json(leaves: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(
        leaves,
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(_text, inner, max_size=3)
            | st.builds(Items, st.lists(inner, max_size=2))
            | st.builds(Mapping, st.dictionaries(_text, inner, max_size=2))
        ),
        max_leaves=8,
    )


_plain = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=8,
)
_values = _plain | _plain | _plain | _json(_scalars | _odd)
"""Mostly plain JSON (what the copy validates), some holding values of other types."""
_ids = st.sampled_from(["travel-claim", "fi_1", "set", "x" * 64]) | _text
_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "values": st.dictionaries(_text, _values, min_size=1, max_size=4) | st.none(),
    "value": _values,
    "decline": st.lists(_text, max_size=3) | st.none(),
    "submit": st.booleans(),
    "action": st.sampled_from(["set", "retract", "decline", "undo", "redo", "clear_memory"]),
}
"""What each field is sent, of the kind it takes; any other field is sent an id or a text."""


def _payloads(spec: ToolSpec) -> st.SearchStrategy[Any]:
    """Mostly the tool's own fields with values of the kind each takes (so most are valid and
    the copy answers), some with one more key or one value of any kind or type, or no dict."""
    model = spec.args.model_fields
    names = [f.alias or name for name, f in model.items()]
    fields = {name: _FIELDS.get(name, _ids) for name in names}
    needed = {f.alias or name for name, f in model.items() if f.is_required()}
    sent = st.fixed_dictionaries(
        {name: made for name, made in fields.items() if name in needed},
        optional={name: made for name, made in fields.items() if name not in needed},
    )
    odd = st.tuples(sent, st.sampled_from([*names, "extra", "from_"]), _values | _ids).map(
        lambda made: {**made[0], made[1]: made[2]}
    )
    return sent | sent | st.fixed_dictionaries({}, optional=fields) | odd | _values


def _answer(validate: Any, payload: Any) -> Any:
    try:
        model = validate(payload)
    except BadRequest as exc:
        return ("refused", exc.message, exc.hint)
    return (
        type(model),
        exact_types(model.__dict__),
        model.__pydantic_fields_set__,
        model.__pydantic_extra__,
        model.__pydantic_private__,
    )


def _own(spec: ToolSpec) -> Any:
    def validate(payload: Any) -> Any:
        from pydantic import ValidationError

        try:
            return spec.args.__pydantic_validator__.validate_python(payload)
        except ValidationError as exc:
            raise BadRequest(describe_validation(exc), "check the tool's input schema") from None

    return validate


@pytest.mark.parametrize("spec", TOOLS, ids=[spec.name for spec in TOOLS])
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_the_arguments_are_what_the_models_own_validator_answers(
    spec: ToolSpec, data: st.DataObject
) -> None:
    payload = data.draw(_payloads(spec))
    assert _answer(lambda p: arguments(spec, p), payload) == _answer(_own(spec), payload)


@pytest.mark.parametrize(
    ("tool", "payload"),
    [
        ("form_fill", {"form": "f", "values": {"a": "x", "b": 1, "c": 1.5, "d": None}}),
        ("form_fill", {"form": "f", "values": {"a": [1, {"b": [True]}]}, "submit": True}),
        ("form_start", {"form": "f", "values": {"a": {"b": "c"}}, "from": "g"}),
        ("form_revise", {"form": "f", "field": "a", "action": "set", "value": [1, "x"]}),
    ],
)
def test_plain_json_is_validated_by_the_copy_alone(tool: str, payload: Any) -> None:
    spec = next(spec for spec in TOOLS if spec.name == tool)
    arguments(spec, payload)
    fast, _ = module._VALIDATORS[spec.args]
    assert fast is not None
    assert _answer(lambda p: arguments(spec, p), payload) == _answer(_own(spec), payload)
    fast(payload)  # no refusal: the model's own validator was not needed


def test_a_value_of_another_type_goes_to_the_models_own_validator() -> None:
    spec = next(spec for spec in TOOLS if spec.name == "form_fill")
    payload = {"form": "f", "values": {"a": Word("w"), "b": Size.BIG}}
    model = arguments(spec, payload)
    assert model.values == {"a": "w", "b": 3}
    assert type(model.values["a"]) is str and type(model.values["b"]) is int
    with pytest.raises(BadRequest) as refused:
        arguments(spec, {"form": "f", "values": {"a": Decimal("1")}})
    assert (
        refused.value.message
        == _answer(_own(spec), {"form": "f", "values": {"a": Decimal("1")}})[1]
    )
