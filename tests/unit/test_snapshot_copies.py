"""The copies the in-memory store makes: none but what sealing a plain container needs. An
instance a store holds or hands out is read-only (frozen models, ``Sealed`` and ``SealedList``
containers), so it is shared instead of copied and the port's snapshot promise holds by
construction (issue 26 item 1)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from forms import Commit, FormInstance, InMemoryFormStore
from forms.errors import ConflictError
from forms.instance import InstanceState, sealed_in_place
from forms.marked import Marked, Sealed, SealedList, replaced, seal

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def stored(store: InMemoryFormStore) -> FormInstance:
    store.create(
        FormInstance(
            id="fi_1",
            form_id="f",
            form_version=1,
            principal="alice",
            conversation_id="conv-1",
            created_at=T0,
            state=InstanceState(updated_at=T0, page_edits=["name"]),
        )
    )
    return store.get("fi_1")


def test_a_reads_page_edits_refuse_a_change() -> None:
    # GIVEN a stored instance whose person edited a field on their page
    store = InMemoryFormStore()
    got = stored(store)
    # WHEN the caller tries to change the list it read
    with pytest.raises(TypeError):
        got.state.page_edits.append("email")
    # THEN the store still holds its own, and a copy of it is the caller's to change
    assert store.get("fi_1").state.page_edits == ["name"]
    mine = list(got.state.page_edits)
    mine.append("email")
    assert store.get("fi_1").state.page_edits == ["name"]


def test_a_lost_race_hands_out_the_stored_instance_itself() -> None:
    # GIVEN a commit planned on version 0 of an instance that is at version 1 now
    store = InMemoryFormStore()
    first = stored(store)
    later = replaced(first.state, updated_at=T0.replace(hour=1))
    store.commit(Commit(instance_id="fi_1", expected_version=0, state=later))
    # WHEN it is committed
    with pytest.raises(ConflictError) as lost:
        store.commit(Commit(instance_id="fi_1", expected_version=0, state=first.state))
    # THEN the conflict carries the instance as stored: the very one a read gives, not a copy
    current = lost.value.current
    assert current is not None and current.version == 1
    assert current is store.get("fi_1")


def test_a_snapshot_of_a_sealed_instance_is_the_instance() -> None:
    # GIVEN an instance a store handed out
    store = InMemoryFormStore()
    got = stored(store)
    # WHEN / THEN a snapshot of it costs nothing: it is itself
    assert got.snapshot() is got


def test_a_snapshot_seals_plain_containers_by_copying_and_marked_ones_in_place() -> None:
    # GIVEN an instance with plain containers, and one whose logs are a Marked dict
    plain = FormInstance(
        id="fi_1",
        form_id="f",
        form_version=1,
        principal="alice",
        conversation_id="conv-1",
        created_at=T0,
        state=InstanceState(updated_at=T0, page_edits=["name"]),
    )
    logs: Marked[object] = Marked()
    logs.derived = "what the engine derived"
    marked = plain.model_copy(update={"history": logs})
    # WHEN they are snapshot
    sealed, also = plain.snapshot(), marked.snapshot()
    # THEN plain containers are copied into read-only ones, the caller's left as they were
    assert type(sealed.state.page_edits) is SealedList and sealed.state.page_edits == ["name"]
    assert type(plain.state.page_edits) is list
    # AND a Marked dict is sealed in place, keeping what it carries
    assert also.history is logs and type(logs) is Sealed
    assert logs.derived == "what the engine derived"
    # AND sealing is idempotent, and serialises as the plain containers did
    assert seal(logs) is logs
    assert sealed.model_dump_json() == plain.model_dump_json()


def test_a_commit_s_instance_is_sealed_where_it_stands() -> None:
    # GIVEN an instance as a commit makes it: a plain outbox, a Marked dict of hook states
    hooks: Marked[object] = Marked()
    made = FormInstance(
        id="fi_1",
        form_id="f",
        form_version=1,
        principal="alice",
        conversation_id="conv-1",
        created_at=T0,
        state=InstanceState(updated_at=T0),
    )
    state = made.state
    mine = state.outbox
    state.__dict__["hooks"] = hooks
    # WHEN it is sealed in place
    sealed = sealed_in_place(made)
    # THEN it is the same instance and state, every container read-only, same content
    assert sealed is made and sealed.state is state
    assert state.hooks is hooks and type(hooks) is Sealed
    assert type(state.outbox) is Sealed and state.outbox == mine
    assert type(made.history) is Sealed
    # AND the plain dict its maker held is no longer the instance's
    mine["x"] = "y"  # type: ignore[assignment]
    assert state.outbox == {}
