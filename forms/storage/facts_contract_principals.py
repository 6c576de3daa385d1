"""The fact store's contract on what is a principal's own: deleting erases what was said,
principals never see one another's facts, and lists, exports and settings are per principal.

Part of ``FactStoreContract`` (``forms.storage.facts_contract``), which runs it on every
adapter.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from forms.errors import NotFound
from forms.memory import (
    FactHistory,
    FactRevision,
    MemorySettings,
    plan_deletion,
)
from forms.storage.facts import FactStore
from forms.storage.facts_contract_builders import (
    ANA,
    API,
    BOB,
    DAY,
    T0,
    WEIGHT,
    revision,
    say,
)


class FactPrincipalContract:
    """Deletion, principals apart, lists and settings: what every adapter must keep.

    Mixed into ``FactStoreContract``, whose ``facts`` fixture each test takes.
    """

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
