"""The HTTP tool API: one Lambda function behind API Gateway (HTTP API, payload v2).

Routes (``docs/http-api.md`` has the full contract):

* ``GET /tools[?format=generic|openai|anthropic|bedrock|mcp]``: the tool definitions.
* ``POST /conversations/{conversation_id}/tools/{tool_name}``: one tool call. A tool-level
  failure is a 200 whose result says ``ok: false``; 4xx is for the envelope, an unknown tool
  or authentication.
* ``GET /conversations/{conversation_id}/status``: the conversation's status lines.
* ``POST /conversations/{conversation_id}/mcp``: the form tools over MCP's streamable HTTP
  transport, stateless (``formwork.aws.mcp_routes``; GET and DELETE there answer 405). The MCP
  SDK loads with the first MCP request.
* ``GET /openapi.json`` and ``GET /swagger``: the OpenAPI document and Swagger UI.
* ``POST /webhooks/{source}``: an external system starts a form session; no JWT, an HMAC
  signature instead (``formwork.aws.webhooks``, ``docs/webhooks.md``). The route
  (``formwork.aws.webhook_route``) is included with the first webhook or MCP request, and its
  modules (the signature scheme, the delivery log, the outbound side) load with the first
  webhook request, not with this module.
* ``GET /approvals`` and ``POST /approvals/{approval_id}``: the approver's queue (what the
  caller may decide, due first) and an approver's decision on a pending approval; the
  approver's roles come from the ``ROLES_CLAIM`` claim (``roles_from_claims``). What the
  caller may not decide is never listed, and answered exactly like an approval that does not
  exist (404).
* ``GET /builder/tools``, ``POST /builder/forms/{form_id}/tools/{tool_name}``,
  ``GET /builder/forms[/{form_id}]``, ``POST /builder/forms/{form_id}/publish`` and
  ``GET /forms/{form_id}/versions/{version}``: the form builder (``formwork.aws.builder_routes``):
  a builder agent's tool calls on the tenant's drafts, publishing (the publisher role), the
  published versions. The builder's modules load with the first builder request.
* ``PUT|GET|DELETE /memory/facts/{key}``, ``POST /memory/facts/{key}/confirm``,
  ``GET /memory/facts``, ``GET /memory/export``, ``GET|PUT /memory/settings``: the verified
  principal's memory (``formwork.aws.memory_routes``): stating facts, the user's fact editor,
  export and switch. Memory's modules load with the first memory request.
* ``GET /operator/hooks/failed``, ``POST /operator/hooks/{key}/retry``,
  ``GET /operator/relay/failures``, ``POST /operator/relay/failures/redrive``: the operator
  routes (``formwork.aws.operator_routes``), for the operator role within its own tenant (the
  relay's queue: the platform tenant's operators).
* ``POST /conversations/{conversation_id}/page-links``, ``GET`` and ``POST /pages/enter/{token}``,
  ``GET /pages/forms/{instance_id}``, ``GET /pages/static/{name}``: the form page a person
  opens in a browser (``formwork.aws.page_routes``, ``docs/pages.md``): a signed single-use link
  minted with the JWT, exchanged for a session cookie; the page routes take no JWT.

A request goes through ``formwork.aws.http.precheck`` (principal, content type, size, JSON), then
Powertools routes it and validates it against ``formwork.aws.models``: the principal it verified
and the body it parsed are what the routes get (``formwork.aws.routing.request_verified``, and
``formwork.aws.http.CheckedBodies`` as the resolver's body parser), so each is read once per
request, and a path id or tool name is checked once, by the route's parameter type
(``formwork.aws.openapi.ConversationId``, ``ToolName``). Then a handler calls the
``FormService`` of the request's ``App`` (``formwork.bootstrap``) and returns what it says.
Handlers hold no business rules. Every refusal is JSON ``{"error", "message"}``; a 500 means a bug.

The OpenAPI document lists, for every route, exactly the statuses it can answer, each with its
body's schema (``tests/functional/test_conformance.py`` holds the handler to it). Logs carry
``log_hash`` of a conversation id, never the id.

This module is the function: the resolver, the checks before routing, the one exception
handler, and ``lambda_handler``. The routes live beside it, each module with its Powertools
``Router``: ``formwork.aws.tool_routes`` (tools, status), ``formwork.aws.approval_routes``
(approvals), ``formwork.aws.builder_routes`` (the builder), ``formwork.aws.memory_routes``
(memory), ``formwork.aws.mcp_routes`` (MCP), ``formwork.aws.webhook_route`` (webhooks); the
documents are here. The tool routes are registered with this module; MCP's and the webhook
route with the first request for either (``include_core_routes``); the others, and the
document's route, with the first request for any other path (``include_other_routes``), so a
container that serves tool calls never imports them. ``formwork.aws.openapi`` is the
document's plumbing, ``formwork.aws.refusals`` maps exceptions to refusals, and
``formwork.aws.routing`` holds what they share (Logger, Metrics, Tracer, the request's App).
"""

