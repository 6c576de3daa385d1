"""The builder's edit engine: a draft changed in small tool calls, each answered with a sentence
or refused as data (``forms.documents.edits``).

One test per promise: ids derived and made unique, layout packed, model-typical strings read
and reported, partial updates merged, the selection as the default target, plan limits, rules
checked against the draft's ids and order, no edit leaving a rule pointing at nothing, and
``create_form`` kept to structure. Last, a scripted builder makes a 12-field job application
in small calls, and the draft compiles and runs through the tools like any form.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import JsonValue

from forms import Caller
from forms.documents import (
    TOOL_ARGUMENTS,
    EditError,
    FormDocument,
    Limits,
    Selection,
    apply_edit,
    compile_document,
    inspect,
    selection_line,
    to_definition,
)
from forms.documents.edit_arguments import FieldUpdates
from forms.documents.edit_fields import KEYS_OF_KIND
from forms.documents.field_types import index_document
from tests.support import Session, service_for

CALLER = Caller("alice", "conv-1")


def edit(draft: FormDocument | None, tool: str, **arguments: Any) -> FormDocument:
    return apply_edit(draft, tool, arguments).document


def refused(
    draft: FormDocument | None, tool: str, selection: Selection | None = None, **arguments: Any
) -> EditError:
    with pytest.raises(EditError) as raised:
        apply_edit(draft, tool, arguments, selection=selection)
    return raised.value


def item(draft: FormDocument, item_id: str) -> dict[str, Any]:
    for step in draft.steps:
        for found in step.items:
            if found.id == item_id:
                return found.model_dump(mode="json", by_alias=True, exclude_none=True)
    raise KeyError(item_id)


def dig(value: JsonValue, *path: str | int) -> JsonValue:
    """The part of a JSON result at ``path``: each ``str`` a key of an object, each ``int`` an
    index of an array (asserted, so the shape the test expects is checked as it is read)."""
    for key in path:
        if isinstance(key, str):
            assert isinstance(value, dict), f"{key!r} of {value!r}"
            value = value[key]
        else:
            assert isinstance(value, list), f"[{key}] of {value!r}"
            value = value[key]
    return value


def ids(draft: FormDocument, step: int = 0) -> list[str]:
    return [i.id for i in draft.steps[step].items]


@pytest.fixture
def contact() -> FormDocument:
    """A draft with one step, "Contact", holding a name and an email."""
    draft = edit(None, "create_form", title="Contact us", steps=[{"title": "Contact"}])
    draft = edit(draft, "add_field", field={"kind": "short_text", "label": "Full name"})
    return edit(draft, "add_field", field={"kind": "email", "label": "Email"})


@pytest.fixture
def gated() -> FormDocument:
    """Two steps; "portfolio" (step 2) applies only when "role" (step 1) is "designer"."""
    draft = edit(None, "create_form", title="Apply", steps=[{"title": "You"}, {"title": "Work"}])
    draft = edit(
        draft,
        "add_field",
        step="you",
        field={"kind": "single_choice", "label": "Role", "options": [{"value": "designer"}]},
    )
    draft = edit(draft, "add_field", step="work", field={"kind": "url", "label": "Portfolio"})
    condition = {"field": "role", "op": "equals", "value": "designer"}
    return edit(draft, "set_conditional_logic", target="field", id="portfolio", when=condition)


# ---------------------------------------------------------------------- create_form


def test_create_form_makes_the_structure_and_says_so_in_one_sentence() -> None:
    # WHEN a builder starts a form on an empty canvas
    done = apply_edit(
        None,
        "create_form",
        {"title": "Event RSVP", "steps": [{"title": "Guest"}, {"title": "Diet"}]},
    )
    # THEN the draft has the steps, ids derived from the titles, and the model reads a sentence
    assert done.document.id == "event-rsvp"
    assert [s.id for s in done.document.steps] == ["guest", "diet"]
    assert done.summary == (
        'Created form "Event RSVP" (event-rsvp) with 2 steps (guest, diet) and 0 fields.'
    )
    # AND a form without steps gets one, so the draft is a document from the first call
    assert len(edit(None, "create_form", title="Quick poll").steps) == 1


def test_create_form_refuses_to_overwrite_a_draft_with_content_unless_asked(
    contact: FormDocument,
) -> None:
    # WHEN create_form runs over a draft with fields
    error = refused(contact, "create_form", title="Other")
    # THEN it is refused and says how to proceed
    assert error.code == "not_empty"
    assert "replace: true" in (error.hint or "")
    # AND with replace it rebuilds, keeping the form's id
    rebuilt = edit(contact, "create_form", title="Other", replace=True)
    assert rebuilt.id == contact.id and rebuilt.title == "Other" and ids(rebuilt) == []
    # AND an empty canvas needs no replace
    blank = edit(None, "create_form", title="Blank")
    assert edit(blank, "create_form", title="Blank again").title == "Blank again"


def test_a_create_form_carrying_the_whole_form_is_refused() -> None:
    # GIVEN a 40-field job application stuffed into one create_form
    fields = [{"kind": "short_text", "label": f"Question {n}"} for n in range(40)]
    # WHEN it is sent / THEN it is refused, telling the model to build in small calls
    error = refused(None, "create_form", title="Job", steps=[{"title": "All", "items": fields}])
    assert error.code == "too_large"
    assert "add_field" in (error.hint or "")
    # AND a structure with a few fields is fine
    few = edit(None, "create_form", title="Job", steps=[{"title": "All", "items": fields[:3]}])
    assert ids(few) == ["question_0", "question_1", "question_2"]


# ---------------------------------------------------------------------- ids and layout


def test_add_field_derives_the_id_from_the_label_and_answers_with_a_sentence(
    contact: FormDocument,
) -> None:
    done = apply_edit(
        contact, "add_field", {"field": {"kind": "phone", "label": "Mobile phone (work)"}}
    )
    assert ids(done.document) == ["full_name", "email", "mobile_phone_work"]
    assert done.summary == 'Added field "mobile_phone_work" (phone) to step "Contact".'
    assert done.as_result()["ok"] is True


def test_a_duplicate_id_is_rewritten_and_the_result_says_to_what(contact: FormDocument) -> None:
    done = apply_edit(
        contact, "add_field", {"field": {"kind": "email", "id": "email", "label": "Work email"}}
    )
    assert ids(done.document) == ["full_name", "email", "email_2"]
    assert done.notes["ids_rewritten"] == {"email": "email_2"}
    assert '"email_2"' in done.summary
    # AND an id a step class reserves is rewritten the same way
    reserved = apply_edit(contact, "add_field", {"field": {"kind": "boolean", "label": "Step id"}})
    assert ids(reserved.document)[-1] == "step_id_2"


def test_layout_is_packed_left_to_right_from_the_width_and_wraps(contact: FormDocument) -> None:
    # GIVEN a name and an email, each a full row
    assert item(contact, "full_name")["layout"] == {"x": 0, "y": 0, "w": 12, "h": 1}
    assert item(contact, "email")["layout"] == {"x": 0, "y": 1, "w": 12, "h": 1}
    # WHEN three fields come with widths only
    draft = contact
    for label, width in (("City", 6), ("Postcode", 6), ("Country", 8)):
        draft = edit(
            draft, "add_field", field={"kind": "short_text", "label": label, "layout": {"w": width}}
        )
    # THEN two share a row and the third wraps to the next
    assert item(draft, "city")["layout"] == {"x": 0, "y": 2, "w": 6, "h": 1}
    assert item(draft, "postcode")["layout"] == {"x": 6, "y": 2, "w": 6, "h": 1}
    assert item(draft, "country")["layout"] == {"x": 0, "y": 3, "w": 8, "h": 1}
    # AND a field inserted at the top pushes the rest down instead of overlapping them
    top = apply_edit(
        draft, "add_field", {"field": {"kind": "boolean", "label": "Agree"}, "position": 0}
    )
    boxes = [item(top.document, i)["layout"] for i in ids(top.document)]
    assert [(b["x"], b["y"]) for b in boxes] == [(0, 0), (0, 1), (0, 2), (0, 3), (6, 3), (0, 4)]
    # AND the results said nothing of it: the model sent no place, the packer chose
    assert "layout" not in top.notes


def test_a_layout_is_reported_only_where_it_is_not_what_the_call_sent(
    contact: FormDocument,
) -> None:
    # GIVEN a name and an email, each a full row (0,0 and 0,1)
    # WHEN a field is sent with a width only, it lands where the packer puts it, unreported
    half = apply_edit(
        contact,
        "add_field",
        {"field": {"kind": "phone", "label": "Phone", "layout": {"w": 6}}},
    )
    assert item(half.document, "phone")["layout"] == {"x": 0, "y": 2, "w": 6, "h": 1}
    assert "layout" not in half.notes
    # WHEN one is sent to a place the name already takes / THEN it is packed after the one
    # before it, and the result says where it went
    taken = apply_edit(
        half.document,
        "add_field",
        {"field": {"kind": "url", "label": "Site", "layout": {"x": 0, "y": 0, "w": 6}}},
    )
    assert taken.notes["layout"] == {"site": {"x": 6, "y": 2, "w": 6, "h": 1}}
    # AND an update whose place is kept says nothing; one moved off what it asked, says so
    kept = apply_edit(
        taken.document, "update_field", {"field": "site", "updates": {"layout": {"h": 2}}}
    )
    assert "layout" not in kept.notes
    moved = apply_edit(
        taken.document,
        "update_field",
        {"field": "site", "updates": {"layout": {"x": 0, "y": 1}}},
    )
    assert moved.notes["layout"] == {"site": {"x": 6, "y": 2, "w": 6, "h": 1}}
    # AND a create_form item placed over another is reported the same way
    created = apply_edit(
        None,
        "create_form",
        {
            "title": "Grid",
            "steps": [
                {
                    "title": "One",
                    "items": [
                        {"kind": "short_text", "label": "A", "layout": {"x": 0, "y": 0, "w": 6}},
                        {"kind": "short_text", "label": "B", "layout": {"x": 3, "y": 0, "w": 6}},
                    ],
                }
            ],
        },
    )
    assert created.notes["layout"] == {"b": {"x": 6, "y": 0, "w": 6, "h": 1}}


def test_display_blocks_get_their_defaults_merged(contact: FormDocument) -> None:
    draft = edit(contact, "add_field", field={"kind": "paragraph", "text": "We reply in a day."})
    draft = edit(draft, "add_field", field={"kind": "divider", "layout": {"h": 2}})
    assert item(draft, "paragraph")["layout"] == {"x": 0, "y": 2, "w": 12, "h": 2}
    assert item(draft, "divider")["layout"] == {"x": 0, "y": 4, "w": 12, "h": 2}


# ---------------------------------------------------------------------- coercion and shape


def test_model_typical_strings_are_read_as_numbers_and_booleans_and_reported(
    contact: FormDocument,
) -> None:
    # WHEN a sloppy model sends "6" for a width, "false" for a boolean and " Yes " for another
    done = apply_edit(
        contact,
        "add_field",
        {
            "field": {
                "kind": "integer",
                "label": "Guests",
                "required": "false",
                "maximum": "6",
                "layout": {"w": "6"},
            }
        },
    )
    # THEN the draft holds the number and the boolean, and the notes say what was read
    assert item(done.document, "guests") | {"layout": None} == {
        "id": "guests",
        "kind": "integer",
        "label": "Guests",
        "required": False,
        "no_preference": False,
        "maximum": 6,
        "aliases": [],
        "layout": None,
    }
    coerced = done.notes["coerced"]
    assert isinstance(coerced, list)
    assert {"at": "field.layout.w", "sent": "6", "stored": 6} in coerced
    assert {"at": "field.required", "sent": "false", "stored": False} in coerced
    yes = apply_edit(
        done.document, "update_field", {"field": "guests", "updates": {"required": " Yes "}}
    )
    assert item(yes.document, "guests")["required"] is True
    # AND anything else is validated strictly: no guessing what "maybe" or "six" means
    for sent in ({"required": "maybe"}, {"maximum": "six"}, {"label": 5}):
        error = refused(done.document, "update_field", field="guests", updates=sent)
        assert error.code == "invalid", sent


def test_problems_with_the_arguments_are_described_in_words(contact: FormDocument) -> None:
    error = refused(contact, "add_field", field={"kind": "integer", "label": "Age", "colSpan": 6})
    assert error.code == "invalid"
    assert 'field.colSpan: kind "integer" takes no colSpan' in error.message
    # AND a key of another kind names the kind and the keys it takes (the schema shows one
    # flat item), and a key left out is named
    error = refused(
        contact, "add_field", field={"kind": "integer", "label": "Age", "options": [{"value": "1"}]}
    )
    assert error.message.endswith(
        'field.options: kind "integer" takes no options (its keys: id, layout, label, help, '
        "required, no_preference, when, aliases, on_fill, memory, minimum, maximum)."
    )
    assert "only the keys of its kind" in (error.hint or "")
    assert (
        "field.text: Field required"
        in refused(contact, "add_field", field={"kind": "heading"}).message
    )
    error = refused(
        contact,
        "set_checkpoint",
        when={"field": "email", "op": "answered"},
        then=[{"action": "fail", "reason": "No"}],
    )
    assert "then.0.message: Field required" in error.message
    assert 'then.0.reason: action "fail" takes no reason (its keys: message)' in error.message
    error = refused(
        contact,
        "set_conditional_logic",
        target="field",
        id="email",
        when={"field": "full_name", "op": "answered", "all": []},
    )
    assert "when.all: a condition takes no all (its keys: field, op, value)" in error.message
    # AND what only the whole field can tell (contradicting constraints) too, nothing applied
    error = refused(
        contact, "add_field", field={"kind": "integer", "label": "Age", "minimum": 9, "maximum": 3}
    )
    assert error.code == "invalid" and "minimum 9 is over maximum 3" in error.message
    assert ids(contact) == ["full_name", "email"]


def test_every_tool_schema_is_closed_and_typed() -> None:
    # GIVEN every builder tool's arguments as a JSON schema a model would be handed
    for tool, model in TOOL_ARGUMENTS.items():
        schema = model.model_json_schema()
        for node in _nodes(schema):
            # THEN every object forbids unknown keys, every array says its items, nothing is Any
            if node.get("type") == "object" or "properties" in node:
                assert node.get("additionalProperties") is False, (tool, node)
            if node.get("type") == "array":
                assert "items" in node, (tool, node)
        assert model.__doc__, tool  # the tool's description


def test_partial_updates_cover_every_key_a_field_or_block_takes() -> None:
    keys = set().union(*KEYS_OF_KIND.values()) - {"id", "when"}
    assert keys <= set(FieldUpdates.model_fields)


def _nodes(schema: Any) -> Iterator[dict[str, Any]]:
    if isinstance(schema, dict):
        yield schema
        for value in schema.values():
            yield from _nodes(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _nodes(value)


# ---------------------------------------------------------------------- updates and selection


def test_partial_updates_deep_merge_and_wipe_nothing_else(contact: FormDocument) -> None:
    # GIVEN an email with help text, half width, two rows high
    draft = edit(
        contact,
        "update_field",
        field="email",
        updates={"help": "Work address", "layout": {"w": 6, "h": 2}},
    )
    before = item(draft, "email")
    # WHEN it is made optional / THEN nothing else changes
    draft = edit(draft, "update_field", field="email", updates={"required": False})
    assert item(draft, "email") == before | {"required": False}
    # AND a layout patch keeps the keys it does not name, the position included
    draft = edit(draft, "update_field", field="email", updates={"layout": {"x": 6, "y": 4}})
    draft = edit(draft, "update_field", field="email", updates={"layout": {"h": 3}})
    assert item(draft, "email")["layout"] == {"x": 6, "y": 4, "w": 6, "h": 3}
    # AND a position given without a width keeps the width, and the grid is still checked
    draft = edit(draft, "update_field", field="email", updates={"layout": {"x": 6}})
    assert item(draft, "email")["layout"] == {"x": 6, "y": 1, "w": 6, "h": 3}
    error = refused(draft, "update_field", field="email", updates={"layout": {"x": 6, "w": 8}})
    assert error.code == "invalid" and "x 6 + w 8 passes the grid's 12 columns" in error.message
    # AND a new width alone is packed again from the width
    draft = edit(draft, "update_field", field="email", updates={"layout": {"w": 8}})
    assert item(draft, "email")["layout"] == {"x": 0, "y": 1, "w": 8, "h": 3}
    # AND null clears an optional key
    draft = edit(draft, "update_field", field="email", updates={"help": None})
    assert "help" not in item(draft, "email")


def test_changing_a_kind_drops_the_keys_the_new_kind_does_not_take(
    contact: FormDocument,
) -> None:
    draft = edit(contact, "update_field", field="full_name", updates={"max_length": 80})
    done = apply_edit(draft, "update_field", {"field": "full_name", "updates": {"kind": "email"}})
    assert item(done.document, "full_name")["kind"] == "email"
    assert done.notes["dropped"] == ["max_length"]
    # AND a kind cannot be cleared: it is refused as data, not a crash
    cleared = refused(draft, "update_field", field="full_name", updates={"kind": None})
    assert cleared.code == "invalid" and "kind" in cleared.message


def test_edits_fall_back_to_the_selection(contact: FormDocument) -> None:
    # GIVEN the person selected the email field ("make this required")
    selected = Selection(field="email")
    draft = edit(contact, "update_field", field="email", updates={"required": False})
    # WHEN the model leaves out which field
    done = apply_edit(draft, "update_field", {"updates": {"required": True}}, selection=selected)
    # THEN the selected one changes
    assert item(done.document, "email")["required"] is True
    assert done.summary == 'Updated field "email": required.'
    # AND a field added with a field selected lands right after it
    added = edit_with(contact, "add_field", selected, field={"kind": "phone", "label": "Phone"})
    assert ids(added) == ["full_name", "email", "phone"]
    after_name = edit_with(
        contact,
        "add_field",
        Selection(field="full_name"),
        field={"kind": "phone", "label": "Phone"},
    )
    assert ids(after_name) == ["full_name", "phone", "email"]
    # AND with nothing selected, leaving out the field is its own error
    assert refused(contact, "delete_field").code == "no_selection"
    # AND the editor's selection line names it
    assert (
        selection_line(contact, selected)
        == 'Selected field "email": "Email" (email) in step "Contact"'
    )


def edit_with(
    draft: FormDocument, tool: str, selection: Selection, **arguments: Any
) -> FormDocument:
    return apply_edit(draft, tool, arguments, selection=selection).document


def test_a_missing_id_is_not_found_with_the_closest_names(contact: FormDocument) -> None:
    error = refused(contact, "update_field", field="emial", updates={"required": False})
    assert error.code == "not_found"
    assert error.did_you_mean == ("email",)
    assert error.as_result()["did_you_mean"] == ["email"]
    assert refused(contact, "delete_step", step="contakt").did_you_mean == ("contact",)
    # AND a label names its field when it names only one
    done = apply_edit(contact, "delete_field", {"field": "Full name"})
    assert ids(done.document) == ["email"] and done.notes["resolved"] == {"Full name": "full_name"}


def test_there_is_no_draft_to_edit_before_create_form() -> None:
    assert refused(None, "add_step", title="Contact").code == "no_draft"
    assert refused(None, "rename_form", title="Contact").code == "unknown_tool"


# ---------------------------------------------------------------------- steps and limits


def test_steps_are_added_moved_updated_and_deleted_but_never_the_only_one(
    contact: FormDocument,
) -> None:
    draft = edit(contact, "add_step", title="Review")
    draft = edit(draft, "add_step", title="Intro", position=0)
    assert [s.id for s in draft.steps] == ["intro", "contact", "review"]
    # AND a step added with a step selected goes right after it
    after = edit_with(draft, "add_step", Selection(step="intro"), title="Consent")
    assert [s.id for s in after.steps] == ["intro", "consent", "contact", "review"]
    moved = apply_edit(draft, "move_step", {"step": "review", "position": 1})
    assert moved.summary.endswith("the steps are now intro, review, contact.")
    draft = edit(moved.document, "update_step", step="intro", updates={"guidance": "Be brief."})
    assert draft.steps[0].guidance == "Be brief." and draft.steps[0].title == "Intro"
    draft = edit(draft, "delete_step", step="intro")
    draft = edit(draft, "delete_step", step="review")
    error = refused(draft, "delete_step", step="contact")
    assert error.code == "only_step"


def test_plan_limits_are_their_own_error_naming_the_limit(contact: FormDocument) -> None:
    small = Limits(max_steps=1, max_fields=2)
    with pytest.raises(EditError) as raised:
        apply_edit(contact, "add_step", {"title": "More"}, limits=small)
    assert raised.value.code == "plan_limit" and "at most 1 steps" in raised.value.message
    with pytest.raises(EditError) as raised:
        apply_edit(contact, "add_field", {"field": {"kind": "url", "label": "Site"}}, limits=small)
    assert raised.value.code == "plan_limit" and "at most 2 fields" in raised.value.message
    # AND a block is not a field
    heading = {"field": {"kind": "heading", "text": "Hello"}}
    assert apply_edit(contact, "add_field", heading, limits=small).document


# ---------------------------------------------------------------------- rules


def test_conditional_logic_is_checked_against_the_draft_s_ids_and_order(
    gated: FormDocument,
) -> None:
    # GIVEN portfolio gated on role / WHEN a rule names a field that is not there
    error = refused(
        gated,
        "set_conditional_logic",
        target="field",
        id="portfolio",
        when={"field": "rol", "op": "answered"},
    )
    # THEN it is refused with the closest name and what the rule may read
    assert error.code == "invalid_rule"
    assert "did you mean 'role'" in error.message
    assert "role (single_choice: designer)" in (error.hint or "")
    # AND a step's rule may not read its own (or later) fields
    error = refused(
        gated,
        "set_conditional_logic",
        target="step",
        id="you",
        when={"field": "role", "op": "answered"},
    )
    assert error.code == "invalid_rule" and "declared after it" in error.message
    # AND a value the field does not take is refused, naming the choices
    error = refused(
        gated,
        "set_conditional_logic",
        target="step",
        id="work",
        when={"field": "role", "op": "equals", "value": "engineer"},
    )
    assert '"designer"' in error.message
    # AND null makes it apply always
    cleared = apply_edit(
        gated, "set_conditional_logic", {"target": "field", "id": "portfolio", "when": None}
    )
    assert "when" not in item(cleared.document, "portfolio")
    assert cleared.summary == 'Field "portfolio" now always applies.'


def test_a_field_a_rule_reads_cannot_be_deleted(gated: FormDocument) -> None:
    # WHEN the field portfolio's rule reads is deleted / THEN the error names the reader
    error = refused(gated, "delete_field", field="role")
    assert error.code == "in_use"
    assert 'read by field "portfolio"' in error.message
    assert "set_conditional_logic" in (error.hint or "")
    # AND once the rule is cleared, it goes
    cleared = edit(gated, "set_conditional_logic", target="field", id="portfolio", when=None)
    assert ids(edit(cleared, "delete_field", field="role")) == []


def test_a_step_whose_fields_are_read_later_cannot_be_deleted(gated: FormDocument) -> None:
    error = refused(gated, "delete_step", step="you")
    assert error.code == "in_use" and 'field "portfolio"' in error.message
    # AND deleting the reader's step is fine: nothing is left pointing at nothing
    assert [s.id for s in edit(gated, "delete_step", step="work").steps] == ["you"]


def test_a_move_that_makes_a_rule_read_a_later_field_is_refused(gated: FormDocument) -> None:
    # WHEN role moves after portfolio, or its step after portfolio's
    for tool, arguments in (
        ("move_field", {"field": "role", "to_step": "work"}),
        ("move_step", {"step": "you", "position": 1}),
    ):
        error = refused(gated, tool, **arguments)
        # THEN it is refused, naming the rule it would break
        assert error.code == "breaks_rules", tool
        assert "the rule of field 'portfolio' reads 'role'" in error.message
    # AND moving the reader further down is fine
    draft = edit(gated, "add_field", step="work", field={"kind": "boolean", "label": "Remote"})
    assert ids(edit(draft, "move_field", field="portfolio", position=1), 1) == [
        "remote",
        "portfolio",
    ]


def test_rule_values_sent_as_strings_are_read_as_their_fields_read_answers(
    gated: FormDocument,
) -> None:
    # GIVEN role (a choice of "designer"), a boolean and an integer before a free text
    draft = edit(gated, "add_field", step="work", field={"kind": "boolean", "label": "Remote"})
    draft = edit(draft, "add_field", step="work", field={"kind": "integer", "label": "Years"})
    draft = edit(draft, "add_field", step="work", field={"kind": "long_text", "label": "Notes"})
    # WHEN a model gates the notes with "false", "3" and "Designer" (in a list) as strings
    rule = {
        "all": [
            {"field": "remote", "op": "equals", "value": "false"},
            {"not": {"field": "years", "op": "less_than", "value": "3"}},
            {"field": "role", "op": "in", "value": ["Designer"]},
        ]
    }
    done = apply_edit(
        draft, "set_conditional_logic", {"target": "field", "id": "notes", "when": rule}
    )
    # THEN the draft holds what the form compares, and each reading is reported where it was
    assert item(done.document, "notes")["when"] == {
        "all": [
            {"field": "remote", "op": "equals", "value": False},
            {"not": {"field": "years", "op": "less_than", "value": 3}},
            {"field": "role", "op": "in", "value": ["designer"]},
        ]
    }
    assert done.notes["coerced"] == [
        {"at": "when.all.0.value", "sent": "false", "stored": False},
        {"at": "when.all.1.not.value", "sent": "3", "stored": 3},
        {"at": "when.all.2.value.0", "sent": "Designer", "stored": "designer"},
    ]
    assert done.summary == (
        'Field "notes" now applies only when (remote equals false and not (years less than 3) '
        'and role in ["designer"]).'
    )
    # AND a value already of the field's type, or text for a text field, is not a reading
    plain = {"field": "remote", "op": "equals", "value": True}
    same = apply_edit(
        draft, "set_conditional_logic", {"target": "field", "id": "notes", "when": plain}
    )
    assert "coerced" not in same.notes
    # AND a string the type does not read is refused by the rule's check, naming the type
    error = refused(
        draft,
        "set_conditional_logic",
        target="field",
        id="notes",
        when={"field": "remote", "op": "equals", "value": "maybe"},
    )
    assert error.code == "invalid_rule" and "'maybe' is not a value of 'remote'" in error.message


def test_rule_values_are_read_in_every_call_that_carries_a_rule(gated: FormDocument) -> None:
    # WHEN add_field brings its rule along, reading a boolean as "yes"
    draft = edit(gated, "add_field", step="work", field={"kind": "boolean", "label": "Remote"})
    added = apply_edit(
        draft,
        "add_field",
        {
            "step": "work",
            "field": {
                "kind": "short_text",
                "label": "City",
                "when": {"field": "remote", "op": "equals", "value": "no"},
            },
        },
    )
    # THEN it is stored as read and reported under the field's rule
    assert item(added.document, "city")["when"]["value"] is False
    assert added.notes["coerced"] == [{"at": "field.when.value", "sent": "no", "stored": False}]
    # AND a checkpoint's rule the same
    checkpoint = apply_edit(
        added.document,
        "set_checkpoint",
        {
            "id": "office",
            "when": {"field": "remote", "op": "not_equals", "value": "true"},
            "then": [{"action": "jump", "step": "you"}],
        },
    )
    assert checkpoint.document.checkpoints[0].when.model_dump() == {
        "field": "remote",
        "op": "not_equals",
        "value": True,
    }
    assert checkpoint.notes["coerced"] == [{"at": "when.value", "sent": "true", "stored": True}]
    # AND a create_form's items, read against the fields the create makes
    created = apply_edit(
        None,
        "create_form",
        {
            "title": "Trip",
            "steps": [
                {
                    "title": "Trip",
                    "items": [
                        {"kind": "integer", "label": "Nights"},
                        {
                            "kind": "short_text",
                            "label": "Hotel",
                            "when": {"field": "nights", "op": "greater_than", "value": "0"},
                        },
                    ],
                }
            ],
        },
    )
    assert item(created.document, "hotel")["when"]["value"] == 0
    assert created.notes["coerced"] == [
        {"at": "steps.0.items.1.when.value", "sent": "0", "stored": 0}
    ]


def test_a_kind_change_that_breaks_a_comparison_is_refused(gated: FormDocument) -> None:
    error = refused(gated, "update_field", field="role", updates={"kind": "boolean"})
    assert error.code == "breaks_rules"


def test_inspect_reads_the_live_draft_so_add_then_rule_works_in_one_turn(
    gated: FormDocument,
) -> None:
    # GIVEN the model adds a field and reads it back before its next call
    draft = edit(gated, "add_field", step="work", field={"kind": "integer", "label": "Years"})
    seen = inspect(draft, "field", "years")
    assert seen["step"] == "work" and seen["position"] == 1
    # WHEN it sets a rule on the new id, reading an earlier field / THEN it applies
    condition = {"field": "role", "op": "answered"}
    draft = edit(draft, "set_conditional_logic", target="field", id="years", when=condition)
    # AND the outline shows it in a few words, and who reads role
    outline = inspect(draft, "form")
    assert dig(outline, "form", "steps", 1, "items") == [
        'portfolio: url "Portfolio" when role equals "designer"',
        'years: integer "Years" when role answered',
    ]
    assert inspect(draft, "field", "role")["read_by"] == ['field "portfolio"', 'field "years"']
    assert dig(inspect(draft, "step", selection=Selection(step="work")), "step", "id") == "work"


def test_checkpoints_are_set_by_id_and_checked_like_rules(gated: FormDocument) -> None:
    # GIVEN a checkpoint that jumps back to the first step when the role is a designer
    cap = {
        "id": "designers",
        "when": {"field": "role", "op": "equals", "value": "designer"},
        "then": [{"action": "jump", "step": "you"}],
    }
    done = apply_edit(gated, "set_checkpoint", cap)
    assert done.summary == 'Added checkpoint "designers": when role equals "designer", jump to you.'
    # THEN the step it jumps to, and the field it reads, cannot be deleted from under it
    assert 'checkpoint "designers"' in refused(done.document, "delete_step", step="you").message
    # AND a checkpoint naming what is not there is refused with the closest name
    wrong: dict[str, Any] = {**cap, "then": [{"action": "jump", "step": "yuo"}]}
    error = refused(done.document, "set_checkpoint", **wrong)
    assert error.code == "invalid_rule" and "jumps to 'yuo'" in error.message
    # AND setting it again by id replaces it; deleting it frees the step
    again = {**cap, "then": [{"action": "fail", "message": "Not now, {role}"}]}
    assert apply_edit(done.document, "set_checkpoint", again).summary.startswith("Replaced")
    freed = edit(done.document, "delete_checkpoint", id="designers")
    assert freed.checkpoints == []
    assert refused(freed, "delete_checkpoint", id="designers").code == "not_found"


def test_a_checkpoints_sentence_names_what_each_action_does(gated: FormDocument) -> None:
    # WHEN a checkpoint runs an executor, sets a field, jumps, fails with a long message and
    # terminates
    done = apply_edit(
        gated,
        "set_checkpoint",
        {
            "id": "designers",
            "when": {"field": "role", "op": "equals", "value": "designer"},
            "then": [
                {"action": "run", "executor": "notify_recruiter"},
                {"action": "jump", "step": "work"},
                {"action": "fail", "message": "Designers need a portfolio, {role}; send a link."},
                {"action": "terminate", "reason": "No designers"},
            ],
        },
    )
    # THEN the sentence names the executor, the step, and the start of each text
    assert done.summary == (
        'Added checkpoint "designers": when role equals "designer", run notify_recruiter, '
        'jump to work, fail "Designers need a…", terminate "No designers".'
    )
    # AND the outline inspect_form reads says the same
    assert dig(inspect(done.document, "form"), "form", "checkpoints") == [
        'designers: when role equals "designer" -> run notify_recruiter, jump to work, '
        'fail "Designers need a…", terminate "No designers"'
    ]


def test_a_refused_edit_leaves_the_draft_as_it_was(gated: FormDocument) -> None:
    before = gated.model_dump()
    refused(gated, "delete_field", field="role")
    refused(gated, "add_field", field={"kind": "integer", "label": "X", "minimum": 2, "maximum": 1})
    assert gated.model_dump() == before


def test_index_document_is_what_rules_are_checked_against(gated: FormDocument) -> None:
    index = index_document(gated)
    assert list(index.known) == ["role", "portfolio"]
    assert dict(index.first_field) == {"you": 0, "work": 1}
    assert index.problems == ()


# ---------------------------------------------------------------------- a whole form


BUILD: list[tuple[str, dict[str, Any]]] = [
    (
        "create_form",
        {"title": "Job application", "steps": [{"title": "About you"}, {"title": "The role"}]},
    ),
    (
        "add_field",
        {"step": "about_you", "field": {"kind": "heading", "text": "Tell us about yourself."}},
    ),
    ("add_field", {"step": "about_you", "field": {"kind": "short_text", "label": "Full name"}}),
    (
        "add_field",
        {"step": "about_you", "field": {"kind": "email", "label": "Email", "layout": {"w": "6"}}},
    ),
    (
        "add_field",
        {
            "step": "about_you",
            "field": {"kind": "phone", "label": "Phone", "required": "false", "layout": {"w": "6"}},
        },
    ),
    (
        "add_field",
        {
            "step": "the_role",
            "field": {
                "kind": "single_choice",
                "label": "Role",
                "options": [{"value": "engineer"}, {"value": "designer"}],
            },
        },
    ),
    ("add_field", {"step": "the_role", "field": {"kind": "url", "label": "Portfolio"}}),
    (
        "set_conditional_logic",
        {
            "target": "field",
            "id": "portfolio",
            "when": {"field": "role", "op": "equals", "value": "designer"},
        },
    ),
    (
        "add_field",
        {
            "step": "the_role",
            "field": {
                "kind": "integer",
                "label": "Years of experience",
                "id": "years",
                "minimum": "0",
                "maximum": "60",
            },
        },
    ),
    (
        "add_field",
        {
            "step": "the_role",
            "field": {
                "kind": "decimal",
                "label": "Expected salary",
                "id": "salary",
                "minimum": 0,
                "decimal_places": "2",
            },
        },
    ),
    ("add_step", {"title": "Logistics"}),
    (
        "add_field",
        {
            "step": "logistics",
            "field": {"kind": "date", "label": "Earliest start date", "id": "start"},
        },
    ),
    (
        "add_field",
        {
            "step": "logistics",
            "field": {"kind": "boolean", "label": "Willing to relocate", "id": "relocate"},
        },
    ),
    (
        "add_field",
        {
            "step": "logistics",
            "field": {
                "kind": "multiple_choice",
                "label": "Languages",
                "options": [{"value": "en"}, {"value": "pt"}, {"value": "de"}],
            },
        },
    ),
    (
        "add_field",
        {
            "step": "logistics",
            "field": {"kind": "long_text", "label": "Anything else", "id": "notes"},
        },
    ),
    ("update_field", {"field": "notes", "updates": {"required": "no"}}),
    (
        "add_field",
        {
            "step": "logistics",
            "field": {"kind": "short_text", "label": "Relocation city", "id": "city"},
        },
    ),
    (
        "set_conditional_logic",
        {
            "target": "field",
            "id": "city",
            "when": {"field": "relocate", "op": "equals", "value": True},
        },
    ),
    ("move_field", {"field": "city", "position": 2}),
    (
        "set_checkpoint",
        {
            "id": "salary_cap",
            "when": {"field": "salary", "op": "greater_than", "value": "200000"},
            "then": [{"action": "fail", "message": "{salary} is over the band for {role}"}],
        },
    ),
]


def test_a_builder_makes_a_12_field_job_application_in_small_calls_and_it_runs() -> None:
    # GIVEN a builder making the form one small call at a time
    draft: FormDocument | None = None
    summaries: list[str] = []
    for tool, arguments in BUILD:
        done = apply_edit(draft, tool, arguments)
        draft = done.document
        summaries.append(done.summary)
    assert draft is not None
    # THEN each call was answered with one sentence, and the draft compiles with 12 fields
    assert all(s.endswith(".") and "\n" not in s for s in summaries)
    form = compile_document(draft)
    assert list(form.fields) == [
        "full_name",
        "email",
        "phone",
        "role",
        "portfolio",
        "years",
        "salary",
        "start",
        "relocate",
        "city",
        "languages",
        "notes",
    ]
    # AND it runs through the tools like any form: held on a flip, restored, the checkpoint
    session = Session(service_for(to_definition(draft)), CALLER)
    start = session.call("form_start", {"form": "job-application"})
    assert start["ok"] is True, start

    def fill(**values: Any) -> dict[str, Any]:
        return session.call("form_fill", {"form": "job-application", "values": values})

    assert fill(full_name="Ada", email="ada@example.com")["ok"]
    fill(role="designer")
    fill(portfolio="https://ada.dev")
    assert list(fill(role="engineer")["now_held"]) == ["portfolio"]
    capped = fill(years="6", salary="250000.5")
    assert capped["fired"] == ["fi_1:checkpoint.salary_cap:1"]
    assert list(fill(role="designer")["restored"]) == ["portfolio"]
    fill(salary=90000, start="2027-01-04", relocate="yes", city="Lisbon", languages=["pt"])
    done_fill = session.call("form_fill", {"form": "job-application", "submit": True})
    assert done_fill.get("closed") == "completed", done_fill
