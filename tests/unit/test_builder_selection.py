"""The selection the builder tools fall back to, stored per draft and person
(``BuilderService.select``, ``docs/builder.md``, "The selection and the canvas")."""

from __future__ import annotations

import pytest

from forms.app.builder import BuilderService
from forms.documents import EditError, Selection
from forms.errors import NotFound
from forms.storage.drafts import InMemoryDraftStore
from forms.storage.selections import InMemorySelectionStore
from tests.support import TickingClock, builder_for
from tests.unit.test_builder_service import T0, catalog

ANA, BEN, GUS = "acme/ana", "acme/ben", "globex/gus"
FORM = "contact-us"


@pytest.fixture
def builder() -> BuilderService:
    drafts = InMemoryDraftStore()
    service = builder_for(
        drafts, catalog(), clock=TickingClock(T0), selections=InMemorySelectionStore(drafts)
    )
    made = service.call(
        ANA, FORM, "create_form", "c1", {"title": "Contact", "steps": [{"title": "Contact"}]}
    )
    assert made["ok"], made
    for n, label in enumerate(("Email", "Phone")):
        added = service.call(
            ANA,
            FORM,
            "add_field",
            f"a{n}",
            {"step": "contact", "field": {"kind": "short_text", "label": label}},
        )
        assert added["ok"], added
    return service


def required(builder: BuilderService, field: str) -> bool:
    items = builder.draft(ANA, FORM).document.steps[0].items
    return next(i for i in items if i.id == field).required  # type: ignore[union-attr]


def test_a_call_without_a_selection_uses_the_persons_stored_one(builder: BuilderService) -> None:
    builder.select(ANA, FORM, Selection(field="phone"))
    made = builder.call(ANA, FORM, "update_field", "u1", {"updates": {"required": False}})
    assert made["ok"] and "phone" in str(made["summary"]), made
    assert required(builder, "phone") is False and required(builder, "email") is True
    # a call that sends its own selection uses it
    sent = builder.call(
        ANA,
        FORM,
        "update_field",
        "u2",
        {"updates": {"required": False}},
        selection={"field": "email"},
    )
    assert sent["ok"] and required(builder, "email") is False


def test_the_selection_is_per_person_and_tenant(builder: BuilderService) -> None:
    builder.select(ANA, FORM, Selection(field="phone"))
    assert builder.selected(BEN, FORM) is None
    refused = builder.call(BEN, FORM, "update_field", "u1", {"updates": {"required": False}})
    assert refused["ok"] is False and refused["error"] == "no_selection"
    with pytest.raises(NotFound):
        builder.select(GUS, FORM, Selection(field="phone"))


def test_only_what_the_draft_holds_can_be_selected(builder: BuilderService) -> None:
    with pytest.raises(EditError):
        builder.select(ANA, FORM, Selection(field="nope"))
    with pytest.raises(EditError):
        builder.select(ANA, FORM, Selection(step="nope"))
    assert builder.selected(ANA, FORM) is None
    builder.select(ANA, FORM, Selection(step="contact"))
    assert builder.selected(ANA, FORM) == Selection(step="contact")
    builder.select(ANA, FORM, None)
    assert builder.selected(ANA, FORM) is None


def test_a_replay_is_recognised_whatever_was_clicked_since(builder: BuilderService) -> None:
    builder.select(ANA, FORM, Selection(field="phone"))
    first = builder.call(
        ANA, FORM, "update_field", "u1", {"updates": {"required": False}}, chat="c"
    )
    builder.select(ANA, FORM, Selection(field="email"))
    again = builder.call(
        ANA, FORM, "update_field", "u1", {"updates": {"required": False}}, chat="c"
    )
    assert again == {**first, "replayed": True}
    assert required(builder, "email") is True
