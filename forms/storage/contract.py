"""The behaviour every ``FormStore`` adapter must show, as a reusable pytest suite.

Subclass ``FormStoreContract`` in a test module (its name must start with ``Test``) and override
the ``store`` fixture to return a fresh, empty store::

    class TestMemoryStore(FormStoreContract):
        @pytest.fixture
        def store(self) -> FormStore:
            return InMemoryFormStore()

The tests go through the public port only and assume nothing about timing. The helpers below
build instances and commits from explicit datetimes; tests may reuse them.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import JsonValue

from forms.errors import AlreadyExists, CallRecorded, ConflictError, NotFound, SizeLimit
from forms.instance import (
    CallRecord,
    Commit,
    FieldChange,
    FieldHistory,
    FormInstance,
    HookState,
    InstanceState,
    NewCall,
    OutboxEntry,
    Rejection,
    Revision,
    Source,
)
from forms.storage.port import FormStore
from forms.storage.sizes import ITEM_LIMIT

T0 = datetime(2024, 5, 1, 9, 30, tzinfo=UTC)


def at(seconds: int) -> datetime:
    """A fixed instant ``seconds`` after ``T0``."""
    return T0 + timedelta(seconds=seconds)


def value_revision(
    value: JsonValue,
    when: datetime,
    *,
    prev: int = -1,
    by: Source = "agent",
    tool_call_id: str | None = None,
) -> Revision:
    """A ``value`` revision appended on top of cursor ``prev``."""
    return Revision(kind="value", value=value, by=by, tool_call_id=tool_call_id, at=when, prev=prev)


def seeded_log(values: Sequence[JsonValue], when: datetime) -> FieldHistory:
    """A log of ``values`` each written on top of the previous one, the last in force."""
    revisions = tuple(value_revision(v, when, prev=i - 1) for i, v in enumerate(values))
    return FieldHistory(revisions=revisions, cursor=len(revisions) - 1)


def busy_state(when: datetime) -> InstanceState:
    """A state with something in every container (hooks, outbox, rejections)."""
    return InstanceState(
        updated_at=when,
        hooks={"h1": HookState(holds=True, count=1)},
        outbox={"h1:1": OutboxEntry(key="h1:1", hook_id="h1", occurrence=1, created_at=when)},
        rejections=[Rejection(key="r1", hook_id="h2", message="too young", at=when)],
    )


def call(call_id: str, when: datetime = T0, *, tool: str = "form_fill", **result: Any) -> NewCall:
    """A tool call to record under ``call_id``."""
    record = CallRecord(
        tool=tool, fingerprint=f"fp-{call_id}", result={"ok": True, **result}, at=when
    )
    return NewCall(call_id=call_id, record=record)


def make_instance(
    instance_id: str = "inst-1",
    *,
    principal: str = "alice",
    conversation_id: str = "conv-1",
    created_at: datetime = T0,
    form_id: str = "intake",
    form_version: int = 1,
    history: Mapping[str, FieldHistory] | None = None,
    state: InstanceState | None = None,
) -> FormInstance:
    """A new instance (version 0); its state defaults to an empty one updated at creation."""
    return FormInstance(
        id=instance_id,
        form_id=form_id,
        form_version=form_version,
        principal=principal,
        conversation_id=conversation_id,
        created_at=created_at,
        history=dict(history or {}),
        state=state or InstanceState(updated_at=created_at),
    )


def append_values(
    instance: FormInstance,
    field_id: str,
    values: Sequence[JsonValue],
    when: datetime,
    *,
    state: InstanceState | None = None,
    tool_call_id: str | None = None,
) -> Commit:
    """A commit on top of ``instance`` appending ``values`` to one field, the last in force."""
    log = instance.field(field_id)
    prev, appended = log.cursor, []
    for offset, value in enumerate(values):
        appended.append(value_revision(value, when, prev=prev, tool_call_id=tool_call_id))
        prev = log.count + offset
    return Commit(
        instance_id=instance.id,
        expected_version=instance.version,
        fields={field_id: FieldChange(append=tuple(appended), cursor=prev)},
        state=state or instance.state.model_copy(update={"updated_at": when}),
    )


def move_cursor(instance: FormInstance, field_id: str, cursor: int, when: datetime) -> Commit:
    """A commit on top of ``instance`` that only moves one field's cursor (undo, redo)."""
    return Commit(
        instance_id=instance.id,
        expected_version=instance.version,
        fields={field_id: FieldChange(cursor=cursor)},
        state=instance.state.model_copy(update={"updated_at": when}),
    )


def _dumps(log: FieldHistory) -> list[str]:
    return [revision.model_dump_json() for revision in log.revisions]


