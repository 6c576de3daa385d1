"""The operator routes: what a team running Formwork does without a Python shell.

* ``GET /operator/hooks/failed``: the hooks of the caller's tenant that failed for good.
* ``POST /operator/hooks/{key}/retry``: put one back to pending and dispatch it again.
* ``GET /operator/relay/failures``: read back the relay's failure queue (left in it).
* ``POST /operator/relay/failures/redrive``: start a sweep, then delete what was read.
* ``POST /operator/forms/{form_id}/migrate``: a dry run of moving the tenant's open instances
  of a form onto its current version, then the run, a Temporal workflow.

Every route needs the operator role (``FORMWORK_OPERATOR_ROLE``) in the token's roles claim
(``ROLES_CLAIM``): without it, 403. An operator acts within their own tenant: another tenant's
hook is the same 404 as a hook that does not exist. The relay's queue is the deployment's, so
its two routes are for operators of the platform tenant (``FORMWORK_PLATFORM_TENANT``) only.
The rules are ``forms.app.operations``; this module parses, authorises and renders.
"""

import json
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, TypeVar
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from pydantic.json_schema import SkipJsonSchema

from forms.surface.tools import check_id
from functions.approval_routes import roles_from_claims
from functions.auth import _claims, principal_from_event
from functions.http import JSON_HEADERS, ApiError
from functions.openapi import DESCRIBED, error_responses, json_body
from functions.operator_models import (
    FailedHooksBody,
    MigrateRequest,
    MigrationPlanBody,
    MigrationStartedBody,
    RedriveBody,
    RelayFailuresBody,
    RetryBody,
)
from functions.routing import logger, request_app

if TYPE_CHECKING:
    from forms.app.operations import FailedBatch, FailureQueue, Operator, Sweeper

router = Router()  # type: ignore[no-untyped-call]

PAGE = 50
"""The most failed-hook instances (``forms.storage.approvals.MAX_PAGE``) or failure messages
(``forms.app.operations.MAX_FAILURES_PAGE``) one request reads."""
_CURSOR_TEXT = 200
_T = TypeVar("_T")

_S403 = "The token's roles claim lacks the operator role (forbidden)"
_S403_PLATFORM = (
    "The token's roles claim lacks the operator role, or the caller is not of the platform "
    "tenant (FORMWORK_PLATFORM_TENANT): the relay's queue is the deployment's (forbidden)"
)
_S503 = "The deployment names no failure queue or sweeper, or AWS refused the call (unavailable)"


@router.get(
    "/operator/hooks/failed",
    summary="List the tenant's hooks that failed for good",
    description="Every hook occurrence of the caller's tenant's instances whose executor "
    "failed for good (out of attempts, a final error, or stopped at the knock-on limit), the "
    "latest failure first, with its key (POST /operator/hooks/{key}/retry takes it), the "
    "error, the attempts and the instance it belongs to. Read through a sparse index of the "
    "tenant's instances holding a failed hook, never a scan; a page holds up to limit "
    "instances (each with its failed hooks). Needs the operator role.",
    responses={
        200: json_body(FailedHooksBody, "A page of the tenant's failed hooks"),
        **error_responses(
            400,
            401,
            403,
            s400="A limit out of bounds or a cursor this route did not hand out (bad_request)",
            s403=_S403,
        ),
    },
    tags=["operator"],
)
def list_failed_hooks(
    limit: Annotated[int, Query(ge=1, le=PAGE, description="Instances per page (1-50)")] = 20,
    after: Annotated[
        SkipJsonSchema[None] | str,
        Query(max_length=_CURSOR_TEXT, description="next of the previous page"),
    ] = None,
) -> dict[str, Any]:
    from forms.app.operations import failed_hooks
    from forms.storage.failed_hooks import FailedHookIndex

    operator = _operator()
    store = request_app(router.context).service.store
    if not isinstance(store, FailedHookIndex):  # both adapters are
        raise TypeError(f"{type(store).__name__} keeps no failed-hook index")
    try:
        page = failed_hooks(store, operator, limit=limit, after=after)
    except ValueError as exc:
        raise ApiError(400, "bad_request", str(exc)) from None
    return {
        "hooks": [
            {
                "key": h.key,
                "instance_id": h.instance_id,
                "form_id": h.form_id,
                "hook_id": h.hook_id,
                "occurrence": h.occurrence,
                "attempts": h.attempts,
                "error": h.error,
                "failed_at": _instant(h.failed_at),
                "principal": h.principal,
                "conversation_id": h.conversation_id,
                "form_status": h.form_status,
            }
            for h in page.hooks
        ],
        "next": page.next,
    }


