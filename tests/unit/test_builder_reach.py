"""Whatever a document can say, the builder tools can say: every key of the document model is
reachable through some tool, and the keys a document form needs to do what a code form does
(no preference, consent, a completion executor, closing on completion, the form's own
settings, renaming an id) work when set through the tools."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, get_args

import pytest
from pydantic import BaseModel

from forms.app.builder import BUILDER_ARGUMENTS
from forms.documents import EditError, FormDocument, apply_edit, compile_document
from forms.documents import model as doc
from forms.documents.edit_arguments import (
    CreateForm,
    FormUpdates,
    GridInput,
    SetCheckpoint,
    SetConditionalLogic,
    StepInput,
    StepUpdates,
)
from forms.schema import Accepted


def models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    """The pydantic models an annotation names, through unions, lists and ``Annotated``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    for arg in get_args(annotation):
        yield from models_in(arg)


def tree(root: type[BaseModel]) -> list[type[BaseModel]]:
    """Every model reachable from ``root`` through its fields, ``root`` first."""
    found: list[type[BaseModel]] = [root]
    for model in found:
        for info in model.model_fields.values():
            found += [m for m in models_in(info.annotation) if m not in found]
    return found


def keys(model: type[BaseModel]) -> set[str]:
    return {info.alias or name for name, info in model.model_fields.items()}


TAKEN_AS_IS = [m for args in BUILDER_ARGUMENTS.values() for m in tree(args)]
"""Every model some tool's arguments hold (the document's own rules, options and actions, and
the item models' input forms, which subclass them)."""
WRITERS: dict[type[BaseModel], list[type[BaseModel] | str]] = {
    doc.FormDocument: [CreateForm, FormUpdates, "checkpoints"],
    doc.StepDoc: [StepInput, StepUpdates, "when", "items"],
    doc.CheckpointDoc: [SetCheckpoint],
    doc.Grid: [GridInput],
}
"""The parts of a document no tool takes whole, and the argument models (or the keys another
tool sets: a step's items with add_field, its when with set_conditional_logic, checkpoints
with set_checkpoint) that write them."""


def test_every_key_of_the_document_model_is_reachable_through_the_builder_tools() -> None:
    # GIVEN every model a form document is made of
    for model in tree(FormDocument):
        # WHEN a tool takes it whole (or a model extending it), each of its keys is reachable
        if any(issubclass(taken, model) for taken in TAKEN_AS_IS):
            continue
        # THEN otherwise the tools that write it cover each of its keys
        assert model in WRITERS, f"no builder tool writes {model.__name__}"
        written: set[str] = set()
        for writer in WRITERS[model]:
            written |= {writer} if isinstance(writer, str) else keys(writer)
        assert keys(model) <= written, (model.__name__, keys(model) - written)
    # AND the keys named as set by another tool are that tool's
    assert "when" in keys(SetConditionalLogic) and "id" in keys(SetCheckpoint)


# ---------------------------------------------------------------------------- what they do


def built(*calls: tuple[str, dict[str, Any]]) -> FormDocument:
    steps = [
        {"title": "Trip", "items": [{"kind": "short_text", "label": "Purpose"}]},
        {"title": "Review", "items": [{"kind": "short_text", "label": "Notes"}]},
    ]
    draft = apply_edit(None, "create_form", {"title": "Trip", "steps": steps}).document
    for tool, arguments in calls:
        draft = apply_edit(draft, tool, arguments, executors={"notify": lambda ctx: []}).document
    return draft


def test_a_required_field_may_take_no_preference() -> None:
    draft = built(
        (
            "add_field",
            {"step": "trip", "field": {"kind": "date", "label": "Date", "no_preference": True}},
        ),
        ("add_field", {"step": "trip", "field": {"kind": "date", "label": "Back"}}),
        ("update_field", {"field": "back", "updates": {"no_preference": "true"}}),
    )
    form = compile_document(draft)
    assert form.fields["date"].no_preference and form.fields["back"].no_preference
    assert not form.fields["date"].type.optional


