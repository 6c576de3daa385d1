"""Form documents hold fact keys as code forms do: an item's ``memory`` is checked when the
document compiles (against the deployment's vocabulary) and when the builder edits it (by the
same check), carried by export, and recalled into a published form exactly as into the Python
form a person would write."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import Field, ValidationError

from forms import (
    Caller,
    FormDef,
    FormRegistry,
    FormService,
    InMemoryFormStore,
    InvalidFormDefinition,
    Step,
    compile_form,
    field,
)
from forms.app.catalog import Catalog
from forms.app.hooks import InProcessDispatcher
from forms.app.memory import Memory
from forms.documents import EditError, FormDocument, apply_edit, compile_document, inspect
from forms.documents.export import export_document
from forms.documents.model import FACT_KEY_MAX_LENGTH, FACT_KEY_PATTERN, ITEM_MODELS, kinds_of
from forms.examples.health_check import health_check
from forms.memory import Vocabulary, fact_key
from forms.memory.vocabulary import KEY_MAX_LENGTH, KEY_PATTERN
from forms.storage.documents import InMemoryFormDocumentStore
from tests.support import T0, TickingClock, form_service
from tests.unit.memory_for_tests import DAY, Inline, RecordingFacts, Talk, Timer, memory_service

ROOT = Path(__file__).resolve().parents[2]
ALICE = Caller("acme/alice", "conv-1")
BORN = "1990-04-02"
BLOOD = Vocabulary.default().extended(
    [fact_key("person.blood_type", "Blood type", Literal["A", "B", "AB", "O"], "never")]
)
"""A deployment's vocabulary: Formwork's keys and one of its own."""
BLOOD_FIELD = {
    "kind": "single_choice",
    "label": "Blood",
    "options": [{"value": v} for v in ("A", "B", "AB", "O")],
    "memory": "person.blood_type",
}
"""A field holding the deployment's own key."""


def one_step(*items: dict[str, Any], form_id: str = "probe") -> FormDocument:
    return FormDocument.model_validate(
        {"id": form_id, "title": "Probe", "steps": [{"id": "s", "title": "S", "items": items}]}
    )


def problems_of(document: FormDocument, vocabulary: Vocabulary | None = None) -> tuple[str, ...]:
    with pytest.raises(InvalidFormDefinition) as raised:
        compile_document(document, vocabulary=vocabulary)
    return raised.value.problems


# ---------------------------------------------------------------------- the key in the document


def test_every_field_kind_takes_a_key_and_no_display_block_does() -> None:
    # GIVEN the item models
    for model in ITEM_MODELS:
        takes = "memory" in model.model_fields
        # THEN exactly those that collect an answer take a fact key
        assert takes == (kinds_of(model)[0] not in ("heading", "paragraph", "divider")), model
    with pytest.raises(ValidationError, match="memory"):
        one_step({"kind": "heading", "id": "h", "text": "Hi", "memory": "person.height_cm"})


@pytest.mark.parametrize("key", ["dob", "Person.height", "person.", "person..x", "a." + "b" * 80])
def test_the_document_takes_only_a_key_s_syntax(key: str) -> None:
    with pytest.raises(ValidationError, match="memory"):
        one_step({"kind": "date", "id": "born", "label": "Born", "memory": key})


def test_the_syntax_is_the_vocabulary_s() -> None:
    # the document model does not import memory; the two spellings are held together here
    assert (FACT_KEY_PATTERN, FACT_KEY_MAX_LENGTH) == (KEY_PATTERN, KEY_MAX_LENGTH)


# ---------------------------------------------------------------------- compiling


def test_a_key_is_carried_into_the_compiled_field() -> None:
    # GIVEN a document whose date of birth holds its key / WHEN it compiles
    form = compile_document(
        one_step(
            {"kind": "date", "id": "born", "label": "Born", "memory": "person.date_of_birth"},
            {"kind": "short_text", "id": "note", "label": "Note"},
        )
    )
    # THEN the compiled field holds it, as a code form's would
    assert form.memory_fields == ("born",)
    assert form.fields["born"].memory == "person.date_of_birth"


