"""The job application a tidy builder agent makes through the builder tools, as data.

``BUILD`` is the scripted build: the calls a builder agent makes on the draft ``FORM_ID``, in
the order it makes them, each with the editor's selection when the person pointed at a field
and, on the first call of each of the person's turns, what the person said. It works the way
the builder asks to be worked (``docs/builder.md``): ``create_form`` with the title and the
steps only, then one ``add_field`` per field, ``set_conditional_logic`` on a field it has just
added (once after an ``inspect_form`` on the new id, the same-turn sequence), "make this
required" as ``update_field`` ``{"required": true}`` on the selected field, a heading, and two
checkpoints with ``set_checkpoint``.

``check_job_application`` says whether a document is this form (ids, kinds, what is required,
constraints, rules, checkpoints; not labels or layout), so the demo, the builder bench and the
tests check a draft against one description of it, written apart from the script.

The form, twelve fields in four steps:

* ``applicant``: ``full_name``, ``email``, ``phone`` (optional)
* ``role``: ``position`` (engineering, design, sales, support), ``years_experience`` (0-60),
  ``start_date``
* ``eligibility``: ``authorized_to_work``; ``needs_sponsorship`` when not authorised;
  ``relocate``; ``preferred_locations`` (berlin, lisbon, remote) when willing to relocate
* ``about``: a heading; ``portfolio_url`` (optional) for designers; ``cover_letter``
  (optional, up to 4,000 characters)
* checkpoints: ``sponsorship_review`` runs the executor ``notify_recruiter`` when an applicant
  needs sponsorship; ``junior_engineer`` refuses engineering applicants with less than a year
  of experience, naming the years.

Published, it needs an executor registry holding ``notify_recruiter`` (``EXECUTORS_NAMED``;
the local stack's is ``formwork.examples.executors.EXECUTORS``). Pure data and pydantic: importing
this module loads neither boto3 nor temporalio.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from forms.documents import FormDocument

__all__ = [
    "BUILD",
    "EXECUTORS_NAMED",
    "FORM_ID",
    "BuilderCall",
    "check_job_application",
]

FORM_ID = "job-application"
"""The draft's form id, and the published form's."""
EXECUTORS_NAMED = ("notify_recruiter",)
"""The executors the form names: the registry it is published with must hold them."""


class BuilderCall(NamedTuple):
    """One builder tool call: the tool, its input, the editor's selection (``{"field": id}``
    or ``{"step": id}``) when the person pointed at something, and what the person said when
    the call is the first of their turn."""

    tool: str
    input: Mapping[str, Any]
    selection: dict[str, str] | None = None
    said: str | None = None


def _add(step: str, item: dict[str, Any], said: str | None = None) -> BuilderCall:
    return BuilderCall("add_field", {"step": step, "field": item}, said=said)


def _gate(field_id: str, on: str, value: object) -> BuilderCall:
    rule = {"field": on, "op": "equals", "value": value}
    return BuilderCall("set_conditional_logic", {"target": "field", "id": field_id, "when": rule})


JUNIOR_MESSAGE = (
    "Engineering roles need at least one year of experience; the applicant has {years_experience}."
)
"""The ``junior_engineer`` checkpoint's refusal (the engine fills in the years)."""

