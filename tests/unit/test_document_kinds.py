"""The kinds of a document's items are one list (``forms.documents.kinds``): every part that
reads a kind has each of them, so a kind added in one place and missing from another fails
here."""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

import pytest

from forms.documents import compile_document
from forms.documents.edit_arguments import FieldUpdates
from forms.documents.edit_layout import BLOCK_DEFAULTS
from forms.documents.edit_shapes import ITEM_SHAPES
from forms.documents.export import export_document
from forms.documents.field_types import index_document, types_of
from forms.documents.kinds import FIELD_KINDS, KIND, KINDS, kinds_table
from forms.documents.model import (
    BLOCK_KINDS,
    ITEM_MODELS,
    Condition,
    FormDocument,
    ItemKind,
    kinds_of,
)
from forms.documents.rules import OPS_BY_FAMILY, compile_rule

ROOT = Path(__file__).resolve().parents[2]
NAMES = tuple(kind.name for kind in KINDS)


def sample(name: str) -> dict[str, Any]:
    """A field of kind ``name`` with only the keys its model requires."""
    item: dict[str, Any] = {"kind": name, "id": name, "label": name.replace("_", " ").title()}
    if "options" in KIND[name].model.model_fields:
        item["options"] = [{"value": "a"}, {"value": "b"}]
    return item


def document_of(*items: dict[str, Any]) -> FormDocument:
    step = {"id": "s", "title": "S", "items": list(items)}
    return FormDocument.model_validate({"id": "kinds", "title": "Kinds", "steps": [step]})


def test_the_list_is_the_model_unions_kinds_in_order() -> None:
    assert tuple(kind for model in ITEM_MODELS for kind in kinds_of(model)) == NAMES
    assert get_args(ItemKind) == NAMES
    for kind in KINDS:
        assert kind.name in kinds_of(kind.model), kind.name


def test_the_builders_shapes_show_every_kind_once() -> None:
    shown = [k for shape in ITEM_SHAPES for k in get_args(shape.model_fields["kind"].annotation)]
    assert tuple(shown) == NAMES
    assert get_args(FieldUpdates.model_fields["kind"].annotation)[0] is ItemKind


def test_every_field_kind_has_a_type_and_a_family_of_comparisons() -> None:
    for name in FIELD_KINDS:
        family = KIND[name].family
        assert family in OPS_BY_FAMILY, name
        (item,) = document_of(sample(name)).steps[0].items
        settings = types_of(item)  # type: ignore[arg-type]
        assert settings.annotation is not None and settings.invalid is None, name
        assert settings.one() is not None


def test_every_block_kind_has_a_size_and_no_answer() -> None:
    blocks = [kind for kind in KINDS if kind.family is None]
    assert tuple(k.name for k in blocks) == BLOCK_KINDS
    assert {k.name for k in blocks} == set(BLOCK_DEFAULTS)
    assert set(FIELD_KINDS) | set(BLOCK_DEFAULTS) == set(NAMES)


def test_every_field_kind_exports_back_as_itself() -> None:
    # GIVEN a document with one field of every kind
    form = compile_document(document_of(*(sample(name) for name in FIELD_KINDS)))
    # WHEN its compiled form is written out as a document
    exported = export_document(form.definition)
    # THEN nothing is left out and every field comes back as the kind it was
    assert exported.gaps == ()
    back = [item.kind for step in exported.document.steps for item in step.items]
    assert back == list(FIELD_KINDS)


@pytest.mark.parametrize("name", FIELD_KINDS)
def test_a_rule_may_ask_whether_a_field_of_every_kind_is_answered(name: str) -> None:
    known = index_document(document_of(sample(name))).known
    _, read = compile_rule(Condition(field=name, op="answered"), known, 1, "probe")
    assert read == {name}


def test_the_documents_page_shows_the_kinds_from_the_list() -> None:
    page = (ROOT / "docs" / "form-documents.md").read_text()
    assert kinds_table() in page
    blocks = page.split("## Display blocks", 1)[1].split("##", 1)[0]
    for kind in KINDS:
        if kind.family is None:
            assert f'{{"kind": "{kind.name}"' in blocks, kind.name
