"""The DynamoDB adapter on the local endpoint: the storage contract, then what is DynamoDB's own.

DynamoDB-specific behaviour: long histories and large values never reach the 400 KB item
limit, revision items are written once and never again, each operation costs the requests the
docs promise (counted with botocore's event hooks), a conflict carries the current instance, a
read that catches a commit half-visible is taken again, and a whole conversation runs through
``FormService`` on this store.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from itertools import count
from typing import Any

import pytest

from forms import Caller, FormRegistry, FormService, InProcessDispatcher
from forms.errors import CallRecorded, ConflictError, StoreError
from forms.examples import EXAMPLES
from forms.instance import Commit, FieldChange, FieldHistory, FormInstance, Rejection
from forms.storage import FormStore
from forms.storage.contract import (
    T0,
    FormStoreContract,
    append_values,
    at,
    busy_state,
    call,
    make_instance,
    move_cursor,
    seeded_log,
    value_revision,
)
from forms.storage.dynamodb import DYNAMODB_ITEM_LIMIT, DynamoDBFormStore, conversation_key
from forms.storage.dynamodb_outbox import DynamoDBOutboxScan
from forms.storage.outbox_contract import OutboxScanContract, Stores
from tests.integration.conftest import Requests

Item = dict[str, Any]


class TestDynamoDBFormStore(FormStoreContract):
    @pytest.fixture
    def store(self, dynamodb: Any, table: str) -> FormStore:
        return DynamoDBFormStore(dynamodb, table)


class TestDynamoDBOutboxScan(OutboxScanContract):
    @pytest.fixture
    def stores(self, dynamodb: Any, table: str) -> Stores:
        return DynamoDBFormStore(dynamodb, table), DynamoDBOutboxScan(dynamodb, table, page_size=1)


@pytest.fixture
def store(dynamodb: Any, table: str) -> DynamoDBFormStore:
    return DynamoDBFormStore(dynamodb, table)


# ---------------------------------------------------------------------- helpers


def scan(client: Any, table: str) -> dict[tuple[str, str], Item]:
    """Every item of the table by (pk, sk), read consistently."""
    items: dict[tuple[str, str], Item] = {}
    request: dict[str, Any] = {"TableName": table, "ConsistentRead": True}
    while True:
        page = client.scan(**request)
        for item in page["Items"]:
            items[(item["pk"]["S"], item["sk"]["S"])] = item
        if "LastEvaluatedKey" not in page:
            return items
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def item_bytes(item: Item) -> int:
    """DynamoDB's size of an item of string and number attributes (names plus values)."""
    return sum(
        len(name.encode()) + len(next(iter(v.values())).encode()) for name, v in item.items()
    )


@pytest.fixture
def requests(dynamodb: Any) -> Requests:
    return Requests(dynamodb)


def sixteen_kb(tag: int) -> str:
    """A value near the engine's 16 KB cap on one answer."""
    return f"{tag:05d}" + "é" * 7_000 + "x" * 1_900  # 16,000 bytes of UTF-8


# ---------------------------------------------------------------------- size and immutability


def test_thousands_of_revisions_and_16kb_values_never_hit_the_item_limit(
    store: DynamoDBFormStore, dynamodb: Any, table: str
) -> None:
    # GIVEN an instance seeded with 4,000 revisions over 8 fields and 30 values of 16 KB
    seeded = {f"f{i}": seeded_log(list(range(500)), T0) for i in range(8)}
    seeded["essay"] = seeded_log([sixteen_kb(i) for i in range(30)], T0)
    store.create(make_instance(history=seeded))
    # WHEN 50 commits each append 20 more across fields, and one appends 25 more 16 KB values
    current = store.get("inst-1")
    for batch in range(50):
        current = store.commit(
            append_values(current, f"f{batch % 8}", list(range(20)), at(batch + 1))
        )
    current = store.commit(
        append_values(current, "essay", [sixteen_kb(100 + i) for i in range(25)], at(60))
    )
    # THEN reads and writes keep working on the whole history
    got = store.get("inst-1")
    assert got == current
    assert got.revision_count() == 8 * 500 + 50 * 20 + 55
    assert [r.value for r in got.field("essay").revisions][-1] == sixteen_kb(124)
    undone = store.commit(move_cursor(got, "essay", 10, at(61)))
    assert store.get("inst-1").field("essay").in_force() == got.field("essay").revisions[10]
    assert undone.version == got.version + 1
    # AND no stored item comes near DynamoDB's 400 KB limit; 16 KB values were split into parts
    items = scan(dynamodb, table)
    assert max(item_bytes(item) for item in items.values()) < 350_000
    assert total_payload(items) > 3 * DYNAMODB_ITEM_LIMIT
    assert ("I#inst-1", "R#0000000000#001") in items  # the seed needed more than one item
    assert ("I#inst-1", "R#0000000051#001") in items  # so did the commit of 25 large values


