"""What a cold start of the tool API imports, and that it still traces when tracing is on.

Each test runs a fresh interpreter (a module imported once stays imported). No timing here:
the cost is measured by ``bench/backend/cold_start.py``; these tests hold the line on *what* is
imported, which is what the cost follows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
EVENTS = ROOT / "tests" / "events"

WEBHOOK_ROUTE = (
    "formwork.aws.webhooks",
    "formwork.aws.notify",
    "formwork.webhooks",  # pydantic models: the signed body, the delivery log, the events
    "formwork.webhook_settings",
    "urllib.request",  # the outbound POST's, when a notification is sent
)
"""The webhook route's modules: they load with the first ``POST /webhooks/{source}``, never
with the import, ``GET /tools`` or a tool call."""

BUILT_ON_FIRST_USE = (
    "ApprovalDecisionRequest",
    "ApprovalResult",
    "DecisionNotRecorded",
    "ApprovalAnswer",
    "ConversationStatus",
    "WebhookOutcome",
    "OpenApiDocument",
    "BuilderSelection",
    "BuilderCallRequest",
    "PublishRequest",
    "BuilderResult",
    "EditLogLine",
    "DraftBody",
    "DraftLine",
    "DraftList",
    "PublishedVersion",
    "FormVersionBody",
    "NotPublishableBody",
    "FactStatementRequest",
    "ConfirmRequest",
    "MemorySettingsRequest",
    "FactSource",
    "FactDerivation",
    "FactBody",
    "FactLine",
    "FactList",
    "FactRevisionBody",
    "FactDetail",
    "FactChange",
    "FactDeleted",
    "MemorySettingsBody",
    "ExportedKey",
    "MemoryExport",
    "MemoryRefusal",
)
"""``formwork.aws.models`` whose schemas only the approval, status, webhook, builder, memory and
document routes build (``ON_FIRST_USE``): neither ``GET /tools`` nor a tool call builds them."""

CATALOG = ("forms.app.catalog", "forms.storage.documents")
"""The catalog and its store's port: a tool call loads them with the service (the service
resolves forms through the catalog), never the import or ``GET /tools``."""

BUILDER = (
    "forms.app.builder",
    "forms.app.builder_tools",
    "forms.documents",
    "forms.storage.drafts",
    "forms.storage.dynamodb_drafts",
    "forms.storage.dynamodb_documents",
)
"""The builder's modules (its service, the form documents' model and compiler, the drafts):
they load with the first builder request or the first published document a call uses, never
with the import, ``GET /tools`` or a tool call on a code form."""

MEMORY = (
    "forms.memory",
    "forms.storage.facts",
    "forms.storage.dynamodb_facts",
)
"""Memory's modules (the vocabulary, the planning functions, the fact store): they load with the
first memory request, never with the import or ``GET /tools``."""

MCP = (
    "mcp",
    "mcp_types",
    "starlette",
    "formwork.mcp",
    "formwork.mcp.server",
    "formwork.mcp.http",
)
"""The MCP route's modules (the SDK, a third of a second to import, and the server over it): they
load with the first ``POST /conversations/{conversation_id}/mcp``, never with the import,
``GET /tools`` or a tool call."""

DEFERRED = (
    *WEBHOOK_ROUTE,
    *MCP,
    *CATALOG,
    *BUILDER,
    *MEMORY,
    "aws_xray_sdk",  # the Tracer's: only when tracing is on, and then on the first invocation
    "boto3",
    "botocore.client",
    # the after-response extension's HTTP client (with ssl and email): when it registers, on
    # Lambda only (boto3 imports it too, with the first AWS request)
    "http.client",
    "forms.surface.strict",  # OpenAI's strict mode: with the first request in a strict format
    "forms.storage.dynamodb",
    "aws_lambda_powertools.event_handler.openapi.models",  # the document and Swagger UI only
    "aws_lambda_powertools.event_handler.openapi.swagger_ui",
    # The engine: a tool call or an approval decision loads it with the service; the handler
    # needs only the errors, the tool surface and ``Caller`` (``forms`` loads names lazily).
    "forms.instance",
    "forms.compiled",
    "forms.engine",
    "forms.registry",
    "forms.app.loop",
    "forms.app.approvals",
    "forms.app.service",
)
"""Heavy modules that ``import formwork.aws.api`` must leave for the requests that need them."""

TRACE_HEADER = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
LAMBDA = {
    "LAMBDA_TASK_ROOT": str(ROOT),
    "AWS_LAMBDA_FUNCTION_NAME": "formwork-tools",
    "AWS_REGION": "us-east-1",
    "_X_AMZN_TRACE_ID": TRACE_HEADER,
}
"""What the Lambda runtime sets (with ``Tracing: Active``): Powertools' Tracer is on."""


