"""The form tools as an Amazon Bedrock Agents action group: one Lambda function and the
OpenAPI schema it answers to (``docs/clients.md#bedrock-agents``).

Bedrock invokes the function for one action of an agent session: an "API schema" event
(``messageVersion`` 1.0) naming the operation (``apiPath``, one per tool: ``/form_start``,
``/form_fill``, ...) and carrying the model's arguments as ``requestBody`` properties, each a
``{"name", "type", "value"}`` whose value is a **string**. The function answers with Bedrock's
response shape, the tool's result as ``application/json``.

What one invocation does, in order:

1. **The event.** Anything that is not a Bedrock Agent API-schema event is refused (400).
2. **Who is calling.** The principal comes from the session attributes the chatbot backend
   sets when it calls ``InvokeAgent`` (``sessionState.sessionAttributes``), never from the
   model's arguments: ``formwork_principal`` (the user's ``sub``) and, when the deployment
   names a tenant claim (``TENANT_CLAIM``), ``formwork_tenant``, which is then required; they
   are checked exactly like a verified token's claims (``formwork.aws.auth``) and make the same
   principal (``tenant/sub``), so a user sees the same forms here and over HTTP. Without a
   usable principal (either attribute missing, empty or malformed): 401. The
   conversation is ``formwork_conversation`` when set, else the agent's ``sessionId``.
3. **Routing and arguments.** A name that comes twice among the parameters and the body's
   properties is refused (400 ``duplicate_key``), as the HTTP API refuses a key sent twice,
   rather than letting the last one win. Powertools' ``BedrockAgentResolver`` routes on
   ``apiPath`` and checks the properties against the tool's arguments model
   (``bedrock_schema.arguments_model``).
   Bedrock hands every value over as text, so an argument that is an object, an array or any
   JSON value (``values``, ``decline``, ``form_revise``'s ``value``) is a string property
   holding JSON text, parsed strictly (``bedrock_schema.decode_arguments``); everything else
   goes to the service as the model sent it, and the service judges it as it judges an HTTP
   call.
4. **The tool-call id** is derived from what Bedrock sends (``tool_call_id``): the agent, the
   session, the turn (``formwork_turn`` when the backend sets it, else the user's
   ``inputText``), the operation and the arguments as sent. A retry of the same invocation
   gets the same id, so it replays the first result instead of writing twice.
5. **The call.** ``FormService.call`` of the process's App (``formwork.process``), whose
   result is the answer: 200, ``ok`` true or false, exactly as the HTTP API's tool route
   returns it.

Every failure is data in Bedrock's response shape, never an exception out of the handler: a
tool's refusal is a 200 whose body says ``ok: false``; arguments Bedrock could not carry
(JSON text that does not parse) are a 200 ``bad_request``; no principal is a 401, an unknown
operation a 404 ``unknown_tool``, an event of another shape a 400 ``bad_request``, a name
sent twice among the parameters and properties a 400 ``duplicate_key``, a bug a 500
``internal_error``, each with a body ``{"ok": false, "error", "message", "hint"}``.

The action group's contract lives in ``formwork.aws.bedrock_schema``: the operations (registered
here with ``register_operations``), how each argument travels (JSON text in a string, or a
scalar), and the OpenAPI schema generated from the same operations
(``python -m formwork.aws.bedrock_schema`` prints it). This module is the invocation's code only.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from aws_lambda_powertools.event_handler import BedrockAgentResolver, Response
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.metrics import MetricUnit
from pydantic import BaseModel

from forms.app.checked import check_call
from forms.app.conversation import Caller
from forms.errors import BadRequest
from forms.surface.tools import TOOLS, ToolSpec
from formwork import process
from formwork.aws import after_response
from formwork.aws.auth import Unauthenticated, context_from_event, principal_from_event
from formwork.aws.bedrock_schema import decode_arguments, register_operations
from formwork.aws.http import log_hash
from formwork.aws.routing import APP_KEY, logger, metrics, request_app, tracer
from formwork.bootstrap import App
from formwork.config import Settings

if TYPE_CHECKING:  # an annotation only: Powertools' typing package is not imported to run
    from aws_lambda_powertools.utilities.typing import LambdaContext

PRINCIPAL_ATTRIBUTE: Final = "formwork_principal"
"""Session attribute: the user's ``sub``, as the backend's verified token has it."""
TENANT_ATTRIBUTE: Final = "formwork_tenant"
"""Session attribute: the user's tenant (read when the deployment names a tenant claim)."""
CONVERSATION_ATTRIBUTE: Final = "formwork_conversation"
"""Session attribute, optional: the conversation id (default: the agent's ``sessionId``)."""
CONTEXT_ATTRIBUTE_PREFIX: Final = "formwork_"
"""Session attributes, optional: ``formwork_<claim>`` carries a context claim of the user's
verified token (``formwork_locale``, ``formwork_zoneinfo``, ``formwork_currency`` under the
default ``FORMWORK_CONTEXT_CLAIMS``), read as the API reads that claim (``docs/memory.md``)."""
TURN_ATTRIBUTE: Final = "formwork_turn"
"""Session attribute, optional: an id of the ``InvokeAgent`` request, the same when the backend
sends that request again (default: the user's ``inputText``)."""

