"""Answers a newer version refuses, after it takes over an open instance: kept on record, not
counted (the field asks again, saying why), and the form cannot be submitted until each is
resolved by a new answer, a retraction or a decline."""

from __future__ import annotations

from typing import Any, Literal

import pytest

from forms import Caller, FormDef, FormRegistry, InMemoryFormStore, Step, field
from forms.app.catalog import Catalog
from forms.definition import Migration
from forms.documents import FormDocument
from forms.examples.travel_claim import travel_claim
from forms.storage.documents import InMemoryFormDocumentStore
from forms.storage.documents_contract import T0
from formwork.mcp.ask import Question, question
from tests.support import Session, service_for

ANA = Caller("acme/ana", "conv-1")


def profile(version: int) -> FormDocument:
    """Version 1: age as text, track of junior, senior or lead. Version 2: age an integer
    0-120, track junior or senior only."""
    age: dict[str, Any] = {"kind": "short_text", "id": "age", "label": "Age"}
    options = [{"value": "junior"}, {"value": "senior"}, {"value": "lead"}]
    if version == 2:
        age = {"kind": "integer", "id": "age", "label": "Age", "minimum": 0, "maximum": 120}
        options = options[:2]
    track = {"kind": "single_choice", "id": "track", "label": "Track", "options": options}
    name = {"kind": "short_text", "id": "name", "label": "Name"}
    return FormDocument.model_validate(
        {
            "id": "profile",
            "title": "Profile",
            "steps": [{"id": "main", "title": "Main", "items": [name, age, track]}],
        }
    )


@pytest.fixture
def migrated() -> Session:
    """Ana's instance answered on version 1 (age "forty", track "lead"), then taken over by
    version 2 on her next write (her name)."""
    forms = Catalog(
        FormRegistry([travel_claim]), InMemoryFormDocumentStore(), timer=lambda: 0.0, ttl=0
    )
    forms.publish("acme/lead", profile(1), at=T0)
    ana = Session(service_for(registry=forms), ANA)
    ana.ok("form_start", form="profile")
    ana.ok("form_fill", form="profile", values={"age": "forty", "track": "lead"})
    forms.publish("acme/lead", profile(2), at=T0)
    ana.ok("form_fill", form="profile", values={"name": "Ana"})
    return ana


def test_answers_the_new_version_refuses_stop_counting_and_say_why(migrated: Session) -> None:
    # WHEN the migrated form is read
    read = migrated.ok("form_read", form="profile")
    rows = {r["id"]: r for r in read["fields"]}
    # THEN both answers are kept, shown as invalid with the reason, and asked again
    assert rows["age"]["status"] == rows["track"]["status"] == "invalid"
    assert rows["age"]["value"] == "forty" and rows["track"]["value"] == "lead"
    assert "integer" in rows["age"]["reason"]
    assert '"junior"' in rows["track"]["reason"]
    # AND the status line asks again, with the reason
    line = migrated.ok("form_read", form="profile")["status_line"]
    assert "ask again: Age (kept answer forty no longer fits" in line
    assert "ask again: Track (kept answer lead no longer fits" in line


def test_submit_is_refused_until_each_is_resolved(migrated: Session) -> None:
    # WHEN the agent submits the migrated form
    refused = migrated.ok("form_fill", form="profile", submit=True)
    # THEN it is not submitted, naming the answers to resolve
    assert refused["submitted"] is False
    assert "no longer accepts" in refused["not_submitted"]
    assert "Age" in refused["not_submitted"] and "Track" in refused["not_submitted"]
    # WHEN age gets a new answer and track is retracted, then answered again
    migrated.ok("form_fill", form="profile", values={"age": 40})
    migrated.ok("form_revise", form="profile", field="track", action="retract")
    done = migrated.ok("form_fill", form="profile", values={"track": "senior"}, submit=True)
    # THEN it submits
    assert done.get("closed") == "completed", done


def test_a_decline_resolves_an_invalid_optional_answer_too() -> None:
    # GIVEN a version 1 answer to an optional field that version 2 narrows
    forms = Catalog(
        FormRegistry([travel_claim]), InMemoryFormDocumentStore(), timer=lambda: 0.0, ttl=0
    )

    def note(pattern: str | None) -> FormDocument:
        item: dict[str, Any] = {"kind": "short_text", "id": "code", "label": "Code"}
        item["required"] = False
        if pattern:
            item["pattern"] = pattern
        return FormDocument.model_validate(
            {"id": "codes", "title": "Codes", "steps": [{"id": "s", "title": "S", "items": [item]}]}
        )

    forms.publish("acme/lead", note(None), at=T0)
    ana = Session(service_for(registry=forms), ANA)
    ana.ok("form_start", form="codes")
    ana.ok("form_fill", form="codes", values={"code": "abc"})
    forms.publish("acme/lead", note("^[A-Z]{3}$"), at=T0)
    # WHEN the migrated form is submitted, then the answer declined and submitted again
    refused = ana.ok("form_fill", form="codes", submit=True)
    ana.ok("form_revise", form="codes", field="code", action="decline")
    done = ana.ok("form_fill", form="codes", submit=True)
    # THEN the invalid optional answer held the submission, and the decline released it
    assert refused["submitted"] is False
    assert done.get("closed") == "completed", done


def test_form_ask_asks_the_person_again_for_an_answer_the_new_version_refuses(
    migrated: Session,
) -> None:
    # WHEN form_ask builds its question from the migrated form's read
    asked = question(migrated.ok("form_read", form="profile"))
    # THEN the person is asked again for both refused answers (the name still stands)
    assert isinstance(asked, Question)
    assert asked.asked == ("age", "track")


def test_a_code_form_migration_checks_carried_answers_the_same_way() -> None:
    # GIVEN a code form whose version 2 narrows a choice, and an instance answered on version 1
    class V1(Step):
        title = "Main"
        size: Literal["s", "m", "xl"] = field("Size")

    class V2(Step):
        title = "Main"
        size: Literal["s", "m"] = field("Size")

    first = FormDef(id="shirt", version=1, title="Shirt", steps=[V1])
    second = FormDef(
        id="shirt", version=2, title="Shirt", steps=[V2], migrations=[Migration(from_version=1)]
    )
    store = InMemoryFormStore()
    ana = Session(service_for(first, store=store), ANA)
    ana.ok("form_start", form="shirt")
    ana.ok("form_fill", form="shirt", values={"size": "xl"})
    # WHEN the deployment serves version 2 only and the form is read and submitted
    ana.service = service_for(second, store=store)
    read = ana.ok("form_read", form="shirt")
    refused = ana.ok("form_fill", form="shirt", submit=True)
    # THEN the kept answer is invalid, and the submission waits for it
    (row,) = read["fields"]
    assert (row["status"], row["value"]) == ("invalid", "xl")
    assert refused["submitted"] is False
