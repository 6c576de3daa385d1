"""What the operator routes answer, and how the OpenAPI document describes it.

``formwork.aws.operator_routes`` authorises the operator and calls ``forms.app.operations`` and
``forms.app.migrations``; this module turns what they return into the JSON a caller gets
(``failed_hooks_body``, ``batch_body``, ``migration_plan_body``, ``migration_started_body``)
and holds each route's summary, description and documented answers (``OPERATIONS``), so the
routes module is the handlers alone.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse

from formwork.aws.openapi import DESCRIBED, error_responses, json_body
from formwork.aws.operator_models import (
    FailedHooksBody,
    MigrationPlanBody,
    MigrationStartedBody,
    RedriveBody,
    RelayFailuresBody,
    RetryBody,
)

if TYPE_CHECKING:
    from forms.app.migrations import MigrationPlan, StartedMigration
    from forms.app.operations import FailedBatch, FailedHooks

_S403 = "The token's roles claim lacks the operator role (forbidden)"
_S403_PLATFORM = (
    "The token's roles claim lacks the operator role, or the caller is not of the platform "
    "tenant (FORMWORK_PLATFORM_TENANT): the relay's queue is the deployment's (forbidden)"
)
_S503 = "The deployment names no failure queue or sweeper, or AWS refused the call (unavailable)"


def _relay_errors(s400: str, *body: int) -> dict[int, OpenAPIResponse]:
    """What the relay's two routes refuse with: ``s400`` says what their 400 covers, and
    ``body`` lists the statuses of the checks of a POST's body (the redrive's: it takes none,
    but one sent anyway is checked)."""
    return error_responses(400, 401, 403, *body, 503, s400=s400, s403=_S403_PLATFORM, s503=_S503)


OPERATIONS: dict[str, dict[str, Any]] = {
    "list_failed_hooks": {
        "summary": "List the tenant's hooks that failed for good",
        "description": "Every hook occurrence of the caller's tenant's instances whose executor "
        "failed for good (out of attempts, a final error, or stopped at the knock-on limit), the "
        "latest failure first, with its key (POST /operator/hooks/{key}/retry takes it), the "
        "error, the attempts and the instance it belongs to. Read through a sparse index of the "
        "tenant's instances holding a failed hook, never a scan; a page holds up to limit "
        "instances (each with its failed hooks). Needs the operator role.",
        "responses": {
            200: json_body(FailedHooksBody, "A page of the tenant's failed hooks"),
            **error_responses(
                400,
                401,
                403,
                s400="A limit out of bounds or a cursor this route did not hand out (bad_request)",
                s403=_S403,
            ),
        },
        "tags": ["operator"],
    },
    "retry_hook": {
        "summary": "Retry a hook that failed for good",
        "description": "Puts the failed hook occurrence back to pending (attempts reset, the same "
        "key, so the executor sees the idempotency key it saw before) and dispatches it as any "
        "hook is (in process, or a Temporal run). The key is the one GET /operator/hooks/failed "
        "lists, {instance_id}:<hook>:<occurrence>; its ':' may be sent percent-encoded. No body "
        "(one sent anyway is checked as any POST's is: 415, 413, 400). A hook of another "
        "tenant's instance is the same 404 as one that does not exist. Needs the operator role.",
        "responses": {
            200: json_body(RetryBody, "Reopened and dispatched"),
            **error_responses(
                400,
                401,
                403,
                404,
                413,
                415,
                s400="A malformed key, or a body sent that is not JSON (bad_request)",
                s403=_S403,
                s404="No failed hook with that key on an instance of the caller's tenant: it never "
                "existed, is not failed (already retried, running or done), or is another "
                "tenant's (unknown_hook; one answer for all of them)",
            ),
        },
        "tags": ["operator"],
    },
    "list_relay_failures": {
        "summary": "Read back the relay's failure queue",
        "description": "The messages of the relay's on-failure queue, left in it: for each stream "
        "batch the relay gave up on, where it lies in the table's stream (shard, sequence "
        "numbers, arrival times, size) and why (condition). A message names no instance and "
        "holds no tenant's data. The queue is the deployment's: operators of the platform tenant "
        "only.",
        "responses": {
            200: json_body(RelayFailuresBody, "Up to limit messages and about how many there are"),
            **_relay_errors("A limit out of bounds (bad_request)"),
        },
        "tags": ["operator"],
    },
    "redrive_relay_failures": {
        "summary": "Redrive the relay's failure queue",
        "description": "Starts one sweep (the sweeper function, asynchronously), which dispatches "
        "every hook left undispatched and applies every approval timeout that is due, which is "
        "all the failed stream batches asked for; then deletes up to limit messages read. Nothing "
        "is deleted when the sweep could not be started. No body (one sent anyway is checked as "
        "any POST's is: 415, 413, 400). Operators of the platform tenant only.",
        "responses": {
            200: json_body(RedriveBody, "What was redriven and about how many messages remain"),
            **_relay_errors(
                "A limit out of bounds, or a body sent that is not JSON (bad_request)", 413, 415
            ),
        },
        "tags": ["operator"],
    },
    "migrate_form": {
        "summary": "Migrate a form's open instances (dry run first)",
        "description": "Moves the caller's tenant's open instances of the form on an older version "
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
        "responses": {
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
        "tags": ["operator"],
    },
}
"""Each route's summary, description, documented answers and tag: the keyword arguments
of its decorator."""


def failed_hooks_body(page: FailedHooks) -> dict[str, Any]:
    """A page of failed hooks, as ``GET /operator/hooks/failed`` answers it."""
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


def batch_body(batch: FailedBatch) -> dict[str, Any]:
    """One message of the relay's failure queue: where its stream batch lies, and why."""
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


def migration_plan_body(plan: MigrationPlan) -> dict[str, Any]:
    """A migration's dry run: what would happen to each instance of the page."""
    return {
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
    }


def migration_started_body(started: StartedMigration) -> dict[str, Any]:
    """A migration's run, started or joined."""
    return {
        "dry_run": False,
        "form_id": started.form_id,
        "to_version": started.to_version,
        "workflow_id": started.workflow_id,
        "started": started.started,
    }


def _instant(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()
