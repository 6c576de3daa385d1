"""The HTTP tool API: one Lambda function behind API Gateway (HTTP API, payload v2).

Routes (``docs/http-api.md`` has the full contract):

* ``GET /tools[?format=generic|openai|anthropic|bedrock|mcp]``: the tool definitions.
* ``POST /conversations/{conversation_id}/tools/{tool_name}``: one tool call. A tool-level
  failure is a 200 whose result says ``ok: false``; 4xx is for the envelope, an unknown tool
  or authentication.
* ``GET /conversations/{conversation_id}/status``: the conversation's status lines.
* ``GET /openapi.json`` and ``GET /swagger``: the OpenAPI document and Swagger UI.
* ``POST /webhooks/{source}``: an external system starts a form session; no JWT, an HMAC
  signature instead (``functions.webhooks``, ``docs/webhooks.md``).
* ``POST /approvals/{approval_id}``: an approver's decision on a pending approval; the
  approver's roles come from the ``ROLES_CLAIM`` claim (``roles_from_claims``). What the
  caller may not decide is answered exactly like an approval that does not exist (404).

A request goes through ``functions.http.precheck`` (principal, content type, size, JSON), then
Powertools routes it and validates it against ``functions.models``, then a handler calls
``FormService`` through ``formwork.bootstrap`` and returns what it says. Handlers hold no
business rules. Every refusal is JSON ``{"error", "message"}``; a 500 means a bug.

The OpenAPI document lists, for every route, exactly the statuses it can answer, each with its
body's schema (``tests/functional/test_conformance.py`` holds the handler to it). Logs carry
``log_hash`` of a conversation id, never the id.
"""

import json
import os
import re
from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, Literal, Protocol, runtime_checkable
from urllib.parse import unquote

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)
from aws_lambda_powertools.event_handler.openapi.models import (
    APIKey,
    APIKeyIn,
    HTTPBearer,
    OpenAPI,
)
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit, single_metric
from aws_lambda_powertools.utilities.typing import LambdaContext

from forms.app.approvals import Approver
from forms.app.conversation import Caller
from forms.errors import BadRequest
from forms.surface.formats import FORMATS, Format, tool_definitions
from forms.surface.tools import TOOLS_BY_NAME, check_id
from formwork import bootstrap
from functions import webhooks
from functions.auth import Unauthenticated, _claims, principal_from_event
from functions.http import (
    JSON_HEADERS,
    ApiError,
    error_body,
    error_response,
    log_hash,
    precheck,
    unauthorized,
)
from functions.models import (
    ID_PATTERN,
    ApprovalAnswer,
    ApprovalDecisionRequest,
    ConversationStatus,
    ErrorBody,
    OpenApiDocument,
    ToolCallRequest,
    ToolList,
    ToolResult,
    Unauthorized,
    WebhookOutcome,
)

SERVICE = os.getenv("POWERTOOLS_SERVICE_NAME") or "formwork"
NAMESPACE = os.getenv("POWERTOOLS_METRICS_NAMESPACE") or "Formwork"

logger = Logger(service=SERVICE)
metrics = Metrics(namespace=NAMESPACE, service=SERVICE)
tracer = Tracer(service=SERVICE)


class _Resolver(APIGatewayHttpResolver):
    """Powertools' resolver, whose OpenAPI document lists only what the routes answer."""

    def get_openapi_schema(self, *args: Any, **kwargs: Any) -> OpenAPI:
        schema = super().get_openapi_schema(*args, **kwargs)
        _only_declared_responses(schema)
        return schema


def _only_declared_responses(schema: OpenAPI) -> None:
    """Drop the 422 Powertools adds to every operation (its ``HTTPValidationError``): this API
    answers validation failures with its own statuses and ``ErrorBody``, and a route that
    answers 422 at all declares it. Then drop the component schemas nothing refers to."""
    for item in (schema.paths or {}).values():
        for method in ("get", "put", "post", "delete", "options", "head", "patch", "trace"):
            operation = getattr(item, method, None)
            if operation is None or not operation.responses:
                continue
            for status, response in list(operation.responses.items()):
                if "HTTPValidationError" in _dumped(response):
                    del operation.responses[status]
    components = schema.components
    if components is None or not components.schemas:
        return
    named = components.schemas
    wanted = _referenced(_dumped(schema.paths))
    pending = list(wanted)
    while pending:
        name = pending.pop()
        for ref in _referenced(_dumped(named.get(name))) - wanted:
            wanted.add(ref)
            pending.append(ref)
    components.schemas = {name: value for name, value in named.items() if name in wanted}


