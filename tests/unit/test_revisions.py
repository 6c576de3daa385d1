"""The per-field revision log: set, retract, decline, undo and redo as appends and cursor moves."""

from __future__ import annotations

from typing import Any

import pytest

from forms import compile_form
from forms.engine import evaluate, transition
from forms.errors import BadRequest, CannotRevise, ConflictError
from forms.instance import Commit, FieldChange, FieldHistory, FormInstance, apply_commit
from forms.operations import RevisionAction, plan_revise
from tests.unit.forms_for_tests import AGENT, Harness, at, filled, harness, trip_form

FORM = compile_form(trip_form())


def revise(
    instance: FormInstance, field_id: str, action: RevisionAction, value: Any = None, t: int = 1
) -> FormInstance:
    plan = plan_revise(FORM, instance, field_id, action, value, AGENT, at(t))
    return transition(FORM, instance, plan.changes, at(t)).after


def shape(log: FieldHistory) -> list[tuple[str, Any, int]]:
    """Each revision as (kind, value, prev)."""
    return [(r.kind, r.value, r.prev) for r in log.revisions]


def started(values: dict[str, Any] | None = None) -> Harness:
    h = harness()
    h.start(values)
    return h


# ------------------------------------------------------------------ set


def test_set_appends_on_top_of_the_cursor_and_moves_it_to_the_end() -> None:
    # GIVEN a name answered once
    instance = filled(FORM, {"name": "Ann"})
    # WHEN it is set to another value
    after = revise(instance, "name", "set", "Bob")
    # THEN the log has both, the new one in force, pointing back at the old one
    log = after.field("name")
    assert shape(log) == [("value", "Ann", -1), ("value", "Bob", 0)]
    assert log.cursor == 1


def test_set_with_an_invalid_value_cannot_revise_and_says_why() -> None:
    # GIVEN a new instance
    instance = filled(FORM, {})
    # WHEN an invalid age is set
    with pytest.raises(CannotRevise) as raised:
        plan_revise(FORM, instance, "age", "set", -4, AGENT, at(1))
    # THEN the message names the field
    assert raised.value.message.startswith("age:")


def test_set_to_the_value_in_force_appends_nothing() -> None:
    # GIVEN a name
    h = started({"name": "Ann"})
    before = h.instance()
    # WHEN it is set to the same value
    result = h.revise("name", "set", "Ann")
    # THEN nothing is committed and the summary says so
    assert result["ok"] is True
    assert "already" in result["summary"]
    assert h.instance().version == before.version


def test_a_value_with_a_move_other_than_set_is_a_bad_request() -> None:
    instance = filled(FORM, {"name": "Ann"})
    with pytest.raises(BadRequest):
        plan_revise(FORM, instance, "name", "retract", "Bob", AGENT, at(1))


def test_revisions_carry_their_provenance() -> None:
    # GIVEN a service with a fixed clock
    h = started()
    # WHEN the agent sets a name under a known call id
    h.call(
        "form_revise",
        {"form": "trip", "field": "name", "action": "set", "value": "Ann"},
        call_id="c9",
    )
    # THEN the revision records who, through which call, and when
    (revision,) = h.instance().field("name").revisions
    assert (revision.by, revision.actor, revision.tool_call_id) == ("agent", "alice", "c9")
    assert revision.at > h.instance().created_at


# ------------------------------------------------------------------ retract


def test_retract_appends_a_retraction_and_the_field_is_pending_again() -> None:
    # GIVEN an answered name
    instance = filled(FORM, {"name": "Ann"})
    # WHEN it is retracted
    after = revise(instance, "name", "retract")
    # THEN a retraction is appended and in force; the value is still in the log
    assert shape(after.field("name")) == [("value", "Ann", -1), ("retraction", None, 0)]
    ev = evaluate(FORM, after)
    assert ev.fields["name"].status == "pending"
    assert "name" not in ev.live


@pytest.mark.parametrize("values", [{}, {"name": "Ann"}])
def test_retract_with_nothing_in_force_cannot_revise(values: dict[str, Any]) -> None:
    # GIVEN a field never answered, or already retracted
    instance = filled(FORM, values)
    if values:
        instance = revise(instance, "name", "retract")
    # WHEN it is retracted (again)
    # THEN the move is refused
    with pytest.raises(CannotRevise):
        plan_revise(FORM, instance, "name", "retract", None, AGENT, at(2))


def test_retract_a_declined_field_appends_a_retraction() -> None:
    # GIVEN a declined optional field
    instance = revise(filled(FORM, {}), "nickname", "decline")
    # WHEN the decline is retracted
    after = revise(instance, "nickname", "retract", t=2)
    # THEN the field is back to optional
    assert evaluate(FORM, after).fields["nickname"].status == "optional"


# ------------------------------------------------------------------ decline


