"""Every refusal that names an unknown id carries what it likely meant as data, in
``did_you_mean``: the builder's tools (fields, steps, checkpoints, rules, actions, fact keys,
executors) and the form tools (fields, steps, forms), enumerated here."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from typing import Any

import pytest

from forms import Caller
from forms.app.builder import BuilderService
from forms.app.catalog import Catalog
from forms.examples.travel_claim import travel_claim
from forms.registry import FormRegistry
from forms.storage.documents import InMemoryFormDocumentStore
from forms.storage.drafts import InMemoryDraftStore
from tests.support import builder_for, service_for

ANA = "acme/ana"
FORM = "intake"
EXECUTORS: dict[str, Any] = {"notify_crm": lambda ctx: []}

SETUP: list[tuple[str, dict[str, Any]]] = [
    ("create_form", {"title": "Intake", "steps": [{"title": "About"}, {"title": "Review"}]}),
    (
        "add_field",
        {
            "step": "about",
            "field": {
                "kind": "single_choice",
                "label": "Job role",
                "options": [{"value": "designer"}, {"value": "engineer"}],
            },
        },
    ),
    ("add_field", {"step": "about", "field": {"kind": "integer", "label": "Years"}}),
    (
        "set_checkpoint",
        {
            "id": "gate",
            "when": {"field": "years", "op": "answered"},
            "then": [{"action": "jump", "step": "review"}],
        },
    ),
]

REFUSALS: list[tuple[str, str, dict[str, Any], str]] = [
    # (what, tool, arguments, what it likely meant)
    ("field", "update_field", {"field": "job_rol", "updates": {"required": False}}, "job_role"),
    ("field", "delete_field", {"field": "yeers"}, "years"),
    ("field", "move_field", {"field": "yeers", "position": 0}, "years"),
    ("step", "update_step", {"step": "reveiw", "updates": {"title": "Check"}}, "review"),
    ("step", "add_field", {"step": "abut", "field": {"kind": "email", "label": "E"}}, "about"),
    ("step", "move_field", {"field": "years", "to_step": "reveiw"}, "review"),
    ("checkpoint", "delete_checkpoint", {"id": "gaet"}, "gate"),
    (
        "rule target",
        "set_conditional_logic",
        {"target": "field", "id": "yeers", "when": None},
        "years",
    ),
    (
        "rule field",
        "set_conditional_logic",
        {"target": "step", "id": "review", "when": {"field": "yeers", "op": "answered"}},
        "years",
    ),
    (
        "rule field of a new item",
        "add_field",
        {
            "step": "review",
            "field": {"kind": "email", "label": "E", "when": {"field": "yeers", "op": "answered"}},
        },
        "years",
    ),
    (
        "checkpoint rule",
        "set_checkpoint",
        {
            "when": {"field": "job_rol", "op": "answered"},
            "then": [{"action": "terminate", "reason": "x"}],
        },
        "job_role",
    ),
    (
        "set field",
        "set_checkpoint",
        {
            "when": {"field": "years", "op": "answered"},
            "then": [{"action": "set", "field": "yeers", "value": 3}],
        },
        "years",
    ),
    (
        "jump step",
        "set_checkpoint",
        {
            "when": {"field": "years", "op": "answered"},
            "then": [{"action": "jump", "step": "reveiw"}],
        },
        "review",
    ),
    (
        "placeholder",
        "set_checkpoint",
        {
            "when": {"field": "years", "op": "answered"},
            "then": [{"action": "fail", "message": "{yeers} is low"}],
        },
        "years",
    ),
    (
        "fact key",
        "add_field",
        {"step": "about", "field": {"kind": "email", "label": "E", "memory": "contact.emial"}},
        "contact.email",
    ),
    (
        "executor",
        "update_field",
        {"field": "years", "updates": {"on_fill": "notify_crn"}},
        "notify_crm",
    ),
    ("inspected", "inspect_form", {"scope": "field", "id": "yeers"}, "years"),
]


@pytest.fixture
def builder() -> BuilderService:
    catalog = Catalog(
        FormRegistry([]), InMemoryFormDocumentStore(), timer=lambda: 0.0, executors=EXECUTORS
    )
    service = builder_for(
        InMemoryDraftStore(), catalog, clock=lambda: datetime(2026, 3, 1, tzinfo=UTC)
    )
    for n, (tool, arguments) in enumerate(SETUP):
        assert service.call(ANA, FORM, tool, f"setup-{n}", arguments)["ok"], tool
    return service


@pytest.mark.parametrize(
    ("tool", "arguments", "meant"),
    [r[1:] for r in REFUSALS],
    ids=[r[0] for r in REFUSALS],
)
def test_every_builder_refusal_of_an_unknown_id_carries_did_you_mean(
    builder: BuilderService, tool: str, arguments: dict[str, Any], meant: str
) -> None:
    # GIVEN a draft with fields job_role and years, steps about and review, checkpoint gate
    # WHEN a call names one of them misspelt
    result = builder.call(ANA, FORM, tool, "t-refused", arguments)
    # THEN it is refused, and what it likely meant is a list the model can act on
    assert result["ok"] is False, result
    assert meant in list_of(result.get("did_you_mean")), result


def list_of(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def test_a_selection_naming_an_unknown_field_carries_did_you_mean(builder: BuilderService) -> None:
    result = builder.call(
        ANA,
        FORM,
        "update_field",
        "t-sel",
        {"updates": {"required": False}},
        selection={"field": "yeers"},
    )
    assert result["error"] == "not_found" and result["did_you_mean"] == ["years"]


# ---------------------------------------------------------------------------- the form tools

ALICE = Caller("alice", "conv-1")


@pytest.fixture
def form_tools() -> Any:
    service = service_for(travel_claim)
    ids = itertools.count()

    def call(tool: str, **payload: Any) -> dict[str, Any]:
        return service.call(ALICE, tool, f"c-{next(ids)}", payload)

    assert call("form_start", form="travel-claim")["ok"]
    return call


FORM_REFUSALS = [
    ("form", "form_start", {"form": "travel-claims"}, "travel-claim"),
    ("step or field", "form_read", {"form": "travel-claim", "part": "destinaton"}, "destination"),
    (
        "revised field",
        "form_revise",
        {"form": "travel-claim", "field": "destinaton", "action": "retract"},
        "destination",
    ),
]


@pytest.mark.parametrize(
    ("tool", "payload", "meant"), [r[1:] for r in FORM_REFUSALS], ids=[r[0] for r in FORM_REFUSALS]
)
def test_every_form_tool_refusal_of_an_unknown_id_carries_did_you_mean(
    form_tools: Any, tool: str, payload: dict[str, Any], meant: str
) -> None:
    # GIVEN a travel claim started
    # WHEN a call names a form, step or field misspelt
    result = form_tools(tool, **payload)
    # THEN the refusal carries what it likely meant, as data
    assert result["ok"] is False, result
    assert meant in result.get("did_you_mean", []), result