def total_payload(items: dict[tuple[str, str], Item]) -> int:
    return sum(item_bytes(item) for item in items.values())


def test_a_fill_of_100_large_fields_is_one_transaction(
    store: DynamoDBFormStore, requests: Requests, dynamodb: Any, table: str
) -> None:
    # GIVEN an instance
    store.create(make_instance())
    before = store.get("inst-1")
    requests.take()
    # WHEN one commit sets 100 fields to 16 KB values each (the most one fill may carry)
    commit = Commit(
        instance_id="inst-1",
        expected_version=0,
        fields={
            f"f{i:03d}": FieldChange(append=(value_revision(sixteen_kb(i), at(1)),), cursor=0)
            for i in range(100)
        },
        state=before.state.model_copy(update={"updated_at": at(1)}),
    )
    after = store.commit(commit)
    # THEN it was one transaction (the read it builds on was remembered), and every value
    # reads back
    assert requests.take() == ["TransactWriteItems"]
    assert store.get("inst-1") == after
    assert after.field("f099").in_force() == commit.fields["f099"].append[0]
    # AND its 1.6 MB of revisions went into five items
    parts = [sk for pk, sk in scan(dynamodb, table) if sk.startswith("R#0000000001#")]
    assert parts == [f"R#0000000001#{n:03d}" for n in range(5)]


def test_commit_never_rewrites_an_existing_item_but_the_state(
    store: DynamoDBFormStore, dynamodb: Any, table: str
) -> None:
    # GIVEN an instance with history, call records, and a few commits on it
    store.create(make_instance(history={"name": seeded_log(["Ada"], T0)}, state=busy_state(T0)))
    current = store.get("inst-1")
    for n in range(3):
        current = store.commit(append_values(current, "name", [f"v{n}"], at(n + 1)))
    before = scan(dynamodb, table)
    # WHEN another commit appends revisions, undoes nothing, and replaces the state
    after_commit = store.commit(append_values(current, "name", ["Grace"], at(9)))
    after = scan(dynamodb, table)
    # THEN every item that existed, except the STATE item, is byte for byte what it was
    state_key = ("I#inst-1", "STATE")
    assert {k: v for k, v in after.items() if k in before and k != state_key} == {
        k: v for k, v in before.items() if k != state_key
    }
    assert after[state_key] != before[state_key]
    # AND the only new item is the revision item of the new version
    assert set(after) - set(before) == {("I#inst-1", f"R#{after_commit.version:010d}#000")}


def test_call_records_live_in_the_conversation_partition_out_of_instance_reads(
    store: DynamoDBFormStore, dynamodb: Any, table: str, requests: Requests
) -> None:
    # GIVEN an instance created with its start call, and a commit recording a fill call
    store.create(make_instance(), call("start-1"))
    current = store.get("inst-1")
    commit = append_values(current, "name", ["Ada"], at(1)).model_copy(
        update={"call": call("fill-1", at(1))}
    )
    store.commit(commit)
    # THEN the call items sit in the conversation's partition, none in the instance's
    keys = set(scan(dynamodb, table))
    conversation = conversation_key("alice", "conv-1")
    assert {(conversation, "C#start-1"), (conversation, "C#fill-1")} <= keys
    assert not [k for k in keys if k[0] == "I#inst-1" and k[1].startswith("C#")]
    # AND reading the instance, or listing the conversation, reads no call record
    requests.take()
    store.get("inst-1")
    store.list_conversation("alice", "conv-1")
    assert requests.take() == ["Query", "Query", "Query"]
    # AND a lookup by id is one GetItem
    assert store.get_call("alice", "conv-1", "fill-1") == call("fill-1", at(1)).record
    assert requests.take() == ["GetItem"]