_REF = re.compile(r'"#/components/schemas/([^"]+)"')


def _dumped(value: Any) -> str:
    return json.dumps(_plain(value), default=str)


def _plain(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(by_alias=True, exclude_none=True, mode="json")
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _referenced(text: str) -> set[str]:
    return set(_REF.findall(text))


# debug=False: POWERTOOLS_DEV must never turn on event printing (bearer tokens, user data) or
# stack traces in 500 bodies.
app = _Resolver(enable_validation=True, debug=False)

if TYPE_CHECKING:
    ToolName = str
else:
    ToolName = Literal[tuple(TOOLS_BY_NAME)]

ConversationId = Annotated[
    str,
    Path(
        pattern=ID_PATTERN,
        description="The agent's conversation id (1-128 of A-Z a-z 0-9 . _ : @ -)",
    ),
]


_GATEWAY_401 = (
    "API Gateway's JWT authorizer answers a missing, expired or invalid token itself, before "
    'the function runs, with 401 {"message": "Unauthorized"} (and a WWW-Authenticate header); '
    "HTTP APIs have no gateway responses, so that body cannot be reshaped. The function's own "
    '401 is {"error": "unauthorized", "message"}.'
)
_DESCRIBED = {
    400: "Malformed request: an event that is not API Gateway's, or a body that is not base64 "
    "when flagged so (bad_request); a body that is empty, not UTF-8 JSON, NaN, lone surrogates, "
    "nested too deep (malformed_json), or holding a key twice in one object (duplicate_key)",
    401: "No verified principal. " + _GATEWAY_401,
    413: "Body over the size limit (payload_too_large)",
    415: "Body is not UTF-8 JSON, or has no content type (unsupported_media_type)",
    422: "The body is well-formed JSON of the wrong shape (invalid_request; the message names "
    "the field)",
}


def _json(model: Any, description: str) -> OpenAPIResponse:
    return {"description": description, "content": {"application/json": {"model": model}}}


def _errors(*statuses: int, **described: str) -> dict[int, OpenAPIResponse]:
    """OpenAPI entries for the error statuses a route can answer: ``ErrorBody``, and for 401
    also API Gateway's own body. ``described`` overrides a description (key ``s404``)."""
    entries: dict[int, OpenAPIResponse] = {}
    for status in statuses:
        text = described.get(f"s{status}") or _DESCRIBED[status]
        entries[status] = _json(Unauthorized if status == 401 else ErrorBody, text)
    return entries


OPENAPI: dict[str, Any] = {
    "title": "Formwork tool API",
    "version": "1.0.0",
    "description": "Agent tools for collecting structured information through conversations. "
    "Every route needs a bearer JWT (API Gateway's JWT authorizer verifies it), except "
    "POST /webhooks/{source}, which is signed with the source's secret instead.\n\n"
    "Every route lists exactly the statuses it answers. Every refusal from the function is "
    'JSON {"error", "message"}. ' + _GATEWAY_401 + " Any other method or path is a 404 "
    "route_not_found, after the checks every request goes through (401; for POST also 415, "
    "413, 400). A 500 internal_error is a bug and is not listed.",
    "security_schemes": {
        "bearerAuth": HTTPBearer(bearerFormat="JWT"),
        "webhookSignature": APIKey(
            **{"in": APIKeyIn.header},
            name="X-Formwork-Signature",
            description="POST /webhooks/{source} only: v1=<hex HMAC-SHA256 of "
            '"{X-Formwork-Timestamp}.{body}"> under the source\'s secret; see docs/webhooks.md',
        ),
    },
    "security": [{"bearerAuth": []}],
}
app.configure_openapi(**OPENAPI)


def _no_store(app: APIGatewayHttpResolver, next_middleware: NextMiddleware) -> Response[Any]:
    """Tool results and status lines are personal data: no cache keeps a copy."""
    response = next_middleware(app)
    response.headers.setdefault("Cache-Control", "no-store")
    return response


app.use(middlewares=[_no_store])
app.enable_swagger(path="/swagger", **OPENAPI)


# ---------------------------------------------------------------------------- routes


@app.get(
    "/tools",
    summary="The tool definitions",
    description="Name, description and input JSON schema of every tool; with format, in that "
    "vendor's tool-definition shape.",
    responses={
        200: _json(ToolList, "The tools, in surface order, in the requested shape"),
        **_errors(
            400,
            401,
            s400="format is not one of the shapes, or an event that is not API Gateway's "
            "(bad_request)",
        ),
    },
    tags=["tools"],
)
def list_tools(
    format: Annotated[  # the public query parameter's name
        Format, Query(description="Tool-definition shape: " + ", ".join(FORMATS))
    ] = "generic",
) -> ToolList:
    return ToolList(tools=tool_definitions(format))


@app.post(
    "/conversations/<conversation_id>/tools/<tool_name>",
    summary="Run one tool call",
    description="Runs the tool for the caller's conversation and returns its result. A "
    "tool-level failure (a bad value, an unknown field) is a 200 with ok=false and a hint, for "
    "the model to read. A replayed tool_call_id returns the first result.",
    responses={
        200: _json(
            ToolResult,
            "The tool's result, also when the tool refused (ok=false with error, message, hint)",
        ),
        **_errors(
            400,
            401,
            404,
            413,
            415,
            422,
            s400=_DESCRIBED[400] + "; a malformed conversation id (bad_request)",
            s404="No such tool (unknown_tool; the message lists the tools)",
        ),
    },
    tags=["tools"],
)
def call_tool(
    conversation_id: ConversationId,
    tool_name: Annotated[ToolName, Path(description="A tool name from GET /tools")],
    request: Annotated[ToolCallRequest, Body()],
) -> dict[str, Any]:
    caller = _caller(conversation_id)
    if tool_name not in TOOLS_BY_NAME:
        raise _unknown_tool()
    conversation = log_hash(caller.conversation_id)  # before the call: a bad key fails first
    result = bootstrap.service().call(caller, tool_name, request.tool_call_id, request.input or {})
    outcome = "ok" if result.get("ok") else str(result.get("error", "error"))
    _count_tool_call(tool_name, outcome)
    logger.info(
        "tool call",
        extra={"tool": tool_name, "outcome": outcome, "conversation_hash": conversation},
    )
    return result


@app.get(
    "/conversations/<conversation_id>/status",
    summary="The conversation's status lines",
    description="Tier-0 status lines of the caller's open forms in this conversation, for the "
    "system prompt. 404 when the caller has no forms in it (another principal's conversation "
    "looks exactly like one that does not exist).",
    responses={
        200: _json(ConversationStatus, "The status lines (empty when every form there is closed)"),
        **_errors(
            400,
            401,
            404,
            s400="A malformed conversation id, or an event that is not API Gateway's (bad_request)",
            s404="The caller has no forms in this conversation (not_found)",
        ),
    },
    tags=["conversations"],
)
def conversation_status(conversation_id: ConversationId) -> ConversationStatus:
    caller = _caller(conversation_id)
    service = bootstrap.service()
    lines = service.conversation_status(caller)
    if lines is None:
        raise ApiError(404, "not_found", f"no conversation {conversation_id!r}")
    return ConversationStatus(conversation_id=conversation_id, lines=lines)


@app.post(
    "/webhooks/<source>",
    summary="Start a form session from a signed webhook",
    description="An external system starts a form session for a principal and conversation "
    "(body: form, principal, conversation_id, values, metadata). No JWT: the request carries "
    "X-Formwork-Timestamp, X-Formwork-Delivery and X-Formwork-Signature (HMAC-SHA256 with the "
    "source's secret). 201 with the instance; a re-delivery of the same body under the same "
    "delivery id is a 200 with the first outcome. See docs/webhooks.md.",
    responses={
        200: _json(WebhookOutcome, "Already handled: the first outcome, with replayed=true"),
        201: _json(WebhookOutcome, "Session started"),
        400: _json(
            ErrorBody,
            "A missing or malformed X-Formwork-Delivery (bad_delivery_id); a body that is not "
            "JSON (malformed_json) or holds a key twice (duplicate_key); an event that is not "
            "API Gateway's (bad_request)",
        ),
        401: _json(
            ErrorBody,
            "Unknown source, bad or missing signature, or a stale timestamp (no JWT authorizer "
            "on this route)",
        ),
        403: _json(
            ErrorBody,
            "The source's configured limits do not let it start this form, or act for this "
            "principal's tenant",
        ),
        409: _json(
            ErrorBody,
            "Delivery id used for another body, signed request replayed under another id, or "
            "the delivery is still being handled (Retry-After)",
        ),
        413: _json(ErrorBody, _DESCRIBED[413]),
        415: _json(ErrorBody, _DESCRIBED[415]),
        422: _json(
            ErrorBody,
            "The body is not a valid start request (invalid_payload), or names no registered "
            "form, or form_start refused it (its error code)",
        ),
        503: _json(ErrorBody, "The secret store could not be read (Retry-After)"),
    },
    tags=["webhooks"],
    security=[{"webhookSignature": []}],
)
def receive_webhook(
    source: Annotated[str, Path(description="The sending system, as configured")],
) -> Response[str]:
    status, body, headers = webhooks.receive(app.current_event.raw_event, source)
    return Response(
        status,
        "application/json",
        json.dumps(body, separators=(",", ":")),
        headers={**JSON_HEADERS, **headers},
    )


@app.post(
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
        200: _json(
            ApprovalAnswer,
            "Decision recorded (ok=true), with the form's status after it; or not recorded for "
            "a passing reason (ok=false, error busy): send the same request again",
        ),
        **_errors(
            400,
            401,
            404,
            409,
            413,
            415,
            422,
            s400=_DESCRIBED[400] + "; a malformed approval id (bad_request)",
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
    service = bootstrap.service()
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
    _notify_decided(service.dispatcher, approval)
    return result


_DECISION_REFUSALS = {"unknown_approval": 404, "bad_request": 400, "form_closed": 409}
"""The service's refusals that are HTTP statuses; any other ``ok: false`` is a 200 (data)."""


def _unknown_approval(approval_id: str) -> ApiError:
    """The service answers a caller who may not decide with ``unknown_approval``, the same as
    for an approval that does not exist. Should it ever say ``forbidden`` instead, the route
    still answers 404 with that same body, never a 403 that would tell the two apart."""
    return ApiError(404, "unknown_approval", f"no pending approval {approval_id!r}")


@runtime_checkable
class DecisionNotifier(Protocol):
    """A dispatcher that runs approval waits elsewhere (``TemporalDispatcher``): told, best
    effort, that a decision was recorded so the wait ends now rather than at its deadline."""

    def notify_decided(self, approval_id: str) -> bool: ...


def _notify_decided(dispatcher: object, approval_id: str) -> None:
    """Never fails the request: the decision is already stored; at worst the approval's
    workflow finds it decided when its timer fires."""
    if not isinstance(dispatcher, DecisionNotifier):
        return
    try:
        dispatcher.notify_decided(approval_id)
    except Exception:
        logger.warning("could not notify the approval's workflow", exc_info=True)


@app.get(
    "/openapi.json",
    summary="This OpenAPI document",
    description="The OpenAPI 3.1 document of the API, generated from the routes and models.",
    responses={
        200: _json(OpenApiDocument, "The document"),
        **_errors(400, 401, s400="An event that is not API Gateway's (bad_request)"),
    },
    tags=["documents"],
)
def openapi_document() -> Response[str]:
    return Response(200, "application/json", openapi_json(), headers=dict(JSON_HEADERS))


@cache
def openapi_json() -> str:
    """The OpenAPI 3.1 document, generated from the routes and models (built once)."""
    return app.get_openapi_json_schema(**OPENAPI)


# ---------------------------------------------------------------------------- errors


def _json_error(
    status: int, code: str, message: str, headers: Mapping[str, str] | None = None
) -> Response[Any]:
    return Response(
        status,
        "application/json",
        error_body(code, message),
        headers={**JSON_HEADERS, **(headers or {})},
    )


def _refusal(error: Exception) -> ApiError | None:
    """The 4xx an exception raised while routing stands for; ``None`` for a bug."""
    if isinstance(error, ApiError):
        return error
    if isinstance(error, Unauthenticated):
        return unauthorized(error.message)
    if isinstance(error, BadRequest):
        return ApiError(400, "bad_request", error.message)
    if isinstance(error, RequestUnsupportedContentType):
        return ApiError(415, "unsupported_media_type", "send the body as application/json")
    if isinstance(error, RequestValidationError):
        return _classify(list(error.errors()))
    if isinstance(error, NotFoundError):
        if _route_label(app.current_event.raw_event) != "unmatched":
            # a route's shape, with a path parameter no route pattern takes (a quote, a
            # backslash, a control character): a malformed id, not a missing route
            return ApiError(400, "bad_request", "malformed path: a path parameter is not an id")
        return ApiError(404, "route_not_found", "no such route; see GET /openapi.json")
    return None


def _answer_error(error: Exception) -> Response[Any]:
    """The one exception handler: a refusal as its JSON 4xx, anything else as a bare 500."""
    refusal = _refusal(error)
    if refusal is None:
        logger.exception("unhandled error in a route")
        return _json_error(500, "internal_error", "the request failed on our side")
    _log_rejection(refusal.status, refusal.code)
    return _json_error(refusal.status, refusal.code, refusal.message, refusal.headers)


for _kind in (
    ApiError,
    Unauthenticated,
    BadRequest,
    RequestUnsupportedContentType,
    RequestValidationError,
    NotFoundError,
    Exception,
):
    app.exception_handler(_kind)(_answer_error)


def _classify(errors: list[Any]) -> ApiError:
    """Map Powertools' validation errors to one refusal: path ids, then tool, query, body."""
    where: dict[str, list[Any]] = {}
    for error in errors:
        loc = tuple(error.get("loc") or ("body",))
        where.setdefault(str(loc[0]), []).append(error)
    path = {str(e["loc"][-1]) for e in where.get("path", []) if e.get("loc")}
    if "conversation_id" in path:
        return ApiError(
            400,
            "bad_request",
            "conversation id must be 1-128 characters of letters, digits and . _ : @ -",
        )
    if "tool_name" in path:
        return _unknown_tool()
    if where.get("query"):
        return ApiError(400, "bad_request", "format must be one of: " + ", ".join(FORMATS))
    if path:
        return ApiError(400, "bad_request", "malformed path")
    body = where.get("body", []) + [
        e for k, v in where.items() if k not in ("body", "path", "query") for e in v
    ]
    if any(e.get("type") == "json_invalid" for e in body):
        return ApiError(400, "malformed_json", "the request body is not valid JSON")
    problems = [_describe(e) for e in body[:5]]
    return ApiError(422, "invalid_request", "; ".join(problems) or "the request body is invalid")


def _describe(error: Mapping[str, Any]) -> str:
    loc = [str(part) for part in error.get("loc", ()) if part != "body"]
    where = ".".join(loc[:4]) or "body"
    return f"{where}: {str(error.get('msg', 'invalid'))[:120]}"


def _unknown_tool() -> ApiError:
    known = ", ".join(TOOLS_BY_NAME)
    return ApiError(404, "unknown_tool", f"there is no such tool; the tools are: {known}")


# ---------------------------------------------------------------------------- plumbing


def _caller(conversation_id: str) -> Caller:
    settings = bootstrap.settings()
    principal = principal_from_event(app.current_event.raw_event, settings.tenant_claim)
    return Caller(principal=principal, conversation_id=check_id(conversation_id, "conversation id"))


MAX_ROLES = 64
_ROLE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/+=-]{0,127}")


def roles_from_claims(claims: Mapping[str, Any], claim: str) -> frozenset[str]:
    """The roles the token's ``claim`` lists, each entry taken whole, as the issuer sent it.

    The claim holds either a list of roles or one string of roles separated by whitespace:

    * a JSON array (or a JSON array as text, ``'["finance", "admins"]'``): each string in it is
      one role;
    * a string: roles separated by whitespace (the OAuth ``scope`` convention). API Gateway's
      JWT authorizer hands an array claim to the function in this shape, in brackets,
      ``"[finance admins]"``; the brackets are not part of the roles.

    Nothing is split on commas, and an entry of a list is never split: a group named
    ``sales,finance`` is one entry (malformed, so ignored), never ``finance``. Entries that are
    not 1-128 of letters, digits and ``. _ : @ / + = -`` are ignored (they could never match a
    role a definition names); at most ``MAX_ROLES`` count; no claim, no roles.
    """
    value = claims.get(claim)
    entries = _role_entries(value) if isinstance(value, str) else value
    if not isinstance(entries, list | tuple):
        return frozenset()
    roles = [entry for entry in entries if isinstance(entry, str) and _ROLE.fullmatch(entry)]
    return frozenset(roles[:MAX_ROLES])


def _role_entries(text: str) -> list[Any]:
    """The entries of a roles claim that arrived as one string."""
    stripped = text.strip()
    if stripped.startswith("[") and stripped.endswith("]"):
        try:
            loaded = json.loads(stripped)
        except ValueError:
            loaded = None
        if isinstance(loaded, list) and all(isinstance(entry, str) for entry in loaded):
            return loaded  # a JSON array as text
        stripped = stripped[1:-1]  # API Gateway's "[a b]"
    return stripped.split()


def _approver() -> Approver:
    settings = bootstrap.settings()
    event = app.current_event.raw_event
    principal = principal_from_event(event, settings.tenant_claim)
    return Approver(principal, roles_from_claims(_claims(event), settings.roles_claim))


def _count_tool_call(tool: str, outcome: str) -> None:
    with single_metric(
        name="ToolCalls",
        unit=MetricUnit.Count,
        value=1,
        namespace=NAMESPACE,
        default_dimensions=metrics.default_dimensions,
    ) as metric:
        metric.add_dimension(name="tool", value=tool)
        metric.add_dimension(name="outcome", value=outcome)


def _log_rejection(status: int, code: str) -> None:
    logger.info("request refused", extra={"status": status, "error": code})


_ROUTES = (
    ("GET", re.compile(r"/tools"), "list_tools"),
    ("POST", re.compile(r"/conversations/[^/]+/tools/[^/]+"), "call_tool"),
    ("GET", re.compile(r"/conversations/[^/]+/status"), "status"),
    ("GET", re.compile(r"/openapi\.json"), "openapi"),
    ("GET", re.compile(r"/swagger"), "swagger"),
    ("POST", re.compile(r"/webhooks/[^/]+"), "webhook"),
    ("POST", re.compile(r"/approvals/[^/]+"), "approval"),
)


def _route_label(event: Mapping[str, Any]) -> str:
    """A bounded label for the request's route (a metric dimension, never raw input)."""
    context = event.get("requestContext")
    http = context.get("http") if isinstance(context, Mapping) else None
    method = http.get("method") if isinstance(http, Mapping) else None
    path = event.get("rawPath")
    if isinstance(method, str) and isinstance(path, str):
        for route_method, pattern, label in _ROUTES:
            if method.upper() == route_method and pattern.fullmatch(path):
                return label
    return "unmatched"


# ---------------------------------------------------------------------------- entry point


@logger.inject_lambda_context(
    correlation_id_path=correlation_paths.API_GATEWAY_HTTP, log_event=False, clear_state=True
)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """The Lambda entry point: API Gateway HTTP API (payload v2) event in, response out."""
    route = _route_label(event) if isinstance(event, Mapping) else "unmatched"
    logger.append_keys(route=route)
    try:
        if not isinstance(event, Mapping):
            raise ApiError(400, "bad_request", "not an API Gateway HTTP API event")
        settings = bootstrap.settings()
        checked = (
            webhooks.precheck(event, settings)
            if webhooks.is_webhook(event)
            else precheck(event, settings)
        )
        response = app.resolve(checked, context)
    except ApiError as error:
        _log_rejection(error.status, error.code)
        response = error_response(error)
    except Exception:
        logger.exception("unhandled error outside the routes")
        response = error_response(ApiError(500, "internal_error", "the request failed on our side"))
    status = response.get("statusCode", 500)
    metrics.add_dimension(name="route", value=route)
    metrics.add_metric(name=f"Status{int(status) // 100}xx", unit=MetricUnit.Count, value=1)
    return response
