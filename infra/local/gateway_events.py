"""What the dev gateway hands a function and what it answers with: the API Gateway HTTP API
event (payload format 2.0) for a request, and the response for a function's return value."""

from __future__ import annotations

import base64
import json
import os
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl

from formwork.infra.local.function_config import FunctionError
from formwork.infra.local.gateway_routes import Route

Event = dict[str, Any]

ACCOUNT_ID = "000000000000"
API_ID = "local"
_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade"}
)
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass(frozen=True, slots=True)
class IncomingRequest:
    method: str
    target: str
    """The request target as sent: path and query string, still percent-encoded."""
    headers: Sequence[tuple[str, str]]
    body: bytes = b""
    source_ip: str = "127.0.0.1"
    port: int = 80


@dataclass(frozen=True, slots=True)
class OutgoingResponse:
    status: int
    headers: list[tuple[str, str]]
    body: bytes = b""


def _request_id() -> str:
    return base64.b64encode(os.urandom(10)).decode()


def _clf_time(now: float) -> str:
    moment = datetime.fromtimestamp(now, UTC)
    return f"{moment:%d}/{_MONTHS[moment.month - 1]}/{moment:%Y:%H:%M:%S} +0000"


def build_event(
    request: IncomingRequest,
    route: Route,
    path_parameters: Mapping[str, str],
    claims: Mapping[str, str] | None,
    *,
    now: float,
    request_id: str,
) -> Event:
    """The API Gateway HTTP API (payload format 2.0) event for a request."""
    raw_path, _, raw_query = request.target.partition("?")
    headers, cookies = _headers_and_cookies(request, now)
    query: dict[str, str] = {}
    for name, value in parse_qsl(raw_query, keep_blank_values=True):
        query[name] = f"{query[name]},{value}" if name in query else value
    event: Event = {
        "version": "2.0",
        "routeKey": route.key,
        "rawPath": raw_path,
        "rawQueryString": raw_query,
    }
    if cookies:
        event["cookies"] = cookies
    event["headers"] = headers
    if query:
        event["queryStringParameters"] = query
    event["requestContext"] = _request_context(request, route, headers, now, request_id)
    if claims is not None:
        event["requestContext"]["authorizer"] = {"jwt": {"claims": dict(claims), "scopes": None}}
    if request.body:
        try:
            event["body"] = request.body.decode("utf-8")
            event["isBase64Encoded"] = False
        except UnicodeDecodeError:
            event["body"] = base64.b64encode(request.body).decode("ascii")
            event["isBase64Encoded"] = True
    else:
        event["isBase64Encoded"] = False
    if path_parameters:
        event["pathParameters"] = dict(path_parameters)
    return event


def _headers_and_cookies(request: IncomingRequest, now: float) -> tuple[dict[str, str], list[str]]:
    """The event's lower-cased headers (repeats joined with commas, hop-by-hop ones dropped,
    the forwarding and trace headers API Gateway adds) and its cookies."""
    headers: dict[str, str] = {}
    cookies: list[str] = []
    for name, value in request.headers:
        key = name.lower()
        if key in _HOP_BY_HOP:
            continue
        if key == "cookie":
            cookies.extend(c.strip() for c in value.split(";") if c.strip())
            continue
        headers[key] = f"{headers[key]},{value}" if key in headers else value
    headers.setdefault("x-forwarded-for", request.source_ip)
    headers.setdefault("x-forwarded-port", str(request.port))
    headers.setdefault("x-forwarded-proto", "http")
    headers.setdefault("x-amzn-trace-id", f"Root=1-{int(now):08x}-{uuid.uuid4().hex[:24]}")
    return headers, cookies


def _request_context(
    request: IncomingRequest,
    route: Route,
    headers: Mapping[str, str],
    now: float,
    request_id: str,
) -> dict[str, Any]:
    """The event's ``requestContext``, before the authorizer's claims are added."""
    raw_path = request.target.partition("?")[0]
    host = headers.get("host", "localhost").rsplit(":", 1)[0] if "host" in headers else "localhost"
    return {
        "accountId": ACCOUNT_ID,
        "apiId": API_ID,
        "domainName": host,
        "domainPrefix": host.split(".")[0],
        "http": {
            "method": request.method,
            "path": raw_path,
            "protocol": "HTTP/1.1",
            "sourceIp": request.source_ip,
            "userAgent": headers.get("user-agent", ""),
        },
        "requestId": request_id,
        "routeKey": route.key,
        "stage": "$default",
        "time": _clf_time(now),
        "timeEpoch": int(now * 1000),
    }


def _json_response(status: int, message: str, request_id: str = "") -> OutgoingResponse:
    headers = [("content-type", "application/json")]
    if request_id:
        headers.append(("apigw-requestid", request_id))
    body = json.dumps({"message": message}, separators=(",", ":")).encode()
    return OutgoingResponse(status, headers, body)


def response_from_result(result: Any, request_id: str) -> OutgoingResponse:
    """What API Gateway answers for a function's return value (payload format 2.0).

    A dict with ``statusCode`` is taken as the response; anything else is JSON for a 200
    (API Gateway's inference for format 2.0). A malformed response is a 500.
    """
    if not (isinstance(result, dict) and "statusCode" in result):
        body = result if isinstance(result, str) else json.dumps(result)
        return OutgoingResponse(
            200,
            [("content-type", "application/json"), ("apigw-requestid", request_id)],
            body.encode(),
        )
    status = result["statusCode"]
    if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 599:
        raise FunctionError(f"the function returned statusCode {status!r}")
    headers: list[tuple[str, str]] = []
    for name, value in (result.get("headers") or {}).items():
        headers.append((str(name).lower(), str(value)))
    for name, values in (result.get("multiValueHeaders") or {}).items():
        headers.extend((str(name).lower(), str(v)) for v in values)
    headers.extend(("set-cookie", str(cookie)) for cookie in result.get("cookies") or [])
    headers.append(("apigw-requestid", request_id))
    payload = result.get("body")
    if payload is None:
        raw = b""
    elif result.get("isBase64Encoded"):
        raw = base64.b64decode(str(payload))
    else:
        raw = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
    return OutgoingResponse(status, headers, raw)
