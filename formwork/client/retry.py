"""How often, and after how long, the client sends a request again.

A tool call is sent again, under the same tool-call id and with the same input, when:

* nothing usable came back: the connection failed, was dropped or timed out (the call may
  have been applied all the same: the API had it, and the answer was lost);
* the API answered 5xx (a function that failed or timed out) or 429 (throttled);
* the API answered the call ``busy``: its write lost to other writers on every attempt the
  API made itself, and nothing was saved.

The same id is what makes this safe: a write the API applied is recorded under its id, and
the same id again is answered with the first result (``"replayed": true``) and applies
nothing, so a retry is a replay, never a second write. Reads (``GET /tools``, the status
lines) are sent again on the same failures. Nothing else is: a 4xx or a tool's refusal is the
same the next time.

The waits are "full jitter": before retry ``n`` (0 for the second attempt), a uniform draw in
``[0, min(max_backoff, backoff * 2**n)]``, so that clients that failed together do not come
back together.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Retry:
    """A retry policy: at most ``attempts`` sends of one request (the first included), with
    jittered waits between them. ``draw`` gives the jitter, a number in [0, 1)."""

    attempts: int = 4
    backoff: float = 0.25
    """The ceiling of the first wait, in seconds; each later ceiling doubles."""
    max_backoff: float = 4.0
    """No wait is longer than this."""
    draw: Callable[[], float] = field(default=random.random, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("attempts must be at least 1 (the first send)")
        if self.backoff < 0 or self.max_backoff < 0:
            raise ValueError("backoff and max_backoff must not be negative")

    def delay(self, retry: int) -> float:
        """The wait before retry ``retry`` (0: before the second attempt), in seconds."""
        ceiling = min(self.max_backoff, self.backoff * 2.0**retry)
        return self.draw() * ceiling


NO_RETRY = Retry(attempts=1)
"""Send once: every failure raises (and a ``busy`` result is returned) at once."""
