"""What a commit shares with the state before it: the hook states and the outbox, until one of
them changes (issue 26 item 1). Shared is never changed in place: a commit that moves a hook
writes a copy, and the states before stay as they were. Either way the evaluation is the one
the from-scratch walk derives."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from forms import compile_form
from forms.compiled import CompiledForm
from forms.engine import Transition, evaluate, evaluate_from_scratch, transition
from forms.examples.travel_claim import travel_claim
from forms.instance import FormInstance, InstanceState
from forms.operations import Author, plan_fill

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def fill(form: CompiledForm, instance: FormInstance, values: dict[str, Any]) -> Transition:
    author = Author("agent", "test", f"c{instance.version}")
    plan = plan_fill(form, instance, values, author, T0)
    return transition(form, instance, plan.changes, T0)


def started(form: CompiledForm) -> FormInstance:
    instance = FormInstance(
        id="fi_1",
        form_id=form.id,
        form_version=form.version,
        principal="alice",
        conversation_id="conv-1",
        created_at=T0,
        state=InstanceState(updated_at=T0),
    )
    return fill(form, instance, {"full_name": "Ada Lovelace"}).after


def agrees(form: CompiledForm, step: Transition, before: FormInstance) -> None:
    previous = before.state.hooks
    assert step.evaluation == evaluate_from_scratch(form, step.after, previous=previous)
    assert evaluate(form, step.after) == evaluate_from_scratch(form, step.after)


def test_a_corrected_answer_shares_the_hook_states_and_the_outbox() -> None:
    # GIVEN a travel claim whose name is answered
    form = compile_form(travel_claim)
    before = started(form)
    # WHEN the name is corrected (no hook's condition changes)
    step = fill(form, before, {"full_name": "Ada King"})
    # THEN the commit's state holds the very hook states and outbox of the state before
    assert step.after.state.hooks is before.state.hooks
    assert step.after.state.outbox is before.state.outbox
    agrees(form, step, before)
    # AND a further correction on top of it compares with them as they are
    again = fill(form, step.after, {"full_name": "Ada Byron"})
    assert again.after.state.hooks is before.state.hooks
    agrees(form, again, step.after)


def test_a_first_answer_writes_a_copy_and_leaves_the_states_before_alone() -> None:
    # GIVEN a travel claim whose name is answered, and not its staff id
    form = compile_form(travel_claim)
    before = started(form)
    # WHEN the staff id is answered (its hook and its step's rise)
    step = fill(form, before, {"staff_id": "AB1234"})
    # THEN the hook states are a copy with the rises, and the states before are unchanged
    hooks = step.after.state.hooks
    assert hooks is not before.state.hooks
    assert hooks["field.staff_id.filled"].holds and hooks["step.claimant.complete"].holds
    assert not before.state.hooks["field.staff_id.filled"].holds
    assert not before.state.hooks["step.claimant.complete"].holds
    assert [h.id for h in step.evaluation.rising] == [
        "field.staff_id.filled",
        "step.claimant.complete",
    ]
    agrees(form, step, before)
