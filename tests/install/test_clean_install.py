"""``pip install`` of the wheel into a clean virtualenv gives working modules and commands.

Three installs, as users make them: the engine alone (pydantic and tzdata only: forms
compile, no cloud SDK comes along), the run-time extras (every Lambda handler and the Temporal
worker import and serve, with no test dependency such as moto pulling in what they forgot to
declare), and the local stack's extra (``formwork dev`` and ``formwork demo`` run from a folder
that is not the checkout: the SAM template they read ships inside the package).
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import textwrap
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from tests.install.conftest import ROOT, Venv, clean_environment

EXAMPLE_IDS = [
    "travel-claim",
    "pi-intake",
    "grant-application",
    "purchase-request",
    "health-check",
]
HEAVY = ("boto3", "botocore", "temporalio", "aws_lambda_powertools", "aws_xray_sdk", "yaml")

CORE_PROBE = """
import importlib.util, json, sys
from pydantic import EmailStr, TypeAdapter
from forms import FormRegistry
from forms.examples import EXAMPLES
registry = FormRegistry(EXAMPLES)
print(json.dumps({
    "forms": [form.id for form in registry.forms()],
    "email": TypeAdapter(EmailStr).validate_python("ana@example.com"),
    "present": [m for m in sys.argv[1:] if importlib.util.find_spec(m) is not None],
}))
"""

ENTRY_POINTS_PROBE = """
import importlib.util, json, sys
import forms, formwork.cli, formwork.bootstrap
import formwork.aws.api, formwork.aws.relay, formwork.temporal.worker
from formwork.aws.local import LocalContext
with open(sys.argv[1]) as handle:
    response = formwork.aws.api.lambda_handler(json.load(handle), LocalContext())
print(json.dumps({
    "status": response["statusCode"],
    "tools": [tool["name"] for tool in json.loads(response["body"])["tools"]],
    "handlers": [callable(formwork.aws.relay.lambda_handler),
    callable(formwork.aws.relay.sweep_handler)],
    "present": [m for m in ("moto", "pytest", "yaml") if importlib.util.find_spec(m) is not None],
}))
"""

CLIENT_PROBE = """
import importlib.util, json, sys
from formwork.client import Formwork
from formwork.agents.chat_loop import ChatAgent
with Formwork(sys.argv[1], "dev:installer") as api:
    tools = api.tools("openai")
    started = api.call("conv-client", "form_start", {"form": "travel-claim"}, "call_install")
    lines = api.status("conv-client").lines