import re
import threading
from collections.abc import Mapping
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit

from forms.errors import BadRequest
from formwork import process
from formwork.aws import after_response, tool_routes
from formwork.aws.auth import Unauthenticated
from formwork.aws.http import (
    JSON_HEADERS,
    ApiError,
    CheckedBodies,
    error_response,
    is_page,
    is_webhook,
    precheck,
    precheck_page,
    precheck_webhook,
)
from formwork.aws.models import OpenApiDocument
from formwork.aws.openapi import Resolver, error_responses, json_body, openapi_settings
from formwork.aws.refusals import json_error, refusal, route_label
from formwork.aws.routing import (
    APP_KEY,
    VERIFIED_KEY,
    log_rejection,
    logger,
    metrics,
    tracer,
)
from formwork.bootstrap import App

if TYPE_CHECKING:  # an annotation only: Powertools' typing package is not imported to run
    from aws_lambda_powertools.utilities.typing import LambdaContext

BODIES = CheckedBodies()
"""The resolver's body parser: the body ``precheck`` parsed, not a second parse of it."""

# debug=False: POWERTOOLS_DEV must never turn on event printing (bearer tokens, user data) or
# stack traces in 500 bodies.
resolver = Resolver(enable_validation=True, debug=False, json_body_deserializer=BODIES)


def _no_store(router: APIGatewayHttpResolver, next_middleware: NextMiddleware) -> Response[Any]:
    """Tool results and status lines are personal data: no cache keeps a copy."""
    response = next_middleware(router)
    response.headers.setdefault("Cache-Control", "no-store")
    return response


resolver.use(middlewares=[_no_store])
resolver.swagger_on_demand("/swagger")  # Powertools' enable_swagger, on the first request for it


# ---------------------------------------------------------------------------- routes
# In the order of the document: the tools, the webhook route, approvals, the builder, memory,
# operators, the pages, the documents. The tool routes are registered with the module; MCP's
# and the webhook route with the first request for either (``include_core_routes``); the rest
# with the first request for a path none of those serve (``include_other_routes``, which
# includes MCP's and the webhook route first). Each group is included after the ones before it,
# so the resolver ends up the same, whichever request comes first.

resolver.include_router(tool_routes.router)

CORE_ROUTES = (
    "mcp_routes",  # not in the OpenAPI document: MCP's own contract
    "webhook_route",
)
"""The route modules under ``formwork.aws`` included by ``include_core_routes``, in order."""

OTHER_ROUTES = (
    "approval_routes",
    "builder_routes",
    "memory_routes",
    "operator_routes",  # failed hooks, the relay's failure queue
    "page_routes",
    "form_page",  # the form page and the person's moves on it
    "memory_pages",  # the fact editor (docs/pages.md)
    "canvas_pages",  # the builder's canvas (docs/pages.md)
    "approval_pages",  # the approver's queue (docs/pages.md)
)
"""The route modules under ``formwork.aws`` included by ``include_other_routes``, in order."""

TOOL_PATHS = re.compile(r"/tools|/conversations/[^/]+/(?:tools/[^/]+|status)")
"""The paths the routes registered with this module answer: ``GET /tools``, a tool call and the
status lines. No route of another module takes one of them."""

CORE_PATHS = re.compile(r"/tools|/conversations/[^/]+/(?:tools/[^/]+|status|mcp)|/webhooks/[^/]+")
"""The paths the tool routes, MCP's and the webhook route answer (``TOOL_PATHS``, MCP's and the
webhook's). No other route module's route takes one of them
(``tests/unit/test_api_route_loading.py`` holds that), so a request for one is routed exactly as
it would be with every route included."""

_included = threading.Lock()
_core_routes: list[str] = []
_other_routes: list[str] = []


def include_core_routes() -> None:
    """Import MCP's route module and the webhook route's (``CORE_ROUTES``) and include their
    routers, once per process: a container that only serves the tool routes never pays for
    them (nor for the webhook's models)."""
    with _included:
        _include_core()


def _include_core() -> None:  # with _included held
    if not _core_routes:
        for name in CORE_ROUTES:
            resolver.include_router(import_module(f"formwork.aws.{name}").router)
        _core_routes.extend(CORE_ROUTES)


