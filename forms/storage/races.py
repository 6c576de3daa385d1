"""Racing writers, for the contract suites of every store (no pytest here): the one way they
start several writes of one thing at once and see which landed."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

_T = TypeVar("_T")


def race(count: int, attempt: Callable[[int], _T]) -> list[_T]:
    """Run ``attempt(n)`` for n in 0..count-1 on as many threads, released together; what
    each returned, by ``n``. An exception of any attempt is raised here."""
    start = threading.Barrier(count)

    def run(n: int) -> _T:
        start.wait()
        return attempt(n)

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(run, range(count)))


def landed(
    count: int,
    attempt: Callable[[int], object],
    lost: type[BaseException] | tuple[type[BaseException], ...],
) -> list[int]:
    """``race`` ``count`` attempts, each of which lands or is refused with ``lost``; the ``n``
    of those that landed (any other exception is raised here)."""

    def tried(n: int) -> bool:
        try:
            attempt(n)
        except lost:
            return False
        return True

    return [n for n, won in enumerate(race(count, tried)) if won]
