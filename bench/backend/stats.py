"""Order statistics and table formatting for the backend benchmarks (no timing here)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass


def percentile(samples: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (0-100) with linear interpolation between closest ranks.

    The same definition as numpy's default: rank ``(n - 1) * p / 100`` of the sorted samples.
    """
    if not samples:
        raise ValueError("percentile of no samples")
    if not 0 <= p <= 100:
        raise ValueError(f"percentile {p} is outside 0-100")
    ordered = sorted(samples)
    rank = (len(ordered) - 1) * p / 100
    low = math.floor(rank)
    high = math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


@dataclass(frozen=True, slots=True)
class Summary:
    """Median and tail of a set of durations, in seconds."""

    n: int
    median: float
    p99: float
    low: float
    high: float

    @classmethod
    def of(cls, samples: Sequence[float]) -> Summary:
        return cls(
            n=len(samples),
            median=percentile(samples, 50),
            p99=percentile(samples, 99),
            low=min(samples),
            high=max(samples),
        )


def duration(seconds: float) -> str:
    """A duration for a table: µs below a millisecond, ms below ten seconds, else s."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 10:
        return f"{seconds * 1e3:.1f} ms" if seconds < 0.1 else f"{seconds * 1e3:.0f} ms"
    return f"{seconds:.1f} s"


def ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}×" if base > 0 else "n/a"


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table; numbers right-aligned, text left-aligned, columns padded to fit."""
    cells = [[str(h) for h in headers], *[[str(c) for c in row] for row in rows]]
    for row in cells:
        if len(row) != len(headers):
            raise ValueError(f"row {row} has {len(row)} cells, expected {len(headers)}")
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    numeric = [
        len(cells) > 1
        and all(_numeric(row[i]) for row in cells[1:])
        and any(row[i] not in ("-", "n/a") for row in cells[1:])
        for i in range(len(headers))
    ]

    def line(row: Sequence[str]) -> str:
        padded = [
            cell.rjust(widths[i]) if numeric[i] else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join(
        "-" * (w + 1) + ":" if numeric[i] else "-" * (w + 2) for i, w in enumerate(widths)
    )
    return "\n".join([line(cells[0]), rule + "|", *(line(row) for row in cells[1:])])


_NUMBER = re.compile(r"-?[\d,]+(\.\d+)?(×|%| ?(µs|ms|s|calls/s))?|-|n/a")


def _numeric(cell: str) -> bool:
    """A number, optionally with a unit (``12``, ``1,000``, ``4.2 ms``, a ratio, ``-``)."""
    return _NUMBER.fullmatch(cell) is not None
