"""A recall that comes after ``form_start``'s deadline is owed, never thrown away: the next
call of the conversation on the instance delivers it, as offers only (never fills: the user
may have answered in between), and says so in its result. The debt is on the instance, so a
next call in another process reads memory again."""

from __future__ import annotations

import itertools
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

from forms.app import memory as metrics
from forms.examples import health_check
from forms.instance import FormInstance
from forms.storage.memory import InMemoryFormStore
from tests.unit.memory_for_tests import (
    ALICE,
    BORN,
    RecordingFacts,
    Talk,
    Timer,
    alice_said,
    memory_service,
)

MEMORY_FIELDS = ["date_of_birth", "height_cm", "weight_kg"]


def late_start(
    facts: RecordingFacts,
    counted: list[str],
    store: InMemoryFormStore | None = None,
    **payload: Any,
) -> tuple[Talk, dict[str, Any]]:
    """Alice starts the health check while the fact store takes a second a request (deadline
    200 ms): the read finishes, late."""
    timer = Timer()
    facts.on_request = lambda name: timer.advance(1.0)
    service = memory_service(
        health_check, facts=facts, timer=timer, counted=counted, store=store or InMemoryFormStore()
    )
    talk = Talk(service, ALICE)
    return talk, talk.start("health-check", **payload)


def elsewhere(facts: RecordingFacts, store: InMemoryFormStore, **options: Any) -> Talk:
    """Alice's next calls, served by another process: a new service and memory on the same
    stores (so no read of the start is held there), its call ids after the start's."""
    talk = Talk(memory_service(health_check, facts=facts, store=store, **options), ALICE)
    talk._ids = itertools.count(100)
    return talk


def stored(talk: Talk) -> FormInstance:
    return talk.store.get("fi_1")


def by_memory(instance: FormInstance) -> list[str]:
    """The fields with a revision memory wrote."""
    return [
        f for f, log in instance.history.items() if any(r.by == "memory" for r in log.revisions)
    ]


def offers(instance: FormInstance) -> dict[str, Any]:
    return {f: r.value for f, r in instance.state.recalled.items() if r.use == "offer"}


def test_a_late_recall_lands_at_the_next_call_as_offers_and_the_result_says_so() -> None:
    # GIVEN a start whose read came late: nothing recalled, the recall owed
    facts = alice_said(RecordingFacts())
    counted: list[str] = []
    talk, started = late_start(facts, counted)
    assert started["summary"] == "Started Health check-in." and stored(talk).state.recalled == {}
    assert stored(talk).state.recall_owed is not None
    assert facts.requests == ["settings", "heads"]
    # WHEN the agent's next call on the form saves an answer to another field
    result = talk.fill("health-check", feeling="good")
    # THEN every value memory has is offered, even those it would have filled at the start,
    # and none is written into the form
    instance = stored(talk)
    assert offers(instance) == {"date_of_birth": BORN, "height_cm": 173, "weight_kg": "70"}
    assert by_memory(instance) == []
    assert instance.state.recall_owed is None
    # AND the call's result says so, in its summary, a list and the status line
    assert result["offered_late"] == MEMORY_FIELDS
    assert "memory answered late and offers 3 to confirm" in result["summary"]
    assert "from memory, confirm: Date of birth 1990-04-02" in result["status_line"]
    # AND the read the start left running in this process was used: no second read
    assert facts.requests == ["settings", "heads"]
    assert counted == [
        metrics.RECALL_TIMEOUT,
        metrics.RECALL_OWED,
        metrics.RECALL_DELIVERED,
        metrics.OFFERED,
        metrics.OFFERED,
        metrics.OFFERED,
    ]
    # AND a later call delivers nothing more
    again = talk.fill("health-check", concern="a cough")
    assert "offered_late" not in again and "memory answered late" not in again["summary"]


