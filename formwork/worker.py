"""The hook worker's process: ``python -m formwork.worker`` (``make worker``, and the deployed
worker container's command).

Connects to Temporal from the same environment variables the Lambda functions read
(``formwork.config``; the credentials from the Secrets Manager secret that
``FORMWORK_TEMPORAL_SECRET_ID`` names, or ``TEMPORAL_API_KEY`` locally), builds its App
with ``formwork.bootstrap`` (the same forms, the same DynamoDB table; no dispatcher, as the
worker is what runs the hooks: what their effects fire is started by the activities), and
serves ``HookWorkflow``, ``ApprovalWorkflow`` and their activities on ``TEMPORAL_TASK_QUEUE``
(``formwork.temporal.worker.serve``) until SIGINT or SIGTERM, then finishes the activities in hand
(up to ``--grace`` seconds) and exits.

The process lives here, beside the composition root, because it is what calls ``bootstrap``:
``formwork.temporal`` is the Temporal adapter, which ``formwork`` builds and which imports
nothing else of ``formwork`` (tests/unit/test_import_direction.py).
``python -m formwork.temporal.worker`` starts this one too.

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
import sys
from pathlib import Path

from formwork.bootstrap import App, bootstrap
from formwork.config import ConfigError, Settings
from formwork.temporal.client import CredentialsUnavailable
from formwork.temporal.worker import ALIVE_EVERY, serve

PROG = "python -m formwork.worker"


def worker_app(settings: Settings) -> App:
    """The worker's App for ``settings``: its service records what hooks fire and dispatches
    nothing itself (the activities start what an executor's effects fire)."""
    return bootstrap(settings, dispatcher=None)


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__)
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
    return parser


def main(argv: list[str] | None = None) -> int:
    args = arguments().parse_args(argv)
    try:
        settings = Settings.from_env()
        settings.require_table()
        asyncio.run(run(settings, args))
    except (ConfigError, CredentialsUnavailable) as exc:
        # a bad variable, or the Temporal secret (FORMWORK_TEMPORAL_SECRET_ID), read when
        # connecting
        print(f"formwork.worker: {exc}", file=sys.stderr)
        return 2
    return 0


async def run(settings: Settings, args: argparse.Namespace) -> None:
    """Serve until SIGINT or SIGTERM; say so once polling (and write ``--ready-file``)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)

    def ready() -> None:
        temporal = settings.temporal
        print(
            f"worker polling {temporal.address} namespace "
            f"{temporal.namespace} task queue {temporal.task_queue}",
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


if __name__ == "__main__":
    raise SystemExit(main())
