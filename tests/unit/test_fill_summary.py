"""A fill's summary sentence, written with its first clause capitalised as it is made.

``fill_result`` once joined its clauses and capitalised the first character of the text; it
now writes the first clause ("Started", "Saved" or "Declined") capitalised and appends the
rest. Here the two agree on every mix of what a fill can report: kept, held and declined
answers, replaced, confirmed, unchanged, rejected and unknown ids, for a start and a save.
"""

from __future__ import annotations

import itertools
from types import SimpleNamespace
from typing import Any

import pytest

from forms.fill_plans import FillPlan, Unknown, ValueRejection
from forms.surface.results import count, fill_result

FORM: Any = SimpleNamespace(title="Travel claim")


def reference(plan: FillPlan, held: list[str], verb: str) -> str:
    """The summary as the joined, capitalised clauses gave it before."""
    captured = plan.captured
    declined = [f for f in plan.declined if f not in held]
    kept = [f for f in captured if f not in held and f not in plan.declined]
    saved = f"saved {len(kept)}" + (f" ({', '.join(kept)})" if kept else "")
    if verb == "Started":
        parts = [f"Started {FORM.title}" + (f"; {saved}" if kept else "")]
    else:
        parts = [saved] if kept or not declined else []
    if declined:
        parts.append(f"declined {len(declined)} ({', '.join(declined)})")
    if held:
        parts.append(f"held {len(held)} that don't apply yet")
    if plan.replaced:
        parts.append(f"replaced {count(len(plan.replaced), 'earlier answer')}")
    if plan.confirmed:
        parts.append(f"confirmed {len(plan.confirmed)} from memory")
    if plan.unchanged:
        parts.append(f"{len(plan.unchanged)} unchanged")
    if plan.rejected:
        parts.append(f"rejected {len(plan.rejected)}")
    if plan.unknown:
        parts.append(f"{len(plan.unknown)} unknown id" + ("s" if len(plan.unknown) > 1 else ""))
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + "."


def transition(statuses: dict[str, str]) -> Any:
    """What ``fill_result`` reads of a transition: each field's status, and an instance that
    closed (so unknown ids list nothing more to ask: no other part of the form is read)."""
    fields = {f: SimpleNamespace(status=s) for f, s in statuses.items()}
    evaluation = SimpleNamespace(fields=fields, flipped=())
    after = SimpleNamespace(state=SimpleNamespace(status="completed"))
    return SimpleNamespace(evaluation=evaluation, after=after, dispatch=())


CAPTURED = [[], ["b_declined"], ["c_held"], ["b_declined", "c_held"], ["a_kept", "b_declined"]]
CAPTURED += [["a_kept", "b_declined", "c_held", "d_kept"]]
MIXES = list(itertools.product(CAPTURED, [False, True], [False, True], range(3), range(3)))


@pytest.mark.parametrize("verb", ["Started", "Saved"])
@pytest.mark.parametrize(("captured", "declines", "holds", "replaced", "others"), MIXES)
def test_the_summary_reads_as_the_joined_capitalised_clauses(
    verb: str, captured: list[str], declines: bool, holds: bool, replaced: int, others: int
) -> None:
    ids = captured
    statuses = {f: "held" if holds and f == "c_held" else "answered" for f in ids}
    plan = FillPlan(
        captured=ids,
        declined=[f for f in ids if declines and f == "b_declined"],
        replaced={f"r{n}": "old" for n in range(replaced)},
        confirmed=[f"m{n}" for n in range(others)],
        unchanged=[f"u{n}" for n in range(others)],
        rejected=[ValueRejection(f"x{n}", "bad", None) for n in range(others)],
        unknown=[Unknown(f"y{n}", ("a_kept",)) for n in range(others)],
    )
    result = fill_result(FORM, transition(statuses), plan, verb)
    held = [f for f in ids if statuses[f] == "held"]
    assert result["summary"] == reference(plan, held, verb)
