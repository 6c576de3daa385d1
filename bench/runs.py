"""Where a bench run writes its reports: a folder of its own, unless asked to publish.

Timings change with every run, so a run writes under ``bench/results/runs/<UTC time>/``
(ignored by git) and leaves the tracked reports alone. ``--publish`` (``make bench
PUBLISH=1``) writes the tracked ones in ``bench/results/`` instead, for a change that is meant
to update them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
"""The tracked reports."""
RUNS = RESULTS / "runs"
"""One folder per unpublished run (git ignores it)."""


def output_dir(publish: bool, now: datetime | None = None) -> Path:
    """The folder this run writes to, created: the tracked one, or the run's own."""
    if publish:
        folder = RESULTS
    else:
        stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
        folder = RUNS / stamp
    folder.mkdir(parents=True, exist_ok=True)
    return folder
