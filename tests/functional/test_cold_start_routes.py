"""The tool API's routes included in groups, and the bodies built on first use, seen from a cold
start: the import includes the tool routes alone; MCP's and the webhook route come with the first
request for either, every other route with the first request for any other path. Whichever
request comes first, the resolver ends up with the same routes in the same order, and the same
OpenAPI document. The error bodies the routes only declare are built by the document, never by
a request.

Each test runs a fresh interpreter (a module imported once stays imported).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.functional.test_cold_start import run as cold_start_run

ROOT = Path(__file__).resolve().parents[2]
EVENTS = ROOT / "tests" / "events"

CORE_MODULES = (
    "formwork.aws.mcp_routes",
    "formwork.aws.webhook_route",
    "formwork.aws.models.webhooks",
)
"""What ``include_core_routes`` loads: MCP's route module, the webhook route and its model."""

DECLARED_ONLY = ("ErrorBody", "GatewayError", "Unauthorized", "IgnoresIdentity")
"""Bodies the routes declare (or a base of one) that no request constructs or validates."""

ROUTES = """
import hashlib
api = formwork.aws.api
document = hashlib.sha256(api.openapi_json().encode()).hexdigest()
routes = [
    [r.method, r.rule.pattern, r.func.__module__, r.func.__name__]
    for r in [*api.resolver._static_routes, *api.resolver._dynamic_routes]
]
"""
"""Appended to a run: the document's hash, then the resolver's routes in order (the document
includes every route)."""


def run(code: str) -> Any:
    """``test_cold_start.run`` with tracing off (outside Lambda): the JSON of the last line."""
    return cold_start_run(code, {"POWERTOOLS_TRACE_DISABLED": "true"})


def serving(*paths: str) -> str:
    """Code that imports the handler and serves a ``POST`` for each path, in order."""
    return (
        "import json, sys\n"
        "import formwork.aws.api\n"
        "from formwork.aws.local import invoke\n"
        "from tests.functional.conftest import build_event\n"
        "from formwork.bootstrap import bootstrap\n"
        "from formwork.config import Settings\n"
        "from forms.storage.memory import InMemoryFormStore\n"
        "app = bootstrap(Settings(), store=InMemoryFormStore())\n"
        f"for path in {paths!r}:\n"
        "    invoke(build_event('POST', path, body='{}'), app=app)\n"
    )


def test_serving_the_tool_routes_includes_no_other_route_and_builds_no_error_body() -> None:
    # GIVEN a fresh interpreter with an App on an in-memory store
    code = (
        "import sys, json\n"
        f"core = {CORE_MODULES!r}\n"
        "import formwork.aws.api\n"
        "after_import = [m for m in core if m in sys.modules]\n"
        "from formwork.aws import models\n"
        "from formwork.aws.local import invoke\n"
        "from formwork.bootstrap import bootstrap\n"
        "from formwork.config import Settings\n"
        "from forms.storage.memory import InMemoryFormStore\n"
        "app = bootstrap(Settings(), store=InMemoryFormStore())\n"
        "statuses = []\n"
        "for name in ('list_tools', 'call_tool', 'status'):\n"
        f"    event = json.loads(open({str(EVENTS)!r} + '/' + name + '.json').read())\n"
        "    statuses.append(invoke(event, app=app)['statusCode'])\n"
        "after_calls = [m for m in core if m in sys.modules]\n"
        f"built = [n for n in {DECLARED_ONLY!r} if getattr(models, n).__pydantic_complete__]\n"
        "request = models.ToolCallRequest.__pydantic_complete__\n"
        "print(json.dumps([after_import, statuses, after_calls, built, request]))\n"
    )
    # WHEN it serves GET /tools, a tool call and the status lines
    # THEN neither the import nor those requests included MCP's or the webhook route, no
    # error body was built, and the tool call's request model was (with the import)
    assert run(code) == [[], [200, 200, 200], [], [], True]


@pytest.mark.parametrize(
    "paths",
    [
        ("/webhooks/crm",),
        ("/conversations/c-1/mcp",),
        ("/webhooks/crm", "/approvals/a-1"),
        ("/approvals/a-1",),
        ("/builder/forms/travel-claim/mcp",),
    ],
)
def test_the_routes_end_up_the_same_whichever_request_comes_first(paths: tuple[str, ...]) -> None:
    # GIVEN the routes and the document when every route is included before any request
    reference = run(
        "import json\nimport formwork.aws.api\nformwork.aws.api.include_other_routes()\n"
        + ROUTES
        + "print(json.dumps([routes, document]))\n"
    )
    # WHEN requests for those paths come first, then the document
    code = (
        serving(*paths)
        + "core = [m in sys.modules for m in "
        + repr(CORE_MODULES[:2])
        + "]\n"
        + ROUTES
        + "print(json.dumps([routes, document, core]))\n"
    )
    routes, document, core = run(code)
    # THEN the first of them included MCP's and the webhook route, and the resolver holds the
    # same routes in the same order, with the same document
    assert core == [True, True]
    assert [routes, document] == reference
