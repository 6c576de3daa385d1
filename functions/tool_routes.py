"""The tool routes: the tool definitions, a tool call, a conversation's status lines.

``GET /tools`` in a vendor's shape needs nothing but the tool surface (no App part is built for
it: a cold start that serves it never imports boto3). In a strict format it is typed for the
forms the caller can use (``forms.surface.strict``, loaded with the first request in a strict
format), so it reads them from the service. A tool
call and the status lines are the caller's: the principal comes from the verified claims only
(``formwork.aws.auth``, read once before routing), and the conversation id and the tool name are
checked by the route's parameter types (``ConversationId``, ``ToolName``: a malformed id is a
400, an unknown tool a 404) before anything is read.
"""

from typing import TYPE_CHECKING, Annotated, Any

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query

from forms.app.checked import typed_call
from forms.errors import UnknownForm
from forms.surface.formats import (
    FORMATS,
    STRICT_FORMATS,
    TOOL_FORMATS,
    ToolFormat,
    tool_definitions,
)
from formwork.aws.http import ApiError, log_hash
from formwork.aws.models import (
    ConversationStatus,
    ToolCallRequest,
    ToolList,
    ToolResult,
)
from formwork.aws.openapi import DESCRIBED, ConversationId, ToolName, error_responses, json_body
from formwork.aws.routing import (
    conversation_caller,
    count_call,
    logger,
    request_app,
    request_verified,
)

if TYPE_CHECKING:
    from forms.compiled import CompiledForm

router = Router()  # type: ignore[no-untyped-call]


MAX_FORMS = 20
"""The most forms one strict export is typed for (``forms=``)."""


@router.get(
    "/tools",
    summary="The tool definitions",
    description="Name, description and input JSON schema of every tool; with format, in that "
    "vendor's tool-definition shape. The strict formats (openai-strict, "
    "openai-responses-strict) are OpenAI's strict mode, typed for forms: values is an object of "
    "their field ids, each typed as its field (a null answer: not given; send tool calls with the "
    "same format).",
    responses={
        200: json_body(ToolList, "The tools, in surface order, in the requested shape"),
        **error_responses(
            400,
            401,
            s400="format is not one of the shapes; forms without a strict format, or naming a "
            "form the caller cannot start or that strict mode cannot type; or an event that is "
            "not API Gateway's (bad_request)",
        ),
    },
    tags=["tools"],
)
def list_tools(
    format: Annotated[  # the public query parameter's name
        ToolFormat, Query(description="Tool-definition shape: " + ", ".join(TOOL_FORMATS))
    ] = "generic",
    forms: Annotated[
        str | None,
        Query(
            description="With a strict format: the ids of the forms to type the tools for, "
            f"comma-separated (at most {MAX_FORMS}); default: every form the caller can start",
        ),
    ] = None,
) -> ToolList:
    if format in STRICT_FORMATS:
        from forms.surface.strict import NotStrict, strict_definitions

        typed_for = _forms_for_strict(forms)
        try:
            return ToolList(tools=strict_definitions(format, typed_for))
        except NotStrict as error:
            raise ApiError(400, "bad_request", f"strict mode cannot type {error}") from None
    if format in FORMATS and forms is None:
        return ToolList(tools=tool_definitions(format))
    raise ApiError(
        400, "bad_request", "forms goes with a strict format: " + ", ".join(STRICT_FORMATS)
    )


def _forms_for_strict(forms: str | None) -> "list[CompiledForm]":
    """The forms ``forms`` names (ids or spellings, in its order, each once), or every form the
    caller can start; the caller's own catalog either way."""
    principal = request_verified(router).principal
    registry = request_app(router.context).service.registry
    if forms is None:
        return registry.forms(principal)
    names = [name.strip() for name in forms.split(",")]
    if not all(names) or len(names) > MAX_FORMS:
        raise ApiError(
            400, "bad_request", f"forms is 1-{MAX_FORMS} form ids, comma-separated, none empty"
        )
    found: dict[str, CompiledForm] = {}
    for name in names:
        try:
            form = registry.latest(name[:128], principal)
        except UnknownForm as unknown:
            said = "; ".join(filter(None, (unknown.message, unknown.hint)))
            raise ApiError(400, "bad_request", said) from None
        found.setdefault(form.id, form)
    return list(found.values())


@router.post(
    "/conversations/<conversation_id>/tools/<tool_name>",
    summary="Run one tool call",
    description="Runs the tool for the caller's conversation and returns its result. A "
    "tool-level failure (a bad value, an unknown field) is a 200 with ok=false and a hint, for "
    "the model to read. A replayed tool_call_id returns the first result.",
    responses={
        200: json_body(
            ToolResult,
            "The tool's result, also when the tool refused (ok=false with error, message, hint)",
        ),
        **error_responses(
            400,
            401,
            404,
            413,
            415,
            422,
            s400=DESCRIBED[400] + "; a malformed conversation id (bad_request)",
            s404="No such tool (unknown_tool; the message lists the tools)",
        ),
    },
    tags=["tools"],
)
def call_tool(
    conversation_id: ConversationId,
    tool_name: Annotated[ToolName, Path(description="A tool name from GET /tools")],
    request: Annotated[ToolCallRequest, Body()],
    format: Annotated[  # the public query parameter's name
        ToolFormat,
        Query(
            description="The format the model was given the tools in (GET /tools): with a "
            "strict one, a null answer in values is one not given",
        ),
    ] = "generic",
) -> dict[str, Any]:
    caller = conversation_caller(router, conversation_id)
    conversation = log_hash(caller.conversation_id)  # before the call: a bad key fails first
    arguments = request.input or {}
    if format in STRICT_FORMATS:
        from forms.surface.strict import strict_arguments

        arguments = strict_arguments(arguments)
    checked = typed_call(caller, tool_name, request.tool_call_id)  # checked by their types
    result = request_app(router.context).service.call_checked(checked, arguments)
    outcome = count_call("ToolCalls", tool_name, result)
    logger.info(
        "tool call",
        extra={"tool": tool_name, "outcome": outcome, "conversation_hash": conversation},
    )
    return result


@router.get(
    "/conversations/<conversation_id>/status",
    summary="The conversation's status lines",
    description="Tier-0 status lines of the caller's open forms in this conversation, for the "
    "system prompt. 404 when the caller has no forms in it (another principal's conversation "
    "looks exactly like one that does not exist).",
    responses={
        200: json_body(
            ConversationStatus, "The status lines (empty when every form there is closed)"
        ),
        **error_responses(
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
    caller = conversation_caller(router, conversation_id)
    service = request_app(router.context).service
    lines = service.conversation_status(caller)
    if lines is None:
        raise ApiError(404, "not_found", f"no conversation {conversation_id!r}")
    return ConversationStatus(conversation_id=conversation_id, lines=lines)
