"""Published documents through the form tools: a tenant's form is started and filled like a
code form, invisible to other tenants, and an open instance moves to a new version by field id
with the answers to dropped fields kept on record."""

from __future__ import annotations

from typing import Any

from forms import Caller, FormRegistry
from forms.app.catalog import Catalog
from forms.documents import FormDocument
from forms.examples.travel_claim import travel_claim
from forms.storage.documents import InMemoryFormDocumentStore
from forms.storage.documents_contract import T0
from tests.support import Session, service_for

ANA = Caller("acme/ana", "conv-1")
BO = Caller("globex/bo", "conv-1")


def intake(*fields: str) -> FormDocument:
    items: list[dict[str, Any]] = [
        {"kind": "short_text", "id": f, "label": f.replace("_", " ").capitalize()} for f in fields
    ]
    return FormDocument.model_validate(
        {
            "id": "intake",
            "title": "Intake",
            "steps": [{"id": "main", "title": "Main", "items": items}],
        }
    )


def catalog() -> Catalog:
    return Catalog(
        FormRegistry([travel_claim]), InMemoryFormDocumentStore(), timer=lambda: 0.0, ttl=0
    )


def test_a_published_form_runs_through_the_tools_for_its_tenant_only() -> None:
    # GIVEN acme publishes an intake form
    forms = catalog()
    forms.publish("acme/lead", intake("name", "city"), at=T0)
    service = service_for(registry=forms)
    ana, bo = Session(service, ANA), Session(service, BO)
    # WHEN one of acme's people starts and fills it
    ana.ok("form_start", form="intake")
    done = ana.ok("form_fill", form="intake", values={"name": "Ana", "city": "Porto"}, submit=True)
    # THEN it completes like any form, and form_list shows it beside the code forms
    assert done.get("closed") == "completed", done
    assert [f["id"] for f in ana.ok("form_list")["forms"]] == ["travel-claim", "intake"]
    # AND for another tenant it does not exist, exactly as a form that does not
    theirs = bo.call("form_start", {"form": "intake"})
    nothing = bo.call("form_start", {"form": "nothing"})
    assert theirs["error"] == nothing["error"] == "unknown_form"
    assert [f["id"] for f in bo.ok("form_list")["forms"]] == ["travel-claim"]


def test_an_open_instance_moves_to_a_new_version_by_field_id_keeping_dropped_answers() -> None:
    # GIVEN an instance of version 1 with two answers
    forms = catalog()
    forms.publish("acme/lead", intake("name", "city"), at=T0)
    service = service_for(registry=forms)
    ana = Session(service, ANA)
    ana.ok("form_start", form="intake")
    ana.ok("form_fill", form="intake", values={"name": "Ana", "city": "Porto"})
    # WHEN version 2 drops city and adds email, and the person writes again
    forms.publish("acme/lead", intake("name", "email"), at=T0)
    ana.ok("form_fill", form="intake", values={"email": "ana@acme.example"})
    # THEN the instance is on version 2, name carried over, city kept on record
    stored = service.store.list_conversation("acme/ana", "conv-1")[0]
    assert stored.form_version == 2
    assert stored.field("name").in_force().value == "Ana"  # type: ignore[union-attr]
    assert stored.field("city").in_force().value == "Porto"  # type: ignore[union-attr]
    read = ana.ok("form_read", form="intake")
    assert "city" not in str(read["steps"]) and "Ana" in str(read)
