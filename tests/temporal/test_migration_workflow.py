"""An operator's bulk migration as the production worker runs it (``FormMigrationWorkflow``
and its activity), on Temporal's time-skipping test server: the tenant's open instances on an
older version move page by page, one whose conversion fails stays and is reported, another
tenant's is never touched, and a second run finds only what could not move."""

from __future__ import annotations

import asyncio

import pytest
from temporalio.client import Client

from forms.app.migrations import plan_migration
from forms.app.operations import Operator
from forms.storage import InMemoryFormStore
from formwork.temporal.activities import HookActivities
from formwork.temporal.migrations import (
    MIGRATION_WORKFLOW,
    MigrationInput,
    MigrationOutcome,
    workflow_id,
)
from formwork.temporal.worker import build_worker
from tests.support import service_for
from tests.temporal.record import time_skipping
from tests.unit.test_migrations import FIRST, SECOND, started

pytestmark = pytest.mark.integration  # a local server process, on loopback

QUEUE = "formwork-migrations-tests"


async def run(client: Client, page_size: int) -> MigrationOutcome:
    migration = MigrationInput("acme/olga", "order", 2, page_size=page_size)
    outcome: MigrationOutcome = await client.execute_workflow(
        MIGRATION_WORKFLOW,
        migration,
        id=workflow_id(migration.principal, migration.form_id, migration.to_version),
        task_queue=QUEUE,
        result_type=MigrationOutcome,
    )
    return outcome


def test_the_workflow_moves_the_tenants_instances_page_by_page() -> None:
    store = InMemoryFormStore()
    good = [started(store, "acme/ana", f"c{n}", str(n)) for n in range(3)]
    bad = started(store, "acme/bo", "c9", "nine")
    theirs = started(store, "globex/gus", "c8", "8")
    service = service_for(FIRST, SECOND, store=store)
    # GIVEN the dry run's word for it
    plan = plan_migration(service, Operator("acme/olga", frozenset({"operator"})), "order")
    assert {p.instance_id: p.outcome for p in plan.instances} == {
        **dict.fromkeys(good, "moves"),
        bad: "fails",
    }

    async def scenario() -> tuple[MigrationOutcome, MigrationOutcome]:
        async with await time_skipping() as env:
            activities = HookActivities(service, env.client, task_queue=QUEUE, threads=2)
            try:
                async with build_worker(env.client, activities, task_queue=QUEUE, grace=1.0):
                    return await run(env.client, 2), await run(env.client, 2)
            finally:
                activities.close()

    first, second = asyncio.run(scenario())
    # THEN the run did what the dry run said, two instances a page
    assert first.moved == 3 and list(first.failed) == [bad] and first.pages == 2
    assert "code" in first.failed[bad]
    assert all(store.get(i).form_version == 2 for i in good)
    assert store.get(bad).form_version == 1 and store.get(theirs).form_version == 1
    # AND a second run finds only the instance that could not move
    assert second.moved == 0 and list(second.failed) == [bad] and second.pages == 1


def test_a_start_that_cannot_reach_temporal_is_start_failed() -> None:
    from forms.app.migrations import StartFailed
    from formwork.temporal.dispatch import TemporalConnection
    from formwork.temporal.migration_starter import TemporalMigrationStarter

    async def unreachable() -> Client:
        raise RuntimeError("connection refused")

    connection = TemporalConnection(unreachable)
    try:
        starter = TemporalMigrationStarter(connection, QUEUE, timeout=5.0)
        with pytest.raises(StartFailed, match="connection refused"):
            starter.start_migration("acme/olga", "order", 2)
    finally:
        connection.close()
