"""The builder personas, as scripts: the calls each makes, what each call's result must report,
and what the draft must be at the end.

A scenario starts from a fresh draft store; ``seed`` calls (not measured) make the draft the
person is editing, then ``steps`` are the persona's calls, measured one by one. A step may say
the call is meant to be refused (``refused``: the error code) and which strings the result must
report as read for numbers or booleans (``coerced``), which ids rewritten (``rewritten``) and
which names resolved (``resolved``): the harness compares them with the result exactly, so a
note the persona earned and did not get, or one it got unasked, is a problem of that call.

``expect(before, after)`` names what keeps the final draft from being the expected document
(``before`` is the draft after the seed, None without one); empty is a pass.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from forms.documents import FormDocument
from formwork.examples.job_application import BUILD, BuilderCall, check_job_application

Coerced = tuple[str, str, str | int | float | bool]
"""A note the result must carry: (where, the string sent, the value stored)."""
Expect = Callable[[FormDocument | None, FormDocument], list[str]]


@dataclass(frozen=True, slots=True)
class Step:
    """One measured call and what its result must say."""

    call: BuilderCall
    refused: str | None = None
    coerced: tuple[Coerced, ...] = ()
    rewritten: Mapping[str, str] = field(default_factory=dict)
    resolved: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Scenario:
    id: str
    persona: str
    claim: str
    steps: tuple[Step, ...]
    expect: Expect
    seed: tuple[BuilderCall, ...] = ()


# ---------------------------------------------------------------------- checks on a draft


def as_json(document: FormDocument) -> dict[str, Any]:
    """The document without its defaults: the smallest JSON that reads back as the same draft
    (what the reprint baseline counts, and what comparisons read)."""
    data: dict[str, Any] = document.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    return data


def differences(expected: Any, actual: Any, at: str = "") -> list[str]:
    """Where ``actual`` differs from ``expected`` (JSON), one line per place."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        found: list[str] = []
        for key in [*expected, *(k for k in actual if k not in expected)]:
            where = f"{at}.{key}" if at else str(key)
            if key not in actual:
                found.append(f"{where}: missing (expected {expected[key]!r})")
            elif key not in expected:
                found.append(f"{where}: unexpected {actual[key]!r}")
            else:
                found += differences(expected[key], actual[key], where)
        return found
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        return [
            d
            for i, (e, a) in enumerate(zip(expected, actual, strict=True))
            for d in differences(e, a, f"{at}[{i}]")
        ]
    return [] if expected == actual else [f"{at}: {actual!r}, expected {expected!r}"]


