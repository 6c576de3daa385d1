"""``python -m bench.memory_bench [--publish]``: play every labelled case, print the tables,
and write ``memory.md``: under ``bench/results/runs/<UTC time>/``, or ``bench/results/`` with
``--publish`` (``make bench PUBLISH=1``; ``bench/runs.py``).

Like every bench it prints and writes and asserts nothing: a case that did not go as labelled
is listed under the findings, and ``tests/bench/test_memory_bench.py`` is what fails on it.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence

from bench.memory_bench.cases import CASES
from bench.memory_bench.grading import Totals, grade, totals
from bench.memory_bench.harness import play
from bench.memory_bench.report import printed, render
from bench.reports import stamped
from bench.runs import output_dir


def run() -> Totals:
    """Every case, played and graded, in order."""
    return totals([grade(play(case)) for case in CASES])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.memory_bench", description=__doc__)
    parser.add_argument(
        "--publish", action="store_true", help="write bench/results/memory.md (tracked)"
    )
    args = parser.parse_args(argv)
    # the failing and slow stores fail on purpose: memory's warnings about them are expected
    log = logging.getLogger("formwork")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        graded = run()
    finally:
        log.setLevel(level)
    print("\n".join(printed(graded)))
    out = output_dir(args.publish) / "memory.md"
    out.write_text(stamped("memory.md", "\n".join(render(graded)) + "\n"))
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
