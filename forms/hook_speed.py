"""Which hooks a tool call does not wait for: declared slow, or learned slow from their runs.

With durable dispatch (``FORMWORK_DISPATCH=temporal``) a tool call waits up to
``FORMWORK_HOOK_WAIT_MS`` for the hooks it fired, so a routing hook's effect is in its result.
A hook that takes longer would hold the call (and its Lambda) for the whole wait and still
not be done; such a hook is started and not waited for, and the result lists it ``pending``
(the status line says it is running):

* **declared**: the executor is marked with ``slow`` (``on_fill=slow(issue_receipt)``, or
  ``@slow`` on its definition), wherever it is declared (a field's ``on_fill``, a step's or the
  form's ``on_complete``, a checkpoint's ``run``);
* **learned**: ``HookTimes`` keeps the last ``window`` run times of each hook (by form and hook
  id) that this process waited for; a run still going when the wait ended counts as taking
  the whole wait. Once ``window`` runs are known and their median reaches the wait, the hook
  is not waited for; every ``probe_every``-th firing of such a hook is waited for again, so a
  hook that got faster is learned back. What is learned lives in the process (a warm Lambda
  container): a new one learns again, from at most ``window`` calls held.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from statistics import median
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

SLOW_ATTRIBUTE = "__formwork_slow__"


def slow(executor: F) -> F:
    """Mark ``executor`` as slow: a tool call starts it and does not wait for it."""
    setattr(executor, SLOW_ATTRIBUTE, True)
    return executor


def declared_slow(executor: object) -> bool:
    """Whether ``executor`` was marked with ``slow``."""
    return getattr(executor, SLOW_ATTRIBUTE, False) is True


HookName = tuple[str, str]
"""A hook across instances: (form id, hook id)."""


class HookTimes:
    """The last run times of each hook, and whether a hook is slow for a given wait."""

    def __init__(self, window: int = 5, probe_every: int = 20) -> None:
        if window < 1 or probe_every < 1:
            raise ValueError("window and probe_every are at least 1")
        self.window = window
        self.probe_every = probe_every
        self._times: dict[HookName, deque[float]] = {}
        self._skipped: dict[HookName, int] = {}
        self._lock = threading.Lock()

    def record(self, hook: HookName, ms: float) -> None:
        """One run of ``hook`` took ``ms`` (or at least that long, when the wait ended first)."""
        with self._lock:
            self._times.setdefault(hook, deque(maxlen=self.window)).append(ms)

    def slow(self, hook: HookName, wait_ms: float) -> bool:
        """Whether a call should not wait for ``hook`` (asked once per firing: every
        ``probe_every``-th firing of a slow hook answers False, to measure it again)."""
        with self._lock:
            times = self._times.get(hook)
            if times is None or len(times) < self.window or median(times) < wait_ms:
                return False
            skipped = self._skipped.get(hook, 0) + 1
            self._skipped[hook] = skipped % self.probe_every
            return skipped % self.probe_every != 0
