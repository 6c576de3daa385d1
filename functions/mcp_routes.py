"""The MCP routes: the form tools and the builder tools over MCP's streamable HTTP transport,
stateless.

* ``POST /conversations/{conversation_id}/mcp``: one JSON-RPC message, answered by the
  official ``mcp`` SDK's server (``formwork.mcp``) with the form tools, for the verified
  principal in the conversation of the path;
* ``POST /builder/forms/{form_id}/mcp``: the same with the builder tools
  (``formwork.mcp.builder``), on the verified principal's tenant's draft of the form of the
  path, as ``POST /builder/forms/{form_id}/tools/{tool_name}`` runs them (another tenant's
  draft is a missing one);
* ``GET`` and ``DELETE`` on either path: 405, as the transport says a server that offers no
  stream and no session answers them.

Every answer is JSON (no SSE, no ``Mcp-Session-Id``). The principal comes from the verified
claims exactly as for the tool routes and the builder routes (``formwork.aws.auth``), never from
the MCP payload; the conversation or the form from the path, checked as their own routes
check it. Everything a route checks before routing applies first (``formwork.aws.http.precheck``:
a token, a JSON body within the size limit). The routes are left out of the OpenAPI document:
their contract is the MCP specification, not a request and response schema of this API
(``docs/http-api.md``).

Nothing of MCP is imported with this module: the SDK (a third of a second to import) and
``formwork.mcp`` load with the first MCP request, so a cold start that serves the other routes
never pays for them. A deployment built without the SDK answers 501 ``mcp_unavailable``.
"""

import json
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from forms.surface.tools import TOOLS_BY_NAME
from formwork.aws.auth import principal_from_event
from formwork.aws.form_ids import FormId
from formwork.aws.http import JSON_HEADERS, ApiError, log_hash
from formwork.aws.openapi import ConversationId
from formwork.aws.routing import conversation_caller, count_call, logger, request_app

if TYPE_CHECKING:
    from formwork.mcp.backends import McpBackend

router = Router()  # type: ignore[no-untyped-call]

MCP_PATH = "/conversations/<conversation_id>/mcp"
BUILDER_MCP_PATH = "/builder/forms/<form_id>/mcp"
SDK_MODULES = ("mcp", "mcp_types", "starlette", "anyio", "sse_starlette")
"""What the routes need beyond the functions' run-time packages (``pip install
'formwork[mcp]'``)."""


@router.post(MCP_PATH, include_in_schema=False)
def mcp_message(conversation_id: ConversationId) -> Response[str]:
    caller = conversation_caller(router, conversation_id)
    conversation = log_hash(caller.conversation_id)  # before the call: a bad key fails first
    logged = {"conversation_hash": conversation}

    def backend() -> "McpBackend":
        from formwork.mcp.backends import FormServiceBackend

        service = request_app(router.context).service
        return FormServiceBackend(service, caller, _observer("ToolCalls", TOOLS_BY_NAME, logged))

    return _serve(backend, logged)


@router.get(MCP_PATH, include_in_schema=False)
def mcp_stream(conversation_id: ConversationId) -> Response[str]:
    """No server-sent event stream: the server is stateless and sends nothing unasked."""
    conversation_caller(router, conversation_id)
    return _no_stream()


@router.delete(MCP_PATH, include_in_schema=False)
def mcp_session_end(conversation_id: ConversationId) -> Response[str]:
    """No session to end: the server is stateless."""
    conversation_caller(router, conversation_id)
    return _no_session()


@router.post(BUILDER_MCP_PATH, include_in_schema=False)
def builder_mcp_message(form_id: FormId) -> Response[str]:
    principal = _builder_principal()
    form = log_hash(form_id)  # before the call: a bad key fails first
    logged = {"form_hash": form}

    def backend() -> "McpBackend":
        from forms.app.builder import BUILDER_ARGUMENTS
        from formwork.mcp.builder import BuilderBackend

        builder = request_app(router.context).builder
        observe = _observer("BuilderCalls", BUILDER_ARGUMENTS, logged)
        return BuilderBackend(builder, principal, form_id, observe)

    return _serve(backend, logged)


@router.get(BUILDER_MCP_PATH, include_in_schema=False)
def builder_mcp_stream(form_id: FormId) -> Response[str]:
    """No server-sent event stream, as on the conversation's endpoint."""
    _builder_principal()
    return _no_stream()


@router.delete(BUILDER_MCP_PATH, include_in_schema=False)
def builder_mcp_session_end(form_id: FormId) -> Response[str]:
    """No session to end, as on the conversation's endpoint."""
    _builder_principal()
    return _no_session()


# ---------------------------------------------------------------------------- inside


def _observer(
    metric: str, known: Collection[str], logged: Mapping[str, str]
) -> Callable[[str, dict[str, Any]], None]:
    """Counts and logs each tool call served over MCP as its HTTP route does (``metric``,
    with the tool and the outcome), a name outside ``known`` counted as ``unknown`` (a
    metric dimension is never raw input)."""

    def observe(tool: str, result: dict[str, Any]) -> None:
        name = tool if tool in known else "unknown"
        outcome = count_call(metric, name, result)
        logger.info("mcp tool call", extra={"tool": name, "outcome": outcome, **logged})

    return observe


def _builder_principal() -> str:
    """The verified principal, as the builder routes take it (its tenant owns the drafts)."""
    settings = request_app(router.context).settings
    return principal_from_event(router.current_event.raw_event, settings.tenant_claim)


def _serve(backend: Callable[[], "McpBackend"], logged: dict[str, str]) -> Response[str]:
    """The MCP server of ``backend()``'s answer to this request: the SDK imported now (501
    without it), the server built over the backend, the request served in process."""
    event = router.current_event
    body = (event.body or "").encode("utf-8")
    try:
        from formwork.mcp.http import serve_request
        from formwork.mcp.server import build_server
    except ModuleNotFoundError as missing:
        if (missing.name or "").split(".")[0] not in SDK_MODULES:
            raise
        raise ApiError(
            501,
            "mcp_unavailable",
            "this deployment was built without the MCP SDK (pip install 'formwork[mcp]')",
        ) from None
    answer = serve_request(build_server(backend()), "POST", dict(event.headers), body)
    logger.info("mcp request", extra={"status": answer.status, **logged})
    content_type = answer.headers.pop("content-type", None)
    return Response(answer.status, content_type, answer.text, headers=answer.headers)


def _no_stream() -> Response[str]:
    return _not_allowed("the MCP endpoint is stateless: it opens no event stream")


def _no_session() -> Response[str]:
    return _not_allowed("the MCP endpoint is stateless: there is no session to end")


def _not_allowed(message: str) -> Response[str]:
    body: dict[str, Any] = {"error": "method_not_allowed", "message": message + "; send POST"}
    return Response(
        405,
        "application/json",
        json.dumps(body, separators=(",", ":")),
        headers={**JSON_HEADERS, "Allow": "POST"},
    )