def run(code: str, environment: dict[str, str] | None = None) -> Any:
    """Run ``code`` in a fresh interpreter at the repository root; the JSON of its last line."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("LAMBDA_TASK_ROOT", "AWS_SAM_LOCAL", "POWERTOOLS_TRACE_DISABLED")
    }
    env.update(environment or {})
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_importing_the_handler_leaves_the_heavy_modules_to_the_routes_that_need_them() -> None:
    # GIVEN a fresh interpreter outside Lambda (tracing off)
    # WHEN the handler module is imported, then GET /tools is served
    code = (
        "import sys, json\n"
        f"watched = {DEFERRED!r}\n"
        "import formwork.aws.api\n"
        "after_import = [m for m in watched if m in sys.modules]\n"
        "from formwork.aws.local import invoke\n"
        "from formwork.bootstrap import bootstrap\n"
        "from formwork.config import Settings\n"
        # the event from its file: the tests' helpers import the engine themselves
        f"event = json.loads(open({str(EVENTS / 'list_tools.json')!r}).read())\n"
        "status = invoke(event, app=bootstrap(Settings()))['statusCode']\n"
        "after_get = [m for m in watched if m in sys.modules]\n"
        "print(json.dumps([after_import, status, after_get]))\n"
    )
    # THEN none of the deferred modules was imported, by the import or by GET /tools
    assert run(code) == [[], 200, []]


def test_importing_the_bedrock_handler_leaves_the_engine_to_the_service() -> None:
    # GIVEN a fresh interpreter outside Lambda
    # WHEN the Bedrock action group's handler module is imported
    engine = ("forms.instance", "forms.compiled", "forms.engine", "forms.app.service", "boto3")
    code = (
        "import sys, json\n"
        "import formwork.aws.bedrock_agent\n"
        f"print(json.dumps([m for m in {engine!r} if m in sys.modules]))\n"
    )
    # THEN neither the engine nor boto3 is imported: they load with the service, on the first
    # call (the refusal's shape, forms.surface.results, is the engine's too)
    assert run(code) == []


def test_a_tool_call_leaves_the_webhook_route_unloaded_and_other_routes_models_unbuilt() -> None:
    # GIVEN a fresh interpreter with an App on an in-memory store
    code = (
        "import sys, json\n"
        f"watched = {(*WEBHOOK_ROUTE, *BUILDER, *MCP)!r}\n"
        "from functions import models\n"
        "from formwork.aws.local import invoke\n"
        "from formwork.bootstrap import bootstrap\n"
        "from formwork.config import Settings\n"
        "from forms.storage.memory import InMemoryFormStore\n"
        f"event = json.loads(open({str(EVENTS / 'call_tool.json')!r}).read())\n"
        "app = bootstrap(Settings(), store=InMemoryFormStore())\n"
        "response = invoke(event, app=app)\n"
        "ok = json.loads(response['body'])['ok']\n"
        "loaded = [m for m in watched if m in sys.modules]\n"
        f"built = [n for n in {BUILT_ON_FIRST_USE!r} if getattr(models, n).__pydantic_complete__]\n"
        "print(json.dumps([response['statusCode'], ok, loaded, built]))\n"
    )
    # WHEN a tool call is served (form_start)
    # THEN it lands; no webhook, builder or MCP module was loaded, and no other route's model
    # built
    assert run(code) == [200, True, [], []]


def test_the_swagger_ui_route_loads_the_openapi_models_when_asked() -> None:
    # GIVEN a fresh interpreter / WHEN GET /swagger is served
    code = (
        "import sys, json\n"
        "from formwork.aws.local import invoke\n"
        "from tests.functional.conftest import build_event\n"
        "from formwork.bootstrap import bootstrap\n"
        "from formwork.config import Settings\n"
        "before = 'aws_lambda_powertools.event_handler.openapi.models' in sys.modules\n"
        "app = bootstrap(Settings())\n"
        "r = invoke(build_event('GET', '/swagger'), app=app)\n"
        "again = invoke(build_event('GET', '/swagger'), app=app)['statusCode']\n"
        "print(json.dumps([before, r['statusCode'], r['headers']['Content-Type'], again]))\n"
    )
    # THEN it is registered on demand and answers the Swagger UI, then and after
    assert run(code) == [False, 200, "text/html", 200]


def test_with_tracing_on_the_x_ray_sdk_loads_on_the_first_invocation_and_traces() -> None:
    # GIVEN a fresh interpreter as Lambda runs it with Tracing: Active, the X-Ray daemon
    # address pointing at a UDP socket of the test
    code = """\
import json, os, socket, sys
daemon = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
daemon.bind(("127.0.0.1", 0))
daemon.settimeout(5)
os.environ["AWS_XRAY_DAEMON_ADDRESS"] = "127.0.0.1:%d" % daemon.getsockname()[1]
import formwork.aws.api
imported = "aws_xray_sdk" in sys.modules
from formwork.aws.local import LocalContext, invoke
from tests.functional.conftest import build_event
from formwork.bootstrap import bootstrap
from formwork.config import Settings
status = invoke(build_event("GET", "/tools"), app=bootstrap(Settings()))["statusCode"]
botocore_for_tools = "botocore.client" in sys.modules
# Then an AWS call inside a traced invocation (to a closed port: it fails fast).
import boto3
from botocore.config import Config
client = boto3.client(
    "dynamodb", endpoint_url="http://127.0.0.1:9", region_name="us-east-1",
    aws_access_key_id="x", aws_secret_access_key="x",
    config=Config(retries={"max_attempts": 0}, connect_timeout=0.5),
)
@formwork.aws.api.tracer.capture_lambda_handler(capture_response=False)
def call_aws(event, context):
    try:
        client.list_tables()
    except Exception:
        pass
    return {}
call_aws({}, LocalContext())
sent = []
while len(sent) < 3:
    sent.append(json.loads(daemon.recv(65536).decode().split("\\n", 1)[1]))
print(json.dumps({
    "imported": imported, "status": status, "botocore_for_tools": botocore_for_tools,
    "sent": [[d["name"], (d.get("annotations") or {}).get("ColdStart")] for d in sent],
}))
"""
    # WHEN the handler is imported, serves GET /tools, and an AWS call is made in an invocation
    result = run(code, LAMBDA)
    # THEN the import did not load the X-Ray SDK; the first invocation was traced (cold start
    # annotated) without loading botocore; the AWS call has its subsegment (botocore was
    # patched when it was imported)
    assert result["imported"] is False
    assert result["status"] == 200
    assert result["botocore_for_tools"] is False
    assert result["sent"] == [
        ["## lambda_handler", True],
        ["dynamodb", None],
        ["## call_aws", False],
    ]
