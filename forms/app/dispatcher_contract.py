"""The behaviour every hook ``Dispatcher`` must show, as a reusable pytest suite.

Subclass ``DispatcherContract`` in a test module (its name must start with ``Test``) and
override the ``wiring`` fixture: a ``Wiring`` whose ``service`` dispatches through the adapter
under test, over a store the executors' runs commit to, and whose ``settle(instance_id)``
returns once nothing of that instance is left to run (in process: at once, the runs happened
inside the call; a durable dispatcher: once its runs have finished). The fixture also points
``RUNS`` (an environment variable) at a folder of the test's own::

    class TestInProcessDispatcher(DispatcherContract):
        @pytest.fixture
        def wiring(self, tmp_path, monkeypatch) -> Wiring:
            monkeypatch.setenv(RUNS, str(tmp_path))
            service = form_service(FormRegistry(FORMS), InMemoryFormStore(), InProcessDispatcher())
            return Wiring(service, settle=lambda instance_id: None)

The executors may run in another process (a Temporal worker loads ``FORMS`` by reference,
``forms.app.dispatcher_contract:FORMS``), so they record each run in a file under ``RUNS``
rather than in memory. What the suite asks of every dispatcher: each occurrence runs, at least
once, always under its key; its effects land once; an effect's knock-on hook runs too; a
failing run is retried under the same key and a run that keeps failing ends ``failed``, while
the tool call that fired it is answered; dispatching the same entries again applies nothing
twice; a run whose effect hands the instance over (``HandOver``) starts the other form once,
and that form's own first hooks run too.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from forms.app.conversation import Caller
from forms.app.service import FormService
from forms.definition import Checkpoint, FormDef, Step, field
from forms.effects import HandOver, Patch
from forms.instance import FormInstance, Revision
from forms.state import HookContext

RUNS = "FORMWORK_CONTRACT_RUNS"
"""The environment variable naming the folder the executors record their runs in."""
CALLER = Caller("alice", "conv-contract")
_CALLS = itertools.count(1)


def runs_of(ctx: HookContext) -> int:
    """Record this run of ``ctx.key``; how many runs of it there have been, this one included."""
    path = Path(os.environ[RUNS]) / f"{ctx.instance_id}.runs"
    with path.open("a") as log:
        log.write(ctx.key + "\n")
    return path.read_text().split().count(ctx.key)


def issue_receipt(ctx: HookContext) -> Patch:
    """Fails its first ``failures`` runs, then stamps a receipt named after its key."""
    run = runs_of(ctx)
    if run <= (ctx.values.failures or 0):
        raise RuntimeError(f"run {run} of {ctx.key}: the receipt service is down")
    return Patch({"receipt": f"R-{ctx.key}"})


def file_receipt(ctx: HookContext) -> Patch:
    """Rises when the receipt lands: a hook started by another hook's run."""
    runs_of(ctx)
    return Patch({"filed": True})


class Claim(Step, title="Claim"):
    failures: int | None = field("Failures before the receipt service answers")
    amount: int = field("Amount", on_fill=issue_receipt)
    receipt: str | None = field("Receipt", on_fill=file_receipt)
    filed: bool | None = field("Filed")


FORM = FormDef(id="dispatch-contract", version=1, title="Dispatch contract", steps=[Claim])


def hand_over(ctx: HookContext) -> HandOver:
    """A checkpoint's executor: the claim is too big for this form."""
    runs_of(ctx)
    return HandOver(BIG.id, "too big")


def stamp(ctx: HookContext) -> Patch:
    """The form that took over: its own first hook, on the answer carried to it."""
    runs_of(ctx)
    return Patch({"stamp": f"S-{ctx.key}"})


class Small(Step, title="Small"):
    size: int = field("Size")


class Big(Step, title="Big"):
    size: int = field("Size", on_fill=stamp)
    stamp: str | None = field("Stamp")


SMALL = FormDef(
    id="dispatch-contract-small",
    version=1,
    title="Small claim",
    steps=[Small],
    hands_over_to={"dispatch-contract-big": {}},
    checkpoints=[
        Checkpoint("big", when=lambda v: v.size is not None and v.size > 10, run=hand_over)
    ],
)
BIG = FormDef(id="dispatch-contract-big", version=1, title="Big claim", steps=[Big])
FORMS = (FORM, SMALL, BIG)


@dataclass(frozen=True)
class Wiring:
    """The service under test and how to wait for its dispatcher's runs of an instance."""

    service: FormService
    settle: Callable[[str], None]


def by_executor(instance: FormInstance, field_id: str) -> list[Revision]:
    return [r for r in instance.field(field_id).revisions if r.by == "executor"]


def recorded_runs(instance_id: str) -> list[str]:
    path = Path(os.environ[RUNS]) / f"{instance_id}.runs"
    return path.read_text().split() if path.exists() else []


