"""``settings_class``: a frozen slotted dataclass whose ``__init__``, ``__repr__``, ``__eq__`` and
``__hash__`` are written out (``formwork.temporal.settings``), so that making the class compiles
nothing at import. Each behaves as ``@dataclass(frozen=True, slots=True)``'s generated one:
checked here against such a dataclass with the same fields."""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import dataclass, field
from typing import Any

import pytest

from formwork.config import Settings
from formwork.temporal.settings import TemporalSettings, settings_class


@settings_class
class Written:
    name: str
    count: int = 1
    secret: str | None = field(default=None, repr=False)
    tags: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if self.count < 0:
            raise ValueError("count")


@dataclass(frozen=True, slots=True)
class Generated:
    name: str
    count: int = 1
    secret: str | None = field(default=None, repr=False)
    tags: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if self.count < 0:
            raise ValueError("count")


CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    (("a",), {}),
    (("a", 2), {}),
    (("a",), {"count": 3, "secret": "s"}),
    ((), {"name": "b", "tags": ("x", "y")}),
    (("a", 2, "s", ("t",)), {}),
]


@pytest.mark.parametrize(("args", "kwargs"), CALLS)
def test_a_settings_class_makes_what_the_generated_dataclass_makes(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    # GIVEN the same arguments / WHEN both classes are called with them
    written, generated = Written(*args, **kwargs), Generated(*args, **kwargs)
    # THEN the same fields, the same repr (but the class name), and equality and hashing
    # by the fields alike
    assert dataclasses.astuple(written) == dataclasses.astuple(generated)
    assert repr(written).replace("Written", "Generated") == repr(generated)
    assert written == Written(*args, **kwargs)
    assert hash(written) == hash(Written(*args, **kwargs))
    assert written != Written("other")
    assert written.__eq__(generated) is NotImplemented
    assert Written.__match_args__ == Generated.__match_args__


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((), {}), (("a", 1, None, (), "extra"), {}), (("a",), {"name": "b"}), ((), {"nope": 1})],
)
def test_bad_arguments_are_a_type_error_as_with_the_generated_init(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    # GIVEN a missing, extra, repeated or unknown argument / THEN both refuse it
    with pytest.raises(TypeError):
        Generated(*args, **kwargs)
    with pytest.raises(TypeError):
        Written(*args, **kwargs)


def test_the_class_is_frozen_slotted_checked_and_replaceable() -> None:
    made = Written("a", tags=("t",))
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.count = 2  # type: ignore[misc]
    with pytest.raises(ValueError, match="count"):
        Written("a", count=-1)
    assert not hasattr(made, "__dict__")
    assert dataclasses.replace(made, count=5) == Written("a", 5, tags=("t",))
    assert Written("a").tags is not None and Written("a").tags == ()
    assert pickle.loads(pickle.dumps(made)) == made


def test_the_settings_classes_are_made_this_way_and_keep_their_behaviour() -> None:
    settings = Settings(table_name="forms", temporal=TemporalSettings(address="t:7233"))
    assert dataclasses.replace(settings, tenant_claim=None).tenant_claim is None
    assert settings == Settings(table_name="forms", temporal=TemporalSettings(address="t:7233"))
    assert Settings().temporal == TemporalSettings()
    assert "api_key" not in repr(TemporalSettings(api_key="k"))
    assert repr(Settings()).startswith("Settings(table_name=None, dynamodb_endpoint_url=None,")
