"""The DynamoDB ``DraftStore`` on the local endpoints: the drafts' storage contract, and the
cost of each operation in requests (reading a draft is one GetItem whatever its history; a
commit one TransactWriteItems)."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import pytest

from forms.app.catalog import Catalog
from forms.errors import CallRecorded, NotFound, SizeLimit
from forms.registry import FormRegistry
from forms.storage.documents import InMemoryFormDocumentStore
from forms.storage.drafts import Draft, DraftConflict, DraftStore
from forms.storage.drafts_contract import (
    T0,
    DraftStoreContract,
    bulky,
    call,
    document,
    edit,
    move,
)
from forms.storage.dynamodb_drafts import DynamoDBDraftStore
from forms.storage.sizes import ITEM_LIMIT
from tests.integration.conftest import Requests
from tests.support import TickingClock, builder_for


class TestDynamoDBDraftStore(DraftStoreContract):
    @pytest.fixture
    def drafts(self, dynamodb: Any, table: str) -> DraftStore:
        return DynamoDBDraftStore(dynamodb, table)


def test_reading_a_draft_is_one_get_item_whatever_its_history(dynamodb: Any, table: str) -> None:
    store = DynamoDBDraftStore(dynamodb, table)
    requests = Requests(dynamodb)
    # GIVEN a draft with a long edit log, read by a store that never saw it
    draft = store.commit(edit(None, document(0)))
    for n in range(1, 30):
        draft = store.commit(edit(draft, document(n % 5)))
    fresh = DynamoDBDraftStore(dynamodb, table)
    requests.take()
    # WHEN it is read, THEN that is one GetItem, and the head has what undo needs
    read = fresh.get("acme", "intake")
    assert requests.take() == ["GetItem"]
    assert (read.count, read.cursor, read.undo_target) == (30, 29, 28)


def test_each_operation_costs_what_the_docs_say(dynamodb: Any, table: str) -> None:
    store = DynamoDBDraftStore(dynamodb, table)
    requests = Requests(dynamodb)
    # a new draft: the read that finds none, then one transaction
    with pytest.raises(NotFound):
        store.get("acme", "intake")
    assert requests.take() == ["GetItem"]
    draft = store.commit(edit(None, document(0), recorded=call("c0")))
    assert requests.take() == ["TransactWriteItems"]
    # an edit on what this store read or wrote: the transaction alone
    draft = store.commit(edit(draft, document(1), recorded=call("c1")))
    assert requests.take() == ["TransactWriteItems"]
    # an edit planned on a read by another store (another container): one GetItem first
    other = DynamoDBDraftStore(dynamodb, table)
    draft = other.commit(edit(draft, document(2)))
    assert requests.take() == ["GetItem", "TransactWriteItems"]
    # undo and redo read the one entry they move to
    draft = other.commit(move(draft, "undo"))
    assert requests.take() == ["GetItem", "TransactWriteItems"]
    draft = other.commit(move(draft, "redo"))
    assert requests.take() == ["GetItem", "TransactWriteItems"]
    # a call id already taken: the transaction, then the first record
    with pytest.raises(CallRecorded):
        other.commit(edit(draft, document(3), recorded=call("c1")))
    assert requests.take() == ["TransactWriteItems", "GetItem"]
    # the store stays cheap for lists, history and records
    store.list_drafts("acme")
    assert requests.take() == ["Query"]
    assert len(store.history("acme", "intake")) == 3
    assert requests.take() == ["GetItem", "Query"]
    store.record_call("acme", "intake", call("c9"))
    assert requests.take() == ["PutItem"]
    assert store.get_call("acme", "intake", "c9") is not None
    assert requests.take() == ["GetItem"]


def test_a_lost_race_reads_the_head_once_to_carry_it(dynamodb: Any, table: str) -> None:
    mine = DynamoDBDraftStore(dynamodb, table)
    theirs = DynamoDBDraftStore(dynamodb, table)
    draft = mine.commit(edit(None, document(0)))
    theirs.commit(edit(theirs.get("acme", "intake"), document(1)))
    requests = Requests(dynamodb)
    with pytest.raises(DraftConflict) as lost:
        mine.commit(edit(draft, document(2)))  # planned on version 1, which this store saw
    assert requests.take() == ["TransactWriteItems", "GetItem"]
    assert lost.value.current is not None and lost.value.current.version == 2


def test_a_builder_call_is_one_read_and_one_write(dynamodb: Any, table: str) -> None:
    store = DynamoDBDraftStore(dynamodb, table)
    documents = InMemoryFormDocumentStore()
    catalog = Catalog(FormRegistry([]), documents, timer=lambda: 0.0)
    builder = builder_for(store, catalog, clock=TickingClock(T0))
    requests = Requests(dynamodb)
    ana = partial(builder.call, "acme/ana", "intake", chat="chat-1")  # ids are its chat's
    # a new draft: the read that finds none, and the write
    made = ana("create_form", "c1", {"title": "Intake"})
    assert made["ok"] and requests.take() == ["GetItem", "TransactWriteItems"]
    email = {"field": {"kind": "email", "label": "Email"}}
    assert ana("add_field", "c2", email)["ok"]
    assert requests.take() == ["GetItem", "TransactWriteItems"]
    # a replay: found by the write, answered from the first record
    assert ana("add_field", "c2", email)["replayed"] is True
    assert requests.take() == ["GetItem", "TransactWriteItems", "GetItem"]
    # a refusal is recorded alone; inspect_form is the read alone
    assert ana("delete_step", "c3", {})["ok"] is False
    assert requests.take() == ["GetItem", "PutItem"]
    assert ana("inspect_form", "c4", {})["ok"]
    assert requests.take() == ["GetItem"]
    # undo reads the one entry it goes back to
    assert ana("undo_edit", "c5", {})["ok"]
    assert requests.take() == ["GetItem", "GetItem", "TransactWriteItems"]
    assert builder.draft("acme/ana", "intake").document.steps[0].items == []
    requests.take()
    # a call naming no chat is recorded nowhere: its refusal is the read alone
    assert builder.call("acme/ana", "intake", "delete_step", "c3", {})["ok"] is False
    assert requests.take() == ["GetItem"]
    # the records are the chat's: kept under <chat>/<id>, never under the id alone
    assert store.get_call("acme", "intake", "chat-1/c2") is not None
    assert store.get_call("acme", "intake", "c2") is None


def test_an_item_dynamodb_refuses_as_too_large_is_the_same_size_limit(
    dynamodb: Any, table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a store whose own estimate lets an oversized draft through (as a wrong one would)
    import forms.storage.dynamodb_drafts as adapter

    def unmeasured(draft: Draft) -> tuple[str, str]:
        return draft.current.model_dump_json(by_alias=True), json.dumps(list(draft.redo))

    monkeypatch.setattr(adapter, "head_texts", unmeasured)
    store = DynamoDBDraftStore(dynamodb, table)
    draft = store.commit(edit(None, document(1)))
    # WHEN DynamoDB itself refuses the item as past its 400 KB
    with pytest.raises(SizeLimit) as refused:
        store.commit(edit(draft, bulky(200), recorded=call("big")))
    # THEN that is the same refusal the check gives, and nothing was written
    assert refused.value.item == "draft" and refused.value.size > ITEM_LIMIT
    assert store.get("acme", "intake").version == 1
    assert store.get_call("acme", "intake", "big") is None
