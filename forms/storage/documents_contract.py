"""The contract every ``FormDocumentStore`` adapter must pass (pytest; subclass it and give a
``documents`` fixture). ``tests/unit/test_document_store.py`` runs it on the in-memory
adapter, ``tests/integration/test_dynamodb_documents.py`` on DynamoDB."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from forms.documents.model import FormDocument
from forms.errors import NotFound, SizeLimit
from forms.storage.documents import FormDocumentStore, PublishConflict
from forms.storage.drafts_contract import bulky
from forms.storage.races import race
from forms.storage.sizes import ITEM_LIMIT

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def document(form_id: str = "intake", title: str = "Intake", fields: int = 1) -> FormDocument:
    """A small valid document: one step of ``fields`` short-text fields."""
    items: list[dict[str, Any]] = [
        {"kind": "short_text", "id": f"f{n}", "label": f"Field {n}"} for n in range(fields)
    ]
    return FormDocument.model_validate(
        {"id": form_id, "title": title, "steps": [{"id": "s", "title": "S", "items": items}]}
    )


class FormDocumentStoreContract:
    @pytest.fixture
    def documents(self) -> FormDocumentStore:
        raise NotImplementedError

    def test_a_first_publish_is_version_one_and_reads_back_as_published(
        self, documents: FormDocumentStore
    ) -> None:
        published = documents.publish("acme", document(), by="acme/ana", at=T0)
        assert (published.version, published.form_id, published.by) == (1, "intake", "acme/ana")
        again = documents.published("acme", "intake", 1)
        assert again.document == document() and again.at == T0
        assert documents.catalog("acme") == {"intake": 1}

    def test_each_publish_is_the_next_version_and_earlier_ones_stay(
        self, documents: FormDocumentStore
    ) -> None:
        for n in range(1, 4):
            documents.publish("acme", document(fields=n), by="acme/ana", at=T0)
        assert documents.catalog("acme") == {"intake": 3}
        assert [
            len(documents.published("acme", "intake", v).document.steps[0].items) for v in (1, 2, 3)
        ] == [1, 2, 3]

    def test_the_catalog_lists_forms_in_the_order_first_published(
        self, documents: FormDocumentStore
    ) -> None:
        for form_id in ("b-form", "a-form", "b-form"):
            documents.publish("acme", document(form_id), by="acme/ana", at=T0)
        assert documents.catalog("acme") == {"b-form": 2, "a-form": 1}

    def test_another_tenant_sees_nothing_and_its_missing_is_the_same_not_found(
        self, documents: FormDocumentStore
    ) -> None:
        documents.publish("acme", document(), by="acme/ana", at=T0)
        assert documents.catalog("globex") == {}
        with pytest.raises(NotFound) as theirs:
            documents.published("globex", "intake", 1)
        with pytest.raises(NotFound) as missing:
            documents.published("acme", "intake", 2)
        assert type(theirs.value) is type(missing.value)
        # AND the same form id in two tenants is two forms
        documents.publish("globex", document(title="Theirs"), by="globex/bo", at=T0)
        assert documents.published("acme", "intake", 1).document.title == "Intake"
        assert documents.published("globex", "intake", 1).document.title == "Theirs"

    def test_a_publish_expecting_an_older_latest_stores_nothing(
        self, documents: FormDocumentStore
    ) -> None:
        documents.publish("acme", document(), by="acme/ana", at=T0)
        documents.publish("acme", document(fields=2), by="acme/ana", at=T0, expected=1)
        with pytest.raises(PublishConflict) as raised:
            documents.publish("acme", document(fields=3), by="acme/ana", at=T0, expected=1)
        assert (raised.value.expected, raised.value.latest) == (1, 2)
        assert documents.catalog("acme") == {"intake": 2}

    def test_a_document_past_the_item_limit_is_refused_and_stores_nothing(
        self, documents: FormDocumentStore
    ) -> None:
        # GIVEN a published version 1
        documents.publish("acme", document(), by="acme/ana", at=T0)
        # WHEN a document larger than one stored item takes is published
        with pytest.raises(SizeLimit) as refused:
            documents.publish("acme", bulky(160), by="acme/ana", at=T0)
        # THEN it is refused with its size, and the catalog did not move
        assert refused.value.item == "published_version"
        assert refused.value.limit == ITEM_LIMIT < refused.value.size
        assert documents.catalog("acme") == {"intake": 1}
        # AND one just under the limit is the next version, read back whole
        assert documents.publish("acme", bulky(150), by="acme/ana", at=T0).version == 2
        assert documents.published("acme", "intake", 2).document == bulky(150)

    def test_concurrent_publishes_get_distinct_versions(self, documents: FormDocumentStore) -> None:
        def publish(n: int) -> int:
            return documents.publish("acme", document(fields=n + 1), by="acme/ana", at=T0).version

        assert sorted(race(6, publish)) == [1, 2, 3, 4, 5, 6]
        assert documents.catalog("acme") == {"intake": 6}

    def test_tenant_and_form_ids_cannot_collide_through_separators(
        self, documents: FormDocumentStore
    ) -> None:
        documents.publish("a#F#b", document("c"), by="x", at=T0)
        documents.publish("a", document("b-f-c"), by="x", at=T0)
        assert documents.catalog("a#F#b") == {"c": 1}
        assert documents.catalog("a") == {"b-f-c": 1}
