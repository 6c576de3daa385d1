"""memory-bench: every labelled case goes as labelled (a known defect of the memory code stays
a strict xfail carrying its FINDING), the six correctness counts are 0, the graders catch a
memory that is careless in each of the ways they count, the slow store is measured on the
virtual timer, and the report is written, the same on every run."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import timedelta
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from bench.memory_bench import __main__ as bench_main
from bench.memory_bench.cases import CASES
from bench.memory_bench.grading import (
    ABSENT,
    CORRECTNESS,
    LATE,
    LATE_FILLS,
    OFF,
    OVERWRITTEN,
    STALE,
    WRONG,
    Totals,
    Verdict,
    delivery,
    grade,
    totals,
)
from bench.memory_bench.harness import DEADLINE, Outcome, play
from bench.memory_bench.model import CATEGORIES
from bench.memory_bench.report import render
from bench.memory_bench.virtual import BenchFacts, VirtualExecutor, VirtualTimer
from forms.app.memory import DEFAULT_DEADLINE, MemoryCall
from forms.errors import StoreError
from forms.memory import FOREVER, DecayPolicy, DecayRule

BY_ID = {case.id: case for case in CASES}


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    """The failing and slow stores fail on purpose; memory's warnings about them are expected."""
    log = logging.getLogger("formwork")
    level = log.level
    log.setLevel(logging.ERROR)
    yield
    log.setLevel(level)


@cache
def verdict(case_id: str) -> Verdict:
    """The case played and graded once per session (the whole set takes about a second)."""
    return grade(play(BY_ID[case_id]))


def outcome(case_id: str) -> Outcome:
    return verdict(case_id).outcome


def everything() -> Totals:
    return totals([verdict(case.id) for case in CASES])


def run_with(policy: DecayPolicy | None = None) -> Totals:
    """Every case played again on a fresh service (after a test changed something)."""
    return totals([grade(play(case, policy=policy)) for case in CASES])


def _params() -> list[object]:
    params: list[object] = []
    for case in CASES:
        marks = (
            [pytest.mark.xfail(strict=True, reason=f"FINDING: {case.finding}")]
            if case.finding
            else []
        )
        params.append(pytest.param(case.id, marks=marks, id=f"{case.category}-{case.id}"))
    return params


# ---------------------------------------------------------------------------- the cases


@pytest.mark.parametrize("case_id", _params())
def test_each_case_goes_as_labelled(case_id: str) -> None:
    # GIVEN a labelled case (its facts, its start, what must become of each field)
    # WHEN it is played through the service with memory and graded
    done = verdict(case_id)
    # THEN nothing went otherwise than its labels say
    assert done.problems == ()


def test_the_six_correctness_counts_are_zero_outside_the_findings() -> None:
    # WHEN every case that carries no finding is played
    cases = totals([verdict(case.id) for case in CASES if case.finding is None])
    counts = {label: cases.count(key) for key, label in CORRECTNESS}
    # THEN memory never wrote a wrong, absent or stale value, never overwrote an answer, never
    # recalled with memory off, and never held a form past its deadline
    assert counts == dict.fromkeys(counts, 0)


def test_the_six_correctness_counts_are_zero() -> None:
    # WHEN every case is played, findings included
    counts = {label: everything().count(key) for key, label in CORRECTNESS}
    # THEN every count is 0
    assert counts == dict.fromkeys(counts, 0)


def test_the_set_covers_every_category_and_every_storable_decay_class() -> None:
    # GIVEN the labelled set
    ids = [case.id for case in CASES]
    # THEN ids are unique, every category has cases, and every storable class has a case
    # a minute inside and a minute outside each of its windows
    assert len(ids) == len(set(ids))
    assert {case.category for case in CASES} == set(CATEGORIES)
    for window in ("years_fill", "years_offer", "months_fill", "months_offer"):
        assert {f"{window}_inside", f"{window}_outside"} <= set(ids)
    for window in ("steps_offer", "weeks_offer"):
        assert {f"{window}_inside", f"{window}_outside"} <= set(ids)
    assert "never_forty_years" in ids and "do_not_store" in ids


