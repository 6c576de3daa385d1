"""The operator's use cases (``forms.app.operations``): failed hooks of the operator's tenant
only, a retry by key that reruns the same occurrence, the relay's failure queue read back and
redriven only once a sweep started."""

from __future__ import annotations

import json
from itertools import count

import pytest

from forms import Caller, FormService
from forms.app.operations import (
    InMemoryFailureQueue,
    NotAnOperator,
    Operator,
    batch_from_message,
    failed_hooks,
    redrive,
    relay_failures,
    require_operator,
    require_platform,
    retry_failed_hook,
)
from forms.storage import InMemoryFormStore
from tests.support import TickingClock, service_for
from tests.unit.forms_for_tests import FORM_ID, T0, Script, trip_form

HOOK = "field.name.filled"
ACME = Operator("acme/olga", frozenset({"operator"}))
GLOBEX = Operator("globex/gus", frozenset({"operator"}))
_calls = count(1)


def setup(failures: int = 3) -> tuple[FormService, InMemoryFormStore, Script]:
    script = Script(failures={HOOK: failures})
    store = InMemoryFormStore()
    service = service_for(trip_form(script), store=store, clock=TickingClock(T0))
    return service, store, script


def fill_name(service: FormService, principal: str, conversation: str = "conv-1") -> str:
    caller = Caller(principal, conversation)
    started = service.call(caller, "form_start", f"c{next(_calls)}", {"form": FORM_ID})
    assert started["ok"], started
    service.call(
        caller, "form_fill", f"c{next(_calls)}", {"form": FORM_ID, "values": {"name": "Ann"}}
    )
    return str(started["instance"])


def test_a_hook_out_of_attempts_is_listed_for_its_tenants_operator_only() -> None:
    service, store, _ = setup(failures=6)  # three attempts each
    mine = fill_name(service, "acme/alice")
    theirs = fill_name(service, "globex/bob")
    # THEN each operator sees their own tenant's failed hook, with its error and attempts
    (row,) = failed_hooks(store, ACME).hooks
    assert row.key == f"{mine}:{HOOK}:1" and row.instance_id == mine
    assert row.attempts == 3 and row.error and "RuntimeError" in row.error
    assert row.principal == "acme/alice" and row.form_id == FORM_ID
    assert [h.instance_id for h in failed_hooks(store, GLOBEX).hooks] == [theirs]


def test_a_retry_reruns_the_same_occurrence_and_takes_it_off_the_list() -> None:
    service, store, script = setup(failures=3)
    instance = fill_name(service, "acme/alice")
    key = f"{instance}:{HOOK}:1"
    runs_before = len(script.runs)
    # WHEN the operator retries it (the executor works now)
    assert retry_failed_hook(service, ACME, key)
    # THEN it ran again under the same key, and is done
    assert [r.key for r in script.runs[runs_before:]] == [key]
    assert store.get(instance).state.outbox[key].status == "done"
    assert failed_hooks(store, ACME).hooks == ()
    # AND a second retry finds nothing failed
    assert not retry_failed_hook(service, ACME, key)


def test_another_tenants_hook_is_refused_like_a_missing_one_and_left_alone() -> None:
    service, store, script = setup()
    instance = fill_name(service, "globex/bob")
    key = f"{instance}:{HOOK}:1"
    runs = len(script.runs)
    for attempt in (key, f"fi_missing:{HOOK}:1", f"{instance}:{HOOK}:2", "not a key"):
        assert not retry_failed_hook(service, ACME, attempt)
    assert len(script.runs) == runs
    assert store.get(instance).state.outbox[key].status == "failed"


def test_the_operator_role_and_the_platform_tenant() -> None:
    require_operator(ACME, "operator")
    with pytest.raises(NotAnOperator):
        require_operator(Operator("acme/alice", frozenset({"finance"})), "operator")
    require_platform(ACME, "operator", "acme", single_tenant=False)
    with pytest.raises(NotAnOperator):
        require_platform(GLOBEX, "operator", "acme", single_tenant=False)
    with pytest.raises(NotAnOperator):
        require_platform(ACME, "operator", None, single_tenant=False)  # nobody by default
    require_platform(
        Operator("olga", frozenset({"operator"})), "operator", None, single_tenant=True
    )


def failure(n: int) -> str:
    return json.dumps(
        {
            "requestContext": {"condition": "RetryAttemptsExhausted"},
            "timestamp": "2026-12-04T10:00:00.000Z",
            "DDBStreamBatchInfo": {
                "shardId": "shardId-1",
                "startSequenceNumber": str(100 * n),
                "endSequenceNumber": str(100 * n + 24),
                "batchSize": 25,
            },
        }
    )


class Sweeps:
    def __init__(self, fail: bool = False) -> None:
        self.started = 0
        self.fail = fail

    def start(self) -> None:
        if self.fail:
            raise RuntimeError("Lambda refused")
        self.started += 1


def test_reading_back_leaves_the_messages_and_a_redrive_deletes_them_after_one_sweep() -> None:
    queue = InMemoryFailureQueue()
    for n in range(3):
        queue.send(f"m{n}", failure(n))
    batches, total = relay_failures(queue, limit=2)
    assert [b.message_id for b in batches] == ["m0", "m1"] and total == 3
    assert batches[0].condition == "RetryAttemptsExhausted" and batches[0].batch_size == 25
    sweeps = Sweeps()
    done = redrive(queue, sweeps, limit=2)
    assert sweeps.started == 1 and done.sweep_started
    assert [b.message_id for b in done.redriven] == ["m0", "m1"] and done.remaining == 1


def test_a_redrive_deletes_nothing_when_the_sweep_cannot_start_or_nothing_is_queued() -> None:
    queue = InMemoryFailureQueue()
    empty = redrive(queue, Sweeps(), limit=5)
    assert not empty.sweep_started and empty.redriven == ()
    queue.send("m0", failure(0))
    with pytest.raises(RuntimeError):
        redrive(queue, Sweeps(fail=True), limit=5)
    queue.release()  # its visibility timeout passes
    assert queue.count() == 1 and [b.message_id for b in queue.peek(5)] == ["m0"]


@pytest.mark.parametrize("body", ["", "not json", "[]", '{"DDBStreamBatchInfo": 7}'])
def test_a_malformed_failure_message_is_still_listed(body: str) -> None:
    batch = batch_from_message("m9", body)
    assert batch.message_id == "m9" and batch.shard_id is None and batch.batch_size is None


@pytest.mark.parametrize("limit", [0, 51])
def test_a_limit_out_of_bounds_is_refused(limit: int) -> None:
    with pytest.raises(ValueError, match="limit"):
        relay_failures(InMemoryFailureQueue(), limit=limit)
