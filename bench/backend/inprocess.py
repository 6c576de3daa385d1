"""Calling the Lambda handler in this process, with the events API Gateway sends.

Events are the repository's API Gateway HTTP API (payload v2) fixtures, ``tests/events``, with
the path, path parameters and body replaced. Their verified claims are ``sub=alice``,
``tenant=acme``, so with ``TENANT_CLAIM=tenant`` the principal is ``acme/alice``.

The handler logs one JSON line per tool call and flushes its metrics (EMF JSON) to stdout, as in
Lambda. ``quiet_stdout`` sends file descriptor 1 to /dev/null while the bench calls it, so that
cost is still paid (the lines are built and written) without filling the terminal.
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import os
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from formwork.infra.local.dynamodb import ROOT, load_template
from formwork.infra.local.runtime import functions_from_template

if TYPE_CHECKING:
    from formwork.bootstrap import App

EVENTS = Path(ROOT) / "tests" / "events"
PRINCIPAL = "acme/alice"
TENANT_CLAIM = "tenant"
FUNCTION = "ToolsFunction"
SERVICE_LOGGER = "formwork"


def function_environment(table_name: str = "formwork-bench") -> dict[str, str]:
    """The variables ``template.yaml`` gives the tools function (POWERTOOLS_*, TABLE_NAME...)."""
    configs = functions_from_template(
        load_template(), {"TenantClaim": TENANT_CLAIM}, resources={"FormsTable": table_name}
    )
    return dict(configs[FUNCTION].environment)


def lambda_like_environment() -> None:
    """Give this process the function's Powertools settings before ``formwork.aws.api`` is
    imported (its Logger and Metrics read them once, at import). Tracing stays off: outside
    Lambda there is no X-Ray daemon, and Powertools disables the tracer there anyway."""
    for name, value in function_environment().items():
        if name.startswith("POWERTOOLS_"):
            os.environ.setdefault(name, value)
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")


@cache
def _fixture(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((EVENTS / name).read_text())
    return loaded


def tool_event(
    conversation: str, tool: str, call_id: str, tool_input: dict[str, Any]
) -> dict[str, Any]:
    """``POST /conversations/{conversation}/tools/{tool}`` as API Gateway delivers it."""
    event = copy.deepcopy(_fixture("call_tool.json"))
    path = f"/conversations/{conversation}/tools/{tool}"
    body = json.dumps({"tool_call_id": call_id, "input": tool_input})
    event["rawPath"] = path
    event["requestContext"]["http"]["path"] = path
    event["pathParameters"] = {"conversation_id": conversation, "tool_name": tool}
    event["headers"]["content-length"] = str(len(body.encode()))
    event["body"] = body
    return event


def status_event(conversation: str) -> dict[str, Any]:
    """``GET /conversations/{conversation}/status`` as API Gateway delivers it."""
    event = copy.deepcopy(_fixture("status.json"))
    path = f"/conversations/{conversation}/status"
    event["rawPath"] = path
    event["requestContext"]["http"]["path"] = path
    event["pathParameters"] = {"conversation_id": conversation}
    return event


def invoke(event: dict[str, Any], app: App) -> dict[str, Any]:
    """Run ``formwork.aws.api.lambda_handler`` on ``event``, serving with ``app``; the raw Lambda
    response."""
    from formwork.aws.api import lambda_handler
    from formwork.aws.local import LocalContext

    response: dict[str, Any] = lambda_handler(event, LocalContext(aws_request_id="bench"), app=app)
    return response


def body_of(response: dict[str, Any]) -> dict[str, Any]:
    """The JSON body of a handler response, with its status code under ``_status``."""
    parsed = json.loads(response.get("body") or "{}")
    body: dict[str, Any] = parsed if isinstance(parsed, dict) else {"_body": parsed}
    body["_status"] = response.get("statusCode")
    return body


def check_ok(body: dict[str, Any], what: str) -> dict[str, Any]:
    """``body`` when the call succeeded; otherwise stop the bench, saying what failed."""
    if body.get("_status", 200) != 200 or body.get("ok") is False:
        raise SystemExit(f"bench: {what} failed: {json.dumps(body)[:400]}")
    return body


@contextlib.contextmanager
def quiet_stdout() -> Iterator[None]:
    """File descriptor 1 to /dev/null inside the block (Python's and the handler's writes).

    Errors the service logs (``logging.getLogger("formwork")``, which the handler's Logger
    writes to stdout) are still shown, on stderr, so a failing call is never silent."""
    errors = logging.StreamHandler(sys.stderr)
    errors.setLevel(logging.ERROR)
    service_log = logging.getLogger(SERVICE_LOGGER)
    service_log.addHandler(errors)
    sys.stdout.flush()
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)
        service_log.removeHandler(errors)