print(json.dumps({
    "tools": [tool["function"]["name"] for tool in tools],
    "started": started.ok,
    "lines": len(lines),
    "present": [m for m in sys.argv[2:] if importlib.util.find_spec(m) is not None],
}))
"""


def last_json(output: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(output.strip().splitlines()[-1])
    return loaded


def checked_ids(output: str) -> list[str]:
    return re.findall(r"^ok  forms\.examples:EXAMPLES  (\S+) v1 ", output, re.MULTILINE)


def test_the_engine_alone_compiles_forms_without_any_cloud_sdk(
    venv: Callable[[str], Venv],
) -> None:
    # GIVEN `pip install formwork`, no extras
    core = venv("")
    # WHEN the examples are compiled in it
    probe = core.run("python", "-c", CORE_PROBE, *HEAVY)
    # THEN they compile, EmailStr validates, and no SDK (nor the local stack's YAML) came along
    assert probe.returncode == 0, probe.stderr
    assert last_json(probe.stdout) == {
        "forms": EXAMPLE_IDS,
        "email": "ana@example.com",
        "present": [],
    }
    # AND `formwork check` works there, on the examples and on a module beside the caller
    done = core.run("formwork", "check", "forms.examples:EXAMPLES")
    assert done.returncode == 0, done.stdout + done.stderr
    assert checked_ids(done.stdout) == EXAMPLE_IDS
    (core.cwd / "my_forms.py").write_text(
        textwrap.dedent(
            """
            from forms import FormDef, Step, field

            class Leave(Step):
                title = "Leave"
                days: int = field("Days of leave", when=lambda v: v.dayz > 0)

            FORMS = [FormDef(id="leave", version=1, title="Leave", steps=[Leave])]
            """
        )
    )
    broken = core.run("formwork", "check", "my_forms:FORMS")
    assert broken.returncode == 1
    assert broken.stdout.startswith("my_forms.py:6: form 'leave': field 'days' when")
    # AND the local stack's commands say which extra they need
    demo = core.run("formwork", "demo")
    assert demo.returncode == 2
    assert "pip install 'formwork[local]'" in demo.stderr


def test_the_run_time_extras_import_and_serve_every_entry_point(
    venv: Callable[[str], Venv],
) -> None:
    # GIVEN `pip install formwork[aws,temporal]`: what a Lambda function or a worker has
    runtime = venv("aws,temporal")
    # WHEN every entry point is imported and the tool API's handler serves GET /tools
    event = ROOT / "tests" / "events" / "list_tools.json"
    probe = runtime.run("python", "-c", ENTRY_POINTS_PROBE, event)
    # THEN all of it works (X-Ray's SDK for Powertools' tracer is declared, not borrowed from
    # moto), and no test or local-stack package is installed
    assert probe.returncode == 0, probe.stderr
    result = last_json(probe.stdout)
    assert result["status"] == 200
    assert result["handlers"] == [True, True]
    assert {"form_start", "form_fill"} <= set(result["tools"])
    assert result["present"] == []
    done = runtime.run("formwork", "check", "forms.examples:EXAMPLES")
    assert done.returncode == 0, done.stdout + done.stderr
    assert checked_ids(done.stdout) == EXAMPLE_IDS


def test_the_client_extra_talks_to_the_api_without_any_cloud_sdk(
    venv: Callable[[str], Venv],
) -> None:
    # GIVEN `pip install formwork[client]`, and the tool API served on loopback by this process
    from forms.examples.travel_claim import travel_claim
    from formwork.aws.api import lambda_handler
    from formwork.infra.local.gateway import LocalGateway
    from tests.support import app_for, service_for

    app = app_for(service_for(travel_claim))

    def function(event: dict[str, Any], context: Any) -> dict[str, Any]:
        # Powertools' decorators leave the handler typed (...) -> Any: its own annotation here
        response: dict[str, Any] = lambda_handler(event, context, app=app)
        return response

    client = venv("client")
    with LocalGateway(function, port=0) as api:
        # WHEN the client and the chat loop are imported there and the client calls the API
        probe = client.run("python", "-c", CLIENT_PROBE, api.url, "httpx", *HEAVY)
    # THEN it lists the tools, starts a claim, reads its status line, with httpx alone
    assert probe.returncode == 0, probe.stderr
    result = last_json(probe.stdout)
    assert {"form_start", "form_fill"} <= set(result["tools"])
    assert result["started"] is True and result["lines"] == 1
    assert result["present"] == ["httpx"]


MCP_PROBE = """
import importlib.util, json, os, sys
import anyio
from mcp import Client, StdioServerParameters

async def main():
    command = os.path.join(os.path.dirname(sys.executable), "formwork")
    args = ["mcp", "--url", sys.argv[1], "--conversation", "conv-mcp"]
    env = {**os.environ, "FORMWORK_TOKEN": "dev:installer"}
    async with Client(StdioServerParameters(command=command, args=args, env=env)) as mcp:
        tools = [tool.name for tool in (await mcp.list_tools()).tools]
        started = await mcp.call_tool("form_start", {"form": "travel-claim"})
    return {
        "tools": tools,
        "started": started.structured_content["ok"],
        "present": [m for m in sys.argv[2:] if importlib.util.find_spec(m) is not None],
    }

