"""The tool API registers its tool routes with the module and the others on first need.

``formwork.aws.api.CORE_PATHS`` says which paths the core routes serve: the tool routes,
registered at import, and MCP's and the webhook route, included with the first request for
either (``include_core_routes``); a request for any other path includes every other route
module first (``include_other_routes``). That is
only sound when no other route takes a core path: these tests hold it, and that a cold start
which serves tool calls imports none of the other route modules.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from formwork.aws import api

ROOT = Path(__file__).resolve().parents[2]

CORE_SAMPLES = (
    "/tools",
    "/conversations/c-1/tools/form_fill",
    "/conversations/c-1/status",
    "/conversations/c-1/mcp",
    "/webhooks/crm",
)


def _routes() -> list[object]:
    api.include_other_routes()
    return [*api.resolver._static_routes, *api.resolver._dynamic_routes]


def test_core_paths_are_the_paths_of_the_routes_registered_at_import() -> None:
    for path in CORE_SAMPLES:
        assert api.CORE_PATHS.fullmatch(path), path
    assert not api.CORE_PATHS.fullmatch("/conversations/c-1/page-links")
    assert not api.CORE_PATHS.fullmatch("/tools/x")


@pytest.mark.parametrize("path", CORE_SAMPLES)
def test_no_other_route_module_takes_a_core_path(path: str) -> None:
    # GIVEN every route included
    others = {f"formwork.aws.{name}" for name in api.OTHER_ROUTES}
    # THEN no route of another module (nor the document's) matches a core path
    taking = [
        f"{route.method} {route.rule.pattern}"  # type: ignore[attr-defined]
        for route in _routes()
        if (route.func.__module__ in others or route.func is api.openapi_document)  # type: ignore[attr-defined]
        and route.rule.match(path)  # type: ignore[attr-defined]
    ]
    assert taking == []


def test_a_cold_start_serving_tool_calls_imports_no_other_route_module() -> None:
    # GIVEN a fresh interpreter that imports the handler and serves GET /tools
    code = """
import json, sys
import formwork.aws.api
from formwork.aws.local import LocalContext
event = json.loads(open(sys.argv[1]).read())
formwork.aws.api.lambda_handler(event, LocalContext())
others = [f"formwork.aws.{n}" for n in formwork.aws.api.OTHER_ROUTES]
before = sorted(m for m in others if m in sys.modules)
event["rawPath"] = event["requestContext"]["http"]["path"] = "/approvals"
formwork.aws.api.lambda_handler(event, LocalContext())
after = sorted(m for m in others if m in sys.modules)
print(json.dumps([before, after]))
"""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "POWERTOOLS_TRACE_DISABLED": "true"}
    done = subprocess.run(
        [sys.executable, "-c", code, str(ROOT / "tests" / "events" / "list_tools.json")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    before, after = json.loads(done.stdout.strip().splitlines()[-1])
    # THEN none of the other route modules was imported for it (the builder's FormId and the
    # roles parser, which MCP's builder route and the builder share, live apart from both)
    assert before == []
    # AND the first request for another path imports them all
    assert after == sorted(f"formwork.aws.{name}" for name in api.OTHER_ROUTES)
