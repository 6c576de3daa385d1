"""builder-bench: every persona's draft ends as the document it should, the sloppy persona's
strings and duplicate id are reported by the results, the token ratios come from real counts,
the job application's script compiles to a publishable form, and the bench runs and prints."""

from __future__ import annotations

import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from bench.builder_bench import __main__ as bench_main
from bench.builder_bench.harness import Outcome, play
from bench.builder_bench.report import builder_surface, form_surface
from bench.builder_bench.scenarios import SCENARIOS, SLOPPY, as_json
from bench.forms_bench.ledger import compact, surface, tokens
from forms.documents import FormDocument, Selection, apply_edit, compile_document
from forms.errors import InvalidFormDefinition
from forms.surface.formats import FORMATS
from formwork.examples.executors import EXECUTORS
from formwork.examples.job_application import BUILD, FORM_ID, check_job_application

JOB_ITEMS = {
    "applicant": ["full_name", "email", "phone"],
    "role": ["position", "years_experience", "start_date"],
    "eligibility": ["authorized_to_work", "needs_sponsorship", "relocate", "preferred_locations"],
    "about": ["about_heading", "portfolio_url", "cover_letter"],
}


@cache
def outcome(scenario: str) -> Outcome:
    """The scenario played once per session (the whole bench takes under a second)."""
    return play(next(s for s in SCENARIOS if s.id == scenario))


def items(document: FormDocument) -> dict[str, list[str]]:
    return {step.id: [item.id for item in step.items] for step in document.steps}


def item(document: FormDocument, item_id: str) -> Any:
    return next(i for s in document.steps for i in s.items if i.id == item_id)


def rule(document: FormDocument, item_id: str) -> Any:
    when = item(document, item_id).when
    return None if when is None else when.model_dump(mode="json", by_alias=True)


def built_by_the_engine() -> FormDocument:
    """The job application applied call by call with the pure edit engine (no service)."""
    draft: FormDocument | None = None
    for call in BUILD:
        if call.tool == "inspect_form":
            continue
        selection = Selection(**call.selection) if call.selection else None
        draft = apply_edit(draft, call.tool, dict(call.input), selection=selection).document
    assert draft is not None
    return draft


# ---------------------------------------------------------------------------- the drafts


def test_the_tidy_build_ends_as_the_job_application() -> None:
    # GIVEN the tidy persona's scripted build, played against the service
    done = outcome("tidy_build")
    doc = done.document
    # THEN every call applied with nothing missed, and the draft is the form, item by item
    assert done.call_problems == [] and all(c.result["ok"] for c in done.calls)
    assert (doc.id, items(doc)) == (FORM_ID, JOB_ITEMS)
    assert [(i.id, i.kind, item(doc, i.id).required) for i in doc.steps[0].items] == [
        ("full_name", "short_text", True),
        ("email", "email", True),
        ("phone", "phone", False),
    ]
    assert item(doc, "start_date").required is True  # made required through the selection
    assert rule(doc, "needs_sponsorship") == {
        "field": "authorized_to_work",
        "op": "equals",
        "value": False,
    }
    assert rule(doc, "preferred_locations")["field"] == "relocate"
    assert rule(doc, "portfolio_url")["value"] == "design"
    assert item(doc, "cover_letter").max_length == 4000
    assert [c.id for c in doc.checkpoints] == ["sponsorship_review", "junior_engineer"]
    # AND the check agrees, and the draft was published as version 1
    assert done.problems == ()
    assert done.published == 1


def test_make_this_required_changes_that_one_key_and_nothing_else() -> None:
    # GIVEN the finished job application, with the cover letter selected
    before = as_json(outcome("tidy_build").document)
    # WHEN the persona sends update_field {"required": true} without naming the field
    done = outcome("make_required")
    # THEN the selected field is required and the rest of the document is byte for byte the same
    (call,) = done.calls
    assert call.result == {"ok": True, "summary": 'Updated field "cover_letter": required.'}
    about = next(s for s in before["steps"] if s["id"] == "about")
    del next(i for i in about["items"] if i["id"] == "cover_letter")["required"]
    assert as_json(done.document) == before
    assert done.problems == ()