def test_an_answer_given_in_between_is_never_offered_over() -> None:
    # GIVEN a late start
    facts = alice_said(RecordingFacts())
    talk, _ = late_start(facts, [])
    # WHEN the next call answers the date of birth with another value
    result = talk.fill("health-check", date_of_birth="1991-01-01")
    # THEN the user's answer stands, unmarked; only the fields still empty are offered
    instance = stored(talk)
    assert instance.field("date_of_birth").in_force().value == "1991-01-01"  # type: ignore[union-attr]
    assert offers(instance) == {"height_cm": 173, "weight_kg": "70"}
    assert result["offered_late"] == ["height_cm", "weight_kg"]
    assert by_memory(instance) == []


def test_a_field_the_start_named_is_left_to_it() -> None:
    # GIVEN a late start that named the weight with a value the field refused
    facts = alice_said(RecordingFacts())
    talk, started = late_start(facts, [], values={"weight_kg": "heavy"})
    assert [r["field"] for r in started["rejected"]] == ["weight_kg"]
    # WHEN the next call comes / THEN memory does not offer the weight the call spoke for
    result = talk.fill("health-check", feeling="okay")
    assert result["offered_late"] == ["date_of_birth", "height_cm"]


def test_a_next_call_in_another_process_reads_memory_again() -> None:
    # GIVEN a late start, and the next call served by another process (a new service and
    # memory on the same stores, which holds no read of this start)
    facts = alice_said(RecordingFacts())
    store = InMemoryFormStore()
    late_start(facts, [], store=store)
    facts.on_request = None
    counted: list[str] = []
    other = elsewhere(facts, store, counted=counted)
    facts.requests.clear()
    # WHEN the agent's next call comes there
    result = other.fill("health-check", feeling="good")
    # THEN that call read memory itself (the switch first) and delivered it as offers
    assert facts.requests[:2] == ["settings", "heads"]
    assert result["offered_late"] == MEMORY_FIELDS
    assert by_memory(other.store.get("fi_1")) == []
    assert counted[:2] == [metrics.RECALL_DELIVERED, metrics.OFFERED]


def test_a_read_late_again_stays_owed_and_the_call_after_delivers_it() -> None:
    # GIVEN a late start, and the next calls served elsewhere, on a fact store whose listing
    # now blocks until released (read on a thread of its own, deadline 50 ms, real clock)
    facts = alice_said(RecordingFacts())
    store = InMemoryFormStore()
    late_start(facts, [], store=store)
    _, release = facts.stall_listing()
    facts.requests.clear()
    with ThreadPoolExecutor(max_workers=1) as pool:
        other = elsewhere(
            facts, store, timer=time.monotonic, executor=pool, deadline=timedelta(milliseconds=50)
        )
        # WHEN that call's read is late too
        first = other.fill("health-check", feeling="good")
        # THEN it answers without memory, and the recall is still owed
        assert first["ok"] and "offered_late" not in first
        assert other.store.get("fi_1").state.recall_owed is not None
        # WHEN the store answers, the read ends, and the next call comes
        release.set()
        assert other.service.memory is not None
        assert other.service.memory.behind.settle(timeout=30) == 0
        second = other.fill("health-check", concern="a cough")
    # THEN it delivers what that read found, without reading again
    assert second["offered_late"] == MEMORY_FIELDS
    assert facts.requests == ["settings", "heads"]


def test_memory_turned_off_in_between_clears_the_debt_and_offers_nothing() -> None:
    # GIVEN a late start, then alice turns memory off; the next call is served elsewhere
    facts = alice_said(RecordingFacts())
    store = InMemoryFormStore()
    late_start(facts, [], store=store)
    facts.on_request = None
    facts.memory_off("alice")
    other = elsewhere(facts, store)
    facts.requests.clear()
    # WHEN the next call comes
    result = other.fill("health-check", feeling="good")
    # THEN only the switch was read, nothing is offered, and nothing is owed any more
    assert facts.requests == ["settings"]
    assert "offered_late" not in result
    instance = other.store.get("fi_1")
    assert instance.state.recall_owed is None and instance.state.recalled == {}


