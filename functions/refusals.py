"""Refusals: what an exception raised while routing stands for, as a JSON 4xx.

``refusal`` maps every exception a route can raise (``ApiError``, an unverified principal, the
engine's ``BadRequest``, Powertools' validation and routing errors) to one ``ApiError``, or to
``None`` for a bug (a bare 500). Validation errors are classified in a fixed order: path ids
(a conversation id, a form id, a version), then the tool name, the query, the body.
``route_label`` names a request's route with a fixed label (a log key and a metric dimension,
never raw input).
"""

import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)

from forms.errors import BadRequest
from forms.surface.formats import FORMATS
from forms.surface.tools import TOOLS_BY_NAME
from formwork.aws.auth import Unauthenticated
from formwork.aws.http import JSON_HEADERS, ApiError, error_body, unauthorized


def json_error(
    status: int, code: str, message: str, headers: Mapping[str, str] | None = None
) -> Response[Any]:
    """A refusal as the resolver answers it: JSON ``{"error", "message"}``."""
    return Response(
        status,
        "application/json",
        error_body(code, message),
        headers={**JSON_HEADERS, **(headers or {})},
    )


def refusal(error: Exception, event: Mapping[str, Any]) -> ApiError | None:
    """The 4xx an exception raised while routing ``event`` stands for; ``None`` for a bug."""
    if isinstance(error, ApiError):
        return error
    if isinstance(error, Unauthenticated):
        return unauthorized(error.message)
    if isinstance(error, BadRequest):
        return ApiError(400, "bad_request", error.message)
    if isinstance(error, RequestUnsupportedContentType):
        return ApiError(415, "unsupported_media_type", "send the body as application/json")
    if isinstance(error, RequestValidationError):
        return classify(list(error.errors()), event)
    if isinstance(error, NotFoundError):
        if route_label(event) != "unmatched":
            # a route's shape, with a path parameter no route pattern takes (a quote, a
            # backslash, a control character): a malformed id, not a missing route
            return ApiError(400, "bad_request", "malformed path: a path parameter is not an id")
        return ApiError(404, "route_not_found", "no such route; see GET /openapi.json")
    return None


def classify(errors: list[Any], event: Mapping[str, Any]) -> ApiError:
    """Map Powertools' validation errors to one refusal: path ids, then the tool (of the form
    tools' route, or the builder's: ``event``'s), the query, the body."""
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
    if "form_id" in path:
        return ApiError(
            400,
            "bad_request",
            "form id must be a lowercase letter, then up to 62 lowercase letters, digits or "
            "hyphens",
        )
    if "version" in path:
        return ApiError(400, "bad_request", "version must be a whole number from 1")
    if "tool_name" in path:
        return unknown_tool()
    if route_label(event) == "builder_call" and not _builder_tool(event):
        return unknown_builder_tool()  # whatever the body: there is no such tool to send it to
    if where.get("query"):
        return query_refusal(where["query"][0])
    if path:
        return ApiError(400, "bad_request", "malformed path")
    body = where.get("body", []) + [
        e for k, v in where.items() if k not in ("body", "path", "query") for e in v
    ]
    if any(e.get("type") == "json_invalid" for e in body):
        return ApiError(400, "malformed_json", "the request body is not valid JSON")
    problems = [describe(e) for e in body[:5]]
    return ApiError(422, "invalid_request", "; ".join(problems) or "the request body is invalid")


def query_refusal(error: Mapping[str, Any]) -> ApiError:
    """A query parameter's refusal, naming the values its route takes (``format`` differs by
    route: the builder's shapes are not the form tools')."""
    name = str((error.get("loc") or ("query", "format"))[-1])[:40]
    context = error.get("ctx")
    expected = context.get("expected") if isinstance(context, Mapping) else None
    if isinstance(expected, str) and error.get("type") == "literal_error":
        choices = expected.replace("'", "").replace(" or ", ", ")
        return ApiError(400, "bad_request", f"{name} must be one of: {choices}")
    if name == "format":
        return ApiError(400, "bad_request", "format must be one of: " + ", ".join(FORMATS))
    return ApiError(400, "bad_request", describe(error))


def describe(error: Mapping[str, Any]) -> str:
    loc = [str(part) for part in error.get("loc", ()) if part != "body"]
    where = ".".join(loc[:4]) or "body"
    return f"{where}: {str(error.get('msg', 'invalid'))[:120]}"


def unknown_tool() -> ApiError:
    known = ", ".join(TOOLS_BY_NAME)
    return ApiError(404, "unknown_tool", f"there is no such tool; the tools are: {known}")


def unknown_builder_tool() -> ApiError:
    from forms.app.builder_tools import BUILDER_ARGUMENTS

    known = ", ".join(BUILDER_ARGUMENTS)
    return ApiError(404, "unknown_tool", f"there is no such builder tool; the tools are: {known}")


def is_builder_tool(name: str) -> bool:
    """Whether ``name`` is a builder tool's."""
    from forms.app.builder_tools import BUILDER_ARGUMENTS

    return name in BUILDER_ARGUMENTS


