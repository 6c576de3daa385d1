"""Form documents: the model, the rule language, and compiling through the one compiler.

A document and the Python form a person would write for it must behave the same through the
tools, call for call; a document that cannot compile says every reason at once, with the
closest names; and the document's JSON schema has no open map, no ``Any`` and no list without
an item type.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Annotated, Any, Literal

import pytest
from pydantic import EmailStr, Field, ValidationError

from forms import Caller, Checkpoint, Fail, FormDef, Step, field
from forms.documents import FormDocument, compile_document, to_definition
from forms.documents.export import export_document
from forms.errors import InvalidFormDefinition
from forms.examples.travel_claim import travel_claim
from forms.instance import FormInstance
from tests.support import Session, service_for

CALLER = Caller("alice", "conv-1")

APPLICATION: dict[str, Any] = {
    "id": "job-application",
    "title": "Job application",
    "steps": [
        {
            "id": "about_you",
            "title": "About you",
            "items": [
                {"kind": "heading", "id": "intro", "text": "Tell us about yourself."},
                {"kind": "short_text", "id": "full_name", "label": "Full name"},
                {"kind": "email", "id": "email", "label": "Email"},
                {"kind": "phone", "id": "phone", "label": "Phone", "required": False},
                {"kind": "divider", "id": "rule_1"},
            ],
        },
        {
            "id": "the_role",
            "title": "The role",
            "items": [
                {
                    "kind": "single_choice",
                    "id": "role",
                    "label": "Role",
                    "options": [
                        {"value": "engineer", "label": "Software engineer"},
                        {"value": "designer"},
                    ],
                },
                {
                    "kind": "url",
                    "id": "portfolio",
                    "label": "Portfolio",
                    "when": {"field": "role", "op": "equals", "value": "designer"},
                },
                {
                    "kind": "integer",
                    "id": "years",
                    "label": "Years of experience",
                    "minimum": 0,
                    "maximum": 60,
                },
                {
                    "kind": "decimal",
                    "id": "salary",
                    "label": "Expected salary",
                    "minimum": 0,
                    "decimal_places": 2,
                },
                {"kind": "date", "id": "start", "label": "Earliest start date"},
                {"kind": "boolean", "id": "relocate", "label": "Willing to relocate"},
                {
                    "kind": "multiple_choice",
                    "id": "languages",
                    "label": "Languages",
                    "options": [{"value": "en"}, {"value": "pt"}, {"value": "de"}],
                },
                {"kind": "long_text", "id": "notes", "label": "Anything else", "required": False},
            ],
        },
    ],
    "checkpoints": [
        {
            "id": "salary_cap",
            "when": {"field": "salary", "op": "greater_than", "value": "200000"},
            "then": [{"action": "fail", "message": "{salary} is over the band for {role}"}],
        }
    ],
}


class AboutYou(Step, id="about_you", title="About you", guidance="Tell us about yourself."):
    full_name: Annotated[str, Field(min_length=1, max_length=300)] = field("Full name")
    email: EmailStr = field("Email")
    phone: Annotated[str, Field(pattern=r"^\+?[0-9][0-9 ()./-]{5,24}$", max_length=2000)] | None = (
        field("Phone", example="+351 912 345 678")
    )


class TheRole(Step, id="the_role", title="The role"):
    role: Literal["engineer", "designer"] = field(
        "Role", ask="options: engineer = Software engineer"
    )
    portfolio: Annotated[str, Field(pattern=r"^https?://[^\s/?#]+\.[^\s]+$", max_length=2000)] = (
        field("Portfolio", when=lambda v: v.role == "designer", example="https://example.com")
    )
    years: Annotated[int, Field(ge=0, le=60)] = field("Years of experience")
    salary: Annotated[Decimal, Field(ge=Decimal("0"), decimal_places=2)] = field("Expected salary")
    start: date = field("Earliest start date")
    relocate: bool = field("Willing to relocate")
    languages: Annotated[list[Literal["en", "pt", "de"]], Field(min_length=1, max_length=3)] = (
        field("Languages")
    )
    notes: Annotated[str, Field(min_length=1, max_length=4000)] | None = field("Anything else")


TWIN = FormDef(
    id="job-application",
    version=1,
    title="Job application",
    steps=[AboutYou, TheRole],
    checkpoints=[
        Checkpoint(
            "salary_cap",
            when=lambda v: v.salary is not None and v.salary > 200000,
            run=lambda ctx: [Fail(f"{ctx.values.salary} is over the band for {ctx.values.role}")],
        )
    ],
)

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("form_start", {"form": "job-application"}),
    ("form_read", {"form": "job-application"}),
    ("form_fill", {"form": "job-application", "values": {"full_name": "Ada", "email": "a@b.co"}}),
    ("form_fill", {"form": "job-application", "values": {"role": "designer"}}),
    ("form_fill", {"form": "job-application", "values": {"portfolio": "https://ada.dev"}}),
    ("form_fill", {"form": "job-application", "values": {"role": "engineer"}}),  # held
    ("form_fill", {"form": "job-application", "values": {"salary": "250000.5", "years": "6"}}),
    ("form_fill", {"form": "job-application", "values": {"role": "designer"}}),  # restored
    ("form_fill", {"form": "job-application", "values": {"salary": 90000}}),
    ("form_fill", {"form": "job-application", "values": {"relocate": "no", "languages": ["pt"]}}),
    ("form_fill", {"form": "job-application", "values": {"start": "2027-01-04"}}),
    ("form_read", {"form": "job-application", "field": "role"}),
    ("form_fill", {"form": "job-application", "submit": True}),
]


def run(definition: FormDef) -> tuple[list[dict[str, Any]], FormInstance]:
    session = Session(service_for(definition), CALLER)
    results = [session.call(tool, payload) for tool, payload in CALLS]
    return results, session.store.list_conversation("alice", "conv-1")[0]


def test_a_document_behaves_exactly_as_the_python_form_a_person_would_write() -> None:
    # GIVEN the job application as a document and as hand-written Python
    document = FormDocument.model_validate(APPLICATION)
    from_document = to_definition(document)
    # WHEN the same calls go through the tools against each
    mine, stored = run(from_document)
    theirs, twin_stored = run(TWIN)
    # THEN every result is the same, call for call, and so is what was stored
    assert mine == theirs
    assert stored.model_dump() == twin_stored.model_dump()
    # AND the path went where it should: held on the flip, restored, the cap, completion
    assert list(mine[5]["now_held"]) == ["portfolio"]
    assert mine[6]["fired"] == ["fi_1:checkpoint.salary_cap:1"]
    assert "250000.5 is over the band for engineer" in mine[6]["status_line"]
    assert list(mine[7]["restored"]) == ["portfolio"]
    assert mine[-1].get("closed") == "completed", mine[-1]


def test_display_blocks_collect_nothing_and_read_as_the_step_s_guidance() -> None:
    form = compile_document(FormDocument.model_validate(APPLICATION))
    assert "intro" not in form.fields and "rule_1" not in form.fields
    assert form.steps["about_you"].guidance == "Tell us about yourself."
    assert list(form.steps["about_you"].fields) == ["full_name", "email", "phone"]


def test_kinds_become_the_types_the_agent_reads() -> None:
    form = compile_document(FormDocument.model_validate(APPLICATION))
    strings = {f: form.fields[f].type.type_string for f in form.fields}
    assert strings["role"] == 'one of "engineer", "designer"'
    assert strings["years"] == "integer 0-60"
    assert strings["relocate"] == "true or false"
    assert strings["start"].startswith("date")
    assert strings["portfolio"] == "text like https://example.com, at most 2000 chars"
    assert form.fields["phone"].optional and not form.fields["email"].optional


def problems_of(document: dict[str, Any], **options: Any) -> tuple[str, ...]:
    with pytest.raises(InvalidFormDefinition) as raised:
        compile_document(FormDocument.model_validate(document), **options)
    return raised.value.problems


def with_role_rule(rule: dict[str, Any]) -> dict[str, Any]:
    document = {**APPLICATION, "steps": [dict(s) for s in APPLICATION["steps"]]}
    items = [dict(i) for i in document["steps"][1]["items"]]
    items[1] = {**items[1], "when": rule}
    document["steps"][1]["items"] = items
    return document


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        (
            {"field": "rol", "op": "equals", "value": "x"},
            "not a field of this form; did you mean 'role'?",
        ),
        ({"field": "years", "op": "answered"}, "declared after it"),
        (
            {"field": "role", "op": "greater_than", "value": "a"},
            "'greater_than' does not apply to 'role'",
        ),
        (
            {"field": "role", "op": "equals", "value": "desginer"},
            "'desginer' is not a value of 'role'",
        ),
        ({"field": "email", "op": "contains", "value": "@corp"}, None),
        ({"all": [{"field": "role", "op": "in", "value": ["engineer", "designer"]}]}, None),
        ({"not": {"field": "full_name", "op": "not_answered"}}, None),
    ],
)
def test_rules_are_checked_against_the_form_before_it_compiles(
    rule: dict[str, Any], expected: str | None
) -> None:
    document = with_role_rule(rule)
    if expected is None:
        compile_document(FormDocument.model_validate(document))
        return
    assert any(expected in p for p in problems_of(document))


def test_every_problem_of_a_document_is_reported_at_once() -> None:
    # GIVEN a document that is wrong in five unrelated places
    document = with_role_rule({"field": "rol", "op": "answered"})
    document["steps"][0] = {
        **document["steps"][0],
        "on_complete": "notify_crn",
        "items": [
            *document["steps"][0]["items"],
            {"kind": "integer", "id": "age", "label": "Age", "minimum": 9, "maximum": 3},
            {"kind": "short_text", "id": "code", "label": "Code", "pattern": "(unclosed"},
        ],
    }
    document["checkpoints"] = [
        {
            "id": "route",
            "when": {"field": "years", "op": "less_than", "value": 1},
            "then": [
                {"action": "jump", "step": "the_rol"},
                {"action": "fail", "message": "{yeers}"},
            ],
        }
    ]
    # WHEN it compiles / THEN every one of them is in the error, with the closest names
    problems = problems_of(document, executors={"notify_crm": lambda ctx: None})
    joined = "\n".join(problems)
    for expected in (
        "did you mean 'role'",
        "executor 'notify_crn'",
        "did you mean 'notify_crm'",
        "minimum 9 is over maximum 3",
        "does not compile",
        "jumps to 'the_rol'",
        "{yeers}",
    ):
        assert expected in joined, (expected, problems)


def test_checks_of_the_compiler_apply_to_documents_too() -> None:
    # GIVEN a document with a field id used twice
    document = {**APPLICATION, "steps": [dict(s) for s in APPLICATION["steps"]]}
    document["steps"][1]["items"] = [
        *document["steps"][1]["items"],
        {"kind": "boolean", "id": "email", "label": "Email again"},
    ]
    # THEN the compiler's own check reports it
    assert any("email" in p for p in problems_of(document))


def test_a_field_may_not_be_named_after_a_step_method_in_python_or_as_data() -> None:
    class Odd(Step, title="Odd"):
        # deliberately shadows Step.setting: the compiler's refusal is what is under test
        setting: str = field("Setting")  # type: ignore[assignment]

    with pytest.raises(InvalidFormDefinition, match="rename the field"):
        compile_document(
            FormDocument.model_validate(
                {
                    "id": "odd",
                    "title": "Odd",
                    "steps": [
                        {
                            "id": "odd",
                            "title": "Odd",
                            "items": [{"kind": "boolean", "id": "step_id", "label": "X"}],
                        }
                    ],
                }
            )
        )
    from forms import compile_form

    with pytest.raises(InvalidFormDefinition, match="rename the field"):
        compile_form(FormDef(id="odd", version=1, title="Odd", steps=[Odd]))


def test_checkpoint_actions_and_named_executors_run_as_effects() -> None:
    # GIVEN a document whose checkpoint sets a field, runs a registered executor and jumps back
    ran: list[str] = []

    def audit(ctx: Any) -> list[Any]:
        ran.append(ctx.key)
        return [Fail("audited")]

    document = {
        **APPLICATION,
        "checkpoints": [
            {
                "id": "no_experience",
                "when": {"field": "years", "op": "equals", "value": 0},
                "then": [
                    {"action": "set", "field": "notes", "value": "junior track"},
                    {"action": "run", "executor": "audit"},
                    {"action": "jump", "step": "about_you"},
                ],
            }
        ],
    }
    definition = to_definition(FormDocument.model_validate(document), executors={"audit": audit})
    session = Session(service_for(definition), CALLER)
    session.ok("form_start", form="job-application")
    session.ok("form_fill", form="job-application", values={"full_name": "Ada", "email": "a@b.co"})
    # WHEN the rule starts to hold
    result = session.ok(
        "form_fill", form="job-application", values={"role": "engineer", "years": 0}
    )
    # THEN the executor ran once, the field was set, and the rejection is on record
    stored = session.store.list_conversation("alice", "conv-1")[0]
    assert ran == [f"{stored.id}:checkpoint.no_experience:1"]
    assert stored.field("notes").in_force().value == "junior track"  # type: ignore[union-attr]
    assert "audited" in str(result)


def test_literals_in_rules_and_actions_are_read_with_the_field_s_type() -> None:
    # GIVEN a set action whose value the field's type does not accept
    document = {
        **APPLICATION,
        "checkpoints": [
            {
                "id": "bad",
                "when": {"field": "years", "op": "greater_than", "value": "5"},  # read as 5
                "then": [{"action": "set", "field": "relocate", "value": "maybe"}],
            }
        ],
    }
    # THEN the action is refused, the "5" is not
    problems = problems_of(document)
    assert len(problems) == 1 and "sets 'relocate'" in problems[0]


@pytest.mark.parametrize(
    "condition",
    [
        {"field": "x", "op": "in", "value": "a"},
        {"field": "x", "op": "answered", "value": 1},
        {"field": "x", "op": "equals"},
        {"field": "x", "op": "equals", "value": ["a"]},
    ],
)
def test_a_condition_s_value_must_fit_its_operator(condition: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        FormDocument.model_validate(with_role_rule(condition))


def open_places(schema: Any, path: str = "$") -> list[str]:
    """Where a JSON schema leaves a shape open: an object without properties (or with
    additional ones allowed), an array without items, or a schema that accepts anything."""
    found: list[str] = []
    if isinstance(schema, dict):
        if schema == {}:
            found.append(path)
        closed = "properties" in schema and schema.get("additionalProperties") is False
        if schema.get("type") == "object" and not closed:
            found.append(path)
        if schema.get("type") == "array" and "items" not in schema:
            found.append(path)
        for key, value in schema.items():
            found += open_places(value, f"{path}.{key}")
    elif isinstance(schema, list):
        for n, value in enumerate(schema):
            found += open_places(value, f"{path}[{n}]")
    return found


def test_the_document_schema_has_no_open_maps_no_any_and_no_untyped_lists() -> None:
    assert open_places(FormDocument.model_json_schema()) == []
    # the check sees what it is about
    assert open_places({"a": {"type": "object"}, "b": {"type": "array"}, "c": {}}) == [
        "$.a",
        "$.b",
        "$.c",
    ]


# ---------------------------------------------------------------------- export


def test_a_document_form_exports_to_a_document_that_behaves_the_same() -> None:
    # GIVEN the job application built from its document
    definition = to_definition(FormDocument.model_validate(APPLICATION))
    # WHEN it is exported, with nothing left out
    exported = export_document(definition)
    assert exported.gaps == ()
    # THEN the exported document runs the same calls to the same results
    again, _ = run(to_definition(exported.document))
    first, _ = run(definition)
    assert again == first


def test_what_a_document_cannot_hold_is_named_with_the_reason() -> None:
    # GIVEN the Python travel claim: a predicate and a checkpoint written as code
    exported = export_document(travel_claim)
    # THEN each is named, and the rest is exported
    assert any("flight_number" in gap and "code" in gap for gap in exported.gaps)
    assert any("policy_cap" in gap for gap in exported.gaps)
    fields = [i.id for s in exported.document.steps for i in s.items]
    assert {"full_name", "destination", "total"} <= set(fields)

    # AND an executor the registry names is exported by its name
    def notify(ctx: Any) -> None:
        return None

    document = {**APPLICATION, "steps": [dict(s) for s in APPLICATION["steps"]]}
    items = [dict(i) for i in document["steps"][0]["items"]]
    items[1] = {**items[1], "on_fill": "notify"}
    document["steps"][0]["items"] = items
    registry = {"notify": notify}
    definition = to_definition(FormDocument.model_validate(document), executors=registry)
    named = export_document(definition, executors=registry)
    assert named.gaps == ()
    assert named.document.steps[0].items[0].on_fill == "notify"  # type: ignore[union-attr]
    assert export_document(definition).gaps == (
        "field 'full_name' on_fill: the executor is code; register it by name to export it",
    )


def test_the_item_kind_type_names_exactly_the_kinds_the_item_models_take() -> None:
    from typing import get_args

    from forms.documents.model import ITEM_MODELS, ItemKind, kinds_of

    assert get_args(ItemKind) == tuple(k for model in ITEM_MODELS for k in kinds_of(model))