def test_a_replayed_commit_is_refused_in_its_transaction_and_writes_nothing(
    store: DynamoDBFormStore, dynamodb: Any, table: str
) -> None:
    store.create(make_instance())
    first = store.commit(
        append_values(store.get("inst-1"), "name", ["Ada"], at(1)).model_copy(
            update={"call": call("fill-1", at(1))}
        )
    )
    items = scan(dynamodb, table)
    with pytest.raises(CallRecorded) as raised:
        store.commit(
            append_values(first, "name", ["Grace"], at(2)).model_copy(
                update={"call": call("fill-1", at(2))}
            )
        )
    assert raised.value.record.at == at(1)
    assert scan(dynamodb, table) == items


# ---------------------------------------------------------------------- requests per operation


def test_each_operation_costs_the_documented_requests(
    store: DynamoDBFormStore, requests: Requests, dynamodb: Any, table: str
) -> None:
    # GIVEN a small instance, created
    requests.take()
    store.create(make_instance(history={"name": seeded_log(["Ada"], T0)}, state=busy_state(T0)))
    assert requests.take() == ["TransactWriteItems"]
    # WHEN it is read / THEN one Query
    current = store.get("inst-1")
    assert requests.take() == ["Query"]
    # WHEN revisions are appended to the version just read / THEN one TransactWriteItems: the
    # read is remembered, and the condition on version guards it
    current = store.commit(append_values(current, "name", ["Grace"], at(1)))
    assert requests.take() == ["TransactWriteItems"]
    # WHEN only a cursor moves and no call is recorded / THEN one PutItem
    store.commit(move_cursor(current, "name", 0, at(2)))
    assert requests.take() == ["PutItem"]
    # WHEN a store that has not read the instance commits / THEN it reads first
    fresh = DynamoDBFormStore(dynamodb, table).get("inst-1")
    requests.take()
    DynamoDBFormStore(dynamodb, table).commit(move_cursor(fresh, "name", 1, at(3)))
    assert requests.take() == ["Query", "PutItem"]
    # WHEN a conversation of two instances is listed / THEN one Query plus one per instance
    store.create(make_instance("inst-2", created_at=at(3)))
    requests.take()
    assert [i.id for i in store.list_conversation("alice", "conv-1")] == ["inst-1", "inst-2"]
    assert requests.take() == ["Query", "Query", "Query"]


def test_a_stale_commit_is_refused_by_its_own_read(
    store: DynamoDBFormStore, requests: Requests
) -> None:
    # GIVEN a writer holding version 0 while another writer moved the instance to version 1
    store.create(make_instance())
    stale = store.get("inst-1")
    store.commit(append_values(stale, "name", ["first"], at(1)))
    requests.take()
    # WHEN the stale writer commits
    with pytest.raises(ConflictError) as caught:
        store.commit(append_values(stale, "name", ["second"], at(2)))
    # THEN the read inside commit already shows the conflict: nothing is written
    assert requests.take() == ["Query"]
    assert caught.value.current == store.get("inst-1")


# ---------------------------------------------------------------------- conflicts


class RacingClient:
    """A client whose first Query is followed, before it returns, by a rival's commits.

    Puts competing writes between a commit's read and its conditional write, the window that
    only the condition on ``version`` protects. The first ``torn`` catch-up Queries (those that
    start past a version) leave out the revision items, as a read-committed Query may.
    """

    def __init__(self, client: Any, race: Any, torn: int = 0) -> None:
        self._client = client
        self._race = race
        self._torn = torn

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def query(self, **request: Any) -> Any:
        page = self._client.query(**request)
        race, self._race = self._race, None
        if race is not None:
            race()
        if self._torn and "sk >" in request["KeyConditionExpression"]:
            self._torn -= 1
            kept = [i for i in page["Items"] if not i["sk"]["S"].startswith("R#")]
            page = {**page, "Items": kept}
        return page


def rival_of(dynamodb: Any, table: str) -> tuple[DynamoDBFormStore, Any]:
    """A second writer, and a function making two commits with it: new revisions in two
    fields, and a call record with each."""
    rival = DynamoDBFormStore(dynamodb, table)

    def commits() -> None:
        current = rival.get("inst-1")
        for n, field_id in enumerate(["name", "age"], start=1):
            state = current.state.model_copy(update={"updated_at": at(n)})
            commit = append_values(current, field_id, [f"r{n}"], at(n), state=state)
            current = rival.commit(commit.model_copy(update={"call": call(f"rival-{n}", at(n))}))

    return rival, commits


