"""Every status the API can emit is declared once (``forms.statuses``), documented in the
docs' status tables, listed in the OpenAPI document's enums, and nothing else is emitted."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from forms import Caller, Checkpoint, FormDef, Step, field
from forms.examples.travel_claim import travel_claim
from forms.statuses import STATUSES, values
from tests.support import TRAVEL_ANSWERS, service_for

ROOT = Path(__file__).resolve().parents[2]
ALICE = Caller("alice", "c1")


def _section(text: str, heading: str) -> str:
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def _documented() -> set[str]:
    """Every value in backquotes in docs/engine.md's "Statuses" section's tables."""
    section = _section((ROOT / "docs/engine.md").read_text(), "Statuses")
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return {value for row in rows for value in re.findall(r"`([^`]+)`", row.split(" | ")[0])}


@pytest.mark.parametrize("kind", list(STATUSES))
def test_every_status_is_in_the_docs_table(kind: str) -> None:
    missing = [v for v in values(STATUSES[kind]) if v not in _documented()]
    assert missing == [], f"{kind} statuses not in docs/engine.md, Statuses: {missing}"


def _enums(node: Any) -> list[tuple[str, ...]]:
    """Every ``enum`` list in a JSON schema, wherever it is."""
    found: list[tuple[str, ...]] = []
    if isinstance(node, dict):
        if isinstance(node.get("enum"), list):
            found.append(tuple(str(v) for v in node["enum"]))
        for value in node.values():
            found.extend(_enums(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_enums(value))
    return found


@pytest.mark.parametrize("kind", list(STATUSES))
def test_every_status_kind_is_an_enum_of_the_openapi_document(kind: str) -> None:
    from formwork.aws.api import openapi_json

    enums = _enums(json.loads(openapi_json()))
    assert values(STATUSES[kind]) in enums


def _seen(result: Any, found: dict[str, set[str]]) -> None:
    """Collect the statuses a tool result shows, by kind."""
    if isinstance(result, dict):
        if "step" in result and isinstance(result.get("state"), str):
            found["step"].add(result["state"])
        if "id" in result and "label" in result and "status" in result:
            found["field"].add(result["status"])
        if "key" in result and "status" in result:
            found["hook"].add(result["status"])
        if isinstance(result.get("closed"), str):
            found["instance"].add(result["closed"])
        if isinstance(result.get("outcome"), str):
            found["instance"].add(result["outcome"])
        for value in result.values():
            _seen(value, found)
    elif isinstance(result, list):
        for value in result:
            _seen(value, found)


def test_what_a_conversation_shows_is_declared() -> None:
    # GIVEN a travel claim and a small form with a checkpoint that runs
    class Only(Step):
        title = "Only"
        amount: int = field("Amount")
        note: str | None = field("Note")

    stamped = FormDef(
        id="stamped",
        version=1,
        title="Stamped",
        steps=[Only],
        checkpoints=[Checkpoint("big", when=lambda v: (v.amount or 0) > 5, run=lambda c: None)],
    )
    service = service_for(travel_claim, stamped)
    found: dict[str, set[str]] = {kind: set() for kind in STATUSES}

    ids = itertools.count(1)

    def call(tool: str, payload: dict[str, Any]) -> None:
        _seen(service.call(ALICE, tool, f"t{next(ids)}", payload), found)

    # WHEN it is started, read every way, filled, declined, submitted, read closed
    call("form_start", {"form": "travel-claim"})
    call("form_read", {"form": "travel-claim", "part": "outline"})
    call("form_fill", {"form": "travel-claim", "values": dict(TRAVEL_ANSWERS)})
    call("form_read", {"form": "travel-claim", "part": "outline"})
    call("form_fill", {"form": "travel-claim", "submit": True})
    call("form_read", {"form": "travel-claim", "part": "outline"})
    call("form_start", {"form": "stamped"})
    call("form_fill", {"form": "stamped", "values": {"amount": 9}})
    call("form_abandon", {"form": "stamped", "reason": "test"})
    call("form_read", {"form": "stamped"})
    for step in travel_claim.steps:
        call("form_read", {"form": "travel-claim", "part": step.step_id()})
    call("form_list", {})
    # THEN every status it showed is one its kind declares
    for kind, shown in found.items():
        undeclared = sorted(shown - set(values(STATUSES[kind])))
        assert undeclared == [], f"{kind} statuses emitted but not declared: {undeclared}"
    assert found["field"] and found["step"] and found["instance"] and found["hook"]
