"""The contract every ``SelectionStore`` adapter must pass (pytest; subclass it and give a
``stores`` fixture: a ``DraftStore`` and the ``SelectionStore`` beside it).
``tests/unit/test_selection_store.py`` runs it in memory,
``tests/integration/test_dynamodb_selections.py`` on DynamoDB. One test per promise."""

from __future__ import annotations

import pytest

from forms.documents.edit_arguments import Selection
from forms.errors import NotFound
from forms.storage.drafts import DraftStore
from forms.storage.drafts_contract import T0, document, edit
from forms.storage.selections import SelectionStore

ANA = "acme/ana"
BEN = "acme/ben"


class SelectionStoreContract:
    @pytest.fixture
    def stores(self) -> tuple[DraftStore, SelectionStore]:
        raise NotImplementedError

    def started(self, drafts: DraftStore, tenant: str = "acme") -> None:
        drafts.commit(edit(None, document(2), tenant=tenant))

    def test_a_selection_reads_back_and_a_later_one_replaces_it(
        self, stores: tuple[DraftStore, SelectionStore]
    ) -> None:
        drafts, selections = stores
        self.started(drafts)
        assert selections.get("acme", "intake", ANA) is None
        selections.put("acme", "intake", ANA, Selection(field="f1"), T0)
        assert selections.get("acme", "intake", ANA) == Selection(field="f1")
        selections.put("acme", "intake", ANA, Selection(step="s"), T0)
        assert selections.get("acme", "intake", ANA) == Selection(step="s")
        selections.put("acme", "intake", ANA, None, T0)
        assert selections.get("acme", "intake", ANA) is None

    def test_each_person_has_their_own(self, stores: tuple[DraftStore, SelectionStore]) -> None:
        drafts, selections = stores
        self.started(drafts)
        selections.put("acme", "intake", ANA, Selection(field="f0"), T0)
        selections.put("acme", "intake", BEN, Selection(field="f1"), T0)
        assert selections.get("acme", "intake", ANA) == Selection(field="f0")
        assert selections.get("acme", "intake", BEN) == Selection(field="f1")

    def test_no_selection_is_stored_without_the_tenants_draft(
        self, stores: tuple[DraftStore, SelectionStore]
    ) -> None:
        drafts, selections = stores
        self.started(drafts, tenant="globex")
        with pytest.raises(NotFound):
            selections.put("acme", "intake", ANA, Selection(field="f0"), T0)
        with pytest.raises(NotFound):
            selections.put("globex", "other", ANA, Selection(field="f0"), T0)
        assert selections.get("acme", "intake", ANA) is None

    def test_tenants_are_apart(self, stores: tuple[DraftStore, SelectionStore]) -> None:
        drafts, selections = stores
        self.started(drafts, tenant="acme")
        self.started(drafts, tenant="globex")
        selections.put("acme", "intake", "acme/ana", Selection(field="f0"), T0)
        assert selections.get("globex", "intake", "acme/ana") is None
        assert selections.get("acme", "intake#x", "acme/ana") is None
