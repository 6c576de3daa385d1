"""``compile_form``: every definition rule fails loudly, naming the offender; the index it builds.

The sample steps live at module level on purpose: the compiler reads predicate and executor
source with ``ast`` (through ``forms.refs``) and resolves string annotations in the step's
module, so both need a real module behind them.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Annotated, Any, ClassVar, Literal

import pytest
from pydantic import Field

from forms.compiler import CompiledForm, compile_form, normalise
from forms.definition import Checkpoint, FormDef, Migration, Step, field
from forms.effects import Fail, Jump, Patch
from forms.engine import evaluate
from forms.errors import InvalidFormDefinition
from forms.instance import FormInstance, InstanceState
from forms.state import HookContext

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def form(*steps: type[Step], **extra: Any) -> FormDef:
    """A form around ``steps`` with valid defaults for everything else."""
    options: dict[str, Any] = {"id": "sample", "version": 1, "title": "Sample"}
    options.update(extra)
    return FormDef(steps=list(steps), **options)


def rejects(definition: FormDef, *fragments: str) -> str:
    """Compile ``definition``, expecting ``InvalidFormDefinition`` naming every fragment."""
    with pytest.raises(InvalidFormDefinition) as caught:
        compile_form(definition)
    message = str(caught.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    return message


def blank_instance(compiled: CompiledForm) -> FormInstance:
    return FormInstance(
        id="fi_1",
        form_id=compiled.id,
        form_version=compiled.version,
        principal="alice",
        conversation_id="conv-1",
        created_at=T0,
        state=InstanceState(updated_at=T0),
    )


# --------------------------------------------------------------------------- sample steps


class Basic(Step):
    title = "Basic"
    preview = "the basics"

    name: str = field("Name")


class Other(Step):
    title = "Other"

    colour: str = field("Colour")


class Untitled(Step):
    name: str = field("Name")


class NoFields(Step):
    title = "No fields"


class BadStepId(Step):
    id = "Bad-Step"
    title = "Bad step id"

    name: str = field("Name")


class BareAnnotation(Step):
    title = "Bare annotation"

    name: str = field("Name")
    nickname: str


class MissingAnnotation(Step):
    title = "Missing annotation"

    name: str = field("Name")
    nickname = field("Nickname")


class ClassVarIsNotAField(Step):
    title = "ClassVar is not a field"

    limit: ClassVar[int] = 3
    name: str = field("Name")


class SettingNamesAsFields(Step, id="event", title="Event", preview="the event"):
    id: str = field("Identifier")
    title: str = field("Job title")
    preview: str = field("Preview")
    guidance: str = field("Guidance")
    when: str = field("When did it happen")
    on_complete: str = field("Completed on")


class TitleFieldButNoTitle(Step):
    title: str = field("Job title")


class Unresolvable(Step):
    title = "Unresolvable"

    thing: NoSuchType = field("Thing")  # type: ignore[name-defined] # noqa: F821


class EmptyLabel(Step):
    title = "Empty label"

    name: str = field("   ")


class NameAgain(Step):
    title = "Name again"

    name: str = field("Second name")


class CamelAndSnake(Step):
    title = "Camel and snake"

    fullName: str = field("Name as written")  # noqa: N815
    full_name: str = field("Legal name")


class LabelIsAnotherId(Step):
    title = "Label is another id"

    contact: str = field("Email")
    email: str = field("Work address")


class AliasIsAnotherLabel(Step):
    title = "Alias is another label"

    phone: str = field("Phone", aliases=["Mobile"])
    mobile_no: str = field("Mobile")


class TwinTitleA(Step):
    id = "review"
    title = "Check"

    a: str = field("A")


class TwinTitleB(Step):
    id = "check"
    title = "Final review"

    b: str = field("B")


class Incident(Step):
    title = "Incident"

    incident_type: Literal["vehicle", "premises"] = field("Type of incident")
    vehicle_count: int = field("Vehicles involved", when=lambda v: v.incident_tpye == "vehicle")


class ReadsLater(Step):
    title = "Reads later"

    first: int = field("First", when=lambda v: v.second is not None)
    second: int = field("Second")


class ReadsItself(Step):
    title = "Reads itself"

    first: int = field("First", when=lambda v: v.first is None)


class StepReadsOwnField(Step):
    title = "Step reads own field"
    when = staticmethod(lambda v: v.inner == 1)

    inner: int = field("Inner")


class Identity(Step):
    title = "Identity"

    person: str = field("Person")


class AsksOwnStep(Step):
    title = "Asks own step"

    extra: str = field("Extra", when=lambda v, s: s.step_complete("asks_own_step"))


class AsksLaterStep(Step):
    title = "Asks later step"

    early: str = field("Early", when=lambda v, s: s.step_complete("identity"))


class AsksEarlierStep(Step):
    title = "Asks earlier step"

    fine: str = field("Fine", when=lambda v, s: s.step_complete("identity"))


class AsksTypoStep(Step):
    title = "Asks typo step"

    late: str = field("Late", when=lambda v, s: s.step_complete("identiy"))


class StepAsksItself(Step):
    title = "Step asks itself"
    when = staticmethod(lambda v, s: not s.step_complete("step_asks_itself"))

    own: str = field("Own")


class FieldAsksFired(Step):
    title = "Field asks fired"

    amount: int = field("Amount")
    reason: str = field("Reason", when=lambda v, s: s.fired("cap"))


class Amounts(Step):
    title = "Amounts"

    amount: int = field("Amount")
    track: str | None = field("Track")


class Review(Step):
    title = "Review"

    confirmed: bool = field("Confirmed")


def route_with_typo_jump(ctx: HookContext) -> Jump:
    return Jump("reviw")


def stamp_with_typo_patch(ctx: HookContext) -> Patch:
    return Patch({"trak": "fast"})


def route_fine(ctx: HookContext) -> list[Patch | Jump]:
    return [Patch({"track": "fast"}), Jump("review")]


def reads_typo_value(ctx: HookContext) -> Fail:
    return Fail(f"{ctx.values.amout} is too much")


class TypoJumpOnFill(Step):
    title = "Typo jump on fill"

    amount: int = field("Amount", on_fill=route_with_typo_jump)


class TypoJumpOnComplete(Step):
    title = "Typo jump on complete"
    on_complete = staticmethod(route_with_typo_jump)

    amount: int = field("Amount")


class NoArgs(Step):
    title = "No args"

    a: int = field("A", when=lambda: True)


class ThreeArgs(Step):
    title = "Three args"
    when = staticmethod(lambda v, s, extra: True)

    a: int = field("A")


class Typed(Step):
    title = "Typed"

    required_int: int = field("Required int")
    optional_int: int | None = field("Optional int")
    constrained: Annotated[int, Field(gt=0)] = field("Constrained")
    optional_constrained: Annotated[int, Field(gt=0)] | None = field("Optional constrained")
    when_date: date = field("When")
    full_name: str = field("Full name", aliases=["Legal name"])


def noop(ctx: HookContext) -> None:
    return None


class HookedA(Step):
    title = "Hooked A"
    on_complete = staticmethod(noop)

    a1: int = field("A1", on_fill=noop)
    a2: int = field("A2")


class HookedB(Step):
    title = "Hooked B"

    b1: int = field("B1", on_fill=noop)


class Budget(Step):
    title = "Budget"

    line: Annotated[str, Field(pattern=r"^BL-\d{4}$")] = field("Budget line", example="BL-2041")
    note: str | None = field("Note")


class BadExample(Step):
    title = "Bad example"

    line: Annotated[str, Field(pattern=r"^BL-\d{4}$")] = field("Budget line", example="BL-204")


class BlankExample(Step):
    title = "Blank example"

    line: str = field("Budget line", example=" ")


EVAL_NOPE = eval("lambda v: v.nope")
EVAL_LATER = eval("lambda v: v.later is None")


class EvalPredicate(Step):
    title = "Eval predicate"

    known: int = field("Known")
    gated: int = field("Gated", when=EVAL_NOPE)


class EvalReadsLater(Step):
    title = "Eval reads later"

    gated: int = field("Gated", when=EVAL_LATER)
    later: int = field("Later")


# --------------------------------------------------------------------------- form header


@pytest.mark.parametrize("bad_id", ["", "Travel", "1st-form", "has space", "a_b", "x" * 64])
def test_bad_form_id_is_rejected_naming_it(bad_id: str) -> None:
    # GIVEN a form whose id is not lowercase-hyphenated
    # WHEN it compiles / THEN the error quotes the id
    rejects(form(Basic, id=bad_id), "form id", repr(bad_id))


@pytest.mark.parametrize("bad_version", [0, -1, "1", 1.0])
def test_bad_version_is_rejected_naming_it(bad_version: Any) -> None:
    # GIVEN a version that is not a positive integer / THEN the error shows what was given
    rejects(form(Basic, version=bad_version), "'sample'", "version", repr(bad_version))


def test_boolean_version_is_rejected() -> None:
    # GIVEN version=True (a bool is an int in Python) / THEN it is still not a version
    rejects(form(Basic, version=True), "version must be a positive integer", "True")


def test_empty_title_is_rejected() -> None:
    rejects(form(Basic, title="   "), "'sample'", "title is empty")


def test_non_callable_form_on_complete_is_rejected() -> None:
    rejects(form(Basic, on_complete="submit"), "on_complete is not callable")


# --------------------------------------------------------------------------- steps


def test_a_form_without_steps_is_rejected() -> None:
    rejects(form(), "'sample'", "has no steps")


def test_a_step_that_is_not_a_step_subclass_is_rejected() -> None:
    rejects(form(dict), "is not a Step subclass")  # type: ignore[arg-type]


def test_duplicate_step_id_is_rejected_naming_it() -> None:
    rejects(form(Basic, Other, Basic), "step id 'basic' is used twice")


def test_bad_step_id_is_rejected_naming_it() -> None:
    rejects(form(BadStepId), "'Bad-Step'", "snake_case")


def test_step_without_title_is_rejected_naming_it() -> None:
    rejects(form(Untitled), "step 'untitled' has no title")


def test_step_without_fields_is_rejected_naming_it() -> None:
    rejects(form(Basic, NoFields), "step 'no_fields' declares no fields")


def test_annotation_without_field_call_is_rejected_naming_it() -> None:
    # GIVEN `nickname: str` with no `= field(...)`
    # THEN the error names both the step and the attribute
    rejects(
        form(BareAnnotation),
        "step 'bare_annotation'",
        "'nickname' is annotated but not declared with field(...)",
    )


def test_field_call_without_annotation_is_rejected_naming_it() -> None:
    # GIVEN `nickname = field("Nickname")` with no annotation (so no type)
    # THEN the compiler names it rather than silently dropping the field
    rejects(
        form(MissingAnnotation),
        "step 'missing_annotation'",
        "'nickname' is declared with field(...) but has no type annotation",
    )


def test_classvar_annotations_are_not_fields() -> None:
    compiled = compile_form(form(ClassVarIsNotAField))
    assert list(compiled.fields) == ["name"]


def test_any_name_a_person_would_choose_works_as_a_field() -> None:
    # GIVEN a step whose fields are named like step settings, its settings given as keywords
    compiled = compile_form(form(SettingNamesAsFields))
    # THEN they are all fields, and the step keeps its own id, title and preview
    assert list(compiled.fields) == ["id", "title", "preview", "guidance", "when", "on_complete"]
    step = compiled.steps["event"]
    assert (step.title, step.preview, step.when, step.on_complete) == (
        "Event",
        "the event",
        None,
        None,
    )


def test_a_field_called_title_does_not_stand_in_for_the_steps_title() -> None:
    rejects(form(TitleFieldButNoTitle), "step 'title_field_but_no_title' has no title")


def test_unresolvable_annotation_is_rejected_naming_field_and_type() -> None:
    rejects(form(Unresolvable), "step 'unresolvable'", "'thing'", "NoSuchType")


def test_empty_label_is_rejected_naming_the_field() -> None:
    rejects(form(EmptyLabel), "field 'name'", "empty label")


def test_an_example_is_kept_on_the_compiled_field_and_shown_in_its_type_string() -> None:
    # GIVEN a patterned field declared with an example
    compiled = compile_form(form(Budget))
    # THEN the compiled field carries it, and the agent reads it instead of the regex
    line = compiled.fields["line"]
    assert (line.example, line.type.type_string) == ("BL-2041", "text like BL-2041")
    assert compiled.fields["note"].example is None


def test_an_example_the_type_rejects_is_rejected_naming_field_and_reason() -> None:
    rejects(form(BadExample), "field 'line'", "example 'BL-204' is not a valid answer", "pattern")


def test_a_blank_example_is_rejected() -> None:
    rejects(form(BlankExample), "field 'line'", "example must be a non-empty string")


def test_a_field_declared_in_two_steps_is_rejected_naming_both() -> None:
    rejects(form(Basic, NameAgain), "field 'name'", "'basic'", "'name_again'")


# --------------------------------------------------------------------------- aliases


def test_camel_and_snake_ids_that_normalise_alike_collide() -> None:
    rejects(form(CamelAndSnake), "'fullName'", "'full_name'", "collide", "'fullname'")


def test_a_label_colliding_with_another_fields_id_is_rejected() -> None:
    # GIVEN field `contact` labelled "Email" and a field whose id is `email`
    rejects(form(LabelIsAnotherId), "'contact'", "'email'", "collide")


def test_an_alias_colliding_with_another_fields_label_is_rejected() -> None:
    rejects(form(AliasIsAnotherLabel), "'phone'", "'mobile_no'", "collide")


def test_step_titles_colliding_with_another_steps_id_are_rejected() -> None:
    # GIVEN step `check` titled "Final review" after step `review` titled "Check"
    with pytest.raises(InvalidFormDefinition, match=r"'review' and 'check' collide"):
        compile_form(form(TwinTitleA, TwinTitleB))


def test_alias_index_resolves_every_spelling_to_the_same_field() -> None:
    compiled = compile_form(form(Typed))
    for spelling in ("Full name", "full-name", "FullName", "full_name", "FULL NAME", "Legal name"):
        assert compiled.resolve_field(spelling) == "full_name", spelling
    assert compiled.resolve_field("surname") is None
    assert normalise("FullName") == normalise("full-name") == "fullname"


def test_step_aliases_resolve_titles() -> None:
    compiled = compile_form(form(Identity, Review))
    assert compiled.resolve_step("Identity") == "identity"
    assert compiled.resolve_step("REVIEW") == "review"
    assert compiled.resolve_step("reviw") is None
    assert compiled.suggest_steps("reviw") == ["review"]


@pytest.mark.parametrize("typo", ["ful_nme", "fullnam", "Full nmae"])
def test_suggest_fields_offers_did_you_mean(typo: str) -> None:
    compiled = compile_form(form(Typed))
    assert compiled.suggest_fields(typo) == ["full_name"]


def test_suggest_fields_offers_nothing_for_noise() -> None:
    assert compile_form(form(Typed)).suggest_fields("zzzz") == []


# --------------------------------------------------------------------------- references


def test_typo_in_predicate_names_the_field_and_suggests_the_right_one() -> None:
    message = rejects(
        form(Incident),
        "field 'vehicle_count' when",
        "'incident_tpye' is not a field",
        "did you mean 'incident_type'?",
    )
    # the location points into this file, so the author can jump to it
    assert __file__ in message


def test_predicate_reading_a_later_field_is_rejected() -> None:
    rejects(form(ReadsLater), "field 'first' when", "'second' is declared after")


def test_predicate_reading_its_own_field_is_rejected() -> None:
    rejects(form(ReadsItself), "field 'first' when", "'first' is declared after")


def test_step_predicate_reading_a_field_of_its_own_step_is_rejected() -> None:
    rejects(form(StepReadsOwnField), "step 'step_reads_own_field' when", "'inner'")


def test_field_predicate_asking_about_its_own_step_is_rejected() -> None:
    rejects(
        form(AsksOwnStep),
        "field 'extra' when",
        "step 'asks_own_step' is not decided yet",
    )


def test_field_predicate_asking_about_a_later_step_is_rejected() -> None:
    rejects(
        form(AsksLaterStep, Identity),
        "field 'early' when",
        "step 'identity' is not decided yet",
    )


def test_field_predicate_asking_about_an_earlier_step_compiles() -> None:
    compiled = compile_form(form(Identity, AsksEarlierStep))
    assert compiled.fields["fine"].when_arity == 2


def test_step_predicate_asking_about_itself_is_rejected() -> None:
    rejects(form(StepAsksItself), "step 'step_asks_itself' when", "not decided yet")


def test_typo_in_a_step_name_suggests_the_step() -> None:
    rejects(
        form(Identity, AsksTypoStep),
        "'identiy' is not a step",
        "did you mean 'identity'?",
    )


def test_field_predicate_may_not_ask_fired() -> None:
    # GIVEN a field predicate asking s.fired("cap") of a checkpoint that exists
    cap = Checkpoint("cap", when=lambda v: v.amount > 10)
    # THEN only checkpoints and executors may ask fired(...)
    rejects(
        form(FieldAsksFired, checkpoints=[cap]),
        "field 'reason' when",
        'fired("cap")',
        "only checkpoints and executors may ask fired(...)",
    )


def test_checkpoint_asking_fired_of_an_unknown_checkpoint_is_rejected() -> None:
    checkpoints = [
        Checkpoint("cap", when=lambda v: v.amount > 10),
        Checkpoint("after_cap", when=lambda v, s: s.fired("capp")),
    ]
    rejects(
        form(Amounts, checkpoints=checkpoints),
        "checkpoint 'after_cap' when",
        "'capp' is not a checkpoint",
        "did you mean 'cap'?",
    )


def test_checkpoint_may_ask_fired_and_read_any_field() -> None:
    checkpoints = [
        Checkpoint("cap", when=lambda v: v.amount > 10),
        Checkpoint("after_cap", when=lambda v, s: s.fired("cap") and v.confirmed is True),
    ]
    compiled = compile_form(form(Amounts, Review, checkpoints=checkpoints))
    assert list(compiled.checkpoints) == ["cap", "after_cap"]


def test_typo_in_a_jump_from_an_on_fill_executor_is_rejected() -> None:
    rejects(
        form(TypoJumpOnFill, Review),
        "field 'amount' on_fill",
        'Jump("reviw")',
        "'reviw' is not a step",
        "did you mean 'review'?",
    )


def test_typo_in_a_jump_from_a_step_executor_is_rejected() -> None:
    rejects(form(TypoJumpOnComplete, Review), "step 'typo_jump_on_complete' on_complete", "reviw")


def test_typo_in_a_patch_from_a_checkpoint_executor_is_rejected() -> None:
    cap = Checkpoint("cap", when=lambda v: v.amount > 10, run=stamp_with_typo_patch)
    rejects(
        form(Amounts, Review, checkpoints=[cap]),
        "checkpoint 'cap' run",
        'Patch key "trak"',
        "'trak' is not a field",
        "did you mean 'track'?",
    )


def test_typo_in_a_patch_from_the_form_executor_is_rejected() -> None:
    rejects(form(Amounts, on_complete=stamp_with_typo_patch), "form on_complete", "'trak'")


def test_typo_in_ctx_values_read_by_an_executor_is_rejected() -> None:
    cap = Checkpoint("cap", when=lambda v: v.amount > 10, run=reads_typo_value)
    rejects(form(Amounts, checkpoints=[cap]), "'amout' is not a field", "'amount'")


def test_executors_may_patch_and_jump_anywhere() -> None:
    cap = Checkpoint("cap", when=lambda v: v.amount > 10, run=route_fine)
    compiled = compile_form(form(Amounts, Review, checkpoints=[cap]))
    assert compiled.checkpoints["cap"].run is route_fine


def test_predicate_with_no_parameters_is_rejected() -> None:
    rejects(form(NoArgs), "field 'a' (step 'no_args') when", "takes 0", "expected 1 or 2")


def test_step_predicate_with_three_parameters_is_rejected() -> None:
    rejects(form(ThreeArgs), "step 'three_args' when", "takes 3", "expected 1 or 2")


def test_checkpoint_with_three_parameters_is_rejected() -> None:
    cap = Checkpoint("cap", when=lambda v, s, x: True)
    rejects(form(Amounts, checkpoints=[cap]), "checkpoint 'cap'", "takes 3")


@pytest.mark.parametrize(
    ("checkpoints", "fragment"),
    [
        ([Checkpoint("Cap", when=lambda v: True)], "checkpoint id 'Cap' must be snake_case"),
        (
            [Checkpoint("cap", when=lambda v: True), Checkpoint("cap", when=lambda v: False)],
            "checkpoint id 'cap' is used twice",
        ),
        (
            # deliberately not callable: the compiler's check is what is under test
            [Checkpoint("cap", when="always")],  # type: ignore[arg-type]
            "checkpoint 'cap': when/run must be callable",
        ),
    ],
)
def test_bad_checkpoints_are_rejected(checkpoints: list[Checkpoint], fragment: str) -> None:
    rejects(form(Amounts, checkpoints=checkpoints), fragment)


# --------------------------------------------------------------------------- migrations


@pytest.mark.parametrize("from_version", [2, 3, 0])
def test_migration_must_start_below_the_forms_version(from_version: int) -> None:
    rejects(
        form(Basic, version=2, migrations=[Migration(from_version)]),
        f"migration from version {from_version} must be below 2",
    )


def test_migration_renaming_to_an_unknown_field_is_rejected() -> None:
    migration = Migration(1, renames={"old_name": "nmae"})
    rejects(form(Basic, version=2, migrations=[migration]), "'old_name'", "unknown field 'nmae'")


def test_migration_converting_an_unknown_field_is_rejected() -> None:
    migration = Migration(1, convert={"nmae": str.upper})
    rejects(form(Basic, version=2, migrations=[migration]), "converts unknown field 'nmae'")


def test_two_migrations_from_the_same_version_are_rejected() -> None:
    rejects(
        form(Basic, version=3, migrations=[Migration(1), Migration(1)]),
        "two migrations from version 1",
    )


def test_valid_migrations_are_indexed_by_from_version() -> None:
    first, second = Migration(1, renames={"who": "name"}), Migration(2)
    compiled = compile_form(form(Basic, version=3, migrations=[first, second]))
    assert dict(compiled.migrations) == {1: first, 2: second}


# --------------------------------------------------------------------------- the index


def test_optionality_comes_from_the_type() -> None:
    compiled = compile_form(form(Typed))
    optional = {fid: f.optional for fid, f in compiled.fields.items()}
    assert optional == {
        "required_int": False,
        "optional_int": True,
        "constrained": False,
        "optional_constrained": True,
        "when_date": False,
        "full_name": False,
    }


def test_fields_and_steps_keep_definition_order_and_positions() -> None:
    compiled = compile_form(form(Identity, Amounts, Review))
    assert list(compiled.steps) == ["identity", "amounts", "review"]
    assert list(compiled.fields) == ["person", "amount", "track", "confirmed"]
    assert [compiled.fields[f].step for f in compiled.fields] == [
        "identity",
        "amounts",
        "amounts",
        "review",
    ]
    assert compiled.steps["amounts"].first_field == 1
    assert dict(compiled.field_index) == {"person": 0, "amount": 1, "track": 2, "confirmed": 3}


def test_hooks_run_field_then_step_then_checkpoint_then_form() -> None:
    cap = Checkpoint("cap", when=lambda v: v.a1 > 1, run=noop)
    compiled = compile_form(form(HookedA, HookedB, checkpoints=[cap], on_complete=noop))
    assert [(h.kind, h.id) for h in compiled.hooks] == [
        ("field", "field.a1.filled"),
        ("field", "field.a2.filled"),
        ("field", "field.b1.filled"),
        ("step", "step.hooked_a.complete"),
        ("step", "step.hooked_b.complete"),
        ("checkpoint", "checkpoint.cap"),
        ("form", "form.complete"),
        ("form", "form.closed"),
    ]
    executors = {h.id: h.executor for h in compiled.hooks}
    assert executors["field.a1.filled"] is noop
    assert executors["field.a2.filled"] is None
    assert executors["step.hooked_a.complete"] is noop
    assert executors["step.hooked_b.complete"] is None
    assert compiled.hook("checkpoint.cap") is compiled.hooks[-3]
    assert compiled.hook("nope") is None


def test_compile_form_caches_per_definition() -> None:
    definition = form(Basic)
    assert compile_form(definition) is compile_form(definition)
    # an equal-looking but distinct definition compiles on its own
    assert compile_form(form(Basic)) is not compile_form(definition)


def test_compiled_form_is_read_only() -> None:
    compiled = compile_form(form(Basic))
    with pytest.raises(TypeError):
        compiled.fields["x"] = compiled.fields["name"]  # type: ignore[index]


# --------------------------------------------------------------------------- no source


def test_predicate_without_source_compiles_but_fails_when_evaluated() -> None:
    # GIVEN a predicate made by eval(), whose source the compiler cannot read
    compiled = compile_form(form(EvalPredicate))
    # WHEN the engine evaluates it
    # THEN the bad reference still fails loudly, naming the field (never a silent None/false)
    with pytest.raises(InvalidFormDefinition, match=r"'nope' is not a field of this form"):
        evaluate(compiled, blank_instance(compiled))


def test_predicate_without_source_reading_a_later_field_fails_when_evaluated() -> None:
    compiled = compile_form(form(EvalReadsLater))
    with pytest.raises(InvalidFormDefinition, match=r"field 'gated' when reads 'later'"):
        evaluate(compiled, blank_instance(compiled))


# --------------------------------------------------------------------------- declared aliases


class Staff(Step):
    title = "Staff"

    staff_id: str = field("Staff ID", aliases=["employee ID", "employee number"])
    total: int = field("Total amount (EUR)")
    weight_kg: int | None = field("Weight (kg)")
    weight_lb: int | None = field("Weight (lb)")


class AliasIsAnotherId(Step):
    title = "Alias is another id"

    staff_id: str = field("Staff ID", aliases=["badge"])
    badge: str | None = field("Badge colour")


class TwoFieldsOneAlias(Step):
    title = "Two fields, one alias"

    mobile: str = field("Mobile phone", aliases=["phone number"])
    landline: str | None = field("Landline", aliases=["Phone-Number"])


class OneStringAlias(Step):
    title = "One string alias"

    date_of_birth: date = field("Date of birth", aliases="dob")


def test_declared_aliases_resolve_and_stay_on_the_compiled_field() -> None:
    # GIVEN a field declaring synonyms
    compiled = compile_form(form(Staff))
    # WHEN any spelling of one is resolved THEN it lands on the field
    for spelling in ("employee_id", "Employee ID", "employeeNumber", "employee-number"):
        assert compiled.resolve_field(spelling) == "staff_id", spelling
    # AND the compiled field keeps them as written
    assert compiled.fields["staff_id"].aliases == ("employee ID", "employee number")


def test_declared_aliases_feed_did_you_mean_word_by_word() -> None:
    # GIVEN a field whose alias is "employee number"
    compiled = compile_form(form(Staff))
    # WHEN a misspelling of the alias is sent THEN the field is suggested
    assert compiled.suggest_fields("employee_numbr") == ["staff_id"]


def test_a_label_without_its_closing_parenthesis_resolves_when_unambiguous() -> None:
    compiled = compile_form(form(Staff))
    # GIVEN "Total amount (EUR)" THEN "Total amount" (and total_amount) name the field
    assert compiled.resolve_field("total_amount") == "total"
    # AND two labels shortening alike ("Weight (kg)", "Weight (lb)") give neither: no guess
    assert compiled.resolve_field("weight") is None
    assert compiled.resolve_field("Weight (lb)") == "weight_lb"


def test_an_alias_equal_to_another_fields_id_is_rejected_naming_both() -> None:
    rejects(form(AliasIsAnotherId), "'staff_id'", "'badge'", "collide", "drop an alias")


def test_an_alias_two_fields_declare_is_rejected_naming_both_spellings() -> None:
    rejects(
        form(TwoFieldsOneAlias),
        "'mobile'",
        "'landline'",
        "'phone number' and 'Phone-Number'",
        "'phonenumber'",
    )


def test_aliases_given_as_one_string_are_rejected() -> None:
    # GIVEN aliases="dob" (three one-letter aliases once made a tuple)
    # THEN the definition is rejected, saying aliases are whole spellings
    rejects(form(OneStringAlias), "field 'date_of_birth'", "alias 'd'", "whole spellings")


# --------------------------------------------------------------------------- checkpoint ids


def test_a_checkpoint_id_may_be_kebab_case() -> None:
    # GIVEN a checkpoint written kebab-case, like a form id
    cap = Checkpoint("policy-cap", when=lambda v: v.amount is not None and v.amount > 10)
    compiled = compile_form(form(Amounts, checkpoints=[cap]))
    # THEN it compiles under that id, with a hook and a readable default title
    assert list(compiled.checkpoints) == ["policy-cap"]
    assert compiled.hook("checkpoint.policy-cap") is not None
    assert compiled.checkpoints["policy-cap"].title == "policy cap"


@pytest.mark.parametrize(
    ("checkpoints", "fragment"),
    [
        (
            [Checkpoint("policy-cap_two", when=lambda v: True)],
            "checkpoint id 'policy-cap_two' must be snake_case or kebab-case",
        ),
        (
            [Checkpoint("policy-cap", when=lambda v: True), Checkpoint("policy_cap", when=bool)],
            "checkpoint id 'policy_cap' is used twice (as 'policy-cap')",
        ),
        (
            [
                Checkpoint("policy-cap", when=lambda v: True, run=lambda c: None),
                Checkpoint("after", when=lambda v, s: s.fired("policy_cap")),
            ],
            "'policy_cap' is not a checkpoint; did you mean 'policy-cap'?",
        ),
    ],
    ids=["mixed", "two-spellings", "reference-in-the-other-spelling"],
)
def test_checkpoint_spellings_are_checked(checkpoints: list[Checkpoint], fragment: str) -> None:
    rejects(form(Amounts, checkpoints=checkpoints), fragment)
