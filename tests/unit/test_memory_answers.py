"""What answers do to memory: confirming what it filled or offered, stating new facts, and
clearing everything it filled in one reversible call; and memory's one write loop, which
records them (and serves the memory API), on a key other writers keep moving."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from decimal import Decimal
from typing import Annotated, Any

import pytest
from pydantic import Field

from forms import Caller, FormDef, FormInstance, InstanceState, Step, field
from forms.app import memory as metrics
from forms.app.behind import Behind
from forms.app.facts import Written, write_fact
from forms.app.remember import RECORD_ATTEMPTS, answers_to_remember
from forms.compiler import compile_form
from forms.errors import TooManyConflicts
from forms.examples import health_check
from forms.instance import FieldChange, Revision
from forms.memory import (
    FactHead,
    FactRevision,
    Refusal,
    Source,
    Statement,
    Vocabulary,
    plan_statement,
)
from tests.support import T0
from tests.unit.memory_for_tests import (
    ALICE,
    BORN,
    DAY,
    RecordingFacts,
    Talk,
    alice_said,
    memory_service,
)


def talk_with(facts: RecordingFacts, *forms: FormDef, **options: Any) -> Talk:
    return Talk(memory_service(*(forms or (health_check,)), facts=facts, **options), ALICE)


def memory_lines(result: dict[str, Any]) -> list[str]:
    return [line for line in result["status_line"].splitlines() if "memory" in line]


# ---------------------------------------------------------------- confirming


def test_sending_a_filled_value_again_confirms_it_and_the_fact() -> None:
    # GIVEN a health check memory filled
    facts = alice_said(RecordingFacts())
    talk = talk_with(facts)
    talk.start("health-check")
    # WHEN the user confirms the date of birth and the agent sends it again
    result = talk.fill("health-check", date_of_birth=BORN)
    # THEN the answer is the user's now (appended by the agent), and no longer marked
    log = talk.store.get("fi_1").field("date_of_birth")
    assert [(r.value, r.by) for r in log.revisions] == [(BORN, "memory"), (BORN, "agent")]
    assert result["confirmed"] == ["date_of_birth"]
    assert "confirmed 1 from memory" in result["summary"]
    assert not any("Date of birth" in line for line in memory_lines(result))
    # AND the fact is confirmed at the time of the answer: its age starts again
    head = facts.head_of("alice", "person.date_of_birth")
    assert head is not None and head.fact is not None
    assert head.fact.confirmed_at == log.in_force().at  # type: ignore[union-attr]
    assert head.fact.stated_at == T0 - 600 * DAY
    assert facts.export("alice")[1].change == "confirmed"


def test_answering_an_offer_with_its_value_confirms_the_fact() -> None:
    # GIVEN the weight memory offered (70 kg)
    facts = alice_said(RecordingFacts())
    talk = talk_with(facts)
    talk.start("health-check")
    # WHEN the user says it is still right and the agent fills it
    result = talk.fill("health-check", weight_kg=70)
    # THEN the offer is gone and the fact is confirmed, not stated again
    assert not any("Weight" in line for line in memory_lines(result))
    weight = [r for r in facts.export("alice") if r.key == "person.weight_kg"]
    assert [r.change for r in weight] == ["stated", "confirmed"]
    assert weight[1].source == Source(kind="conversation", ref="conv-1")


def test_a_different_answer_is_a_new_statement_and_the_old_value_is_kept() -> None:
    # GIVEN the weight memory offered (70 kg)
    facts = alice_said(RecordingFacts())
    talk = talk_with(facts)
    talk.start("health-check")
    # WHEN the user gives another weight
    talk.fill("health-check", weight_kg="72.5")
    # THEN memory holds 72.5 from now, and 70 stays in the history, its period closed
    head = facts.head_of("alice", "person.weight_kg")
    assert head is not None and head.fact is not None and head.fact.value == "72.5"
    old, new = [r for r in facts.export("alice") if r.key == "person.weight_kg"]
    assert (old.value, new.change, new.value) == ("70", "stated", "72.5")
    assert new.stated_at == talk.store.get("fi_1").field("weight_kg").in_force().at  # type: ignore[union-attr]


def test_what_alice_says_in_one_form_fills_and_offers_in_the_next() -> None:
    # GIVEN alice, with nothing in memory, gives her date of birth and weight in one form
    facts = RecordingFacts()
    service = memory_service(health_check, facts=facts)
    first = Talk(service, ALICE)
    first.start("health-check", values={"date_of_birth": BORN, "weight_kg": 70})
    # WHEN she starts the health check again in a later conversation
    later = Talk(service, Caller("alice", "conv-2"))
    result = later.start("health-check")
    # THEN the date of birth is filled (marked), the weight offered, the height left empty
    assert result["summary"].endswith(
        "filled 1 from memory, unconfirmed (date_of_birth); memory offers 1 to confirm (weight_kg)."
    )
    assert later.store.get("fi_2").field("height_cm").count == 0


# ---------------------------------------------------------------- when nothing is recorded


def test_memory_off_records_no_answer() -> None:
    # GIVEN alice turned memory off
    facts = RecordingFacts()
    facts.memory_off("alice")
    talk = talk_with(facts)
    # WHEN she answers mapped fields, at the start and after it
    talk.start("health-check", values={"date_of_birth": BORN})
    talk.fill("health-check", weight_kg=70)
    # THEN the switch is all that was read, and no fact was written
    assert facts.requests == ["settings", "settings"]
    assert facts.export("alice") == []


def test_a_value_the_key_refuses_is_not_recorded_and_the_answer_stands() -> None:
    # GIVEN a form whose weight field takes more than memory's key does (up to 700 kg)
    class Load(Step, title="Load"):
        weight: Annotated[Decimal, Field(gt=0, le=1000)] = field(
            "Weight (kg)", memory="person.weight_kg"
        )

    freight = FormDef(id="freight", version=1, title="Freight", steps=[Load])
    facts = RecordingFacts()
    counted: list[str] = []
    talk = talk_with(facts, freight, counted=counted)
    # WHEN the answer is 800 kg
    talk.start("freight", values={"weight": 800})
    # THEN it is saved in the form, refused by memory (counted), and no fact is written
    assert talk.store.get("fi_1").field("weight").in_force().value == "800"  # type: ignore[union-attr]
    assert metrics.REFUSED in counted
    assert facts.export("alice") == []


def test_answers_the_agent_did_not_write_are_not_the_user_stating_facts() -> None:
    # GIVEN a change writing date of birth by an executor and height by the agent
    form = compile_form(health_check)
    before = FormInstance(
        id="fi_1",
        form_id="health-check",
        form_version=1,
        principal="alice",
        conversation_id="conv-1",
        created_at=T0,
        state=InstanceState(updated_at=T0),
    )

    def change(value: Any, by: Any) -> FieldChange:
        return FieldChange(append=(Revision(kind="value", value=value, by=by, at=T0),), cursor=0)

    changes = {"date_of_birth": change(BORN, "executor"), "height_cm": change(170, "agent")}
    # WHEN the answers to remember are read / THEN only the agent's is
    (answer,) = answers_to_remember(form, before, changes)
    assert (answer.field_id, answer.key, answer.value) == ("height_cm", "person.height_cm", 170)


def test_a_failing_fact_store_never_fails_the_answer() -> None:
    # GIVEN a fact store that fails every request
    facts = RecordingFacts()
    facts.fail = True
    counted: list[str] = []
    talk = talk_with(facts, counted=counted)
    talk.start("health-check")
    # WHEN alice answers a mapped field
    result = talk.fill("health-check", weight_kg=70)
    # THEN the answer is saved, the call succeeds, and the failure is counted only
    assert result["ok"] is True and "error" not in result
    assert talk.store.get("fi_1").field("weight_kg").count == 1
    assert counted == [metrics.RECALL_FAILED, metrics.RECORD_FAILED]


def test_remembering_an_answer_never_holds_the_answer() -> None:
    # GIVEN memory on its own worker threads with an hour's deadline, and a fact store that
    # blocks every request after the start until the test releases it
    facts = RecordingFacts()
    behind = Behind()
    with ThreadPoolExecutor(max_workers=2) as executor:
        talk = talk_with(facts, executor=executor, behind=behind, deadline=timedelta(hours=1))
        talk.start("health-check")
        behind.settle(timeout=30)
        released = threading.Event()

        def held(name: str) -> None:
            released.wait(timeout=10)

        facts.on_request = held
        # WHEN alice answers a field mapped to memory
        result = talk.fill("health-check", weight_kg=70)
        # THEN the answer is saved and the call has answered while the store is still held
        assert result["ok"] is True and "error" not in result
        assert talk.store.get("fi_1").field("weight_kg").count == 1
        assert not released.is_set() and behind.running() == 1
        assert facts.head_of("alice", "person.weight_kg") is None
        # WHEN the store is released / THEN the fact is recorded behind the answer
        released.set()
        assert behind.settle(timeout=30) == 0
    head = facts.head_of("alice", "person.weight_kg")
    assert head is not None and head.fact is not None and head.fact.value == "70"


# ---------------------------------------------------------------- clearing


def test_one_call_clears_every_unconfirmed_fill_and_undo_brings_each_back() -> None:
    # GIVEN a health check memory filled (date of birth, height) and offered (weight), the
    # date of birth then confirmed by the user
    facts = alice_said(RecordingFacts())
    talk = talk_with(facts)
    talk.start("health-check")
    talk.fill("health-check", date_of_birth=BORN)
    # WHEN the agent clears what came from memory
    result = talk.revise("health-check", action="clear_memory")
    # THEN the height is retracted (the confirmed date of birth stays), the offer is dropped
    assert result["ok"] is True and result["cleared"] == ["height_cm"]
    assert result["dropped"] == ["weight_kg"]
    instance = talk.store.get("fi_1")
    height = instance.field("height_cm")
    assert [r.kind for r in height.revisions] == ["value", "retraction"]
    assert height.in_force().kind == "retraction"  # type: ignore[union-attr]
    assert instance.field("date_of_birth").in_force().by == "agent"  # type: ignore[union-attr]
    assert "weight_kg" not in instance.state.recalled
    assert memory_lines(result) == []
    # AND nothing was stated to memory by clearing
    assert [r.change for r in facts.export("alice")].count("stated") == 3
    # WHEN the height is undone / THEN memory's value is back, and marked again
    undone = talk.revise("health-check", field="height_cm", action="undo")
    assert undone["summary"] == "Undo on Height (cm): now 173 (answered)."
    assert memory_lines(undone) == [
        "from memory, unconfirmed (resend once confirmed): Height 173 cm (derived from "
        "“5'8\"”), said 2025-11-21"
    ]


def test_clearing_when_memory_left_nothing_says_so() -> None:
    # GIVEN a health check memory had nothing for
    facts = RecordingFacts()
    talk = talk_with(facts)
    talk.start("health-check")
    # WHEN the agent clears memory's answers / THEN it is told there is nothing to clear
    result = talk.revise("health-check", action="clear_memory")
    assert result["ok"] is False and result["error"] == "cannot_revise"
    # AND clear_memory with a field or a value, or another move without one, is bad input
    named = talk.revise("health-check", action="clear_memory", field="height_cm")
    assert named["ok"] is False and "clear_memory takes no field" in named["message"]
    nameless = talk.revise("health-check", action="retract")
    assert nameless["ok"] is False and "needs the field" in nameless["message"]
    valued = talk.revise("health-check", action="clear_memory", value=1)
    assert valued["ok"] is False and valued["error"] == "bad_request"


def test_an_offer_answered_later_in_the_form_is_not_offered_again() -> None:
    # GIVEN the weight offered, then answered with another value and taken back
    facts = alice_said(RecordingFacts())
    talk = talk_with(facts)
    talk.start("health-check")
    talk.fill("health-check", weight_kg=71)
    result = talk.revise("health-check", field="weight_kg", action="retract")
    # THEN the offer does not come back: the user dealt with it
    assert not any("Weight" in line for line in memory_lines(result))


# ---------------------------------------------------------------- the write loop

WEIGHT = "person.weight_kg"


class Overtaken(RecordingFacts):
    """A fact store where someone else states the weight as 80 kg just before each of our
    first ``times`` appends, so each of those loses its compare-and-set."""

    def __init__(self, times: int) -> None:
        super().__init__()
        self.times = times
        self.appends = 0

    def append(self, principal: str, revision: FactRevision) -> FactHead:
        self.appends += 1
        if self.times:
            self.times -= 1
            self.stated(principal, revision.key, "80", at=T0)
        return super().append(principal, revision)


def stating(value: str, planned_on: list[int]) -> Any:
    """A plan stating the weight as ``value``, noting the version of each head it is given."""

    def plan(head: FactHead | None) -> FactRevision | Refusal:
        planned_on.append(head.version if head is not None else 0)
        said = Statement(key=WEIGHT, value=value, source=Source(kind="api"))
        return plan_statement(said, head, vocabulary=Vocabulary.default(), now=T0 + DAY)

    return plan


def test_a_write_that_loses_a_race_is_planned_again_on_the_head_the_conflict_carries() -> None:
    # GIVEN a store where another writer states the weight first, once
    facts = Overtaken(times=1)
    planned_on: list[int] = []
    # WHEN 75 kg is written on the head as read (never stated)
    written = write_fact(facts, "alice", WEIGHT, stating("75", planned_on), head=None, attempts=2)
    # THEN it was planned again on the winner's head, and both statements are kept
    assert isinstance(written, Written)
    assert planned_on == [0, 1] and facts.appends == 2
    assert [(r.seq, r.value) for r in facts.export("alice")] == [(0, "80"), (1, "75")]
    assert written.revision.seq == 1 and written.head == facts.head_of("alice", WEIGHT)


def test_a_key_that_keeps_moving_is_busy_after_the_attempts_and_nothing_of_it_is_written() -> None:
    # GIVEN a store where every append is overtaken
    facts = Overtaken(times=10)
    planned_on: list[int] = []
    # WHEN 75 kg is written with three attempts
    with pytest.raises(TooManyConflicts) as raised:
        write_fact(facts, "alice", WEIGHT, stating("75", planned_on), head=None, attempts=3)
    # THEN it was appended three times, each planned on the newest head, then given up: busy
    assert facts.appends == 3 and planned_on == [0, 1, 2]
    assert raised.value.code == "busy" and WEIGHT in raised.value.message
    assert "75" not in [r.value for r in facts.export("alice")]


def test_a_refused_plan_is_returned_as_it_is_and_nothing_is_appended() -> None:
    facts = RecordingFacts()
    refusal = Refusal(code="no_fact", message="nothing to confirm")
    assert write_fact(facts, "alice", WEIGHT, lambda h: refusal, head=None, attempts=2) is refusal
    assert facts.requests == []
    with pytest.raises(ValueError, match="at least one attempt"):
        write_fact(facts, "alice", WEIGHT, lambda h: refusal, head=None, attempts=0)


def test_an_answer_recorded_in_a_race_lands_on_the_winner_and_one_that_keeps_losing_fails() -> None:
    # GIVEN a health check under way, and another conversation stating the weight first once
    facts = Overtaken(times=1)
    counted: list[str] = []
    talk = talk_with(facts, counted=counted)
    talk.start("health-check")
    # WHEN alice answers 72 kg
    talk.fill("health-check", weight_kg=72)
    # THEN her answer is recorded on top of the other statement
    assert [r.value for r in facts.export("alice")] == ["80", "72"]
    assert counted[-1] == metrics.RECORDED
    # WHEN the key keeps moving under her next answer
    facts.times, facts.appends = 10, 0
    result = talk.fill("health-check", weight_kg=73)
    # THEN it is tried RECORD_ATTEMPTS times, then given up (counted), and the answer stands
    assert result["ok"] is True
    assert facts.appends == RECORD_ATTEMPTS
    assert counted[-1] == metrics.RECORD_FAILED
    assert "73" not in [r.value for r in facts.export("alice")]
