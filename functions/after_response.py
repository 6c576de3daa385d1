"""After the response: the work a call left behind ends before Lambda freezes the environment.

Memory answers a tool call within a deadline, and what takes longer (a slow recording of the
facts in an answer) goes on behind the answer (``forms.app.behind``). Lambda freezes an
execution environment as soon as an invocation ends: the work then resumes with the next
invocation, or is lost if the environment is retired first. An invocation ends when the
handler has answered *and* every extension registered in the environment has asked for its
next event; the caller has the response as soon as the handler answers.

``AfterResponse`` is an *internal* extension: a thread of the function's own process,
registered with the Lambda Extensions API while the function initialises (the handler
module's import). For each invocation it waits until the handler has answered (the handler
calls ``answered`` with its context), then for the tracked work, up to the invocation's
deadline less ``MARGIN_MS``, and only then asks for the next event. An invocation that left
nothing behind costs one local HTTP request; one that did is billed until its work ends, and
answers no later. Work still running at the deadline is logged (and resumes, as before, with
the next invocation).

The work waited for is the App's (``App.behind``, where its ``Memory`` tracks what it runs):
``install`` waits for this process's App's, the one a Lambda handler serves with. It registers
only on Lambda (``AWS_LAMBDA_RUNTIME_API`` set) and only in the function whose handler is the
caller's (``_HANDLER``): a module imported by another function's handler never registers, so
no invocation waits for an answer that never comes.
A registration that fails is logged and the function runs without it, as it did before.

Written by hand: Powertools has no Extensions API client, and the API is two HTTP requests
(register; next event), which ``http.client`` makes without another dependency. It is
imported when the extension registers, not with this module: outside Lambda (the local stack,
the tests, a handler imported by another function) nothing here makes a request, and
``http.client`` (with ``ssl`` and ``email``) is a tenth of a cold start's import.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from formwork import process

if TYPE_CHECKING:
    from formwork.bootstrap import App

_log = logging.getLogger("formwork")

NAME = "formwork-after-response"
"""The name the extension registers under."""
MARGIN_MS = 500
"""How long before the invocation's deadline the extension stops waiting."""
ATTEMPTS = 3
"""Failed next-event requests in a row before the extension reports an error and stops."""
_API = "/2020-01-01/extension"


def request_failures() -> tuple[type[Exception], ...]:
    """What a request to the Extensions API can fail with: no connection, a refusal or a body
    that is not an event (``ValueError``), a malformed HTTP answer (``HTTPException``, which is
    neither of the others). A function, so that ``http.client`` loads only when it is used (an
    ``except`` clause evaluates its expression only when an exception reaches it)."""
    import http.client

    return (OSError, ValueError, http.client.HTTPException)


_KEPT = 64
"""How many answered request ids are kept (an invocation is answered before or after the
extension hears of it; one environment serves one at a time)."""


