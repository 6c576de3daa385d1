"""The backlog function (``formwork.aws.backlog``) against the Temporal dev server: what it
reads of a task queue, and the metrics the worker service scales on."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator

import pytest
from temporalio.client import Client

from formwork.aws.backlog import lambda_handler
from formwork.config import Settings, TemporalSettings
from formwork.infra.local.temporal import LocalTemporal
from formwork.temporal.connection import connection_for
from tests.support import app_for


@pytest.fixture(scope="module")
def temporal() -> Iterator[LocalTemporal]:
    with LocalTemporal() as server:
        yield server


def test_the_backlog_of_a_queue_no_worker_polls_is_published_per_worker(
    temporal: LocalTemporal, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "formwork")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "Formwork")
    queue = f"backlog-{uuid.uuid4().hex[:8]}"

    # GIVEN three hook runs waiting on a queue no worker polls (all workers gone)
    async def start() -> None:
        client = await Client.connect(temporal.address)
        for n in range(3):
            await client.start_workflow("HookWorkflow", id=f"{queue}-{n}", task_queue=queue)

    asyncio.run(start())
    app = app_for(settings=Settings(temporal=TemporalSettings(temporal.address, task_queue=queue)))
    capsys.readouterr()
    # WHEN the scheduled function runs
    summary = lambda_handler({}, None, app=app)
    # THEN it counts the three waiting workflow tasks and no worker
    assert summary["workflow_tasks"] == 3 and summary["activity_tasks"] == 0
    assert summary["workers"] == 0
    # AND publishes the backlog per worker as all of them (with no worker, more are needed)
    assert summary["per_worker"] == 3
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines() if "_aws" in line]
    by_name = {r["_aws"]["CloudWatchMetrics"][0]["Metrics"][0]["Name"]: r for r in records}
    per_worker = by_name["BacklogPerWorker"]
    assert per_worker["BacklogPerWorker"] in (3, [3])
    # with the dimensions the template's scaling policy names
    assert per_worker["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "Formwork"
    assert sorted(per_worker["_aws"]["CloudWatchMetrics"][0]["Dimensions"][0]) == [
        "TaskQueue",
        "service",
    ]
    assert (per_worker["TaskQueue"], per_worker["service"]) == (queue, "formwork")
    assert set(by_name) == {"BacklogPerWorker", "Backlog", "BacklogAgeSeconds", "PollingWorkers"}


def test_a_dispatch_after_the_backlog_uses_the_backlogs_connection(
    temporal: LocalTemporal,
) -> None:
    queue = f"backlog-{uuid.uuid4().hex[:8]}"
    settings = TemporalSettings(temporal.address, task_queue=queue)
    app = app_for(settings=Settings(temporal=settings))
    # GIVEN the backlog function ran in this process: an empty queue, on the services alone
    assert lambda_handler({}, None, app=app)["workflow_tasks"] == 0
    connection = connection_for(settings)

    # WHEN a run is started on the process's connection's client (as a dispatch does)
    async def start() -> bool:
        client = await connection.client()
        await client.start_workflow("HookWorkflow", id=f"{queue}-0", task_queue=queue)
        return client.service_client is await connection.service()

    shared = connection.run(start(), timeout=20)
    # THEN the run started on a client made from the backlog's services: one connection
    assert shared
