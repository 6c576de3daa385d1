"""The MCP route: the form tools over MCP's streamable HTTP transport, stateless.

* ``POST /conversations/{conversation_id}/mcp``: one JSON-RPC message, answered by the
  official ``mcp`` SDK's server (``formwork.mcp``) for the verified principal in the
  conversation of the path, with a JSON response (no SSE, no ``Mcp-Session-Id``).
* ``GET`` and ``DELETE`` on the same path: 405, as the transport says a server that offers
  no stream and no session answers them.

The principal comes from the verified claims exactly as for the tool routes
(``functions.auth``), never from the MCP payload; the conversation from the path. Everything
a route checks before routing applies first (``functions.http.precheck``: a token, a JSON
body within the size limit). The route is left out of the OpenAPI document: its contract is
the MCP specification, not a request and response schema of this API (``docs/http-api.md``).

Nothing of MCP is imported with this module: the SDK (a third of a second to import) and
``formwork.mcp`` load with the first MCP request, so a cold start that serves the other routes
never pays for them. A deployment built without the SDK answers 501 ``mcp_unavailable``.
"""

import json
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from functions.http import JSON_HEADERS, ApiError, log_hash
from functions.openapi import ConversationId
from functions.routing import conversation_caller, logger, request_app

router = Router()  # type: ignore[no-untyped-call]

MCP_PATH = "/conversations/<conversation_id>/mcp"
SDK_MODULES = ("mcp", "mcp_types", "starlette", "anyio", "sse_starlette")
"""What the route needs beyond the functions' run-time packages (``pip install
'formwork[mcp]'``)."""


@router.post(MCP_PATH, include_in_schema=False)
def mcp_message(conversation_id: ConversationId) -> Response[str]:
    caller = conversation_caller(router, conversation_id)
    conversation = log_hash(caller.conversation_id)  # before the call: a bad key fails first
    event = router.current_event
    body = (event.body or "").encode("utf-8")
    try:
        from formwork.mcp.backends import ServiceBackend
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
    server = build_server(ServiceBackend(request_app(router.context).service, caller))
    answer = serve_request(server, "POST", dict(event.headers), body)
    logger.info("mcp request", extra={"status": answer.status, "conversation_hash": conversation})
    content_type = answer.headers.pop("content-type", None)
    return Response(answer.status, content_type, answer.text, headers=answer.headers)


@router.get(MCP_PATH, include_in_schema=False)
def mcp_stream(conversation_id: ConversationId) -> Response[str]:
    """No server-sent event stream: the server is stateless and sends nothing unasked."""
    conversation_caller(router, conversation_id)
    return _not_allowed("the MCP endpoint is stateless: it opens no event stream")


@router.delete(MCP_PATH, include_in_schema=False)
def mcp_session_end(conversation_id: ConversationId) -> Response[str]:
    """No session to end: the server is stateless."""
    conversation_caller(router, conversation_id)
    return _not_allowed("the MCP endpoint is stateless: there is no session to end")


def _not_allowed(message: str) -> Response[str]:
    body: dict[str, Any] = {"error": "method_not_allowed", "message": message + "; send POST"}
    return Response(
        405,
        "application/json",
        json.dumps(body, separators=(",", ":")),
        headers={**JSON_HEADERS, "Allow": "POST"},
    )