class AfterResponse:
    """The internal extension: ``register`` (during the function's initialisation), then
    ``start`` its thread; the handler calls ``answered`` at the end of each invocation."""

    def __init__(
        self,
        runtime_api: str,
        settle: Callable[[float], int] | None = None,
        *,
        name: str = NAME,
        margin_ms: int = MARGIN_MS,
        now_ms: Callable[[], float] = lambda: time.time() * 1000,
    ) -> None:
        host, _, port = runtime_api.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"AWS_LAMBDA_RUNTIME_API is not host:port: {runtime_api!r}")
        self._host, self._port = host, int(port)
        if settle is None:  # the process-wide work, as a Memory built without an App tracks it
            from forms.app.behind import PROCESS

            settle = PROCESS.settle
        self._settle = settle
        self._name = name
        self._margin_ms = margin_ms
        self._now_ms = now_ms
        self._id: str | None = None
        self._answered: deque[str] = deque(maxlen=_KEPT)
        self._changed = threading.Condition()

    # ------------------------------------------------------------------ the handler's side

    def answered(self, request_id: str) -> None:
        """The handler has answered invocation ``request_id``."""
        with self._changed:
            self._answered.append(request_id)
            self._changed.notify_all()

    # ------------------------------------------------------------------ the extension

    def register(self) -> None:
        """Register for invocations; raises one of ``request_failures()`` when that fails."""
        status, headers, _ = self._request(
            "POST",
            f"{_API}/register",
            {"Lambda-Extension-Name": self._name},
            json.dumps({"events": ["INVOKE"]}).encode(),
        )
        identifier = headers.get("lambda-extension-identifier")
        if status != 200 or not identifier:
            raise ValueError(f"the Extensions API refused the registration ({status})")
        self._id = identifier

    def start(self) -> threading.Thread:
        """Start the thread that serves invocations (daemon: it never holds the process)."""
        if self._id is None:
            raise RuntimeError("register before starting")
        thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        thread.start()
        return thread

    def _run(self) -> None:
        failures = 0
        while True:
            try:
                event = self._next()
            except request_failures() as exc:
                failures += 1
                _log.warning("after-response: next event failed (%s)", type(exc).__name__)
                if failures >= ATTEMPTS:
                    self._exit_error(type(exc).__name__)
                    return
                time.sleep(0.1 * failures)  # a moment before asking again
                continue
            failures = 0
            if event.get("eventType") == "INVOKE":
                self.serve(event)

    def serve(self, event: dict[str, Any]) -> None:
        """One invocation: wait for its answer, then for the work behind it, within the
        deadline less the margin. Never raises: the next event must be asked for."""
        try:
            deadline = float(event["deadlineMs"]) - self._margin_ms
            request_id = str(event["requestId"])
        except (KeyError, TypeError, ValueError):
            _log.warning("after-response: an INVOKE event without deadlineMs or requestId")
            return
        if not self._wait_answered(request_id, deadline):
            _log.warning("after-response: the handler did not answer before the deadline")
            return
        try:
            left = self._settle(max(deadline - self._now_ms(), 0.0) / 1000)
        except Exception:
            _log.exception("after-response: waiting for the work behind the answer failed")
            return
        if left:
            _log.warning("after-response: %d pieces of work still running at the deadline", left)

    def _wait_answered(self, request_id: str, deadline_ms: float) -> bool:
        timeout = max(deadline_ms - self._now_ms(), 0.0) / 1000
        with self._changed:
            return self._changed.wait_for(lambda: request_id in self._answered, timeout)

    # ------------------------------------------------------------------ HTTP

    def _next(self) -> dict[str, Any]:
        status, _, body = self._request(
            "GET", f"{_API}/event/next", {"Lambda-Extension-Identifier": self._id or ""}
        )
        if status != 200:
            raise ValueError(f"next event: {status}")
        event = json.loads(body)
        if not isinstance(event, dict):
            raise ValueError("next event: not an object")
        return event

    def _exit_error(self, reason: str) -> None:
        try:
            self._request(
                "POST",
                f"{_API}/exit/error",
                {
                    "Lambda-Extension-Identifier": self._id or "",
                    "Lambda-Extension-Function-Error-Type": f"Extension.{reason}",
                },
                b"{}",
            )
        except request_failures():
            _log.warning("after-response: reporting its error failed")

    def _request(
        self, method: str, path: str, headers: dict[str, str], body: bytes | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        # no timeout: the next event is a long poll that lasts until Lambda has one
        import http.client

        connection = http.client.HTTPConnection(self._host, self._port, timeout=None)
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            data = response.read()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, data
        finally:
            connection.close()


def install(handler: str, app: Callable[[], App] = process.app) -> AfterResponse | None:
    """Register and start the extension when this process is the Lambda function whose
    handler is ``handler`` (``module.function``, as ``_HANDLER`` names it); None otherwise,
    or when the registration fails (logged). It waits for the work behind the answers of
    ``app()``: this process's App, the one the handler serves with on Lambda (its settings
    are not read here: a bad variable is still the first request's 500)."""
    runtime_api = os.environ.get("AWS_LAMBDA_RUNTIME_API")
    if not runtime_api or os.environ.get("_HANDLER") != handler:
        return None
    try:
        extension = AfterResponse(runtime_api, app().behind.settle)
        extension.register()
    except request_failures() as exc:
        _log.warning("after-response: not registered (%s); work behind an answer may wait", exc)
        return None
    extension.start()
    return extension


def answered(extension: AfterResponse | None, context: object) -> None:
    """What a handler calls as it answers: tells ``extension`` (if any) which invocation."""
    request_id = getattr(context, "aws_request_id", None)
    if extension is not None and isinstance(request_id, str):
        extension.answered(request_id)
