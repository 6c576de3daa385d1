"""A closed form reads as closed: its outcome, reason and answers, nothing pending, no moves."""

from __future__ import annotations

import json
from typing import Any

import pytest

from forms import Caller, FormService
from forms.examples import EXAMPLES
from tests.support import service_for

ALICE = Caller("alice", "conv-1")


def service() -> FormService:
    return service_for(*EXAMPLES)


def terminated_grant(svc: FormService) -> None:
    svc.call(ALICE, "form_start", "s", {"form": "grant-application"})
    filled = svc.call(
        ALICE,
        "form_fill",
        "f",
        {"form": "grant-application", "values": {"annual_revenue": 2000000}},
    )
    assert filled.get("closed") == "terminated", filled


def abandoned_claim(svc: FormService) -> None:
    svc.call(ALICE, "form_start", "s", {"form": "travel-claim", "values": {"destination": "Rome"}})
    svc.call(ALICE, "form_fill", "f", {"form": "travel-claim", "values": {"mode": "air"}})
    svc.call(ALICE, "form_abandon", "a", {"form": "travel-claim", "reason": "trip cancelled"})


@pytest.mark.parametrize(
    ("close", "form", "outcome"),
    [
        (terminated_grant, "grant-application", "terminated"),
        (abandoned_claim, "travel-claim", "abandoned"),
    ],
)
def test_a_closed_form_reads_as_closed(close: Any, form: str, outcome: str) -> None:
    # GIVEN a form closed by a hook or by the agent
    svc = service()
    close(svc)
    # WHEN the agent reads it
    read = svc.call(ALICE, "form_read", "r", {"form": form})
    # THEN it says the outcome and the reason, and offers nothing that would be refused
    assert read["ok"] is True and read["closed"] == outcome
    assert read["outcome"] == outcome and read["reason"]
    assert "Open step" not in read["summary"] and outcome in read["summary"]
    text = json.dumps(read)
    assert '"pending"' not in text and '"open"' not in text
    assert "undo" not in read and "redo" not in read
    assert "status_line" not in read
    # AND the answers on record are there
    values = [f.get("value") for step in read["steps"] for f in step["fields"]]
    assert any(v is not None for v in values)


def test_a_closed_forms_step_and_field_reads_offer_no_moves() -> None:
    svc = service()
    abandoned_claim(svc)
    step = svc.call(ALICE, "form_read", "r1", {"form": "travel-claim", "part": "travel"})
    field = svc.call(ALICE, "form_read", "r2", {"form": "travel-claim", "part": "mode"})
    assert step["state"] == "closed (abandoned)"
    assert all(f["status"] != "pending" for f in step["fields"])
    assert "undo" not in field and "redo" not in field
    assert field["revisions"][0]["value"] == "air"


def test_unknown_ids_in_a_call_whose_hook_closed_the_form_list_nothing_to_ask() -> None:
    # GIVEN a grant application, and a fill whose hook terminates it, carrying an unknown id
    svc = service()
    svc.call(ALICE, "form_start", "s", {"form": "grant-application"})
    result = svc.call(
        ALICE,
        "form_fill",
        "f",
        {"form": "grant-application", "values": {"annual_revenue": 2000000, "shoe_size": 9}},
    )
    # THEN the form is closed, and the unknown entry offers nothing more to send
    assert result["closed"] == "terminated"
    assert result["unknown"] == [{"sent": "shoe_size"}]
    assert "hint" not in result
