"""The builder's checkpoint edits: a ``set`` action's value is checked when the edit is made,
by the compiler's own check (``read_set``), so edit time and publish time agree.

A value the field's type cannot hold (the wrong type, not an option, outside the field's
constraints) is refused as ``invalid_rule`` with what the field takes in the hint; a field or
step that is not there is refused with the closest names in ``did_you_mean``; and an edit of a
field that would make a checkpoint's value stop fitting is ``breaks_rules``.
"""

from __future__ import annotations

from typing import Any

import pytest

from forms.documents import EditError, FormDocument, apply_edit, compile_document
from forms.errors import InvalidFormDefinition

FIELDS: list[dict[str, Any]] = [
    {"kind": "integer", "label": "Age", "minimum": 0, "maximum": 120},
    {
        "kind": "single_choice",
        "label": "Track",
        "options": [{"value": "junior"}, {"value": "senior"}],
    },
    {
        "kind": "multiple_choice",
        "label": "Languages",
        "options": [{"value": "pt"}, {"value": "en"}, {"value": "fr"}],
        "max_selected": 2,
    },
    {"kind": "date", "label": "Start", "earliest": "2026-01-01"},
    {"kind": "short_text", "label": "Code", "pattern": "^[A-Z]{3}$"},
    {"kind": "decimal", "label": "Rate", "decimal_places": 2},
    {"kind": "boolean", "label": "Relocate", "required": False},
    {"kind": "email", "label": "Email"},
]


@pytest.fixture
def draft() -> FormDocument:
    """One step with a field of each kind the cases set: age (0-120), track (junior, senior),
    languages (pt, en, fr; two at most), start (from 2026), code (three capitals), rate (two
    decimals), relocate (optional), email."""
    document = apply_edit(
        None, "create_form", {"title": "Apply", "steps": [{"title": "About you"}]}
    )
    for item in FIELDS:
        document = apply_edit(document.document, "add_field", {"field": item})
    return document.document


def setting(field: str, value: object, checkpoint: str = "route") -> dict[str, Any]:
    return {
        "id": checkpoint,
        "when": {"field": "age", "op": "answered"},
        "then": [{"action": "set", "field": field, "value": value}],
    }


def refused(draft: FormDocument, tool: str, arguments: dict[str, Any]) -> EditError:
    with pytest.raises(EditError) as raised:
        apply_edit(draft, tool, arguments)
    return raised.value


def published(draft: FormDocument, checkpoint: dict[str, Any]) -> str | None:
    """The compiler's verdict on ``draft`` with ``checkpoint`` put in as it is (no edit): None
    when it compiles, else its one problem."""
    data = draft.model_dump(mode="json", by_alias=True, exclude_none=True)
    document = FormDocument.model_validate({**data, "checkpoints": [checkpoint]})
    try:
        compile_document(document)
    except InvalidFormDefinition as exc:
        (problem,) = exc.problems
        return problem
    return None


CASES: list[tuple[str, object]] = [
    ("age", 30),
    ("age", "30"),  # read as 30, at publish time too
    ("age", 300),
    ("age", -1),
    ("age", "thirty"),
    ("age", 2.5),
    ("track", "junior"),
    ("track", "jnior"),
    ("track", 1),
    ("languages", ["pt", "en"]),
    ("languages", ["pt", "de"]),
    ("languages", ["pt", "en", "fr"]),
    ("start", "2026-03-01"),
    ("start", "2025-12-31"),
    ("start", "next week"),
    ("code", "ABC"),
    ("code", "abc"),
    ("rate", 1.25),
    ("rate", 1.255),
    ("relocate", True),
    ("relocate", "maybe"),
    ("email", "ada@example.com"),
    ("email", "ada at example"),
]


@pytest.mark.parametrize(("field", "value"), CASES)
def test_edit_time_and_publish_time_agree_on_every_set_value(
    draft: FormDocument, field: str, value: object
) -> None:
    # GIVEN a checkpoint that sets the field to the value
    checkpoint = setting(field, value)
    # WHEN the builder sets it, and when the same document is published without the edit
    at_publish = published(draft, checkpoint)
    try:
        apply_edit(draft, "set_checkpoint", checkpoint)
    except EditError as exc:
        at_edit: EditError | None = exc
    else:
        at_edit = None
    # THEN both take it or both refuse it, for the same reason in the same words
    assert (at_edit is None) == (at_publish is None), (at_edit, at_publish)
    if at_edit is not None and at_publish is not None:
        assert at_edit.code == "invalid_rule"
        reason = at_publish.removeprefix("form 'apply': ")
        assert reason.casefold() in at_edit.message.casefold()


