"""Recall into a form: ``form_start`` fills and offers fields that declare fact keys, from the
principal's own facts, by their half-life, re-checked when written, never failing or holding
the call."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from forms import (
    Caller,
    FormDef,
    FormInstance,
    HookContext,
    InstanceState,
    Step,
    field,
)
from forms.app import memory as metrics
from forms.examples import health_check
from forms.examples.travel_claim import travel_claim
from forms.instance import Recollection
from forms.memory import DecayPolicy, RecallField, Vocabulary, plan_recall
from forms.schema import field_type
from tests.support import T0, RacingStore
from tests.unit.memory_for_tests import (
    ALICE,
    BOB,
    BORN,
    DAY,
    RecordingFacts,
    Talk,
    Timer,
    alice_said,
    memory_service,
)


def started(
    facts: RecordingFacts, caller: Caller = ALICE, **options: Any
) -> tuple[Talk, dict[str, Any]]:
    service = memory_service(health_check, facts=facts, **options)
    talk = Talk(service, caller)
    return talk, talk.start("health-check")


def stored(talk: Talk, instance_id: str = "fi_1") -> FormInstance:
    return talk.store.get(instance_id)


# ---------------------------------------------------------------- fill and offer


def test_a_date_of_birth_fills_and_a_recent_weight_is_offered_not_filled() -> None:
    # GIVEN alice's memory holds her date of birth, her height and a weight from 10 days ago
    facts = alice_said(RecordingFacts())
    # WHEN she starts the health check
    talk, result = started(facts)
    # THEN the date of birth and height are answers by memory, with their provenance
    instance = stored(talk)
    born = instance.field("date_of_birth").in_force()
    assert born is not None and (born.value, born.by, born.actor) == (
        BORN,
        "memory",
        "person.date_of_birth",
    )
    assert born.note == "from memory: Date of birth 1990-04-02, said 2024-07-09"
    assert instance.field("height_cm").in_force().value == 173  # type: ignore[union-attr]
    # AND the weight is offered, not written: its log stays empty
    assert instance.field("weight_kg").count == 0
    offer = instance.state.recalled["weight_kg"]
    assert (offer.use, offer.value, offer.shown) == ("offer", "70", "70 kg")
    # AND the result and the status line say so, in memory's words
    assert result["summary"] == (
        "Started Health check-in; filled 2 from memory, unconfirmed (date_of_birth, "
        "height_cm); memory offers 1 to confirm (weight_kg)."
    )
    assert result["status_line"].splitlines()[2:] == [
        "from memory, unconfirmed (resend once confirmed): Date of birth 1990-04-02, said "
        "2024-07-09 · Height 173 cm (derived from “5'8\"”), said 2025-11-21",
        "from memory, confirm: Weight 70 kg, said 2026-02-19",
    ]


def test_no_fact_means_no_value_no_offer_and_no_mark() -> None:
    # GIVEN alice's memory holds her date of birth only (no height, no weight)
    facts = RecordingFacts()
    facts.stated("alice", "person.date_of_birth", BORN, at=T0 - DAY)
    # WHEN she starts the health check
    talk, result = started(facts)
    # THEN height and weight are absent: from the logs, the recollections, the reads
    instance = stored(talk)
    assert "height_cm" not in instance.history and "weight_kg" not in instance.history
    assert set(instance.state.recalled) == {"date_of_birth"}
    rows = {row["id"]: row for row in talk.read("health-check")["fields"]}
    assert "memory" not in rows["height_cm"] and "memory" not in rows["weight_kg"]
    assert "value" not in rows["height_cm"] and "value" not in rows["weight_kg"]
    assert "Height" not in result["status_line"].split("\n", 1)[1]
    assert "weight" not in result["summary"]


def test_a_principal_with_no_facts_gets_a_form_as_it_would_without_memory() -> None:
    # GIVEN no fact at all / WHEN the form starts
    talk, result = started(RecordingFacts())
    # THEN nothing is filled, offered or written beyond the start, and nothing is marked
    assert stored(talk).state.recalled == {}
    assert stored(talk).version == 1
    assert "memory" not in result["summary"] and "memory" not in result["status_line"]


@pytest.mark.parametrize(
    ("key", "field_id", "value", "age", "use"),
    [
        ("person.date_of_birth", "date_of_birth", BORN, 40 * 365 * DAY, "fill"),
        ("person.height_cm", "height_cm", 173, 100 * DAY, "fill"),
        ("person.height_cm", "height_cm", 173, 3 * 365 * DAY, "fill"),
        ("person.height_cm", "height_cm", 173, 4 * 365 * DAY, "offer"),
        ("person.height_cm", "height_cm", 173, 11 * 365 * DAY, None),
        ("person.weight_kg", "weight_kg", "70", DAY, "offer"),
        ("person.weight_kg", "weight_kg", "70", 180 * DAY, "offer"),
        ("person.weight_kg", "weight_kg", "70", 181 * DAY, None),
    ],
)
def test_the_half_life_of_the_key_decides_fill_offer_or_neither(
    key: str, field_id: str, value: Any, age: timedelta, use: str | None
) -> None:
    # GIVEN one fact of some age (the start reads the clock a few seconds after T0)
    facts = RecordingFacts()
    facts.stated("alice", key, value, at=T0 - age + timedelta(seconds=10))
    # WHEN the form starts
    talk, _ = started(facts)
    instance = stored(talk)
    # THEN a fresh slow fact fills, a fast or ageing one is offered, a too-old one is unused
    recalled = instance.state.recalled.get(field_id)
    assert (recalled.use if recalled else None) == use
    assert instance.field(field_id).count == (1 if use == "fill" else 0)


# ---------------------------------------------------------------- precedence, re-check


def test_what_the_starting_call_says_outranks_memory() -> None:
    # GIVEN alice's memory holds all three
    facts = alice_said(RecordingFacts())
    talk = Talk(memory_service(health_check, facts=facts), ALICE)
    # WHEN the start carries her height, and a date of birth the field refuses
    result = talk.call(
        "form_start", form="health-check", values={"height_cm": 180, "date_of_birth": "soon"}
    )
    # THEN her height stands alone in its log, and memory leaves the refused field to her
    instance = stored(talk)
    (height,) = instance.field("height_cm").revisions
    assert (height.value, height.by) == (180, "agent")
    assert instance.field("date_of_birth").count == 0
    assert set(instance.state.recalled) == {"weight_kg"}
    assert result["rejected"][0]["field"] == "date_of_birth"


def test_a_start_with_memory_is_one_write_and_an_answer_after_it_stands_on_top() -> None:
    # GIVEN alice's memory, and her answer to height arriving right after the start's write
    facts = alice_said(RecordingFacts())
    store = RacingStore()
    service = memory_service(health_check, facts=facts, store=store)
    talk = Talk(service, ALICE)
    store.then = lambda: talk.call(
        "form_fill", form="health-check", values={"height_cm": 181}, call_id="user-said"
    )
    # WHEN the form starts
    talk.start("health-check")
    # THEN what memory filled and offered was in the start's one write (memory made no commit
    # of its own), and her answer landed on top of it: the height in force is hers
    instance = stored(talk)
    assert [r.by for r in instance.field("height_cm").revisions] == ["memory", "agent"]
    assert instance.field("height_cm").in_force().value == 181  # type: ignore[union-attr]
    assert instance.field("date_of_birth").in_force().by == "memory"  # type: ignore[union-attr]
    assert instance.state.recalled["weight_kg"].use == "offer"
    assert [c.call is not None for c in store.commits] == [True]  # her fill, nothing else


def test_memory_never_writes_over_a_field_with_anything_in_its_log() -> None:
    # GIVEN an instance whose height was answered and then taken back
    from forms.app.recall import plan_recall_step
    from forms.compiler import compile_form

    facts = alice_said(RecordingFacts())
    talk = Talk(memory_service(health_check, facts=facts, memory=False), ALICE)
    talk.start("health-check", values={"height_cm": 170})
    talk.revise("health-check", field="height_cm", action="retract")
    instance = stored(talk)
    # WHEN recall is planned on it
    step = plan_recall_step(
        compile_form(health_check),
        instance,
        [h.fact for h in facts._read_heads("alice") if h.fact is not None],
        vocabulary=Vocabulary.default(),
        policy=DecayPolicy.default(),
        now=T0 + DAY,
    )
    # THEN the height is left as the user left it; the empty fields are filled and offered
    assert step is not None
    assert "height_cm" not in step.step.commit.fields
    assert (step.filled, step.offered) == (("date_of_birth",), ("weight_kg",))


# ---------------------------------------------------------------- whose memory, and when


def test_another_principals_facts_are_never_used() -> None:
    # GIVEN alice's memory / WHEN bob starts the form in a conversation of the same id
    facts = alice_said(RecordingFacts())
    talk, result = started(facts, caller=BOB)
    # THEN nothing of alice's is filled or offered; only bob's own memory was read
    assert stored(talk).state.recalled == {}
    assert stored(talk).history == {}
    assert facts.requests == ["settings", "heads"]
    assert "memory" not in result["summary"]


def test_memory_off_reads_no_fact_at_all() -> None:
    # GIVEN alice turned memory off
    facts = alice_said(RecordingFacts())
    facts.memory_off("alice")
    counted: list[str] = []
    # WHEN she starts the form
    talk, result = started(facts, counted=counted)
    # THEN the switch was the only request: no fact was read, nothing filled or offered
    assert facts.requests == ["settings"]
    assert stored(talk).state.recalled == {} and stored(talk).history == {}
    assert counted == [metrics.RECALL_OFF]
    assert "memory" not in result["status_line"]


def test_a_deployment_without_memory_never_asks_the_fact_store() -> None:
    facts = alice_said(RecordingFacts())
    talk, _ = started(facts, memory=False)
    talk.fill("health-check", weight_kg=71)
    assert facts.requests == []
    assert stored(talk).state.recalled == {}


@pytest.mark.parametrize(
    "caller", [Caller("alice", "conv-1", source="webhook"), Caller("", "conv-1")]
)
def test_memory_is_only_for_a_verified_agents_conversation(caller: Caller) -> None:
    # GIVEN alice's memory / WHEN a webhook (or an anonymous caller) starts the form
    facts = alice_said(RecordingFacts())
    talk, _ = started(facts, caller=caller)
    # THEN no fact is read
    assert facts.requests == []
    assert stored(talk).state.recalled == {}


def test_a_form_without_fact_keys_asks_nothing_of_memory() -> None:
    facts = alice_said(RecordingFacts())
    service = memory_service(travel_claim, facts=facts)
    Talk(service, ALICE).start("travel-claim", values={"full_name": "Alice Liddell"})
    assert facts.requests == []


def test_fact_store_requests_per_start() -> None:
    # GIVEN memory on (three facts), on with nothing to recall, and off
    on = alice_said(RecordingFacts())
    empty = RecordingFacts()
    off = alice_said(RecordingFacts())
    off.memory_off("alice")
    commits, recalled = {}, {}
    for name, facts in (("on", on), ("empty", empty), ("off", off)):
        store = RacingStore()
        talk, _ = started(facts, store=store)
        commits[name], recalled[name] = len(store.commits), bool(stored(talk).state.recalled)
    # WHEN a form starts / THEN memory costs the switch and one listing of heads, and no
    # write of its own: what it fills and offers is in the start's one write
    assert on.requests == ["settings", "heads"] and recalled["on"]
    assert empty.requests == ["settings", "heads"] and not recalled["empty"]
    assert off.requests == ["settings"] and not recalled["off"]
    assert commits == {"on": 0, "empty": 0, "off": 0}


# ---------------------------------------------------------------- never throw, never block


def test_a_failing_fact_store_opens_the_form_without_memory() -> None:
    # GIVEN a fact store that fails every request
    facts = alice_said(RecordingFacts())
    facts.fail = True
    counted: list[str] = []
    # WHEN alice starts the form
    talk, result = started(facts, counted=counted)
    # THEN it opens as it would without memory, and the failure is counted, not shown
    assert result["ok"] is True and "error" not in result and "memory" not in result["summary"]
    assert stored(talk).history == {}
    assert counted == [metrics.RECALL_FAILED]


def test_a_slow_fact_store_is_dropped_at_the_deadline() -> None:
    # GIVEN a fact store that takes a second per request (on the memory's timer)
    facts = alice_said(RecordingFacts())
    timer = Timer()
    facts.on_request = lambda name: timer.advance(1.0)
    counted: list[str] = []
    # WHEN alice starts the form (deadline 200 ms)
    talk, result = started(facts, timer=timer, counted=counted)
    # THEN what came back late is not used at the start: the form is as started, the recall
    # is owed to the next call, and the miss is counted
    assert facts.requests == ["settings", "heads"]
    assert stored(talk).history == {} and stored(talk).state.recalled == {}
    assert stored(talk).state.recall_owed is not None
    assert result["ok"] is True and "memory" not in result["summary"]
    assert counted == [metrics.RECALL_TIMEOUT, metrics.RECALL_OWED]


def test_a_fact_store_that_never_answers_does_not_hold_the_start() -> None:
    # GIVEN a fact store whose listing of facts blocks until the test releases it
    facts = alice_said(RecordingFacts())
    asked, release = facts.stall_listing()
    counted: list[str] = []
    pool = ThreadPoolExecutor(max_workers=1)
    try:
        # WHEN alice starts the form, the read on a thread of its own (deadline 50 ms)
        talk, result = started(
            facts,
            timer=time.monotonic,
            executor=pool,
            deadline=timedelta(milliseconds=50),
            counted=counted,
        )
        # THEN the start answered while the store was still being asked, without memory
        assert asked.is_set() and not release.is_set()
        assert result["ok"] is True and stored(talk).state.recalled == {}
        assert counted == [metrics.RECALL_TIMEOUT, metrics.RECALL_OWED]
    finally:
        release.set()
        pool.shutdown(wait=True)
    # AND the late answer changed nothing by itself: it waits for the next call
    assert stored(talk).state.recalled == {} and stored(talk).history == {}


# ---------------------------------------------------------------- marks, hooks, storage


def test_a_derived_value_shows_the_words_it_was_read_from() -> None:
    talk, _ = started(alice_said(RecordingFacts()))
    rows = {row["id"]: row for row in talk.read("health-check")["fields"]}
    assert rows["height_cm"]["memory"] == (
        "from memory, derived from “5'8\"”, said 2025-11-21; unconfirmed"
    )
    assert rows["date_of_birth"]["memory"] == "from memory, said 2024-07-09; unconfirmed"
    assert rows["weight_kg"]["memory"] == (
        "offered from memory: 70 kg, said 2026-02-19; ask to confirm"
    )
    assert "value" not in rows["weight_kg"]
    history = talk.read("health-check", part="height_cm")
    assert history["revisions"][0]["by"] == "memory"
    assert "derived from “5'8\"”" in history["revisions"][0]["note"]


def test_the_status_line_says_what_memorys_own_notes_say() -> None:
    # GIVEN the offer memory's planner makes of alice's weight
    facts = alice_said(RecordingFacts())
    weight = field_type(Decimal)
    plan = plan_recall(
        [RecallField("weight_kg", "person.weight_kg", weight, "Weight")],
        [h.fact for h in facts._read_heads("alice") if h.fact is not None],
        vocabulary=Vocabulary.default(),
        policy=DecayPolicy.default(),
        now=T0,
    )
    # WHEN the form starts / THEN its status line carries that very note
    _, result = started(facts)
    assert plan.offers["weight_kg"].note() in result["status_line"]


fired: list[str] = []


def born_filled(ctx: HookContext) -> None:
    fired.append(ctx.key)


class Person(Step, title="Person"):
    born: date = field("Date of birth", memory="person.date_of_birth", on_fill=born_filled)
    nickname: str | None = field("Nickname")


person = FormDef(id="person", version=1, title="Person", steps=[Person])


def test_a_value_memory_fills_fires_its_hook_like_any_answer() -> None:
    # GIVEN a date of birth field with an on-fill executor
    facts = alice_said(RecordingFacts())
    fired.clear()
    # WHEN memory fills it at the start
    result = Talk(memory_service(person, facts=facts), ALICE).start("person")
    # THEN its rising edge fired, and the executor ran once
    assert result["fired"] == ["fi_1:field.born.filled:1"]
    assert fired == ["fi_1:field.born.filled:1"]


def test_what_memory_did_is_stored_as_json_and_older_records_still_read() -> None:
    # GIVEN an instance memory filled and offered
    talk, _ = started(alice_said(RecordingFacts()))
    instance = stored(talk)
    # WHEN it is written as JSON and read back / THEN the recollections come back whole
    again = FormInstance.model_validate_json(instance.model_dump_json())
    assert again.state.recalled == instance.state.recalled
    assert isinstance(again.state.recalled["height_cm"], Recollection)
    assert again.state.recalled["height_cm"].derived_from == "5'8\""
    # AND a state stored before memory existed reads as one with nothing recalled
    older = InstanceState.model_validate({"updated_at": datetime(2025, 1, 1).isoformat()})
    assert older.recalled == {}


def test_an_executor_that_takes_no_work_leaves_memory_out_not_the_call() -> None:
    # GIVEN memory whose executor was shut down
    facts = alice_said(RecordingFacts())
    pool = ThreadPoolExecutor(max_workers=1)
    pool.shutdown()
    counted: list[str] = []
    talk, result = started(facts, executor=pool, counted=counted)
    # WHEN alice starts the form and answers a mapped field
    answered = talk.fill("health-check", weight_kg=70)
    # THEN both calls land without memory, and both misses are counted
    assert result["ok"] is True and answered["ok"] is True
    assert facts.requests == [] and stored(talk).state.recalled == {}
    assert counted == [metrics.RECALL_FAILED, metrics.RECORD_FAILED]
