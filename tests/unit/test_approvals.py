"""Approval checkpoints: the form waits for a human decision, recorded as an approver revision."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from forms import Caller
from forms.app.approvals import Approver, expire_due, pending_approvals
from forms.examples.purchase_request import purchase_request
from tests.support import Session, TickingClock, service_for

REQUESTER = Caller("alice", "conv-1")
FINANCE = Approver("bob", frozenset({"finance"}))


class Harness(Session):
    def __init__(self) -> None:
        self.clock = TickingClock(datetime(2026, 3, 1, 9, tzinfo=UTC))
        super().__init__(service_for(purchase_request, clock=self.clock), REQUESTER)

    def call(
        self,
        tool: str,
        payload: object = None,
        *,
        caller: Caller | None = None,
        call_id: str | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        """Every call is about the purchase request."""
        return super().call(
            tool, payload, caller=caller, call_id=call_id, form="purchase-request", **fields
        )

    def instance(self) -> Any:
        return self.service.store.get("fi_1")

    def approval_id(self) -> str:
        (entry,) = pending_approvals(self.instance())
        return entry.key


def big_request(h: Harness, **extra: Any) -> dict[str, Any]:
    values = {"item": "Laser cutter", "supplier": "Acme", "amount": "7200.00", **extra}
    return h.call("form_start", values=values)


def test_a_large_amount_opens_an_approval_and_holds_completion() -> None:
    # GIVEN a request over the threshold, with every answer the requester can give
    h = Harness()
    big_request(h)
    result = h.call("form_fill", values={"budget_line": "BL-2041", "confirmed": True})
    # THEN the form is not complete: it waits for finance, and the status line says so
    assert h.instance().state.status == "open"
    assert "awaiting approval by finance" in result["status_line"]
    entry = pending_approvals(h.instance())[0]
    assert entry.key == "fi_1:checkpoint.finance_approval:1"
    assert entry.deadline == entry.created_at + timedelta(days=5)


def test_the_agent_cannot_write_the_decision() -> None:
    h = Harness()
    big_request(h)
    result = h.call("form_fill", values={"finance_decision": "approved"})
    assert result["rejected"][0]["field"] == "finance_decision"
    assert "approver" in result["rejected"][0]["error"]
    refused = h.call("form_revise", field="finance_decision", action="set", value="approved")
    assert refused["ok"] is False and refused["error"] == "cannot_revise"
    assert h.instance().field("finance_decision").revisions == ()


def test_an_approval_is_recorded_as_an_approver_revision_and_completes_the_form() -> None:
    # GIVEN a complete request waiting for finance
    h = Harness()
    big_request(h)
    h.call("form_fill", values={"budget_line": "BL-2041", "confirmed": True})
    # WHEN a finance approver approves with a note
    result = h.service.decide(FINANCE, h.approval_id(), "approved", note="within budget")
    # THEN the decision is a revision by the approver, and the form completes
    assert result["ok"] is True and result["form_status"] == "completed"
    (revision,) = h.instance().field("finance_decision").revisions
    assert (revision.value, revision.by, revision.actor, revision.note) == (
        "approved",
        "approver",
        "bob",
        "within budget",
    )


def test_a_rejection_fires_its_edges_and_terminates_the_request() -> None:
    h = Harness()
    big_request(h)
    h.service.decide(FINANCE, h.approval_id(), "rejected")
    instance = h.instance()
    assert (instance.state.status, instance.state.closed_reason) == (
        "terminated",
        "rejected by finance",
    )


@pytest.mark.parametrize(
    "approver",
    [
        Approver("carol", frozenset({"sales"})),  # lacks the role
        Approver("alice", frozenset({"finance"})),  # filled the form herself
        Approver("globex/bob", frozenset({"finance"})),  # another tenant's approver
        Approver("globex/alice", frozenset({"finance"})),  # the filler under another principal
    ],
)
def test_whoever_may_not_decide_gets_the_answer_of_an_id_that_does_not_exist(
    approver: Approver,
) -> None:
    # GIVEN a pending approval
    h = Harness()
    big_request(h)
    before = h.instance()
    # WHEN someone who may not decide it tries, and someone sends an id that never existed
    result = h.service.decide(approver, h.approval_id(), "approved")
    missing = h.service.decide(approver, "fi_9:checkpoint.finance_approval:1", "approved")
    # THEN both answers are the same 404-like refusal (only the id differs), nothing is stored
    assert result["ok"] is False and result["error"] == "unknown_approval"
    assert {k: v for k, v in result.items() if k != "message"} == {
        k: v for k, v in missing.items() if k != "message"
    }
    assert result["message"].replace(h.approval_id(), "X") == missing["message"].replace(
        "fi_9:checkpoint.finance_approval:1", "X"
    )
    assert h.instance() == before


TENANT_REQUESTER = Caller("acme/alice", "conv-1")


def test_only_an_approver_of_the_owning_tenant_decides() -> None:
    # GIVEN a request filled by a principal of tenant acme
    h = Harness()
    values = {"item": "Laser cutter", "supplier": "Acme", "amount": "7200.00"}
    h.service.call(
        TENANT_REQUESTER, "form_start", "c1", {"form": "purchase-request", "values": values}
    )
    approval = h.approval_id()
    # WHEN a globex approver tries, then an acme approver
    other = h.service.decide(Approver("globex/bob", frozenset({"finance"})), approval, "approved")
    same = h.service.decide(Approver("acme/bob", frozenset({"finance"})), approval, "approved")
    # THEN only acme's approver's decision is recorded
    assert other["error"] == "unknown_approval"
    assert same["ok"] is True
    assert [r.actor for r in h.instance().field("finance_decision").revisions] == ["acme/bob"]


def test_a_decision_on_a_closed_form_is_refused() -> None:
    # GIVEN a pending approval on a form the requester then abandons
    h = Harness()
    big_request(h)
    approval = h.approval_id()
    h.call("form_abandon", reason="no longer needed")
    # WHEN finance decides it
    result = h.service.decide(FINANCE, approval, "approved")
    # THEN it is refused as closed, the decision field stays empty, the approval is withdrawn
    assert result["ok"] is False and result["error"] == "form_closed"
    instance = h.instance()
    assert instance.field("finance_decision").revisions == ()
    assert instance.state.outbox[approval].error == "withdrawn: the form closed"
    assert h.service.expire_approvals("fi_1") == []


def test_a_decision_is_bound_to_the_answers_it_was_made_on() -> None:
    # GIVEN a request over the threshold, approved by finance at 6,000
    h = Harness()
    h.call("form_start", values={"item": "Laser cutter", "supplier": "Acme", "amount": "6000"})
    first = h.approval_id()
    assert h.instance().state.outbox[first].subject == {
        "item": "Laser cutter",
        "supplier": "Acme",
        "amount": "6000",
    }
    h.service.decide(FINANCE, first, "approved")
    # WHEN the requester raises the amount and confirms everything
    result = h.call("form_fill", values={"amount": "999999.99"})
    done = h.call("form_fill", values={"budget_line": "BL-2041", "confirmed": True})
    # THEN the decision was withdrawn, a new approval (a new key) is owed, the form is open
    decision = h.instance().field("finance_decision")
    assert decision.in_force() == decision.revisions[-1]
    assert decision.revisions[-1].kind == "retraction"
    assert decision.revisions[-1].note == "withdrawn: Amount (EUR) changed after the decision"
    second = h.approval_id()
    assert second == "fi_1:checkpoint.finance_approval:2"
    assert h.instance().state.status == "open"
    assert "awaiting approval by finance" in done["status_line"]
    assert "awaiting approval by finance" in result["status_line"]
    # AND only a decision on the values in force completes it
    h.service.decide(FINANCE, second, "approved")
    assert h.instance().state.status == "completed"


@pytest.mark.parametrize("field", ["item", "supplier"])
def test_changing_any_bound_answer_after_approval_asks_again(field: str) -> None:
    h = Harness()
    big_request(h)
    h.service.decide(FINANCE, h.approval_id(), "approved")
    h.call("form_fill", values={field: "Something else entirely"})
    h.call("form_fill", values={"budget_line": "BL-2041", "confirmed": True})
    assert h.instance().state.status == "open"
    assert h.approval_id() == "fi_1:checkpoint.finance_approval:2"


def test_an_answer_outside_the_binding_does_not_reopen_the_approval() -> None:
    h = Harness()
    big_request(h)
    h.service.decide(FINANCE, h.approval_id(), "approved")
    h.call("form_fill", values={"needed_by": "end of March"})
    assert pending_approvals(h.instance()) == []
    assert h.instance().field("finance_decision").in_force().value == "approved"


def test_a_pending_request_whose_answers_change_is_superseded() -> None:
    # GIVEN a pending approval at 7,200
    h = Harness()
    big_request(h)
    first = h.approval_id()
    # WHEN the amount changes before anyone decides
    h.call("form_fill", values={"amount": "7300.00"})
    # THEN the first request is withdrawn (a decision on it is refused), a new one is owed
    assert h.instance().state.outbox[first].error == (
        "withdrawn: an answer it was asked on changed; a new approval replaces it"
    )
    late = h.service.decide(FINANCE, first, "approved")
    assert late["error"] == "unknown_approval"
    assert h.approval_id() == "fi_1:checkpoint.finance_approval:2"


def test_a_decision_is_withdrawn_when_the_checkpoint_stops_holding() -> None:
    h = Harness()
    big_request(h)
    h.service.decide(FINANCE, h.approval_id(), "approved")
    h.call("form_fill", values={"amount": "100.00"})
    decision = h.instance().field("finance_decision")
    assert decision.in_force() == decision.revisions[-1]
    assert decision.revisions[-1].kind == "retraction"
    assert decision.revisions[-1].note == "withdrawn: the checkpoint no longer holds"


def test_a_decision_is_taken_once() -> None:
    h = Harness()
    big_request(h)
    approval = h.approval_id()
    h.service.decide(FINANCE, approval, "approved")
    again = h.service.decide(FINANCE, approval, "rejected")
    assert again["ok"] is False and again["error"] == "unknown_approval"
    assert [r.value for r in h.instance().field("finance_decision").revisions] == ["approved"]


def test_the_timeout_outcome_applies_after_the_deadline_only() -> None:
    h = Harness()
    big_request(h)
    assert expire_due(h.service.loop, "fi_1") == []  # not yet due
    h.clock.now += timedelta(days=5)
    assert h.service.expire_approvals("fi_1") == ["fi_1:checkpoint.finance_approval:1"]
    (revision,) = h.instance().field("finance_decision").revisions
    assert (revision.by, revision.actor) == ("operator", "timeout")
    assert h.instance().state.status == "terminated"


def test_a_correction_that_ends_the_crossing_releases_the_hold() -> None:
    # GIVEN a large request waiting for finance
    h = Harness()
    big_request(h)
    h.call("form_fill", values={"budget_line": "BL-2041", "confirmed": True})
    # WHEN the amount is corrected under the threshold
    h.call("form_fill", values={"amount": "900.00"})
    # THEN no approval is needed for this crossing: the form completes
    assert h.instance().state.status == "completed"


def test_a_small_amount_needs_no_approval() -> None:
    h = Harness()
    h.call("form_start", values={"item": "Pens", "supplier": "Acme", "amount": "12.50"})
    h.call("form_fill", values={"budget_line": "BL-2041", "confirmed": True})
    assert h.instance().state.status == "completed"
    assert pending_approvals(h.instance()) == []


def test_an_approval_no_longer_needed_is_withdrawn_and_a_new_crossing_opens_another() -> None:
    # GIVEN a large request waiting for finance
    h = Harness()
    big_request(h)
    first = h.approval_id()
    # WHEN the amount drops under the threshold, then goes over it again
    h.call("form_fill", values={"amount": "900.00"})
    withdrawn = h.instance().state.outbox[first]
    h.call("form_fill", values={"amount": "8000.00"})
    # THEN the first approval was withdrawn (no decision, no timeout outcome can land on it)
    assert (withdrawn.status, withdrawn.error) == (
        "done",
        "withdrawn: the checkpoint no longer holds",
    )
    again = h.service.decide(FINANCE, first, "approved")
    assert again["ok"] is False and again["error"] == "unknown_approval"
    # AND the new crossing waits for a decision of its own
    assert h.approval_id() == "fi_1:checkpoint.finance_approval:2"