@pytest.mark.parametrize(
    ("item", "words"),
    [
        (
            {"kind": "decimal", "id": "weight", "label": "Weight", "memory": "person.weigth"},
            "unknown fact key 'person.weigth'; did you mean person.weight_kg",
        ),
        (
            {"kind": "short_text", "id": "project", "label": "P", "memory": "work.current_project"},
            "is never stored (do_not_store)",
        ),
        (
            {"kind": "integer", "id": "weight", "label": "Weight", "memory": "person.weight_kg"},
            "does not fit the field: person.weight_kg holds decimal number",
        ),
        (
            {"kind": "short_text", "id": "born", "label": "B", "memory": "person.date_of_birth"},
            "does not fit the field",
        ),
        (
            {"kind": "boolean", "id": "tall", "label": "Tall", "memory": "person.height_cm"},
            "does not fit the field",
        ),
    ],
)
def test_a_key_the_vocabulary_refuses_is_a_problem_of_the_document(
    item: dict[str, Any], words: str
) -> None:
    # WHEN a document with that key compiles / THEN it is refused, naming the form, the field,
    # its step and the key, in the words the compiler uses for a code form's field
    (problem,) = problems_of(one_step(item))
    where = f"form 'probe': field {item['id']!r} (step 's'): memory={item['memory']!r}: "
    assert problem.startswith(where) and words in problem


def test_key_problems_are_reported_with_the_document_s_other_problems() -> None:
    # GIVEN a rule naming no field, and a misspelt key
    document = one_step(
        {"kind": "date", "id": "born", "label": "Born", "memory": "person.date_of_brith"},
        {
            "kind": "boolean",
            "id": "ok",
            "label": "Ok",
            "when": {"field": "nothing", "op": "answered"},
        },
    )
    # WHEN it compiles / THEN both are reported at once
    problems = problems_of(document)
    assert len(problems) == 2
    assert any("did you mean person.date_of_birth" in p for p in problems)
    assert any("'nothing'" in p for p in problems)


def test_the_deployment_s_vocabulary_decides_which_keys_exist() -> None:
    document = one_step(
        {
            "kind": "single_choice",
            "id": "blood",
            "label": "Blood type",
            "options": [{"value": v} for v in ("A", "B", "AB", "O")],
            "memory": "person.blood_type",
        }
    )
    # WHEN it compiles with Formwork's keys / THEN its key is unknown
    (problem,) = problems_of(document)
    assert "unknown fact key 'person.blood_type'" in problem
    # AND with the deployment's, it compiles, holding it
    assert compile_document(document, vocabulary=BLOOD).fields["blood"].memory == (
        "person.blood_type"
    )


