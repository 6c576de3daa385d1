"""The one-field shortcut of the incremental pass (``forms.one_write.rewritten``) against the
pass itself (``forms.incremental.advance``), on random forms and random writes.

GIVEN a random form, instance and move WHEN the shortcut takes the move's changes THEN it
gives the core the pass gives (every reading, what each predicate read, newest and redo, the
fields that flipped), keeping the core before's token exactly when the pass does; and it takes
the travel claim's corrected answer and first answer, a write of several fields it leaves to
the pass.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forms import compile_form
from forms.examples.travel_claim import travel_claim
from forms.field_log import with_changes
from forms.incremental import Core, advance, core_for
from forms.instance import FieldChange, FormInstance, Revision, apply_commit
from forms.one_write import rewritten
from tests.unit.test_incremental import T0, build_form, form_plans, fresh_instance, moves, plan_move


def agree(before: Core, short: Core, full: Core) -> None:
    """``short`` is ``full`` but for the number of a new token."""
    assert short[2:] == full[2:]
    assert short.form is full.form
    assert (short.token == before.token) == (full.token == before.token)


def shortcut(form: Any, instance: FormInstance, changes: dict[str, FieldChange]) -> Core | None:
    """The shortcut's core for ``changes`` on ``instance`` (None: left to the pass), held to
    the pass's."""
    before = core_for(form, instance.history)
    history = with_changes(instance.history, changes)
    short = rewritten(before, history, changes)
    if short is not None:
        agree(before, short, advance(before, history, changes))
    return short


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_the_shortcut_gives_the_core_the_pass_gives(data: st.DataObject) -> None:
    form = build_form(data.draw(form_plans()))
    instance = fresh_instance(form)
    for n, move in enumerate(data.draw(moves(len(form.fields)))):
        now = T0 + timedelta(seconds=n + 1)
        if instance.state.status != "open":
            break
        step = plan_move(form, instance, move, now)
        if step is None:
            continue
        shortcut(form, instance, dict(step.commit.fields))
        instance = apply_commit(instance, step.commit)


def _write(instance: FormInstance, field_id: str, value: Any, at: datetime) -> FieldChange:
    log = instance.field(field_id)
    revision = Revision(kind="value", value=value, by="agent", at=at, prev=log.cursor)
    return FieldChange(append=(revision,), cursor=log.count)


def test_the_travel_claims_corrected_and_first_answers_take_the_shortcut() -> None:
    form = compile_form(travel_claim)
    instance = fresh_instance(form)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    first = {"full_name": _write(instance, "full_name", "Ada Lovelace", at)}
    assert shortcut(form, instance, first) is not None  # its step is not complete after it
    before = core_for(form, instance.history)
    history = with_changes(instance.history, first)
    history.derived = advance(before, history, first)
    answered = instance.model_copy(update={"history": history})
    corrected = {"full_name": _write(answered, "full_name", "Ada King", at)}
    short = shortcut(form, answered, corrected)
    assert short is not None and short.token == core_for(form, answered.history).token
    both = {
        "full_name": corrected["full_name"],
        "staff_id": _write(answered, "staff_id", "AB1234", at),
    }
    assert shortcut(form, answered, both) is None


def test_core_fields_are_in_the_order_rewritten_unpacks_and_rebuilds_them() -> None:
    # rewritten unpacks the core and builds the next one by position (a named tuple's field
    # read costs ~3x an item unpacked on 3.11): a reorder of Core's fields that kept their
    # count would swap readings silently there, so the order is pinned here
    assert Core._fields == (
        "form",
        "token",
        "parent",
        "fields",
        "live",
        "step_applies",
        "step_complete",
        "missing",
        "steps",
        "reads",
        "field_readers",
        "step_readers",
        "reads_all",
        "flipped",
        "completion_flipped",
        "newest",
        "redo",
    )
