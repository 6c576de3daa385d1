"""The OpenAPI document's plumbing: what every route declares it answers.

Routes declare their answers with ``json_body`` (a status's body model) and ``error_responses``
(the error statuses, each with ``ErrorBody``; 401 also with API Gateway's own body).
``Resolver`` is Powertools' resolver with a document that lists only those: the validation 422
Powertools adds to every operation is dropped, and so is every component schema nothing refers
to. ``openapi_settings()`` is the document's title, description and security schemes.

A tool-call route (``.../tools/{tool_name}``) is one route, whose ``input`` the route takes as
any object (a tool refuses bad input as data, in a 200). The document shows it as one operation
per tool instead (``per_tool_operations``): ``POST /conversations/{conversation_id}/tools/
form_fill``, with ``operationId`` ``form_fill`` and a body whose ``input`` is the tool's
argument model, so that a client generated from the document gets a typed method per tool, and
an agent framework reading it sees every tool's parameters.

Powertools' OpenAPI models (``event_handler.openapi.models``: pydantic, about half an
``import boto3``) are needed only to build the document and the Swagger UI, so nothing here
imports them at import time: the security schemes are built on first use, and the Swagger UI
route is registered just before the first request for it (``Resolver.swagger_on_demand``).
"""

import json
import re
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, Literal, NamedTuple

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from aws_lambda_powertools.event_handler.openapi.params import Path
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from pydantic import BaseModel

from forms.surface.formats import model_tools
from forms.surface.tools import TOOLS, TOOLS_BY_NAME
from formwork.aws.models import ID_PATTERN, IGNORED_IDENTITY_KEYS, ErrorBody, Unauthorized

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler.openapi.models import OpenAPI
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from forms.surface.formats import Tool


class Resolver(APIGatewayHttpResolver):
    """Powertools' resolver, whose OpenAPI document lists only what the routes answer, and
    whose Swagger UI route is registered on demand (``swagger_on_demand``)."""

    _swagger_path: str | None = None

    def get_openapi_schema(self, *args: Any, **kwargs: Any) -> "OpenAPI":
        schema = super().get_openapi_schema(*args, **kwargs)
        per_tool_operations(schema)
        only_declared_responses(schema)
        return schema

    def swagger_on_demand(self, path: str) -> None:
        """``enable_swagger(path=path, **openapi_settings())``, done just before the first
        request whose path is ``path``: Powertools' ``enable_swagger`` imports its OpenAPI
        models, which no other route needs. The route then is Powertools' own, matched by
        Powertools' own rule; before that request no request could have reached it."""
        self._swagger_path = path

    def resolve(self, event: Mapping[str, Any], context: "LambdaContext") -> dict[str, Any]:
        path = self._swagger_path
        if path is not None and self._requests(event, path):
            self._swagger_path = None
            self.enable_swagger(path=path, **openapi_settings())
        return super().resolve(event, context)

    def _requests(self, event: Mapping[str, Any], path: str) -> bool:
        """Whether Powertools would match ``event`` against a route registered at ``path``
        (any method). An event it cannot read counts as yes: registering early costs only
        time, while registering late would answer 404."""
        try:
            requested = self._remove_prefix(self._to_proxy_event(dict(event)).path)
        except Exception:  # Powertools will refuse the event itself
            return True
        return self._compile_regex(path).match(requested) is not None


def only_declared_responses(schema: "OpenAPI") -> None:
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


_REF = r'"#/components/schemas/([^"]+)"'  # compiled by re when the document is first built
_COMPONENTS = "#/components/schemas/{model}"


class ToolPath(NamedTuple):  # a tenth of a dataclass's cost to create, at import
    """A tool-call route the document shows as one operation per tool: its path template,
    the component of its request body (whose ``input`` the tool's arguments replace) and the
    tools (loaded when the document is built: the builder's load with it)."""

    template: str
    envelope: str
    tools: Callable[[], Sequence["Tool"]]


def _form_tools() -> Sequence["Tool"]:
    return TOOLS


def _builder_tools() -> Sequence["Tool"]:
    from forms.app.builder import BUILDER_ARGUMENTS

    return model_tools(BUILDER_ARGUMENTS)