def include_other_routes() -> None:
    """Include MCP's and the webhook route (``include_core_routes``), then import the other
    route modules (``OTHER_ROUTES``) and include their routers, then the OpenAPI document's
    route, once per process: a container that only serves tool calls never pays for their
    imports or their models."""
    with _included:
        if _other_routes:
            return
        _include_core()
        for name in OTHER_ROUTES:
            resolver.include_router(import_module(f"formwork.aws.{name}").router)
        resolver.get(
            "/openapi.json",
            summary="This OpenAPI document",
            description="The OpenAPI 3.1 document of the API, generated from the routes and "
            "models.",
            responses={
                200: json_body(OpenApiDocument, "The document"),
                **error_responses(
                    400, 401, s400="An event that is not API Gateway's (bad_request)"
                ),
            },
            tags=["documents"],
        )(openapi_document)
        _other_routes.extend(OTHER_ROUTES)


def openapi_document() -> Response[str]:
    return Response(200, "application/json", openapi_json(), headers=dict(JSON_HEADERS))


@cache
def openapi_json() -> str:
    """The OpenAPI 3.1 document, generated from every route and model (built once)."""
    include_other_routes()
    return resolver.get_openapi_json_schema(**openapi_settings())


# ---------------------------------------------------------------------------- errors


def _answer_error(error: Exception) -> Response[Any]:
    """The one exception handler: a refusal as its JSON 4xx, anything else as a bare 500."""
    refused = refusal(error, resolver.current_event.raw_event)
    if refused is None:
        logger.exception("unhandled error in a route")
        return json_error(500, "internal_error", "the request failed on our side")
    log_rejection(refused.status, refused.code)
    return json_error(refused.status, refused.code, refused.message, refused.headers)


for _kind in (
    ApiError,
    Unauthenticated,
    BadRequest,
    RequestUnsupportedContentType,
    RequestValidationError,
    NotFoundError,
    Exception,
):
    resolver.exception_handler(_kind)(_answer_error)


# ---------------------------------------------------------------------------- entry point

AFTER_RESPONSE = after_response.install("formwork.aws.api.lambda_handler")
"""The after-response extension, registered while the Lambda function initialises (None
elsewhere)."""


@logger.inject_lambda_context(
    correlation_id_path=correlation_paths.API_GATEWAY_HTTP, log_event=False, clear_state=True
)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def lambda_handler(
    event: dict[str, Any], context: "LambdaContext", *, app: App | None = None
) -> dict[str, Any]:
    """The Lambda entry point: API Gateway HTTP API (payload v2) event in, response out.

    Lambda calls it with the event and the context, and it serves with this process's App
    (``formwork.process.app()``); tests and local tools pass ``app=`` to serve with theirs.
    On Lambda, the work it leaves behind its answer ends before the environment is frozen
    (``formwork.aws.after_response``).
    """
    try:
        return _serve(event, context, app)
    finally:
        after_response.answered(AFTER_RESPONSE, context)


def _serve(event: dict[str, Any], context: "LambdaContext", app: App | None) -> dict[str, Any]:
    route = route_label(event) if isinstance(event, Mapping) else "unmatched"
    logger.append_keys(route=route)
    try:
        if not isinstance(event, Mapping):
            raise ApiError(400, "bad_request", "not an API Gateway HTTP API event")
        served = app if app is not None else process.app()
        settings = served.settings
        if is_webhook(event):
            checked = precheck_webhook(event, settings)
        elif is_page(event):
            checked = precheck_page(event)
        else:
            checked = precheck(event, settings)
        resolver.append_context(  # type: ignore[no-untyped-call]
            **{APP_KEY: served, VERIFIED_KEY: checked.verified}
        )
        path = checked.event["rawPath"]
        if not TOOL_PATHS.fullmatch(path):
            if CORE_PATHS.fullmatch(path):
                include_core_routes()
            else:
                include_other_routes()
        BODIES.hold(checked)
        try:
            response = resolver.resolve(checked.event, context)
        finally:
            BODIES.release()
    except ApiError as error:
        log_rejection(error.status, error.code)
        response = error_response(error)
    except Exception:
        logger.exception("unhandled error outside the routes")
        response = error_response(ApiError(500, "internal_error", "the request failed on our side"))
    status = response.get("statusCode", 500)
    metrics.add_dimension(name="route", value=route)
    metrics.add_metric(name=f"Status{int(status) // 100}xx", unit=MetricUnit.Count, value=1)
    return response
