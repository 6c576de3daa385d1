"""Checkpoint answers kept from what their predicates read, against the from-scratch oracle.

A checkpoint's predicate is asked again only when something it read when last asked reads
otherwise, and only when its code can read nothing the engine does not see
(``forms.predicates``). ``hypothesis`` draws random forms whose checkpoints are written as
plain lambdas (so the engine may keep their answers): reading one field or several, steps,
``fired``, the open step, a global constant, a closure variable, every value at once, a
counter outside the form (which must be asked every time), and raising on some answers. Each
random move is planned on the engine as it is and with ``evaluate_from_scratch`` in its place:
the two give the same commit, evaluation, edges and keys, or raise the same error.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from datetime import timedelta
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forms import Checkpoint, FormDef, Step, compile_form, engine, field
from forms.compiled import CompiledForm
from forms.engine import evaluate, evaluate_from_scratch, transition
from forms.errors import InvalidFormDefinition
from forms.evaluation import PredicateError, call_predicate
from forms.instance import apply_commit
from forms.marked import Marked
from forms.predicates import watched
from tests.unit.test_incremental import (
    StepPlan,
    executor,
    fresh_instance,
    moves,
    outcome,
    plan_move,
    readings,
    step_classes,
)
from tests.unit.test_incremental import form_plans as field_plans

CAP = "b"
TICKS = [0]  # state outside the form: a predicate reading it is asked on every commit
NAMESPACE: dict[str, Any] = {"CAP": CAP, "TICKS": TICKS}


def _ticking() -> bool:
    return TICKS[0] % 3 == 0


NAMESPACE["ticking"] = _ticking

# ---------------------------------------------------------------- predicates as source


def leaf_sources(
    fields: list[str], steps: list[str], checkpoints: list[str]
) -> st.SearchStrategy[str]:
    leaves: list[st.SearchStrategy[str]] = [
        st.sampled_from(["True", "ticking()", "\"'a'\" in f'{v!r}'"]),
    ]
    if fields:
        pick = st.sampled_from(fields)
        leaves += [
            st.builds("v.{} == {!r}".format, pick, st.sampled_from(["a", "b", "c"])),
            st.builds("v.{} is not None".format, pick),
            st.builds("v.{} == CAP".format, pick),
            st.builds("v.{} == k".format, pick),  # ``k``: a closure variable
            st.builds("(v.{} == 'c' and 1 // 0 == 0)".format, pick),  # raises on 'c'
            st.builds("len([x for x in (v.{}, v.{}) if x]) == 2".format, pick, pick),
        ]
    if steps:
        pick = st.sampled_from(steps)
        open_step = st.builds("s.open_step == {!r}".format, pick)
        leaves += [
            st.builds("s.step_complete({!r})".format, pick),
            st.builds("s.step_applies({!r})".format, pick),
            open_step,
            open_step,  # it moves on a few commits only: drawn more often
        ]
    if checkpoints:
        fired = st.builds("s.fired({!r})".format, st.sampled_from(checkpoints))
        leaves += [fired, fired, fired]  # it moves once in a run: drawn more often
    return st.recursive(
        st.one_of(leaves),
        lambda inner: st.one_of(
            st.builds("(not {})".format, inner),
            st.builds("({} and {})".format, inner, inner),
            st.builds("({} or {})".format, inner, inner),
        ),
        max_leaves=4,
    )


def from_source(text: str, arity: int) -> Callable[..., Any]:
    """The predicate ``text`` as a lambda of the values (and the state), in a closure over
    ``k`` = 'a', with ``NAMESPACE`` its globals."""
    made = eval(f"lambda k: lambda v{', s' if arity == 2 else ''}: {text}", NAMESPACE)
    return made("a")  # type: ignore[no-any-return]


@st.composite
def checkpoint_forms(draw: st.DrawFn) -> tuple[CompiledForm, list[str]]:
    steps, _, closes = draw(field_plans())
    field_ids = [f.id for s in steps for f in s.fields]
    step_ids = [s.id for s in steps]
    sources: list[str] = []
    checkpoints: list[Checkpoint] = []
    for c in range(draw(st.integers(1, 3))):  # each may ask whether those before fired
        names = [f"c{i}" for i in range(c + 1)]
        text = draw(leaf_sources(field_ids, step_ids, names))
        arity = 2 if "s." in text or draw(st.booleans()) else 1
        sources.append(text)
        run = executor if draw(st.booleans()) else None
        checkpoints.append(Checkpoint(id=f"c{c}", when=from_source(text, arity), run=run))
    return build(steps, checkpoints, closes), sources


def build(steps: list[StepPlan], checkpoints: list[Checkpoint], closes: bool) -> CompiledForm:
    """The form the plans draw, with no field or step executors (the checkpoints' own)."""
    definition = FormDef(
        id="random",
        version=1,
        title="Random",
        steps=step_classes(steps, hooks=False),
        checkpoints=checkpoints,
        closes_on_complete=closes,
    )
    return compile_form(definition)


def busy_moves(form_fields: int) -> st.SearchStrategy[list[Any]]:
    """Random moves, most of them fills (what changes what checkpoints read), the rest as
    ``tests.unit.test_incremental.moves`` draws them."""
    index = st.integers(0, form_fields - 1)
    fill = st.tuples(
        st.just("fill"),
        st.lists(st.tuples(index, st.sampled_from(["a", "b", "c"])), min_size=1, max_size=3),
    )
    other = moves(form_fields, longest=1).map(lambda drawn: drawn[0])
    return st.lists(st.one_of(fill, fill, fill, other), min_size=1, max_size=25)


def planned(form: CompiledForm, instance: Any, move: Any, now: Any) -> tuple[Any, Any]:
    """The move's transition, or the error it raised (by type and message)."""
    try:
        return plan_move(form, instance, move, now), None
    except (PredicateError, InvalidFormDefinition) as error:
        return None, (type(error), str(error))


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_checkpoint_answers_kept_match_the_oracle(data: st.DataObject) -> None:
    """GIVEN a random form whose checkpoints read fields, steps, ``fired``, the open step, a
    global, a closure variable, every value, a counter outside the form, or raise
    WHEN random moves are planned (the counter moving between some of them)
    THEN the engine and the oracle give the same outcome or the same error, and the stored
    instance evaluates the same both ways."""
    form, _ = data.draw(checkpoint_forms())
    instance = fresh_instance(form)
    TICKS[0] = 0
    for n, move in enumerate(data.draw(busy_moves(len(form.fields)))):
        now = fresh_instance(form).created_at + timedelta(seconds=n + 1)
        if instance.state.status != "open":
            break
        TICKS[0] += data.draw(st.integers(0, 1))
        step, error = planned(form, instance, move, now)
        with patch.object(engine, "evaluate", evaluate_from_scratch):
            oracle, oracle_error = planned(form, instance, move, now)
        assert error == oracle_error, move
        if step is None or oracle is None:
            assert step is None and oracle is None
            continue
        assert outcome(step) == outcome(oracle), move
        instance = apply_commit(instance, step.commit)
        try:
            incremental = readings(evaluate(form, instance))
        except PredicateError as raised:
            with pytest.raises(PredicateError, match=str(raised)[:20]):
                evaluate_from_scratch(form, instance)
            continue
        assert incremental == readings(evaluate_from_scratch(form, instance))


# ---------------------------------------------------------------- which code is watched

TODAY = dt.date(2026, 1, 1)


def _module_reader(v: Any) -> bool:
    return bool(dt.date.today() > v.day)


@pytest.mark.parametrize(
    ("when", "kept"),
    [
        (lambda v: v.total is not None and v.total > 5, True),
        (lambda v, s: s.fired("cap") and s.step_complete("trip"), True),
        (lambda v: any(x == v.mode for x in ("air", "car")), True),
        (lambda v: v.day is not None and v.day < TODAY, True),  # a constant global
        (lambda v: len(v.name or "") > 3, True),  # a pure built-in
        (lambda v: v.day is not None and v.day > v.day.today(), False),  # a clock
        (lambda v: v.day is not None and v.day > dt.date.today(), False),  # a module
        (lambda v: _module_reader(v), False),  # noqa: PLW0108 (a function that reads a module)
        (lambda v: TICKS[0] > 0, False),  # a mutable global
        (lambda v: print(v) is None, False),  # I/O
        (lambda v: v._seen is None, False),  # a private attribute
        (lambda v: getattr(v, "x") is None, False),  # noqa: B009 (a look-up by any name)
        (str.isdigit, False),  # not a Python function
    ],
)
def test_only_code_that_reads_what_the_engine_sees_is_kept(when: Any, kept: bool) -> None:
    """GIVEN a checkpoint predicate WHEN its code is looked at THEN its answers may be kept
    only when it loads constants, pure built-ins and functions that pass themselves."""
    assert (watched(when) is not None) == kept


def test_a_rule_compiled_from_a_document_is_kept() -> None:
    """GIVEN a predicate compiled from a form document's rule (a closure over its parts)
    WHEN looked at THEN its answers may be kept: a rule reads only the values."""
    from forms.documents.model import Condition
    from forms.documents.rules import RuleField, compile_rule
    from forms.schema import field_type

    fields = {"mode": RuleField("text", field_type(str), 0)}
    rule, _ = compile_rule(Condition(field="mode", op="answered"), fields, 1, "checkpoint")
    assert watched(rule) is not None


def test_a_closure_over_a_list_or_writing_its_closure_is_asked_every_time() -> None:
    """GIVEN predicates closing over a list, and one that rebinds its closure variable
    WHEN looked at THEN neither is kept; one closing over a constant is."""
    seen: list[int] = []
    count = 0
    limit = 3

    def rebinds(v: Any) -> bool:
        nonlocal count
        count += 1
        return True

    assert watched(lambda v: len(seen) > 0) is None
    assert watched(rebinds) is None
    assert watched(lambda v: v.n is not None and v.n > limit) is not None


# ---------------------------------------------------------------- asked, or not


def _form(when: Callable[..., Any]) -> CompiledForm:
    class Trip(Step, id="trip", title="Trip"):
        mode: str = field("Mode")
        total: int | None = field("Total")
        note: str | None = field("Note")

    return compile_form(
        FormDef(id="t", version=1, title="T", steps=[Trip], checkpoints=[Checkpoint("cap", when)])
    )


def _asks(form: CompiledForm, fills: list[dict[str, Any]]) -> int:
    """How many times the checkpoint's predicate is run over ``fills``, each committed."""
    instance = fresh_instance(form)
    now = instance.created_at
    runs = [0]

    def counted(*args: Any) -> Any:
        runs[0] += 1
        return call_predicate(*args)

    with (
        patch("forms.edges.call_predicate", counted),
        patch("forms.predicates.call_predicate", counted),
    ):
        for values in fills:
            now += timedelta(seconds=1)
            step = transition(form, instance, _changes(form, instance, values, now), now)
            instance = apply_commit(instance, step.commit)
    return runs[0]


def _changes(form: CompiledForm, instance: Any, values: dict[str, Any], now: Any) -> Any:
    from forms.operations import Author, plan_fill

    author = Author(source="agent", actor="t", tool_call_id="t")
    return plan_fill(form, instance, values, author, now).changes


def test_a_kept_answer_is_reused_until_a_field_it_read_changes() -> None:
    """GIVEN a checkpoint reading ``total`` WHEN other fields are written THEN it is asked
    once; WHEN ``total`` is written THEN it is asked again."""
    form = _form(lambda v: v.total is not None and v.total > 5)
    start = [{"mode": "air"}, {"note": "w"}]  # each walks every hook (nothing carried yet)
    walked = _asks(form, start)
    assert _asks(form, [*start, {"note": "x"}, {"note": "y"}, {"mode": "car"}]) == walked + 1
    assert _asks(form, [*start, {"note": "x"}, {"total": 3}, {"note": "y"}]) == walked + 2


def test_a_predicate_reading_the_clock_is_asked_on_every_commit() -> None:
    """GIVEN a checkpoint reading the clock WHEN fields it does not read are written THEN
    it is asked on every commit, as the guide promises."""
    form = _form(lambda v: dt.datetime.now().year > 2000 and v.total is None)
    start = [{"mode": "air"}, {"note": "w"}]
    walked = _asks(form, start)
    assert _asks(form, [*start, {"note": "x"}, {"note": "y"}, {"mode": "car"}]) == walked + 3


def test_a_rebound_global_asks_again() -> None:
    """GIVEN a checkpoint comparing with a global constant, answered and kept WHEN the
    constant is rebound THEN the next commit asks again and answers with the new value."""
    form = _form(lambda v: v.mode == CAP)
    instance = fresh_instance(form)
    now = instance.created_at
    hook = "checkpoint.cap"
    for note in ("w", "x", "y"):  # the last is asked and kept
        step = transition(
            form, instance, _changes(form, instance, {"mode": "a", "note": note}, now), now
        )
        instance = apply_commit(instance, step.commit)
    assert instance.state.hooks.asked is not None  # type: ignore[attr-defined]
    assert not instance.state.hooks[hook].holds
    with patch(f"{__name__}.CAP", "a"):
        second = transition(form, instance, _changes(form, instance, {"note": "n"}, now), now)
        scratch = evaluate_from_scratch(form, second.after, previous=instance.state.hooks)
    assert second.commit.state.hooks[hook].holds
    assert readings(second.evaluation) == readings(scratch)


def test_a_rebound_closure_variable_asks_again() -> None:
    """GIVEN a checkpoint comparing with a variable of its closure, answered and kept WHEN
    the enclosing function rebinds the variable THEN the next commit asks again."""
    limit = 5

    def when(v: Any) -> bool:
        return v.total is not None and v.total > limit

    form = _form(when)
    instance = fresh_instance(form)
    now = instance.created_at
    for note in ("w", "x", "y"):
        changes = _changes(form, instance, {"total": 3, "note": note}, now)
        instance = apply_commit(instance, transition(form, instance, changes, now).commit)
    assert not instance.state.hooks["checkpoint.cap"].holds
    limit = 1
    step = transition(form, instance, _changes(form, instance, {"note": "n"}, now), now)
    assert step.commit.state.hooks["checkpoint.cap"].holds


def _two_steps(checkpoints: list[Checkpoint]) -> CompiledForm:
    class First(Step, id="first", title="First"):
        total: int = field("Total")
        note: str | None = field("Note")

    class Second(Step, id="second", title="Second"):
        more: str = field("More")

    steps: list[type[Step]] = [First, Second]
    return compile_form(
        FormDef(id="t2", version=1, title="T", steps=steps, checkpoints=checkpoints)
    )


def _walk(form: CompiledForm, fills: list[dict[str, Any]]) -> list[dict[str, bool]]:
    """Each commit's checkpoint conditions over ``fills``, each held to the oracle's."""
    instance = fresh_instance(form)
    now = instance.created_at
    held = []
    for values in fills:
        now += timedelta(seconds=1)
        step = transition(form, instance, _changes(form, instance, values, now), now)
        with patch.object(engine, "evaluate", evaluate_from_scratch):
            oracle = transition(form, instance, _changes(form, instance, values, now), now)
        assert outcome(step) == outcome(oracle), values
        instance = apply_commit(instance, step.commit)
        hooks = instance.state.hooks
        held.append({h: hooks[h].holds for h in hooks if h.startswith("checkpoint.")})
    return held


def test_a_kept_answer_that_read_fired_is_asked_again_when_that_checkpoint_rises() -> None:
    """GIVEN a checkpoint asking whether another fired, answered and kept WHEN the other
    rises THEN it is asked again in that same commit (the rise counts from its edge on)."""
    form = _two_steps(
        [
            Checkpoint("big", when=lambda v: v.total is not None and v.total > 5),
            Checkpoint("after", when=lambda v, s: s.fired("big")),
        ]
    )
    fills: list[dict[str, Any]] = [
        {"note": "w"},
        {"note": "x"},
        {"note": "y"},
        {"total": 9},
        {"note": "z"},
    ]
    held = _walk(form, fills)
    assert [h["checkpoint.after"] for h in held] == [False, False, False, True, True]


def test_a_kept_answer_that_read_the_open_step_is_asked_again_when_it_moves() -> None:
    """GIVEN a checkpoint reading the open step, answered and kept WHEN a fill completes
    the first step THEN it is asked again and holds."""
    form = _two_steps([Checkpoint("on", when=lambda v, s: s.open_step == "second")])
    held = _walk(form, [{"note": "w"}, {"note": "x"}, {"note": "y"}, {"total": 1}, {"note": "z"}])
    assert [h["checkpoint.on"] for h in held] == [False, False, False, True, True]


def test_what_is_kept_is_in_memory_only() -> None:
    """GIVEN hook states carrying kept answers WHEN they are copied by the engine, or read
    back as plain data (as from storage) THEN the engine's copy carries them, the plain
    data does not (a cold read asks), and the stored form of the states is unchanged."""
    form = _form(lambda v: v.total is not None)
    instance = fresh_instance(form)
    now = instance.created_at
    for note in ("w", "x", "y"):
        step = transition(form, instance, _changes(form, instance, {"note": note}, now), now)
        instance = apply_commit(instance, step.commit)
    hooks = instance.state.hooks
    assert isinstance(hooks, Marked) and hooks.asked is not None
    assert Marked.copy_of(hooks).asked is hooks.asked
    assert Marked(dict(hooks)).asked is None
    assert Marked.copy_of(hooks, carry=False).asked is None
    assert (
        instance.state.model_dump_json()
        == type(instance.state)
        .model_validate_json(instance.state.model_dump_json())
        .model_dump_json()
    )
