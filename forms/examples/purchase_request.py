"""A purchase request: large amounts wait for a finance approver; a rejection ends it."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Literal

from pydantic import Field

from forms.definition import Approval, Checkpoint, FormDef, Step, field
from forms.effects import Terminate

APPROVAL_THRESHOLD = Decimal("5000")


class Request(Step):
    title = "Request"
    preview = "what, from whom, how much"

    item: Annotated[str, Field(min_length=3, max_length=200)] = field("What is being bought")
    supplier: Annotated[str, Field(min_length=2)] = field("Supplier", aliases=["vendor"])
    amount: Annotated[Decimal, Field(gt=0, le=1_000_000, decimal_places=2)] = field(
        "Amount (EUR)", aliases=["price", "cost"]
    )
    needed_by: str | None = field("Needed by (date or event)")


class Review(Step):
    title = "Review"

    budget_line: Annotated[str, Field(pattern=r"^BL-\d{4}$")] = field(
        "Budget line", ask="four digits after BL-", aliases=["budget code"], example="BL-2041"
    )
    finance_decision: Literal["approved", "rejected"] | None = field(
        "Finance decision", decided_by_approver=True
    )
    confirmed: bool = field("Requester confirms the details")


purchase_request = FormDef(
    id="purchase-request",
    version=1,
    title="Purchase request",
    description="Request a purchase; amounts over 5,000 EUR need a finance approver.",
    steps=[Request, Review],
    # The requester's confirmation is the user's sign-off: completing the form submits it.
    closes_on_complete=True,
    checkpoints=[
        Checkpoint(
            "finance_approval",
            when=lambda v: v.amount is not None and v.amount > APPROVAL_THRESHOLD,
            approval=Approval(
                field="finance_decision",
                role="finance",
                timeout_seconds=5 * 24 * 3600,
                on_timeout="rejected",
                prompt="Finance approval for a purchase over 5,000 EUR",
                # a decision is on this item, from this supplier, at this amount: a change to
                # any of them withdraws it and asks again
                binds=("item", "supplier", "amount"),
            ),
            title="Finance approval",
        ),
        Checkpoint(
            "rejected_by_finance",
            when=lambda v: v.finance_decision == "rejected",
            run=lambda ctx: Terminate("rejected by finance"),
        ),
    ],
)
