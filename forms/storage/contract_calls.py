"""The storage contract on tool-call records: a write records its call with it, once, and a
replayed call changes nothing; an instance past one stored item is refused whole.

Part of ``FormStoreContract`` (``forms.storage.contract``), which runs it on every adapter.
"""

from __future__ import annotations

import pytest

from forms.errors import CallRecorded, ConflictError, NotFound, SizeLimit
from forms.instance import (
    Rejection,
)
from forms.storage.contract_builders import (
    append_values,
    at,
    call,
    make_instance,
)
from forms.storage.port import FormStore
from forms.storage.races import landed
from forms.storage.sizes import ITEM_LIMIT


class CallContract:
    """Tool-call records and the one-item limit: what every adapter must keep.

    Mixed into ``FormStoreContract``, whose ``store`` fixture each test takes.
    """

    # --- tool-call records ----------------------------------------------------------------------

    def test_an_instance_past_one_stored_item_is_refused_and_stores_nothing(
        self, store: FormStore
    ) -> None:
        # GIVEN a stored instance, and a state (checkpoint messages) past one stored item
        store.create(make_instance(), call("c0"))
        current = store.get("inst-1")
        rejections = [
            Rejection(key=f"h:{n}", hook_id="h", message=f"{n:04d}" + "é" * 8_000, at=at(1))
            for n in range(22)
        ]
        state = current.state.model_copy(update={"rejections": rejections})
        # WHEN a commit would store it
        too_big = append_values(current, "name", ["Ada"], at(1), state=state)
        with pytest.raises(SizeLimit) as refused:
            store.commit(too_big.model_copy(update={"call": call("c1")}))
        # THEN it is refused with its size, and nothing of it is stored
        assert (refused.value.item, refused.value.limit) == ("instance", ITEM_LIMIT)
        assert ITEM_LIMIT < refused.value.size < ITEM_LIMIT + 20_000
        assert store.get("inst-1") == current
        assert store.get_call("alice", "conv-1", "c1") is None
        # AND a create with it is refused too, storing nothing
        with pytest.raises(SizeLimit):
            store.create(make_instance("inst-2", state=state), call("c2"))
        with pytest.raises(NotFound):
            store.get("inst-2")
        assert store.get_call("alice", "conv-1", "c2") is None
        # AND a state just under the limit lands and reads back whole
        fits = state.model_copy(update={"rejections": rejections[:20]})
        after = store.commit(append_values(current, "name", ["Ada"], at(1), state=fits))
        assert store.get("inst-1").state == after.state == fits

    def test_a_create_records_its_call_and_a_second_create_under_that_id_stores_nothing(
        self, store: FormStore
    ) -> None:
        # GIVEN an instance created with the start call that made it
        store.create(make_instance("inst-1"), call("start-1", summary="first"))
        # WHEN another instance is created in the same conversation under the same call id
        with pytest.raises(CallRecorded) as raised:
            store.create(make_instance("inst-2"), call("start-1", summary="second"))
        # THEN it fails with the first record, and the second instance does not exist
        assert raised.value.record.result["summary"] == "first"
        with pytest.raises(NotFound):
            store.get("inst-2")
        assert [i.id for i in store.list_conversation("alice", "conv-1")] == ["inst-1"]
        got = store.get_call("alice", "conv-1", "start-1")
        assert got is not None and got.result["summary"] == "first"

    def test_call_ids_are_scoped_to_the_principals_conversation(self, store: FormStore) -> None:
        store.create(make_instance("inst-1"), call("c-1"))
        store.create(make_instance("inst-2", principal="bob"), call("c-1"))
        store.create(make_instance("inst-3", conversation_id="conv-2"), call("c-1"))
        assert store.get_call("alice", "conv-1", "c-1") is not None
        assert store.get_call("alice", "conv-9", "c-1") is None
        assert store.get_call("carol", "conv-1", "c-1") is None

    def test_a_commit_records_its_call_once_and_a_replayed_commit_changes_nothing(
        self, store: FormStore
    ) -> None:
        # GIVEN a commit that recorded call c-1
        store.create(make_instance())
        first = store.commit(
            append_values(store.get("inst-1"), "name", ["Ada"], at(1)).model_copy(
                update={"call": call("c-1", at(1), summary="saved Ada")}
            )
        )
        # WHEN another commit carries the same call id
        replay = append_values(first, "name", ["Grace"], at(2)).model_copy(
            update={"call": call("c-1", at(2), summary="saved Grace")}
        )
        with pytest.raises(CallRecorded) as raised:
            store.commit(replay)
        # THEN it fails with the first record and nothing of it is stored
        assert raised.value.record.result["summary"] == "saved Ada"
        assert store.get("inst-1") == first

    def test_a_call_already_recorded_wins_over_a_stale_version(self, store: FormStore) -> None:
        store.create(make_instance())
        base = store.get("inst-1")
        store.commit(
            append_values(base, "name", ["Ada"], at(1)).model_copy(update={"call": call("c-1")})
        )
        stale = append_values(base, "name", ["Grace"], at(2)).model_copy(
            update={"call": call("c-1")}
        )
        with pytest.raises((CallRecorded, ConflictError)):
            store.commit(stale)
        assert store.get("inst-1").field("name").in_force() is not None
        assert store.get("inst-1").version == 1

    def test_a_conflicted_commit_does_not_record_its_call(self, store: FormStore) -> None:
        store.create(make_instance())
        base = store.get("inst-1")
        store.commit(append_values(base, "name", ["Ada"], at(1)))
        with pytest.raises(ConflictError):
            store.commit(
                append_values(base, "name", ["Grace"], at(2)).model_copy(
                    update={"call": call("c-2")}
                )
            )
        assert store.get_call("alice", "conv-1", "c-2") is None

    def test_record_call_binds_an_id_that_changed_nothing(self, store: FormStore) -> None:
        store.record_call("alice", "conv-1", call("c-1", summary="nothing saved"))
        with pytest.raises(CallRecorded) as raised:
            store.record_call("alice", "conv-1", call("c-1", summary="other"))
        assert raised.value.record.result["summary"] == "nothing saved"
        store.create(make_instance())
        with pytest.raises(CallRecorded):
            store.commit(
                append_values(store.get("inst-1"), "name", ["Ada"], at(1)).model_copy(
                    update={"call": call("c-1")}
                )
            )
        assert store.get("inst-1").version == 0

    def test_concurrent_creates_with_one_call_id_make_exactly_one_instance(
        self, store: FormStore
    ) -> None:
        # GIVEN ten threads starting a form under the same call id, as retries racing
        def start(n: int) -> None:
            store.create(make_instance(f"inst-{n}"), call("start-1", instance=f"inst-{n}"))

        created = landed(10, start, CallRecorded)
        # THEN exactly one instance exists, and it is the one the record names
        assert len(created) == 1
        (only,) = store.list_conversation("alice", "conv-1")
        record = store.get_call("alice", "conv-1", "start-1")
        assert record is not None and record.result["instance"] == only.id

    def test_call_records_are_snapshots(self, store: FormStore) -> None:
        # GIVEN a recorded call whose result the caller keeps and changes afterwards
        recorded = call("c-1", summary="first")
        store.record_call("alice", "conv-1", recorded)
        recorded.record.result["summary"] = "changed by the caller"
        # WHEN a reader changes what it got back
        got = store.get_call("alice", "conv-1", "c-1")
        assert got is not None
        got.result["summary"] = "changed by a reader"
        # THEN the store still holds the first result, for readers and for a refused write
        again = store.get_call("alice", "conv-1", "c-1")
        assert again is not None and again.result["summary"] == "first"
        with pytest.raises(CallRecorded) as raised:
            store.record_call("alice", "conv-1", call("c-1"))
        raised.value.record.result["summary"] = "changed through the error"
        last = store.get_call("alice", "conv-1", "c-1")
        assert last is not None and last.result["summary"] == "first"