def test_decline_an_optional_field() -> None:
    # GIVEN an optional nickname with an answer
    instance = filled(FORM, {"nickname": "Annie"})
    # WHEN it is declined
    after = revise(instance, "nickname", "decline")
    # THEN a decline is in force and the field is declined, not live
    assert shape(after.field("nickname"))[-1] == ("decline", None, 0)
    ev = evaluate(FORM, after)
    assert ev.fields["nickname"].status == "declined"
    assert "nickname" not in ev.live


def test_decline_twice_is_unchanged() -> None:
    # GIVEN a declined nickname
    h = started()
    h.revise("nickname", "decline")
    before = h.instance()
    # WHEN it is declined again
    result = h.revise("nickname", "decline")
    # THEN nothing is appended or committed
    assert result["ok"] is True
    assert "already declined" in result["summary"]
    assert h.instance().version == before.version


def test_decline_a_required_field_is_refused() -> None:
    # GIVEN a started form
    h = started()
    # WHEN the agent declines the required age
    result = h.revise("age", "decline")
    # THEN it is refused as cannot_revise with a hint, and nothing is stored
    assert result["error"] == "cannot_revise"
    assert "required" in result["message"]
    assert result["hint"]
    assert h.instance().field("age").revisions == ()


# ------------------------------------------------------------------ undo / redo


def test_undo_moves_the_cursor_back_without_appending() -> None:
    # GIVEN a name set twice
    instance = revise(filled(FORM, {"name": "Ann"}), "name", "set", "Bob")
    # WHEN the last set is undone
    after = revise(instance, "name", "undo", t=2)
    # THEN the first value is back in force, and the log is as it was
    assert after.field("name").cursor == 0
    assert after.field("name").revisions == instance.field("name").revisions
    assert evaluate(FORM, after).live["name"] == "Ann"


def test_undo_the_first_answer_leaves_no_answer() -> None:
    # GIVEN a name answered once
    instance = filled(FORM, {"name": "Ann"})
    # WHEN it is undone
    after = revise(instance, "name", "undo")
    # THEN no revision is in force
    assert after.field("name").cursor == -1
    assert evaluate(FORM, after).fields["name"].status == "pending"


def test_undo_after_retract_restores_the_value() -> None:
    # GIVEN a retracted name
    h = started({"name": "Ann"})
    h.revise("name", "retract")
    # WHEN the retraction is undone
    result = h.revise("name", "undo")
    # THEN the name is back, with no new revision
    assert result["ok"] is True
    assert h.ev().live["name"] == "Ann"
    assert shape(h.instance().field("name")) == [("value", "Ann", -1), ("retraction", None, 0)]
    assert h.instance().field("name").cursor == 0


def test_undo_after_decline_restores_the_value() -> None:
    # GIVEN a declined nickname that had an answer
    instance = revise(filled(FORM, {"nickname": "Annie"}), "nickname", "decline")
    # WHEN the decline is undone
    after = revise(instance, "nickname", "undo", t=2)
    # THEN the answer is back
    assert evaluate(FORM, after).live["nickname"] == "Annie"


@pytest.mark.parametrize(
    "moves",
    [
        [("set", "Bob")],
        [("set", "Bob"), ("set", "Cy")],
        [("retract", None)],
        [("set", "Bob"), ("undo", None), ("set", "Cy")],
        [("retract", None), ("undo", None)],
    ],
)
def test_undo_then_redo_returns_exactly(moves: list[tuple[RevisionAction, Any]]) -> None:
    # GIVEN a name after some moves
    instance = filled(FORM, {"name": "Ann"})
    for t, (action, value) in enumerate(moves, start=1):
        instance = revise(instance, "name", action, value, t)
    # WHEN it is undone and redone
    undone = revise(instance, "name", "undo", t=20)
    redone = revise(undone, "name", "redo", t=21)
    # THEN the cursor, the value in force and the log are exactly as before
    assert redone.field("name") == instance.field("name")
    assert evaluate(FORM, redone).live.get("name") == evaluate(FORM, instance).live.get("name")


def test_redo_then_undo_returns_exactly() -> None:
    # GIVEN a name set twice and undone once
    instance = revise(filled(FORM, {"name": "Ann"}), "name", "set", "Bob")
    undone = revise(instance, "name", "undo", t=2)
    # WHEN redone then undone
    again = revise(revise(undone, "name", "redo", t=3), "name", "undo", t=4)
    # THEN the same place as before
    assert again.field("name") == undone.field("name")


def test_redo_after_a_new_set_is_impossible() -> None:
    # GIVEN a name set twice, undone, then set to a third value
    h = started({"name": "Ann"})
    h.fill(name="Bob")
    h.revise("name", "undo")
    h.revise("name", "set", "Cy")
    # WHEN the agent tries to redo
    result = h.revise("name", "redo")
    # THEN there is nothing to redo
    assert result["error"] == "cannot_revise"
    assert h.ev().live["name"] == "Cy"


