"""The hook worker: ``python -m workflows.worker`` (``make worker``).

Connects to Temporal from the same environment variables the Lambda functions read
(``formwork.config``; the credentials from the Secrets Manager secret that
``FORMWORK_TEMPORAL_SECRET_ID`` names, or ``TEMPORAL_API_KEY`` locally), builds its App
with ``formwork.bootstrap`` (the same forms, the same DynamoDB table; no dispatcher, as the
worker is what runs the hooks: what their effects fire is started by the activities), and
serves ``HookWorkflow``, ``ApprovalWorkflow`` and their activities on ``TEMPORAL_TASK_QUEUE``
until SIGINT or SIGTERM, then finishes the activities in hand (up to ``--grace`` seconds) and
exits.

A ``notifier`` among the forms reads its outbound secret from this process's App
(``formwork.process``), made from the same environment.

Run it wherever you run workers: a container service (ECS/Fargate, Kubernetes), a VM, or a
laptop against the local stack. ``docs/dispatch.md`` discusses the options.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import sys
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from temporalio.client import Client
from temporalio.worker import Worker

from formwork.bootstrap import App, bootstrap
from formwork.config import ConfigError, Settings
from workflows.activities import HookActivities
from workflows.approvals import ApprovalWorkflow
from workflows.client import CredentialsUnavailable, connect
from workflows.hooks import HookWorkflow
from workflows.migrations import FormMigrationWorkflow, MigrationActivities

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
    attempts made as local activities (``workflows.hooks``) take the same number of slots of
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


def worker_app(settings: Settings) -> App:
    """The worker's App for ``settings``: its service records what hooks fire and dispatches
    nothing itself (the activities start what an executor's effects fire)."""
    return bootstrap(settings, dispatcher=None)


async def serve(
    app: App,
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
    polling starts. ``app`` is a ``worker_app``: one whose service has no dispatcher.
    ``alive_file`` is touched every ``ALIVE_EVERY`` seconds while the worker runs (the
    container's health check reads its age)."""
    if app.dispatcher is not None:
        raise ValueError("the worker runs hooks; its App has no dispatcher (see worker_app)")
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workflows.worker", description=__doc__)
    parser.add_argument(
        "--ready-file", type=Path, help="write this file once the worker is polling"
    )
    parser.add_argument(
        "--sticky-timeout",
        type=float,
        default=10.0,
        help="seconds before a dead worker's cached workflows move to another (default 10)",
    )
    parser.add_argument(
        "--grace", type=float, default=30.0, help="seconds to finish activities on shutdown"
    )
    parser.add_argument("--threads", type=int, default=16, help="executor threads")
    parser.add_argument(
        "--alive-file",
        type=Path,
        help=f"touch this file every {ALIVE_EVERY:.0f} s while the worker runs (health checks)",
    )
    args = parser.parse_args(argv)
    try:
        settings = Settings.from_env()
        settings.require_table()
    except ConfigError as exc:
        print(f"workflows.worker: {exc}", file=sys.stderr)
        return 2

    async def run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)

        def ready() -> None:
            queue = settings.temporal.task_queue
            print(
                f"worker polling {settings.temporal.address} namespace "
                f"{settings.temporal.namespace} task queue {queue}",
                flush=True,
            )
            if args.ready_file is not None:
                args.ready_file.write_text(str(os.getpid()))

        await serve(
            worker_app(settings),
            stop=stop,
            ready=ready,
            sticky_timeout=args.sticky_timeout,
            grace=args.grace,
            threads=args.threads,
            alive_file=args.alive_file,
        )

    try:
        asyncio.run(run())
    except (ConfigError, CredentialsUnavailable) as exc:
        # the Temporal secret (FORMWORK_TEMPORAL_SECRET_ID) is read when connecting
        print(f"workflows.worker: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
