"""The catalog: code forms for everyone, published documents per tenant, no redeploy.

What a tenant publishes is served to its principals on their next call, never to another
tenant's (for whom it is the same ``UnknownForm`` as a form that does not exist); versions are
immutable and compiled once; an open instance moves to a new version by field id, keeping the
answers to fields the new version dropped on record.
"""

from __future__ import annotations

from typing import Any, Literal

import pytest

from forms.app.catalog import Catalog, tenant_key
from forms.documents import FormDocument
from forms.errors import InvalidFormDefinition, UnknownForm
from forms.examples.health_check import health_check
from forms.examples.travel_claim import travel_claim
from forms.memory import Vocabulary, fact_key
from forms.registry import FormRegistry
from forms.storage.documents import InMemoryFormDocumentStore
from forms.storage.documents_contract import T0, document

ANA = "acme/ana"
BO = "globex/bo"


class Ticks:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def catalog(ttl: float = 0.0, timer: Any = None) -> Catalog:
    return Catalog(
        FormRegistry([travel_claim]),
        InMemoryFormDocumentStore(),
        ttl=ttl,
        timer=timer or Ticks(),
    )


def test_a_published_form_is_served_to_its_tenant_only() -> None:
    forms = catalog()
    # WHEN acme publishes a form
    forms.publish(ANA, document(), at=T0)
    # THEN acme's principals get it, by id or a spelling of it, next to the code forms
    assert forms.latest("intake", ANA).id == "intake"
    assert forms.latest("Intake", "acme/cy").version == 1
    assert [f.id for f in forms.forms(ANA)] == ["travel-claim", "intake"]
    # AND another tenant is told it does not exist, as for any unknown name
    with pytest.raises(UnknownForm) as theirs:
        forms.latest("intake", BO)
    with pytest.raises(UnknownForm) as nothing:
        forms.latest("no-such-form", BO)
    assert theirs.value.message.replace("intake", "X") == nothing.value.message.replace(
        "no-such-form", "X"
    )
    assert [f.id for f in forms.forms(BO)] == ["travel-claim"]


def test_a_tenant_catalog_is_read_again_after_ttl() -> None:
    ticks = Ticks()
    store = InMemoryFormDocumentStore()
    forms = Catalog(FormRegistry([travel_claim]), store, ttl=5.0, timer=ticks)
    assert [f.id for f in forms.forms(ANA)] == ["travel-claim"]
    # WHEN a document is published past this catalog (another container did it)
    store.publish("acme", document(), by=ANA, at=T0)
    # THEN it shows once the catalog is older than ttl
    assert [f.id for f in forms.forms(ANA)] == ["travel-claim"]
    ticks.now = 5.0
    assert [f.id for f in forms.forms(ANA)] == ["travel-claim", "intake"]


def test_a_document_that_does_not_compile_or_takes_a_code_form_id_is_not_published() -> None:
    forms = catalog()
    bad = FormDocument.model_validate(
        {
            "id": "broken",
            "title": "Broken",
            "steps": [
                {
                    "id": "s",
                    "title": "S",
                    "items": [
                        {
                            "kind": "boolean",
                            "id": "x",
                            "label": "X",
                            "when": {"field": "y", "op": "answered"},
                        }
                    ],
                }
            ],
        }
    )
    with pytest.raises(InvalidFormDefinition, match="not a field"):
        forms.publish(ANA, bad, at=T0)
    with pytest.raises(InvalidFormDefinition, match="form of this deployment"):
        forms.publish(ANA, document("travel-claim"), at=T0)
    assert forms.documents.catalog("acme") == {}


def test_each_version_compiles_once() -> None:
    forms = catalog()
    forms.publish(ANA, document(), at=T0)
    assert forms.latest("intake", ANA) is forms.latest("intake", ANA)


def test_principals_without_a_tenant_share_the_deployment_s_catalog() -> None:
    assert tenant_key("ana") == tenant_key("bo") == ""
    assert tenant_key("acme/ana") == "acme"


def test_documents_fact_keys_are_checked_with_the_registry_s_vocabulary() -> None:
    # GIVEN a deployment whose vocabulary adds a key, and a document holding that key
    vocabulary = Vocabulary.default().extended(
        [fact_key("person.blood_type", "Blood type", Literal["A", "B", "AB", "O"], "never")]
    )
    options = [{"value": v} for v in ("A", "B", "AB", "O")]
    blood = FormDocument.model_validate(
        {
            "id": "blood",
            "title": "Blood",
            "steps": [
                {
                    "id": "s",
                    "title": "S",
                    "items": [
                        {
                            "kind": "single_choice",
                            "id": "blood",
                            "label": "Blood type",
                            "options": options,
                            "memory": "person.blood_type",
                        }
                    ],
                }
            ],
        }
    )
    # WHEN a catalog over that deployment's registry publishes it / THEN it is served, holding
    # the key, checked against the vocabulary the code forms' keys were
    registry = FormRegistry([health_check], vocabulary=vocabulary)
    forms = Catalog(registry, InMemoryFormDocumentStore(), timer=Ticks(), ttl=0.0)
    assert forms.vocabulary is registry.vocabulary is vocabulary
    forms.publish(ANA, blood, at=T0)
    assert forms.latest("blood", ANA).fields["blood"].memory == "person.blood_type"
    # AND a catalog over Formwork's keys refuses it, naming the key
    with pytest.raises(InvalidFormDefinition, match=r"unknown fact key 'person\.blood_type'"):
        catalog().publish(ANA, blood, at=T0)


def test_a_tenant_form_is_found_without_ranking_close_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN acme's published form, and suggestions for a name nobody serves made unavailable
    forms = catalog()
    forms.publish(ANA, document(), at=T0)

    def no_suggestions(*_: object) -> object:
        raise AssertionError("close names ranked for a name that resolves")

    monkeypatch.setattr("forms.registry.rank", no_suggestions)
    monkeypatch.setattr("forms.app.catalog.rank", no_suggestions)
    # WHEN acme's principals ask for it, by id or a spelling, as every tool call does
    # THEN it resolves without an error built and thrown away on the way (ranking close names
    # costs hundreds of microseconds a call)
    assert forms.latest("intake", ANA).id == "intake"
    assert forms.latest("Intake", ANA).id == "intake"
    assert forms.latest("travel-claim", ANA).id == "travel-claim"