class DispatcherContract:
    @pytest.fixture
    def wiring(self) -> Wiring:
        raise NotImplementedError("override the wiring fixture in the adapter's test module")

    def filled(self, wiring: Wiring, failures: int = 0) -> tuple[str, str, dict[str, Any]]:
        """A claim started with ``failures`` set, then the amount filled: (instance id, the
        receipt hook's key, the fill's result)."""
        call = next(_CALLS)
        payload: dict[str, Any] = {"form": FORM.id, "values": {"failures": failures}}
        started = wiring.service.call(CALLER, "form_start", f"start-{call}", payload)
        assert started["ok"], started
        fill = {"form": FORM.id, "instance": started["instance"], "values": {"amount": 120}}
        result = wiring.service.call(CALLER, "form_fill", f"fill-{call}", fill)
        assert result["ok"], result
        (key,) = result["fired"]
        return started["instance"], key, result

    def test_an_occurrence_runs_under_its_key_and_its_effect_lands_once(
        self, wiring: Wiring
    ) -> None:
        instance_id, key, _ = self.filled(wiring)
        wiring.settle(instance_id)
        stored = wiring.service.store.get(instance_id)
        assert stored.state.outbox[key].status == "done"
        assert [r.value for r in by_executor(stored, "receipt")] == [f"R-{key}"]
        assert key in recorded_runs(instance_id)

    def test_a_hook_raised_by_a_runs_effect_runs_too(self, wiring: Wiring) -> None:
        instance_id, _, _ = self.filled(wiring)
        wiring.settle(instance_id)
        stored = wiring.service.store.get(instance_id)
        assert [r.value for r in by_executor(stored, "filed")] == [True]
        assert {e.status for e in stored.state.outbox.values()} == {"done"}
        assert len(stored.state.outbox) == 2

    def test_a_failing_run_is_retried_under_the_same_key(self, wiring: Wiring) -> None:
        instance_id, key, _ = self.filled(wiring, failures=1)
        wiring.settle(instance_id)
        stored = wiring.service.store.get(instance_id)
        assert stored.state.outbox[key].status == "done"
        assert recorded_runs(instance_id).count(key) >= 2
        assert [r.value for r in by_executor(stored, "receipt")] == [f"R-{key}"]

    def test_a_run_that_keeps_failing_ends_failed_and_the_call_was_answered(
        self, wiring: Wiring
    ) -> None:
        instance_id, key, result = self.filled(wiring, failures=1_000)
        assert result["ok"] is True  # the tool call is answered whatever its hooks do
        wiring.settle(instance_id)
        entry = wiring.service.store.get(instance_id).state.outbox[key]
        assert entry.status == "failed"
        assert entry.error is not None and "receipt service is down" in entry.error
        assert by_executor(wiring.service.store.get(instance_id), "receipt") == []

    def test_dispatching_the_same_entries_again_applies_nothing_twice(self, wiring: Wiring) -> None:
        instance_id, key, _ = self.filled(wiring)
        wiring.settle(instance_id)
        stored = wiring.service.store.get(instance_id)
        wiring.service.dispatch_entries(stored, [stored.state.outbox[key]])
        wiring.settle(instance_id)
        again = wiring.service.store.get(instance_id)
        assert [r.value for r in by_executor(again, "receipt")] == [f"R-{key}"]
        assert again.state.outbox[key].status == "done"

    def test_a_handover_starts_the_other_form_once_and_its_hooks_run(self, wiring: Wiring) -> None:
        call = next(_CALLS)
        payload: dict[str, Any] = {"form": SMALL.id, "values": {"size": 20}}
        started = wiring.service.call(CALLER, "form_start", f"start-{call}", payload)
        assert started["ok"], started
        source_id = started["instance"]
        (key,) = started["fired"]
        wiring.settle(source_id)
        source = wiring.service.store.get(source_id)
        assert source.state.status == "handed_over"
        assert source.state.handed_to is not None
        target_id = source.state.handed_to.instance
        wiring.settle(target_id)
        # the source's run handed over once; the target carries the size, its own hook ran
        wiring.service.dispatch_entries(source, [source.state.outbox[key]])
        wiring.settle(source_id)
        mine = wiring.service.store.list_conversation(CALLER.principal, CALLER.conversation_id)
        assert [i.id for i in mine if i.form_id == BIG.id and i.id == target_id] == [target_id]
        assert [i.state.handed_from for i in mine if i.form_id == BIG.id].count(None) == 0
        target = wiring.service.store.get(target_id)
        assert target.field("size").in_force() is not None
        (stamped,) = by_executor(target, "stamp")
        assert stamped.value == f"S-{target_id}:field.size.filled:1"
        assert recorded_runs(source_id).count(key) >= 1
