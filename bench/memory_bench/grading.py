"""Grading a played case against its labels: what went otherwise, and the correctness counts.

Correctness first, coverage after it (the design note: a fill rate goes up when a system
gets more willing to guess, which is the wrong direction). A value memory wrote into a field
is counted once, under the first of these its label says it is:

* **wrong value written**: the label wants a fill and memory wrote another value, or the
  field refuses the fact as it is (``unfit``) and memory wrote something anyway;
* **absent fact filled**: the label says there is no usable fact (never stated, deleted,
  refused, someone else's, not true now) or the form was closed, and memory wrote;
* **stale fact filled silently**: the label wants an offer (a fast-decaying or ageing fact)
  or nothing (too old), and memory wrote;
* **answer overwritten**: the user's answer (from the start's values, or one that raced
  memory) is not the answer in force, or memory wrote into that field, or into a field the
  start named with a value the field refused.

Per start:

* **recall with memory off**: memory is off for the start (the principal's switch, the
  deployment, a caller memory does not serve) and it made a fact-store request other than
  reading the switch, or filled or offered anything;
* **form opened late because of memory**: the start held longer than memory's budget on the
  timer (its deadline to read, and once more to record when the start carries answers), or
  did not open (an error instead of a form), or used what a failing or late store answered.

Also counted, though not among the six: **offers that should not stand** (an offer of a value
other than the labelled one, or of a fact that should be neither filled nor offered).
Everything else a label says (the marks, the words of a derivation, the requests made, values
that must appear nowhere) is a problem of the case, listed in the report.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bench.memory_bench.harness import Outcome, Seen
from bench.memory_bench.model import Empty, Expected, Fill, Kept, Offer
from forms.schema import Accepted, FieldType

WRONG = "wrong_values"
ABSENT = "absent_filled"
STALE = "stale_filled"
OVERWRITTEN = "overwritten"
OFF = "off_recalls"
LATE = "late"
BAD_OFFERS = "bad_offers"

CORRECTNESS: tuple[tuple[str, str], ...] = (
    (WRONG, "wrong values written"),
    (ABSENT, "absent facts filled"),
    (STALE, "stale facts filled silently"),
    (OVERWRITTEN, "answers overwritten"),
    (OFF, "recalls with memory off"),
    (LATE, "forms that opened late because of memory"),
)
"""The six correctness counts, in the order they are reported; the goal of each is 0."""
LATE_FILLS = "late_fills"
ALSO: tuple[tuple[str, str], ...] = (
    (BAD_OFFERS, "offers that should not stand"),
    (LATE_FILLS, "values memory wrote after the start (late fills)"),
)

_UNAVAILABLE = ("MemoryRecallFailed", "MemoryRecallTimeout")
_EPSILON = 1e-9


@dataclass(frozen=True, slots=True)
class Verdict:
    """A case graded: what went otherwise than labelled, its correctness counts, and its
    coverage (fills and offers labelled, and how many came as labelled)."""

    outcome: Outcome
    problems: tuple[str, ...]
    counts: Mapping[str, int]
    labels: tuple[tuple[str, str, bool], ...]
    """Per field with a fact key: its id, what it was labelled (``fill``, ``offer``,
    ``empty``, ``kept``) and whether it went as labelled."""

    @property
    def passed(self) -> bool:
        return not self.problems

    @property
    def id(self) -> str:
        return self.outcome.case.id


def grade(outcome: Outcome) -> Verdict:
    """``outcome`` against its case's labels."""
    case = outcome.case
    problems: list[str] = list(outcome.setup)
    counts: Counter[str] = Counter()
    expected = {f: case.expect.get(f, Empty("absent")) for f in outcome.form.memory_fields}
    unknown = sorted(set(case.expect) - set(expected))
    if unknown:
        problems.append(f"labels for fields without a fact key: {', '.join(unknown)}")
    labels: list[tuple[str, str, bool]] = []
    for field_id, label in expected.items():
        seen = outcome.fields.get(field_id)
        if seen is None:  # the form did not open: the start's problems say so
            labels.append((field_id, kind(label), False))
            continue
        said, counted = _field(seen, label, outcome.form.fields[field_id].type)
        problems += [f"{field_id}: {p}" for p in said]
        counts += counted
        labels.append((field_id, kind(label), not said))
    problems += _start(outcome, expected, counts)
    for field_id, seen in outcome.later.items():
        before = outcome.fields.get(field_id)
        if len(seen.written) > (len(before.written) if before is not None else 0):
            counts[LATE_FILLS] += 1
            problems.append(f"{field_id}: memory wrote {seen.written[-1]!r} after the start")
    return Verdict(
        outcome,
        tuple(problems),
        {key: counts[key] for key, _ in (*CORRECTNESS, *ALSO)},
        tuple(labels),
    )


