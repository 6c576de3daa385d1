"""The DynamoDB adapter's approval index on the local endpoints (moto, DynamoDB Local): the
contract, then what is DynamoDB's own: the index's keys ride on the home item's put (a commit
is still one write), only instances in the index carry them, and a page costs one Query of
the index and one BatchGetItem of the homes it names, however many instances the table holds.
"""

from __future__ import annotations

from typing import Any

import pytest

from forms.instance import Commit
from forms.storage.approvals import tiebreak
from forms.storage.approvals_contract import ApprovalIndexContract, IndexedStore, settle, waiting
from forms.storage.contract import at, make_instance
from forms.storage.dynamodb import DynamoDBFormStore, home_key
from tests.integration.conftest import Requests


class TestDynamoDBApprovalIndex(ApprovalIndexContract):
    @pytest.fixture
    def store(self, dynamodb: Any, table: str) -> IndexedStore:
        return DynamoDBFormStore(dynamodb, table)


def home(client: Any, table: str, store: DynamoDBFormStore, instance_id: str) -> dict[str, Any]:
    pk, sk = home_key(store.get(instance_id))
    item: dict[str, Any] = client.get_item(
        TableName=table, Key={"pk": {"S": pk}, "sk": {"S": sk}}, ConsistentRead=True
    )["Item"]
    return item


def test_only_a_home_in_the_index_carries_its_keys(dynamodb: Any, table: str) -> None:
    store = DynamoDBFormStore(dynamodb, table)
    store.create(make_instance("quiet", principal="acme/alice"))
    store.create(waiting("w1", deadline=at(60)))
    assert "approval_pk" not in home(dynamodb, table, store, "quiet")
    item = home(dynamodb, table, store, "w1")
    assert item["approval_pk"]["S"] == "A#Tacme#owed"
    assert item["approval_sk"]["S"] == "2024-05-01T09:31:00.000000Z#" + tiebreak("w1")
    # AND a withdrawn approval takes them off again (the put replaces the whole item)
    settle(store, "w1", at(10), error="withdrawn: the form closed")
    assert "approval_pk" not in home(dynamodb, table, store, "w1")


def test_a_commit_that_moves_an_instance_in_the_index_is_still_one_write(
    dynamodb: Any, table: str
) -> None:
    store = DynamoDBFormStore(dynamodb, table)
    store.create(waiting("w1", deadline=at(60)))
    requests = Requests(dynamodb)
    settle(store, "w1", at(10))  # a read of the instance, then its commit
    assert requests.take() == ["GetItem", "PutItem"]
    assert [i.id for i in store.settled("acme").instances] == ["w1"]


def test_a_page_is_one_query_and_one_batch_read_whatever_the_table_holds(
    dynamodb: Any, table: str
) -> None:
    writer = DynamoDBFormStore(dynamodb, table)
    for n in range(12):  # other tenants' and quiet instances: never read by a page
        writer.create(waiting(f"g{n}", "globex/alice", at(n)))
        writer.create(make_instance(f"q{n}", principal="acme/alice", conversation_id=f"c{n}"))
    for n in range(4):
        writer.create(waiting(f"w{n}", deadline=at(100 + n)))
    reader = DynamoDBFormStore(dynamodb, table)  # remembers nothing of them
    requests = Requests(dynamodb)
    page = reader.owed("acme", limit=3)
    assert [i.id for i in page.instances] == ["w0", "w1", "w2"]
    assert requests.take() == ["Query", "BatchGetItem"]
    rest = reader.owed("acme", limit=3, after=page.next)
    assert [i.id for i in rest.instances] == ["w3"] and rest.next is None
    assert requests.take() == ["Query", "BatchGetItem"]
    # AND an instance read through the index commits with no further read (remembered)
    current = rest.instances[0]
    state = current.state.model_copy(update={"updated_at": at(500)})
    reader.commit(Commit(instance_id="w3", expected_version=current.version, state=state))
    assert requests.take() == ["PutItem"]