BUILD: tuple[BuilderCall, ...] = (
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
        },
        said="I need a job application: who the applicant is, the role they want (and a start "
        "date if they have one), whether they can work here, and a bit about them.",
    ),
    _add("applicant", {"kind": "short_text", "id": "full_name", "label": "Full name"}),
    _add("applicant", {"kind": "email", "id": "email", "label": "Email"}),
    _add("applicant", {"kind": "phone", "id": "phone", "label": "Phone", "required": False}),
    _add(
        "role",
        {
            "kind": "single_choice",
            "id": "position",
            "label": "Position",
            "options": [
                {"value": "engineering"},
                {"value": "design"},
                {"value": "sales"},
                {"value": "support"},
            ],
        },
    ),
    _add(
        "role",
        {
            "kind": "integer",
            "id": "years_experience",
            "label": "Years of experience",
            "minimum": 0,
            "maximum": 60,
        },
    ),
    _add("role", {"kind": "date", "id": "start_date", "label": "Start date", "required": False}),
    BuilderCall(
        "update_field",
        {"updates": {"required": True}},
        selection={"field": "start_date"},
        said="Make this required.",
    ),
    _add(
        "eligibility",
        {"kind": "boolean", "id": "authorized_to_work", "label": "Authorised to work here"},
        said="Next, eligibility: can they work here, and if not, do they need sponsorship? "
        "And would they relocate, and where to?",
    ),
    _add(
        "eligibility", {"kind": "boolean", "id": "needs_sponsorship", "label": "Needs sponsorship"}
    ),
    BuilderCall("inspect_form", {"scope": "field", "id": "needs_sponsorship"}),
    _gate("needs_sponsorship", "authorized_to_work", False),
    _add("eligibility", {"kind": "boolean", "id": "relocate", "label": "Willing to relocate"}),
    _add(
        "eligibility",
        {
            "kind": "multiple_choice",
            "id": "preferred_locations",
            "label": "Preferred locations",
            "options": [{"value": "berlin"}, {"value": "lisbon"}, {"value": "remote"}],
        },
    ),
    _gate("preferred_locations", "relocate", True),
    _add(
        "about",
        {"kind": "heading", "id": "about_heading", "text": "Tell us about yourself"},
        said="Last page: a heading, a portfolio link for designers, and an optional cover letter.",
    ),
    _add("about", {"kind": "url", "id": "portfolio_url", "label": "Portfolio", "required": False}),
    _gate("portfolio_url", "position", "design"),
    _add(
        "about",
        {
            "kind": "long_text",
            "id": "cover_letter",
            "label": "Cover letter",
            "required": False,
            "max_length": 4000,
        },
    ),
    BuilderCall(
        "set_checkpoint",
        {
            "id": "sponsorship_review",
            "title": "Sponsorship review",
            "when": {"field": "needs_sponsorship", "op": "equals", "value": True},
            "then": [{"action": "run", "executor": "notify_recruiter"}],
        },
        said="Tell the recruiters about anyone who needs sponsorship, and stop engineering "
        "applicants with less than a year of experience.",
    ),
    BuilderCall(
        "set_checkpoint",
        {
            "id": "junior_engineer",
            "title": "Junior engineer",
            "when": {
                "all": [
                    {"field": "position", "op": "equals", "value": "engineering"},
                    {"field": "years_experience", "op": "less_than", "value": 1},
                ]
            },
            "then": [{"action": "fail", "message": JUNIOR_MESSAGE}],
        },
    ),
)
"""The tidy builder's calls, in order: 20 calls, 19 of them edits."""


# ---------------------------------------------------------------------- what the form is


@dataclass(frozen=True, slots=True)
class _Field:
    kind: str
    required: bool = True
    when: Mapping[str, Any] | None = None
    constraints: Mapping[str, Any] = field(default_factory=dict)


def _equals(on: str, value: object) -> dict[str, Any]:
    return {"field": on, "op": "equals", "value": value}


HEADING = "heading"
"""Stands for the ``about`` step's heading block in ``_STEPS`` (its id is the builder's)."""
_STEPS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("applicant", "Applicant", ("full_name", "email", "phone")),
    ("role", "Role", ("position", "years_experience", "start_date")),
    (
        "eligibility",
        "Eligibility",
        ("authorized_to_work", "needs_sponsorship", "relocate", "preferred_locations"),
    ),
    ("about", "About you", (HEADING, "portfolio_url", "cover_letter")),
)
_FIELDS: Mapping[str, _Field] = {
    "full_name": _Field("short_text"),
    "email": _Field("email"),
    "phone": _Field("phone", required=False),
    "position": _Field(
        "single_choice", constraints={"options": ["engineering", "design", "sales", "support"]}
    ),
    "years_experience": _Field("integer", constraints={"minimum": 0, "maximum": 60}),
    "start_date": _Field("date"),
    "authorized_to_work": _Field("boolean"),
    "needs_sponsorship": _Field("boolean", when=_equals("authorized_to_work", False)),
    "relocate": _Field("boolean"),
    "preferred_locations": _Field(
        "multiple_choice",
        when=_equals("relocate", True),
        constraints={"options": ["berlin", "lisbon", "remote"]},
    ),
    "portfolio_url": _Field("url", required=False, when=_equals("position", "design")),
    "cover_letter": _Field("long_text", required=False, constraints={"max_length": 4000}),
}
_CHECKPOINTS: Mapping[str, tuple[Mapping[str, Any], str]] = {
    "sponsorship_review": (_equals("needs_sponsorship", True), "run notify_recruiter"),
    "junior_engineer": (
        {
            "all": [
                _equals("position", "engineering"),
                {"field": "years_experience", "op": "less_than", "value": 1},
            ]
        },
        "fail naming {years_experience}",
    ),
}


