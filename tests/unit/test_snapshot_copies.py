"""The copies the in-memory store makes: every one it needs to keep what it hands out apart
from what it keeps (the port's snapshot promise), and no more (issue 26 item 1)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from forms import Commit, FormInstance, InMemoryFormStore
from forms.errors import ConflictError
from forms.instance import InstanceState
from forms.marked import replaced

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


def test_a_reads_page_edits_are_the_callers() -> None:
    # GIVEN a stored instance whose person edited a field on their page
    store = InMemoryFormStore()
    got = stored(store)
    # WHEN the caller changes the list it read
    got.state.page_edits.append("email")
    # THEN the store still holds its own
    assert store.get("fi_1").state.page_edits == ["name"]


def test_a_lost_race_copies_the_stored_instance_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a commit planned on version 0 of an instance that is at version 1 now
    store = InMemoryFormStore()
    first = stored(store)
    later = replaced(first.state, updated_at=T0.replace(hour=1))
    store.commit(Commit(instance_id="fi_1", expected_version=0, state=later))
    copies = 0
    snapshot = FormInstance.snapshot

    def counted(self: FormInstance) -> FormInstance:
        nonlocal copies
        copies += 1
        return snapshot(self)

    monkeypatch.setattr(FormInstance, "snapshot", counted)
    # WHEN it is committed
    with pytest.raises(ConflictError) as lost:
        store.commit(Commit(instance_id="fi_1", expected_version=0, state=first.state))
    # THEN the conflict carries the instance as stored, copied once
    current = lost.value.current
    assert copies == 1
    assert current is not None and current.version == 1
    # AND that copy is the caller's
    current.state.page_edits.clear()
    monkeypatch.undo()
    assert store.get("fi_1").state.page_edits == ["name"]