CALLER_KEY: Final = "caller"
"""The key of the invocation's ``Caller`` in the resolver's context."""
TOOL_CALL_PREFIX: Final = "bedrock-"
_TOOL_NAMES: Final = frozenset(spec.name for spec in TOOLS)
INTERNAL_ERROR: Final = {
    "ok": False,
    "error": "internal_error",
    "message": "the call failed on our side",
    "hint": "read the form to see what was saved, then retry once; if it fails again, tell "
    "the user",
}

resolver = BedrockAgentResolver(enable_validation=True, debug=False)


class ActionRefused(Exception):
    """An invocation answered without calling a tool: its status and body."""

    def __init__(self, status: int, code: str, message: str, hint: str) -> None:
        super().__init__(message)
        self.status = status
        self.body = {"ok": False, "error": code, "message": message, "hint": hint}


# ---------------------------------------------------------------------------- who, and the id


def caller_of(event: Mapping[str, Any], settings: Settings) -> Caller:
    """The principal from the session attributes (checked as a token's claims would be) and
    the conversation; ``ActionRefused`` (401) without a usable principal."""
    attributes = event.get("sessionAttributes") or {}
    if not isinstance(attributes, Mapping):
        attributes = {}
    tenant = (TENANT_ATTRIBUTE,) if settings.tenant_claim is not None else ()
    needed = (PRINCIPAL_ATTRIBUTE, *tenant)
    for name in needed:
        if attributes.get(name) in (None, ""):
            raise _unauthorized(f"the agent session carries no {name} session attribute")
    claims = {"sub": attributes[PRINCIPAL_ATTRIBUTE]}
    if settings.tenant_claim is not None:
        claims[settings.tenant_claim] = attributes[TENANT_ATTRIBUTE]
    for _, claim in settings.context_claims:  # formwork_locale: the backend's verified locale
        if CONTEXT_ATTRIBUTE_PREFIX + claim in attributes:
            claims.setdefault(claim, attributes[CONTEXT_ATTRIBUTE_PREFIX + claim])
    verified = {"requestContext": {"authorizer": {"jwt": {"claims": claims}}}}
    try:
        principal = principal_from_event(verified, settings.tenant_claim)
    except Unauthenticated:
        shown = " or ".join(needed)
        raise _unauthorized(f"the session attribute {shown} is malformed") from None
    conversation = attributes.get(CONVERSATION_ATTRIBUTE) or event["sessionId"]
    context = context_from_event(verified, settings.context_claims)
    return Caller(principal=principal, conversation_id=str(conversation), context=context)


def _unauthorized(message: str) -> ActionRefused:
    return ActionRefused(
        401,
        "unauthorized",
        message,
        "tell the user the forms are not available in this chat right now",
    )


def tool_call_id(event: Mapping[str, Any]) -> str:
    """The id the call is recorded under, derived from what Bedrock sends, so that the same
    invocation sent again is the same call (a replay): a hash of the agent, the session, the
    turn (``formwork_turn``, else the user's input), the operation and the arguments as
    sent. Two identical calls in one turn are therefore one call (``docs/clients.md``)."""
    attributes = event.get("sessionAttributes") or {}
    agent = event.get("agent") or {}
    body = (event.get("requestBody") or {}).get("content") or {}
    sent = sorted(
        [str(p.get("name")), str(p.get("value"))]
        for media in body.values()
        for p in (media or {}).get("properties") or ()
    )
    parameters = sorted(
        [str(p.get("name")), str(p.get("value"))] for p in event.get("parameters") or ()
    )
    material = [
        str(agent.get("id", "")) if isinstance(agent, Mapping) else "",
        event.get("sessionId"),
        attributes.get(TURN_ATTRIBUTE) or event.get("inputText") or "",
        event.get("actionGroup"),
        event.get("httpMethod"),
        event.get("apiPath"),
        parameters,
        sent,
    ]
    text = json.dumps(material, separators=(",", ":"), ensure_ascii=False, default=str)
    return TOOL_CALL_PREFIX + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:40]