class FormStoreContract:
    """Tests every ``FormStore`` adapter must pass. Override ``store`` in a subclass."""

    @pytest.fixture
    def store(self) -> FormStore:
        raise NotImplementedError("override the `store` fixture with a fresh, empty store")

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
            dumped = _dumps(result.field("name"))
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
        # WHEN the carried instance is mutated
        current.history.clear()
        current.state.outbox.clear()
        current.version = 99
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

    # --- snapshots ----------------------------------------------------------------------------

    def test_mutating_a_read_does_not_change_the_store(self, store: FormStore) -> None:
        # GIVEN a stored instance with something in every container
        store.create(make_instance(history={"name": seeded_log(["Ada"], T0)}, state=busy_state(T0)))
        original = store.get("inst-1").model_dump_json()
        # WHEN a caller mutates what a read returned
        got = store.get("inst-1")
        got.history["name"] = FieldHistory()
        got.history["extra"] = seeded_log(["x"], T0)
        got.state.outbox.clear()
        got.state.hooks["h1"] = HookState(holds=False, count=7)
        got.state.rejections.clear()
        got.state.status = "terminated"
        got.version = 42
        # THEN the store still holds the original
        assert store.get("inst-1").model_dump_json() == original

    def test_mutating_created_or_committed_objects_does_not_change_the_store(
        self, store: FormStore
    ) -> None:
        # GIVEN an instance created from an object the caller keeps
        instance = make_instance(state=busy_state(T0))
        store.create(instance)
        # WHEN the caller mutates the object it created from
        instance.state.outbox.clear()
        instance.history["name"] = seeded_log(["sneaky"], T0)
        # THEN the store is unaffected
        stored = store.get("inst-1")
        assert stored.history == {}
        assert set(stored.state.outbox) == {"h1:1"}
        # AND mutating a commit's state or its result afterwards changes nothing either
        commit = append_values(stored, "name", ["Ada"], at(1), state=busy_state(at(1)))
        result = store.commit(commit)
        after = store.get("inst-1").model_dump_json()
        commit.state.outbox.clear()
        result.state.hooks.clear()
        result.history.clear()
        assert store.get("inst-1").model_dump_json() == after

    def test_later_commit_does_not_change_an_earlier_read(self, store: FormStore) -> None:
        # GIVEN a read taken before a commit
        store.create(make_instance(history={"name": seeded_log(["Ada"], T0)}, state=busy_state(T0)))
        earlier = store.get("inst-1")
        frozen = earlier.model_dump_json()
        # WHEN the instance is committed to
        store.commit(append_values(earlier, "name", ["Grace"], at(1), state=busy_state(at(1))))
        # THEN the earlier read is exactly as it was
        assert earlier.model_dump_json() == frozen
        assert earlier.version == 0

    # --- list_conversation --------------------------------------------------------------------

    def test_list_conversation_is_oldest_first_then_by_id(self, store: FormStore) -> None:
        # GIVEN instances created out of order, two of them at the same instant
        for instance_id, created in [("c", at(5)), ("b", at(1)), ("a", at(5)), ("d", at(0))]:
            store.create(make_instance(instance_id, created_at=created))
        # WHEN the conversation is listed
        listed = store.list_conversation("alice", "conv-1")
        # THEN it is ordered by created_at, then id
        assert [i.id for i in listed] == ["d", "b", "a", "c"]

    def test_list_conversation_isolates_principals(self, store: FormStore) -> None:
        # GIVEN two principals who use the same conversation id, and another conversation
        store.create(make_instance("mine", principal="alice", conversation_id="shared"))
        store.create(make_instance("theirs", principal="bob", conversation_id="shared"))
        store.create(make_instance("elsewhere", principal="alice", conversation_id="other"))
        # WHEN / THEN each principal sees only their own instances
        assert [i.id for i in store.list_conversation("alice", "shared")] == ["mine"]
        assert [i.id for i in store.list_conversation("bob", "shared")] == ["theirs"]
        assert store.list_conversation("carol", "shared") == []
        assert store.list_conversation("alice", "unknown") == []

    def test_list_conversation_returns_current_snapshots(self, store: FormStore) -> None:
        # GIVEN an instance that has been committed to
        store.create(make_instance())
        store.commit(append_values(store.get("inst-1"), "name", ["Ada"], at(1)))
        # WHEN it is listed and the listed copy is mutated
        (listed,) = store.list_conversation("alice", "conv-1")
        assert listed == store.get("inst-1")
        listed.history.clear()
        # THEN the store still holds the committed value
        assert store.get("inst-1").field("name").in_force() is not None

    # --- concurrency and scale ----------------------------------------------------------------

    def test_concurrent_committers_each_land_exactly_once(self, store: FormStore) -> None:
        # GIVEN one instance and N threads that each make K read->commit changes, retrying
        # a conflict from the instance the error carries; each round, all read before any commits
        threads_n, commits_k = 8, 25
        store.create(make_instance())
        round_start = threading.Barrier(threads_n, timeout=60)
        failures: list[BaseException] = []

        def writer(worker: int) -> None:
            try:
                for k in range(commits_k):
                    tag = f"w{worker}-{k}"
                    current = store.get("inst-1")
                    round_start.wait()  # all have read this round: all but one must conflict
                    for _attempt in range(10_000):
                        try:
                            store.commit(
                                append_values(current, "n", [tag], at(k), tool_call_id=tag)
                            )
                            break
                        except ConflictError as conflict:
                            assert conflict.current is not None
                            current = conflict.current
                    else:
                        raise AssertionError(f"{tag} never landed")
            except BaseException as error:  # reported to the main thread below
                failures.append(error)
                round_start.abort()  # release the other workers instead of leaving them waiting

        # WHEN they all run at once
        workers = [threading.Thread(target=writer, args=(w,)) for w in range(threads_n)]
        for thread in workers:
            thread.start()
        for thread in workers:
            thread.join(timeout=120)
        assert not any(thread.is_alive() for thread in workers)
        assert failures == []
        # THEN every commit landed exactly once, in one unbroken chain
        final = store.get("inst-1")
        log = final.field("n")
        expected = {f"w{w}-{k}" for w in range(threads_n) for k in range(commits_k)}
        assert final.version == threads_n * commits_k
        assert len(log.revisions) == threads_n * commits_k
        assert {r.tool_call_id for r in log.revisions} == expected
        assert [r.prev for r in log.revisions] == list(range(-1, len(log.revisions) - 1))

    def test_large_history_keeps_working(self, store: FormStore) -> None:
        # GIVEN a field that reaches 5,000 revisions over 250 commits
        store.create(make_instance())
        for batch in range(250):
            current = store.get("inst-1")
            values = [batch * 20 + i for i in range(20)]
            store.commit(append_values(current, "n", values, at(batch)))
        # WHEN it is read, undone and written again
        big = store.get("inst-1")
        log = big.field("n")
        assert (len(log.revisions), log.cursor, big.version) == (5_000, 4_999, 250)
        assert [r.value for r in log.revisions] == list(range(5_000))
        undone = store.commit(move_cursor(big, "n", 4_998, at(300)))
        again = store.commit(append_values(undone, "n", ["branch"], at(301)))
        # THEN the log kept every entry and the new one branches off the undone cursor
        final = again.field("n")
        assert len(final.revisions) == 5_001
        assert final.revisions[-1].prev == 4_998
        assert _dumps(final)[:5_000] == _dumps(log)

    def test_unicode_and_large_values_round_trip(self, store: FormStore) -> None:
        # GIVEN values with non-ASCII text, nesting, big numbers and a 64 KiB string
        values: list[JsonValue] = [
            "Zoë Ø'Brien — 山田太郎 — مرحبا — 👩🏽‍💻",
            "e\u0301 (combining) and \u00e9 (precomposed)",
            {"address": {"lines": ["1 Rue de l'Église", "Åre"], "zip": None}, "ok": True},
            [1, 2.5, -(2**53), 2**62, "", [], {}],
            "x" * 65_536,
        ]
        instance = make_instance(
            "inst-ü",
            principal="アリス",
            conversation_id="会話-1",
            history={"名前": seeded_log(values[:2], T0)},
        )
        # WHEN it is created and committed to
        store.create(instance)
        result = store.commit(append_values(store.get("inst-ü"), "名前", values[2:], at(1)))
        # THEN everything reads back exactly
        assert [r.value for r in result.field("名前").revisions] == values
        assert store.get("inst-ü") == result
        assert [i.id for i in store.list_conversation("アリス", "会話-1")] == ["inst-ü"]

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
        outcomes: list[str] = []
        barrier = threading.Barrier(10)

        def start(n: int) -> None:
            barrier.wait()
            try:
                store.create(make_instance(f"inst-{n}"), call("start-1", instance=f"inst-{n}"))
            except CallRecorded:
                outcomes.append("recorded")
            else:
                outcomes.append("created")

        threads = [threading.Thread(target=start, args=(n,)) for n in range(10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # THEN exactly one instance exists, and it is the one the record names
        assert sorted(outcomes) == ["created"] + ["recorded"] * 9
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