def test_a_value_the_field_cannot_hold_is_refused_saying_what_it_takes(
    draft: FormDocument,
) -> None:
    # WHEN a checkpoint sets a choice to a value that is not an option
    error = refused(draft, "set_checkpoint", setting("track", "jnior"))
    # THEN nothing is applied, and the model reads why and what the field takes
    assert error.as_result() == {
        "ok": False,
        "error": "invalid_rule",
        "message": "Checkpoint 'route' sets 'track' to 'jnior': "
        'expected one of "junior", "senior", got the string "jnior".',
        "hint": '"track" takes one of "junior", "senior". '
        "Send the checkpoint again with those fixed; nothing was applied.",
    }
    # AND a number out of the field's range says the range
    error = refused(draft, "set_checkpoint", setting("age", 300))
    assert "less than or equal to 120" in error.message
    assert error.hint is not None and '"age" takes integer 0-120.' in error.hint


def test_an_unknown_field_or_step_in_an_action_is_refused_with_the_closest_names(
    draft: FormDocument,
) -> None:
    # WHEN a checkpoint sets a misspelt field and jumps to a misspelt step
    checkpoint = setting("agee", 3)
    checkpoint["then"].append({"action": "jump", "step": "about_yuo"})
    error = refused(draft, "set_checkpoint", checkpoint)
    # THEN both are named, with the closest names offered as data and in the message
    assert error.code == "invalid_rule"
    assert error.did_you_mean == ("age", "about_you")
    assert error.message == (
        "Checkpoint 'route' sets 'agee', which is not a field; did you mean 'age'? "
        "Checkpoint 'route' jumps to 'about_yuo', which is not a step; did you mean 'about_you'?"
    )
    assert error.hint is not None
    assert "The fields are: age, track, languages" in error.hint
    assert "The steps are: about_you." in error.hint
    # AND a placeholder naming no field is refused the same way
    placeholder = {**setting("age", 3), "then": [{"action": "fail", "message": "{trak} no"}]}
    assert refused(draft, "set_checkpoint", placeholder).did_you_mean == ("track",)


def test_a_field_edit_that_a_checkpoint_s_value_no_longer_fits_breaks_rules(
    draft: FormDocument,
) -> None:
    # GIVEN a checkpoint that sets age to 100 and track to "junior"
    checkpoint = setting("age", 100)
    checkpoint["then"].append({"action": "set", "field": "track", "value": "junior"})
    draft = apply_edit(draft, "set_checkpoint", checkpoint).document
    # WHEN an edit lowers the maximum under the value, or drops the option it sets
    lowered = refused(draft, "update_field", {"field": "age", "updates": {"maximum": 50}})
    options = {"options": [{"value": "senior"}, {"value": "lead"}]}
    dropped = refused(draft, "update_field", {"field": "track", "updates": options})
    # THEN both are refused, naming the checkpoint and the value
    assert lowered.code == dropped.code == "breaks_rules"
    assert "checkpoint 'route' sets 'age' to 100" in lowered.message
    assert "checkpoint 'route' sets 'track' to 'junior'" in dropped.message
    assert lowered.hint is not None and "set_checkpoint" in lowered.hint
    # AND an edit the value still fits goes through, and the value is checked against it
    raised = apply_edit(draft, "update_field", {"field": "age", "updates": {"maximum": 110}})
    assert "sets 'age' to 111" in refused(
        raised.document, "set_checkpoint", setting("age", 111)
    ).message.replace("Checkpoint", "checkpoint")


def test_a_set_value_is_read_as_the_field_reads_it(draft: FormDocument) -> None:
    # WHEN a checkpoint sets age to the string "30" and languages to two options
    checkpoint = setting("age", "30")
    checkpoint["then"].append({"action": "set", "field": "languages", "value": ["pt", "en"]})
    done = apply_edit(draft, "set_checkpoint", checkpoint)
    # THEN it is stored as sent and compiles (the compiled checkpoint patches the number 30)
    assert done.summary == (
        'Added checkpoint "route": when age answered, set age to "30", set languages to '
        '["pt", "en"].'
    )
    assert done.document.checkpoints[0].then[0].value == "30"  # type: ignore[union-attr]
    compile_document(done.document)
