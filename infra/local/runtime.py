"""Local Lambda execution environments for the dev gateway.

Powertools' resolvers keep the current event on a class attribute, so one Python process must
never run two invocations at once, which is also how Lambda behaves: an execution environment
serves one request at a time and concurrency comes from more of them. ``ProcessFunction`` keeps
a pool of child processes, each importing the handler once (its cold start) and serving one
invocation at a time; a burst of requests spreads over up to ``max_environments`` of them, so
concurrent writes really race, as they do in AWS. ``InProcessFunction`` calls a Python callable
in this process, one invocation at a time (for tests with a stand-in handler).

Function settings (handler, timeout, memory, environment) come from ``template.yaml``.
"""

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
from dataclasses import dataclass, field
from datetime import UTC, datetime
from multiprocessing.connection import Connection
from typing import IO, Any, Protocol, runtime_checkable

from infra.local.dynamodb import ROOT

Event = dict[str, Any]
Handler = Callable[[Event, Any], Any]
Console = Callable[[str], None]
"""Takes each line a function writes to stdout (see ``infra.local.console``)."""

ACCOUNT_ID = "000000000000"
_CHILD = "from infra.local.runtime import _environment_child; _environment_child()"


class FunctionError(RuntimeError):
    """The function failed: it raised, timed out, died, or returned something unusable."""


@dataclass(frozen=True, slots=True)
class FunctionConfig:
    """What a local execution environment needs to know about one function."""

    logical_id: str
    handler: str
    """``module.attribute`` as in the template's ``Handler``."""
    timeout: float = 3.0
    memory_mb: int = 128
    environment: Mapping[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"formwork-local-{self.logical_id}"


def functions_from_template(
    template: Mapping[str, Any],
    parameters: Mapping[str, str] | None = None,
    resources: Mapping[str, str] | None = None,
) -> dict[str, FunctionConfig]:
    """The template's functions with their environment resolved for a local run.

    ``!Ref`` to a parameter takes ``parameters[name]``, else the parameter's ``Default``;
    ``!Ref`` to a resource takes ``resources[logical_id]`` (its local physical name). Values
    that need a deployed stack (``!GetAtt``, ``!Sub``) are left out.
    """
    parameters = parameters or {}
    resources = resources or {}
    declared = template.get("Parameters", {})

    def resolve(value: Any) -> str | None:
        if isinstance(value, bool):
            return str(value).lower()
        if isinstance(value, str | int | float):
            return str(value)
        if isinstance(value, dict) and set(value) == {"Ref"}:
            name = value["Ref"]
            if name in parameters:
                return parameters[name]
            if name in declared:
                return str(declared[name].get("Default", ""))
            return resources.get(name)
        return None

    defaults = template.get("Globals", {}).get("Function", {})
    functions: dict[str, FunctionConfig] = {}
    for logical_id, resource in template.get("Resources", {}).items():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        props = {**defaults, **resource.get("Properties", {})}
        variables = {
            **(defaults.get("Environment") or {}).get("Variables", {}),
            **(resource.get("Properties", {}).get("Environment") or {}).get("Variables", {}),
        }
        environment = {k: v for k, raw in variables.items() if (v := resolve(raw)) is not None}
        functions[logical_id] = FunctionConfig(
            logical_id=logical_id,
            handler=str(props["Handler"]),
            timeout=float(props.get("Timeout", 3)),
            memory_mb=int(props.get("MemorySize", 128)),
            environment=environment,
        )
    return functions


def environment_names(template: Mapping[str, Any]) -> list[str]:
    """Every variable the template's ``Environment`` gives a function (``Globals`` first, then
    each function's), in template order, once each: the settings a deployment passes."""
    sources = [template.get("Globals", {}).get("Function", {})]
    sources += [
        resource.get("Properties", {})
        for resource in template.get("Resources", {}).values()
        if resource.get("Type") == "AWS::Serverless::Function"
    ]
    names: dict[str, None] = {}
    for properties in sources:
        names.update(dict.fromkeys((properties.get("Environment") or {}).get("Variables", {})))
    return list(names)


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


@runtime_checkable
class Function(Protocol):
    """Something the gateway can invoke with an event, as Lambda invokes a function."""

    def invoke(self, event: Event) -> Any: ...

    def close(self) -> None: ...


class InProcessFunction:
    """A callable run in this process, one invocation at a time (a single environment)."""

    def __init__(self, handler: Handler, config: FunctionConfig | None = None) -> None:
        self.handler = handler
        self.config = config or FunctionConfig("LocalFunction", "local.handler", timeout=15)
        self._lock = threading.Lock()

    def invoke(self, event: Event) -> Any:
        deadline = int(time.time() * 1000 + self.config.timeout * 1000)
        with self._lock:
            try:
                return self.handler(event, lambda_context(self.config, deadline))
            except Exception as exc:
                traceback.print_exc()
                raise FunctionError(f"{self.config.name} raised {exc!r}") from exc

    def close(self) -> None:
        pass


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


class ProcessFunction:
    """A function served by a pool of child processes, one invocation at a time each.

    Environments start on demand (each pays the handler's import, like a Lambda cold start)
    up to ``max_environments``; more concurrent requests wait for one to be free. ``start``
    warms ``warm`` environments so an import error shows at once. With ``console``, what the
    environments write to stdout goes to it line by line (the dev console's filter).
    """

    def __init__(
        self,
        config: FunctionConfig,
        environment: Mapping[str, str] | None = None,
        *,
        max_environments: int = 4,
        warm: int = 1,
        quiet: bool = False,
        console: Console | None = None,
    ) -> None:
        if max_environments < 1:
            raise ValueError("max_environments must be at least 1")
        self.config = config
        self.environment = {
            **config.environment,
            "AWS_LAMBDA_FUNCTION_NAME": config.name,
            "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(config.memory_mb),
            **(environment or {}),
        }
        self.max_environments = max_environments
        self.quiet = quiet
        self.console = console
        self.warm = min(warm, max_environments)
        self._idle: list[_Environment] = []
        self._count = 0
        self._closed = False
        self._cond = threading.Condition()

    def start(self) -> ProcessFunction:
        started = [self._spawn() for _ in range(self.warm)]
        with self._cond:
            self._idle.extend(started)
            self._cond.notify_all()
        return self

    def _spawn(self) -> _Environment:
        with self._cond:
            self._count += 1
        try:
            return _Environment(self.config, self.environment, self.quiet, self.console)
        except BaseException:
            with self._cond:
                self._count -= 1
                self._cond.notify_all()
            raise

    def _acquire(self) -> _Environment:
        with self._cond:
            while True:
                if self._closed:
                    raise FunctionError(f"{self.config.name} is shut down")
                if self._idle:
                    return self._idle.pop()
                if self._count < self.max_environments:
                    break
                self._cond.wait()
        return self._spawn()

    def _release(self, environment: _Environment) -> None:
        with self._cond:
            if environment.alive and not self._closed:
                self._idle.append(environment)
            else:
                self._count -= 1
                if self._closed:
                    environment.stop()
            self._cond.notify()

    def invoke(self, event: Event) -> Any:
        environment = self._acquire()
        try:
            return environment.invoke(event)
        finally:
            self._release(environment)

    @property
    def environments(self) -> int:
        """How many execution environments exist now (busy or idle)."""
        with self._cond:
            return self._count

    def close(self) -> None:
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._cond.notify_all()
        for environment in idle:
            environment.stop()