def kind(label: Expected) -> str:
    """``fill``, ``offer``, ``empty`` or ``kept``."""
    return type(label).__name__.lower()


def _field(seen: Seen, label: Expected, field_type: FieldType) -> tuple[list[str], Counter[str]]:
    """What went otherwise than ``label`` in one field, and what it counts."""
    problems: list[str] = []
    counts: Counter[str] = Counter()
    recalled = seen.recalled
    if seen.written:
        counted = _written_counts(seen, label, field_type)
        if counted is not None:
            counts[counted] += 1
    if recalled is not None and recalled.use == "offer":
        # a fresh fact offered instead of filled is a miss, not a wrong offer, if its value is right
        right = isinstance(label, Fill | Offer) and same(field_type, recalled.value, label.value)
        if not right:
            counts[BAD_OFFERS] += 1
    if isinstance(label, Fill):
        if len(seen.written) != 1 or not same(field_type, seen.written[0], label.value):
            problems.append(
                f"memory wrote {list(seen.written)}, labelled a fill of {label.value!r}"
            )
        if seen.answered_by != "memory" or not same(field_type, seen.answer, label.value):
            problems.append(f"answer in force {seen.answer!r} by {seen.answered_by}")
        problems += _marked(seen, "fill", label, field_type)
    elif isinstance(label, Offer):
        if seen.written:
            problems.append(f"memory wrote {list(seen.written)}, labelled an offer")
        problems += _marked(seen, "offer", label, field_type)
    elif isinstance(label, Kept):
        if seen.answered_by in (None, "memory") or not same(field_type, seen.answer, label.value):
            problems.append(
                f"the user's {label.value!r} is not the answer in force ({seen.answer!r} "
                f"by {seen.answered_by})"
            )
            if not seen.written:  # a write by memory is counted already
                counts[OVERWRITTEN] += 1
        problems += _unmarked(seen)
    else:
        if seen.written:
            problems.append(f"memory wrote {list(seen.written)}, labelled empty ({label.why})")
        if label.why == "named" and seen.answer is not None:
            problems.append(f"answer in force {seen.answer!r}, the start's value was refused")
        problems += _unmarked(seen)
    return problems, counts


def _written_counts(seen: Seen, label: Expected, field_type: FieldType) -> str | None:
    """Which correctness count a write by memory under ``label`` goes to (None: none)."""
    if isinstance(label, Fill):
        wrong = any(not same(field_type, w, label.value) for w in seen.written)
        return WRONG if wrong else None
    if isinstance(label, Kept):
        return OVERWRITTEN
    if isinstance(label, Offer):
        return STALE
    return {
        "unfit": WRONG,
        "absent": ABSENT,
        "closed": ABSENT,
        "stale": STALE,
        "named": OVERWRITTEN,
    }.get(label.why)  # off, unavailable: counted per start


def _marked(seen: Seen, use: str, label: Fill | Offer, field_type: FieldType) -> list[str]:
    """What is missing from the mark of a fill or an offer."""
    recalled, mark = seen.recalled, seen.mark or ""
    if recalled is None or recalled.use != use:
        got = recalled.use if recalled is not None else "nothing"
        return [f"memory recorded {got}, labelled {use}"]
    problems: list[str] = []
    opening = "from memory" if use == "fill" else "offered from memory"
    if not mark.startswith(opening):
        problems.append(f"the row's mark is {seen.mark!r}")
    if not same(field_type, recalled.value, label.value):
        problems.append(f"recalled {recalled.value!r}, labelled {label.value!r}")
    if label.derived_from is not None:
        if f"derived from “{label.derived_from}”" not in mark:
            problems.append(f"the mark does not show the words “{label.derived_from}”")
        if (recalled.derived_from, recalled.rule) != (label.derived_from, label.rule):
            problems.append(f"recorded as derived {recalled.derived_from!r} by {recalled.rule!r}")
    elif recalled.derived_from is not None or "derived from" in mark:
        problems.append(f"claims a derivation from {recalled.derived_from!r}")
    if label.when is not None and recalled.when() != label.when:
        problems.append(f"the mark says {recalled.when()!r}, labelled {label.when!r}")
    return problems


def _unmarked(seen: Seen) -> list[str]:
    problems: list[str] = []
    if seen.recalled is not None:
        problems.append(f"memory {seen.recalled.use}s {seen.recalled.value!r}")
    if seen.mark is not None:
        problems.append(f"the row is marked {seen.mark!r}")
    return problems


