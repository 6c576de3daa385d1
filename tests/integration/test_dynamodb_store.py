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
from forms.errors import CallRecorded, ConflictError, SizeLimit, StoreError
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
from forms.storage.dynamodb import (
    DYNAMODB_ITEM_LIMIT,
    DynamoDBFormStore,
    conversation_key,
    home_key,
)
from forms.storage.dynamodb_outbox import DynamoDBOutboxScan
from forms.storage.outbox_contract import OutboxScanContract, Stores
from tests.integration.conftest import Requests
from tests.support import form_service

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


def large_answers(current: FormInstance, fields: int) -> Commit:
    """A commit answering ``fields`` new fields (f000, f001, ...) with 16 KB each."""
    return Commit(
        instance_id=current.id,
        expected_version=current.version,
        fields={
            f"f{i:03d}": FieldChange(append=(value_revision(sixteen_kb(i), at(1)),), cursor=0)
            for i in range(fields)
        },
        state=current.state.model_copy(update={"updated_at": at(1)}),
    )


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
    commit = large_answers(before, 100)
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
    # THEN every item that existed, except the instance's home item, is byte for byte what it was
    state_key = home_key(after_commit)
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
    # AND reading the instance, or listing the conversation, reads no call record: one GetItem
    # of its home, one Query of the conversation's homes (begins_with I#)
    requests.take()
    store.get("inst-1")
    store.list_conversation("alice", "conv-1")
    assert requests.take() == ["GetItem", "Query"]
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
    # WHEN it is read / THEN one GetItem of its home (this store knows where it is)
    current = store.get("inst-1")
    assert requests.take() == ["GetItem"]
    # WHEN revisions are appended to the version just read / THEN one TransactWriteItems: the
    # read is remembered, and the condition on version guards it
    current = store.commit(append_values(current, "name", ["Grace"], at(1)))
    assert requests.take() == ["TransactWriteItems"]
    # WHEN only a cursor moves (undo) and no call is recorded / THEN one PutItem of the home
    # (this store wrote the log, so it has it; a store that only read the head reads the log
    # first: test_undo_and_redo_chains_read_the_log_and_keep_it_exact)
    store.commit(move_cursor(current, "name", 0, at(2)))
    assert requests.take() == ["PutItem"]
    # WHEN a store that never met the instance reads it / THEN its HOME item, then its home
    fresh = DynamoDBFormStore(dynamodb, table)
    moved = fresh.get("inst-1")
    assert requests.take() == ["GetItem", "GetItem"]
    # AND a commit from that read is the write alone
    fresh.commit(append_values(moved, "name", ["Lin"], at(3)))
    assert requests.take() == ["TransactWriteItems"]
    # WHEN a conversation of two instances is listed / THEN one Query
    store.create(make_instance("inst-2", created_at=at(3)))
    requests.take()
    assert [i.id for i in store.list_conversation("alice", "conv-1")] == ["inst-1", "inst-2"]
    assert requests.take() == ["Query"]
    # AND a commit built on the listed instance is the write alone (1 read + 1 write a call)
    listed = store.list_conversation("alice", "conv-1")[0]
    requests.take()
    store.commit(append_values(listed, "name", ["Kay"], at(4)))
    assert requests.take() == ["TransactWriteItems"]


def test_a_stale_commit_is_refused_by_its_own_read(
    store: DynamoDBFormStore, requests: Requests
) -> None:
    # GIVEN a writer holding version 0 while another writer moved the instance to version 1
    store.create(make_instance())
    stale = store.get("inst-1")
    other = store.commit(append_values(stale, "name", ["first"], at(1)))
    requests.take()
    # WHEN the stale writer commits
    with pytest.raises(ConflictError) as caught:
        store.commit(append_values(stale, "name", ["second"], at(2)))
    # THEN its read of the home item shows the conflict: nothing is written
    assert requests.take() == ["GetItem"]
    assert caught.value.current == other == store.get("inst-1")


