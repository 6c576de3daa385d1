"""The approval routes: ``GET /approvals``, the approver's queue, and
``POST /approvals/{approval_id}``, an approver's decision.

The approver is the token's principal; their roles are what the ``ROLES_CLAIM`` claim lists
(``formwork.aws.routing.roles_from_claims``). The queue lists exactly what a decision would be
taken on (``forms.app.approvals.approval_queue``): the caller's tenant, a role they hold, never
a form they filled. What the caller may not decide is answered exactly like an approval that does
not exist (404). ``FormService.decide`` signals a recorded decision, best effort, to the
approval's wait when hooks run elsewhere (``forms.app.approvals.DecisionNotifier``).
"""

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import unquote

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from pydantic.json_schema import SkipJsonSchema

from forms.surface.tools import check_id
from formwork.aws.auth import _claims, principal_from_event
from formwork.aws.http import ApiError
from formwork.aws.models import ApprovalAnswer, ApprovalDecisionRequest, ApprovalQueueBody
from formwork.aws.openapi import DESCRIBED, error_responses, json_body
from formwork.aws.routing import logger, request_app, roles_from_claims

if TYPE_CHECKING:
    from forms.app.approvals import ApprovalQueue, Approver, QueuedApproval
    from formwork.bootstrap import App

router = Router()  # type: ignore[no-untyped-call]

QUEUE_PAGE = 50
"""The most approvals a queue page asks for (``forms.storage.approvals.MAX_PAGE``; a test
pins the two together, so this module loads no storage code at import)."""
_CURSOR_TEXT = 200


@router.get(
    "/approvals",
    summary="List the approvals the caller may decide",
    description="The approvals the caller may decide (POST /approvals/{approval_id}): of the "
    "caller's tenant, needing a role the token's roles claim (ROLES_CLAIM) lists, never on a "
    "form the caller filled, the same rule the decision applies. Each comes with the answers "
    "the decision is bound to (as they stood when it was asked), who asked, when, and the "
    "deadline; owed ones the earliest deadline first, then those settled (decided or expired) "
    "on forms that owe nothing now, the latest first, with what was decided, by whom and "
    "when. Read through a sparse index of the tenant's approvals, a page at a time: a page "
    "may hold fewer than limit with a next cursor when the tenant owes others' approvals.",
    responses={
        200: json_body(ApprovalQueueBody, "The caller's queue"),
        **error_responses(
            400,
            401,
            s400="A limit out of bounds or a cursor this route did not hand out (bad_request)",
        ),
    },
    tags=["approvals"],
)
def list_approvals(
    limit: Annotated[
        int, Query(ge=1, le=QUEUE_PAGE, description="Owed approvals per page (1-50)")
    ] = 20,
    after: Annotated[
        SkipJsonSchema[None] | str,
        Query(max_length=_CURSOR_TEXT, description="owed_next of the previous page"),
    ] = None,
    settled_limit: Annotated[
        int,
        Query(ge=0, le=QUEUE_PAGE, description="Settled approvals per page (0-50; 0: none)"),
    ] = 10,
    settled_after: Annotated[
        SkipJsonSchema[None] | str,
        Query(max_length=_CURSOR_TEXT, description="settled_next of the previous page"),
    ] = None,
) -> dict[str, Any]:
    approver = _approver()
    service = request_app(router.context).service
    try:
        queue = service.approval_queue(
            approver,
            limit=limit,
            after=after,
            settled_limit=settled_limit,
            settled_after=settled_after,
        )
    except ValueError as exc:
        raise ApiError(400, "bad_request", str(exc)) from None
    return _queue_body(queue)


def _queue_body(queue: "ApprovalQueue") -> dict[str, Any]:
    return {
        "owed": [_row(q) for q in queue.owed],
        "owed_next": queue.owed_next,
        "settled": [_row(q) for q in queue.settled],
        "settled_next": queue.settled_next,
    }


