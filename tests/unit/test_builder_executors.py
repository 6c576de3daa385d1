"""Executor names nobody registered are refused at the edit that gives them, as fact keys are,
with the registered names they likely meant; publishing refuses them too."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from forms.app.catalog import Catalog
from forms.documents import EditError, FormDocument, apply_edit
from forms.registry import FormRegistry
from forms.storage.documents import InMemoryFormDocumentStore
from forms.storage.drafts import InMemoryDraftStore
from tests.support import builder_for

REGISTERED: dict[str, Any] = {"notify_crm": lambda ctx: [], "score_lead": lambda ctx: []}


def draft() -> FormDocument:
    made = apply_edit(None, "create_form", {"title": "Lead", "steps": [{"title": "Lead"}]})
    return apply_edit(
        made.document, "add_field", {"field": {"kind": "email", "label": "Email"}}
    ).document


CALLS = [
    ("add_field", {"field": {"kind": "short_text", "label": "Name", "on_fill": "notify_crn"}}),
    ("update_field", {"field": "email", "updates": {"on_fill": "notify_crn"}}),
    ("update_step", {"updates": {"on_complete": "notify_crn"}}),
    (
        "set_checkpoint",
        {
            "when": {"field": "email", "op": "answered"},
            "then": [{"action": "run", "executor": "notify_crn"}],
        },
    ),
]


@pytest.mark.parametrize(("tool", "arguments"), CALLS, ids=[c[0] for c in CALLS])
def test_an_unregistered_executor_is_refused_at_the_edit_with_suggestions(
    tool: str, arguments: dict[str, Any]
) -> None:
    # GIVEN a draft and a deployment registering notify_crm and score_lead
    # WHEN an edit names an executor nobody registered
    with pytest.raises(EditError) as refused:
        apply_edit(draft(), tool, arguments, executors=REGISTERED)
    # THEN it is refused as data, with the name it likely meant and the registered names
    result = refused.value.as_result()
    assert result["error"] == "invalid"
    assert "notify_crn" in str(result["message"]) and "does not register" in str(result["message"])
    assert result["did_you_mean"] == ["notify_crm"]
    assert "notify_crm, score_lead" in str(result["hint"])


@pytest.mark.parametrize(("tool", "arguments"), CALLS, ids=[c[0] for c in CALLS])
def test_a_registered_executor_is_taken(tool: str, arguments: dict[str, Any]) -> None:
    fixed = json_replace(arguments, "notify_crn", "notify_crm")
    assert apply_edit(draft(), tool, fixed, executors=REGISTERED).as_result()["ok"]


def json_replace(data: Any, old: str, new: str) -> Any:
    if isinstance(data, dict):
        return {k: json_replace(v, old, new) for k, v in data.items()}
    if isinstance(data, list):
        return [json_replace(v, old, new) for v in data]
    return new if data == old else data


def test_a_name_the_draft_had_already_does_not_block_an_unrelated_edit() -> None:
    # GIVEN a draft naming an executor the deployment no longer registers
    named = apply_edit(draft(), "update_field", {"field": "email", "updates": {"on_fill": "gone"}})
    # WHEN an unrelated edit is made with the deployment's names
    done = apply_edit(
        named.document, "add_field", {"field": {"kind": "phone", "label": "Phone"}}, executors={}
    )
    # THEN it applies
    assert done.as_result()["ok"]


def test_the_builder_service_checks_names_against_the_catalog_s_executors() -> None:
    # GIVEN a builder over a catalog with the deployment's executors
    catalog = Catalog(
        FormRegistry([]), InMemoryFormDocumentStore(), timer=lambda: 0.0, executors=REGISTERED
    )
    builder = builder_for(
        InMemoryDraftStore(), catalog, clock=lambda: datetime(2026, 3, 1, tzinfo=UTC)
    )
    builder.call("acme/ana", "lead", "create_form", "t1", {"title": "Lead"})
    # WHEN a field names an executor nobody registered
    result = builder.call(
        "acme/ana",
        "lead",
        "add_field",
        "t2",
        {"field": {"kind": "email", "label": "Email", "on_fill": "score_leads"}},
    )
    # THEN the call is refused at the edit, not at publish, with the suggestion as data
    assert result["error"] == "invalid" and result["did_you_mean"] == ["score_lead"]
    assert builder.draft("acme/ana", "lead").document.steps[0].items == []