def test_add_inspect_and_gate_in_one_turn_lands_after_the_selected_field() -> None:
    # WHEN the persona adds a field with the portfolio selected, inspects it, and gates it
    done = outcome("add_inspect_gate")
    doc = done.document
    # THEN the field (id derived from its label) sits right after the portfolio, gated
    assert items(doc)["about"] == [
        "about_heading",
        "portfolio_url",
        "github_profile",
        "cover_letter",
    ]
    new = item(doc, "github_profile")
    assert (new.kind, new.required) == ("url", False)
    assert rule(doc, "github_profile") == {
        "field": "position",
        "op": "equals",
        "value": "engineering",
    }
    # AND the inspect in between saw the new field where the add put it
    seen = done.calls[1].result
    assert (seen["ok"], seen["step"], seen["position"]) == (True, "about", 2)
    # AND nothing else changed, and nothing overlaps on the grid
    assert done.problems == ()
    assert done.published == 1


def test_the_sloppy_persona_gets_every_string_and_rewrite_reported() -> None:
    # WHEN the sloppy persona builds the job application
    done = outcome("sloppy_build")
    # THEN each string it sent for a number or boolean is reported where it went
    assert sorted(tuple(c.values()) for c in done.noted("coerced")) == sorted(
        [
            ("replace", "no", False),
            ("field.layout.w", "6", 6),
            ("field.layout.w", "6", 6),
            ("field.layout.w", "6", 6),
            ("field.layout.w", "6", 6),
            ("field.required", "false", False),
            ("field.minimum", "0", 0),
            ("field.maximum", "60", 60),
            ("field.required", "no", False),
            ("updates.required", "true", True),
            ("field.required", "0", False),
            ("field.required", "false", False),
            ("field.max_length", "4000", 4000),
            ("when.value", "false", False),
        ]
    )
    # AND the duplicate id was rewritten and said so, and the step named by title resolved
    assert done.noted("ids_rewritten") == [("email", "email_2")]
    assert done.noted("resolved") == [("Applicant", "applicant")]
    assert done.call_problems == []
    # AND the values stored are what the strings meant
    doc = done.document
    assert (item(doc, "phone").required, item(doc, "start_date").required) == (False, True)
    assert (item(doc, "years_experience").minimum, item(doc, "years_experience").maximum) == (0, 60)
    assert item(doc, "cover_letter").max_length == 4000
    assert "email_2" not in items(doc)["applicant"]
    # AND the half-width fields were packed side by side without an x or y
    placed = [item(doc, i).layout for i in ("full_name", "email", "phone")]
    assert [(g.x, g.y, g.w) for g in placed] == [
        (0, 0, 6),
        (6, 0, 6),
        (0, 1, 12),
    ]


def test_the_40_field_create_form_is_refused_and_applies_nothing() -> None:
    # WHEN the sloppy persona sends the whole form in one create_form
    first = outcome("sloppy_build").calls[0]
    # THEN it is refused as too large, pointing at the small calls, and changed nothing
    assert first.call.tool == "create_form"
    assert first.result["ok"] is False and first.result["error"] == "too_large"
    assert "40 fields" in first.result["message"]
    assert "add_field" in first.result["hint"]
    assert first.reprint == 0
    assert outcome("sloppy_build").calls[1].result["summary"].startswith("Created form")


def test_the_sloppy_persona_ends_with_the_job_application() -> None:
    # WHEN the sloppy persona builds it, a rule value sent as "false" included
    done = outcome("sloppy_build")
    # THEN the draft is the job application, the rule holding the boolean false
    assert done.problems == ()
    assert rule(done.document, "needs_sponsorship") == {
        "field": "authorized_to_work",
        "op": "equals",
        "value": False,
    }
    assert done.published == 1


@pytest.mark.parametrize("scenario", ["make_required", "add_inspect_gate", "sloppy_build"])
def test_a_scenarios_check_refuses_the_draft_it_starts_from(scenario: str) -> None:
    # GIVEN the finished tidy draft, which none of these scenarios should end with
    tidy = outcome("tidy_build").document
    check = next(s for s in SCENARIOS if s.id == scenario).expect
    # THEN the scenario's own check names what is missing
    assert check(tidy, tidy) != []


# ---------------------------------------------------------------------------- tokens


def test_the_counts_are_the_tokens_of_what_was_sent_and_read() -> None:
    # GIVEN "make this required"
    (call,) = outcome("make_required").calls
    # THEN its counts are the o200k tokens of its arguments, its result and the whole draft
    assert call.arguments == tokens('{"updates":{"required":true}}')
    assert call.answer == tokens(compact(call.result))
    assert call.reprint == tokens(compact(as_json(outcome("make_required").document)))
    assert 0 < call.arguments < call.answer < call.reprint


