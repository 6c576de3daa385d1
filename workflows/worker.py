"""The Temporal worker: what serves the workflows and their activities, given an App.

``serve(app, ...)`` connects with the App's Temporal settings, serves ``HookWorkflow``,
``ApprovalWorkflow``, ``FormMigrationWorkflow`` and their activities (``build_worker``) on
``TEMPORAL_TASK_QUEUE`` until told to stop, then finishes the activities in hand (up to
``grace`` seconds). The process that makes the App and calls ``serve`` is
``formwork.worker`` (``python -m formwork.worker``): this shell is given its App and imports
nothing of ``formwork``. ``python -m formwork.temporal.worker`` starts that process too (it
was the worker's command before ``formwork.worker``).
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from temporalio.client import Client
from temporalio.worker import Worker

from formwork.temporal.activities import HookActivities
from formwork.temporal.approvals import ApprovalWorkflow
from formwork.temporal.client import connect
from formwork.temporal.hooks import HookWorkflow
from formwork.temporal.migrations import FormMigrationWorkflow, MigrationActivities
from formwork.temporal.settings import TemporalSettings

if TYPE_CHECKING:
    from forms.app.service import FormService

WORKFLOWS = (HookWorkflow, ApprovalWorkflow, FormMigrationWorkflow)
"""Every workflow type the worker serves: each needs recorded histories the replay tests hold
new code to (``tests/temporal/test_replay.py``, docs/dispatch.md "Changing a workflow")."""


def build_worker(
    client: Client,
    activities: HookActivities,
    *,
    task_queue: str,
    sticky_timeout: float = 10.0,
    grace: float = 30.0,
    threads: int = 16,
) -> Worker:
    """A worker serving ``HookWorkflow``, ``ApprovalWorkflow`` and ``activities`` on
    ``task_queue``.

    It takes at most ``threads`` activity tasks at a time, the threads the executors run on
    (``HookActivities``): a task Temporal hands a worker counts as started, so a worker that
    took more than it can run would hold the rest queued in its process, and if it died they
    would wait for their heartbeat timeout. With as many slots as threads, a hook that is not
    running stays in the task queue, where any live worker picks it up at once. The first
    attempts made as local activities (``formwork.temporal.hooks``) take the same number of slots of
    their own: what a worker holds of those is bounded by the workflow task's timeout, after
    which another worker runs the attempt."""
    return Worker(
        client,
        task_queue=task_queue,
        workflows=list(WORKFLOWS),
        activities=[
            activities.run_hook_activity,
            activities.settle_approval_activity,
            MigrationActivities(activities.service).migrate_page,
        ],
        sticky_queue_schedule_to_start_timeout=timedelta(seconds=sticky_timeout),
        graceful_shutdown_timeout=timedelta(seconds=grace),
        max_concurrent_activities=threads,
        max_concurrent_local_activities=threads,
    )


class ServedSettings(Protocol):
    """What ``serve`` reads of the App's settings: how to reach Temporal."""

    @property
    def temporal(self) -> TemporalSettings: ...


class ServedApp(Protocol):
    """What ``serve`` reads of the App it serves (``formwork.application.App``, as
    ``formwork.worker.worker_app`` makes it)."""

    @property
    def settings(self) -> ServedSettings: ...
    @property
    def service(self) -> FormService: ...
    @property
    def dispatcher(self) -> object: ...


async def serve(
    app: ServedApp,
    *,
    stop: asyncio.Event,
    ready: Callable[[], None] | None = None,
    sticky_timeout: float = 10.0,
    grace: float = 30.0,
    threads: int = 16,
    activities_class: type[HookActivities] = HookActivities,
    alive_file: Path | None = None,
) -> None:
    """Connect, serve ``app``'s service until ``stop`` is set, shut down. ``ready`` runs once
    polling starts. ``app`` is a ``formwork.worker.worker_app``: one whose service has no
    dispatcher. ``alive_file`` is touched every ``ALIVE_EVERY`` seconds while the worker runs
    (the container's health check reads its age)."""
    if app.dispatcher is not None:
        raise ValueError(
            "the worker runs hooks; its App has no dispatcher (see formwork.worker.worker_app)"
        )
    settings = app.settings
    identity = f"formwork-worker-{os.getpid()}@{socket.gethostname()}"
    client = await connect(settings.temporal, identity=identity)
    activities = activities_class(
        app.service, client, task_queue=settings.temporal.task_queue, threads=threads
    )
    worker = build_worker(
        client,
        activities,
        task_queue=settings.temporal.task_queue,
        sticky_timeout=sticky_timeout,
        grace=grace,
        threads=threads,
    )
    try:
        async with worker:
            beating = None
            if alive_file is not None:
                alive_file.touch()  # alive from the moment it polls
                beating = asyncio.create_task(_keep_alive(worker, alive_file))
            if ready is not None:
                ready()
            try:
                await stop.wait()
            finally:
                if beating is not None:
                    beating.cancel()
    finally:
        activities.close()


ALIVE_EVERY = 10.0
"""Seconds between touches of the alive file (the health check allows several missed)."""


async def _keep_alive(worker: Worker, path: Path) -> None:
    """Touch ``path`` while ``worker`` runs. A worker whose pollers failed for good stops
    running; the file then ages and the container's health check fails, so ECS replaces it
    (so does an event loop too busy to get here)."""
    while worker.is_running:
        path.touch()
        await asyncio.sleep(ALIVE_EVERY)


if __name__ == "__main__":
    # The command of earlier releases: the process is formwork.worker's now. Run as a program
    # only, never when imported, so the Temporal shell still imports nothing of formwork.
    from formwork.worker import main

    raise SystemExit(main())
