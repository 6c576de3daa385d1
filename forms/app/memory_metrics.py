"""What memory counts, and how it names a failure in the log.

Memory never shows a failure to the model: each outcome of a recall, an apply or a recording is
logged on the ``formwork`` logger and counted under one of these names (``Memory.counts``, and
``count`` for metrics: ``formwork.services`` writes them as CloudWatch metrics). Recording's own
names are ``forms.app.remember``'s; all are importable from ``forms.app.memory``.
"""

from __future__ import annotations

from forms.app.remember import CONFIRMED, RECORD_FAILED, RECORDED, REFUSED

RECALL_OFF = "MemoryRecallOff"
"""A recall stopped at the principal's switch (memory off): no fact was read."""
RECALL_TIMEOUT = "MemoryRecallTimeout"
RECALL_FAILED = "MemoryRecallFailed"
APPLY_FAILED = "MemoryApplyFailed"
"""The commit writing what memory recalled failed; the form stays as started."""
FILLED = "MemoryFilled"
OFFERED = "MemoryOffered"
RECALL_OWED = "MemoryRecallOwed"
"""A start whose read came late: the instance records that the recall is owed."""
RECALL_DELIVERED = "MemoryRecallDelivered"
"""An owed recall delivered at a later call (what it offered counts as ``MemoryOffered``)."""
METRICS = (
    RECALL_OFF,
    RECALL_TIMEOUT,
    RECALL_FAILED,
    APPLY_FAILED,
    FILLED,
    OFFERED,
    RECALL_OWED,
    RECALL_DELIVERED,
    RECORDED,
    CONFIRMED,
    REFUSED,
    RECORD_FAILED,
)
"""Every name ``Memory`` counts, for metrics (a count each)."""


def described(exc: BaseException) -> str:
    """A failure as the log names it: its type and message, at most 300 characters."""
    return f"{type(exc).__name__}: {exc}"[:300]