@pytest.mark.parametrize("torn", [0, 1], ids=["clean", "torn-catch-up"])
def test_a_commit_that_loses_the_race_raises_conflict_with_the_current_instance(
    dynamodb: Any, table: str, requests: Requests, torn: int
) -> None:
    # GIVEN an instance with history and a call record, and a rival who commits twice right
    # after our commit has read
    seed = make_instance(history={"name": seeded_log(["Ada"], T0)}, state=busy_state(T0))
    DynamoDBFormStore(dynamodb, table).create(seed)
    rival, rival_commits = rival_of(dynamodb, table)
    mine = rival.get("inst-1")
    store = DynamoDBFormStore(RacingClient(dynamodb, rival_commits, torn), table)
    requests.take()
    # WHEN our commit, read before the rival's landed, is written
    with pytest.raises(ConflictError) as caught:
        store.commit(append_values(mine, "name", ["mine"], at(5)))
    # THEN it cost one read, the write, and a catch-up read of what the rival wrote (taken again
    # when it was torn): a Query from version 1 on
    rivals = ["Query", "TransactWriteItems", "TransactWriteItems"]  # its get, two commits
    catch_up = ["Query"] * (1 + torn)
    assert requests.take() == ["Query", *rivals, "TransactWriteItems", *catch_up]
    # AND the error carries the instance as now stored
    current = caught.value.current
    assert current is not None
    assert current == rival.get("inst-1")
    assert current.model_dump_json() == rival.get("inst-1").model_dump_json()
    assert [r.value for r in current.field("name").revisions] == ["Ada", "r1"]
    assert (caught.value.expected, current.version) == (0, 2)
    # AND retrying from the carried instance lands
    retried = store.commit(append_values(current, "name", ["mine"], at(6)))
    assert [r.value for r in retried.field("name").revisions] == ["Ada", "r1", "mine"]


def test_a_store_that_has_seen_an_instance_reads_only_what_was_written_since(
    dynamodb: Any, table: str
) -> None:
    # GIVEN an instance with a long history, read once by this store (a warm container)
    seed = make_instance(history={"name": seeded_log(list(range(2_000)), T0)})
    DynamoDBFormStore(dynamodb, table).create(seed)
    warm = DynamoDBFormStore(dynamodb, table)
    warm.get("inst-1")
    # AND another writer's commit since
    rival = DynamoDBFormStore(dynamodb, table)
    rival.commit(append_values(rival.get("inst-1"), "name", ["new"], at(1)))
    returned: list[int] = []

    def count(parsed: dict[str, Any], **_: Any) -> None:
        returned.append(int(parsed.get("Count", 0)))

    dynamodb.meta.events.register("after-call.dynamodb.Query", count)
    # WHEN the warm store reads it again
    again = warm.get("inst-1")
    # THEN one Query returned only the STATE item and the new revision's item, and the
    # instance is the whole of it, as stored
    assert returned == [2]
    assert again == rival.get("inst-1")
    assert [r.value for r in again.field("name").revisions][-2:] == [1_999, "new"]


# ---------------------------------------------------------------------- torn reads


class HidingClient:
    """A client whose first ``hide`` Queries leave out the items ``hidden`` picks.

    Stands in for DynamoDB's read-committed Query, which may return a transaction's STATE item
    before its other items are visible (or the reverse).
    """

    def __init__(self, client: Any, hide: int, hidden: Any) -> None:
        self._client = client
        self._hide = hide
        self._hidden = hidden

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def query(self, **request: Any) -> Any:
        page = self._client.query(**request)
        if self._hide > 0:
            self._hide -= 1
            page = {**page, "Items": [i for i in page["Items"] if not self._hidden(i)]}
        return page


def test_a_read_missing_part_of_a_commit_is_taken_again(
    dynamodb: Any, table: str, requests: Requests
) -> None:
    # GIVEN a committed instance whose newest revision and call items the first read misses
    plain = DynamoDBFormStore(dynamodb, table)
    plain.create(make_instance(state=busy_state(T0)))
    committed = plain.commit(append_values(plain.get("inst-1"), "name", ["Ada"], at(1)))
    pauses: list[int] = []

    def newest(item: Item) -> bool:
        return item["sk"]["S"] in ("R#0000000001#000", "C#call-1")

    store = DynamoDBFormStore(HidingClient(dynamodb, 1, newest), table, pause=pauses.append)
    requests.take()
    # WHEN it is read
    got = store.get("inst-1")
    # THEN the torn first read was dropped and the second one returned the whole instance
    assert got == committed
    assert requests.take() == ["Query", "Query"]
    assert pauses == [1]


