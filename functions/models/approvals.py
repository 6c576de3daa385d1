"""The approval routes' bodies: a decision, what it left, and the approver's queue."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, JsonValue, RootModel
from pydantic.json_schema import SkipJsonSchema

from forms.statuses import InstanceStatus
from formwork.aws.models.common import ON_FIRST_USE, IgnoresIdentity

MAX_NOTE_CHARS = 1000
"""The longest note an approver may attach (``FormService.decide`` enforces the same)."""


class ApprovalDecisionRequest(IgnoresIdentity):
    """An approver's decision on one pending approval.

    Other keys are refused (422), except the identity keys above, which are ignored: the
    approver is the verified principal, never a name in the body.
    """

    model_config = ConfigDict(**ON_FIRST_USE, extra="forbid", frozen=True)

    decision: Literal["approved", "rejected"] = Field(
        description="The decision, written to the approval's decision field as a revision by "
        "the approver",
        examples=["approved"],
    )
    note: Annotated[str, Field(max_length=MAX_NOTE_CHARS)] | None = Field(
        default=None,
        description="The approver's reason, kept on the revision (at most 1000 characters)",
        examples=["within the Q3 budget"],
    )


class ApprovalResult(BaseModel):
    """What a recorded decision left: the form's status after the decision's edges ran."""

    model_config = ON_FIRST_USE

    ok: Literal[True] = True
    summary: str = Field(examples=["Recorded approved on Finance decision."])
    approval: str = Field(description="The approval id")
    instance: str = Field(description="The form instance the approval belongs to")
    form_status: InstanceStatus = Field(
        description="The form's status after the decision", examples=["completed"]
    )
    status_line: SkipJsonSchema[None] | str = Field(
        default=None, description="The form's status line after the decision, if any"
    )


class DecisionNotRecorded(BaseModel):
    """A decision that was not recorded for a reason that passes (``busy``: the form kept
    changing under it): nothing was written; send the same request again."""

    model_config = ON_FIRST_USE

    ok: Literal[False] = False
    error: str = Field(examples=["busy"])
    message: str
    hint: SkipJsonSchema[None] | str = None


class ApprovalAnswer(RootModel[Any]):
    """The 200 of ``POST /approvals/{approval_id}``: recorded, or not recorded (as data)."""

    model_config = ON_FIRST_USE

    root: ApprovalResult | DecisionNotRecorded


class BoundAnswerRow(BaseModel):
    model_config = ON_FIRST_USE

    field: str = Field(description="The field's id", examples=["amount"])
    label: str = Field(description="The field's label", examples=["Amount (EUR)"])
    value: JsonValue = Field(description="The answer as it stood when the approval was asked")


class SettlementRow(BaseModel):
    """How an approval was settled."""

    model_config = ON_FIRST_USE

    outcome: str = Field(description="What was written: approved or rejected")
    how: Literal["decided", "expired"] = Field(
        description="decided by an approver, or the declared timeout outcome at the deadline"
    )
    by: str | None = Field(
        description="The approver (the person part of their principal, in the caller's "
        "tenant); null when it expired"
    )
    at: AwareDatetime = Field(description="When it was settled")
    note: str | None = Field(description="The approver's note, if any")
    standing: bool = Field(
        description="Whether the decision is still in force (a changed answer it was bound "
        "to withdraws it)"
    )


class QueuedApprovalRow(BaseModel):
    """One approval as its approver sees it."""

    model_config = ON_FIRST_USE

    approval_id: str = Field(
        description="The id to decide it with (POST /approvals/{approval_id})",
        examples=["fi_1a2b:checkpoint.finance_approval:1"],
    )
    instance_id: str
    form_id: str
    form_title: str
    checkpoint: str = Field(description="The checkpoint's title", examples=["Finance approval"])
    prompt: str | None = Field(description="What the approver is asked, as the form declares")
    role: str = Field(description="The role it needs (one the caller holds)")
    requested_by: str = Field(
        description="Who filled the form: the person part of their principal (the caller's tenant)"
    )
    requested_at: AwareDatetime = Field(description="When the approval was asked")
    deadline: AwareDatetime | None = Field(
        description="When on_timeout applies if nobody decides; null: no deadline"
    )
    on_timeout: str = Field(description="The outcome written at the deadline")
    answers: list[BoundAnswerRow] = Field(
        description="The answers the decision is bound to: a change to any withdraws it"
    )
    settled: SettlementRow | None = Field(description="null while it is owed")


class ApprovalQueueBody(BaseModel):
    """The 200 of ``GET /approvals``."""

    model_config = ON_FIRST_USE

    owed: list[QueuedApprovalRow] = Field(
        description="What the caller may decide now, the earliest deadline first (none last)"
    )
    owed_next: str | None = Field(
        description="Pass as after for the next page of owed; null: nothing follows"
    )
    settled: list[QueuedApprovalRow] = Field(
        description="Approvals the caller could have decided that were settled (decided or "
        "expired) on forms that owe nothing now, the latest first"
    )
    settled_next: str | None = Field(
        description="Pass as settled_after for the next page of settled; null: nothing follows"
    )
