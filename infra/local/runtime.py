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

import threading
import time
import traceback
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from formwork.infra.local.execution_environment import (
    ACCOUNT_ID,
    Console,
    Event,
    Handler,
    LambdaContext,
    _Environment,
    child_environment,
    import_handler,
    lambda_context,
)
from formwork.infra.local.function_config import (
    FunctionConfig,
    FunctionError,
    environment_names,
    functions_from_template,
)

__all__ = [
    "ACCOUNT_ID",
    "Console",
    "Event",
    "Function",
    "FunctionConfig",
    "FunctionError",
    "Handler",
    "InProcessFunction",
    "LambdaContext",
    "ProcessFunction",
    "child_environment",
    "environment_names",
    "functions_from_template",
    "import_handler",
    "lambda_context",
]


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