def _builder_tool(event: Mapping[str, Any]) -> bool:
    path = event.get("rawPath")
    return isinstance(path, str) and is_builder_tool(path.rsplit("/", 1)[-1])


ROUTES: tuple[tuple[str, str, str], ...] = (
    ("GET", r"/tools", "list_tools"),
    ("POST", r"/conversations/[^/]+/tools/[^/]+", "call_tool"),
    ("GET", r"/conversations/[^/]+/status", "status"),
    ("POST", r"/conversations/[^/]+/mcp", "mcp"),
    ("GET", r"/conversations/[^/]+/mcp", "mcp_stream"),
    ("DELETE", r"/conversations/[^/]+/mcp", "mcp_session"),
    ("GET", r"/openapi\.json", "openapi"),
    ("GET", r"/swagger", "swagger"),
    ("POST", r"/webhooks/[^/]+", "webhook"),
    ("GET", r"/approvals", "approvals"),
    ("POST", r"/approvals/page-links", "approvals_page_link"),
    ("POST", r"/approvals/[^/]+", "approval"),
    ("GET", r"/builder/tools", "builder_tools"),
    ("POST", r"/builder/forms/[^/]+/tools/[^/]+", "builder_call"),
    ("GET", r"/builder/forms", "builder_drafts"),
    ("GET", r"/builder/forms/[^/]+", "builder_draft"),
    ("POST", r"/builder/forms/[^/]+/publish", "builder_publish"),
    ("POST", r"/builder/forms/[^/]+/mcp", "builder_mcp"),
    ("GET", r"/builder/forms/[^/]+/mcp", "builder_mcp_stream"),
    ("DELETE", r"/builder/forms/[^/]+/mcp", "builder_mcp_session"),
    ("GET", r"/forms/[^/]+/versions/[^/]+", "form_version"),
    ("PUT", r"/memory/facts/[^/]+", "memory_state"),
    ("GET", r"/memory/facts", "memory_list"),
    ("GET", r"/memory/facts/[^/]+", "memory_read"),
    ("POST", r"/memory/facts/[^/]+/confirm", "memory_confirm"),
    ("DELETE", r"/memory/facts/[^/]+", "memory_delete"),
    ("GET", r"/memory/export", "memory_export"),
    ("GET", r"/memory/settings", "memory_settings_get"),
    ("PUT", r"/memory/settings", "memory_settings_put"),
    ("POST", r"/conversations/[^/]+/page-links", "page_link"),
    ("GET", r"/pages/enter/[^/]+", "page_enter"),
    ("POST", r"/pages/enter/[^/]+", "page_open"),
    ("GET", r"/pages/forms/[^/]+", "page_form"),
    ("POST", r"/pages/forms/[^/]+", "page_form_post"),
    ("GET", r"/pages/forms/[^/]+/version", "page_version"),
    ("GET", r"/pages/static/[^/]+", "page_static"),
    ("POST", r"/memory/page-links", "memory_page_link"),
    ("GET", r"/pages/memory", "memory_page"),
    ("GET", r"/pages/memory/export", "memory_page_export"),
    ("POST", r"/pages/memory/facts/[^/]+/correct", "memory_page_correct"),
    ("POST", r"/pages/memory/facts/[^/]+/delete", "memory_page_delete"),
    ("POST", r"/pages/memory/switch", "memory_page_switch"),
    ("GET", r"/operator/hooks/failed", "operator_failed_hooks"),
    ("POST", r"/operator/hooks/[^/]+/retry", "operator_retry_hook"),
    ("GET", r"/operator/relay/failures", "operator_relay_failures"),
    ("POST", r"/operator/relay/failures/redrive", "operator_redrive"),
    ("POST", r"/operator/forms/[^/]+/migrate", "operator_migrate"),
    ("POST", r"/builder/forms/[^/]+/page-links", "canvas_page_link"),
    ("GET", r"/pages/canvas/[^/]+", "canvas_page"),
    ("GET", r"/pages/canvas/[^/]+/version", "canvas_page_version"),
    ("POST", r"/pages/canvas/[^/]+", "canvas_page_post"),
    ("GET", r"/pages/approvals", "approvals_page"),
    ("GET", r"/pages/approvals/[^/]+", "approval_page"),
    ("POST", r"/pages/approvals/[^/]+", "approval_page_decide"),
)
"""Each route as (method, path pattern, label), in the order ``route_label`` tries them. A
pattern is compiled when a request first reaches it (``_pattern``), not with the module: a cold
start compiles the few its first request passes, not all of them (about 2 ms of regular
expressions)."""


@cache
def _pattern(source: str) -> re.Pattern[str]:
    return re.compile(source)


def route_label(event: Mapping[str, Any]) -> str:
    """A bounded label for the request's route (a metric dimension, never raw input)."""
    context = event.get("requestContext")
    http = context.get("http") if isinstance(context, Mapping) else None
    method = http.get("method") if isinstance(http, Mapping) else None
    path = event.get("rawPath")
    if isinstance(method, str) and isinstance(path, str):
        for route_method, pattern, label in ROUTES:
            if method.upper() == route_method and _pattern(pattern).fullmatch(path):
                return label
    return "unmatched"
