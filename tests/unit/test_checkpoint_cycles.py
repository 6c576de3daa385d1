"""Checkpoints of a document whose ``set`` actions trigger each other are refused, at compile
time and at the builder edit that would create them, naming the cycle."""

from __future__ import annotations

from typing import Any

import pytest

from forms.documents import EditError, FormDocument, apply_edit, compile_document
from forms.errors import InvalidFormDefinition


@pytest.fixture
def draft() -> FormDocument:
    """One step: n (integer), m (integer), note (short text)."""
    document = apply_edit(None, "create_form", {"title": "Loop", "steps": [{"title": "Only"}]})
    for label in ("N", "M"):
        document = apply_edit(
            document.document, "add_field", {"field": {"kind": "integer", "label": label}}
        )
    document = apply_edit(
        document.document, "add_field", {"field": {"kind": "short_text", "label": "Note"}}
    )
    return document.document


def setting(
    checkpoint: str, reads: str, equals: object, field: str, value: object
) -> dict[str, Any]:
    return {
        "id": checkpoint,
        "when": {"field": reads, "op": "equals", "value": equals},
        "then": [{"action": "set", "field": field, "value": value}],
    }


def with_checkpoints(draft: FormDocument, *checkpoints: dict[str, Any]) -> FormDocument:
    data = draft.model_dump(mode="json", by_alias=True, exclude_none=True)
    return FormDocument.model_validate({**data, "checkpoints": list(checkpoints)})


def test_two_checkpoints_setting_each_other_s_trigger_do_not_compile(
    draft: FormDocument,
) -> None:
    # GIVEN n == 1 -> set n = 2 and n == 2 -> set n = 1
    document = with_checkpoints(
        draft, setting("ping", "n", 1, "n", 2), setting("pong", "n", 2, "n", 1)
    )
    # WHEN it compiles
    with pytest.raises(InvalidFormDefinition) as raised:
        compile_document(document)
    # THEN the one problem names the cycle and the field it runs through
    (problem,) = raised.value.problems
    assert '"ping" -> "pong" -> "ping"' in problem
    assert "trigger each other" in problem and "(n)" in problem


def test_a_longer_cycle_through_several_fields_is_named_once(draft: FormDocument) -> None:
    # GIVEN a -> b -> c -> a over n, m and note, plus a checkpoint outside the cycle
    document = with_checkpoints(
        draft,
        setting("a", "n", 1, "m", 1),
        setting("b", "m", 1, "note", "x"),
        setting("c", "note", "x", "n", 1),
        setting("d", "n", 5, "m", 2),
    )
    # WHEN it compiles
    with pytest.raises(InvalidFormDefinition) as raised:
        compile_document(document)
    # THEN the cycle is one problem, from the first of its checkpoints, in firing order
    (problem,) = raised.value.problems
    assert '"a" -> "b" -> "c" -> "a"' in problem
    assert "(m, n, note)" in problem


@pytest.mark.parametrize(
    "checkpoints",
    [
        # a checkpoint setting what its own rule reads: one commit, no second crossing
        [setting("ping", "n", 1, "n", 2)],
        # a chain that ends: a sets m, b reads m and sets note, nothing reads note
        [setting("a", "n", 1, "m", 1), setting("b", "m", 1, "note", "x")],
        # a workflow over one field: new -> triaged -> done, and done triggers nothing
        [
            setting("triage", "note", "new", "note", "triaged"),
            setting("finish", "note", "triaged", "note", "done"),
        ],
        # each sets the other's field, but to a value that does not make its rule hold
        [setting("a", "n", 1, "m", 5), setting("b", "m", 1, "n", 7)],
    ],
)
def test_what_cannot_loop_compiles(draft: FormDocument, checkpoints: list[dict[str, Any]]) -> None:
    compile_document(with_checkpoints(draft, *checkpoints))


def test_the_edit_that_closes_a_cycle_is_refused_naming_it(draft: FormDocument) -> None:
    # GIVEN a draft with ping (n == 1 -> set n = 2)
    draft = apply_edit(draft, "set_checkpoint", setting("ping", "n", 1, "n", 2)).document
    # WHEN the builder adds pong (n == 2 -> set n = 1)
    with pytest.raises(EditError) as raised:
        apply_edit(draft, "set_checkpoint", setting("pong", "n", 2, "n", 1))
    # THEN it is refused as data, naming the cycle, and nothing was applied
    error = raised.value
    assert error.code == "invalid_rule"
    assert '"ping" -> "pong" -> "ping"' in error.message
    assert [c.id for c in draft.checkpoints] == ["ping"]


def test_a_field_edit_cannot_close_a_cycle_either(draft: FormDocument) -> None:
    # GIVEN ping (n == 1 -> set m = 1) and pong (m == 1 -> set note = "x"): no cycle
    draft = apply_edit(draft, "set_checkpoint", setting("ping", "n", 1, "m", 1)).document
    draft = apply_edit(draft, "set_checkpoint", setting("pong", "m", 1, "note", "x")).document
    # WHEN pong is replaced to set n instead (its trigger now set by ping, ping's by it)
    with pytest.raises(EditError) as raised:
        apply_edit(draft, "set_checkpoint", setting("pong", "m", 1, "n", 1))
    # THEN refused, naming the cycle
    assert '"ping" -> "pong" -> "ping"' in raised.value.message
