"""A refused request, and the JSON response API Gateway sends for it: ``ApiError`` (status,
code, message, headers) and ``error_response``, the payload v2 answer with the body
``{"error": code, "message": ...}`` (``formwork.aws.http`` says what is refused before routing)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

JSON_HEADERS = {"Content-Type": "application/json", "Cache-Control": "no-store"}


class ApiError(Exception):
    """A request refused with an HTTP status, an error code and a message for the caller."""

    def __init__(
        self, status: int, code: str, message: str, headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = dict(headers or {})


def unauthorized(message: str) -> ApiError:
    return ApiError(401, "unauthorized", message, {"WWW-Authenticate": "Bearer"})


def error_body(code: str, message: str) -> dict[str, str]:
    return {"error": code, "message": message}


def error_response(error: ApiError) -> dict[str, Any]:
    """An API Gateway HTTP API (payload v2) response for ``error``."""
    return {
        "statusCode": error.status,
        "headers": {**JSON_HEADERS, **error.headers},
        "body": json.dumps(error_body(error.code, error.message), separators=(",", ":")),
        "isBase64Encoded": False,
        "cookies": [],
    }