# ---------------------------------------------------------------------- reads and history


def test_a_read_costs_the_same_whatever_the_history(dynamodb: Any, table: str) -> None:
    # GIVEN two instances with the same answers in force and to undo to, one with 2,000
    # revisions before them
    seed = DynamoDBFormStore(dynamodb, table)
    seed.create(make_instance("short", history={"name": seeded_log(["last", "final"], T0)}))
    long_log = seeded_log([*range(1_998), "last", "final"], T0)
    seed.create(make_instance("long", history={"name": long_log}, created_at=at(1)))
    returned: list[int] = []

    def count(parsed: dict[str, Any], **_: Any) -> None:
        returned.append(len(str(parsed.get("Item") or parsed.get("Items"))))

    dynamodb.meta.events.register("after-call.dynamodb.GetItem", count)
    dynamodb.meta.events.register("after-call.dynamodb.Query", count)
    # WHEN a store that never met them reads each
    cold = DynamoDBFormStore(dynamodb, table)
    short, long = cold.get("short"), cold.get("long")
    dynamodb.meta.events.unregister("after-call.dynamodb.GetItem", count)
    # THEN each read returned the same amount of data (the HOME item, then the home item),
    # give or take the digits of the counts and indexes
    assert len(returned) == 4 and abs(returned[1] - returned[3]) < 40
    assert long.field("name").in_force() == long_log.in_force()
    assert long.field("name").count == 2_000 and not long.field("name").loaded
    # AND the whole log is read only when something asks for it (one Query), once, as stored
    assert long.field("name").revisions == long_log.revisions
    assert len(returned) == 5
    assert long == seed.get("long") and short == seed.get("short")  # reads short's log too
    assert len(returned) == 6


def test_undo_and_redo_chains_read_the_log_and_keep_it_exact(
    store: DynamoDBFormStore, dynamodb: Any, table: str, requests: Requests
) -> None:
    # GIVEN a field set three times, read by a store that never met it
    store.create(make_instance(history={"name": seeded_log(["a", "b", "c"], T0)}))
    cold = DynamoDBFormStore(dynamodb, table)
    current = cold.get("inst-1")
    requests.take()
    # WHEN it is undone twice and redone once through that store
    for n, target in enumerate([1, 0, 1], start=1):
        current = cold.commit(move_cursor(current, "name", target, at(n)))
    # THEN the first undo read the log (one Query) and the later moves did not read again
    assert requests.take() == ["Query", "PutItem", "PutItem", "PutItem"]
    # AND a third store sees the same log, cursor and redo target as the writer
    again = DynamoDBFormStore(dynamodb, table).get("inst-1").field("name")
    assert (again.cursor, again.redo_target(), again.undo_target()) == (1, 2, 0)
    assert again == current.field("name") == store.get("inst-1").field("name")


def test_heads_too_big_for_one_item_keep_their_cursors_and_read_their_logs(
    store: DynamoDBFormStore, dynamodb: Any, table: str
) -> None:
    # GIVEN 30 fields each answered with a 16 KB value: too much to keep in force in one item
    store.create(make_instance())
    current = store.get("inst-1")
    commit = large_answers(current, 30)
    # WHEN it is committed / THEN it lands, the home item stays under the item limit
    after = store.commit(commit)
    home = scan(dynamodb, table)[home_key(after)]
    assert item_bytes(home) < DYNAMODB_ITEM_LIMIT
    # AND a store that never met it reads every value, the fields kept slim from their log
    got = DynamoDBFormStore(dynamodb, table).get("inst-1")
    assert [got.field(f"f{i:02d}").in_force() for i in range(30)] == [
        after.field(f"f{i:02d}").in_force() for i in range(30)
    ]


