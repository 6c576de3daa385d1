"""The storage contract's first promises: an instance is created once, read back equal, and
changed only by a commit on its current version that appends to its logs and never rewrites them.

Part of ``FormStoreContract`` (``forms.storage.contract``), which runs it on every adapter.
"""

from __future__ import annotations

import pytest

from forms.errors import AlreadyExists, ConflictError, NotFound
from forms.instance import (
    Commit,
    FieldChange,
)
from forms.storage.contract_builders import (
    T0,
    append_values,
    at,
    attempted,
    busy_state,
    dumped_revisions,
    make_instance,
    move_cursor,
    seeded_log,
    value_revision,
)
from forms.storage.port import FormStore


class CommitContract:
    """Creating, reading and committing an instance: what every adapter must keep.

    Mixed into ``FormStoreContract``, whose ``store`` fixture each test takes.
    """

    # --- create / get -------------------------------------------------------------------------

    def test_create_then_get_returns_equal_data(self, store: FormStore) -> None:
        # GIVEN an instance with seed values and a busy state
        instance = make_instance(history={"name": seeded_log(["Ada"], T0)}, state=busy_state(T0))
        # WHEN it is created and read back
        store.create(instance)
        # THEN the read equals what was created
        assert store.get("inst-1") == instance

    def test_create_duplicate_id_fails_and_keeps_original(self, store: FormStore) -> None:
        # GIVEN a stored instance
        original = make_instance(history={"name": seeded_log(["Ada"], T0)})
        store.create(original)
        # WHEN another instance with the same id is created
        with pytest.raises(AlreadyExists):
            store.create(make_instance(principal="mallory", form_id="other"))
        # THEN the original is untouched
        assert store.get("inst-1") == original

    def test_get_unknown_id_is_not_found(self, store: FormStore) -> None:
        with pytest.raises(NotFound):
            store.get("missing")

    def test_commit_to_unknown_id_is_not_found(self, store: FormStore) -> None:
        with pytest.raises(NotFound):
            store.commit(append_values(make_instance("missing"), "name", ["Ada"], at(1)))
        with pytest.raises(NotFound):
            store.get("missing")

    # --- commit -------------------------------------------------------------------------------

    def test_commit_appends_moves_cursor_bumps_version_replaces_state(
        self, store: FormStore
    ) -> None:
        # GIVEN an instance with one value for "name" and another field "age"
        store.create(
            make_instance(history={"name": seeded_log(["Ada"], T0), "age": seeded_log([36], T0)})
        )
        before = store.get("inst-1")
        # WHEN two values are appended to "name" with a new state
        new_state = busy_state(at(1)).model_copy(update={"status": "completed"})
        result = store.commit(
            append_values(before, "name", ["Ad", "Ada L."], at(1), state=new_state)
        )
        # THEN the log grew, the cursor names the last entry, version is +1, state replaced
        name = result.field("name")
        assert [r.value for r in name.revisions] == ["Ada", "Ad", "Ada L."]
        assert name.cursor == 2
        assert [r.prev for r in name.revisions] == [-1, 0, 1]
        assert result.version == before.version + 1
        assert result.state == new_state
        # AND the untouched field and identity are as before; the returned value is what is stored
        assert result.field("age") == before.field("age")
        assert (result.id, result.created_at, result.principal) == (
            before.id,
            before.created_at,
            before.principal,
        )
        assert store.get("inst-1") == result

    def test_history_is_never_rewritten(self, store: FormStore) -> None:
        # GIVEN an instance
        store.create(make_instance())
        seen: list[str] = []
        # WHEN many commits append values and move the cursor back and forth (undo / redo)
        for step in range(30):
            current = store.get("inst-1")
            log = current.field("name")
            if step % 3 == 2:
                target = log.undo_target()
                assert target is not None
                result = store.commit(move_cursor(current, "name", target, at(step)))
            elif step % 5 == 4 and log.redo_target() is not None:
                redo = log.redo_target()
                assert redo is not None
                result = store.commit(move_cursor(current, "name", redo, at(step)))
            else:
                result = store.commit(append_values(current, "name", [f"v{step}"], at(step)))
            # THEN every entry seen before is still there, byte for byte, at the same index
            dumped = dumped_revisions(result.field("name"))
            assert dumped[: len(seen)] == seen
            seen = dumped
        assert store.get("inst-1").version == 30

    def test_stale_version_conflicts_with_current_and_changes_nothing(
        self, store: FormStore
    ) -> None:
        # GIVEN an instance that moved on after a reader took its copy
        store.create(make_instance())
        stale = store.get("inst-1")
        store.commit(append_values(stale, "name", ["first"], at(1)))
        stored = store.get("inst-1")
        # WHEN the stale reader commits
        with pytest.raises(ConflictError) as caught:
            store.commit(append_values(stale, "name", ["second"], at(2)))
        # THEN the error carries the current stored instance and nothing changed
        assert caught.value.subject == "inst-1"
        assert caught.value.expected == stale.version
        assert caught.value.current == stored
        assert store.get("inst-1") == stored

    def test_conflict_current_is_a_snapshot(self, store: FormStore) -> None:
        # GIVEN a conflict
        store.create(make_instance(state=busy_state(T0)))
        stale = store.get("inst-1")
        store.commit(append_values(stale, "name", ["first"], at(1)))
        stored = store.get("inst-1").model_dump_json()
        with pytest.raises(ConflictError) as caught:
            store.commit(append_values(stale, "name", ["second"], at(2)))
        current = caught.value.current
        assert current is not None
        # WHEN the caller tries to change the carried instance
        attempted(
            current.history.clear,
            current.state.outbox.clear,
            lambda: setattr(current, "version", 99),
        )
        # THEN the store is unaffected
        assert store.get("inst-1").model_dump_json() == stored

    def test_cursor_outside_log_rejects_whole_commit(self, store: FormStore) -> None:
        # GIVEN an instance with two fields
        store.create(make_instance(history={"a": seeded_log([1], T0), "b": seeded_log([2], T0)}))
        before = store.get("inst-1")
        good = FieldChange(append=(value_revision(10, at(1), prev=0),), cursor=1)
        for bad_cursor in (5, 2, -2):
            # WHEN one commit holds a good change to "a", a new state and a bad cursor for "b"
            commit = Commit(
                instance_id="inst-1",
                expected_version=before.version,
                fields={"a": good, "b": FieldChange(append=(), cursor=bad_cursor)},
                state=busy_state(at(1)),
            )
            with pytest.raises(ValueError):
                store.commit(commit)
            # THEN nothing at all changed
            assert store.get("inst-1") == before

    def test_cursor_on_new_field_without_entries_is_rejected(self, store: FormStore) -> None:
        store.create(make_instance())
        before = store.get("inst-1")
        with pytest.raises(ValueError):
            store.commit(move_cursor(before, "never-written", 0, at(1)))
        assert store.get("inst-1") == before