def test_a_boolean_may_require_true_as_a_consent() -> None:
    draft = built(
        (
            "add_field",
            {
                "step": "trip",
                "field": {"kind": "boolean", "label": "I agree", "must_be_true": True},
            },
        ),
    )
    agree = compile_document(draft).fields["i_agree"].type
    assert isinstance(agree.accept(True), Accepted)
    assert not isinstance(agree.accept(False), Accepted)
    assert agree.type_string == "exactly true"


def test_update_form_sets_the_title_description_and_what_completion_does() -> None:
    draft = built(
        (
            "update_form",
            {
                "updates": {
                    "title": "Business trip",
                    "description": "Claim a trip.",
                    "on_complete": "notify",
                    "closes_on_complete": True,
                }
            },
        ),
    )
    form = compile_document(draft, executors={"notify": lambda ctx: []})
    assert (form.title, form.closes_on_complete) == ("Business trip", True)
    assert draft.on_complete == "notify" and draft.description == "Claim a trip."
    cleared = apply_edit(draft, "update_form", {"updates": {"on_complete": None}}).document
    assert cleared.on_complete is None and cleared.closes_on_complete


def test_update_form_refuses_an_executor_nobody_registered() -> None:
    with pytest.raises(EditError) as refused:
        built(("update_form", {"updates": {"on_complete": "notfy"}}))
    assert refused.value.did_you_mean == ("notify",)


def test_renaming_a_field_renames_it_in_every_rule_action_and_message() -> None:
    # GIVEN a field read by a later field's rule, a step's rule and a checkpoint
    draft = built(
        ("add_field", {"step": "trip", "field": {"kind": "integer", "label": "Nights"}}),
        (
            "add_field",
            {
                "step": "trip",
                "field": {
                    "kind": "short_text",
                    "label": "Hotel",
                    "when": {"field": "nights", "op": "greater_than", "value": 0},
                },
            },
        ),
        (
            "set_conditional_logic",
            {"target": "step", "id": "review", "when": {"field": "nights", "op": "answered"}},
        ),
        (
            "set_checkpoint",
            {
                "id": "long",
                "when": {"field": "nights", "op": "greater_than", "value": 20},
                "then": [
                    {"action": "fail", "message": "{nights} nights is too long"},
                    {"action": "set", "field": "nights", "value": 20},
                    {"action": "jump", "step": "trip"},
                ],
            },
        ),
    )
    # WHEN the field and the step are renamed
    done = apply_edit(draft, "update_field", {"field": "nights", "updates": {"id": "night_count"}})
    renamed = apply_edit(done.document, "update_step", {"step": "trip", "updates": {"id": "stay"}})
    # THEN every reference follows, the sentence says where, and the form compiles
    assert 'renamed where field "hotel", step "review", checkpoint "long"' in done.summary
    text = renamed.document.model_dump_json()
    assert '"nights"' not in text and "{nights}" not in text
    assert '"{night_count} nights is too long"' in text and '"step":"stay"' in text
    compile_document(renamed.document)


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("update_field", {"field": "nights", "updates": {"id": "hotel"}}),
        ("update_field", {"field": "nights", "updates": {"id": "step_id"}}),
        ("update_step", {"step": "trip", "updates": {"id": "review"}}),
    ],
)
def test_renaming_to_an_id_in_use_is_refused(tool: str, arguments: dict[str, Any]) -> None:
    draft = built(
        ("add_field", {"step": "trip", "field": {"kind": "integer", "label": "Nights"}}),
        ("add_field", {"step": "trip", "field": {"kind": "short_text", "label": "Hotel"}}),
    )
    with pytest.raises(EditError) as refused:
        apply_edit(draft, tool, arguments)
    assert refused.value.code == "invalid" and "already used" in refused.value.message
