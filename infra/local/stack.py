"""The whole backend on this machine, without Docker: ``python -m infra.local`` (``make dev``).

``LocalStack`` starts, in order: moto's DynamoDB served single-threaded in a child process
(``infra.local.dynamodb``), the table as ``template.yaml`` declares it, the template's functions
in local execution environments (child processes importing the real handler, with the
environment a deployed function would get, pointed at the local endpoint), and the local API
gateway on loopback in front of them. ``stop`` undoes it in reverse order. Ports are
configurable; 0 picks a free one (what tests use).

The handler's environment: ``TABLE_NAME``, ``DYNAMODB_ENDPOINT_URL``, ``AWS_REGION`` and
``AWS_DEFAULT_REGION``, ``TENANT_CLAIM=tenant`` (so ``Bearer dev:<tenant>:<sub>`` gives the
principal ``<tenant>/<sub>``), dummy credentials, plus the template's own variables
(``POWERTOOLS_*``). Nothing here changes this process's ``os.environ``.
"""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from infra.local.dynamodb import TEMPLATE, LocalDynamoDB, client, create_table, load_template
from infra.local.gateway import LocalGateway, check_loopback, dev_token, routes_from_template
from infra.local.runtime import ProcessFunction, functions_from_template

API_PORT = 3000
DYNAMODB_PORT = 8000
TABLE_NAME = "formwork-local"
REGION = "us-east-1"
TENANT_CLAIM = "tenant"
DEFAULT_URL = f"http://127.0.0.1:{API_PORT}"
TABLE_RESOURCE = "FormsTable"


def _check_port_free(host: str, port: int, what: str, flag: str) -> None:
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as sock:
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
        environment: Mapping[str, str] | None = None,
        template: Path = TEMPLATE,
    ) -> None:
        check_loopback(host)
        self.host = host
        self.api_port = api_port
        self.dynamodb_port = dynamodb_port
        self.table_name = table_name
        self.tenant_claim = tenant_claim
        self.max_environments = max_environments
        self.log_level = log_level
        self.quiet = quiet
        self.access_log = access_log
        self.extra_environment = dict(environment or {})
        self.template = template
        self.dynamodb: LocalDynamoDB | None = None
        self.functions: dict[str, ProcessFunction] = {}
        self.gateway: LocalGateway | None = None

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

    def dynamodb_client(self) -> Any:
        """A boto3 client on the stack's DynamoDB endpoint (to look at what was stored)."""
        return client(self.dynamodb_endpoint)

    @property
    def environment(self) -> dict[str, str]:
        """What the handler's process gets on top of the template's variables."""
        return {
            "TABLE_NAME": self.table_name,
            "DYNAMODB_ENDPOINT_URL": self.dynamodb_endpoint,
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,
            "TENANT_CLAIM": self.tenant_claim,
            "AWS_ACCESS_KEY_ID": "local",
            "AWS_SECRET_ACCESS_KEY": "local",
            "AWS_SAM_LOCAL": "true",
            "POWERTOOLS_TRACE_DISABLED": "true",
            **self.extra_environment,
        }

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> LocalStack:
        _check_port_free(self.host, self.api_port, "the API", "--port")
        _check_port_free("127.0.0.1", self.dynamodb_port, "DynamoDB", "--dynamodb-port")
        try:
            self.dynamodb = LocalDynamoDB(self.dynamodb_port or None).start()
            create_table(self.dynamodb_client(), self.table_name, self.template)
            template = load_template(self.template)
            parameters = {"TenantClaim": self.tenant_claim}
            if self.log_level:
                parameters["LogLevel"] = self.log_level
            configs = functions_from_template(
                template, parameters, resources={TABLE_RESOURCE: self.table_name}
            )
            for logical_id, config in configs.items():
                function = ProcessFunction(
                    config,
                    self.environment,
                    max_environments=self.max_environments,
                    quiet=self.quiet,
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
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self.gateway is not None:
            self.gateway.stop()
            self.gateway = None
        for function in self.functions.values():
            function.close()
        self.functions = {}
        if self.dynamodb is not None:
            self.dynamodb.stop()
            self.dynamodb = None

    def __enter__(self) -> LocalStack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


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