def _row(queued: "QueuedApproval") -> dict[str, Any]:
    settled = queued.settled
    return {
        "approval_id": queued.approval_id,
        "instance_id": queued.instance_id,
        "form_id": queued.form_id,
        "form_title": queued.form_title,
        "checkpoint": queued.checkpoint,
        "prompt": queued.prompt,
        "role": queued.role,
        "requested_by": queued.requested_by,
        "requested_at": _instant(queued.requested_at),
        "deadline": _instant(queued.deadline),
        "on_timeout": queued.on_timeout,
        "answers": [{"field": a.field, "label": a.label, "value": a.value} for a in queued.answers],
        "settled": None
        if settled is None
        else {
            "outcome": settled.outcome,
            "how": settled.how,
            "by": settled.by,
            "at": _instant(settled.at),
            "note": settled.note,
            "standing": settled.standing,
        },
    }


def _instant(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


@router.post(
    "/approvals/<approval_id>",
    summary="Decide a pending approval",
    description="Records the caller's decision (approved or rejected, with an optional note) on "
    "a pending approval checkpoint, as a revision by the approver on the approval's decision "
    "field; the decision fires that field's edges (the form may complete, or terminate) and "
    "the agent sees it in its next view. An approval is decided only by a principal of the "
    "form owner's tenant holding the role the definition names (in the token's roles claim, "
    "ROLES_CLAIM), never by the person who filled the form; anything else is the same 404 as "
    "an approval that does not exist. A decision on a closed form is refused with 409 "
    "form_closed. The approval id is the outbox key from the tool result (fired / hooks), "
    "{instance_id}:checkpoint.<id>:<occurrence>; its ':' may be sent percent-encoded.",
    responses={
        200: json_body(
            ApprovalAnswer,
            "Decision recorded (ok=true), with the form's status after it; or not recorded for "
            "a passing reason (ok=false, error busy): send the same request again",
        ),
        **error_responses(
            400,
            401,
            404,
            409,
            413,
            415,
            422,
            s400=DESCRIBED[400] + "; a malformed approval id (bad_request)",
            s404="No pending approval with that id that the caller may decide: it never "
            "existed, was decided already, expired, or is not the caller's to decide "
            "(unknown_approval; one answer for all of them)",
            s409="The form is closed (form_closed): nothing was recorded",
        ),
    },
    tags=["approvals"],
)
def decide_approval(
    approval_id: Annotated[
        str,
        Path(
            description="{instance_id}:checkpoint.<checkpoint>:<occurrence> (1-128 of A-Z a-z "
            "0-9 . _ : @ -; percent-encoding accepted)"
        ),
    ],
    request: Annotated[ApprovalDecisionRequest, Body()],
) -> dict[str, Any]:
    approver = _approver()
    approval = check_id(unquote(approval_id), "approval id")
    service = request_app(router.context).service
    result = service.decide(approver, approval, request.decision, request.note)
    if not result.get("ok"):
        code = str(result.get("error", "error"))
        if code == "forbidden":  # never told apart from an approval that does not exist
            raise _unknown_approval(approval)
        status = _DECISION_REFUSALS.get(code)
        if status is not None:
            raise ApiError(status, code, str(result.get("message", code)))
        logger.info("approval not recorded", extra={"error": code})
        return result  # as data, like a tool's result (``busy``: send it again)
    logger.info(
        "approval decided",
        extra={"instance_id": result.get("instance"), "decision": request.decision},
    )
    return result


_DECISION_REFUSALS = {"unknown_approval": 404, "bad_request": 400, "form_closed": 409}
"""The service's refusals that are HTTP statuses; any other ``ok: false`` is a 200 (data)."""


def _unknown_approval(approval_id: str) -> ApiError:
    """The service answers a caller who may not decide with ``unknown_approval``, the same as
    for an approval that does not exist. Should it ever say ``forbidden`` instead, the route
    still answers 404 with that same body, never a 403 that would tell the two apart."""
    return ApiError(404, "unknown_approval", f"no pending approval {approval_id!r}")


def _approver() -> "Approver":
    """The verified principal, with the roles the roles claim lists."""
    return approver_from_event(router.current_event.raw_event, request_app(router.context))


def approver_from_event(event: Mapping[str, Any], app: "App") -> "Approver":
    """The request's verified principal, with the roles its token's roles claim
    (``ROLES_CLAIM``) lists: who decides, for the API's routes and for minting a link to the
    approver's queue page."""
    from forms.app.approvals import Approver  # the engine: loaded by a decision, not at import

    settings = app.settings
    principal = principal_from_event(event, settings.tenant_claim)
    return Approver(principal, roles_from_claims(_claims(event), settings.roles_claim))
