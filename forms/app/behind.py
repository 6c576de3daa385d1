"""Work a call leaves running behind its answer, and waiting for it to end.

Memory answers within a deadline: a fact store read or a recording of facts that takes
longer goes on behind the tool call's answer, on memory's worker (``forms.app.memory``). A
long-running process finishes it by itself. A Lambda execution environment is frozen once
the invocation ends (the work then resumes with the next invocation) and may be retired
frozen, which loses it: a ``Behind`` notes such work (``track``), and ``settle`` waits for
what is still running, which the Lambda functions do after each response, before Lambda may
freeze the environment (``formwork.aws.after_response``).

An App has its own (``formwork.application.App.behind``), built by ``bootstrap`` and handed to
the ``Memory`` it builds; the after-response extension waits for the process's App's.
``PROCESS`` is what a ``Memory`` or an ``AfterResponse`` built by hand, without one, share.
Only the standard library, so the Lambda handlers can import it at a cold start.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, wait
from typing import Any


class Behind:
    """Work that may outlive its call's answer, until it ends. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[Future[Any]] = set()

    def track(self, future: Future[Any]) -> None:
        """Note ``future`` until it is done."""
        with self._lock:
            self._running.add(future)
        future.add_done_callback(self._done)

    def running(self) -> int:
        """How many tracked pieces of work have not ended."""
        with self._lock:
            return sum(not future.done() for future in self._running)

    def settle(self, timeout: float) -> int:
        """Wait up to ``timeout`` seconds for the work tracked now to end; how many pieces are
        still running then (0: none). (Work tracked during the wait is not waited for; after a
        handler has answered, nothing starts more.)"""
        with self._lock:
            pending = [future for future in self._running if not future.done()]
        if not pending:
            return 0
        _, still = wait(pending, timeout=max(timeout, 0.0))
        return len(still)

    def _done(self, future: Future[Any]) -> None:
        with self._lock:
            self._running.discard(future)


PROCESS = Behind()
"""The work behind answers of a ``Memory`` built without a ``behind`` of its own (an App's
has one, ``App.behind``)."""
