"""Hooks that keep triggering each other stop at the knock-on limit, visibly, in any process."""

from __future__ import annotations

import logging

import pytest

from forms import Caller, Checkpoint, FormDef, Patch, Step, field
from forms.instance import KNOCK_ON_LIMIT, LOOP_STOPPED, FormInstance, OutboxEntry
from forms.state import HookContext
from tests.support import service_for

ALICE = Caller("alice", "c1")


class Counter(Step):
    title = "Counter"
    n: int = field("N")


def _ping_pong() -> FormDef:
    """Two checkpoints whose executors set each other's trigger: ``n == 1 -> n = 2`` and
    ``n == 2 -> n = 1`` (Python, so no compiler can see the loop)."""

    def to_two(ctx: HookContext) -> Patch:
        return Patch({"n": 2})

    def to_one(ctx: HookContext) -> Patch:
        return Patch({"n": 1})

    return FormDef(
        id="ping",
        version=1,
        title="Ping",
        steps=[Counter],
        checkpoints=[
            Checkpoint("ping", when=lambda v: v.n == 1, run=to_two),
            Checkpoint("pong", when=lambda v: v.n == 2, run=to_one),
        ],
    )


def _entries(instance: FormInstance) -> list[OutboxEntry]:
    return sorted(instance.state.outbox.values(), key=lambda e: e.depth)


def test_a_loop_of_checkpoints_stops_at_the_limit_in_process_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # GIVEN a form whose two checkpoints set each other's trigger, hooks run in process
    service = service_for(_ping_pong())
    service.call(ALICE, "form_start", "s", {"form": "ping"})
    # WHEN the answer that starts the loop is given
    with caplog.at_level(logging.ERROR, logger="formwork"):
        result = service.call(ALICE, "form_fill", "f", {"form": "ping", "values": {"n": 1}})
    # THEN the call answers, after exactly KNOCK_ON_LIMIT + 1 runs (depths 0..limit)
    assert result["ok"] is True
    instance = service.store.get("fi_1")
    assert instance is not None
    entries = _entries(instance)
    assert [e.status for e in entries] == ["done"] * (KNOCK_ON_LIMIT + 1) + ["failed"]
    # AND the entry past the limit is failed with a reason naming the loop, and nothing pends
    last = entries[-1]
    assert last.depth == KNOCK_ON_LIMIT + 1
    assert last.error is not None and last.error.startswith(LOOP_STOPPED)
    assert "(checkpoint.pong -> checkpoint.ping -> checkpoint.pong)" in last.error
    # AND it was logged, and the status line tells the agent an operator is needed
    assert any(last.key in r.getMessage() for r in caplog.records)
    lines = service.status(ALICE)
    assert "hooks kept triggering each other" in lines[0]
    assert "an operator has to fix the form" in lines[0]


def test_the_stopped_loop_holds_submission_and_shows_in_reads() -> None:
    # GIVEN a loop stopped at the limit
    service = service_for(_ping_pong())
    service.call(ALICE, "form_start", "s", {"form": "ping"})
    service.call(ALICE, "form_fill", "f", {"form": "ping", "values": {"n": 1}})
    # WHEN the agent reads the form and tries to submit it
    read = service.call(ALICE, "form_read", "r", {"form": "ping"})
    submitted = service.call(ALICE, "form_fill", "g", {"form": "ping", "submit": True})
    # THEN the read's status line names the stop, and the submission is refused
    assert "hooks kept triggering each other" in str(read)
    assert submitted["submitted"] is False


def test_the_depth_travels_on_the_entries_so_a_durable_runner_stops_too() -> None:
    # GIVEN the same form with no dispatcher (hooks run by id, as a Temporal activity or the
    # relay runs them: each run loads the instance afresh, nothing is carried in memory)
    service = service_for(_ping_pong(), dispatch=False)
    service.call(ALICE, "form_start", "s", {"form": "ping"})
    service.call(ALICE, "form_fill", "f", {"form": "ping", "values": {"n": 1}})
    # WHEN every pending entry is run by id until none is left (bounded, to fail, not hang)
    runs = 0
    while runs < 10 * KNOCK_ON_LIMIT:
        instance = service.store.get("fi_1")
        assert instance is not None
        pending = [e.key for e in _entries(instance) if e.status == "pending"]
        if not pending:
            break
        for key in pending:
            service.run_hook("fi_1", key)
            runs += 1
    # THEN the chain stopped at the limit: one entry failed with the loop's reason
    assert runs == KNOCK_ON_LIMIT + 1
    instance = service.store.get("fi_1")
    assert instance is not None
    failed = [e for e in instance.state.outbox.values() if e.status == "failed"]
    assert [e.depth for e in failed] == [KNOCK_ON_LIMIT + 1]


def test_a_new_answer_starts_a_new_chain() -> None:
    # GIVEN a form where one checkpoint's executor stamps a field (a chain of one)
    class Two(Step):
        title = "Two"
        n: int = field("N")
        stamp: int | None = field("Stamp")

    form = FormDef(
        id="stamp",
        version=1,
        title="Stamp",
        steps=[Two],
        checkpoints=[Checkpoint("big", when=lambda v: (v.n or 0) > 5, run=lambda c: None)],
    )
    service = service_for(form)
    service.call(ALICE, "form_start", "s", {"form": "stamp"})
    # WHEN answers cross the checkpoint again and again
    for i, n in enumerate([9, 1, 9, 1, 9]):
        service.call(ALICE, "form_fill", f"f{i}", {"form": "stamp", "values": {"n": n}})
    # THEN each crossing is an answer's, at depth 0, and runs
    instance = service.store.get("fi_1")
    assert instance is not None
    assert [(e.depth, e.status) for e in _entries(instance)] == [(0, "done")] * 3
