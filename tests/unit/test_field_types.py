"""A document field's types are kept by its settings (``forms.documents.field_types``), so an
edit of a big draft does not rebuild every field's type; keeping them must change no result.

The settings are every key but the id, label, help, aliases, rule, executor, layout and
example: fields that differ only in those share their types; a change to any other key gives
other types; what is kept is what building the types afresh gives; and the checks an edit
runs refuse exactly what they refused before (a pattern pydantic cannot run is now refused
as a problem of the field, where it used to fail the edit with an exception).
"""

from __future__ import annotations

from typing import Any

import pytest

from forms.documents import EditError, FormDocument, apply_edit, compile_document
from forms.documents.field_types import FieldTypes, index_document, types_of
from forms.documents.model import FIELD_MODELS, FieldDoc
from forms.errors import InvalidFormDefinition
from forms.schema import Accepted

ITEMS: list[dict[str, Any]] = [
    {"kind": "short_text", "min_length": 2, "max_length": 40, "pattern": "^[A-Z]"},
    {"kind": "long_text"},
    {"kind": "email"},
    {"kind": "phone", "required": False},
    {"kind": "url"},
    {"kind": "integer", "minimum": 0, "maximum": 10},
    {"kind": "decimal", "minimum": 0.5, "decimal_places": 2},
    {"kind": "boolean"},
    {"kind": "date", "earliest": "2026-01-01", "latest": "2026-12-31"},
    {"kind": "single_choice", "options": [{"value": "a"}, {"value": "b", "label": "Bee"}]},
    {"kind": "multiple_choice", "options": [{"value": "a"}, {"value": "b"}], "max_selected": 1},
]


def document(*items: dict[str, Any]) -> FormDocument:
    """One step holding ``items``, ids f0, f1, ... and labels F0, F1, ... unless given."""
    numbered = [{"id": f"f{n}", "label": f"F{n}", **item} for n, item in enumerate(items)]
    return FormDocument.model_validate(
        {"id": "t", "title": "T", "steps": [{"id": "s", "title": "S", "items": numbered}]}
    )


def fields(doc: FormDocument) -> list[FieldDoc]:
    return [i for s in doc.steps for i in s.items if isinstance(i, FIELD_MODELS)]


@pytest.mark.parametrize("item", ITEMS, ids=[str(i["kind"]) for i in ITEMS])
def test_the_kept_types_are_the_types_built_afresh(item: dict[str, Any]) -> None:
    # GIVEN a field of each kind
    (field,) = fields(document(item))
    # WHEN its types are taken from what is kept, and built afresh from the field itself
    kept, fresh = types_of(field), FieldTypes(field)
    # THEN they read and describe values the same way
    for take in (FieldTypes.one, FieldTypes.answer):
        assert take(kept).json_schema == take(fresh).json_schema
        assert take(kept).type_string == take(fresh).type_string
        assert take(kept).optional == take(fresh).optional


def test_fields_that_differ_only_in_how_they_are_shown_share_their_types() -> None:
    # GIVEN two integers with the same settings, one labelled, helped, gated and laid out
    plain = {"kind": "integer", "minimum": 0}
    dressed = {
        **plain,
        "id": "years",
        "label": "Years",
        "help": "Whole years",
        "aliases": ["experience"],
        "on_fill": "notify",
        "layout": {"x": 0, "y": 0, "w": 6},
        "when": {"field": "f0", "op": "answered"},
    }
    first, second = fields(document(plain, dressed))
    # THEN they share one kept FieldTypes
    assert types_of(first) is types_of(second)