# ---------------------------------------------------------------------------- routes


def _answer(status: int, body: Mapping[str, Any]) -> Response[str]:
    return Response(status, "application/json", json.dumps(body, separators=(",", ":")))


def _run(spec: ToolSpec, arguments: BaseModel | None) -> Response[str]:
    """One tool call: the arguments decoded, then the service; its result is the answer."""
    context = resolver.context
    caller: Caller = context[CALLER_KEY]
    event = resolver.current_event.raw_event
    conversation = log_hash(caller.conversation_id)
    try:
        payload = decode_arguments(spec, arguments)
        checked = check_call(caller, spec.name, tool_call_id(event))  # once, for the service
    except BadRequest as exc:
        from forms.surface.results import error_result  # the engine's: with the service

        result = error_result(exc)
    else:
        result = request_app(context).service.call_checked(checked, payload)
    logger.info(
        "tool call",
        extra={"tool": spec.name, "outcome": _outcome(result), "conversation_hash": conversation},
    )
    return _answer(200, result)


register_operations(resolver, _run)


def _invalid_arguments(error: RequestValidationError) -> Response[str]:
    """Arguments that are not what the tool takes (a required one missing, a boolean that is
    not one): the ``bad_request`` the service answers for them, in its words."""
    problems = []
    for found in list(error.errors())[:3]:
        loc = [str(p) for p in found.get("loc", ())]
        loc = loc[1:] if loc[:1] == ["body"] else loc
        where = ".".join(loc[:4]) + (".…" if len(loc) > 4 else "") or "input"
        problems.append(f"{where}: {str(found.get('msg', 'invalid'))[:200]}")
    bad = BadRequest("bad input: " + "; ".join(problems), "check the tool's input schema")
    from forms.surface.results import error_result  # the engine's: with the service

    return _answer(200, error_result(bad))


def _unknown_operation(_: NotFoundError) -> Response[str]:
    known = ", ".join(f"/{spec.name}" for spec in TOOLS)
    refused = ActionRefused(
        404,
        "unknown_tool",
        "this action group has no such operation",
        f"the operations are: {known}; update the agent's action group schema",
    )
    return _answer(refused.status, refused.body)


def _failed(_: Exception) -> Response[str]:
    logger.exception("unhandled error in a Bedrock action")
    return _answer(500, INTERNAL_ERROR)


resolver.exception_handler(RequestValidationError)(_invalid_arguments)
resolver.exception_handler(NotFoundError)(_unknown_operation)
resolver.exception_handler(Exception)(_failed)


# ---------------------------------------------------------------------------- entry point


def is_agent_event(event: Any) -> bool:
    """Whether ``event`` is a Bedrock Agent action event of an API-schema action group."""
    return (
        isinstance(event, Mapping)
        and event.get("messageVersion") == "1.0"
        and all(
            isinstance(event.get(key), str) and event[key]
            for key in ("sessionId", "actionGroup", "apiPath", "httpMethod")
        )
        and isinstance(event.get("sessionAttributes") or {}, Mapping)
        and _named_values(event.get("parameters") or [])
        and _well_formed_body(event.get("requestBody"))
    )


def _named_values(items: Any) -> bool:
    """Bedrock's parameters or body properties: name/type/value entries, name and value strings."""
    return isinstance(items, list) and all(
        isinstance(item, Mapping)
        and isinstance(item.get("name"), str)
        and isinstance(item.get("value"), str)
        for item in items
    )


def _well_formed_body(body: Any) -> bool:
    """No body, or ``{"content": {media type: {"properties": [...]}}}``."""
    if not body:
        return True
    content = body.get("content") if isinstance(body, Mapping) else None
    return isinstance(content, Mapping) and all(
        isinstance(media, Mapping) and _named_values(media.get("properties") or [])
        for media in content.values()
    )


