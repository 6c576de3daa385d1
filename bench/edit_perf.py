"""The builder's edit engine: the cost of one edit against the size of the draft.

A builder agent edits a draft in small calls (``forms.documents.apply_edit``), and every call
is checked against the whole draft, so the question is how an edit's cost grows with the
draft: here, drafts of 13, 100 and 300 fields (300 is the default plan's ``max_fields``), with
the same mix of kinds, a rule on every tenth field and a checkpoint that sets a field. Timed:

* ``update_field`` ``{"required": true}`` on a field of the first step (the usual edit);
* ``add_field`` of a short text to the last step (the plan's limit raised by one for it);
* ``set_checkpoint`` replacing the checkpoint (its ``set`` value is checked against the field);
* ``update_field`` on a draft whose every field has settings this process has not seen yet
  (``unseen``: what the first edit of a draft costs before anything about it is cached).

Absolute times do not carry from one run or machine to the next, so each size is reported as
a ratio to the 13-field draft measured in the same run, interleaved with it (a block of the
13-field edit, then a block of the larger one, in turn); the ratio's range is the lowest and
highest block. Nothing here is asserted.

Run: ``.venv/bin/python -m bench.edit_perf`` (``--blocks``, ``--rounds``: blocks per case and
edits per block).
"""

from __future__ import annotations

import argparse
import gc
import itertools
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from forms.documents import FormDocument, Limits, apply_edit

SIZES = (13, 100, 300)
BASE = SIZES[0]
_KINDS: tuple[dict[str, Any], ...] = (
    {"kind": "single_choice", "options": [{"value": "x"}, {"value": "y"}]},
    {"kind": "short_text", "min_length": 2},
    {"kind": "email"},
    {"kind": "integer", "minimum": 0, "maximum": 1_000},
    {"kind": "date", "earliest": "2020-01-01"},
    {"kind": "decimal", "minimum": 0, "decimal_places": 2},
    {"kind": "multiple_choice", "options": [{"value": "a"}, {"value": "b"}, {"value": "c"}]},
    {"kind": "boolean", "required": False},
    {"kind": "long_text", "max_length": 2_000},
    {"kind": "phone"},
)
_UNSEEN = itertools.count(1)
_ROOM = Limits(max_fields=max(SIZES) + 1)
"""Room for one more field on the largest draft."""
_WARM = 2
"""Calls of each case before the blocks."""


def draft(fields: int) -> FormDocument:
    """A draft of ``fields`` fields, ten to a step; field 1 of each step applies when field 0
    is "x", and one checkpoint sets field 3 (an integer) of the first step."""
    steps = []
    for s in range((fields + 9) // 10):
        items = []
        for j in range(min(10, fields - 10 * s)):
            item: dict[str, Any] = {"id": f"f{s}_{j}", "label": f"Field {s}.{j}", **_KINDS[j]}
            if j == 1:
                item["when"] = {"field": f"f{s}_0", "op": "equals", "value": "x"}
            items.append(item)
        steps.append({"id": f"s{s}", "title": f"Step {s}", "items": items})
    return FormDocument.model_validate(
        {"id": "big", "title": "Big", "steps": steps, "checkpoints": [_checkpoint(10)]}
    )


def unseen_draft(fields: int) -> FormDocument:
    """A draft of ``fields`` integers, ten to a step, each with a maximum no field made before
    in this process had: nothing about its fields' types can have been kept."""
    steps = []
    for s in range((fields + 9) // 10):
        items = [
            {
                "id": f"f{s}_{j}",
                "label": f"Field {s}.{j}",
                "kind": "integer",
                "maximum": 1_000_000 + next(_UNSEEN),
            }
            for j in range(min(10, fields - 10 * s))
        ]
        steps.append({"id": f"s{s}", "title": f"Step {s}", "items": items})
    return FormDocument.model_validate({"id": "big", "title": "Big", "steps": steps})


def _checkpoint(value: int) -> dict[str, Any]:
    return {
        "id": "cap",
        "when": {"field": "f0_3", "op": "greater_than", "value": 900},
        "then": [{"action": "set", "field": "f0_3", "value": value}],
    }


def _edits(document: FormDocument) -> dict[str, Callable[[], object]]:
    last_step = document.steps[-1].id
    required = {"field": "f0_3", "updates": {"required": True}}
    added = {"step": last_step, "field": {"kind": "short_text", "label": "Extra"}}
    return {
        "update_field": lambda: apply_edit(document, "update_field", required),
        "add_field": lambda: apply_edit(document, "add_field", added, limits=_ROOM),
        "set_checkpoint": lambda: apply_edit(document, "set_checkpoint", _checkpoint(20)),
    }


def _unseen(fields: int, calls: int) -> Callable[[], object]:
    """``update_field`` on a new unseen draft each call (the drafts are made beforehand)."""
    pool = iter([unseen_draft(fields) for _ in range(calls)])
    label = {"field": "f0_3", "updates": {"label": "Renamed"}}
    return lambda: apply_edit(next(pool), "update_field", label)


@dataclass(frozen=True)
class Row:
    """One case at one size: the median time of one edit, and the ratio to the 13-field
    draft's (the median of the blocks' ratios, with the lowest and the highest)."""

    ms: float
    ratio: float
    low: float
    high: float


def _block(work: Callable[[], object], rounds: int) -> float:
    """The median time of one call of ``work`` over ``rounds`` calls, in ms."""
    samples = []
    for _ in range(rounds):
        start = time.perf_counter_ns()
        work()
        samples.append(time.perf_counter_ns() - start)
    return statistics.median(samples) / 1e6


def compare(
    work: Callable[[], object], base: Callable[[], object], blocks: int, rounds: int
) -> Row:
    gc.collect()
    _block(base, _WARM)  # warm both: first calls build what later calls reuse
    _block(work, _WARM)
    times, ratios = [], []
    for _ in range(blocks):
        base_ms = _block(base, rounds)
        work_ms = _block(work, rounds)
        times.append(work_ms)
        ratios.append(work_ms / base_ms)
    return Row(statistics.median(times), statistics.median(ratios), min(ratios), max(ratios))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--blocks", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args(argv)
    drafts = {size: draft(size) for size in SIZES}
    cases = {size: _edits(document) for size, document in drafts.items()}
    print(f"one edit against the draft's size; ratio to the {BASE}-field draft, same run")
    print(f"({args.blocks} blocks of {args.rounds} edits; range: lowest-highest block;")
    print(f"the {BASE}-field column is that draft against itself: the noise)\n")
    print(f"{'edit':<16}" + "".join(f"{f'{size} fields':>28}" for size in SIZES))
    names = [*cases[BASE], "unseen"]
    for name in names:
        cells = []
        for size in SIZES:
            if name == "unseen":
                calls = _WARM + args.blocks * args.rounds
                work, base = _unseen(size, calls), _unseen(BASE, calls)
            else:
                work, base = cases[size][name], cases[BASE][name]
            row = compare(work, base, args.blocks, args.rounds)
            cells.append(f"{row.ms:8.2f} ms {row.ratio:5.2f}× ({row.low:.2f}-{row.high:.2f})")
        print(f"{name:<16}" + "".join(f"{cell:>28}" for cell in cells))


if __name__ == "__main__":
    main()