def test_a_document_without_keys_never_loads_memory() -> None:
    # GIVEN a fresh interpreter / WHEN a catalog publishes and serves a document without keys
    code = (
        "import json, sys\n"
        "from datetime import UTC, datetime\n"
        "from forms.app.catalog import Catalog\n"
        "from forms.registry import FormRegistry\n"
        "from forms.storage.documents import InMemoryFormDocumentStore\n"
        "from forms.storage.documents_contract import document\n"
        "forms = Catalog(FormRegistry(), InMemoryFormDocumentStore(), timer=lambda: 0.0)\n"
        "forms.publish('acme/ana', document(), at=datetime(2026, 1, 1, tzinfo=UTC))\n"
        "forms.latest('intake', 'acme/ana')\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('forms.memory'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    # THEN nothing of memory is loaded
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


# ---------------------------------------------------------------------- recall, as for code


class AboutYou(Step, title="About you"):
    date_of_birth: date = field("Date of birth", memory="person.date_of_birth")
    height_cm: Annotated[int, Field(ge=50, le=250)] = field(
        "Height (cm)", memory="person.height_cm"
    )
    weight_kg: Annotated[Decimal, Field(le=400, decimal_places=1)] | None = field(
        "Weight (kg)", memory="person.weight_kg"
    )
    city: Annotated[str, Field(min_length=1, max_length=300)] = field("City")


CHECK_IN = FormDef(id="check-in", version=1, title="Check-in", steps=[AboutYou])
"""A Python form with three fields that hold keys, and one that does not."""
CHECK_IN_DOCUMENT = {
    "id": "check-in",
    "title": "Check-in",
    "steps": [
        {
            "id": "about_you",
            "title": "About you",
            "items": [
                {
                    "kind": "date",
                    "id": "date_of_birth",
                    "label": "Date of birth",
                    "memory": "person.date_of_birth",
                },
                {
                    "kind": "integer",
                    "id": "height_cm",
                    "label": "Height (cm)",
                    "minimum": 50,
                    "maximum": 250,
                    "memory": "person.height_cm",
                },
                {
                    "kind": "decimal",
                    "id": "weight_kg",
                    "label": "Weight (kg)",
                    "maximum": 400,
                    "decimal_places": 1,
                    "required": False,
                    "memory": "person.weight_kg",
                },
                {"kind": "short_text", "id": "city", "label": "City"},
            ],
        }
    ],
}
"""The same form as a builder would write it."""


def remembering(*, weight: bool = True) -> RecordingFacts:
    """Alice's memory: a date of birth from long ago and, unless told not to, a weight."""
    facts = RecordingFacts()
    facts.stated(ALICE.principal, "person.date_of_birth", BORN, at=T0 - 600 * DAY)
    if weight:
        facts.stated(ALICE.principal, "person.weight_kg", "70", at=T0 - 10 * DAY)
    facts.requests.clear()
    return facts


def published_service(facts: RecordingFacts, registry: FormRegistry | None = None) -> FormService:
    """A service over a catalog in which acme published the check-in as a document, with
    memory on ``facts``, run as ``memory_service`` runs a code form."""
    catalog = Catalog(registry or FormRegistry(), InMemoryFormDocumentStore(), timer=Timer())
    catalog.publish("acme/ana", FormDocument.model_validate(CHECK_IN_DOCUMENT), at=T0)
    ids = itertools.count(1)
    return form_service(
        catalog,
        InMemoryFormStore(),
        InProcessDispatcher(),
        clock=TickingClock(T0),
        new_id=lambda: f"fi_{next(ids)}",
        backoff=lambda attempt: None,
        memory=Memory(facts, timer=Timer(), executor=Inline()),
    )


def test_a_published_document_recalls_exactly_as_the_code_form() -> None:
    # GIVEN alice (of tenant acme) with a stored date of birth and weight, and the check-in
    # both as Python (served by the deployment) and as a document acme published
    facts = [remembering(), remembering()]
    code = Talk(memory_service(CHECK_IN, facts=facts[0]), ALICE)
    document = Talk(published_service(facts[1]), ALICE)
    # WHEN she starts each
    started = [code.start("check-in"), document.start("check-in")]
    # THEN the document's date of birth is filled from memory, and marked so
    born = document.store.get("fi_1").field("date_of_birth").in_force()
    assert born is not None
    assert (born.value, born.by, born.actor) == (BORN, "memory", "person.date_of_birth")
    reads = [code.read("check-in"), document.read("check-in")]
    rows = {row["id"]: row for row in reads[1]["fields"]}
    assert rows["date_of_birth"]["memory"] == "from memory, said 2024-07-09; unconfirmed"
    assert (
        "from memory, unconfirmed (resend once confirmed): Date of birth 1990-04-02"
        in (started[1]["status_line"])
    )
    # AND the weight is offered, not filled; the height (no fact) and the city (no key) get
    # nothing
    assert document.store.get("fi_1").state.recalled["weight_kg"].use == "offer"
    assert {"height_cm", "city"}.isdisjoint(document.store.get("fi_1").state.recalled)
    assert "value" not in rows["height_cm"] and "memory" not in rows["city"]
    # AND every result, read and stored record is the code form's, call for call
    assert started[0] == started[1]
    assert reads[0] == reads[1]
    ran = [talk.store.get("fi_1") for talk in (code, document)]
    assert ran[0].history == ran[1].history and ran[0].state == ran[1].state
    # AND an answer to a field that holds a key is remembered from the document as from code
    for talk in (code, document):
        talk.fill("check-in", height_cm=180)
    remembered = [each.head_of(ALICE.principal, "person.height_cm") for each in facts]
    assert remembered[0] is not None and remembered[0].fact is not None
    assert remembered[0].fact.value == 180
    assert remembered[0] == remembered[1]


def test_a_principal_with_no_stored_fact_gets_nothing_from_the_document() -> None:
    # GIVEN alice's memory holds no weight / WHEN she starts the published check-in
    talk = Talk(published_service(remembering(weight=False)), ALICE)
    talk.start("check-in")
    # THEN the weight is absent: no answer, no offer
    instance = talk.store.get("fi_1")
    assert "weight_kg" not in instance.history and "weight_kg" not in instance.state.recalled
    assert set(instance.state.recalled) == {"date_of_birth"}


# ---------------------------------------------------------------------- export


def test_exporting_a_python_form_carries_its_fields_keys() -> None:
    # GIVEN the health check (three fields hold keys) / WHEN it is exported
    exported = export_document(health_check)
    assert exported.gaps == ()
    held = {i.id: getattr(i, "memory", None) for s in exported.document.steps for i in s.items}
    # THEN each field holds its key, and the others none
    assert held == {
        "date_of_birth": "person.date_of_birth",
        "height_cm": "person.height_cm",
        "weight_kg": "person.weight_kg",
        "feeling": None,
        "concern": None,
    }
    # AND the document compiles back to the same keys, and exports again to itself
    again = compile_document(exported.document)
    assert again.memory_fields == compile_form(health_check).memory_fields
    assert {f: again.fields[f].memory for f in again.memory_fields} == {
        f: health_check_field.memory
        for f, health_check_field in compile_form(health_check).fields.items()
        if health_check_field.memory is not None
    }
    assert export_document(again.definition).document == exported.document


def test_exporting_with_the_deployment_s_vocabulary_carries_its_own_keys() -> None:
    class Blood(Step, title="Blood"):
        blood: Literal["A", "B", "AB", "O"] = field("Blood type", memory="person.blood_type")

    definition = FormDef(id="blood", version=1, title="Blood", steps=[Blood])
    exported = export_document(definition, vocabulary=BLOOD)
    assert exported.document.steps[0].items[0].memory == "person.blood_type"  # type: ignore[union-attr]
    with pytest.raises(InvalidFormDefinition, match="unknown fact key"):
        export_document(definition)  # with Formwork's keys


# ---------------------------------------------------------------------- the builder


def draft() -> FormDocument:
    return apply_edit(
        None, "create_form", {"title": "Check-in", "steps": [{"title": "About you"}]}
    ).document


def refusal(document: FormDocument | None, tool: str, **arguments: Any) -> EditError:
    with pytest.raises(EditError) as raised:
        apply_edit(document, tool, arguments)
    return raised.value


def test_the_builder_sets_a_key_with_add_field_update_field_and_create_form() -> None:
    # WHEN the builder adds a date of birth holding its key
    added = apply_edit(
        draft(),
        "add_field",
        {"field": {"kind": "date", "label": "Date of birth", "memory": "person.date_of_birth"}},
    )
    assert added.summary == 'Added field "date_of_birth" (date) to step "About you".'
    # AND maps an email it added before to a key, then clears a key with null
    emailed = apply_edit(
        added.document, "add_field", {"field": {"kind": "email", "label": "Email"}}
    )
    mapped = apply_edit(
        emailed.document, "update_field", {"field": "email", "updates": {"memory": "contact.email"}}
    )
    assert mapped.summary == 'Updated field "email": memory.'
    cleared = apply_edit(
        mapped.document, "update_field", {"field": "date_of_birth", "updates": {"memory": None}}
    )
    # THEN the draft holds what was sent, and compiles with those keys
    assert compile_document(mapped.document).memory_fields == ("date_of_birth", "email")
    assert compile_document(cleared.document).memory_fields == ("email",)
    # AND create_form takes a key on the fields it carries
    created = apply_edit(
        None,
        "create_form",
        {
            "title": "Body",
            "steps": [
                {
                    "title": "Body",
                    "items": [{"kind": "integer", "label": "Height", "memory": "person.height_cm"}],
                }
            ],
        },
    )
    assert compile_document(created.document).fields["height"].memory == "person.height_cm"


def test_inspect_shows_a_field_s_key_in_the_outline_and_in_full() -> None:
    document = apply_edit(
        draft(),
        "add_field",
        {
            "field": {
                "kind": "date",
                "label": "Date of birth",
                "required": False,
                "memory": "person.date_of_birth",
            }
        },
    ).document
    outline = inspect(document, "form")["form"]["steps"][0]["items"]  # type: ignore[index,call-overload]
    assert outline == ['date_of_birth: date? "Date of birth" memory person.date_of_birth']
    assert inspect(document, "field", "date_of_birth")["field"]["memory"] == (  # type: ignore[index,call-overload]
        "person.date_of_birth"
    )


def test_a_misspelt_key_is_refused_at_edit_time_with_the_keys_it_likely_meant() -> None:
    # WHEN the builder sends a key that is not in the vocabulary
    error = refusal(
        draft(),
        "add_field",
        field={"kind": "decimal", "label": "Weight", "memory": "person.weigth"},
    )
    # THEN nothing is applied; the refusal names the key, the likely keys, and what fits
    assert error.code == "invalid"
    assert "unknown fact key 'person.weigth'" in error.message
    assert error.did_you_mean[0] == "person.weight_kg"
    assert error.hint == (
        'Keys field "weight" (decimal) can hold: person.height_cm, person.weight_kg, '
        "work.salary. Send one as memory, or leave memory out (null clears it)."
    )
    # AND a name that is not even a key's syntax is read the same way, not as a pattern
    error = refusal(draft(), "add_field", field={"kind": "date", "label": "Born", "memory": "dob"})
    assert "unknown fact key 'dob'" in error.message
    assert error.did_you_mean == ("person.date_of_birth",)
    assert "person.date_of_birth" in (error.hint or "")


def test_a_kind_change_the_key_no_longer_fits_is_refused_until_the_key_is_cleared() -> None:
    # GIVEN a date of birth holding its key
    document = apply_edit(
        draft(),
        "add_field",
        {"field": {"kind": "date", "label": "Born", "memory": "person.date_of_birth"}},
    ).document
    # WHEN it is made a text field / THEN the key no longer fits: refused, nothing applied
    error = refusal(document, "update_field", field="born", updates={"kind": "short_text"})
    assert error.code == "invalid" and "does not fit the field" in error.message
    assert "null clears it" in (error.hint or "")
    # AND with the key cleared in the same call, it applies
    changed = apply_edit(
        document,
        "update_field",
        {"field": "born", "updates": {"kind": "short_text", "memory": None}},
    )
    assert compile_document(changed.document).memory_fields == ()


def test_a_key_problem_the_draft_already_had_does_not_block_unrelated_edits() -> None:
    # GIVEN a draft holding a deployment's own key, edited where only Formwork's keys are known
    document = apply_edit(draft(), "add_field", {"field": BLOOD_FIELD}, vocabulary=BLOOD).document
    # WHEN an unrelated field is added / THEN it applies
    added = apply_edit(document, "add_field", {"field": {"kind": "email", "label": "Email"}})
    assert [i.id for i in added.document.steps[0].items] == ["blood", "email"]
    # AND compiling with Formwork's keys still finds the key unknown
    (problem,) = problems_of(added.document)
    assert "unknown fact key 'person.blood_type'" in problem


CASES = [
    ({"kind": "date", "label": "Born", "memory": "person.date_of_birth"}, None),
    ({"kind": "decimal", "label": "Weight", "memory": "person.weight_kg"}, None),
    ({"kind": "email", "label": "Email", "memory": "contact.email"}, None),
    ({"kind": "short_text", "label": "Email", "memory": "contact.email"}, None),
    ({"kind": "phone", "label": "Phone", "memory": "contact.phone"}, None),
    ({"kind": "decimal", "label": "Weight", "memory": "person.weigth"}, None),
    ({"kind": "integer", "label": "Weight", "memory": "person.weight_kg"}, None),
    ({"kind": "short_text", "label": "Project", "memory": "work.current_project"}, None),
    ({"kind": "url", "label": "Born", "memory": "person.date_of_birth"}, None),
    (
        {
            "kind": "multiple_choice",
            "label": "C",
            "options": [{"value": "x"}],
            "memory": "address.city",
        },
        None,
    ),
    (BLOOD_FIELD, None),
    (BLOOD_FIELD, BLOOD),
    ({**BLOOD_FIELD, "options": [{"value": "A"}]}, BLOOD),  # a field short of the key's options
]


@pytest.mark.parametrize(("sent", "vocabulary"), CASES)
def test_edit_time_and_publish_time_refuse_the_same_keys_in_the_same_words(
    sent: dict[str, Any], vocabulary: Vocabulary | None
) -> None:
    # WHEN the builder adds the field
    try:
        edited: FormDocument | None = apply_edit(
            draft(), "add_field", {"field": sent}, vocabulary=vocabulary
        ).document
        refused = None
    except EditError as error:
        edited, refused = None, error
    # AND the same document, written out, is compiled
    field_id = str(sent["label"]).lower()
    written = FormDocument.model_validate(
        {
            "id": "check-in",
            "title": "Check-in",
            "steps": [
                {"id": "about_you", "title": "About you", "items": [{**sent, "id": field_id}]}
            ],
        }
    )
    try:
        compile_document(written, vocabulary=vocabulary)
        problems: tuple[str, ...] = ()
    except InvalidFormDefinition as invalid:
        problems = invalid.problems
    # THEN both accept it, or both refuse it, the edit in the compiler's words
    assert (refused is None) == (not problems), (refused, problems)
    if refused is not None:
        (problem,) = problems
        assert problem.removeprefix("form 'check-in': ") in refused.message
    else:
        assert edited is not None
        assert (
            compile_document(edited, vocabulary=vocabulary).fields[field_id].memory
            == (sent["memory"])
        )