def check_job_application(document: FormDocument | Mapping[str, Any]) -> list[str]:
    """What keeps ``document`` (a ``FormDocument``, or its JSON as the builder API returns it)
    from being the job application, one sentence per difference; empty when it is the form.

    Checked: the form id; the steps (ids, titles, order, no rule); each step's items in order
    (field ids and kinds, the ``about`` step's heading by kind); what is required; options,
    bounds and the cover letter's length; every field's rule, exactly (``false``, not
    ``"false"``); the two checkpoints (rule exactly; ``notify_recruiter`` run, a refusal naming
    ``{years_experience}``) and no others. Not checked: labels, help, titles of the form and
    the checkpoints, layout."""
    doc = document if isinstance(document, FormDocument) else FormDocument.model_validate(document)
    problems: list[str] = []
    if doc.id != FORM_ID:
        problems.append(f"the form id is {doc.id!r}, not {FORM_ID!r}")
    steps = [(s.id, s.title) for s in doc.steps]
    wanted = [(step_id, title) for step_id, title, _ in _STEPS]
    if steps != wanted:
        problems.append(f"the steps are {steps}, not {wanted}")
    for step in doc.steps:
        if step.when is not None:
            problems.append(f"step {step.id!r} has a rule; it should always apply")
        expected = next((items for s, _, items in _STEPS if s == step.id), None)
        if expected is None:
            continue
        found = [HEADING if item.kind == HEADING else item.id for item in step.items]
        if found != list(expected):
            problems.append(f"step {step.id!r} holds {found}, not {list(expected)}")
        for item in step.items:
            if item.id in _FIELDS:
                problems += _field_problems(item, _FIELDS[item.id])
    problems += _checkpoint_problems(doc)
    return problems


def _field_problems(item: Any, want: _Field) -> list[str]:
    name = f"field {item.id!r}"
    if item.kind != want.kind:
        return [f"{name} is a {item.kind}, not a {want.kind}"]
    problems: list[str] = []
    if item.required != want.required:
        problems.append(f"{name} is {'required' if item.required else 'optional'}, not the other")
    when = _json(item.when)
    if when != want.when:
        problems.append(f"{name} applies when {when}, not when {want.when}")
    for key, value in want.constraints.items():
        got = getattr(item, key)
        if key == "options":
            got = [option.value for option in got]
        if got != value:
            problems.append(f"{name} has {key} {got!r}, not {value!r}")
    return problems


def _checkpoint_problems(doc: FormDocument) -> list[str]:
    problems: list[str] = []
    found = [c.id for c in doc.checkpoints]
    if found != list(_CHECKPOINTS):
        problems.append(f"the checkpoints are {found}, not {list(_CHECKPOINTS)}")
    for checkpoint in doc.checkpoints:
        if checkpoint.id not in _CHECKPOINTS:
            continue
        rule, does = _CHECKPOINTS[checkpoint.id]
        when = _json(checkpoint.when)
        if when != rule:
            problems.append(f"checkpoint {checkpoint.id!r} holds when {when}, not when {rule}")
        actions = [_json(action) for action in checkpoint.then]
        if _describe(actions) != does:
            problems.append(f"checkpoint {checkpoint.id!r} does {actions}, not: {does}")
    return problems


def _describe(actions: list[Any]) -> str:
    """The actions as ``_CHECKPOINTS`` says them: ``run <executor>``, ``fail naming {x}``."""
    if len(actions) != 1:
        return f"{len(actions)} actions"
    action = actions[0]
    if action["action"] == "run":
        return f"run {action['executor']}"
    if action["action"] == "fail" and "{years_experience}" in action["message"]:
        return "fail naming {years_experience}"
    return str(action["action"])


def _json(part: Any) -> Any:
    """A rule or an action as JSON (what the document stores), or None."""
    if part is None:
        return None
    return part.model_dump(mode="json", by_alias=True, exclude_none=True)