def test_a_planned_move_leaves_the_city_true_today_to_fill() -> None:
    # GIVEN the case of a statement dated in the future (a move to Berlin next month)
    done = verdict("ku_moving_next_month")
    # THEN Lyon, true today, is what memory wrote, and Berlin is written nowhere
    city = done.outcome.fields["city"]
    assert city.written == ("Lyon",)
    assert city.recalled is not None and city.recalled.value == "Lyon"
    assert done.counts == dict.fromkeys(done.counts, 0)
    # AND the history still has the move: Lyon today, Berlin from 10 October
    assert done.outcome.true_on == ("Lyon", "Berlin")


# ---------------------------------------------------------------------------- measured


def test_a_slow_store_is_measured_on_the_virtual_timer() -> None:
    # GIVEN stores at 90 ms and 150 ms a request, one that never answers, and one slow store
    # with an answer to record
    held = {
        case_id: round(outcome(case_id).held * 1000)
        for case_id in (
            "slow_within_deadline",
            "slow_past_deadline",
            "never_answers",
            "slow_with_an_answer",
        )
    }
    # THEN memory waited for the two reads (180 ms), or exactly its deadline, and never to
    # record an answer (it is recorded behind the call's answer)
    assert DEADLINE == DEFAULT_DEADLINE == timedelta(milliseconds=200)
    assert held == {
        "slow_within_deadline": 180,
        "slow_past_deadline": 200,
        "never_answers": 200,
        "slow_with_an_answer": 200,
    }
    # AND what came late was counted as a timeout, owed, not shown to the model at the start
    late = outcome("slow_past_deadline")
    assert late.counted == ("MemoryRecallTimeout", "MemoryRecallOwed") and late.ok
    # AND the agent's next call got it, as offers only
    assert late.due == ("date_of_birth", "height_cm", "weight_kg")
    assert all(seen.recalled is None for seen in late.fields.values())
    offered = {f: s.recalled.use for f, s in late.later.items() if s.recalled is not None}
    assert offered == dict.fromkeys(late.due, "offer")
    assert all(not seen.written for seen in late.later.values())


def test_the_bench_reports_recall_delivered_by_the_first_and_the_second_call() -> None:
    # WHEN every case is played
    graded = everything()
    found = delivery(graded)
    # THEN the starts that should recall are counted, each delivered by its second call at
    # the latest, and memory wrote nothing after a start
    assert found.due > 0 and found.first < found.due
    assert found.second == found.due
    assert found.late_fills == 0
    printed = "\n".join(render(graded))
    assert "| delivered by the second call (the agent's next call) |" in printed


def test_an_answer_racing_recall_lands_on_what_the_start_wrote() -> None:
    # WHEN her answer lands right after the start
    raced = outcome("answer_on_the_offered_field")
    # THEN memory made no commit of its own (what it recalled was in the start's one write),
    # and her answer is the one in force
    assert raced.memory_commits == ()
    assert raced.fields["weight_kg"].answered_by == "agent"


def test_memory_off_asks_the_switch_and_nothing_else() -> None:
    assert outcome("off_for_her").requests == (("settings", "acme/alice"),)
    assert outcome("off_for_the_deployment").requests == ()
    assert outcome("webhook_start").requests == ()
    assert {p for _, p in outcome("bob_same_tenant").requests} == {"acme/bob"}


def test_the_virtual_executor_finishes_work_when_its_requests_say() -> None:
    # GIVEN a store at 150 ms a request, on a virtual timer
    timer = VirtualTimer()
    facts = BenchFacts(timer)
    facts.latency = 0.15
    executor = VirtualExecutor(timer)
    # WHEN two reads are submitted and waited for 200 ms / THEN it times out at 200 ms
    slow = executor.submit(lambda: (facts.settings("p"), facts.heads("p")))
    with pytest.raises(TimeoutError):
        slow.result(timeout=0.2)
    assert timer.now == pytest.approx(0.2)
    # WHEN one read is submitted and waited for / THEN it comes 150 ms after it was submitted
    one = executor.submit(lambda: facts.settings("p"))
    assert one.result(timeout=0.2).enabled is True
    assert timer.now == pytest.approx(0.35)
    # AND a failing request fails the future, not the submit
    facts.fails = frozenset({"heads"})
    failed = executor.submit(lambda: facts.heads("p"))
    with pytest.raises(StoreError):
        failed.result(timeout=1.0)


# ---------------------------------------------------------------------------- graders


