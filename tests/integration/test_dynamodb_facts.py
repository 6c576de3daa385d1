"""The DynamoDB ``FactStore`` on the local endpoints: the fact store's contract, and the cost
of each operation in requests (listing the facts in force is one Query whatever the
histories; reading the settings one GetItem; an append planned on a read one
TransactWriteItems)."""

from __future__ import annotations

from typing import Any

import pytest

from forms.errors import NotFound
from forms.memory import FactConflict, FactRevision, MemorySettings, plan_deletion
from forms.storage.dynamodb_facts import DynamoDBFactStore
from forms.storage.facts import FactStore
from forms.storage.facts_contract import ANA, API, DAY, T0, WEIGHT, FactStoreContract, revision, say
from tests.integration.conftest import Requests


class TestDynamoDBFactStore(FactStoreContract):
    @pytest.fixture
    def facts(self, dynamodb: Any, table: str) -> FactStore:
        return DynamoDBFactStore(dynamodb, table)


def test_listing_the_facts_in_force_is_one_query_whatever_the_histories(
    dynamodb: Any, table: str
) -> None:
    store = DynamoDBFactStore(dynamodb, table)
    # GIVEN three keys, one with a long history
    for n in range(40):
        say(store, ANA, WEIGHT, str(60 + n % 3), T0 + n * DAY)
    say(store, ANA, "person.height_cm", 173)
    say(store, ANA, "contact.email", "ana@example.com")
    requests = Requests(dynamodb)
    # WHEN a store that never saw them lists them, THEN that is one Query
    current = DynamoDBFactStore(dynamodb, table).current(ANA)
    assert requests.take() == ["Query"]
    assert [f.key for f in current] == ["contact.email", "person.height_cm", WEIGHT]


def test_each_operation_costs_what_the_docs_say(dynamodb: Any, table: str) -> None:
    store = DynamoDBFactStore(dynamodb, table)
    requests = Requests(dynamodb)
    # settings: one GetItem to read (none stored: on), one PutItem to write
    assert store.settings(ANA).enabled
    assert requests.take() == ["GetItem"]
    store.put_settings(ANA, MemorySettings(enabled=False, changed_at=T0))
    assert requests.take() == ["PutItem"]
    assert not store.settings(ANA).enabled
    assert requests.take() == ["GetItem"]
    # a first statement: the head read that finds none, then one transaction
    head = say(store, ANA, WEIGHT, "70")
    assert requests.take() == ["GetItem", "TransactWriteItems"]
    # an append planned on the head this store wrote: the transaction alone
    store.append(ANA, revision(1, "71", T0 + DAY))
    assert requests.take() == ["TransactWriteItems"]
    # an append planned on a list: the transaction alone
    other = DynamoDBFactStore(dynamodb, table)
    other.current(ANA)
    requests.take()
    other.append(ANA, revision(2, "72", T0 + 2 * DAY))
    assert requests.take() == ["TransactWriteItems"]
    # an append by a store that has not seen the key: one GetItem first
    third = DynamoDBFactStore(dynamodb, table)
    third.append(ANA, revision(3, "73", T0 + 3 * DAY))
    assert requests.take() == ["GetItem", "TransactWriteItems"]
    # a fact, a history, an export
    assert store.get(ANA, WEIGHT).value == "73"
    assert requests.take() == ["GetItem"]
    assert len(store.history(ANA, WEIGHT)) == 4
    assert requests.take() == ["Query"]
    assert len(store.export(ANA)) == 4
    assert requests.take() == ["Query"]
    # a deletion: the head read, and one transaction erasing the history with it
    deletion = plan_deletion(store.head(ANA, WEIGHT), source=API, now=T0 + 4 * DAY)
    assert isinstance(deletion, FactRevision) and head.version == 1
    requests.take()
    store.append(ANA, deletion)
    assert requests.take() == ["TransactWriteItems"]


def test_a_lost_race_reads_the_head_once_to_carry_it(dynamodb: Any, table: str) -> None:
    mine = DynamoDBFactStore(dynamodb, table)
    theirs = DynamoDBFactStore(dynamodb, table)
    mine.append(ANA, revision(0, "70"))
    theirs.append(ANA, revision(1, "71", T0 + DAY))
    requests = Requests(dynamodb)
    # WHEN this store appends on the version it last wrote, which has moved on
    with pytest.raises(FactConflict) as lost:
        mine.append(ANA, revision(1, "72", T0 + DAY))
    # THEN the write is refused and the head read once, for the error to carry
    assert requests.take() == ["TransactWriteItems", "GetItem"]
    assert lost.value.current is not None and lost.value.current.version == 2


def test_a_deletion_leaves_no_content_in_the_table(dynamodb: Any, table: str) -> None:
    store = DynamoDBFactStore(dynamodb, table)
    say(store, ANA, WEIGHT, None, T0, words="154 lb")
    say(store, ANA, WEIGHT, "71", T0 + DAY)
    deletion = plan_deletion(store.head(ANA, WEIGHT), source=API, now=T0 + 2 * DAY)
    assert isinstance(deletion, FactRevision)
    store.append(ANA, deletion)
    # THEN no item of ana's partition holds a value or the words she said
    items = dynamodb.scan(TableName=table, ConsistentRead=True)["Items"]
    text = repr([item for item in items if item["pk"]["S"].startswith("M#acme/ana")])
    assert "154 lb" not in text and '"71"' not in text and "69.9" not in text
    assert "R#person.weight_kg#" in text  # the records are kept
    with pytest.raises(NotFound):
        store.get(ANA, WEIGHT)