def test_a_read_that_never_adds_up_fails_instead_of_returning_a_torn_instance(
    dynamodb: Any, table: str
) -> None:
    # GIVEN a store whose reads always miss a revision item the STATE item counts
    plain = DynamoDBFormStore(dynamodb, table)
    plain.create(make_instance(history={"name": seeded_log(["Ada"], T0)}))

    def revisions(item: Item) -> bool:
        return str(item["sk"]["S"]).startswith("R#")

    store = DynamoDBFormStore(HidingClient(dynamodb, 99, revisions), table, read_attempts=3)
    # WHEN it is read / THEN it fails after three attempts rather than return half a history
    with pytest.raises(StoreError, match="3 reads"):
        store.get("inst-1")


def test_items_of_a_commit_not_yet_in_the_state_are_ignored(
    store: DynamoDBFormStore, dynamodb: Any, table: str
) -> None:
    # GIVEN a stored instance, and the revision item of a commit whose STATE item a read does
    # not see yet, and a call item of the earlier layout in its partition
    store.create(make_instance(history={"name": seeded_log(["Ada"], T0)}))
    before = store.get("inst-1")
    later = '{"name":[' + value_revision("Grace", at(1), prev=0).model_dump_json() + "]}"
    dynamodb.put_item(
        TableName=table,
        Item={"pk": {"S": "I#inst-1"}, "sk": {"S": "R#0000000001#000"}, "revs": {"S": later}},
    )
    dynamodb.put_item(
        TableName=table,
        Item={
            "pk": {"S": "I#inst-1"},
            "sk": {"S": "C#call-9"},
            "v": {"N": "1"},
            "record": {"S": call("call-9").record.model_dump_json()},
        },
    )
    # WHEN it is read / THEN it is the instance as of its STATE item
    assert store.get("inst-1") == before


# ---------------------------------------------------------------------- limits and keys


def test_a_commit_over_100_items_is_refused_and_nothing_is_written(
    dynamodb: Any, table: str
) -> None:
    # GIVEN a store with small revision items, so 150 revisions need 150 items
    store = DynamoDBFormStore(dynamodb, table, max_item_bytes=1_000)
    store.create(make_instance())
    before = scan(dynamodb, table)
    # WHEN one commit appends them
    commit = append_values(store.get("inst-1"), "big", ["x" * 700] * 150, at(1))
    # THEN it is refused before anything is written
    with pytest.raises(ValueError, match="100 per transaction"):
        store.commit(commit)
    assert scan(dynamodb, table) == before


def test_a_state_item_over_400kb_is_refused_and_nothing_is_written(
    store: DynamoDBFormStore, dynamodb: Any, table: str
) -> None:
    # GIVEN a stored instance
    store.create(make_instance())
    current = store.get("inst-1")
    before = scan(dynamodb, table)
    # WHEN a commit's state alone would pass DynamoDB's item limit
    rejections = [
        Rejection(key=f"h:{n}", hook_id="h", message=sixteen_kb(n), at=at(1)) for n in range(30)
    ]
    state = current.state.model_copy(update={"rejections": rejections})
    # THEN it is refused with a clear error before anything is written
    with pytest.raises(ValueError, match="400 KB"):
        store.commit(append_values(current, "name", ["Ada"], at(1), state=state))
    assert scan(dynamodb, table) == before


def test_principal_and_conversation_ids_cannot_collide_through_separators(
    store: DynamoDBFormStore,
) -> None:
    # GIVEN two principals whose principal#conversation would read the same unescaped
    store.create(make_instance("one", principal="a#C#b", conversation_id="c"))
    store.create(make_instance("two", principal="a", conversation_id="b#C#c"))
    store.create(make_instance("three", principal="a%23C%23b", conversation_id="c"))
    # WHEN / THEN each sees only its own instance
    assert [i.id for i in store.list_conversation("a#C#b", "c")] == ["one"]
    assert [i.id for i in store.list_conversation("a", "b#C#c")] == ["two"]
    assert [i.id for i in store.list_conversation("a%23C%23b", "c")] == ["three"]


def test_list_orders_by_instant_whatever_the_timezone(store: DynamoDBFormStore) -> None:
    # GIVEN instances created at instants written in different UTC offsets
    plus_two = timezone(timedelta(hours=2))
    store.create(make_instance("later", created_at=datetime(2024, 5, 1, 12, 0, tzinfo=plus_two)))
    store.create(make_instance("earlier", created_at=datetime(2024, 5, 1, 9, 59, tzinfo=UTC)))
    # WHEN / THEN the list follows the instants (10:00 UTC after 09:59 UTC)
    assert [i.id for i in store.list_conversation("alice", "conv-1")] == ["earlier", "later"]


