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
The rules are ``forms.app.operations``; this module parses and authorises, and
``formwork.aws.operator_bodies`` renders the answers and describes each route.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from pydantic.json_schema import SkipJsonSchema

from forms.surface.tools import check_id
from formwork.aws.auth import _claims, principal_from_event
from formwork.aws.http import ApiError
from formwork.aws.operator_bodies import (
    OPERATIONS,
    batch_body,
    failed_hooks_body,
    migration_plan_body,
    migration_started_body,
)
from formwork.aws.operator_models import MigrateRequest
from formwork.aws.routing import json_response, logger, request_app, roles_from_claims

if TYPE_CHECKING:
    from forms.app.operations import FailureQueue, Operator, Sweeper

router = Router()  # type: ignore[no-untyped-call]

PAGE = 50
"""The most failed-hook instances (``forms.storage.approvals.MAX_PAGE``) or failure messages
(``forms.app.operations.MAX_FAILURES_PAGE``) one request reads."""
_CURSOR_TEXT = 200
_T = TypeVar("_T")


@router.get("/operator/hooks/failed", **OPERATIONS["list_failed_hooks"])
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
    return failed_hooks_body(page)


@router.post("/operator/hooks/<key>/retry", **OPERATIONS["retry_hook"])
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


@router.get("/operator/relay/failures", **OPERATIONS["list_relay_failures"])
def list_relay_failures(
    limit: Annotated[int, Query(ge=1, le=PAGE, description="Messages to read (1-50)")] = 10,
) -> dict[str, Any]:
    from forms.app.operations import relay_failures

    queue, _ = _relay_tools(need_sweeper=False)
    batches, total = _aws(lambda: relay_failures(queue, limit=limit))
    return {"failures": [batch_body(b) for b in batches], "approximate_count": total}


@router.post("/operator/relay/failures/redrive", **OPERATIONS["redrive_relay_failures"])
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
        "redriven": [batch_body(b) for b in done.redriven],
        "approximate_remaining": done.remaining,
    }


@router.post("/operator/forms/<form_id>/migrate", **OPERATIONS["migrate_form"])
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
            return json_response(200, migration_plan_body(plan))
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
    return json_response(202, migration_started_body(started))


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