def _check_names_once(event: Mapping[str, Any]) -> None:
    """``ActionRefused`` (400 ``duplicate_key``) when a name comes twice among the parameters and
    the body's properties, as the HTTP API refuses a key sent twice: which of the two values
    counts would otherwise be the resolver's choice (the last), not the caller's."""
    body = (event.get("requestBody") or {}).get("content") or {}
    named = [*(event.get("parameters") or ())]
    named += [p for media in body.values() for p in (media.get("properties") or ())]
    seen: set[str] = set()
    for item in named:
        name = item["name"]
        if name in seen:
            raise ActionRefused(
                400,
                "duplicate_key",
                f"the action's arguments name {name[:60]!r} twice; send each argument once",
                "call the operation again with each argument once",
            )
        seen.add(name)


def bedrock_response(event: Any, status: int, body: Mapping[str, Any]) -> dict[str, Any]:
    """Bedrock's response shape for an answer given without the resolver."""
    fields = event if isinstance(event, Mapping) else {}
    return {
        "messageVersion": "1.0",
        "response": {
            "actionGroup": str(fields.get("actionGroup") or ""),
            "apiPath": str(fields.get("apiPath") or ""),
            "httpMethod": str(fields.get("httpMethod") or ""),
            "httpStatusCode": status,
            "responseBody": {"application/json": {"body": json.dumps(body, separators=(",", ":"))}},
        },
    }


def _with_body(event: Mapping[str, Any]) -> dict[str, Any]:
    """The event with an empty JSON body when the model sent no arguments at all, so that a
    missing required one is reported by name, as the service reports it."""
    routed = dict(event)
    if not routed.get("requestBody"):
        routed["requestBody"] = {"content": {"application/json": {"properties": []}}}
    return routed


AFTER_RESPONSE = after_response.install("formwork.aws.bedrock_agent.lambda_handler")
"""The after-response extension, registered as the Lambda function initialises (else None)."""


@logger.inject_lambda_context(log_event=False, clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def lambda_handler(
    event: dict[str, Any], context: LambdaContext, *, app: App | None = None
) -> dict[str, Any]:
    """The Lambda entry point: a Bedrock Agent action event in, Bedrock's response out.

    It serves with this process's App (``formwork.process.app()``); tests pass ``app=``. On
    Lambda, the work it leaves behind its answer ends before the environment is frozen
    (``formwork.aws.after_response``)."""
    try:
        return _serve(event, context, app)
    finally:
        after_response.answered(AFTER_RESPONSE, context)


def _serve(event: dict[str, Any], context: LambdaContext, app: App | None) -> dict[str, Any]:
    operation = str(event.get("apiPath") or "") if isinstance(event, Mapping) else ""
    tool = operation.lstrip("/") if operation.lstrip("/") in _TOOL_NAMES else "unknown"
    logger.append_keys(tool=tool, channel="bedrock")
    try:
        if not is_agent_event(event):
            raise ActionRefused(
                400,
                "bad_request",
                "not an Amazon Bedrock Agent action event of an API-schema action group",
                "invoke this function from a Bedrock agent's action group",
            )
        served = app if app is not None else process.app()
        caller = caller_of(event, served.settings)
        _check_names_once(event)
        resolver.append_context(**{APP_KEY: served, CALLER_KEY: caller})  # type: ignore[no-untyped-call]
        response = resolver.resolve(_with_body(event), context)
    except ActionRefused as refused:
        logger.info("action refused", extra={"status": refused.status})
        response = bedrock_response(event, refused.status, refused.body)
    except Exception:
        logger.exception("unhandled error outside the routes")
        response = bedrock_response(event, 500, INTERNAL_ERROR)
    finally:
        resolver.clear_context()  # type: ignore[no-untyped-call]
    metrics.add_dimension(name="tool", value=tool)
    metrics.add_dimension(name="outcome", value=_outcome(answered(response)))
    metrics.add_metric(name="BedrockActions", unit=MetricUnit.Count, value=1)
    return response


def answered(response: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON body of a response in Bedrock's shape."""
    body = response["response"]["responseBody"]["application/json"]["body"]
    decoded: dict[str, Any] = json.loads(body)
    return decoded


def _outcome(result: Mapping[str, Any]) -> str:
    return "ok" if result.get("ok") else str(result.get("error", "error"))