@router.post(
    "/operator/hooks/<key>/retry",
    summary="Retry a hook that failed for good",
    description="Puts the failed hook occurrence back to pending (attempts reset, the same "
    "key, so the executor sees the idempotency key it saw before) and dispatches it as any "
    "hook is (in process, or a Temporal run). The key is the one GET /operator/hooks/failed "
    "lists, {instance_id}:<hook>:<occurrence>; its ':' may be sent percent-encoded. No body. "
    "A hook of another tenant's instance is the same 404 as one that does not exist. Needs the "
    "operator role.",
    responses={
        200: json_body(RetryBody, "Reopened and dispatched"),
        **error_responses(
            400,
            401,
            403,
            404,
            s400="A malformed key (bad_request)",
            s403=_S403,
            s404="No failed hook with that key on an instance of the caller's tenant: it never "
            "existed, is not failed (already retried, running or done), or is another "
            "tenant's (unknown_hook; one answer for all of them)",
        ),
    },
    tags=["operator"],
)
def retry_hook(
    key: Annotated[
        str,
        Path(
            description="{instance_id}:<hook>:<occurrence> (1-128 of A-Z a-z 0-9 . _ : @ -; "
            "percent-encoding accepted)"
        ),
    ],
) -> dict[str, Any]:
    from forms.app.operations import retry_failed_hook

    operator = _operator()
    hook = check_id(unquote(key), "hook key")
    service = request_app(router.context).service
    if not retry_failed_hook(service, operator, hook):
        raise ApiError(404, "unknown_hook", f"no failed hook {hook!r}")
    logger.info("operator retried a hook", extra={"key": hook})
    return {"ok": True, "key": hook, "instance_id": hook.rsplit(":", 2)[0]}


@router.get(
    "/operator/relay/failures",
    summary="Read back the relay's failure queue",
    description="The messages of the relay's on-failure queue, left in it: for each stream "
    "batch the relay gave up on, where it lies in the table's stream (shard, sequence "
    "numbers, arrival times, size) and why (condition). A message names no instance and "
    "holds no tenant's data. The queue is the deployment's: operators of the platform tenant "
    "only.",
    responses={
        200: json_body(RelayFailuresBody, "Up to limit messages and about how many there are"),
        **error_responses(
            400,
            401,
            403,
            503,
            s400="A limit out of bounds (bad_request)",
            s403=_S403_PLATFORM,
            s503=_S503,
        ),
    },
    tags=["operator"],
)
def list_relay_failures(
    limit: Annotated[int, Query(ge=1, le=PAGE, description="Messages to read (1-50)")] = 10,
) -> dict[str, Any]:
    from forms.app.operations import relay_failures

    queue, _ = _relay_tools(need_sweeper=False)
    batches, total = _aws(lambda: relay_failures(queue, limit=limit))
    return {"failures": [_batch(b) for b in batches], "approximate_count": total}


@router.post(
    "/operator/relay/failures/redrive",
    summary="Redrive the relay's failure queue",
    description="Starts one sweep (the sweeper function, asynchronously), which dispatches "
    "every hook left undispatched and applies every approval timeout that is due, which is "
    "all the failed stream batches asked for; then deletes up to limit messages read. Nothing "
    "is deleted when the sweep could not be started. No body. Operators of the platform "
    "tenant only.",
    responses={
        200: json_body(RedriveBody, "What was redriven and about how many messages remain"),
        **error_responses(
            400,
            401,
            403,
            503,
            s400="A limit out of bounds (bad_request)",
            s403=_S403_PLATFORM,
            s503=_S503,
        ),
    },
    tags=["operator"],
)
def redrive_relay_failures(
    limit: Annotated[int, Query(ge=1, le=PAGE, description="Messages to redrive (1-50)")] = 10,
) -> dict[str, Any]:
    from forms.app.operations import redrive

    queue, sweeper = _relay_tools(need_sweeper=True)
    assert sweeper is not None
    done = _aws(lambda: redrive(queue, sweeper, limit=limit))
    logger.info("operator redrove the relay's failures", extra={"redriven": len(done.redriven)})
    return {
        "sweep_started": done.sweep_started,
        "redriven": [_batch(b) for b in done.redriven],
        "approximate_remaining": done.remaining,
    }


