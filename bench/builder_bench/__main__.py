"""``python -m bench.builder_bench [--publish]``: play every builder scenario, print the tables,
and write ``builder.md``: under ``bench/results/runs/<UTC time>/``, or ``bench/results/``
with ``--publish`` (``make bench PUBLISH=1``; ``bench/runs.py``).

Like every bench it prints and writes and asserts nothing: a scenario that did not end as
expected is flagged in the tables (**no**), and ``tests/bench/test_builder_bench.py`` is what
fails on it.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from bench.builder_bench.harness import Outcome, play
from bench.builder_bench.report import builder_surface, form_surface, printed, render
from bench.builder_bench.scenarios import SCENARIOS
from bench.reports import stamped
from bench.runs import output_dir


def run() -> list[Outcome]:
    """Every scenario, in order."""
    return [play(scenario) for scenario in SCENARIOS]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.builder_bench", description=__doc__)
    parser.add_argument(
        "--publish", action="store_true", help="write bench/results/builder.md (tracked)"
    )
    args = parser.parse_args(argv)
    outcomes = run()
    forms, builder = form_surface(), builder_surface()
    print("\n".join(printed(outcomes, forms, builder)))
    out = output_dir(args.publish) / "builder.md"
    out.write_text(stamped("builder.md", "\n".join(render(outcomes, forms, builder)) + "\n"))
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