@pytest.mark.parametrize(
    ("item", "change", "probe"),
    [
        (ITEMS[0], {"min_length": 3}, "AB"),
        (ITEMS[0], {"max_length": 41}, "A" * 41),
        (ITEMS[0], {"pattern": "^[a-z]"}, "Ab"),
        (ITEMS[1], {"kind": "short_text"}, "x" * 301),
        (ITEMS[2], {"kind": "url"}, "https://example.com"),
        (ITEMS[3], {"required": True}, None),
        (ITEMS[5], {"maximum": 11}, 11),
        (ITEMS[6], {"decimal_places": 3}, 1.125),
        (ITEMS[8], {"earliest": "2026-01-02"}, "2026-01-01"),
        (ITEMS[9], {"options": [{"value": "a"}, {"value": "c"}]}, "c"),
        (ITEMS[10], {"max_selected": 2}, ["a", "b"]),
        (ITEMS[10], {"kind": "single_choice", "max_selected": None}, ["a"]),
    ],
)
def test_a_change_to_any_setting_gives_other_types(
    item: dict[str, Any], change: dict[str, Any], probe: object
) -> None:
    # GIVEN a field, and the same field with one setting changed
    before, after = fields(document(item, {**item, **change}))

    def takes(types: FieldTypes) -> bool:
        return isinstance(types.answer().accept(probe), Accepted)

    # THEN they do not share their types: a value one takes, the other does not
    assert types_of(before) is not types_of(after)
    assert takes(types_of(before)) != takes(types_of(after))
    # AND the changed field's kept types take what its types built afresh take
    assert takes(types_of(after)) == takes(FieldTypes(after))


def test_an_edit_checks_against_the_field_as_it_is_now() -> None:
    # GIVEN a draft whose checkpoint sets age to 100, under a maximum of 120
    draft = document({"kind": "integer", "id": "age", "label": "Age", "maximum": 120})
    cap = {
        "id": "cap",
        "when": {"field": "age", "op": "answered"},
        "then": [{"action": "set", "field": "age", "value": 100}],
    }
    draft = apply_edit(draft, "set_checkpoint", cap).document
    # WHEN the maximum goes down to 100, then (refused) to 99, then back up to 120
    lowered = apply_edit(draft, "update_field", {"field": "age", "updates": {"maximum": 100}})
    with pytest.raises(EditError) as under:
        apply_edit(lowered.document, "update_field", {"field": "age", "updates": {"maximum": 99}})
    raised = apply_edit(
        lowered.document, "update_field", {"field": "age", "updates": {"maximum": 120}}
    )
    # THEN each edit was checked against the maximum it set, never a type kept from before
    assert under.value.code == "breaks_rules"
    assert index_document(raised.document).known["age"].type.type_string == "integer <= 120"
    too_high = {**cap, "then": [{"action": "set", "field": "age", "value": 121}]}
    with pytest.raises(EditError, match="less than or equal to 120"):
        apply_edit(raised.document, "set_checkpoint", too_high)


def test_a_pattern_pydantic_cannot_run_is_a_problem_of_the_field_not_a_crash() -> None:
    # GIVEN a pattern Python compiles but pydantic's regex engine does not (a look-ahead)
    lookahead = {"kind": "short_text", "id": "code", "label": "Code", "pattern": "^(?=A).+$"}
    draft = document({"kind": "boolean", "id": "ok", "label": "OK"})
    # WHEN a builder adds it / THEN it is refused as invalid, naming the field and why
    with pytest.raises(EditError) as added:
        apply_edit(draft, "add_field", {"field": lookahead})
    assert added.value.code == "invalid"
    assert "field 'code': pattern '^(?=A).+$' does not compile: look-around" in (
        added.value.message
    )
    # AND a document holding it does not compile, for the same reason
    with pytest.raises(InvalidFormDefinition, match="does not compile: look-around"):
        compile_document(document(lookahead))


def test_the_index_of_a_big_draft_is_the_same_with_its_types_kept() -> None:
    # GIVEN a draft of 100 fields of every kind, indexed twice (the second from kept types)
    draft = document(*(ITEMS[n % len(ITEMS)] for n in range(100)))
    first, second = index_document(draft), index_document(draft)
    # THEN both indexes hold the same fields, positions and types, with no problem
    assert first.problems == second.problems == ()
    assert list(first.known) == [f"f{n}" for n in range(100)]
    for name, known in first.known.items():
        again = second.known[name]
        assert (known.kind, known.position) == (again.kind, again.position)
        assert known.type.json_schema == again.type.json_schema
