"""Time without sleeping: a timer the bench moves, an executor that runs memory's work at
once and says when it would have finished, and a fact store that records, slows and fails.

Memory reads the fact store on a worker and waits for it within its deadline
(``forms.app.memory.MemoryCall``), measuring the wait with the ``timer`` it was given. Here
that timer is ``VirtualTimer``: it moves only when the bench says so. ``VirtualExecutor`` runs
each piece of work on the caller's thread when it is submitted, while the store charges each
request's latency to that piece of work instead of to the timer, so the work *finishes* at
``submitted + its latency``. Waiting for it (``Future.result(timeout)``) then moves the timer
to whichever comes first: that moment, or the end of the timeout (and times out). So a slow
store costs the tool call exactly what memory let it cost, on the timer, with no wall-clock
sleep, the same on every run; a store that never answers is one whose latency is infinite.

Because the work has already run, what a late read or write did still happens (a write that
misses its deadline "goes on behind", as on a real worker); what the call may not do is use a
read that finished after it stopped waiting, and the bench checks exactly that.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from concurrent.futures import Executor, Future
from typing import Any, TypeVar

from forms.errors import StoreError
from forms.memory import FactHead, FactRevision, MemorySettings
from forms.storage.facts import InMemoryFactStore

T = TypeVar("T")

NEVER = math.inf
"""The latency of a store that never answers."""

EVERY = frozenset(["settings", "heads", "head", "history", "export", "append", "put_settings"])
"""Every request a fact store makes (all of them failing: a store that is down)."""


class VirtualTimer:
    """Monotonic seconds that move only when spent (``spend``) or waited (``wait_until``).
    Time spent inside a piece of work on ``VirtualExecutor`` is that work's, not the caller's."""

    def __init__(self) -> None:
        self.now = 0.0
        self._work: list[float] = []

    def __call__(self) -> float:
        return self.now

    def spend(self, seconds: float) -> None:
        """Time a request takes: the running work's, or the caller's when none runs."""
        if self._work:
            self._work[-1] += seconds
        else:
            self.now += seconds

    def run(self, work: Callable[[], T]) -> tuple[float, T | None, BaseException | None]:
        """Run ``work`` now; how long it took, its value and what it raised."""
        self._work.append(0.0)
        try:
            value, error = work(), None
        except Exception as exc:
            value, error = None, exc
        return self._work.pop(), value, error


class _Finishes(Future[T]):
    """A future whose work has run and whose result counts from ``at`` on the timer."""

    def __init__(
        self, timer: VirtualTimer, at: float, value: T | None, error: BaseException | None
    ) -> None:
        super().__init__()
        self._timer, self._at, self._value, self._error = timer, at, value, error

    def done(self) -> bool:
        return self._at <= self._timer.now

    def result(self, timeout: float | None = None) -> T:
        if timeout is not None and self._at > self._timer.now + timeout:
            self._timer.now += timeout
            raise TimeoutError
        self._timer.now = max(self._timer.now, self._at)
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


class VirtualExecutor(Executor):
    """Runs work when it is submitted; its future finishes when the work's requests say."""

    def __init__(self, timer: VirtualTimer) -> None:
        self._timer = timer

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        started = self._timer.now
        took, value, error = self._timer.run(lambda: fn(*args, **kwargs))
        return _Finishes(self._timer, started + took, value, error)


class BenchFacts(InMemoryFactStore):
    """The in-memory fact store, recording every request its primitives make, with whose
    memory it was (``requests``: ``(request, principal)``), each request taking ``latency``
    seconds on the timer and the ones named in ``fails`` raising ``StoreError``."""

    def __init__(self, timer: VirtualTimer) -> None:
        super().__init__()
        self.timer = timer
        self.requests: list[tuple[str, str]] = []
        self.latency = 0.0
        self.fails: Collection[str] = frozenset()

    def _request(self, name: str, principal: str) -> None:
        self.requests.append((name, principal))
        self.timer.spend(self.latency)
        if name in self.fails:
            raise StoreError(f"the fact store is down ({name})")

    def _read_head(self, principal: str, key: str) -> FactHead | None:
        self._request("head", principal)
        return super()._read_head(principal, key)

    def _read_heads(self, principal: str) -> list[FactHead]:
        self._request("heads", principal)
        return super()._read_heads(principal)

    def _read_history(self, principal: str, key: str) -> list[FactRevision]:
        self._request("history", principal)
        return super()._read_history(principal, key)

    def _read_all(self, principal: str) -> list[FactRevision]:
        self._request("export", principal)
        return super()._read_all(principal)

    def _read_settings(self, principal: str) -> MemorySettings | None:
        self._request("settings", principal)
        return super()._read_settings(principal)

    def _write_settings(self, principal: str, settings: MemorySettings) -> None:
        self._request("put_settings", principal)
        super()._write_settings(principal, settings)

    def _write(
        self, principal: str, before: FactHead | None, after: FactHead, revision: FactRevision
    ) -> None:
        self._request("append", principal)
        super()._write(principal, before, after, revision)