def test_undo_past_a_branch_then_redo_takes_the_newest_branch() -> None:
    # GIVEN Ann, then Bob (undone), then Cy on top of Ann
    instance = filled(FORM, {"name": "Ann"})
    instance = revise(instance, "name", "set", "Bob")
    instance = revise(instance, "name", "undo", t=2)
    instance = revise(instance, "name", "set", "Cy", t=3)
    # WHEN Cy is undone and redone
    undone = revise(instance, "name", "undo", t=4)
    assert evaluate(FORM, undone).live["name"] == "Ann"
    redone = revise(undone, "name", "redo", t=5)
    # THEN Cy (the newest entry on top of Ann) comes back, not Bob
    assert evaluate(FORM, redone).live["name"] == "Cy"


@pytest.mark.parametrize("action", ["undo", "redo"])
def test_nothing_to_undo_or_redo_cannot_revise(action: RevisionAction) -> None:
    # GIVEN a field never answered
    instance = filled(FORM, {})
    # WHEN the move is asked for
    # THEN it is refused
    with pytest.raises(CannotRevise):
        plan_revise(FORM, instance, "name", action, None, AGENT, at(1))


def test_nothing_to_undo_through_the_service_is_an_error_and_commits_nothing() -> None:
    # GIVEN a started form
    h = started()
    version = h.instance().version
    # WHEN the agent undoes an unanswered field
    result = h.revise("name", "undo")
    # THEN it is cannot_revise, with a hint, and nothing is stored
    assert (result["ok"], result["error"]) == (False, "cannot_revise")
    assert result["hint"]
    assert h.instance().version == version


def test_redo_with_the_newest_entry_in_force_cannot_revise() -> None:
    # GIVEN a name set twice with the newest in force
    instance = revise(filled(FORM, {"name": "Ann"}), "name", "set", "Bob")
    # THEN redo is refused
    with pytest.raises(CannotRevise):
        plan_revise(FORM, instance, "name", "redo", None, AGENT, at(2))


# ------------------------------------------------------------------ the log is never rewritten


def test_earlier_revisions_stay_identical_through_any_sequence() -> None:
    # GIVEN a service and a long sequence of moves on one optional field
    h = started()
    moves: list[tuple[str, Any]] = [
        ("set", "a"),
        ("set", "b"),
        ("undo", None),
        ("retract", None),
        ("undo", None),
        ("redo", None),
        ("decline", None),
        ("undo", None),
        ("set", "c"),
        ("undo", None),
        ("redo", None),
        ("retract", None),
    ]
    seen: tuple[Any, ...] = ()
    for action, value in moves:
        # WHEN each move is applied
        result = h.revise("nickname", action, value)
        assert result["ok"] is True, (action, result)
        log = h.instance().field("nickname").revisions
        # THEN the log so far is a prefix of the new log, entry for entry
        assert log[: len(seen)] == seen
        seen = log
    assert [r.kind for r in seen] == [
        "value",
        "value",
        "retraction",
        "decline",
        "value",
        "retraction",
    ]


def test_apply_commit_refuses_a_cursor_outside_the_log() -> None:
    # GIVEN an instance with one revision on name
    instance = filled(FORM, {"name": "Ann"})
    bad = Commit(
        instance_id=instance.id,
        expected_version=instance.version,
        fields={"name": FieldChange(cursor=5)},
        state=instance.state,
    )
    # WHEN a commit points the cursor past the end
    # THEN it is refused and the instance is untouched
    with pytest.raises(ValueError, match="outside its log"):
        apply_commit(instance, bad)
    assert instance.field("name").cursor == 0


def test_apply_commit_refuses_a_stale_version() -> None:
    # GIVEN an instance and a commit built for an older version
    instance = filled(FORM, {"name": "Ann"})
    stale = Commit(instance_id=instance.id, expected_version=0, state=instance.state)
    # THEN applying it is a conflict carrying the current instance
    with pytest.raises(ConflictError) as raised:
        apply_commit(instance, stale)
    assert raised.value.current == instance


def test_apply_commit_appends_and_never_touches_the_input() -> None:
    # GIVEN an instance
    instance = filled(FORM, {"name": "Ann"})
    frozen = instance.model_dump()
    # WHEN a commit that appends is applied
    plan = plan_revise(FORM, instance, "name", "set", "Bob", AGENT, at(1))
    after = apply_commit(
        instance,
        Commit(
            instance_id=instance.id,
            expected_version=instance.version,
            fields=plan.changes,
            state=instance.state,
        ),
    )
    # THEN the result grew by one revision and the input is unchanged
    assert after.version == instance.version + 1
    assert after.field("name").revisions[0] == instance.field("name").revisions[0]
    assert instance.model_dump() == frozen
