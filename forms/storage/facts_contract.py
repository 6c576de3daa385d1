"""The fact store's contract: one suite every ``FactStore`` adapter passes.

Subclass ``FactStoreContract`` in a test module and give it a ``facts`` fixture. Each test
reads GIVEN / WHEN / THEN and checks one of the port's promises (``forms.storage.facts``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from forms.errors import CallRecorded, NotFound, SizeLimit
from forms.memory import (
    FactConflict,
    FactHead,
    FactHistory,
    FactRevision,
    MemorySettings,
    Source,
    Statement,
    Vocabulary,
    plan_confirmation,
    plan_deletion,
    plan_statement,
)
from forms.storage import sizes
from forms.storage.facts import REPLAY_PREFIX, FactStore

T0 = datetime(2026, 1, 1, tzinfo=UTC)
DAY = timedelta(days=1)
ANA = "acme/ana"
BOB = "acme/bob"
WEIGHT = "person.weight_kg"
VOCABULARY = Vocabulary.default()
API = Source(kind="api", ref="chatbot")


def say(
    facts: FactStore,
    principal: str,
    key: str,
    value: Any = None,
    at: datetime = T0,
    **statement: Any,
) -> FactHead:
    """Plan a statement on the stored head and append it (the way the service will)."""
    head = facts.head(principal, key)
    said = Statement(key=key, value=value, source=API, stated_at=at, **statement)
    planned = plan_statement(said, head, vocabulary=VOCABULARY, now=at)
    assert isinstance(planned, FactRevision), planned
    stored: FactHead = facts.append(principal, planned)
    return stored


def revision(seq: int, value: str, at: datetime = T0, key: str = WEIGHT) -> FactRevision:
    """A statement of ``value`` kg as revision ``seq``, planned by hand."""
    return FactRevision(
        key=key,
        seq=seq,
        change="stated",
        value=value,
        words=f"{value} kg",
        source=API,
        stated_at=at,
        recorded_at=at,
    )


class FactStoreContract:
    @pytest.fixture
    def facts(self) -> Any:
        raise NotImplementedError

    # ------------------------------------------------------------------ reading

    def test_a_principal_with_no_memory_reads_empty_and_on(self, facts: FactStore) -> None:
        assert facts.head(ANA, WEIGHT) is None
        assert (facts.heads(ANA), facts.current(ANA), facts.export(ANA)) == ([], [], [])
        with pytest.raises(NotFound):
            facts.get(ANA, WEIGHT)
        with pytest.raises(NotFound):
            facts.history(ANA, WEIGHT)
        assert facts.settings(ANA) == MemorySettings(enabled=True)

    def test_a_first_statement_is_revision_zero_and_reads_back(self, facts: FactStore) -> None:
        # GIVEN ana's height stated as 5'8"
        stored = say(facts, ANA, "person.height_cm", words="5'8\"")
        # THEN the head, the fact in force, the list and the history all say so
        assert facts.head(ANA, "person.height_cm") == stored
        assert (stored.version, stored.erased, stored.changed_at) == (1, 0, T0)
        fact = facts.get(ANA, "person.height_cm")
        assert (fact.value, fact.words, fact.stated_at, fact.revision) == (173, "5'8\"", T0, 0)
        assert fact.derivation is not None and fact.derivation.rule == "feet_inches_to_cm"
        assert facts.current(ANA) == [fact]
        [first] = facts.history(ANA, "person.height_cm")
        assert (first.seq, first.change, first.value, first.source) == (0, "stated", 173, API)
        assert facts.export(ANA) == [first]

    # ------------------------------------------------------------------ 1. history only grows

    def test_a_contradiction_appends_and_closes_the_old_value(self, facts: FactStore) -> None:
        # GIVEN 70 kg in January, then 75 kg a month later
        say(facts, ANA, WEIGHT, "70", T0, words="70 kg")
        first = facts.history(ANA, WEIGHT)[0]
        head = say(facts, ANA, WEIGHT, "75", T0 + 31 * DAY)
        # THEN 75 is in force, and the history holds both, the first as it was appended
        assert (head.version, facts.get(ANA, WEIGHT).value) == (2, "75")
        history = facts.history(ANA, WEIGHT)
        assert history[0] == first and [r.change for r in history] == ["stated", "stated"]
        # AND 70 held until 75 was stated: what was true, and what we believed, in January
        read = FactHistory(history)
        [old, new] = read.timeline()
        assert (old.value, old.valid_until, new.value, new.valid_until) == (
            "70",
            T0 + 31 * DAY,
            "75",
            None,
        )
        january = read.valid_at(T0 + 10 * DAY)
        believed = read.as_of(T0 + 10 * DAY)
        assert january is not None and believed is not None
        assert (january.value, believed.value) == ("70", "70")

    def test_a_correction_keeps_the_wrong_value_in_the_history(self, facts: FactStore) -> None:
        say(facts, ANA, WEIGHT, "70", T0)
        say(facts, ANA, WEIGHT, "57", T0 + DAY, correction=True)
        assert facts.get(ANA, WEIGHT).value == "57"
        history = facts.history(ANA, WEIGHT)
        assert [(r.change, r.value) for r in history] == [("stated", "70"), ("corrected", "57")]
        believed = FactHistory(history).as_of(T0 + DAY / 2)
        assert believed is not None and believed.value == "70"

    def test_a_confirmation_renews_the_age_and_keeps_the_words(self, facts: FactStore) -> None:
        say(facts, ANA, WEIGHT, "70", T0, words="70 kg")
        head = say(facts, ANA, WEIGHT, "70.0", T0 + 40 * DAY)  # the same value, said again
        assert head.fact is not None
        assert (head.fact.stated_at, head.fact.confirmed_at, head.fact.words) == (
            T0,
            T0 + 40 * DAY,
            "70 kg",
        )
        assert [r.change for r in facts.history(ANA, WEIGHT)] == ["stated", "confirmed"]
        confirmed = plan_confirmation(head, source=API, now=T0 + 50 * DAY)
        assert isinstance(confirmed, FactRevision)
        renewed = facts.append(ANA, confirmed).fact
        assert renewed is not None and renewed.last_seen == T0 + 50 * DAY

    def test_the_stored_head_is_the_fold_of_the_history(self, facts: FactStore) -> None:
        say(facts, ANA, WEIGHT, "70", T0)
        say(facts, ANA, WEIGHT, "68", T0 + 5 * DAY, valid_from=T0 - 30 * DAY)
        say(facts, ANA, WEIGHT, "66", T0 + 9 * DAY, correction=True)
        say(
            facts,
            ANA,
            WEIGHT,
            "80",
            T0 + 9 * DAY,
            valid_from=T0 - 400 * DAY,
            valid_until=T0 - 300 * DAY,
        )
        say(facts, ANA, WEIGHT, "66", T0 + 20 * DAY)
        assert FactHistory(facts.history(ANA, WEIGHT)).head() == facts.head(ANA, WEIGHT)

    def test_a_statement_the_head_cannot_fold_alone_is_folded_with_the_history(
        self, facts: FactStore
    ) -> None:
        # GIVEN Lyon on days 2-3 and Paris on days 4-5, both recorded on day 7 (the head drops
        # Lyon), then a correction: not Paris but Berlin, from day 8 to 10 (so the head keeps
        # no period that has started)
        city = "address.city"

        def day(n: int) -> datetime:
            return T0 + n * DAY

        say(facts, ANA, city, "Lyon", day(7), valid_from=day(2), valid_until=day(3))
        say(facts, ANA, city, "Paris", day(7), valid_from=day(4), valid_until=day(5))
        say(
            facts,
            ANA,
            city,
            "Berlin",
            day(7),
            valid_from=day(8),
            valid_until=day(10),
            correction=True,
        )
        # WHEN Nice, with no period, said on day 1, is recorded on day 7
        plan = plan_statement(
            Statement(key=city, value="Nice", source=API, stated_at=day(1)),
            facts.head(ANA, city), vocabulary=VOCABULARY, now=day(7),
        )  # fmt: skip
        assert isinstance(plan, FactRevision)
        head = facts.append(ANA, plan)
        # THEN Nice held until Lyon started, and the stored head is the history's fold (from
        # the last ended period, Lyon, as a head always keeps)
        timeline = FactHistory(facts.history(ANA, city)).timeline()
        assert [(p.value, p.valid_until) for p in timeline][:2] == [
            ("Nice", day(2)),
            ("Lyon", day(3)),
        ]
        assert head == facts.head(ANA, city) == FactHistory(facts.history(ANA, city)).head()
        assert [p.value for p in head.periods] == ["Lyon", "Berlin"]

    def test_a_planned_change_is_stored_beside_the_value_true_today(self, facts: FactStore) -> None:
        # GIVEN ana lives in Lyon, and ten days later says she moves to Berlin in 60 days
        say(facts, ANA, "address.city", "Lyon", T0)
        say(facts, ANA, "address.city", "Berlin", T0 + 10 * DAY, valid_from=T0 + 60 * DAY)
        # WHEN its head is read back, alone and among every key's
        head = facts.head(ANA, "address.city")
        [listed] = facts.heads(ANA)
        # THEN it is the fold of the history: Berlin the latest period, Lyon kept until the move
        assert head is not None and head == listed
        assert head == FactHistory(facts.history(ANA, "address.city")).head()
        assert [(p.value, p.valid_until) for p in head.periods] == [
            ("Lyon", T0 + 60 * DAY),
            ("Berlin", None),
        ]
        today = head.at(T0 + 20 * DAY)
        assert today is not None and today.value == "Lyon"
        # AND the facts in force are Lyon today and Berlin after the move (the latest: Berlin)
        assert [f.value for f in facts.current(ANA, T0 + 20 * DAY)] == ["Lyon"]
        assert [f.value for f in facts.current(ANA, T0 + 61 * DAY)] == ["Berlin"]
        assert [f.value for f in facts.current(ANA)] == ["Berlin"]
        # AND one key reads the same way
        assert facts.get(ANA, "address.city", T0 + 20 * DAY).value == "Lyon"
        assert facts.get(ANA, "address.city").value == "Berlin"

    # ------------------------------------------------------------------ 2. compare-and-set

    def test_a_stale_seq_conflicts_with_the_stored_head(self, facts: FactStore) -> None:
        stored = facts.append(ANA, revision(0, "70"))
        # WHEN a second writer appends on version 0 too, or on a version not reached
        for seq in (0, 5):
            with pytest.raises(FactConflict) as lost:
                facts.append(ANA, revision(seq, "71", T0 + DAY))
            # THEN it fails carrying the head as stored, and nothing is stored
            assert lost.value.current == stored
        assert len(facts.history(ANA, WEIGHT)) == 1
        assert facts.get(ANA, WEIGHT).value == "70"

    def test_concurrent_appends_on_one_version_let_exactly_one_land(self, facts: FactStore) -> None:
        facts.append(ANA, revision(0, "70"))
        outcomes: list[str] = []
        lock = threading.Lock()

        def append(n: int) -> None:
            try:
                facts.append(ANA, revision(1, str(71 + n), T0 + DAY))
                outcome = "landed"
            except FactConflict:
                outcome = "lost"
            with lock:
                outcomes.append(outcome)

        threads = [threading.Thread(target=append, args=(n,)) for n in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(outcomes) == ["landed"] + ["lost"] * 5
        history = facts.history(ANA, WEIGHT)
        assert len(history) == 2 and facts.get(ANA, WEIGHT).value == history[1].value

    def test_a_revision_that_cannot_apply_stores_nothing(self, facts: FactStore) -> None:
        confirm = FactRevision(
            key=WEIGHT, seq=0, change="confirmed", value="70", source=API,
            confirmed_at=T0, recorded_at=T0,
        )  # fmt: skip
        with pytest.raises(ValueError):  # nothing to confirm
            facts.append(ANA, confirm)
        assert facts.head(ANA, WEIGHT) is None
        facts.append(ANA, revision(0, "70"))
        with pytest.raises(ValueError):  # a confirmation of another value
            facts.append(ANA, confirm.model_copy(update={"seq": 1, "value": "71"}))
        with pytest.raises(ValueError):  # recorded before the head
            facts.append(ANA, revision(1, "72", T0 - DAY))
        assert len(facts.history(ANA, WEIGHT)) == 1

    def test_an_append_past_one_stored_item_is_refused_and_stores_nothing(
        self, facts: FactStore, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # GIVEN a stored fact, and an item limit a 900-character value passes
        facts.append(ANA, revision(0, "70"))
        monkeypatch.setattr(sizes, "ITEM_LIMIT", 1_500)
        # WHEN a revision with such a value is appended
        with pytest.raises(SizeLimit) as refused:
            facts.append(ANA, revision(1, "7" * 900, T0 + DAY))
        # THEN it is refused with its size, and nothing of it is stored
        assert (refused.value.item, refused.value.limit) == ("fact", 1_500)
        assert refused.value.size > 1_800
        assert facts.get(ANA, WEIGHT).value == "70"
        assert len(facts.history(ANA, WEIGHT)) == 1
        # AND a short one lands on the same version
        assert facts.append(ANA, revision(1, "71", T0 + DAY)).version == 2

    # ------------------------------------------------------------------ 7. a replay key once

    def test_a_replay_key_is_applied_once_per_fact_key(self, facts: FactStore) -> None:
        # GIVEN a statement carrying a write's idempotency key, and a later one without
        keyed = Source(kind="api", ref=REPLAY_PREFIX + "post-1")
        facts.append(ANA, revision(0, "70").model_copy(update={"source": keyed}))
        stored = facts.append(ANA, revision(1, "71", T0 + DAY))
        # WHEN a copy of the keyed write is appended on the head as stored
        copy = revision(2, "70", T0 + 2 * DAY).model_copy(update={"source": keyed})
        with pytest.raises(CallRecorded) as refused:
            facts.append(ANA, copy)
        # THEN it is refused as recorded, and nothing is stored
        assert refused.value.call_id == REPLAY_PREFIX + "post-1"
        assert facts.head(ANA, WEIGHT) == stored and len(facts.history(ANA, WEIGHT)) == 2
        # AND the same key is another fact key's, or another principal's, to use
        height = revision(0, "180", key="person.height_cm").model_copy(update={"source": keyed})
        facts.append(ANA, height)
        facts.append(BOB, revision(0, "90").model_copy(update={"source": keyed}))
        # AND a deletion carrying a key is refused the same way when sent again
        gone = plan_deletion(stored, source=keyed, now=T0 + 3 * DAY)
        assert isinstance(gone, FactRevision)
        with pytest.raises(CallRecorded):
            facts.append(ANA, gone)

    # ------------------------------------------------------------------ deleting

    def test_a_deletion_hides_the_fact_and_erases_what_was_said(self, facts: FactStore) -> None:
        say(facts, ANA, WEIGHT, "70", T0, words="70 kg")
        say(facts, ANA, WEIGHT, None, T0 + DAY, words="154 lb")
        say(facts, ANA, "person.height_cm", 173, T0)
        head = facts.head(ANA, WEIGHT)
        deletion = plan_deletion(head, source=API, now=T0 + 2 * DAY)
        assert isinstance(deletion, FactRevision)
        # WHEN ana deletes her weight
        deleted = facts.append(ANA, deletion)
        # THEN recall never sees it: no fact in force, not in the list
        assert (deleted.fact, deleted.version, deleted.erased) == (None, 3, 2)
        with pytest.raises(NotFound):
            facts.get(ANA, WEIGHT)
        assert [fact.key for fact in facts.current(ANA)] == ["person.height_cm"]
        assert [h.key for h in facts.heads(ANA)] == ["person.height_cm", WEIGHT]
        # AND the history keeps each revision's record, with nothing of what was said
        history = facts.history(ANA, WEIGHT)
        assert [(r.seq, r.change, r.erased) for r in history] == [
            (0, "stated", True),
            (1, "stated", True),
            (2, "deleted", False),
        ]
        assert all((r.value, r.words, r.derivation) == (None, None, None) for r in history)
        assert [r.stated_at for r in history[:2]] == [T0, T0 + DAY]
        assert FactHistory(history).head() == deleted
        # AND another key is untouched
        assert facts.history(ANA, "person.height_cm")[0].value == 173

    def test_a_fact_stated_again_after_a_deletion_starts_afresh(self, facts: FactStore) -> None:
        say(facts, ANA, WEIGHT, "70", T0)
        deletion = plan_deletion(facts.head(ANA, WEIGHT), source=API, now=T0 + DAY)
        assert isinstance(deletion, FactRevision)
        facts.append(ANA, deletion)
        head = say(facts, ANA, WEIGHT, "72", T0 + 2 * DAY)
        assert (head.version, head.erased, facts.get(ANA, WEIGHT).value) == (3, 1, "72")
        assert [r.value for r in facts.history(ANA, WEIGHT)] == [None, None, "72"]
        # AND deleting again erases only what came since
        again = plan_deletion(head, source=API, now=T0 + 3 * DAY)
        assert isinstance(again, FactRevision)
        assert facts.append(ANA, again).erased == 3
        history = facts.history(ANA, WEIGHT)
        assert [(r.change, r.erased) for r in history] == [
            ("stated", True),
            ("deleted", True),
            ("stated", True),
            ("deleted", False),
        ]

    def test_a_long_history_is_erased_whole(self, facts: FactStore) -> None:
        head = None
        for n in range(130):  # past what one write can carry in most stores
            head = facts.append(ANA, revision(n, str(60 + n % 7), T0 + n * DAY))
        assert head is not None
        deletion = plan_deletion(head, source=API, now=T0 + 200 * DAY)
        assert isinstance(deletion, FactRevision)
        facts.append(ANA, deletion)
        history = facts.history(ANA, WEIGHT)
        assert len(history) == 131
        assert [r.seq for r in history if r.value is not None or not r.erased] == [130]

    # ------------------------------------------------------------------ principals apart

    def test_another_principals_fact_is_the_same_not_found_as_a_missing_one(
        self, facts: FactStore
    ) -> None:
        say(facts, ANA, WEIGHT, "70")
        with pytest.raises(NotFound) as missing:
            facts.get(ANA, "person.height_cm")
        for other in (BOB, "globex/ana", "ana", "acme/ana/x", "acme"):
            with pytest.raises(NotFound) as theirs:
                facts.get(other, WEIGHT)
            assert type(theirs.value) is type(missing.value)
            assert str(theirs.value) == str(NotFound(f"no fact {WEIGHT!r}"))
            with pytest.raises(NotFound):
                facts.history(other, WEIGHT)
            assert facts.head(other, WEIGHT) is None
            assert (facts.current(other), facts.heads(other), facts.export(other)) == ([], [], [])

    def test_each_principal_has_its_own_history_of_a_key(self, facts: FactStore) -> None:
        say(facts, ANA, WEIGHT, "70")
        bob = say(facts, BOB, WEIGHT, "90")  # bob's first revision: seq 0, not 1
        other_tenant = say(facts, "globex/ana", WEIGHT, "55")
        assert (bob.version, other_tenant.version) == (1, 1)
        assert [f.value for f in facts.current(ANA)] == ["70"]
        assert [f.value for f in facts.current(BOB)] == ["90"]
        deletion = plan_deletion(facts.head(BOB, WEIGHT), source=API, now=T0 + DAY)
        assert isinstance(deletion, FactRevision)
        facts.append(BOB, deletion)
        assert facts.history(ANA, WEIGHT)[0].value == "70"  # bob's deletion erased only his

    def test_principals_cannot_collide_through_separators(self, facts: FactStore) -> None:
        say(facts, "a#b/c", WEIGHT, "70")
        say(facts, "a%23b/c", WEIGHT, "71")
        say(facts, "a/b#H#person.weight_kg", WEIGHT, "72")
        assert facts.get("a#b/c", WEIGHT).value == "70"
        assert facts.get("a%23b/c", WEIGHT).value == "71"
        assert [f.value for f in facts.current("a/b")] == []
        assert facts.current("a") == []

    def test_an_anonymous_caller_has_no_memory(self, facts: FactStore) -> None:
        calls: list[Callable[[], object]] = [
            lambda: facts.head("", WEIGHT),
            lambda: facts.current(""),
            lambda: facts.history("", WEIGHT),
            lambda: facts.export(""),
            lambda: facts.settings(""),
            lambda: facts.put_settings("", MemorySettings(enabled=False)),
            lambda: facts.append("", revision(0, "70")),
        ]
        for call in calls:
            with pytest.raises(ValueError):
                call()

    # ------------------------------------------------------------------ lists and export

    def test_lists_and_exports_are_by_key(self, facts: FactStore) -> None:
        for key, value in (("work.employer", "Acme"), ("address.city", "Lyon")):
            say(facts, ANA, key, value)
        say(facts, ANA, "address.city", "Paris", T0 + DAY)
        assert [f.key for f in facts.current(ANA)] == ["address.city", "work.employer"]
        assert [(r.key, r.seq, r.value) for r in facts.export(ANA)] == [
            ("address.city", 0, "Lyon"),
            ("address.city", 1, "Paris"),
            ("work.employer", 0, "Acme"),
        ]

    # ------------------------------------------------------------------ settings

    def test_settings_are_per_principal_and_default_on(self, facts: FactStore) -> None:
        off = MemorySettings(enabled=False, changed_at=T0)
        facts.put_settings(ANA, off)
        assert facts.settings(ANA) == off
        assert facts.settings(BOB).enabled and facts.settings("globex/ana").enabled
        facts.put_settings(ANA, MemorySettings(enabled=True, changed_at=T0 + DAY))
        assert facts.settings(ANA) == MemorySettings(enabled=True, changed_at=T0 + DAY)
        assert facts.current(ANA) == []  # settings are not facts
