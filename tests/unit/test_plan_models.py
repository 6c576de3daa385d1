"""The revision and the field change a plan builds (``forms.operations._stage``, which spells
``forms.marked.built`` out for them) against ``built`` and pydantic's own construction.

GIVEN a fill, a decline, a retraction or a list answer WHEN it is planned THEN each revision
and change equals, dumps and reports its fields set as ``built`` and ``model_construct`` make
it; the fields set they share is never changed by a copy, an update or a refused assignment;
a value that is not a scalar is validated as before.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from forms import compile_form
from forms.examples.travel_claim import travel_claim
from forms.fill_plans import CHANGE_FIELDS, REVISION_FIELDS, Author, empty_plan
from forms.instance import FieldChange, Revision
from forms.marked import all_fields, built
from forms.operations import _stage, plan_declines, plan_fill, plan_revise
from tests.unit.test_engine_sharing import fill, started

AT = datetime(2026, 2, 3, 4, 5, 6, 789_000, tzinfo=UTC)
AGENT = Author("agent", "bot", "call-1")


def _same(made: BaseModel, kind: type[BaseModel]) -> None:
    parts = dict(made.__dict__)
    for other in (built(kind, dict(parts)), kind.model_construct(**parts)):
        assert made == other
        assert made.model_dump(mode="json") == other.model_dump(mode="json")
        assert made.model_dump_json() == other.model_dump_json()
        assert made.model_fields_set == other.model_fields_set == set(kind.model_fields)
        assert made.__pydantic_extra__ is None and made.__pydantic_private__ is None
        assert repr(made) == repr(other)
    assert type(made) is kind


def _planned_models(plan: Any) -> list[tuple[FieldChange, Revision]]:
    return [(change, change.append[0]) for change in plan.changes.values()]


def test_a_planned_revision_and_change_are_what_built_makes() -> None:
    # GIVEN a started travel claim with one answer, and a fill of a new and a corrected one
    form = compile_form(travel_claim)
    instance = fill(form, started(form), {"full_name": "Ada Lovelace"}).after
    plan = plan_fill(form, instance, {"full_name": "Ada King", "staff_id": "AB1234"}, AGENT, AT)
    plan = plan_declines(form, instance, plan, [], AGENT, AT)
    # WHEN each model is compared with built's and model_construct's / THEN they are the same
    assert len(plan.changes) == 2
    for change, revision in _planned_models(plan):
        _same(change, FieldChange)
        _same(revision, Revision)
        assert revision.at == AT and revision.by == "agent" and revision.tool_call_id == "call-1"
    assert plan.replaced == {"full_name": "Ada Lovelace"}
    # a retraction (value None) takes the same shortcut
    retracted = plan_revise(form, instance, "full_name", "retract", None, AGENT, AT)
    for change, revision in _planned_models(retracted):
        _same(change, FieldChange)
        _same(revision, Revision)
        assert revision.kind == "retraction" and revision.value is None


def test_the_shared_fields_sets_never_change() -> None:
    form = compile_form(travel_claim)
    plan = plan_fill(form, started(form), {"full_name": "Ada"}, AGENT, AT)
    ((change, revision),) = _planned_models(plan)
    assert revision.model_fields_set is REVISION_FIELDS
    assert change.model_fields_set is CHANGE_FIELDS
    # WHEN a model is assigned to (refused), copied or copied with an update
    with pytest.raises(ValidationError):
        revision.value = "Bob"  # type: ignore[misc]
    revision.model_copy(update={"value": "Bob"})
    change.model_copy(update={"cursor": 9})
    # THEN the sets shared by every planned model are as they were
    assert set(Revision.model_fields) == REVISION_FIELDS
    assert set(FieldChange.model_fields) == CHANGE_FIELDS


def test_an_author_or_value_not_of_its_type_is_validated_as_before() -> None:
    form = compile_form(travel_claim)
    # a list answer is not a scalar: built by validation, the same model
    plan = empty_plan()
    revision = _stage(plan, {}, "anything", "value", ["a", {"b": 1}], AGENT, AT)
    assert revision is not None and revision.value == ["a", {"b": 1}]
    for change, made in _planned_models(plan):
        _same(change, FieldChange)
        _same(made, Revision)
    # an author whose source is unknown is refused by validation, as it was
    with pytest.raises(ValidationError):
        plan_fill(form, started(form), {"full_name": "Ada"}, Author("nobody"), AT)  # type: ignore[arg-type]


def test_the_plans_sets_are_the_ones_built_shares() -> None:
    # GIVEN a revision built by ``built`` with every field, as a copy makes one
    form = compile_form(travel_claim)
    plan = plan_fill(form, started(form), {"full_name": "Ada"}, AGENT, AT)
    ((change, revision),) = _planned_models(plan)
    copy = built(Revision, dict(revision.__dict__))
    # THEN it shares the set the plan's revisions carry: one set per class, not two
    assert copy.model_fields_set is REVISION_FIELDS is all_fields(Revision)
    assert built(FieldChange, dict(change.__dict__)).model_fields_set is CHANGE_FIELDS


def test_a_class_not_frozen_has_no_shared_set() -> None:
    class Loose(BaseModel):
        a: int = 0

    with pytest.raises(TypeError, match="Loose is not frozen"):
        all_fields(Loose)
