"""Memory's use cases in the application layer (``forms.app.memory_api.MemoryApi``): what the
``/memory`` routes, the fact editor page and the demo call. Here: the idempotency key a page
post carries (kept in the revision's source, in the same write), a resent write applied once,
two copies of one write racing each other applied once, and the refusals as data.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from forms.app.memory_api import REPLAY_PREFIX, FactRefused, MemoryApi
from forms.memory import DecayPolicy, FactHead, FactRevision, MemorySettings, Vocabulary
from forms.storage.facts import InMemoryFactStore
from tests.support import memory_api_for

ALICE, BOB = "acme/alice", "acme/bob"
T0 = datetime(2026, 9, 3, 10, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def api(facts: InMemoryFactStore | None = None, *, deployment: bool = True) -> MemoryApi:
    return memory_api_for(
        facts or InMemoryFactStore(),
        Vocabulary.default(),
        DecayPolicy.default(),
        deployment,
        Clock(),
    )


def test_a_write_with_an_idempotency_key_keeps_it_and_applies_once() -> None:
    memory = api()
    memory.state(ALICE, "person.weight_kg", words="70 kg")
    first = memory.correct(ALICE, "person.weight_kg", "72 kg", replay="nonce-1")
    assert first is not None and first.revision.source.ref == REPLAY_PREFIX + "nonce-1"
    # the same write again: nothing applied
    assert memory.correct(ALICE, "person.weight_kg", "72 kg", replay="nonce-1") is None
    # even after another write moved the key on
    memory.state(ALICE, "person.weight_kg", value=75)
    assert memory.correct(ALICE, "person.weight_kg", "72 kg", replay="nonce-1") is None
    assert [r.change for r in memory.facts.history(ALICE, "person.weight_kg")] == [
        "stated",
        "corrected",
        "stated",
    ]
    # a key is per principal: bob's writes never see alice's
    memory.state(BOB, "person.weight_kg", words="90 kg")
    assert memory.delete(BOB, "person.weight_kg", replay="nonce-1") is not None


class RacingCopy(InMemoryFactStore):
    """A store where another copy of the same write lands first: the first append stores
    that copy, then loses its own compare-and-set."""

    def __init__(self) -> None:
        super().__init__()
        self.raced = False

    def append(self, principal: str, revision: FactRevision) -> FactHead:
        if revision.source.ref is not None and not self.raced:
            self.raced = True
            super().append(principal, revision)  # the copy lands first
            return super().append(principal, revision)  # ours: FactConflict, with its head
        return super().append(principal, revision)


def test_two_copies_of_a_write_racing_each_other_apply_once() -> None:
    facts = RacingCopy()
    memory = api(facts)
    memory.state(ALICE, "person.weight_kg", words="70 kg")
    # WHEN a correction loses its race to a copy of itself
    assert memory.correct(ALICE, "person.weight_kg", "72 kg", replay="nonce-2") is None
    # THEN one correction is stored, not two
    assert facts.raced
    changes = [r.change for r in facts.history(ALICE, "person.weight_kg")]
    assert changes == ["stated", "corrected"]


def test_refusals_are_data_and_write_nothing() -> None:
    memory = api()
    with pytest.raises(FactRefused) as unknown:
        memory.state(ALICE, "person.weigth_kg", words="70 kg")
    assert unknown.value.code == "unknown_fact_key"
    assert "person.weight_kg" in unknown.value.did_you_mean
    with pytest.raises(FactRefused) as malformed:
        memory.delete(ALICE, "Person.Weight")
    assert malformed.value.code == "bad_request"
    with pytest.raises(FactRefused) as missing:
        memory.delete(ALICE, "person.weight_kg")
    assert missing.value.code == "no_fact"
    memory.facts.put_settings(ALICE, MemorySettings(enabled=False, changed_at=T0))
    with pytest.raises(FactRefused) as off:
        memory.correct(ALICE, "person.weight_kg", "72 kg", replay="nonce-3")
    assert off.value.code == "memory_off"
    with pytest.raises(FactRefused) as deployment_off:
        api(deployment=False).state(BOB, "person.weight_kg", value=70)
    assert deployment_off.value.code == "memory_off"
    assert memory.facts.export(ALICE) == []


def test_a_correction_reads_words_when_a_rule_does_else_the_value() -> None:
    memory = api()
    memory.state(ALICE, "person.height_cm", value=170)
    worded = memory.correct(ALICE, "person.height_cm", "5'8\"", replay="n-4")
    assert worded is not None and worded.revision.words == "5'8\""
    assert worded.revision.value == 173
    plain = memory.correct(ALICE, "person.height_cm", "174", replay="n-5")
    assert plain is not None and plain.revision.value == 174
