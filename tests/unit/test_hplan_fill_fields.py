"""A ``form_fill``'s arguments validated without their model (``forms.app.arguments.fill_fields``)
are the model's own answer: its ``__dict__``, value for value and type for type, or the same
refusal, on random input plain or not, with or without something to do."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forms.app import arguments as module
from forms.app.arguments import fill_fields
from forms.errors import BadRequest
from forms.surface.results import describe_validation
from forms.surface.tools import TOOLS_BY_NAME, FormFillArgs
from tests.support import exact_types


class Text(str):
    pass


_leaf = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=8)
    | st.sampled_from([Decimal("2.5"), Text("t"), (1, 2), b"x"])
)
_answer = st.recursive(
    _leaf,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(), inner),
    max_leaves=6,
)
_id = st.sampled_from(["travel-claim", "", "x" * 64, "x" * 65, "fé", "a\udc80", Text("f")])
_SENT: dict[str, st.SearchStrategy[Any]] = {
    "form": _id | st.integers(),
    "instance": st.none() | _id,
    "values": st.none() | st.dictionaries(st.text(max_size=4), _answer, max_size=3) | _answer,
    "decline": st.none() | st.lists(st.text(max_size=4), max_size=2) | _answer,
    "submit": st.booleans() | _leaf,
    "extra": _answer,
}
_OPTIONAL = {name: sent for name, sent in _SENT.items() if name != "form"}
_payload = (
    st.fixed_dictionaries({"form": _SENT["form"]}, optional=_OPTIONAL)
    | st.fixed_dictionaries({"form": st.just("f")}, optional=_OPTIONAL)
    | st.fixed_dictionaries({}, optional=_SENT)
    | _answer
)


_FILL = TOOLS_BY_NAME["form_fill"]


def _fields(payload: Any) -> Any:
    return fill_fields(_FILL, payload)


def _answered(validate: Any, payload: Any) -> Any:
    try:
        return exact_types(validate(payload))
    except BadRequest as exc:
        return ("refused", exc.message, exc.hint)


def _models(payload: Any) -> Any:
    from pydantic import ValidationError

    try:
        return FormFillArgs.model_validate(payload).__dict__
    except ValidationError as exc:
        raise BadRequest(describe_validation(exc), "check the tool's input schema") from None


@settings(max_examples=600, deadline=None)
@given(payload=_payload)
def test_the_fields_are_what_the_models_own_validator_answers(payload: Any) -> None:
    assert _answered(_fields, payload) == _answered(_models, payload)


@pytest.mark.parametrize(
    "payload",
    [
        {"form": "travel-claim", "values": {"destination": "Lisbon"}},
        {"form": "f", "instance": "i1", "values": {"a": [1, {"b": None}], "c": 2.5}},
        {"form": "f", "submit": True},
        {"form": "f", "decline": ["a"]},
    ],
)
def test_plain_json_with_something_to_do_is_validated_without_the_model(
    payload: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_model(*args: Any) -> Any:
        raise AssertionError("the model was validated")

    monkeypatch.setattr(module, "arguments", no_model)
    assert fill_fields(_FILL, payload) == FormFillArgs.model_validate(payload).__dict__


@pytest.mark.parametrize(
    "payload",
    [
        {"form": "f"},
        {"form": "f", "values": {}, "decline": [], "submit": False},
        {"form": "f", "values": {"a": "x"}, "other": 1},
        {"form": "", "values": {"a": "x"}},
    ],
)
def test_what_the_copy_does_not_take_is_refused_by_the_model(payload: dict[str, Any]) -> None:
    with pytest.raises(BadRequest) as refused:
        fill_fields(_FILL, payload)
    assert ("refused", refused.value.message, refused.value.hint) == _answered(_models, payload)


def test_the_model_has_no_rule_the_copy_does_not_spell_out() -> None:
    # fill_fields checks the model's one rule after its fields (``_something_to_do``) by hand;
    # a validator added to FormFillArgs would be skipped by the copy: it must be spelled out
    # in fill_fields too, and named here
    decorators = FormFillArgs.__pydantic_decorators__
    assert list(decorators.model_validators) == ["_something_to_do"]
    assert not decorators.root_validators  # field validators live in the copied schema