@router.post(
    "/operator/forms/<form_id>/migrate",
    summary="Migrate a form's open instances (dry run first)",
    description="Moves the caller's tenant's open instances of the form on an older version "
    "onto its current version, through the engine's migration (renames and conversions "
    "appended as migration revisions; nothing rewritten). With dry_run true (the default, "
    "also with no body) nothing is written: 200 with what would happen to each instance, a "
    "page at a time: moves (the fields carried over, and the answered fields the current "
    "version refuses, which are kept and asked again), fails (a conversion failed) or no_path "
    "(no migration from its version). With dry_run false, 202: a Temporal workflow moves them "
    "page by page (one run per form and version at a time; a second request joins it). "
    "Instances are read through an index of the tenant's open instances by form and version, "
    "never a scan. Another tenant's published form is the same 404 as a form that does not "
    "exist. Needs the operator role.",
    responses={
        200: json_body(MigrationPlanBody, "The dry run: what would happen to each instance"),
        202: json_body(MigrationStartedBody, "The run started (or joined)"),
        **error_responses(
            400,
            401,
            403,
            404,
            409,
            413,
            415,
            422,
            503,
            s400=DESCRIBED[400] + "; a cursor this route did not hand out (bad_request)",
            s403=_S403,
            s404="No such form for the caller's tenant (unknown_form)",
            s409="The run needs Temporal: this deployment runs hooks in process "
            "(FORMWORK_DISPATCH=inprocess; needs_temporal)",
            s503="Temporal could not be reached to start the run (unavailable)",
        ),
    },
    tags=["operator"],
)
def migrate_form(
    form_id: Annotated[str, Path(description="The form's id (or a spelling of it)")],
    request: Annotated[MigrateRequest, Body()],
) -> Response[str]:
    from forms.app.migrations import StartFailed, plan_migration, start_migration
    from forms.errors import UnknownForm

    operator = _operator()
    form = check_id(form_id, "form id")
    app = request_app(router.context)
    try:
        if request.dry_run:
            plan = plan_migration(
                app.service, operator, form, limit=request.limit, after=request.after
            )
            return _json(
                200,
                {
                    "dry_run": True,
                    "form_id": plan.form_id,
                    "to_version": plan.to_version,
                    "instances": [
                        {
                            "instance_id": p.instance_id,
                            "principal": p.principal,
                            "conversation_id": p.conversation_id,
                            "from_version": p.from_version,
                            "to_version": p.to_version,
                            "outcome": p.outcome,
                            "moved": list(p.moved),
                            "invalid": list(p.invalid),
                            "reason": p.reason,
                        }
                        for p in plan.instances
                    ],
                    "next": plan.next,
                },
            )
        starter = app.migration_starter
        if starter is None:
            raise ApiError(
                409,
                "needs_temporal",
                "a migration runs as a Temporal workflow; this deployment runs hooks in "
                "process (FORMWORK_DISPATCH=inprocess): its instances move at their next write",
            )
        try:
            started = start_migration(app.service, starter, operator, form)
        except StartFailed:
            logger.warning("could not start the migration's workflow", exc_info=True)
            raise ApiError(503, "unavailable", "Temporal could not be reached; try again") from None
    except UnknownForm:
        raise ApiError(404, "unknown_form", f"no form {form!r}") from None
    except ValueError as exc:
        raise ApiError(400, "bad_request", str(exc)) from None
    logger.info(
        "operator started a migration",
        extra={"workflow_id": started.workflow_id, "started": started.started},
    )
    body = {
        "dry_run": False,
        "form_id": started.form_id,
        "to_version": started.to_version,
        "workflow_id": started.workflow_id,
        "started": started.started,
    }
    return _json(202, body)


def _json(status: int, body: dict[str, Any]) -> Response[str]:
    return Response(
        status,
        "application/json",
        json.dumps(body, separators=(",", ":")),
        headers=dict(JSON_HEADERS),
    )


# ---------------------------------------------------------------------------- helpers


def _operator() -> "Operator":
    """The verified principal with their roles; 403 without the operator role."""
    from forms.app.operations import NotAnOperator, Operator, require_operator

    settings = request_app(router.context).settings
    event = router.current_event.raw_event
    operator = Operator(
        principal_from_event(event, settings.tenant_claim),
        roles_from_claims(_claims(event), settings.roles_claim),
    )
    try:
        require_operator(operator, settings.operator_role)
    except NotAnOperator as exc:
        raise ApiError(403, "forbidden", str(exc)) from None
    return operator


def _relay_tools(*, need_sweeper: bool) -> "tuple[FailureQueue, Sweeper | None]":
    """The failure queue (and the sweeper) for a platform operator; 403 / 503 otherwise."""
    from forms.app.operations import NotAnOperator, require_platform

    operator = _operator()
    app = request_app(router.context)
    settings = app.settings
    try:
        require_platform(
            operator,
            settings.operator_role,
            settings.platform_tenant,
            single_tenant=settings.tenant_claim is None,
        )
    except NotAnOperator as exc:
        raise ApiError(403, "forbidden", str(exc)) from None
    queue, sweeper = app.failure_queue, app.sweeper
    if queue is None or (need_sweeper and sweeper is None):
        raise ApiError(
            503,
            "unavailable",
            "this deployment names no relay failure queue or sweeper "
            "(FORMWORK_RELAY_FAILURES_URL, FORMWORK_SWEEPER_FUNCTION)",
        )
    return queue, sweeper


def _aws(call: Callable[[], _T]) -> _T:
    """``call``, with AWS's refusals (throttling, a queue gone) as a 503, never a 500."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        return call()
    except ValueError as exc:
        raise ApiError(400, "bad_request", str(exc)) from None
    except (BotoCoreError, ClientError):
        logger.warning("the relay's failure queue or the sweeper refused", exc_info=True)
        raise ApiError(503, "unavailable", "AWS refused the call; try again") from None


def _batch(batch: "FailedBatch") -> dict[str, Any]:
    return {
        "message_id": batch.message_id,
        "sent_at": batch.sent_at,
        "condition": batch.condition,
        "shard_id": batch.shard_id,
        "start_sequence": batch.start_sequence,
        "end_sequence": batch.end_sequence,
        "first_record_at": batch.first_record_at,
        "last_record_at": batch.last_record_at,
        "batch_size": batch.batch_size,
    }


def _instant(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()