TOOL_PATHS = (
    ToolPath("/conversations/{conversation_id}/tools/{tool_name}", "ToolCallRequest", _form_tools),
    ToolPath("/builder/forms/{form_id}/tools/{tool_name}", "BuilderCallRequest", _builder_tools),
)


def per_tool_operations(schema: "OpenAPI") -> None:
    """Show each of ``TOOL_PATHS`` as one operation per tool, in the tools' order and in the
    route's place: its path with the tool's name, ``operationId`` the name, the tool's
    description first, the route's answers (but the unknown tool's 404), and a body of its own
    (``<Tool>Call``, the route's envelope with ``input`` the tool's argument model, whose schema
    and definitions join the components). Routing is the route's, unchanged."""
    from aws_lambda_powertools.event_handler.openapi.models import PathItem, Schema

    paths, components = schema.paths or {}, schema.components
    if components is None or components.schemas is None:
        return
    named: dict[str, Any] = components.schemas
    expanded: dict[str, Any] = {}
    for template, item in paths.items():
        route = next((t for t in TOOL_PATHS if t.template == template), None)
        if route is None or item.post is None:
            expanded[template] = item
            continue
        operation = _plain(item.post)
        envelope = _plain(named[route.envelope])
        tools = route.tools()
        for name, args in _argument_schemas(tools).items():
            _add_component(named, name, Schema.model_validate(args))
        for tool in tools:
            call = f"{tool.name.title().replace('_', '')}Call"
            _add_component(named, call, Schema.model_validate(_call_body(envelope, tool, call)))
            path = template.replace("{tool_name}", tool.name)
            expanded[path] = PathItem.model_validate(
                {"post": _tool_operation(operation, tool, call)}
            )
    schema.paths = expanded


def _argument_schemas(tools: Sequence["Tool"]) -> dict[str, Any]:
    """The JSON schemas of the tools' argument models and of everything they refer to, by
    component name (pydantic's: the model's name, its module's where two share one)."""
    from pydantic.json_schema import models_json_schema

    models = [_args(tool) for tool in tools]
    _, found = models_json_schema([(m, "validation") for m in models], ref_template=_COMPONENTS)
    defs: dict[str, Any] = found.get("$defs", {})
    wanted = {m.__name__ for m in models}
    pending = list(wanted)
    while pending:  # what the argument models refer to, and what that refers to
        for ref in _referenced(json.dumps(defs[pending.pop()])) - wanted:
            wanted.add(ref)
            pending.append(ref)
    text = json.dumps({name: defs[name] for name in defs if name in wanted})
    for name in wanted:  # pydantic's module__path__Name, where two models share a name
        short = name.rsplit("__", 1)[-1]
        if short != name and sum(n.rsplit("__", 1)[-1] == short for n in wanted) == 1:
            text = text.replace(f'"{name}"', f'"{short}"').replace(f'/{name}"', f'/{short}"')
    return {name: _one_type_each(schema) for name, schema in json.loads(text).items()}


_ANNOTATIONS = ("title", "description", "default", "examples")


def _one_type_each(node: Any) -> Any:
    """``{"type": [X, Y], ...}`` as ``{"anyOf": [{"type": X, ...}, {"type": Y, ...}]}``, the
    same schema in the form Powertools' OpenAPI models take (their ``type`` is one string)."""
    if isinstance(node, list):
        return [_one_type_each(item) for item in node]
    if not isinstance(node, dict):
        return node
    walked = {key: _one_type_each(value) for key, value in node.items()}
    kinds = walked.get("type")
    if not isinstance(kinds, list):
        return walked
    outer = {k: v for k, v in walked.items() if k in _ANNOTATIONS}
    inner = {k: v for k, v in walked.items() if k not in _ANNOTATIONS and k != "type"}
    return {**outer, "anyOf": [{"type": kind, **inner} for kind in kinds]}


def _args(tool: "Tool") -> type[BaseModel]:
    args = getattr(tool, "args", None)
    assert isinstance(args, type) and issubclass(args, BaseModel), tool
    return args


def _add_component(named: dict[str, Any], name: str, schema: Any) -> None:
    """Add a component, or check the one of that name is the same (two schemas under one name
    would make the document say one thing of both)."""
    if name in named and _plain(named[name]) != _plain(schema):
        raise ValueError(f"two OpenAPI components are named {name!r}")
    named[name] = schema


