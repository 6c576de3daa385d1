"""A field only an approver's decision writes is offered to nobody.

Wherever a model or a person is offered fields to answer (the status line, a read, the ids an
unknown entry lists, the strict export, the questions ``form_ask`` puts to the person, the
reasons a submit is refused), a field declared ``decided_by_approver`` is left out or marked as
the approver's: the agent never asks for it, and nobody is asked to write it.
"""

from __future__ import annotations

import json
from typing import Literal

import pytest

from forms import Caller, FormDef, Step, compile_form, field
from forms.definition import Approval, Checkpoint
from forms.examples.purchase_request import purchase_request
from forms.surface.formats import STRICT_FORMATS, StrictFormat
from forms.surface.strict import strict_definitions
from forms.surface.view import DECIDED_BY
from formwork.mcp.ask import Question, question
from tests.support import Session, service_for

CALLER = Caller("ana", "conv-1")
LAPTOP = {"item": "Laptop", "supplier": "Dell", "amount": 9000}


class Request(Step):
    title = "Request"

    amount: int = field("Amount")
    decision: Literal["approved", "rejected"] = field("Finance decision", decided_by_approver=True)
    reason: str = field("Why it is needed")


required_decision = FormDef(
    id="spend",
    version=1,
    title="Spend",
    steps=[Request],
    checkpoints=[
        Checkpoint(
            "review",
            when=lambda v: v.amount is not None and v.amount > 100,
            approval=Approval(field="decision", role="finance"),
        )
    ],
)
"""A form whose decision field is required: it reads ``pending`` until an approver decides."""


def session(*forms: FormDef) -> Session:
    return Session(service_for(*forms), CALLER)


def test_form_ask_never_asks_the_person_for_an_approvers_decision() -> None:
    # GIVEN a purchase request at its review step, the approver's decision still open
    s = session(purchase_request)
    s.ok("form_start", form="purchase-request", values=LAPTOP)
    read = s.ok("form_read", form="purchase-request")
    # WHEN form_ask builds its question from the read
    asked = question(read)
    # THEN the person is asked for the budget line and the confirmation, not the decision
    assert isinstance(asked, Question)
    assert list(asked.schema["properties"]) == ["budget_line", "confirmed"]
    assert asked.asked == ("budget_line", "confirmed")
    assert asked.left == ()


def test_a_read_marks_the_decision_as_the_approvers() -> None:
    s = session(purchase_request)
    s.ok("form_start", form="purchase-request", values=LAPTOP)
    rows = {r["id"]: r for r in s.ok("form_read", form="purchase-request")["fields"]}
    assert rows["finance_decision"]["decided_by"] == DECIDED_BY
    assert "decided_by" not in rows["budget_line"]
    outline = s.ok("form_read", form="purchase-request", part="outline")
    marked = [f["id"] for step in outline["steps"] for f in step["fields"] if "decided_by" in f]
    assert marked == ["finance_decision"]


def test_the_status_line_never_lists_a_required_decision_as_pending() -> None:
    # GIVEN a form whose required decision field awaits an approver
    s = session(required_decision)
    started = s.ok("form_start", form="spend", values={"amount": 500})
    # THEN the status line asks only for what the user answers, and says what it waits for
    head, waiting = started["status_line"].splitlines()
    assert head == '[form: spend] step 1/1 "Request" · pending: Why it is needed'
    assert waiting.startswith("waiting: review (awaiting approval by finance)")
    # AND a submit too early tells the agent what the user answers and what an approver decides
    early = s.ok("form_fill", form="spend", values={"reason": "a new laptop"}, submit=True)
    assert early["not_submitted"].startswith("an approver has still to decide: Finance decision")


def test_an_unknown_id_lists_only_the_fields_the_agent_may_write() -> None:
    s = session(required_decision)
    s.ok("form_start", form="spend", values={"amount": 500})
    result = s.call("form_fill", form="spend", values={"qqqqqq": 1})
    (entry,) = result["unknown"]
    assert entry["still_to_ask"] == ["reason"]


@pytest.mark.parametrize("fmt", STRICT_FORMATS)
@pytest.mark.parametrize("definition", [purchase_request, required_decision])
def test_the_strict_export_names_no_approvers_field(fmt: StrictFormat, definition: FormDef) -> None:
    form = compile_form(definition)
    (decision,) = [f.id for f in form.fields.values() if f.decided_by_approver]
    exported = json.dumps(strict_definitions(fmt, [form]))
    assert f'"{decision}"' not in exported


@pytest.mark.parametrize("tool", ["form_fill", "form_revise"])
def test_a_misspelt_id_is_never_pointed_at_the_decision(tool: str) -> None:
    # GIVEN a purchase request, and an id one letter off the approver's decision field
    s = session(purchase_request)
    s.ok("form_start", form="purchase-request", values=LAPTOP)
    sent = "finance_decison"
    if tool == "form_fill":
        result = s.call(tool, form="purchase-request", values={sent: "approved"})
        suggested = result["unknown"][0].get("did_you_mean", [])
    else:
        result = s.call(tool, form="purchase-request", field=sent, action="set", value="approved")
        suggested = result.get("did_you_mean", [])
    # THEN the agent is not told it meant the decision
    assert "finance_decision" not in suggested
    assert "finance_decision" not in json.dumps(result)