def without_layout(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (a document's JSON) with every item's layout left out."""
    steps = [
        {**s, "items": [{k: v for k, v in i.items() if k != "layout"} for i in s.get("items", [])]}
        for s in data["steps"]
    ]
    return {**data, "steps": steps}


def layout_problems(document: FormDocument) -> list[str]:
    """Items without a whole place on the 12-column grid, or overlapping another."""
    problems: list[str] = []
    for step in document.steps:
        boxes: list[tuple[str, int, int, int, int]] = []
        for item in step.items:
            if item.layout is None:
                problems.append(f"{item.id} has no layout")
                continue
            g = item.layout
            for other, x, y, w, h in boxes:
                if g.x < x + w and x < g.x + g.w and g.y < y + h and y < g.y + g.h:
                    problems.append(f"{item.id} overlaps {other}")
            boxes.append((item.id, g.x, g.y, g.w, g.h))
    return problems


def places(document: FormDocument, *ids: str) -> list[str]:
    """Where the items ``ids`` sit, as ``id x,y wxh``."""
    found = {i.id: i.layout for s in document.steps for i in s.items}
    shown = []
    for item_id in ids:
        g = found.get(item_id)
        shown.append(f"{item_id} {g.x},{g.y} {g.w}x{g.h}" if g else f"{item_id} (none)")
    return shown


def _is_job_application(before: FormDocument | None, after: FormDocument) -> list[str]:
    return check_job_application(after) + layout_problems(after)


# ---------------------------------------------------------------------- (a) the tidy build


TIDY = Scenario(
    "tidy_build",
    "tidy",
    "The job application built from an empty canvas in small calls (examples/job_application.py).",
    tuple(Step(call) for call in BUILD),
    _is_job_application,
)


# ---------------------------------------------------------------------- (b) make this required


def _cover_letter_required(before: FormDocument | None, after: FormDocument) -> list[str]:
    assert before is not None
    expected = as_json(before)
    about = next(s for s in expected["steps"] if s["id"] == "about")
    letter = next(i for i in about["items"] if i["id"] == "cover_letter")
    del letter["required"]  # required: true is the default, so the JSON leaves it out
    return differences(expected, as_json(after))


MAKE_REQUIRED = Scenario(
    "make_required",
    "tidy",
    '"Make this required" with the cover letter selected: one update_field on the finished '
    "draft; nothing else may change.",
    (
        Step(
            BuilderCall(
                "update_field",
                {"updates": {"required": True}},
                selection={"field": "cover_letter"},
                said="Make this required.",
            )
        ),
    ),
    _cover_letter_required,
    seed=BUILD,
)


# ---------------------------------------------------------------------- (c) add, inspect, gate

GITHUB_RULE = {"field": "position", "op": "equals", "value": "engineering"}


def _github_added(before: FormDocument | None, after: FormDocument) -> list[str]:
    assert before is not None
    expected = without_layout(as_json(before))
    about = next(s for s in expected["steps"] if s["id"] == "about")
    about["items"].insert(
        2,
        {
            "id": "github_profile",
            "label": "GitHub profile",
            "required": False,
            "when": GITHUB_RULE,
            "kind": "url",
        },
    )
    return differences(expected, without_layout(as_json(after))) + layout_problems(after)


ADD_INSPECT_GATE = Scenario(
    "add_inspect_gate",
    "tidy",
    "In one turn, with the portfolio selected: add a field after it (its id derived from the "
    "label), inspect the new id, gate it on the position.",
    (
        Step(
            BuilderCall(
                "add_field",
                {"field": {"kind": "url", "label": "GitHub profile", "required": False}},
                selection={"field": "portfolio_url"},
                said="Add a GitHub link after this one, for engineers only.",
            )
        ),
        Step(
            BuilderCall(
                "inspect_form",
                {"scope": "field", "id": "github_profile"},
                selection={"field": "portfolio_url"},
            )
        ),
        Step(
            BuilderCall(
                "set_conditional_logic",
                {"target": "field", "id": "github_profile", "when": GITHUB_RULE},
                selection={"field": "portfolio_url"},
            )
        ),
    ),
    _github_added,
    seed=BUILD,
)


# ---------------------------------------------------------------------- (d) the sloppy build

_OPTIONS = {
    "position": ["engineering", "design", "sales", "support"],
    "preferred_locations": ["berlin", "lisbon", "remote"],
}


def everything_at_once() -> dict[str, Any]:
    """The old contract under a tool name: the job application and 28 fields more (seven
    references), 40 fields in one create_form."""
    references = [
        {"kind": kind, "id": f"reference_{n}_{part}", "label": f"Reference {n} {part}"}
        for n in range(1, 8)
        for part, kind in (
            ("name", "short_text"),
            ("email", "email"),
            ("phone", "phone"),
            ("relationship", "short_text"),
        )
    ]

    def item(item_id: str, kind: str, **more: Any) -> dict[str, Any]:
        label = item_id.replace("_", " ").capitalize()
        return {"kind": kind, "id": item_id, "label": label, **more}

    def choice(item_id: str, kind: str) -> dict[str, Any]:
        return item(item_id, kind, options=[{"value": v} for v in _OPTIONS[item_id]])

    steps = [
        {
            "id": "applicant",
            "title": "Applicant",
            "items": [
                item("full_name", "short_text"),
                item("email", "email"),
                item("phone", "phone", required="false"),
            ],
        },
        {
            "id": "role",
            "title": "Role",
            "items": [
                choice("position", "single_choice"),
                item("years_experience", "integer", minimum="0", maximum="60"),
                item("start_date", "date"),
            ],
        },
        {
            "id": "eligibility",
            "title": "Eligibility",
            "items": [
                item("authorized_to_work", "boolean"),
                item("needs_sponsorship", "boolean"),
                item("relocate", "boolean"),
                choice("preferred_locations", "multiple_choice"),
            ],
        },
        {
            "id": "about",
            "title": "About you",
            "items": [
                item("portfolio_url", "url", required="no"),
                item("cover_letter", "long_text", required="false"),
                *references,
            ],
        },
    ]
    return {"title": "Job application", "steps": steps}


def _sloppy_add(step: str, item: dict[str, Any]) -> BuilderCall:
    return BuilderCall("add_field", {"step": step, "field": item})


def _gate(field_id: str, on: str, value: object) -> BuilderCall:
    rule = {"field": on, "op": "equals", "value": value}
    return BuilderCall("set_conditional_logic", {"target": "field", "id": field_id, "when": rule})


_TIDY_CHECKPOINTS = tuple(Step(c) for c in BUILD if c.tool == "set_checkpoint")
_HALF = {"w": "6"}
"""Half the grid's width, as a string; no x or y."""


def _sloppy_expect(before: FormDocument | None, after: FormDocument) -> list[str]:
    placed = places(after, "full_name", "email", "phone", "position", "years_experience")
    wanted = [
        "full_name 0,0 6x1",
        "email 6,0 6x1",
        "phone 0,1 12x1",
        "position 0,0 6x1",
        "years_experience 6,0 6x1",
    ]
    laid = [] if placed == wanted else [f"the half-width fields sit at {placed}, not {wanted}"]
    return _is_job_application(before, after) + laid


SLOPPY = Scenario(
    "sloppy_build",
    "sloppy",
    'The job application again, sloppily: one 40-field create_form first, "6" for widths, '
    '"false"/"0"/"no"/"true" for booleans, numbers as strings, no x/y, a step named by its '
    "title, the email field sent twice (then deleted by the id the result gave), a rule value "
    'as "false".',
    (
        Step(BuilderCall("create_form", everything_at_once()), refused="too_large"),
        Step(
            BuilderCall(
                "create_form",
                {
                    "title": "Job application",
                    "steps": [
                        {"id": "applicant", "title": "Applicant"},
                        {"id": "role", "title": "Role"},
                        {"id": "eligibility", "title": "Eligibility"},
                        {"id": "about", "title": "About you"},
                    ],
                    "replace": "no",
                },
            ),
            coerced=(("replace", "no", False),),
        ),
        Step(
            _sloppy_add(
                "Applicant",
                {"kind": "short_text", "id": "full_name", "label": "Full name", "layout": _HALF},
            ),
            coerced=(("field.layout.w", "6", 6),),
            resolved={"Applicant": "applicant"},
        ),
        Step(
            _sloppy_add(
                "applicant", {"kind": "email", "id": "email", "label": "Email", "layout": _HALF}
            ),
            coerced=(("field.layout.w", "6", 6),),
        ),
        Step(
            _sloppy_add(
                "applicant", {"kind": "phone", "id": "phone", "label": "Phone", "required": "false"}
            ),
            coerced=(("field.required", "false", False),),
        ),
        Step(
            _sloppy_add("applicant", {"kind": "email", "id": "email", "label": "Email"}),
            rewritten={"email": "email_2"},
        ),
        Step(BuilderCall("delete_field", {"field": "email_2"})),
        Step(
            _sloppy_add(
                "role",
                {
                    "kind": "single_choice",
                    "id": "position",
                    "label": "Position",
                    "options": [{"value": v} for v in _OPTIONS["position"]],
                    "layout": _HALF,
                },
            ),
            coerced=(("field.layout.w", "6", 6),),
        ),
        Step(
            _sloppy_add(
                "role",
                {
                    "kind": "integer",
                    "id": "years_experience",
                    "label": "Years of experience",
                    "minimum": "0",
                    "maximum": "60",
                    "layout": _HALF,
                },
            ),
            coerced=(
                ("field.layout.w", "6", 6),
                ("field.minimum", "0", 0),
                ("field.maximum", "60", 60),
            ),
        ),
        Step(
            _sloppy_add(
                "role",
                {"kind": "date", "id": "start_date", "label": "Start date", "required": "no"},
            ),
            coerced=(("field.required", "no", False),),
        ),
        Step(
            BuilderCall(
                "update_field",
                {"updates": {"required": "true"}},
                selection={"field": "start_date"},
                said="Make this required.",
            ),
            coerced=(("updates.required", "true", True),),
        ),
        Step(
            _sloppy_add(
                "eligibility",
                {"kind": "boolean", "id": "authorized_to_work", "label": "Authorised to work"},
            )
        ),
        Step(
            _sloppy_add(
                "eligibility",
                {"kind": "boolean", "id": "needs_sponsorship", "label": "Needs sponsorship"},
            )
        ),
        Step(
            _gate("needs_sponsorship", "authorized_to_work", "false"),
            coerced=(("when.value", "false", False),),
        ),
        Step(
            _sloppy_add(
                "eligibility", {"kind": "boolean", "id": "relocate", "label": "Willing to relocate"}
            )
        ),
        Step(
            _sloppy_add(
                "eligibility",
                {
                    "kind": "multiple_choice",
                    "id": "preferred_locations",
                    "label": "Preferred locations",
                    "options": [{"value": v} for v in _OPTIONS["preferred_locations"]],
                },
            )
        ),
        Step(_gate("preferred_locations", "relocate", True)),
        Step(_sloppy_add("about", {"kind": "heading", "text": "Tell us about yourself"})),
        Step(
            _sloppy_add(
                "about",
                {"kind": "url", "id": "portfolio_url", "label": "Portfolio", "required": "0"},
            ),
            coerced=(("field.required", "0", False),),
        ),
        Step(_gate("portfolio_url", "position", "design")),
        Step(
            _sloppy_add(
                "about",
                {
                    "kind": "long_text",
                    "id": "cover_letter",
                    "label": "Cover letter",
                    "required": "false",
                    "max_length": "4000",
                },
            ),
            coerced=(("field.required", "false", False), ("field.max_length", "4000", 4000)),
        ),
        *_TIDY_CHECKPOINTS,
    ),
    _sloppy_expect,
)

SCENARIOS: tuple[Scenario, ...] = (TIDY, MAKE_REQUIRED, ADD_INSPECT_GATE, SLOPPY)
EDIT_LOOP = ("make_required", "add_inspect_gate")
"""The scenarios that edit a finished draft: the turns the seed says most turns are."""
