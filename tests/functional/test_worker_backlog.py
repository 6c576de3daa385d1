"""The backlog function's way to Temporal: the workflow service alone, on the process's one
connection (``formwork.temporal.connection``), never the SDK's client.

The connects are stand-ins (``ServiceClient.connect`` and ``Client.connect`` recorded, the
workflow service faked); ``tests/integration/test_worker_backlog.py`` reads a real queue of the
Temporal dev server.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest
from google.protobuf.duration_pb2 import Duration
from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import PollerInfo, TaskQueueStats
from temporalio.api.workflowservice.v1 import DescribeTaskQueueResponse
from temporalio.client import Client, TLSConfig
from temporalio.service import ConnectConfig, ServiceClient

from formwork.aws.backlog import lambda_handler
from formwork.backlog import read_backlog
from formwork.config import Settings, TemporalSettings
from formwork.temporal import connection as temporal_connection
from formwork.temporal.client import connect, connect_service
from formwork.temporal.connection import TemporalConnection
from tests.functional.test_cold_start import run
from tests.support import app_for

API_KEY = "tmprl-api-key-0123456789abcdef"
WAITING = {TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW: 4, TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY: 2}


@dataclass
class FakeWorkflowService:
    """Answers ``DescribeTaskQueue`` with ``WAITING`` tasks, the activity tasks 30 s old, and
    the same worker polling both types; keeps the requests."""

    requests: list[Any] = field(default_factory=list)

    async def describe_task_queue(self, request: Any) -> DescribeTaskQueueResponse:
        self.requests.append(request)
        age = 30 if request.task_queue_type == TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY else 5
        return DescribeTaskQueueResponse(
            stats=TaskQueueStats(
                approximate_backlog_count=WAITING[request.task_queue_type],
                approximate_backlog_age=Duration(seconds=age),
            ),
            pollers=[PollerInfo(identity="worker-1")],
        )


@dataclass
class FakeServices:
    """Stands in for a connected ``ServiceClient``."""

    config: ConnectConfig
    workflow_service: FakeWorkflowService = field(default_factory=FakeWorkflowService)


@dataclass
class Connects:
    """Records the connects: the services' (``ServiceClient.connect``) and the client's."""

    services: list[FakeServices] = field(default_factory=list)
    clients: list[dict[str, Any]] = field(default_factory=list)


@pytest.fixture
def connects(monkeypatch: pytest.MonkeyPatch) -> Connects:
    made = Connects()

    async def services(config: ConnectConfig) -> FakeServices:
        made.services.append(FakeServices(config))
        return made.services[-1]

    async def client(target: str, **kwargs: Any) -> str:
        made.clients.append({"target": target, **kwargs})
        return "client"

    monkeypatch.setattr(ServiceClient, "connect", services)
    monkeypatch.setattr(Client, "connect", client)
    return made


@pytest.fixture
def settings() -> TemporalSettings:
    return TemporalSettings("ns.acct.tmprl.cloud:7233", "ns.acct", "hooks-a", api_key=API_KEY)


@pytest.fixture
def process_connection(settings: TemporalSettings) -> Any:
    """The process's connection for ``settings``, closed and forgotten afterwards."""
    yield temporal_connection.connection_for(settings)
    temporal_connection._connections.pop(settings).close()


def test_the_backlog_function_never_imports_the_temporal_client() -> None:
    # GIVEN a fresh interpreter, the workflow service faked behind ServiceClient.connect (no
    # test module imported: this one imports the client)
    code = (
        "import sys, json, types\n"
        "import formwork.aws.backlog\n"
        "after_import = 'temporalio.client' in sys.modules\n"
        "from temporalio.api.workflowservice.v1 import DescribeTaskQueueResponse\n"
        "from temporalio.service import ServiceClient\n"
        "async def describe(request):\n"
        "    return DescribeTaskQueueResponse()\n"
        "async def services(config):\n"
        "    workflow = types.SimpleNamespace(describe_task_queue=describe)\n"
        "    return types.SimpleNamespace(workflow_service=workflow)\n"
        "ServiceClient.connect = services\n"
        "from formwork.bootstrap import bootstrap\n"
        "from formwork.config import Settings, TemporalSettings\n"
        "app = bootstrap(Settings(temporal=TemporalSettings(task_queue='q')))\n"
        "summary = formwork.aws.backlog.lambda_handler({}, None, app=app)\n"
        "after_call = [m for m in ('temporalio.client', 'formwork.temporal.dispatch')\n"
        "              if m in sys.modules]\n"
        "print(json.dumps([after_import, summary['task_queue'], after_call]))\n"
    )
    # WHEN the handler module is imported and the function runs
    # THEN it read the backlog and neither the client nor the dispatcher was imported
    assert run(code) == [False, "q", []]


