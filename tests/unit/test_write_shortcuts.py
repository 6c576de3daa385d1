"""The shortcuts a one-field write takes in planning and in the store's commit give what the
plain code gives: an empty plan is a default ``FillPlan``, a commit the engine planned gives
the instance it made only when the plain dict comparison would, and the store's size bound
(``forms.storage.sizes._instance_bound``, memoised per sealed outbox) is never below the exact
size, so the limit stays exact (``check_instance`` measures to the byte past the bound)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from forms import compile_form
from forms.examples.travel_claim import travel_claim
from forms.fill_plans import FillPlan, empty_plan
from forms.instance import (
    _IDENTITY,
    _MOVED,
    FormInstance,
    HookState,
    InstanceState,
    OutboxEntry,
    Recollection,
    Rejection,
    StepOverride,
    applied_unshared,
)
from forms.marked import Marked, replaced
from forms.storage.contract import make_instance, seeded_log
from forms.storage.sizes import _instance_bound, instance_bytes
from tests.unit.test_engine_sharing import fill, started

WHEN = datetime(2026, 3, 4, 5, 6, 7, 891_011, tzinfo=UTC)
ODD = 'é"\\\n\t\x01\u2028日本'
"""Text that JSON escapes, or writes in more than one byte per character."""


def test_an_empty_plan_is_a_default_plan_whose_parts_are_made_when_first_noted() -> None:
    plan, other = empty_plan(), empty_plan()
    assert plan == FillPlan()
    for part in dataclasses.fields(FillPlan):
        empty = getattr(plan, part.name)
        assert empty == ({} if isinstance(empty, dict) else [])
        assert empty is getattr(other, part.name)  # shared, so it refuses every change
        with pytest.raises(TypeError):
            empty["x"] = 1
        if isinstance(empty, dict):
            plan.put(part.name, "x", 1)
            plan.put(part.name, "y", 2)
            assert getattr(plan, part.name) == {"x": 1, "y": 2}
        else:
            plan.add(part.name, "x")
            plan.add(part.name, "y")
            assert getattr(plan, part.name) == ["x", "y"]
        assert getattr(other, part.name) == empty == ({} if isinstance(empty, dict) else [])


def test_identity_and_moved_fields_with_the_logs_are_every_field_of_an_instance() -> None:
    named = {*_IDENTITY.__reduce__()[1], *_MOVED.__reduce__()[1], "history"}
    assert named == set(FormInstance.model_fields)


def test_a_planned_commit_gives_the_made_instance_only_when_its_parts_are_equal() -> None:
    # GIVEN a fill planned on a started travel claim
    form = compile_form(travel_claim)
    before = started(form)
    step = fill(form, before, {"staff_id": "AB1234"})
    # WHEN its state is an equal copy / THEN the instance made is still the one applied
    same = replaced(step.commit, state=replaced(step.commit.state))
    assert applied_unshared(before, same) is step.after
    # WHEN its state differs / THEN a new instance holds the commit's state and the same logs
    later = replaced(step.commit, state=replaced(step.commit.state, updated_at=WHEN))
    applied = applied_unshared(before, later)
    assert applied is not step.after
    assert applied.state is later.state
    assert applied.history == step.after.history
    assert applied.version == step.after.version


def _states() -> list[InstanceState]:
    entry = OutboxEntry(
        key=ODD, hook_id="h", occurrence=1, kind="approval", created_at=WHEN, error=ODD
    )
    return [
        InstanceState(updated_at=WHEN),
        InstanceState(
            status="completed",
            closed_reason=ODD,
            hooks=Marked({ODD: HookState(holds=True, count=3, basis=ODD)}),
            override=StepOverride(step=ODD, kind="focus", by="agent"),
            rejections=[Rejection(key="h:1", hook_id="h", message=ODD * 9, at=WHEN)],
            outbox={ODD: entry, "k": entry.model_copy(update={"key": "k"})},
            updated_at=WHEN + timedelta(microseconds=7),
            recalled={
                ODD: Recollection(
                    use="offer",
                    key=ODD,
                    value={"kg": [70, ODD]},
                    shown=ODD,
                    entry=0,
                    fact_revision=2,
                    stated_at=WHEN,
                )
            },
            page_edits=[ODD, "b"],
        ),
    ]


@pytest.mark.parametrize("state", _states(), ids=["empty", "every-part"])
def test_the_size_bound_is_never_below_the_exact_size(state: InstanceState) -> None:
    instance = make_instance(
        "inst-é", form_id="intake-日本", state=state, history={ODD: seeded_log(["x"], WHEN)}
    )
    sealed = instance.snapshot()
    exact = instance_bytes(instance, state.model_dump_json())
    assert _instance_bound(instance) >= exact
    assert _instance_bound(sealed) >= exact
    # a second look at the same sealed outbox and recollections answers the same
    assert _instance_bound(sealed) == _instance_bound(sealed)
    # a later state sharing them (a commit that left them alone) is bounded the same way
    later = replaced(sealed.state, updated_at=WHEN + timedelta(days=1))
    assert later.outbox is sealed.state.outbox
    moved = replaced(sealed, state=later)
    assert _instance_bound(moved) >= instance_bytes(moved, later.model_dump_json())
