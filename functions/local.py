"""Calling the Lambda handler outside Lambda: tests and the local gateway.

``invoke(event, app=app)`` runs ``formwork.aws.api.lambda_handler`` with a ``LocalContext``
standing in for the Lambda context object (Powertools' Logger reads its attributes), serving
with ``app`` (an App from ``formwork.bootstrap.bootstrap``; default: this process's).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from formwork.bootstrap import App


@dataclass(frozen=True)
class LocalContext:
    """The attributes of a Lambda context object that the handler and Powertools read."""

    function_name: str = "formwork-tools-local"
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = (
        "arn:aws:lambda:us-east-1:000000000000:function:formwork-tools-local"
    )
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    log_group_name: str = "/aws/lambda/formwork-tools-local"
    log_stream_name: str = "local"

    def get_remaining_time_in_millis(self) -> int:
        return 15_000


def invoke(
    event: dict[str, Any], context: LocalContext | None = None, *, app: App | None = None
) -> dict[str, Any]:
    """Run the handler on one API Gateway HTTP API (payload v2) event with ``app``; return its
    response."""
    from formwork.aws.api import lambda_handler

    response: dict[str, Any] = lambda_handler(event, context or LocalContext(), app=app)
    return response