def test_the_services_connect_as_the_client_does(connects: Connects, tmp_path: Any) -> None:
    # GIVEN settings with an API key and a server CA and name (TLS by a config)
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n")
    settings = TemporalSettings(
        "h.example:7233", "ns", api_key=API_KEY, tls_ca=str(ca), tls_server_name="h"
    )

    # WHEN the services alone and a client connect for them
    async def both() -> None:
        await connect_service(settings, identity="formwork-lambda")
        await connect(settings, identity="formwork-lambda")

    asyncio.run(both())
    # THEN the services have the client's address, key, TLS and identity
    (service,), (client,) = connects.services, connects.clients
    config = service.config
    assert (config.target_host, config.api_key, config.identity) == (
        client["target"],
        client["api_key"],
        client["identity"],
    )
    assert isinstance(config.tls, TLSConfig) and config.tls == client["tls"]
    assert (config.tls.server_root_ca_cert, config.tls.domain) == (ca.read_bytes(), "h")


def test_the_backlog_is_read_in_the_settings_namespace(
    connects: Connects, settings: TemporalSettings, process_connection: TemporalConnection
) -> None:
    # WHEN the backlog is read through the process's connection
    backlog = read_backlog(settings, timeout=5)
    # THEN both task types of the queue were described, in the settings' namespace
    (service,) = connects.services
    requests = service.workflow_service.requests
    assert [(r.namespace, r.task_queue.name, r.report_stats) for r in requests] == [
        ("ns.acct", "hooks-a", True)
    ] * 2
    assert {r.task_queue_type for r in requests} == set(WAITING)
    # AND the counts, the oldest age and the distinct pollers are the backlog
    assert (backlog.workflow_tasks, backlog.activity_tasks, backlog.tasks) == (4, 2, 6)
    assert (backlog.age_seconds, backlog.workers, backlog.per_worker) == (30.0, 1, 6.0)
    # AND no client was connected (the services carry the API key and TLS themselves)
    assert connects.clients == []
    assert service.config.api_key == API_KEY and service.config.tls is True


def test_a_process_that_reads_the_backlog_and_dispatches_has_one_connection(
    connects: Connects, settings: TemporalSettings, process_connection: TemporalConnection
) -> None:
    app = app_for(settings=Settings(temporal=settings))
    # GIVEN the backlog function ran in this process
    summary = lambda_handler({}, None, app=app)
    assert summary["per_worker"] == 6.0
    # WHEN a dispatch then asks for the client
    client = process_connection.run(process_connection.client(), timeout=5)
    # THEN it is made from the same services, in the settings' namespace: nothing connected again
    (service,) = connects.services
    made: Any = client.service_client
    assert isinstance(client, Client) and made is service
    assert client.namespace == "ns.acct" and connects.clients == []
    read_backlog(settings, timeout=5)
    assert len(connects.services) == 1


def test_the_services_of_a_connected_client_are_its_own() -> None:
    services = FakeServices(ConnectConfig(target_host="h:1"))
    client = Client(services, namespace="ns")  # type: ignore[arg-type]
    opened: list[str] = []

    async def connect_client() -> Client:
        opened.append("client")
        return client

    async def connect_services() -> ServiceClient:
        opened.append("services")
        return services  # type: ignore[return-value]

    connection = TemporalConnection(connect_client, connect_service=connect_services)
    try:
        # GIVEN a connection whose client connected first (a dispatch)
        assert connection.run(connection.client(), timeout=5) is client
        # WHEN the services are asked for (a backlog read)
        found: Any = connection.run(connection.service(), timeout=5)
        # THEN they are the client's: one connect in all
        assert found is services and opened == ["client"]
    finally:
        connection.close()


def test_asked_at_once_both_levels_wait_for_one_connect() -> None:
    opened: list[str] = []
    release = asyncio.Event()

    async def connect_client() -> Client:
        raise AssertionError("the client is made from the services")

    async def connect_services() -> ServiceClient:
        opened.append("services")
        await release.wait()
        return FakeServices(ConnectConfig(target_host="h:1"))  # type: ignore[return-value]

    connection = TemporalConnection(connect_client, connect_service=connect_services, namespace="n")

    async def both() -> tuple[ServiceClient, Client]:
        asked = asyncio.gather(connection.service(), connection.client())
        await asyncio.sleep(0)
        release.set()
        return await asked

    try:
        services, client = connection.run(both(), timeout=5)
        assert opened == ["services"] and client.service_client is services
    finally:
        connection.close()


def test_a_failed_connect_is_tried_again_by_the_next_ask() -> None:
    attempts: list[int] = []

    async def connect_client() -> Client:
        raise AssertionError("not asked for")

    async def connect_services() -> ServiceClient:
        attempts.append(len(attempts))
        if len(attempts) == 1:
            raise RuntimeError("connection refused")
        return FakeServices(ConnectConfig(target_host="h:1"))  # type: ignore[return-value]

    connection = TemporalConnection(connect_client, connect_service=connect_services)
    try:
        with pytest.raises(RuntimeError, match="connection refused"):
            connection.run(connection.service(), timeout=5)
        assert isinstance(connection.run(connection.service(), timeout=5), FakeServices)
        assert attempts == [0, 1]
    finally:
        connection.close()


def test_without_a_services_connect_the_client_is_connected_for_them() -> None:
    services = FakeServices(ConnectConfig(target_host="h:1"))

    async def connect_client() -> Client:
        return Client(services, namespace="ns")  # type: ignore[arg-type]

    connection = TemporalConnection(connect_client)
    try:
        found: Any = connection.run(connection.service(), timeout=5)
        assert found is services
    finally:
        connection.close()