def test_empty_logs_and_state_round_trip(store: DynamoDBFormStore) -> None:
    # GIVEN an instance with an empty log and a log whose cursor is -1
    history = {"empty": FieldHistory(), "retracted": seeded_log(["x"], T0)}
    history["retracted"] = FieldHistory(history["retracted"].revisions, -1)
    instance = make_instance(history=history, state=busy_state(T0))
    # WHEN it is stored and read / THEN it is equal, field order included
    store.create(instance)
    got: FormInstance = store.get("inst-1")
    assert got == instance
    assert list(got.history) == ["empty", "retracted"]
    assert got.model_dump_json() == instance.model_dump_json()


# ---------------------------------------------------------------------- through the service


TRAVEL_CLAIMANT = {"full_name": "Ana Ferreira", "staff_id": "AB1234"}
TRAVEL_TRIP = {"destination": "Lisbon", "departure_date": "2025-03-03", "return_date": "2025-03-07"}
TRAVEL_TRAVEL = {"mode": "air", "flight_number": "TP1234", "total": 2450}
TRAVEL_APPROVAL = {
    "cost_centre": "CC-104",
    "manager_email": "joao.silva@example.com",
    "receipts_attached": True,
}


@pytest.fixture
def service(store: DynamoDBFormStore) -> FormService:
    ticks: Iterator[int] = count(1)
    ids: Iterator[int] = count(1)
    return FormService(
        FormRegistry(EXAMPLES),
        store,
        InProcessDispatcher(),
        clock=lambda: datetime(2025, 3, 10, 9, 0, tzinfo=UTC) + timedelta(seconds=next(ticks)),
        new_id=lambda: f"fi_{next(ids)}",
    )


def test_a_travel_claim_conversation_runs_to_completion_on_dynamodb(
    service: FormService, store: DynamoDBFormStore, dynamodb: Any, table: str
) -> None:
    caller = Caller("user-1", "conv-1")
    form = "travel-claim"

    def call(call_id: str, tool: str, **payload: Any) -> dict[str, Any]:
        return service.call(caller, tool, call_id, payload)

    # GIVEN a claim started and filled step by step, with a total over the policy cap
    started = call("call_1", "form_start", form=form, values=TRAVEL_CLAIMANT)
    instance = started["instance"]
    assert started["ok"], started
    assert call("call_2", "form_fill", form=form, values=TRAVEL_TRIP)["ok"]
    over = call("call_3", "form_fill", form=form, values=TRAVEL_TRAVEL)
    assert over["fired"] == [f"{instance}:checkpoint.policy_cap:1"]
    # THEN the hook ran after the commit and its rejection is on the status line
    assert "policy cap" in "\n".join(service.status(caller))
    assert store.get(instance).state.outbox[f"{instance}:checkpoint.policy_cap:1"].status == "done"
    # WHEN the rest is answered and the total corrected
    assert "closed" not in call("call_4", "form_fill", form=form, values=TRAVEL_APPROVAL)
    fixed = call("call_5", "form_revise", form=form, field="total", action="set", value=1950)
    assert "closed" not in fixed  # complete, and open for corrections until submitted
    done = call("call_6", "form_fill", form=form, submit=True)
    # THEN the claim completes, every call is recorded and the status line is empty
    assert done.get("closed") == "completed", done
    assert service.status(caller) == []
    final = store.get(instance)
    assert final.state.status == "completed"
    assert all(store.get_call("user-1", "conv-1", f"call_{n}") is not None for n in range(1, 7))
    # WHEN earlier calls are replayed by their tool-call ids
    items = scan(dynamodb, table)
    replay_start = call("call_1", "form_start", form=form, values=TRAVEL_CLAIMANT)
    replay_fill = call("call_3", "form_fill", form=form, values=TRAVEL_TRAVEL)
    # THEN each returns its first result and nothing at all is written
    assert replay_start["replayed"] and replay_start["instance"] == instance
    assert replay_fill["replayed"] and replay_fill["summary"] == over["summary"]
    assert replay_fill["fired"] == over["fired"]
    assert scan(dynamodb, table) == items
    # AND the same id with different input is refused as data
    clash = call("call_3", "form_fill", form=form, values={"total": 10})
    assert clash["error"] == "tool_call_conflict"
