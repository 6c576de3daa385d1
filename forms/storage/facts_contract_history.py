"""The fact store's contract on reading and on history: what was said reads back, and the
history only grows, its stored head always the fold of it.

Part of ``FactStoreContract`` (``forms.storage.facts_contract``), which runs it on every
adapter.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from forms.errors import NotFound
from forms.memory import (
    FactHistory,
    FactRevision,
    MemorySettings,
    Statement,
    plan_confirmation,
    plan_statement,
)
from forms.storage.facts import FactStore
from forms.storage.facts_contract_builders import (
    ANA,
    API,
    DAY,
    T0,
    VOCABULARY,
    WEIGHT,
    say,
)


class FactHistoryContract:
    """Reading a fact and growing its history: what every adapter must keep.

    Mixed into ``FactStoreContract``, whose ``facts`` fixture each test takes.
    """

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