def test_a_refused_call_leaves_the_recall_for_the_next() -> None:
    # GIVEN a late start
    facts = alice_said(RecordingFacts())
    talk, _ = late_start(facts, [])
    # WHEN the next call is refused (an undo with nothing to undo)
    refused = talk.revise("health-check", field="feeling", action="undo")
    assert refused["ok"] is False and refused["error"] == "cannot_revise"
    # THEN the recall is still owed, and the call after delivers it from the same read
    assert stored(talk).state.recall_owed is not None
    result = talk.fill("health-check", feeling="good")
    assert result["offered_late"] == MEMORY_FIELDS
    assert facts.requests == ["settings", "heads"]


def test_a_read_still_running_after_the_start_is_delivered_when_it_ends() -> None:
    # GIVEN a fact store whose listing blocks until released, read on a thread of its own
    # (deadline 50 ms on the real clock): the start answers while it is still running
    facts = alice_said(RecordingFacts())
    asked, release = facts.stall_listing()
    with ThreadPoolExecutor(max_workers=1) as pool:
        service = memory_service(
            health_check,
            facts=facts,
            timer=time.monotonic,
            executor=pool,
            deadline=timedelta(milliseconds=50),
        )
        talk = Talk(service, ALICE)
        talk.start("health-check")
        assert asked.is_set() and stored(talk).state.recall_owed is not None
        # WHEN the store answers, the read ends, and then the next call comes
        release.set()
        assert service.memory is not None and service.memory.behind.settle(timeout=30) == 0
        result = talk.fill("health-check", feeling="good")
    # THEN the read that ended after the start is what the next call delivers, as offers,
    # with no read of its own
    assert result["offered_late"] == MEMORY_FIELDS
    assert facts.requests == ["settings", "heads"]
    assert by_memory(stored(talk)) == []


def test_a_read_delivers_it_too_and_says_so() -> None:
    # GIVEN a late start
    facts = alice_said(RecordingFacts())
    talk, _ = late_start(facts, [])
    # WHEN the agent's next call reads the form
    result = talk.read("health-check")
    # THEN the offers are there, in the result, the field rows and the status line
    assert result["offered_late"] == MEMORY_FIELDS
    assert "memory answered late and offers 3 to confirm" in result["summary"]
    rows = {row["id"]: row for row in result["fields"]}
    assert (
        rows["weight_kg"]["memory"] == "offered from memory: 70 kg, said 2026-02-19; ask to confirm"
    )
    assert "from memory, confirm: Date of birth 1990-04-02" in result["status_line"]
    assert "Weight 70 kg, said 2026-02-19" in result["status_line"]
    assert by_memory(stored(talk)) == [] and stored(talk).state.recall_owed is None
    # AND reading again says nothing more
    assert "offered_late" not in talk.read("health-check")


def test_a_read_still_running_at_the_next_call_is_replaced_by_a_fresh_one() -> None:
    # GIVEN a start whose read is stuck (the listing blocks), on a thread of its own
    facts = alice_said(RecordingFacts())
    asked, release = facts.stall_listing()
    with ThreadPoolExecutor(max_workers=2) as pool:
        service = memory_service(
            health_check,
            facts=facts,
            timer=time.monotonic,
            executor=pool,
            deadline=timedelta(milliseconds=50),
        )
        talk = Talk(service, ALICE)
        talk.start("health-check")
        assert asked.is_set()
        # WHEN the store recovers for new requests while that read is still stuck, and the
        # next call comes
        facts.on_request = None
        result = talk.fill("health-check", feeling="good")
        release.set()
    # THEN the next call read afresh and delivered what it found
    assert result["offered_late"] == MEMORY_FIELDS
    assert facts.requests == ["settings", "heads", "settings", "heads"]
