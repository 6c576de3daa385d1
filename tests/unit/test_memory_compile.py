"""Fields declare the fact key they hold (``memory=``), checked when the form is compiled."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Literal, cast

import pytest
from pydantic import Field

from forms import FormDef, FormRegistry, InvalidFormDefinition, Step, compile_form, field
from forms.examples import health_check
from forms.memory import Vocabulary, fact_key
from formwork import cli

ROOT = Path(__file__).resolve().parents[2]


def form_of(*fields: tuple[str, object, object], form_id: str = "probe") -> FormDef:
    """A one-step form whose fields are (name, annotation, field(...))."""
    namespace: dict[str, object] = {"__annotations__": {n: a for n, a, _ in fields}}
    namespace.update({n: spec for n, _, spec in fields})
    step = cast("type[Step]", type("Details", (Step,), namespace))
    step.__step_settings__ = {"title": "Details"}
    return FormDef(id=form_id, version=1, title="Probe", steps=[step])


def problems_of(definition: FormDef, vocabulary: Vocabulary | None = None) -> tuple[str, ...]:
    with pytest.raises(InvalidFormDefinition) as raised:
        compile_form(definition, vocabulary=vocabulary)
    return raised.value.problems


def test_a_declared_fact_key_is_carried_into_the_compiled_field() -> None:
    # WHEN the health check is compiled
    form = compile_form(health_check)
    # THEN its three person fields hold their keys, in definition order; the others hold none
    assert form.memory_fields == ("date_of_birth", "height_cm", "weight_kg")
    assert form.fields["weight_kg"].memory == "person.weight_kg"
    assert form.fields["feeling"].memory is None


def test_a_misspelt_key_is_refused_naming_the_keys_it_likely_meant() -> None:
    # GIVEN a weight field declaring a key that does not exist
    probe = form_of(("weight", Decimal, field("Weight (kg)", memory="person.weigth")))
    # WHEN it is compiled / THEN the field, the key and the likely key are named
    (problem,) = problems_of(probe)
    assert problem.startswith(
        "form 'probe': field 'weight' (step 'details'): memory='person.weigth': "
        "unknown fact key 'person.weigth'; did you mean person.weight_kg"
    )


@pytest.mark.parametrize(
    ("annotation", "key", "words"),
    [
        (int, "person.weight_kg", "person.weight_kg holds decimal number"),
        (str, "person.date_of_birth", "the field takes string"),
        (Literal["A", "B"], "address.city", "does not fit the field"),
        (list[str], "contact.email", "does not fit the field"),
    ],
)
def test_a_key_whose_values_do_not_fit_the_field_is_refused(
    annotation: object, key: str, words: str
) -> None:
    # GIVEN a field whose type cannot take every value of its key
    probe = form_of(("answer", annotation, field("Answer", memory=key)))
    # WHEN it is compiled / THEN it is refused, saying why
    (problem,) = problems_of(probe)
    assert f"memory={key!r}" in problem and words in problem


def test_a_key_memory_never_keeps_cannot_be_declared() -> None:
    probe = form_of(("project", str, field("Current project", memory="work.current_project")))
    (problem,) = problems_of(probe)
    assert "never stored (do_not_store)" in problem


def test_a_field_an_approver_decides_takes_no_key() -> None:
    probe = form_of(
        (
            "decision",
            Literal["approved", "rejected"] | None,
            field("Decision", decided_by_approver=True, memory="work.job_title"),
        )
    )
    problems = " ".join(problems_of(probe))
    assert "a field an approver decides cannot be filled by memory" in problems


def test_every_bad_key_of_a_form_is_reported_at_once() -> None:
    probe = form_of(
        ("born", date, field("Born", memory="person.birthday")),
        ("tall", str, field("Tall", memory="person.height_cm")),
        ("kind", int, field("Kind", memory=42)),  # type: ignore[arg-type]
    )
    problems = problems_of(probe)
    assert len(problems) == 3
    assert "'person.birthday'" in problems[0] and "did you mean person.date_of_birth" in problems[0]
    assert "'person.height_cm'" in problems[1]
    assert "field 'kind'" in problems[2] and "memory must be a fact key" in problems[2]


def test_the_registry_checks_keys_against_the_deployments_vocabulary() -> None:
    # GIVEN a deployment that adds a key, and a form declaring it
    blood = fact_key("person.blood_type", "Blood type", Literal["A", "B", "AB", "O"], "never")
    vocabulary = Vocabulary.default().extended([blood])

    def probe() -> FormDef:
        return form_of(
            ("blood", Literal["A", "B", "AB", "O"], field("Blood type", memory="person.blood_type"))
        )

    # WHEN it is registered with that vocabulary / THEN it compiles
    registry = FormRegistry([probe()], vocabulary=vocabulary)
    assert registry.latest("probe").fields["blood"].memory == "person.blood_type"
    assert registry.vocabulary is vocabulary
    # AND a registry on Formwork's vocabulary refuses it, even once compiled elsewhere
    (problem,) = problems_of(probe())
    assert "unknown fact key 'person.blood_type'" in problem
    compiled_once = probe()
    FormRegistry([compiled_once], vocabulary=vocabulary)
    with pytest.raises(InvalidFormDefinition, match=r"person\.blood_type"):
        FormRegistry([compiled_once])
    assert FormRegistry().vocabulary is Vocabulary.default()


def test_formwork_check_prints_a_bad_key_at_the_fields_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a module with a form whose weight field declares a misspelt key
    source = (
        "from decimal import Decimal\n"
        "from forms import FormDef, Step, field\n"
        "class Body(Step, title='Body'):\n"
        "    weight: Decimal = field('Weight (kg)', memory='person.weigth')\n"
        "FORM = FormDef(id='body', version=1, title='Body', steps=[Body])\n"
    )
    (tmp_path / "memory_probe_forms.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    # WHEN it is checked
    assert cli.main(["check", "memory_probe_forms:FORM"]) == 1
    # THEN the fault is at the field's line, with the key it likely meant
    out = capsys.readouterr().out
    assert "memory_probe_forms.py:4:" in out
    assert "did you mean person.weight_kg" in out
    sys.modules.pop("memory_probe_forms", None)


def test_forms_without_fact_keys_never_load_memory() -> None:
    # GIVEN a fresh interpreter
    code = (
        "import json, sys\n"
        "from forms import FormRegistry\n"
        "from forms.examples.travel_claim import travel_claim\n"
        "from forms.examples.health_check import health_check\n"
        "FormRegistry([travel_claim])\n"
        "without = sorted(m for m in sys.modules if m.startswith('forms.memory'))\n"
        "FormRegistry([health_check])\n"
        "checked = sorted(m for m in sys.modules if m.startswith('forms.memory'))\n"
        "vocabulary = 'forms.vocabulary' in sys.modules\n"
        "print(json.dumps([without, checked, vocabulary]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    without, checked, vocabulary = json.loads(done.stdout.strip().splitlines()[-1])
    # WHEN a form without keys is registered / THEN nothing of memory is loaded
    assert without == []
    # AND a form with keys loads the vocabulary to check them (the core's), not memory
    assert vocabulary and checked == []


def test_an_annotated_field_type_fits_by_kind_and_is_bounded_at_recall() -> None:
    # GIVEN a height field narrower than the key (50-250 against 30-300)
    probe = form_of(
        (
            "height",
            Annotated[int, Field(ge=50, le=250)],
            field("Height (cm)", memory="person.height_cm"),
        )
    )
    # WHEN it is compiled / THEN it fits: bounds are checked per value at recall
    assert compile_form(probe).fields["height"].memory == "person.height_cm"
