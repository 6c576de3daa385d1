"""One local Lambda execution environment: a child Python process that imports the handler
once (its cold start) and serves one invocation at a time, and the context object it hands the
handler (``formwork.infra.local.runtime`` keeps a pool of them)."""

from __future__ import annotations

import contextlib
import json
import os
import pkgutil
import socket
import subprocess
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from multiprocessing.connection import Connection
from typing import IO, Any

from formwork.infra.local.dynamodb import ROOT
from formwork.infra.local.function_config import FunctionConfig, FunctionError

Event = dict[str, Any]
Handler = Callable[[Event, Any], Any]
Console = Callable[[str], None]
"""Takes each line a function writes to stdout (see ``formwork.infra.local.console``)."""

ACCOUNT_ID = "000000000000"
_CHILD = (
    "from formwork.infra.local.execution_environment import _environment_child; "
    "_environment_child()"
)


@dataclass(slots=True)
class LambdaContext:
    """The context object the Lambda runtime passes to a handler (the attributes it reads)."""

    function_name: str
    aws_request_id: str
    deadline_ms: int
    memory_limit_in_mb: int = 128
    function_version: str = "$LATEST"
    invoked_function_arn: str = ""
    log_group_name: str = ""
    log_stream_name: str = ""
    identity: Any = None
    client_context: Any = None
    tenant_id: str | None = None

    def get_remaining_time_in_millis(self) -> int:
        return max(0, self.deadline_ms - int(time.time() * 1000))


def lambda_context(config: FunctionConfig, deadline_ms: int) -> LambdaContext:
    name = config.name
    return LambdaContext(
        function_name=name,
        aws_request_id=str(uuid.uuid4()),
        deadline_ms=deadline_ms,
        memory_limit_in_mb=config.memory_mb,
        invoked_function_arn=f"arn:aws:lambda:us-east-1:{ACCOUNT_ID}:function:{name}",
        log_group_name=f"/aws/lambda/{name}",
        log_stream_name=f"{datetime.now(UTC):%Y/%m/%d}/[$LATEST]{uuid.uuid4().hex}",
    )


def import_handler(path: str) -> Handler:
    """``package.module.attribute`` (the template's ``Handler``) as a callable."""
    module_name, _, attribute = path.rpartition(".")
    if not module_name:
        raise ValueError(f"a handler is module.attribute, not {path!r}")
    handler: Handler = pkgutil.resolve_name(f"{module_name}:{attribute}")
    return handler


def _environment_child() -> None:
    """Entry point of one execution environment (a child process; see ``_Environment``).

    ``argv``: the socket's file descriptor and the handler. The handler is imported once (the
    cold start), then each message is one invocation. Messages are JSON, both ways, as they
    are between the Lambda service and a runtime.
    """
    fd, handler_path = int(sys.argv[1]), sys.argv[2]
    conn = Connection(fd)
    try:
        handler = import_handler(handler_path)
    except BaseException:
        _send(conn, {"status": "init_error", "detail": traceback.format_exc()})
        return
    _send(conn, {"status": "ready"})
    while True:
        try:
            message = json.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        if message is None:
            return
        try:
            result = handler(message["event"], LambdaContext(**message["context"]))
            _send(conn, {"status": "ok", "result": result})
        except Exception:
            trace = traceback.format_exc()
            print(trace, file=sys.stderr, flush=True)
            _send(conn, {"status": "error", "detail": trace.strip().splitlines()[-1]})


def _send(conn: Connection, message: Any) -> None:
    conn.send_bytes(json.dumps(message).encode())


def _receive(conn: Connection) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(conn.recv_bytes())
    return message


_LEAKED = ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN")
"""Real-account settings of the developer's shell that a local function must never pick up."""


def child_environment(environment: Mapping[str, str]) -> dict[str, str]:
    """What an execution environment's process gets: this process's environment (less the
    real-account settings in ``_LEAKED``) with ``environment`` laid over it, and the
    repository on its ``PYTHONPATH``."""
    env = {k: v for k, v in os.environ.items() if k not in _LEAKED}
    env.update(environment)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    return env


class _Environment:
    """One execution environment: a child Python process serving one invocation at a time.

    A plain subprocess (not ``multiprocessing``), so the parent's ``__main__`` is never
    re-imported, and the function's environment variables are in place before its first
    import, as in Lambda. Its own session, so Ctrl-C reaches the parent only, which stops it.
    Its stdout is this process's, or, with ``console``, a pipe whose lines go to ``console``.
    """

    def __init__(
        self,
        config: FunctionConfig,
        environment: Mapping[str, str],
        quiet: bool = False,
        console: Console | None = None,
    ) -> None:
        self.config = config
        ours, theirs = socket.socketpair()
        env = child_environment(environment)
        output = subprocess.DEVNULL if quiet else None
        piped = console is not None and not quiet
        if piped:
            env["PYTHONUNBUFFERED"] = "1"  # each line reaches the console when it is written
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", _CHILD, str(theirs.fileno()), config.handler],
                cwd=ROOT,
                env=env,
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE if piped else output,
                stderr=output,
                start_new_session=True,
            )
        finally:
            theirs.close()
        if piped and console is not None and self.process.stdout is not None:
            threading.Thread(
                target=_pump,
                args=(self.process.stdout, console),
                name=f"stdout-{config.logical_id}-{self.process.pid}",
                daemon=True,
            ).start()
        self.conn = Connection(ours.detach())
        try:
            if not self.conn.poll(60):
                raise FunctionError(f"{config.name}: the environment did not start within 60s")
            reply = _receive(self.conn)
        except (EOFError, OSError, ValueError) as exc:
            self.kill()
            raise FunctionError(f"{config.name}: the environment died while starting") from exc
        except FunctionError:
            self.kill()
            raise
        if reply["status"] != "ready":
            self.kill()
            raise FunctionError(
                f"{config.name}: importing {config.handler} failed:\n{reply.get('detail')}"
            )

    def invoke(self, event: Event) -> Any:
        deadline = int(time.time() * 1000 + self.config.timeout * 1000)
        context = lambda_context(self.config, deadline)
        fields = {name: getattr(context, name) for name in LambdaContext.__slots__}
        try:
            _send(self.conn, {"event": event, "context": fields})
            if not self.conn.poll(self.config.timeout + 1):
                self.kill()
                raise FunctionError(f"{self.config.name} timed out after {self.config.timeout}s")
            reply = _receive(self.conn)
        except (EOFError, OSError, ValueError) as exc:
            self.kill()
            raise FunctionError(f"{self.config.name}: the environment died") from exc
        if reply["status"] != "ok":
            raise FunctionError(f"{self.config.name} raised {reply.get('detail')}")
        return reply.get("result")

    @property
    def alive(self) -> bool:
        return self.process.poll() is None and not self.conn.closed

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            _send(self.conn, None)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)
        self.kill()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if not self.conn.closed:
            self.conn.close()


def _pump(stream: IO[bytes], console: Console) -> None:
    """Hand each line of a child's stdout to ``console`` until the child closes it."""
    with stream:
        for raw in stream:
            console(raw.decode("utf-8", "replace").rstrip("\r\n"))
