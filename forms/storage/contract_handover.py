"""The storage contract on a hand-over: closing the source and creating the target land together
or not at all, once.

Part of ``FormStoreContract`` (``forms.storage.contract``), which runs it on every adapter.
"""

from __future__ import annotations

import pytest

from forms.errors import AlreadyExists, CallRecorded, ConflictError, NotFound, SizeLimit
from forms.instance import (
    Commit,
    FieldHistory,
    FormInstance,
)
from forms.storage.contract_builders import (
    append_values,
    at,
    busy_state,
    call,
    make_instance,
    value_revision,
)
from forms.storage.port import FormStore
from forms.storage.sizes import ITEM_LIMIT


class HandOverContract:
    """A hand-over's two halves, together or not at all: what every adapter must keep.

    Mixed into ``FormStoreContract``, whose ``store`` fixture each test takes.
    """

    # ------------------------------------------------------------------ hand_over

    def _handover(self, store: FormStore, target_id: str = "inst-2") -> tuple[Commit, FormInstance]:
        """A source with an answer, its closing commit (recording call ``h-1``), and the
        target to start beside it carrying that answer."""
        store.create(make_instance())
        source = store.commit(append_values(store.get("inst-1"), "name", ["Ada"], at(1)))
        closing = Commit(
            instance_id=source.id,
            expected_version=source.version,
            state=source.state.model_copy(
                update={"status": "handed_over", "closed_reason": "over", "updated_at": at(2)}
            ),
            call=call("h-1", at(2), summary="handed over"),
        )
        carried = value_revision("Ada", at(2), by="handover")
        target = make_instance(
            target_id,
            created_at=at(2),
            form_id="enterprise",
            history={"name": FieldHistory(revisions=(carried,), cursor=0)},
            state=busy_state(at(2)),
        )
        return closing, target

    def test_hand_over_closes_the_source_and_creates_the_target_together(
        self, store: FormStore
    ) -> None:
        closing, target = self._handover(store)
        # WHEN the source hands over
        after = store.hand_over(closing, target)
        # THEN the source is closed, its history whole, and the target stands beside it
        assert after.state.status == "handed_over" and after.version == 2
        assert store.get("inst-1") == after
        assert store.get("inst-1").field("name").in_force() is not None
        started = store.get("inst-2")
        assert started.history["name"].revisions == target.history["name"].revisions
        assert started.state == target.state
        assert [i.id for i in store.list_conversation("alice", "conv-1")] == ["inst-1", "inst-2"]
        recorded = store.get_call("alice", "conv-1", "h-1")
        assert recorded is not None and recorded.result["summary"] == "handed over"

    def test_a_stale_hand_over_stores_neither_half(self, store: FormStore) -> None:
        closing, target = self._handover(store)
        # GIVEN the source moved on after the handover was planned
        moved = store.commit(append_values(store.get("inst-1"), "name", ["Grace"], at(3)))
        # WHEN the handover planned on the older version lands
        with pytest.raises(ConflictError) as raised:
            store.hand_over(closing, target)
        # THEN neither half is stored: no target, the source as it was, no call recorded
        assert raised.value.current is not None and raised.value.current.version == moved.version
        with pytest.raises(NotFound):
            store.get("inst-2")
        assert store.get("inst-1") == moved
        assert store.get_call("alice", "conv-1", "h-1") is None

    def test_a_target_that_cannot_be_created_leaves_the_source_open(self, store: FormStore) -> None:
        closing, target = self._handover(store)
        before = store.get("inst-1")
        # GIVEN the target's id is taken (the crash between the two halves, made to happen)
        store.create(make_instance("inst-2", created_at=at(1)))
        # WHEN the source hands over to it
        with pytest.raises(AlreadyExists):
            store.hand_over(closing, target)
        # THEN the source did not close, and the instance at that id is the older one
        assert store.get("inst-1") == before
        assert store.get("inst-2").form_id == "intake"
        assert store.get_call("alice", "conv-1", "h-1") is None

    def test_a_retried_hand_over_applies_once(self, store: FormStore) -> None:
        closing, target = self._handover(store)
        first = store.hand_over(closing, target)
        # WHEN the same handover (same call, same target) is sent again
        with pytest.raises((CallRecorded, ConflictError, AlreadyExists)):
            store.hand_over(closing, target)
        # THEN nothing changed: one target, the source as the first handover left it
        assert store.get("inst-1") == first
        assert [i.id for i in store.list_conversation("alice", "conv-1")] == ["inst-1", "inst-2"]

    def test_a_target_past_one_stored_item_stores_neither_half(self, store: FormStore) -> None:
        closing, target = self._handover(store)
        before = store.get("inst-1")
        huge = "x" * ITEM_LIMIT
        too_big = target.model_copy(
            update={"state": target.state.model_copy(update={"closed_reason": huge})}
        )
        with pytest.raises(SizeLimit):
            store.hand_over(closing, too_big)
        assert store.get("inst-1") == before
        with pytest.raises(NotFound):
            store.get("inst-2")

    def test_a_target_in_another_conversation_is_refused(self, store: FormStore) -> None:
        closing, target = self._handover(store)
        elsewhere = target.model_copy(update={"principal": "bob"})
        with pytest.raises(ValueError, match="conversation"):
            store.hand_over(closing, elsewhere)
        assert store.get("inst-1").state.status == "open"
        with pytest.raises(NotFound):
            store.get("inst-2")
