"""The storage contract on what a read gives: a snapshot no later write or mutation changes,
one conversation's instances in a fixed order, and the same answers under concurrent committers
and large or unusual values.

Part of ``FormStoreContract`` (``forms.storage.contract``), which runs it on every adapter.
"""

from __future__ import annotations

import threading

from pydantic import JsonValue

from forms.errors import ConflictError
from forms.instance import (
    FieldHistory,
    HookState,
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
)
from forms.storage.port import FormStore


class ReadContract:
    """Snapshots, listings, concurrency and scale: what every adapter must keep.

    Mixed into ``FormStoreContract``, whose ``store`` fixture each test takes.
    """

    # --- snapshots ----------------------------------------------------------------------------

    def test_mutating_a_read_does_not_change_the_store(self, store: FormStore) -> None:
        # GIVEN a stored instance with something in every container
        store.create(make_instance(history={"name": seeded_log(["Ada"], T0)}, state=busy_state(T0)))
        original = store.get("inst-1").model_dump_json()
        # WHEN a caller tries to change what a read returned, in every container and field
        got = store.get("inst-1")
        refused = attempted(
            lambda: got.history.__setitem__("name", FieldHistory()),
            lambda: got.history.__setitem__("extra", seeded_log(["x"], T0)),
            got.state.outbox.clear,
            lambda: got.state.hooks.__setitem__("h1", HookState(holds=False, count=7)),
            got.state.rejections.clear,
            lambda: got.state.recalled.pop("name", None),
            lambda: got.state.page_edits.append("name"),
            lambda: setattr(got.state, "status", "terminated"),
            lambda: setattr(got, "version", 42),
        )
        # THEN each change is refused or changes nothing stored: the store holds the original
        assert store.get("inst-1").model_dump_json() == original
        assert refused <= 9

    def test_mutating_created_or_committed_objects_does_not_change_the_store(
        self, store: FormStore
    ) -> None:
        # GIVEN an instance created from an object the caller keeps
        instance = make_instance(state=busy_state(T0))
        store.create(instance)
        # WHEN the caller changes the object it created from
        attempted(
            instance.state.outbox.clear,
            lambda: instance.history.__setitem__("name", seeded_log(["sneaky"], T0)),
        )
        # THEN the store is unaffected
        stored = store.get("inst-1")
        assert stored.history == {}
        assert set(stored.state.outbox) == {"h1:1"}
        # AND changing a commit's state or its result afterwards changes nothing either
        commit = append_values(stored, "name", ["Ada"], at(1), state=busy_state(at(1)))
        result = store.commit(commit)
        after = store.get("inst-1").model_dump_json()
        attempted(commit.state.outbox.clear, result.state.hooks.clear, result.history.clear)
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

    def test_later_writes_do_not_change_an_earlier_commit_s_result(self, store: FormStore) -> None:
        # GIVEN what a commit returned
        store.create(make_instance(history={"name": seeded_log(["Ada"], T0)}, state=busy_state(T0)))
        result = store.commit(
            append_values(store.get("inst-1"), "name", ["Grace"], at(1), state=busy_state(at(1)))
        )
        frozen = result.model_dump_json()
        # WHEN the instance is committed to again, planned on that result, and on a read
        again = store.commit(
            append_values(result, "name", ["Joan"], at(2), state=busy_state(at(2)))
        )
        store.commit(move_cursor(store.get("inst-1"), "name", 0, at(3)))
        # THEN the earlier result is exactly as it was, and so is the later one
        assert result.model_dump_json() == frozen
        assert again.version == 2 and again.field("name").in_force() is not None
        assert store.get("inst-1").version == 3

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
        # WHEN it is listed and the caller tries to change what was listed
        (listed,) = store.list_conversation("alice", "conv-1")
        assert listed == store.get("inst-1")
        attempted(listed.history.clear)
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
        assert dumped_revisions(final)[:5_000] == dumped_revisions(log)

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
