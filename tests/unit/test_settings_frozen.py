"""``settings_class``'s frozen side, written out (``formwork.temporal.settings``) so that making
the class compiles nothing: assigning or deleting a field, pickling and copying behave as
``@dataclass(frozen=True, slots=True)``'s generated methods do."""

from __future__ import annotations

import copy
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
    tags: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class Generated:
    name: str
    count: int = 1
    tags: tuple[str, ...] = field(default_factory=tuple)


def _error(action: Any) -> tuple[type[BaseException], str]:
    with pytest.raises(Exception) as caught:
        action()
    return caught.type, str(caught.value)


@pytest.mark.parametrize("name", ["name", "count", "tags"])
def test_assigning_or_deleting_a_field_is_the_generated_frozen_error(name: str) -> None:
    # GIVEN an instance of each class / WHEN a field is assigned or deleted
    written, generated = Written("a"), Generated("a")
    # THEN both refuse it with the same error and message
    assert _error(lambda: setattr(written, name, 2)) == _error(lambda: setattr(generated, name, 2))
    assert _error(lambda: delattr(written, name)) == _error(lambda: delattr(generated, name))
    assert _error(lambda: setattr(written, name, 2))[0] is dataclasses.FrozenInstanceError


def test_any_other_attribute_is_refused_too() -> None:
    made = Written("a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.other = 1  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del made.other  # type: ignore[attr-defined]


def test_pickled_state_and_copies_are_the_generated_ones() -> None:
    # GIVEN the same fields / THEN the same pickled state (a list of the values) and copies
    written, generated = Written("a", 2, ("t",)), Generated("a", 2, ("t",))
    written_reduced, generated_reduced = written.__reduce_ex__(4), generated.__reduce_ex__(4)
    assert written_reduced[0] is generated_reduced[0]  # copyreg.__newobj__
    assert written_reduced[2:] == generated_reduced[2:]  # the state: a list of the values
    assert type(written_reduced[2]) is list
    for made in (written, Settings(table_name="forms"), TemporalSettings(address="t:7233")):
        assert pickle.loads(pickle.dumps(made)) == made
        assert copy.copy(made) == made and copy.deepcopy(made) == made
    with pytest.raises(dataclasses.FrozenInstanceError):
        Settings().region = "eu-west-1"  # type: ignore[misc]
