"""Properties of the engine under random sequences of tool calls and executor behaviour.

A ``hypothesis.stateful`` machine drives one ``trip`` form through ``FormService`` with the
in-memory store and in-process dispatch: fills of valid and invalid values into any step, every
revise move, predicate flips (age and mode gate other fields and a whole step), and checkpoint
or step executors that patch, jump, fail, complete, terminate, raise or return junk. After every
call it checks that

(a) no revision is ever lost or rewritten (each log before is a prefix of the log after);
(b) undo then redo, when both are possible, returns to the same cursor and value;
(c) what is stored agrees with a from-scratch recomputation (``evaluate_from_scratch``, the
    oracle the incremental ``evaluate`` is held to), on the stored instance and on a JSON round
    trip of it;
(d) each rising edge is one new occurrence per hook under a stable, unique key (counters never
    go down, outbox entries are never removed or rewritten once finished);
(e) the JSON round trip of the instance is lossless.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from forms import Complete, Fail, FormInstance, Jump, Patch, Terminate
from forms.engine import Evaluation, evaluate, evaluate_from_scratch
from tests.unit.forms_for_tests import (
    EXECUTOR_HOOKS,
    FIELDS,
    FORM_ID,
    HOOK_IDS,
    Harness,
    Script,
    harness,
)

VALUES: dict[str, st.SearchStrategy[Any]] = {
    "name": st.sampled_from(["Ann", "Bob", "", None, 5]),
    "age": st.sampled_from([5, 15, 30, 70, -1, "thirty", None]),
    "nickname": st.sampled_from(["Annie", "Bo", "  "]),
    "mode": st.sampled_from(["air", "rail", "car", "boat"]),
    "flight": st.sampled_from(["BA1", "LH22", ""]),
    "amount": st.sampled_from([0, 5, 999, 1000, 1001, 5000, -3, "9"]),
    "guardian": st.sampled_from(["Mum", "Dad"]),
    "consent": st.sampled_from([True, False, "yes"]),
    "notes": st.sampled_from(["n1", "n2", None]),
}

STEP_ANSWERS: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "person": {"name": st.just("Ann"), "age": st.sampled_from([15, 30])},
    "trip": {
        "mode": st.sampled_from(["air", "rail", "car"]),
        "flight": st.just("BA1"),
        "amount": st.sampled_from([10, 5000]),
    },
    "extra": {"guardian": st.just("Mum"), "consent": st.booleans()},
}

pairs = st.sampled_from(FIELDS).flatmap(lambda f: st.tuples(st.just(f), VALUES[f]))
fills = st.lists(pairs, min_size=1, max_size=4).map(dict)

EFFECTS = st.sampled_from(
    [
        None,
        Fail("not allowed"),
        Patch({"notes": "stamped"}),
        Patch({"nickname": "auto", "amount": 7}),
        Patch({"age": -1}),
        Jump("person"),
        Jump("trip"),
        Jump("extra"),
        Complete(),
        Terminate("stopped"),
        [Patch({"notes": "both"}), Jump("person")],
        [Complete(), Terminate("both")],
        "not an effect",
    ]
)
SCRIPTED = st.sampled_from(
    ["checkpoint.over_cap", "step.person.complete", "step.trip.complete", "field.name.filled"]
)


def round_trip(instance: FormInstance) -> FormInstance:
    return FormInstance.model_validate(instance.model_dump(mode="json"))


def comparable(ev: Evaluation) -> tuple[Any, ...]:
    return (
        {f: (e.applies, e.status, e.revision) for f, e in ev.fields.items()},
        dict(ev.live),
        dict(ev.step_applies),
        dict(ev.step_complete),
        ev.open_step,
        ev.revisit,
        ev.steps,
        ev.active_rejections,
        ev.waiting,
        ev.ready,
        dict(ev.hooks),
        tuple(h.id for h in ev.rising),
        ev.flipped,
    )


class FormMachine(RuleBasedStateMachine):
    h: Harness
    seen: FormInstance

    @initialize(
        closes=st.booleans(),
        values=st.none() | fills,
        effects=st.dictionaries(SCRIPTED, EFFECTS),
    )
    def start(self, closes: bool, values: dict[str, Any] | None, effects: dict[str, Any]) -> None:
        self.h = harness(Script(effects=effects), closes_on_complete=closes)
        self.h.start(values)
        self.seen = self.h.instance()
        self.writes: list[tuple[str, str, dict[str, Any]]] = []

    # ---------------------------------------------------------------- calls

    def write(self, tool: str, payload: dict[str, Any]) -> dict[str, Any]:
        call_id = self.h.next_call_id()
        result = self.h.call(tool, payload, call_id=call_id)
        assert isinstance(result, dict)
        assert isinstance(result["ok"], bool)
        assert "summary" in result or "error" in result
        self.writes.append((tool, call_id, payload))
        return dict(result)

    @rule(values=fills)
    def fill(self, values: dict[str, Any]) -> None:
        self.write("form_fill", {"form": FORM_ID, "values": values})

    @rule(over=st.booleans())
    def cross_the_cap(self, over: bool) -> None:
        """Flip the checkpoint's condition."""
        self.write("form_fill", {"form": FORM_ID, "values": {"amount": 5000 if over else 10}})

    @rule(step=st.sampled_from(sorted(STEP_ANSWERS)), data=st.data())
    def answer_a_step(self, step: str, data: st.DataObject) -> None:
        """Valid answers for every required field of a step (completes it, barring gates)."""
        values = {f: data.draw(s) for f, s in STEP_ANSWERS[step].items()}
        self.write("form_fill", {"form": FORM_ID, "values": values})

    @rule(
        field_id=st.sampled_from(FIELDS),
        action=st.sampled_from(["set", "retract", "decline", "undo", "redo"]),
        data=st.data(),
    )
    def revise(self, field_id: str, action: str, data: st.DataObject) -> None:
        payload: dict[str, Any] = {"form": FORM_ID, "field": field_id, "action": action}
        if action == "set":
            payload["value"] = data.draw(VALUES[field_id])
        self.write("form_revise", payload)

    @rule(hook_id=SCRIPTED, effect=EFFECTS)
    def script_effect(self, hook_id: str, effect: Any) -> None:
        self.h.script.effects[hook_id] = effect

    @rule(hook_id=SCRIPTED, times=st.sampled_from([1, 99]))
    def script_failure(self, hook_id: str, times: int) -> None:
        self.h.script.failures[hook_id] = times

    @rule(field_id=st.sampled_from(FIELDS))
    def undo_then_redo(self, field_id: str) -> None:
        """(b) Undo then redo, when both are possible, returns exactly."""
        before = self.h.instance().field(field_id)
        undo = self.write("form_revise", {"form": FORM_ID, "field": field_id, "action": "undo"})
        if not undo["ok"]:
            return
        middle = self.h.instance().field(field_id)
        redo = self.write("form_revise", {"form": FORM_ID, "field": field_id, "action": "redo"})
        after = self.h.instance().field(field_id)
        if not redo["ok"] or len(after.revisions) != len(before.revisions):
            return  # redo refused (closed form), or an executor wrote to the field meanwhile
        assert middle.cursor != before.cursor
        assert after.cursor == before.cursor
        assert after.in_force() == before.in_force()

    @precondition(lambda self: bool(self.writes))
    @rule(data=st.data())
    def replay(self, data: st.DataObject) -> None:
        """A call id already answered returns its recorded result and commits nothing."""
        tool, call_id, payload = data.draw(st.sampled_from(self.writes))
        instance = self.h.instance()
        record = self.h.service.store.get_call(
            instance.principal, instance.conversation_id, call_id
        )
        assert record is not None  # every write call is recorded, whatever its outcome
        result = self.h.call(tool, payload, call_id=call_id)
        # THEN the first result comes back, with the status as it stands now
        live = ("status_line", "closed", "reason", "hooks")
        first = {k: v for k, v in record.result.items() if k not in live}
        assert {k: v for k, v in result.items() if k not in live} == {**first, "replayed": True}
        assert self.h.instance() == instance

    @precondition(lambda self: bool(self.h.instance().state.outbox))
    @rule(data=st.data())
    def run_finished_hook_again(self, data: st.DataObject) -> None:
        """Running a finished entry again applies nothing."""
        outbox = self.h.instance().state.outbox
        finished = sorted(k for k, e in outbox.items() if e.status != "pending")
        if not finished:
            return
        key = data.draw(st.sampled_from(finished))
        before = self.h.instance()
        assert self.h.service.run_hook(self.h.instance_id, key) == ()
        assert self.h.instance() == before

    # ---------------------------------------------------------------- properties

    @invariant()
    def history_only_grows(self) -> None:
        """(a) Every log before is a prefix of the log after; nothing is rewritten."""
        now = self.h.instance()
        for field_id, log in self.seen.history.items():
            grown = now.field(field_id).revisions
            assert grown[: len(log.revisions)] == log.revisions, field_id
        assert now.version >= self.seen.version

    @invariant()
    def stored_state_equals_a_recomputation(self) -> None:
        """(c) Evaluating the stored instance (incrementally, from what it carries), or its JSON
        round trip, agrees with the store and with the from-scratch oracle."""
        stored = self.h.instance()
        ev = evaluate(self.h.form, stored)
        assert comparable(ev) == comparable(evaluate(self.h.form, round_trip(stored)))
        assert comparable(ev) == comparable(evaluate_from_scratch(self.h.form, stored))
        assert ev.rising == ()
        assert dict(ev.hooks) == stored.state.hooks
        for field_id in FIELDS:
            fe = ev.fields[field_id]
            assert fe.revision == stored.field(field_id).in_force()
            assert (field_id in ev.live) == (fe.status in ("answered", "ask_again"))

    @invariant()
    def edges_are_counted_once_under_unique_keys(self) -> None:
        """(d) Counters never go down; each occurrence of an executor hook has one entry."""
        now = self.h.instance()
        before_hooks, hooks = self.seen.state.hooks, now.state.hooks
        assert set(hooks) == set(HOOK_IDS)
        for hook_id in HOOK_IDS:
            assert hooks[hook_id].count >= before_hooks.get(hook_id, hooks[hook_id]).count
        outbox = now.state.outbox
        for key, entry in outbox.items():
            assert key == entry.key == f"{now.id}:{entry.hook_id}:{entry.occurrence}"
        for hook_id in EXECUTOR_HOOKS:
            occurrences = sorted(e.occurrence for e in outbox.values() if e.hook_id == hook_id)
            assert occurrences == list(range(1, hooks[hook_id].count + 1)), hook_id
        for key, entry in self.seen.state.outbox.items():
            assert key in outbox
            if entry.status != "pending":
                assert outbox[key] == entry

    @invariant()
    def json_round_trip_is_lossless(self) -> None:
        """(e) The instance survives JSON, both as a dict and as a string."""
        stored = self.h.instance()
        assert round_trip(stored) == stored
        assert FormInstance.model_validate_json(stored.model_dump_json()) == stored

    @invariant()
    def remember(self) -> None:
        """Keep this state to compare the next one with (runs last: invariants run in order)."""
        self.seen = self.h.instance()


FormMachine.TestCase.settings = settings(
    max_examples=120,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestFormMachine = FormMachine.TestCase