@pytest.mark.parametrize("scenario", ["make_required", "add_inspect_gate"])
def test_reprinting_costs_more_than_the_edits_in_the_edit_loop(scenario: str) -> None:
    done = outcome(scenario)
    assert done.reprints == sum(c.reprint for c in done.calls)
    assert done.edits == sum(c.arguments + c.answer for c in done.calls)
    assert done.reprints > 5 * done.edits


def test_a_build_from_nothing_costs_more_than_one_dump_and_less_than_a_reprint_per_change() -> None:
    done = outcome("tidy_build")
    assert done.final < done.edits < done.reprints
    reprinted = [c.reprint for c in done.calls if c.applied]
    assert reprinted[-1] == done.final  # the last change leaves the final document


def test_the_surfaces_are_counted_as_the_form_tools_are() -> None:
    # GIVEN the form tools counted the bench's way and forms-bench's way
    forms = form_surface()
    # THEN the totals agree, and every vendor shape of both tool sets is counted
    assert forms.total == surface()["total_compact"]
    builder = builder_surface()
    assert [name for name, *_ in builder.per_tool][:2] == ["create_form", "update_form"]
    assert set(builder.formats) == set(forms.formats) == set(FORMATS)
    assert all(builder.formats[f] > forms.formats[f] > 0 for f in FORMATS)


def test_the_builder_tools_list_costs_under_4400_tokens_in_every_format() -> None:
    # GIVEN the builder tools as every vendor's tools list, sent with every model call
    builder = builder_surface()
    # THEN each costs under 4,400 tokens (it was 12,510 with every item kind spelt out; 3,723
    # at most for fifteen tools with the item one flat object; update_form, the keys that let
    # a document do what a code form does and the item's three shapes brought it to ~4,260)
    assert max(builder.formats.values()) < 4_400, builder.formats


# ---------------------------------------------------------------------------- the script


def test_the_job_application_script_compiles_to_a_publishable_form() -> None:
    # GIVEN the script applied by the pure edit engine
    draft = built_by_the_engine()
    # WHEN it is compiled with the demo's executors
    form = compile_document(draft, executors=EXECUTORS)
    # THEN it has the twelve fields, in order
    assert list(form.fields) == [
        f for ids in JOB_ITEMS.values() for f in ids if f != "about_heading"
    ]
    assert check_job_application(draft) == []
    # AND without notify_recruiter it is refused, naming the executor
    with pytest.raises(InvalidFormDefinition, match="notify_recruiter"):
        compile_document(draft, executors={})


def test_the_check_names_each_way_a_document_is_not_the_job_application() -> None:
    # GIVEN the job application with four things changed
    data = built_by_the_engine().model_dump(mode="json", by_alias=True, exclude_none=True)
    applicant, role, eligibility, _ = data["steps"]
    applicant["items"][2]["required"] = True  # phone
    role["items"][1]["kind"] = "decimal"  # years_experience
    del eligibility["items"][1]["when"]  # needs_sponsorship
    data["checkpoints"] = data["checkpoints"][:1]
    # WHEN it is checked (as the JSON the builder API returns)
    problems = check_job_application(data)
    # THEN each is named
    assert len(problems) == 4, problems
    assert any("'phone' is required" in p for p in problems)
    assert any("'years_experience' is a decimal" in p for p in problems)
    assert any("'needs_sponsorship' applies when None" in p for p in problems)
    assert any("checkpoints are ['sponsorship_review']" in p for p in problems)


def test_the_job_application_module_loads_neither_boto3_nor_temporalio() -> None:
    code = (
        "import sys, formwork.examples.job_application as j; j.check_job_application; "
        "print(sorted(m for m in ('boto3', 'botocore', 'temporalio') if m in sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert loaded.strip() == "[]"


# ---------------------------------------------------------------------------- the program


def test_the_bench_runs_prints_and_writes_its_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the bench writing into a temporary folder instead of bench/results
    asked: list[bool] = []

    def folder(publish: bool) -> Path:
        asked.append(publish)
        return tmp_path

    monkeypatch.setattr(bench_main, "output_dir", folder)
    # WHEN it runs, once as make bench runs it and once with --publish
    bench_main.main([])
    bench_main.main(["--publish"])
    # THEN it printed the scenario table and the surfaces, and wrote the report where asked
    printed = capsys.readouterr().out
    for scenario in SCENARIOS:
        assert f"| {scenario.id} |" in printed
    assert "builder tools (16)" in printed and "**edit loop**" in printed
    assert asked == [False, True]
    report = (tmp_path / "builder.md").read_text()
    assert report.startswith("# builder-bench")
    assert "## Every call" in report and SLOPPY.claim in report