class HidingClient:
    """A client whose first ``hide`` Queries leave out the items ``hidden`` picks.

    Stands in for DynamoDB's read-committed Query, which may return some of a transaction's
    items before the others are visible.
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


def test_a_log_read_missing_part_of_a_commit_is_taken_again(
    dynamodb: Any, table: str, requests: Requests
) -> None:
    # GIVEN a committed instance whose newest revision item the first log read misses
    plain = DynamoDBFormStore(dynamodb, table)
    plain.create(make_instance(state=busy_state(T0)))
    committed = plain.commit(append_values(plain.get("inst-1"), "name", ["Ada"], at(1)))
    pauses: list[int] = []

    def newest(item: Item) -> bool:
        return bool(item["sk"]["S"] == "R#0000000001#000")

    store = DynamoDBFormStore(HidingClient(dynamodb, 1, newest), table, pause=pauses.append)
    got = store.get("inst-1")
    requests.take()
    # WHEN its log is read
    revisions = got.field("name").revisions
    # THEN the torn first read was dropped and the second one returned the whole log
    assert revisions == committed.field("name").revisions
    assert requests.take() == ["Query", "Query"]
    assert pauses == [1]


def test_a_log_read_that_never_adds_up_fails_instead_of_returning_half_a_history(
    dynamodb: Any, table: str
) -> None:
    # GIVEN a store whose Queries always miss the revision items its home counts
    plain = DynamoDBFormStore(dynamodb, table)
    plain.create(make_instance(history={"name": seeded_log(["Ada"], T0)}))

    def revisions(item: Item) -> bool:
        return str(item["sk"]["S"]).startswith("R#")

    store = DynamoDBFormStore(HidingClient(dynamodb, 99, revisions), table, read_attempts=3)
    got = store.get("inst-1")
    # WHEN its log is read / THEN it fails after three attempts rather than return half of it
    with pytest.raises(StoreError, match="3 reads"):
        _ = got.field("name").revisions


def test_revision_items_of_a_later_version_are_not_part_of_the_log(
    store: DynamoDBFormStore, dynamodb: Any, table: str
) -> None:
    # GIVEN a stored instance, and the revision item of a commit whose home item a read does
    # not see yet
    store.create(make_instance(history={"name": seeded_log(["Ada"], T0)}))
    before = store.get("inst-1")
    later = '{"name":[' + value_revision("Grace", at(1), prev=0).model_dump_json() + "]}"
    dynamodb.put_item(
        TableName=table,
        Item={"pk": {"S": "I#inst-1"}, "sk": {"S": "R#0000000001#000"}, "revs": {"S": later}},
    )
    # WHEN it is read by a store that never met it / THEN its log is as of its home item
    got = DynamoDBFormStore(dynamodb, table).get("inst-1")
    assert got.field("name").revisions == before.field("name").revisions
    assert got == before


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


def test_an_item_dynamodb_refuses_as_too_large_is_the_same_size_limit(
    dynamodb: Any, table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a store whose own check lets an oversized state through (as a wrong estimate would)
    import forms.storage.dynamodb as adapter

    monkeypatch.setattr(adapter, "check_instance", lambda instance, state: None)
    store = DynamoDBFormStore(dynamodb, table)
    store.create(make_instance())
    current = store.get("inst-1")
    before = scan(dynamodb, table)
    rejections = [
        Rejection(key=f"h:{n}", hook_id="h", message=sixteen_kb(n), at=at(1)) for n in range(30)
    ]
    state = current.state.model_copy(update={"rejections": rejections})
    monkeypatch.setattr(adapter, "DYNAMODB_ITEM_LIMIT", 10_000_000)  # no slimming guard either
    # WHEN DynamoDB itself refuses the home item as past its 400 KB
    with pytest.raises(SizeLimit) as refused:
        store.commit(append_values(current, "name", ["Ada"], at(1), state=state))
    # THEN that is the same refusal, and nothing was written
    assert refused.value.item == "instance" and refused.value.size > 400_000
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
    return form_service(
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