def test_the_graders_catch_a_memory_that_fills_stale_facts() -> None:
    # GIVEN a careless policy: every class fills at any age
    forever = DecayRule(fill_within=FOREVER, offer_within=FOREVER)
    careless = DecayPolicy.default().with_rules(
        dict.fromkeys(("years", "months", "steps", "weeks"), forever)
    )
    # WHEN every case is played with it / THEN stale facts filled silently are counted
    assert run_with(policy=careless).count(STALE) > 0


def test_the_graders_catch_a_memory_that_writes_over_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN recall that forgets which fields were answered or named by the start
    from forms.app import recall

    fields = recall.recall_fields

    def forgetful(*args: object, **kwargs: object) -> list[object]:
        return [
            type(f)(f.field_id, f.key, f.type, f.label)
            for f in fields(*args, **kwargs)  # type: ignore[arg-type]
        ]

    monkeypatch.setattr(recall, "recall_fields", forgetful)
    # WHEN every case is played / THEN answers overwritten are counted
    assert run_with().count(OVERWRITTEN) > 0


def test_the_graders_catch_a_memory_that_fills_what_came_late(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN a memory that, delivering a recall owed since the start, fills as a start would
    from forms.app import recall
    from forms.marked import replaced

    def filling(form: Any, instance: Any, facts: Any, **options: Any) -> Any:
        if instance.state.recall_owed is None:
            return None
        state = replaced(instance.state, recall_owed=None)
        return recall.plan_recall_step(
            form, instance.model_copy(update={"state": state}), facts, **options
        )

    monkeypatch.setattr(recall, "plan_late_recall_step", filling)
    # WHEN every case is played / THEN the late fills are counted
    assert run_with().count(LATE_FILLS) > 0


def test_the_graders_catch_a_memory_that_ignores_the_switch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN a fact store whose switch always reads "on"
    monkeypatch.setattr(BenchFacts, "_read_settings", lambda self, principal: None)
    # WHEN every case is played / THEN recalls with memory off are counted
    assert run_with().count(OFF) > 0


def test_the_graders_catch_another_principals_facts(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a fact store that lists every principal's heads
    from forms.storage.facts import InMemoryFactStore

    def everyones(self: InMemoryFactStore, principal: str) -> list[object]:
        return list(self._heads.values())

    monkeypatch.setattr(InMemoryFactStore, "_read_heads", everyones)
    # WHEN every case is played / THEN absent facts filled are counted
    assert run_with().count(ABSENT) > 0


def test_the_graders_catch_a_memory_that_ignores_corrections(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN fact heads on which a correction changes nothing (the wrong value stays in force)
    from forms.memory import facts

    fold = facts._fold

    def uncorrected(periods: list[Any], revision: Any) -> list[Any]:
        return periods if revision.change == "corrected" else fold(periods, revision)

    monkeypatch.setattr(facts, "_fold", uncorrected)
    # WHEN every case is played / THEN wrong values written are counted
    assert run_with().count(WRONG) > 0


def test_the_graders_catch_a_memory_that_waits_for_a_slow_store(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN memory that waits for the store however long it takes
    monkeypatch.setattr(MemoryCall, "_within", lambda self, future, started: future.result())
    # WHEN only the slow-store cases are played / THEN forms opened late are counted
    slow = [BY_ID[c] for c in ("slow_past_deadline", "slow_with_an_answer")]
    assert totals([grade(play(case)) for case in slow]).count(LATE) == 2


# ---------------------------------------------------------------------------- the program


def test_the_bench_prints_and_writes_the_same_report_every_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the bench writing into temporary folders instead of bench/results
    asked: list[bool] = []

    def folder(publish: bool) -> Path:
        asked.append(publish)
        out = tmp_path / str(len(asked))
        out.mkdir()
        return out

    monkeypatch.setattr(bench_main, "output_dir", folder)
    # WHEN it runs as make bench runs it, then with --publish
    bench_main.main([])
    bench_main.main(["--publish"])
    # THEN it printed the correctness counts before the coverage, and no finding
    printed = capsys.readouterr().out
    labels = [label for _, label in CORRECTNESS]
    where = [printed.index(f"| {label} |") for label in labels]
    assert where == sorted(where) and where[-1] < printed.index("| coverage")
    assert "- none: every case went as labelled" in printed and "FINDING" not in printed
    # AND wrote the same report both times, every case in it
    assert asked == [False, True]
    first, second = ((tmp_path / n / "memory.md").read_text() for n in ("1", "2"))
    assert first == second
    assert first.startswith("# memory-bench")
    assert all(f"| {case.id} |" in first for case in CASES)
