"""A bare Temporal round trip on the local dev server, as a floor for the hook path: a workflow
that runs one no-op activity, started and awaited by a client in the same process as its
worker (the most favourable place), nothing of Formwork's. Its start-to-result time is what
any one-activity workflow costs on this server, whatever the activity does."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import timedelta

from temporalio import activity, workflow
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.worker import Worker

from formwork.infra.local.temporal import LocalTemporal


@activity.defn(name="bench_noop")
async def noop(value: int) -> int:
    return value


@workflow.defn(name="BenchBare", sandboxed=False)
class Bare:
    @workflow.run
    async def run(self, value: int) -> int:
        return await workflow.execute_activity(
            noop, value, start_to_close_timeout=timedelta(seconds=10)
        )


async def _measure(address: str, rounds: int) -> dict[str, list[float]]:
    client = await Client.connect(address)
    queue = f"bench-bare-{uuid.uuid4().hex[:6]}"
    found: dict[str, list[float]] = {"start to result": [], "workflow task picked up": []}
    async with Worker(client, task_queue=queue, workflows=[Bare], activities=[noop]):
        for n in range(rounds + 5):
            started = time.perf_counter()
            handle = await client.start_workflow(
                Bare.run, n, id=f"bare-{uuid.uuid4().hex}", task_queue=queue
            )
            await handle.result()
            took = (time.perf_counter() - started) * 1000
            events = (await handle.fetch_history()).events
            when: dict[int, float] = {}
            for event in events:
                when.setdefault(event.event_type, event.event_time.ToDatetime().timestamp())
            pickup = (
                when[EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED]
                - when[EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED]
            )
            if n >= 5:
                found["start to result"].append(took)
                found["workflow task picked up"].append(pickup * 1000)
    return found


def measure(rounds: int) -> dict[str, list[float]]:
    """Times (ms) of ``rounds`` bare runs on a dev server of their own."""
    with LocalTemporal() as server:
        return asyncio.run(_measure(server.address, rounds))
