"""The fact store's contract on a write: compare-and-set on the head's version, nothing stored
of a write that cannot apply, and a replay key applied once.

Part of ``FactStoreContract`` (``forms.storage.facts_contract``), which runs it on every
adapter.
"""

from __future__ import annotations

import pytest

from forms.errors import CallRecorded, SizeLimit
from forms.memory import (
    FactConflict,
    FactRevision,
    Source,
    plan_deletion,
)
from forms.storage import sizes
from forms.storage.facts import REPLAY_PREFIX, FactStore
from forms.storage.facts_contract_builders import (
    ANA,
    API,
    BOB,
    DAY,
    T0,
    WEIGHT,
    revision,
)
from forms.storage.races import landed


class FactWriteContract:
    """One write at a time, once: what every adapter must keep.

    Mixed into ``FactStoreContract``, whose ``facts`` fixture each test takes.
    """

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

        def append(n: int) -> None:
            facts.append(ANA, revision(1, str(71 + n), T0 + DAY))

        assert len(landed(6, append, FactConflict)) == 1
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