print(json.dumps(anyio.run(main)))
"""


def test_the_mcp_extra_serves_formwork_mcp_over_stdio_without_any_cloud_sdk(
    venv: Callable[[str], Venv],
) -> None:
    # GIVEN `pip install formwork[mcp]`, and the tool API served on loopback by this process
    from forms.examples.travel_claim import travel_claim
    from formwork.aws.api import lambda_handler
    from formwork.infra.local.gateway import LocalGateway
    from tests.support import app_for, service_for

    app = app_for(service_for(travel_claim))

    def function(event: dict[str, Any], context: Any) -> dict[str, Any]:
        # Powertools' decorators leave the handler typed (...) -> Any: its own annotation here
        response: dict[str, Any] = lambda_handler(event, context, app=app)
        return response

    installed = venv("mcp")
    with LocalGateway(function, port=0) as api:
        # WHEN the SDK's client there launches `formwork mcp` and calls a tool through it
        probe = installed.run("python", "-c", MCP_PROBE, api.url, "httpx", *HEAVY, timeout=180)
    # THEN the stdio server serves the form tools from the API, with the extra alone
    assert probe.returncode == 0, probe.stderr
    result = last_json(probe.stdout)
    assert result["tools"][:2] == ["form_list", "form_start"]
    assert result["started"] is True
    assert result["present"] == ["httpx"]


def form_list(api: str) -> dict[str, Any]:
    body = json.dumps({"tool_call_id": "call_list", "input": {}}).encode()
    request = urllib.request.Request(
        f"{api}/conversations/conv-install/tools/form_list",
        body,
        {"Authorization": "Bearer dev:installer", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        listed: dict[str, Any] = json.loads(response.read())
    return listed


class Lines:
    """A child's stdout, read line by line on a thread, to wait for a line with a deadline."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.lines: list[str] = []
        self._new = threading.Condition()
        assert process.stdout is not None
        stream = process.stdout
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            with self._new:
                self.lines.append(line)
                self._new.notify_all()

    def wait_for(self, pattern: str, timeout: float) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        with self._new:
            while True:
                for line in self.lines:
                    if found := re.search(pattern, line):
                        return found
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no line matching {pattern!r} in {''.join(self.lines)}")
                self._new.wait(left)


MY_FORMS = """
from forms import FormDef, Step, field
from forms.examples import EXAMPLES


class Leave(Step):
    title = "Leave"
    days: int = field("Working days")


FORMS = [*EXAMPLES, FormDef(id="leave-request", version=1, title="Leave", steps=[Leave])]
"""
"""A user's forms module, beside the caller: the examples (for the demo) and one more."""
WEBHOOK_SECRETS = json.dumps({"crm": "a-crm-secret-" * 3})


@pytest.fixture
def local(venv: Callable[[str], Venv]) -> Venv:
    installed = venv("local")
    (installed.cwd / "my_forms.py").write_text(MY_FORMS)
    return installed


@pytest.fixture
def stack(local: Venv) -> Iterator[tuple[Lines, subprocess.Popen[str]]]:
    """`formwork dev` from the install, on free ports, stopped with Ctrl-C (SIGINT)."""
    process = subprocess.Popen(
        [
            local.path / "bin" / "formwork",
            "dev",
            *("--port", "0", "--dynamodb-port", "0"),
            *("--temporal-port", "0", "--temporal-ui-port", "0"),
        ],
        cwd=local.cwd,
        env=clean_environment(
            FORMWORK_FORMS="my_forms:FORMS", FORMWORK_WEBHOOK_SECRETS=WEBHOOK_SECRETS
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        yield Lines(process), process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def test_the_local_stack_and_the_demo_run_from_the_install_alone(
    local: Venv, stack: tuple[Lines, subprocess.Popen[str]]
) -> None:
    # GIVEN `pip install formwork[local]`, the template it reads inside the installed package
    where = local.run(
        "python", "-c", "from formwork.infra.local.dynamodb import TEMPLATE; print(TEMPLATE)"
    )
    template = Path(where.stdout.strip())
    assert template.is_file() and not template.is_symlink()
    assert local.path in template.parents
    # WHEN `formwork dev` runs from a folder that is not the checkout, serving the forms of a
    # module in that folder
    lines, process = stack
    api = lines.wait_for(r"^\s+API\s+(http://\S+)", timeout=90)[1]
    temporal = lines.wait_for(r"^\s+Temporal\s+(\S+)", timeout=5)[1]
    lines.wait_for(r"Formwork local stack is ready", timeout=5)
    # AND `formwork demo` talks to it over HTTP, webhooks and Temporal included
    demo = local.run(
        "formwork",
        *("demo", "--url", api, "--temporal", temporal),
        timeout=180,
        FORMWORK_WEBHOOK_SECRETS=WEBHOOK_SECRETS,
    )
    # THEN the demo sees every outcome it expects, and the stack stops on Ctrl-C
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    assert "every expected outcome seen" in demo.stdout
    assert "A CRM opens a travel claim by webhook" in demo.stdout
    # AND the functions serve the module's own form too
    listed = form_list(api)
    assert {"travel-claim", "leave-request"} <= {form["id"] for form in listed["forms"]}
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=30) == 0
    lines.wait_for(r"^Stopped\.", timeout=5)
