"""The one commit loop: what a write costs in store calls, and how it plans again on conflict."""

from __future__ import annotations

import itertools
import threading
from collections import Counter
from datetime import datetime
from typing import Any

import pytest

from forms import (
    Checkpoint,
    Commit,
    ConflictError,
    FormDef,
    FormInstance,
    InMemoryFormStore,
    Migration,
    Patch,
    Step,
    field,
)
from forms.app.conversation import Caller
from forms.app.loop import Planned
from forms.compiled import CompiledForm
from forms.engine import transition
from forms.errors import TooManyConflicts
from forms.instance import FieldChange, NewCall, Revision
from tests.support import T0, service_for


class Counting(InMemoryFormStore):
    """The in-memory store, counting the calls made on it; ``lose`` conflicts that many
    commits first (another writer got there), committing the rival's write for real."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: Counter[str] = Counter()
        self.lose = 0
        self.rival: Commit | None = None

    def get(self, instance_id: str) -> FormInstance:
        self.calls["get"] += 1
        return super().get(instance_id)

    def list_conversation(self, principal: str, conversation_id: str) -> list[FormInstance]:
        self.calls["list"] += 1
        return super().list_conversation(principal, conversation_id)

    def create(self, instance: FormInstance, call: NewCall | None = None) -> None:
        self.calls["create"] += 1
        super().create(instance, call)

    def commit(self, commit: Commit) -> FormInstance:
        self.calls["commit"] += 1
        if self.lose:
            self.lose -= 1
            current = super().get(commit.instance_id)
            raise ConflictError(commit.instance_id, commit.expected_version, current)
        return super().commit(commit)


class Order(Step, title="Order"):
    item: str = field("Item")
    quantity: int = field("Quantity")


class Note(Step, title="Note"):
    note: str | None = field("Note")


def noted(ctx: Any) -> Patch:
    return Patch({"note": f"{ctx.values.quantity} x {ctx.values.item}"})


def confirmed(ctx: Any) -> Patch:
    return Patch({"item": ctx.values.item.upper()})


ORDER = FormDef(
    id="order",
    version=1,
    title="Order",
    steps=[Order, Note],
    checkpoints=[
        Checkpoint("big", when=lambda v: v.quantity is not None and v.quantity > 10, run=noted)
    ],
)
CHAIN = FormDef(
    id="chain",
    version=1,
    title="Chain",
    steps=[Order, Note],
    checkpoints=[
        Checkpoint("big", when=lambda v: v.quantity is not None and v.quantity > 10, run=noted),
        Checkpoint("noted", when=lambda v: v.note is not None, run=confirmed),
    ],
)
CALLER = Caller("alice", "conv-1")
WRITERS = 10


class Wide(Step, title="Wide"):
    f0: str | None = field("Field 0")
    f1: str | None = field("Field 1")
    f2: str | None = field("Field 2")
    f3: str | None = field("Field 3")
    f4: str | None = field("Field 4")
    f5: str | None = field("Field 5")
    f6: str | None = field("Field 6")
    f7: str | None = field("Field 7")
    f8: str | None = field("Field 8")
    f9: str | None = field("Field 9")


WIDE = FormDef(id="wide", version=1, title="Wide", steps=[Wide])


def answers(instance: FormInstance) -> dict[str, Any]:
    """The values in force, by field id."""
    in_force = {f: h.in_force() for f, h in instance.history.items()}
    return {f: r.value for f, r in in_force.items() if r is not None and r.kind == "value"}


def started(store: Counting, form: FormDef) -> Any:
    service = service_for(form, store=store)
    assert service.call(CALLER, "form_start", "c1", {"form": form.id})["ok"]
    store.calls.clear()
    return service


def test_a_fill_that_fires_an_executor_reads_nothing_its_commits_returned() -> None:
    # GIVEN a started order whose checkpoint patches a field when the quantity is over 10
    store = Counting()
    service = started(store, ORDER)
    # WHEN a fill raises the checkpoint (its executor runs in process)
    result = service.call(CALLER, "form_fill", "c2", {"form": "order", "values": {"quantity": 12}})
    # THEN the fill and the executor's effects are two commits, after one read of the
    # conversation: the run starts from what the fill's commit stored, the answer from what
    # the run's commit stored
    assert result["ok"] and result["hooks"][0]["status"] == "done"
    assert store.calls == Counter({"list": 1, "commit": 2})


def test_a_knock_on_chain_reads_nothing_either() -> None:
    # GIVEN a checkpoint whose effect raises a second checkpoint
    store = Counting()
    service = started(store, CHAIN)
    # WHEN a fill raises the first
    result = service.call(
        CALLER, "form_fill", "c2", {"form": "chain", "values": {"item": "pen", "quantity": 12}}
    )
    # THEN both runs and their effects cost one commit each, and nothing is read back
    assert [h["status"] for h in result["hooks"]] == ["done", "done"]
    assert store.calls == Counter({"list": 1, "commit": 3})
    assert answers(service.store.get("fi_1"))["item"] == "PEN"


def test_a_lost_commit_is_planned_again_on_the_instance_the_store_hands_back() -> None:
    # GIVEN a started order, and a store that loses the next two commits to another writer
    store = Counting()
    service = started(store, ORDER)
    store.lose = 2
    # WHEN a fill is sent
    result = service.call(CALLER, "form_fill", "c2", {"form": "order", "values": {"item": "pen"}})
    # THEN it lands on the third attempt, planned on the instance each conflict handed back
    assert result["ok"]
    assert store.calls["commit"] == 3 and store.calls["get"] == 0
    assert answers(service.store.get("fi_1")) == {"item": "pen"}


def test_a_loop_that_loses_every_attempt_saves_nothing_and_says_so() -> None:
    store = Counting()
    service = started(store, ORDER)
    before = service.store.get("fi_1")
    store.lose = 1_000
    result = service.call(CALLER, "form_fill", "c2", {"form": "order", "values": {"item": "pen"}})
    assert result["error"] == "busy"
    assert service.store.get("fi_1") == before
    assert store.calls["commit"] == service.loop.max_conflict_retries + 1


def test_the_plan_that_won_gives_the_value() -> None:
    # GIVEN a plan that reports how many times it ran, and a store that loses once
    store = Counting()
    service = started(store, ORDER)
    store.lose = 1
    runs: list[int] = []

    def plan(form: CompiledForm, instance: FormInstance, now: datetime) -> Planned[int]:
        runs.append(instance.version)
        step = transition(form, instance, {}, now, state=instance.state.model_copy())
        return Planned(len(runs), step)

    # WHEN it is committed through the loop
    done = service.loop.commit(service.store.get("fi_1"), plan)
    # THEN the caller gets the value of the run that committed, with the stored instance
    assert done.value == 2 and len(runs) == 2
    assert done.instance == service.store.get("fi_1")


def test_a_plan_that_writes_nothing_commits_nothing() -> None:
    store = Counting()
    service = started(store, ORDER)
    done = service.loop.commit(service.store.get("fi_1"), lambda f, i, n: Planned("same"))
    assert done.value == "same" and done.step is None
    assert store.calls["commit"] == 0


def test_an_instance_on_a_gone_version_is_migrated_in_the_same_loop() -> None:
    # GIVEN an instance on version 1 of a form whose registry now serves version 2 only
    store = Counting()
    started(store, ORDER)
    v2 = FormDef(
        id="order",
        version=2,
        title="Order",
        steps=[Order, Note],
        migrations=[Migration(from_version=1)],
    )
    service = service_for(v2, store=store)
    store.lose = 1  # and the migration's first commit loses to another writer
    # WHEN a fill is sent
    result = service.call(CALLER, "form_fill", "c2", {"form": "order", "values": {"item": "pen"}})
    # THEN the loop migrates (again, after the conflict), then applies the fill
    assert result["ok"]
    stored = service.store.get("fi_1")
    assert stored.form_version == 2 and answers(stored) == {"item": "pen"}
    assert store.calls["commit"] == 3


def test_too_many_conflicts_is_what_the_loop_raises() -> None:
    store = Counting()
    service = started(store, ORDER)
    store.lose = 1_000
    with pytest.raises(TooManyConflicts):
        service.loop.commit(
            service.store.get("fi_1"),
            lambda f, i, n: Planned(None, transition(f, i, {}, n, state=i.state.model_copy())),
        )


class Overtaking(Counting):
    """The in-memory store where, before each of the next ``rivals`` commits, another writer's
    commit lands first (a fill of the note, a field the caller does not write), so that commit
    loses to a newer instance: the caller is overtaken, the system made progress."""

    def __init__(self) -> None:
        super().__init__()
        self.rivals = 0
        self.landed = 0

    def commit(self, commit: Commit) -> FormInstance:
        if self.rivals and not commit.fields.get("note"):
            self.calls["commit"] += 1
            self.rivals -= 1
            current = super().get(commit.instance_id)
            rival = Revision(kind="value", value=f"rival {self.landed}", by="agent", at=T0)
            history = current.field("note")
            change = FieldChange(append=(rival,), cursor=history.count)
            landed = InMemoryFormStore.commit(
                self,
                Commit(
                    instance_id=current.id,
                    expected_version=current.version,
                    fields={"note": change},
                    state=current.state,
                ),
            )
            self.landed += 1
            raise ConflictError(commit.instance_id, commit.expected_version, landed)
        return super().commit(commit)


def starved(service: Any, seconds_per_reading: float = 10.0) -> None:
    """Make the service's timer a CPU-starved machine's: each reading is that much later."""
    readings = itertools.count()
    service.loop.timer = lambda: next(readings) * seconds_per_reading


def test_a_write_overtaken_by_other_writers_lands_however_slow_the_machine() -> None:
    # GIVEN a started order on a machine so loaded that every timer reading is 10 s later,
    # and more writers to other fields landing ahead of it than the stalled-conflict bound
    store = Overtaking()
    service = started(store, ORDER)
    starved(service)
    store.rivals = service.loop.max_conflict_retries + 5
    # WHEN a fill of the item is sent
    result = service.call(CALLER, "form_fill", "c2", {"form": "order", "values": {"item": "pen"}})
    # THEN it lands after every rival, planned on what each one wrote: nothing is lost
    assert result["ok"], result
    stored = service.store.get("fi_1")
    assert answers(stored)["item"] == "pen"
    assert answers(stored)["note"] == f"rival {store.landed - 1}"
    assert store.landed == service.loop.max_conflict_retries + 5
    assert store.calls["commit"] == store.landed + 1


def test_a_write_overtaken_forever_answers_busy_as_data() -> None:
    # GIVEN an instance other writers never leave alone (a livelock)
    store = Overtaking()
    service = started(store, ORDER)
    store.rivals = 1_000_000
    # WHEN a fill is sent
    result = service.call(CALLER, "form_fill", "c2", {"form": "order", "values": {"item": "pen"}})
    # THEN it stops at the livelock bound and answers busy; nothing of it is saved
    assert result["ok"] is False and result["error"] == "busy"
    assert "item" not in answers(service.store.get("fi_1"))
    assert store.calls["commit"] == service.loop.max_overtaken + 1


def test_stalled_conflicts_back_off_longer_in_a_row_and_start_over_after_progress() -> None:
    # GIVEN a store that loses two commits with nothing landing, is then overtaken once, then
    # loses one more with nothing landing
    store = Overtaking()
    service = started(store, ORDER)
    waits: list[int] = []
    service.loop.backoff = waits.append
    script = iter(["stalled", "stalled", "overtaken", "stalled"])
    commit_as_stored = store.commit

    def commit(commit: Commit) -> FormInstance:
        kind = next(script, None)
        store.lose, store.rivals = int(kind == "stalled"), int(kind == "overtaken")
        return commit_as_stored(commit)

    store.commit = commit  # type: ignore[method-assign]
    # WHEN a fill is sent
    result = service.call(CALLER, "form_fill", "c2", {"form": "order", "values": {"item": "pen"}})
    # THEN it lands; each stall in a row waited longer, and progress started the count over
    assert result["ok"], result
    assert waits == [1, 2, 0, 1]


class Lockstep(Counting):
    """The in-memory store where, once given a ``barrier``, each thread's first commit waits
    until the barrier's parties have all come to commit: all of them planned on the same
    version, and collide."""

    def __init__(self) -> None:
        super().__init__()
        self.barrier: threading.Barrier | None = None
        self.seen = threading.local()

    def commit(self, commit: Commit) -> FormInstance:
        if self.barrier is not None and not getattr(self.seen, "committed", False):
            self.seen.committed = True
            self.barrier.wait(timeout=30)
        return super().commit(commit)


def test_concurrent_writers_to_distinct_fields_all_land_on_a_starved_machine() -> None:
    # GIVEN a form with ten fields, and ten writers that all plan on the same version and then
    # commit at once (a barrier before each one's first commit), on a starved timer
    store = Lockstep()
    service = started(store, WIDE)
    store.barrier = threading.Barrier(WRITERS)
    starved(service)
    results: dict[int, Any] = {}

    def write(n: int) -> None:
        payload = {"form": "wide", "values": {f"f{n}": f"value {n}"}}
        results[n] = service.call(CALLER, "form_fill", f"w{n}", payload)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # THEN every writer landed, and every value is stored
    assert all(result["ok"] for result in results.values()), results
    assert answers(service.store.get("fi_1")) == {f"f{n}": f"value {n}" for n in range(WRITERS)}
    assert store.calls["commit"] > WRITERS  # they did collide


def test_a_replayed_call_reads_the_conversation_once() -> None:
    # GIVEN a fill that landed
    store = Counting()
    service = started(store, ORDER)
    payload = {"form": "order", "values": {"item": "pen"}}
    first = service.call(CALLER, "form_fill", "c2", payload)
    store.calls.clear()
    # WHEN it is sent again under its id
    again = service.call(CALLER, "form_fill", "c2", payload)
    # THEN the first result comes back, the status from the one read that located the form
    # (the write changes nothing now, so the store is asked only to record the id, and
    # refuses: it is the first call's)
    assert again == {**first, "replayed": True}
    assert store.calls == Counter({"list": 1})


def test_a_replay_the_store_refuses_on_commit_reads_nothing_more() -> None:
    # GIVEN a fill, then a later fill that changed the same field
    store = Counting()
    service = started(store, ORDER)
    payload = {"form": "order", "values": {"item": "pen"}}
    first = service.call(CALLER, "form_fill", "c2", payload)
    service.call(CALLER, "form_fill", "c3", {"form": "order", "values": {"item": "ink"}})
    store.calls.clear()
    # WHEN the first is sent again: its plan would change the answer back, so it is committed
    # with its call id, which the store refuses
    again = service.call(CALLER, "form_fill", "c2", payload)
    # THEN nothing is applied, the first result comes back, and the status is from the read
    # that located the form
    assert {k: v for k, v in again.items() if k != "status_line"} == {
        **{k: v for k, v in first.items() if k != "status_line"},
        "replayed": True,
    }
    assert store.calls == Counter({"list": 1, "commit": 1})
    assert answers(service.store.get("fi_1"))["item"] == "ink"
