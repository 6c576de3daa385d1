"""Models built from validated parts (``forms.marked.built``, ``replaced``) against pydantic's
own ``model_construct`` and ``model_copy``.

GIVEN the parts of a model WHEN it is built THEN it equals, dumps and reports its fields set
as ``model_construct`` makes it; frozen models share one fields set per class, which no copy,
update or refused assignment changes; a model of a class that is not frozen, or one built
from some of its fields, has a set of its own.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import BaseModel, ValidationError

from forms.instance import HookState, InstanceState
from forms.marked import built, replaced

AT = datetime(2026, 1, 1, tzinfo=UTC)


class _Open(BaseModel):
    a: int = 0
    b: str = ""


def test_a_built_model_is_what_model_construct_makes() -> None:
    # GIVEN every field of an instance's state
    parts = dict(InstanceState(updated_at=AT).__dict__)
    # WHEN it is built from them, and by pydantic
    ours = built(InstanceState, dict(parts))
    theirs = InstanceState.model_construct(**parts)
    # THEN the two are equal, dump the same and report the same fields set
    assert ours == theirs
    assert ours.model_dump_json() == theirs.model_dump_json()
    assert ours.model_fields_set == theirs.model_fields_set == set(InstanceState.model_fields)


def test_frozen_models_share_a_fields_set_no_copy_changes() -> None:
    first = built(HookState, {"holds": True, "count": 1, "basis": None})
    second = replaced(first, count=2)
    # THEN both models built with every field share the class's set
    assert first.model_fields_set is second.model_fields_set
    shared = set(first.model_fields_set)
    # WHEN pydantic copies one with an update, and an assignment is refused
    copy = second.model_copy(update={"count": 3})
    with pytest.raises(ValidationError):
        second.count = 4  # type: ignore[misc]
    # THEN the copy has a set of its own, and the shared set is as it was
    assert copy.count == 3 and copy.model_fields_set is not first.model_fields_set
    assert first.model_fields_set == shared == {"holds", "count", "basis"}


def test_a_model_that_may_change_or_lacks_fields_has_its_own_set() -> None:
    one, two = built(_Open, {"a": 1, "b": "x"}), built(_Open, {"a": 2, "b": "y"})
    assert one.model_fields_set is not two.model_fields_set
    one.a = 5  # pydantic adds to the set of a model that is not frozen: only its own
    assert two.model_fields_set == {"a", "b"}
    partial = built(HookState, {"holds": True, "count": 1})
    assert partial.model_fields_set == {"holds", "count"}