def _start(outcome: Outcome, expected: Mapping[str, Expected], counts: Counter[str]) -> list[str]:
    """What went otherwise than labelled in the start as a whole, counting ``OFF`` and
    ``LATE`` per start."""
    case, problems = outcome.case, []
    asked = tuple(name for name, _ in outcome.requests)
    touched = any(s.written or s.recalled is not None for s in outcome.fields.values())
    late: list[str] = []
    if not outcome.ok:
        late.append(f"did not open: {outcome.result.get('error')}: {outcome.result.get('message')}")
    if outcome.held > outcome.budget + _EPSILON:
        late.append(f"held {ms(outcome.held)} ms, over memory's {ms(outcome.budget)} ms")
    unavailable = any(isinstance(e, Empty) and e.why == "unavailable" for e in expected.values())
    if unavailable:
        if touched:
            late.append("used what a failing or late store answered")
        if not set(outcome.counted) & set(_UNAVAILABLE):
            problems.append(f"the store's failure was not counted ({list(outcome.counted)})")
    if late:
        counts[LATE] += 1
        problems += late
    if case.off and (touched or any(name != "settings" for name in asked)):
        counts[OFF] += 1
        problems.append(f"memory is off, yet it asked {list(asked)} and recalled={touched}")
    if case.requests is not None and asked != case.requests:
        problems.append(f"fact-store requests {list(asked)}, labelled {list(case.requests)}")
    strangers = sorted({p for _, p in outcome.requests if p != case.start.who})
    if strangers:
        problems.append(f"asked the memory of {', '.join(strangers)}")
    recalls = any(isinstance(e, Fill | Offer) for e in expected.values())
    if not recalls and "memory" in _text(outcome.result):
        problems.append("the start's result talks of memory although nothing was recalled")
    problems += [f"{value!r} shown to the agent" for value in case.unseen if value in outcome.read]
    problems += [
        f"{value!r} still in the fact store" for value in case.not_kept if value in outcome.kept
    ]
    for check, value in zip(case.true_on, outcome.true_on, strict=True):
        if value != check.value:
            problems.append(
                f"{check.key} true on {check.at.date()}: {value!r}, labelled {check.value!r}"
            )
    return problems


@dataclass(frozen=True, slots=True)
class Totals:
    """Every case graded, summed."""

    verdicts: tuple[Verdict, ...]

    def count(self, key: str) -> int:
        return sum(v.counts[key] for v in self.verdicts)

    @property
    def passed(self) -> int:
        return sum(v.passed for v in self.verdicts)

    @property
    def failed(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.verdicts if not v.passed)

    def labelled(self, label: str) -> tuple[int, int]:
        """Fields labelled ``label`` over every start, and how many went as labelled."""
        found = [ok for v in self.verdicts for _, k, ok in v.labels if k == label]
        return len(found), sum(found)


def totals(verdicts: Sequence[Verdict]) -> Totals:
    return Totals(tuple(verdicts))


# ---------------------------------------------------------------- helpers


@dataclass(frozen=True, slots=True)
class Delivery:
    """Recall delivered, over the starts memory owes something (``Outcome.due``): how many
    got all of it within the first call (the start), and by the second (the agent's next
    call, which delivers a recall that came late), and the values written after a start."""

    due: int
    first: int
    second: int
    late_fills: int


def delivery(totals: Totals) -> Delivery:
    """``Delivery`` over every graded start."""
    owed = [v.outcome for v in totals.verdicts if v.outcome.due and v.outcome.ok]
    first = sum(all(_got(o.fields.get(f)) for f in o.due) for o in owed)
    second = sum(
        all(_got(o.fields.get(f)) or _got(o.later.get(f), offer_only=True) for f in o.due)
        for o in owed
    )
    return Delivery(len(owed), first, second, totals.count(LATE_FILLS))


def _got(seen: Seen | None, *, offer_only: bool = False) -> bool:
    """Whether memory's value reached the field: filled (at the start only), or offered."""
    if seen is None:
        return False
    offered = seen.recalled is not None and seen.recalled.use == "offer"
    return offered or (not offer_only and seen.answered_by == "memory")


def same(field_type: FieldType, first: Any, second: Any) -> bool:
    """Whether two values are one answer as the field reads them (``"70"`` and ``"70.0"``)."""
    if first is None or second is None:
        return first is second
    a, b = field_type.validate(first), field_type.validate(second)
    if isinstance(a, Accepted) and isinstance(b, Accepted):
        return bool(a.typed == b.typed)
    return same_json(first, second)


def same_json(first: Any, second: Any) -> bool:
    return type(first) is type(second) and first == second


def ms(seconds: float) -> str:
    return "never" if seconds == float("inf") else f"{seconds * 1000:.0f}"


def _text(result: Mapping[str, Any]) -> str:
    return " ".join(str(v) for v in result.values()).lower()