def _call_body(envelope: dict[str, Any], tool: "Tool", title: str) -> dict[str, Any]:
    properties = dict(envelope["properties"])
    properties["input"] = {
        "anyOf": [{"$ref": _COMPONENTS.format(model=_args(tool).__name__)}, {"type": "null"}],
        "description": f"{tool.name}'s arguments, as the model produced them; omit for {{}}",
    }
    ignored = ", ".join(sorted(IGNORED_IDENTITY_KEYS))
    return {
        **envelope,
        "title": title,
        "description": f"One {tool.name} call. Other keys are refused (422), except the "
        f"identity keys ({ignored}), which are ignored.",
        "properties": properties,
    }


def _tool_operation(operation: dict[str, Any], tool: "Tool", call: str) -> dict[str, Any]:
    responses = {s: r for s, r in operation["responses"].items() if str(s) != "404"}
    result = getattr(tool, "result", None)  # a form tool's result model, from the tools' list
    if result is not None:
        schema = {"$ref": _COMPONENTS.format(model=result.__name__)}
        responses["200"] = {**responses["200"], "content": {"application/json": {"schema": schema}}}
    return {
        **operation,
        "operationId": tool.name,
        "summary": tool.name,
        "description": f"{tool.description}\n\n{operation.get('description', '')}",
        "parameters": [p for p in operation.get("parameters", []) if p["name"] != "tool_name"],
        "requestBody": {
            **operation["requestBody"],
            "content": {"application/json": {"schema": {"$ref": _COMPONENTS.format(model=call)}}},
        },
        "responses": responses,
    }


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
    return set(re.findall(_REF, text))


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
DESCRIBED = {
    400: "Malformed request: an event that is not API Gateway's, or a body that is not base64 "
    "when flagged so (bad_request); a body that is empty, not UTF-8 JSON, NaN, lone surrogates, "
    "nested too deep (malformed_json), or holding a key twice in one object (duplicate_key)",
    401: "No verified principal. " + _GATEWAY_401,
    413: "Body over the size limit (payload_too_large)",
    415: "Body is not UTF-8 JSON, or has no content type (unsupported_media_type)",
    422: "The body is well-formed JSON of the wrong shape (invalid_request; the message names "
    "the field)",
}


def json_body(model: Any, description: str) -> OpenAPIResponse:
    return {"description": description, "content": {"application/json": {"model": model}}}


def error_responses(*statuses: int, **described: str) -> dict[int, OpenAPIResponse]:
    """OpenAPI entries for the error statuses a route can answer: ``ErrorBody``, and for 401
    also API Gateway's own body. ``described`` overrides a description (key ``s404``)."""
    entries: dict[int, OpenAPIResponse] = {}
    for status in statuses:
        text = described.get(f"s{status}") or DESCRIBED[status]
        entries[status] = json_body(Unauthorized if status == 401 else ErrorBody, text)
    return entries


@cache
def openapi_settings() -> dict[str, Any]:
    """The document's title, description, security schemes and security: the keyword arguments
    of ``get_openapi_schema`` and ``enable_swagger`` (built on first use: the schemes are
    Powertools' OpenAPI models)."""
    from aws_lambda_powertools.event_handler.openapi.models import APIKey, APIKeyIn, HTTPBearer

    return {
        "title": "Formwork tool API",
        "version": "1.0.0",
        "description": "Agent tools for collecting structured information through conversations. "
        "Every route needs a bearer JWT (API Gateway's JWT authorizer verifies it), except "
        "POST /webhooks/{source}, which is signed with the source's secret instead.\n\n"
        "Every route lists exactly the statuses it answers. Every refusal from the function is "
        'JSON {"error", "message"}. ' + _GATEWAY_401 + " Any other method or path is a 404 "
        "route_not_found, after the checks every request goes through (401; for POST also 415, "
        "413, 400). A 500 internal_error is a bug and is not listed.\n\n"
        "A tool call is one operation per tool (POST .../tools/form_fill, operationId "
        "form_fill), whose body's input is that tool's arguments; a name that is not one of "
        "the tools is a 404 unknown_tool.",
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
