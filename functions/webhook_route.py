"""The webhook route: ``POST /webhooks/{source}``, an external system starts a form session.

No JWT: the request is signed (HMAC, Standard Webhooks; ``formwork.aws.webhooks``,
``docs/webhooks.md``). ``formwork.aws.api`` includes this module's router with the first
request for its path (or for any path its import-time tool routes do not serve), right after
MCP's, so the resolver holds the routes in the order of the OpenAPI document either way. The
route's own modules (the signature scheme, the delivery log, the outbound side) load with its
first request, not with this module: it holds the route's declaration and models only.
"""

import json
from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path

from formwork.aws.http import JSON_HEADERS
from formwork.aws.models import ErrorBody, WebhookOutcome
from formwork.aws.openapi import DESCRIBED, json_body
from formwork.aws.routing import request_app

router = Router()  # type: ignore[no-untyped-call]


@router.post(
    "/webhooks/<source>",
    summary="Start a form session from a signed webhook",
    description="An external system starts a form session for a principal and conversation "
    "(body: form, principal, conversation_id, values, metadata). No JWT: the request is signed "
    "as Standard Webhooks specifies (webhook-id, webhook-timestamp, webhook-signature: "
    "HMAC-SHA256 with the source's secret; the X-Formwork-* headers are deprecated, accepted "
    "until 2027-06-30). 201 with the instance; a re-delivery of the same body under the same "
    "delivery id is a 200 with the first outcome. See docs/webhooks.md.",
    responses={
        200: json_body(WebhookOutcome, "Already handled: the first outcome, with replayed=true"),
        201: json_body(WebhookOutcome, "Session started"),
        400: json_body(
            ErrorBody,
            "A malformed webhook-id or X-Formwork-Delivery (bad_delivery_id); a body that is not "
            "JSON (malformed_json) or holds a key twice (duplicate_key); an event that is not "
            "API Gateway's (bad_request)",
        ),
        401: json_body(
            ErrorBody,
            "Unknown source, bad or missing signature, or a stale timestamp (no JWT authorizer "
            "on this route)",
        ),
        403: json_body(
            ErrorBody,
            "The source's configured limits do not let it start this form, or act for this "
            "principal's tenant",
        ),
        409: json_body(
            ErrorBody,
            "Delivery id used for another body, signed request replayed under another id, or "
            "the delivery is still being handled (Retry-After)",
        ),
        413: json_body(ErrorBody, DESCRIBED[413]),
        415: json_body(ErrorBody, DESCRIBED[415]),
        422: json_body(
            ErrorBody,
            "The body is not a valid start request (invalid_payload), or names no registered "
            "form, or form_start refused it (its error code)",
        ),
        503: json_body(ErrorBody, "The secret store could not be read (Retry-After)"),
    },
    tags=["webhooks"],
    security=[{"webhookSignature": []}],
)
def receive_webhook(
    source: Annotated[str, Path(description="The sending system, as configured")],
) -> Response[str]:
    from formwork.aws.webhooks import receive

    status, body, headers = receive(
        router.current_event.raw_event, source, request_app(router.context)
    )
    return Response(
        status,
        "application/json",
        json.dumps(body, separators=(",", ":")),
        headers={**JSON_HEADERS, **headers},
    )
