"""The approver's queue (``forms.app.approvals.approval_queue``): what a person may decide,
due first, and what was settled, by whom and when, read through the approval index."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from forms import Caller
from forms.app.approvals import ApprovalQueue, Approver
from forms.examples.purchase_request import purchase_request
from forms.storage import InMemoryFormStore
from tests.support import TickingClock, service_for

START = datetime(2026, 3, 1, 9, tzinfo=UTC)
ALICE = Caller("acme/alice", "conv-1")
FINANCE = Approver("acme/bob", frozenset({"finance"}))
BIG = {"item": "Laser cutter", "supplier": "Acme", "amount": "7200.00"}


class Desk:
    """A purchase-request service on an in-memory store, and requests filed on it."""

    def __init__(self) -> None:
        self.clock = TickingClock(START)
        self.store = InMemoryFormStore()
        self.service = service_for(purchase_request, clock=self.clock, store=self.store)
        self.calls = 0

    def request(self, caller: Caller = ALICE, **values: Any) -> str:
        """A request over the threshold filed by ``caller``; its approval id."""
        self.calls += 1
        result = self.service.call(
            caller,
            "form_start",
            f"call-{self.calls}",
            {"form": "purchase-request", "values": {**BIG, **values}},
        )
        (approval_id,) = result["fired"]
        return str(approval_id)

    def queue(self, approver: Approver = FINANCE, **options: Any) -> ApprovalQueue:
        return self.service.approval_queue(approver, **options)


def owed_ids(queue: ApprovalQueue) -> list[str]:
    return [q.approval_id for q in queue.owed]


def test_an_owed_approval_shows_what_is_asked_of_whom_by_whom_and_by_when() -> None:
    desk = Desk()
    approval_id = desk.request()
    (queued,) = desk.queue().owed
    entry = desk.store.get("fi_1").state.outbox[approval_id]
    assert queued.approval_id == approval_id and queued.instance_id == "fi_1"
    assert (queued.form_id, queued.form_title) == ("purchase-request", purchase_request.title)
    assert (queued.checkpoint, queued.role) == ("Finance approval", "finance")
    assert queued.prompt == "Finance approval for a purchase over 5,000 EUR"
    assert queued.requested_by == "alice"  # the person, within the approver's own tenant
    assert queued.requested_at == entry.created_at
    assert queued.deadline == entry.created_at + timedelta(days=5)
    assert queued.on_timeout == "rejected" and queued.settled is None
    # AND the answers are those the decision is bound to, as they stood when it was asked
    assert [(a.field, a.value) for a in queued.answers] == [
        ("item", "Laser cutter"),
        ("supplier", "Acme"),
        ("amount", "7200.00"),
    ]
    assert [a.label for a in queued.answers][2] == "Amount (EUR)"


@pytest.mark.parametrize(
    "approver",
    [
        FINANCE,
        Approver("acme/carol", frozenset({"sales"})),  # lacks the role
        Approver("acme/alice", frozenset({"finance"})),  # filled the form herself
        Approver("globex/bob", frozenset({"finance"})),  # another tenant's approver
        Approver("globex/alice", frozenset({"finance"})),  # the filler's name elsewhere
        Approver("bob", frozenset({"finance"})),  # a tenant-less approver
    ],
)
def test_listed_exactly_when_the_decision_would_be_taken(approver: Approver) -> None:
    desk = Desk()
    approval_id = desk.request()
    listed = owed_ids(desk.queue(approver))
    decided = desk.service.decide(approver, approval_id, "approved")
    assert (listed == [approval_id]) is (decided["ok"] is True)
    assert listed in ([], [approval_id])


def test_the_earliest_deadline_comes_first() -> None:
    desk = Desk()
    first = desk.request()
    desk.clock.now -= timedelta(days=1)  # the second is asked earlier, so due earlier
    second = desk.request(Caller("acme/dave", "conv-2"))
    assert owed_ids(desk.queue()) == [second, first]


def test_a_decision_moves_the_approval_to_settled_with_who_and_when() -> None:
    desk = Desk()
    approval_id = desk.request()
    desk.service.decide(FINANCE, approval_id, "rejected", note="over budget")
    queue = desk.queue()
    assert queue.owed == ()
    (settled,) = queue.settled
    assert settled.approval_id == approval_id and settled.settled is not None
    decision = settled.settled
    assert (decision.outcome, decision.how, decision.by, decision.note) == (
        "rejected",
        "decided",
        "bob",
        "over budget",
    )
    assert decision.standing is True
    revision = desk.store.get("fi_1").field("finance_decision").in_force()
    assert revision is not None and decision.at == revision.at


def test_an_expired_approval_is_settled_by_its_timeout_outcome() -> None:
    desk = Desk()
    approval_id = desk.request()
    desk.clock.now += timedelta(days=6)
    assert desk.service.expire_approvals("fi_1") == [approval_id]
    (settled,) = desk.queue().settled
    assert settled.settled is not None
    assert (settled.settled.outcome, settled.settled.how, settled.settled.by) == (
        "rejected",
        "expired",
        None,
    )


def test_a_changed_answer_replaces_the_approval_with_one_on_the_new_answers() -> None:
    desk = Desk()
    first = desk.request()
    desk.service.call(
        ALICE, "form_fill", "call-x", {"form": "purchase-request", "values": {"amount": "7300"}}
    )
    queue = desk.queue()
    (owed,) = queue.owed
    assert owed.approval_id != first and owed.approval_id.endswith(":2")
    assert {a.field: a.value for a in owed.answers}["amount"] == "7300"
    assert queue.settled == ()  # the withdrawn one was never settled


def test_a_closed_form_owes_nothing() -> None:
    desk = Desk()
    desk.request()
    closed = desk.service.call(
        ALICE, "form_abandon", "call-y", {"form": "purchase-request", "reason": "not needed"}
    )
    assert closed["ok"] is True
    queue = desk.queue()
    assert queue.owed == () and queue.settled == ()


def test_pages_read_on_with_the_cursor() -> None:
    desk = Desk()
    ids = [desk.request(Caller(f"acme/p{n}", f"conv-{n}")) for n in range(3)]
    first = desk.queue(limit=2, settled_limit=0)
    assert owed_ids(first) == ids[:2] and first.owed_next is not None
    rest = desk.queue(limit=2, after=first.owed_next)
    assert owed_ids(rest) == ids[2:] and rest.owed_next is None


def test_a_page_reads_past_what_the_approver_may_not_decide_within_a_bound() -> None:
    # GIVEN six requests bob filed himself (he holds finance) due before one alice filed
    desk = Desk()
    for n in range(6):
        desk.request(Caller("acme/bob", f"conv-bob-{n}"))
    desk.clock.now += timedelta(hours=1)
    alices = desk.request()
    # WHEN bob reads one approval at a time
    first = desk.queue(limit=1, settled_limit=0)
    # THEN a read takes a bounded number of index pages: none of his own is ever listed
    assert first.owed == () and first.owed_next is not None
    second = desk.queue(limit=1, after=first.owed_next)
    assert owed_ids(second) == [alices]


@pytest.mark.parametrize(
    "options",
    [
        {"limit": 0},
        {"limit": 51},
        {"settled_limit": -1},
        {"after": "nonsense"},
        {"settled_limit": 0, "settled_after": "nonsense"},
    ],
)
def test_bad_limits_and_cursors_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Desk().queue(**options)
