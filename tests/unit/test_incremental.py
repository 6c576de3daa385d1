"""Incremental evaluation against the from-scratch oracle, on random forms and random writes.

``hypothesis`` draws a form (steps and fields, each field or step gated by a predicate built
from reads of earlier fields and questions about earlier steps: equality, presence, ``and`` /
``or`` with short circuits, so what a predicate reads depends on the answers; some read every
value through ``repr``; checkpoints that read values and ``fired``; executors on some hooks)
and a sequence of moves (fills, retractions, declines, undo, redo, jumps, executor runs that
finish, fail or reject). Each move is planned twice on the same instance: with the engine as
it is (incremental: the readings the logs carry, advanced by what the commit touches) and with
``evaluate`` replaced by ``evaluate_from_scratch`` everywhere in the engine. The two must
give the same commit (field changes, hook states, outbox keys) and the same evaluation, and the
stored instance, evaluated incrementally, must agree with the oracle on it.

GIVEN a random form and instance WHEN a random move is planned and committed THEN the
incremental path and the oracle agree on statuses, held answers, live values, steps, the open
step, readiness, edges and idempotency keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal
from unittest.mock import patch

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forms import Checkpoint, FormDef, Step, compile_form, engine, field
from forms.compiled import CompiledForm
from forms.engine import Evaluation, Transition, evaluate, evaluate_from_scratch, transition
from forms.errors import CannotRevise
from forms.evaluation import StepSummary, blocking, counts, field_status, reading, typed_value
from forms.instance import (
    FieldChange,
    FormInstance,
    InstanceState,
    Rejection,
    Revision,
    StepOverride,
    apply_commit,
)
from forms.keys import idempotency_key
from forms.operations import Author, plan_declines, plan_fill, plan_revise, touched_steps
from forms.registry import migration_commit
from forms.surface.view import status_line, step_view
from tests.unit.test_properties import comparable

T0 = datetime(2025, 1, 1, tzinfo=UTC)
AUTHOR = Author(source="agent", actor="tester", tool_call_id="t")
CHOICES = ("a", "b", "c")

# ---------------------------------------------------------------- random predicates

Spec = tuple[Any, ...]
"""A predicate as data: ``("is", field, value)``, ``("set", field)``, ``("done", step)``,
``("on", step)``, ``("all",)`` (reads every value), ``("not", p)``, ``("and", p, q)``,
``("or", p, q)``, ``("fired", checkpoint)`` (checkpoints only)."""


def predicate_specs(
    fields: list[str], steps: list[str], checkpoints: list[str]
) -> st.SearchStrategy[Spec]:
    leaves: list[st.SearchStrategy[Spec]] = []
    if fields:
        leaves.append(st.tuples(st.just("is"), st.sampled_from(fields), st.sampled_from(CHOICES)))
        leaves.append(st.tuples(st.just("set"), st.sampled_from(fields)))
        leaves.append(st.just(("all",)))
    if steps:
        leaves.append(st.tuples(st.just("done"), st.sampled_from(steps)))
        leaves.append(st.tuples(st.just("on"), st.sampled_from(steps)))
    if checkpoints:
        leaves.append(st.tuples(st.just("fired"), st.sampled_from(checkpoints)))
    if not leaves:
        return st.just(("true",))
    return st.recursive(
        st.one_of(leaves),
        lambda inner: st.one_of(
            st.tuples(st.just("not"), inner),
            st.tuples(st.just("and"), inner, inner),
            st.tuples(st.just("or"), inner, inner),
        ),
        max_leaves=4,
    )


def run_spec(spec: Spec, v: Any, s: Any) -> bool:
    kind = spec[0]
    if kind == "is":
        return bool(getattr(v, spec[1]) == spec[2])
    if kind == "set":
        return getattr(v, spec[1]) is not None
    if kind == "done":
        return bool(s.step_complete(spec[1]))
    if kind == "on":
        return bool(s.step_applies(spec[1]))
    if kind == "all":
        return "'a'" in repr(v)
    if kind == "fired":
        return bool(s.fired(spec[1]))
    if kind == "not":
        return not run_spec(spec[1], v, s)
    if kind == "and":
        return run_spec(spec[1], v, s) and run_spec(spec[2], v, s)
    if kind == "or":
        return run_spec(spec[1], v, s) or run_spec(spec[2], v, s)
    return True


def predicate(spec: Spec) -> Any:
    def when(v: Any, s: Any) -> bool:
        return run_spec(spec, v, s)

    return when


def executor(ctx: Any) -> None:
    del ctx


# ---------------------------------------------------------------- random forms


@dataclass(frozen=True)
class FieldPlan:
    id: str
    kind: Literal["choice", "optional", "no_preference"]
    when: Spec | None
    on_fill: bool


@dataclass(frozen=True)
class StepPlan:
    id: str
    when: Spec | None
    fields: tuple[FieldPlan, ...]
    on_complete: bool


Plans = tuple[list[StepPlan], list[tuple[str, Spec, bool]], bool]


@st.composite
def form_plans(
    draw: st.DrawFn, step_count: tuple[int, int] = (1, 4), field_count: tuple[int, int] = (1, 4)
) -> Plans:
    steps: list[StepPlan] = []
    earlier_fields: list[str] = []
    for k in range(draw(st.integers(*step_count))):
        step_id = f"s{k}"
        earlier_steps = [s.id for s in steps]
        when = (
            draw(predicate_specs(earlier_fields, earlier_steps, []))
            if draw(st.booleans()) and (earlier_fields or earlier_steps)
            else None
        )
        fields: list[FieldPlan] = []
        for j in range(draw(st.integers(*field_count))):
            field_id = f"f{k}_{j}"
            gated = draw(st.booleans()) and bool(earlier_fields or earlier_steps)
            fields.append(
                FieldPlan(
                    field_id,
                    draw(st.sampled_from(["choice", "choice", "optional", "no_preference"])),
                    draw(predicate_specs(earlier_fields, earlier_steps, [])) if gated else None,
                    draw(st.booleans()),
                )
            )
            earlier_fields.append(field_id)
        steps.append(StepPlan(step_id, when, tuple(fields), draw(st.booleans())))
    checkpoints: list[tuple[str, Spec, bool]] = []
    for c in range(draw(st.integers(0, 2))):
        names = [f"c{i}" for i in range(c + 1)]
        spec = draw(predicate_specs(earlier_fields, [s.id for s in steps], names))
        checkpoints.append((f"c{c}", spec, draw(st.booleans())))
    return steps, checkpoints, draw(st.booleans())


def build_form(plans: Plans, version: int = 1) -> CompiledForm:
    steps, checkpoints, closes = plans
    definition = FormDef(
        id="random",
        version=version,
        title="Random",
        steps=step_classes(steps),
        checkpoints=[
            Checkpoint(id=c, when=predicate(spec), run=executor if run else None)
            for c, spec, run in checkpoints
        ],
        closes_on_complete=closes,
    )
    return compile_form(definition)


def step_classes(steps: list[StepPlan], hooks: bool = True) -> list[type[Step]]:
    """The steps' classes as ``steps`` plans them (with their on-fill and on-complete
    executors unless ``hooks`` is false)."""
    classes: list[type[Step]] = []
    for step in steps:
        annotations: dict[str, Any] = {}
        namespace: dict[str, Any] = {"__annotations__": annotations}
        for f in step.fields:
            choice = Literal["a", "b", "c"]
            annotations[f.id] = choice | None if f.kind == "optional" else choice
            namespace[f.id] = field(
                f"Label {f.id}",
                when=predicate(f.when) if f.when is not None else None,
                on_fill=executor if hooks and f.on_fill else None,
                no_preference=f.kind == "no_preference",
            )
        settings_: dict[str, Any] = {"id": step.id, "title": f"Step {step.id}"}
        if step.when is not None:
            settings_["when"] = predicate(step.when)
        if hooks and step.on_complete:
            settings_["on_complete"] = executor
        classes.append(type(f"Step_{step.id}", (Step,), namespace, **settings_))
    return classes


# ---------------------------------------------------------------- random moves

Move = tuple[Any, ...]


def moves(
    form_fields: int, form_steps: int = 4, longest: int = 12, migrate: bool = False
) -> st.SearchStrategy[list[Move]]:
    index = st.integers(0, form_fields - 1)
    kinds: list[st.SearchStrategy[Move]] = [
        st.tuples(
            st.just("fill"),
            st.lists(st.tuples(index, st.sampled_from(CHOICES)), min_size=1, max_size=3),
        ),
        st.tuples(st.just("revise"), index, st.sampled_from(["retract", "undo", "redo"])),
        st.tuples(st.just("decline"), index),
        st.tuples(st.just("stale"), index),
        st.tuples(
            st.just("jump"),
            st.integers(0, max(3, form_steps - 1)),
            st.sampled_from(["focus", "revisit"]),
        ),
        st.tuples(st.just("run"), st.sampled_from(["done", "failed", "reject"])),
    ]
    if migrate:
        kinds.append(st.just(("migrate",)))
    return st.lists(st.one_of(kinds), min_size=1, max_size=longest)


def plan_move(
    form: CompiledForm, instance: FormInstance, move: Move, now: datetime
) -> Transition | None:
    """The transition ``move`` makes on ``instance`` (None: the move cannot apply)."""
    field_ids = list(form.fields)
    n = len(field_ids)  # indices drawn for another version of the form wrap round
    kind = move[0]
    if kind == "fill":
        patch_ = {field_ids[i % n]: value for i, value in move[1]}
        plan = plan_fill(form, instance, patch_, AUTHOR, now)
    elif kind == "decline":
        plan = plan_declines(
            form,
            instance,
            plan_fill(form, instance, {}, AUTHOR, now),
            [field_ids[move[1] % n]],
            AUTHOR,
            now,
        )
    elif kind == "revise":
        try:
            plan = plan_revise(form, instance, field_ids[move[1] % n], move[2], None, AUTHOR, now)
        except CannotRevise:
            return None
    elif kind == "stale":
        # an answer kept from an earlier version that this one refuses, as a migration keeps it
        log = instance.field(field_ids[move[1] % n])
        stale = Revision(kind="value", value="z", by="migration", at=now, prev=log.cursor)
        changes = {field_ids[move[1] % n]: FieldChange(append=(stale,), cursor=log.count)}
        return transition(form, instance, changes, now)
    elif kind == "jump":
        steps = list(form.steps)
        step = steps[move[1] % len(steps)]
        override = StepOverride(step=step, kind=move[2], by="test")
        state = instance.state.model_copy(update={"override": override})
        return transition(form, instance, {}, now, state=state)
    else:
        pending = [e for e in instance.state.outbox.values() if e.status == "pending"]
        if not pending:
            return None
        entry = pending[0]
        outbox = dict(instance.state.outbox)
        status = "failed" if move[1] == "failed" else "done"
        outbox[entry.key] = entry.model_copy(update={"status": status, "finished_at": now})
        rejections = list(instance.state.rejections)
        if move[1] == "reject":
            rejections.append(Rejection(key=entry.key, hook_id=entry.hook_id, message="no", at=now))
        state = instance.state.model_copy(update={"outbox": outbox, "rejections": rejections})
        return transition(form, instance, {}, now, state=state, cause=entry.key)
    touched = touched_steps(form, plan.changes, plan.unchanged)
    return transition(form, instance, plan.changes, now, touched_steps=touched)


# ---------------------------------------------------------------- what must agree


def readings(ev: Evaluation) -> tuple[Any, ...]:
    """What must agree, in order too: the field and hook orders are part of the results."""
    return (*comparable(ev), list(ev.fields), list(ev.hooks))


def outcome(step: Transition) -> tuple[Any, ...]:
    commit = step.commit
    return (
        readings(step.evaluation),
        dict(commit.fields),
        commit.state.model_dump(),
        [e.key for e in step.dispatch],
        step.orphaned(),
        step.restored(),
    )


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_incremental_evaluation_matches_the_oracle(data: st.DataObject) -> None:
    form = build_form(data.draw(form_plans()))
    instance = FormInstance(
        id="fi_1",
        form_id=form.id,
        form_version=form.version,
        principal="p",
        conversation_id="c",
        created_at=T0,
        state=InstanceState(updated_at=T0),
    )
    for n, move in enumerate(data.draw(moves(len(form.fields)))):
        now = T0 + timedelta(seconds=n + 1)
        if instance.state.status != "open":
            break
        step = plan_move(form, instance, move, now)
        with patch.object(engine, "evaluate", evaluate_from_scratch):
            oracle = plan_move(form, instance, move, now)
        assert (step is None) == (oracle is None)
        if step is None or oracle is None:
            continue
        assert outcome(step) == outcome(oracle), move
        assert readings(step.evaluation) == readings(
            evaluate_from_scratch(form, step.after, previous=instance.state.hooks)
        )
        instance = apply_commit(instance, step.commit)
        assert readings(evaluate(form, instance)) == readings(evaluate_from_scratch(form, instance))
        keys = [e.key for e in step.dispatch]
        assert keys == [
            idempotency_key(instance.id, e.hook_id, e.occurrence) for e in step.dispatch
        ]


# ---------------------------------------------------------------- many steps


def views(form: CompiledForm, instance: FormInstance, ev: Evaluation) -> tuple[Any, ...]:
    """What the agent reads of the steps: the status line, and every step's read (its place
    ``k/N`` among the steps that apply, its state, its rows)."""
    return (
        status_line(form, instance, ev),
        [step_view(form, instance, ev, step_id) for step_id in form.steps],
    )


def fresh_instance(form: CompiledForm) -> FormInstance:
    return FormInstance(
        id="fi_1",
        form_id=form.id,
        form_version=form.version,
        principal="p",
        conversation_id="c",
        created_at=T0,
        state=InstanceState(updated_at=T0),
    )


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_step_bookkeeping_on_many_step_forms_matches_the_oracle(data: st.DataObject) -> None:
    """GIVEN a random form of many small steps (gated steps and fields, so answers turn steps
    on and off and leave answers held) and a second version of it WHEN random moves are
    committed (fills, take-backs, undo and redo, declines, answers a version refuses, focus
    and revisit jumps, executor runs, and a migration onto the second version) THEN the
    incremental step summary (which steps apply, which are still to do, the open step) and
    everything the agent reads of the steps (the status line with its place ``k/N``, its
    next previews and ``+N more steps``, every step's read) equal the from-scratch ones."""
    form = build_form(data.draw(form_plans((5, 14), (1, 2))))
    later = build_form(data.draw(form_plans((5, 14), (1, 2))), version=2)
    instance = fresh_instance(form)
    for n, move in enumerate(data.draw(moves(len(form.fields), 14, 20, migrate=True))):
        now = T0 + timedelta(seconds=n + 1)
        if instance.state.status != "open":
            break
        if move[0] == "migrate":
            if form is later:
                continue
            commit = migration_commit(later, instance, [], now)
            instance, form = apply_commit(instance, commit), later
            ev = evaluate(form, instance)
            assert readings(ev) == readings(evaluate_from_scratch(form, instance))
            assert views(form, instance, ev) == views(
                form, instance, evaluate_from_scratch(form, instance)
            )
            continue
        step = plan_move(form, instance, move, now)
        with patch.object(engine, "evaluate", evaluate_from_scratch):
            oracle = plan_move(form, instance, move, now)
        assert (step is None) == (oracle is None)
        if step is None or oracle is None:
            continue
        assert outcome(step) == outcome(oracle), move
        scratch = evaluate_from_scratch(form, step.after, previous=instance.state.hooks)
        assert step.evaluation.steps == StepSummary.of(
            form.step_order, scratch.step_applies, scratch.step_complete
        )
        assert views(form, step.after, step.evaluation) == views(form, step.after, scratch), move
        instance = apply_commit(instance, step.commit)


def test_a_commit_updates_the_step_summary_without_a_walk_over_the_steps() -> None:
    """GIVEN an instance of a form of many steps whose readings its logs carry WHEN a fill
    into one step is committed and the status line and the step's read are built THEN the
    step summary is updated for the touched steps only: nothing walks every step
    (``StepSummary.of`` is what a pass from nothing uses)."""
    plans = (
        [StepPlan(f"s{k}", None, (FieldPlan(f"f{k}_0", "choice", None, False),), False)]
        for k in range(40)
    )
    form = build_form(([p for [p] in plans], [], False))
    instance = fresh_instance(form)
    first = plan_move(form, instance, ("fill", [(0, "a")]), T0)
    assert first is not None
    instance = apply_commit(instance, first.commit)
    evaluate(form, instance)  # the readings are derived once, and kept with the logs
    walk = AssertionError("a walk over every step")
    with (
        patch.object(StepSummary, "of", side_effect=walk),
        patch.object(engine, "find_open_step", side_effect=walk),
    ):
        step = plan_move(form, instance, ("fill", [(1, "b")]), T0 + timedelta(seconds=1))
        assert step is not None
        assert step.evaluation.open_step == "s2"
        line = status_line(form, step.after, step.evaluation)
        view = step_view(form, step.after, step.evaluation, "s2")
        # a focus on a complete step holds nothing: the open step is still the first to do
        jump = plan_move(form, apply_commit(instance, step.commit), ("jump", 0, "focus"), T0)
        assert jump is not None and jump.evaluation.open_step == "s2"
    assert line is not None and 'step 3/40 "Step s2"' in line
    assert "+34 more steps" in line
    assert view["position"] == "3/40"


def test_one_look_at_a_field_reads_as_the_readings_taken_one_by_one() -> None:
    """GIVEN fields that are required, optional and take "no preference", each with no answer,
    an answer its type accepts, one it refuses, a take-back and a decline, applying or not
    WHEN the incremental pass reads the field in one look (``reading``)
    THEN it is live, has the typed value, the status and the blocking the from-scratch walk
    takes one by one (``counts``, ``typed_value``, ``field_status``, ``blocking``)."""
    form = build_form(
        (
            [
                StepPlan(
                    "s1",
                    None,
                    (
                        FieldPlan("f_required", "choice", None, False),
                        FieldPlan("f_optional", "optional", None, False),
                        FieldPlan("f_nopref", "no_preference", None, False),
                    ),
                    False,
                )
            ],
            [],
            False,
        )
    )
    revisions: list[Revision | None] = [
        None,
        *(
            Revision(kind=kind, value=value, by="agent", at=T0)
            for kind, value in (
                ("value", "a"),
                ("value", "z"),
                ("retraction", None),
                ("decline", None),
            )
        ),
    ]
    seen = set()
    for compiled in form.fields.values():
        for revision in revisions:
            for applies in (True, False):
                live = applies and counts(compiled, revision)
                expected = (
                    live,
                    typed_value(compiled, revision) if live and revision is not None else None,
                    field_status(compiled, applies, revision, None),
                    blocking(compiled, applies, revision),
                )
                assert reading(compiled, applies, revision) == expected
                seen.add(expected[2])
    assert seen == {
        "answered",
        "invalid",
        "pending",
        "optional",
        "declined",
        "no_preference",
        "held",
        "not_applicable",
    }
