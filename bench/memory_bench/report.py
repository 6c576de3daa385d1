"""The memory bench's numbers as markdown: correctness first, coverage after it, then the
categories, the findings, the principals, and every case with what it was labelled and what
happened."""

from __future__ import annotations

from typing import Any

from bench.memory_bench.cases import PRINCIPALS
from bench.memory_bench.grading import ALSO, CORRECTNESS, Totals, Verdict, delivery, ms
from bench.memory_bench.harness import DEADLINE, Outcome, Seen
from bench.memory_bench.model import CATEGORIES, START, Empty, Expected, Fill, Kept, Offer


def correctness(totals: Totals) -> list[str]:
    """The six counts (and the offers), each against its goal of 0, with the cases counted."""
    lines = ["| correctness | count | goal | counted in |", "|---|--:|--:|---|"]
    for key, label in (*CORRECTNESS, *ALSO):
        count = totals.count(key)
        shown = f"**{count}**" if count else "0"
        where = ", ".join(_named(v) for v in totals.verdicts if v.counts[key])
        lines.append(f"| {label} | {shown} | 0 | {where} |")
    return lines


def coverage(totals: Totals) -> list[str]:
    """Fields by what they were labelled, how many went so, and what memory did in all."""
    outcomes = [v.outcome for v in totals.verdicts]
    did = {
        "fill": sum(s.answered_by == "memory" for o in outcomes for s in o.fields.values()),
        "offer": sum(_offered(s) for o in outcomes for s in o.fields.values()),
    }
    lines = [
        "| coverage (fields with a fact key, over every start) | labelled | as labelled "
        "| memory did it |",
        "|---|--:|--:|--:|",
    ]
    for label, title in (
        ("fill", "filled"),
        ("offer", "offered"),
        ("empty", "left empty"),
        ("kept", "the user's answer kept"),
    ):
        count, right = totals.labelled(label)
        lines.append(f"| {title} | {count} | {right} | {did.get(label, '')} |")
    return lines


def delivered(totals: Totals) -> list[str]:
    """Recall delivered within the first call and by the second, over the starts that are
    owed something, and the values memory wrote after a start."""
    found = delivery(totals)

    def share(n: int) -> str:
        return f"{n} ({100 * n / found.due:.0f}%)" if found.due else "0"

    return [
        "| recall delivered (starts owed a fill or an offer) | starts | goal |",
        "|---|--:|--:|",
        f"| owed (what the same start gets from a store that answers at once) | {found.due} | |",
        f"| delivered within the first call (the start) | {share(found.first)} | |",
        f"| delivered by the second call (the agent's next call) | {share(found.second)} | 99% |",
        f"| values written after the start (late fills) | {found.late_fills} | 0 |",
    ]


def categories(totals: Totals) -> list[str]:
    lines = [
        "| category | cases | as labelled | not as labelled |",
        "|---|--:|--:|---|",
    ]
    for category, title in CATEGORIES.items():
        group = [v for v in totals.verdicts if v.outcome.case.category == category]
        missed = ", ".join(_named(v) for v in group if not v.passed) or "none"
        lines.append(f"| {title} | {len(group)} | {sum(v.passed for v in group)} | {missed} |")
    lines.append(f"| **all** | {len(totals.verdicts)} | {totals.passed} | {len(totals.failed)} |")
    return lines


def findings(totals: Totals) -> list[str]:
    """Every case not as labelled: a known finding of the memory code, or a new failure."""
    lines: list[str] = []
    for v in totals.failed:
        case = v.outcome.case
        kind = "FINDING" if case.finding else "**NOT AS LABELLED**"
        lines.append(f"- {kind} `{case.id}` ({case.category}): {case.claim}.")
        lines.append(f"  - what happened: {'; '.join(v.problems)}")
        if case.finding:
            lines.append(f"  - why: {case.finding}")
    unexposed = [v.id for v in totals.verdicts if v.outcome.case.finding is not None and v.passed]
    for case_id in unexposed:
        lines.append(f"- `{case_id}` carries a finding but now goes as labelled: drop the finding")
    return lines or ["- none: every case went as labelled"]


def principals() -> list[str]:
    lines = ["| principal | who |", "|---|---|"]
    lines += [f"| `{p or '(empty)'}` | {who} |" for p, who in PRINCIPALS.items()]
    return lines


def cases(totals: Totals) -> list[str]:
    lines = [
        "| case | claim | labelled | what memory did | fact-store requests "
        "| held / budget (ms) | as labelled |",
        "|---|---|---|---|---|--:|---|",
    ]
    for category, title in CATEGORIES.items():
        lines.append(f"| **{title}** | | | | | | |")
        for v in totals.verdicts:
            o = v.outcome
            if o.case.category != category:
                continue
            asked = ", ".join(name for name, _ in o.requests) or "none"
            verdict = "yes" if v.passed else ("FINDING" if o.case.finding else "**no**")
            lines.append(
                f"| {o.case.id} | {_cell(o.case.claim)} | {_cell(labelled(o))} "
                f"| {_cell(observed(o))} | {asked} | {ms(o.held)} / {ms(o.budget)} | {verdict} |"
            )
    return lines


def labelled(outcome: Outcome) -> str:
    """The case's labels, shortly: the fields it names, then the rest."""
    said = [f"{f} {_label(e)}" for f, e in outcome.case.expect.items()]
    rest = len(outcome.form.memory_fields) - len(outcome.case.expect)
    if rest:
        said.append("the rest empty" if said else "every field empty")
    return "; ".join(said)


def observed(outcome: Outcome) -> str:
    """What memory did, field by field, and what the user's answers became."""
    if not outcome.ok:
        return f"did not open: {outcome.result.get('error')}"
    said = [text for s in outcome.fields.values() if (text := _seen(s))]
    return "; ".join(said) or "nothing"


def _label(expected: Expected) -> str:
    if isinstance(expected, Fill | Offer):
        verb = "fill" if isinstance(expected, Fill) else "offer"
        derived = (
            f" (from “{expected.derived_from}”, {expected.rule})" if expected.derived_from else ""
        )
        return f"{verb} {_json(expected.value)}{derived}"
    if isinstance(expected, Kept):
        return f"keeps the user's {_json(expected.value)}"
    assert isinstance(expected, Empty)
    return f"empty ({expected.why})"


def _seen(seen: Seen) -> str:
    recalled = seen.recalled
    derived = ""
    if recalled is not None and recalled.derived_from:
        derived = f" (from “{recalled.derived_from}”, {recalled.rule})"
    if seen.written and seen.answered_by == "memory":
        return f"{seen.field_id} filled {_json(seen.answer)}{derived}"
    if _offered(seen):
        assert recalled is not None
        return f"{seen.field_id} offered {_json(recalled.value)}{derived}"
    if seen.answer is not None:
        return f"{seen.field_id} the user's {_json(seen.answer)}"
    return ""


def _offered(seen: Seen) -> bool:
    return seen.recalled is not None and seen.recalled.use == "offer"


def _named(verdict: Verdict) -> str:
    return f"{verdict.id} (FINDING)" if verdict.outcome.case.finding else f"**{verdict.id}**"


def _json(value: Any) -> str:
    return str(value) if not isinstance(value, str) else value


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


METHOD = [
    "Each case runs on a fresh `FormService` with memory (`forms.app.memory.Memory` with its "
    f"shipped defaults: a {ms(DEADLINE.total_seconds())} ms deadline, `DecayPolicy.default()`, "
    "`Vocabulary.default()`) over in-memory stores. Facts are put in place as the fact API "
    "does it (planned by `forms.memory`, appended to the fact store) or by earlier "
    "conversations through the service itself; then one `form_start` is measured, at "
    f"{START:%Y-%m-%d %H:%M} UTC (the service's clock ticks a second per reading; instance "
    "ids `fi_0001`, ...).",
    "",
    "- *held*: how long the start took on memory's timer. The timer is virtual: memory's "
    "work runs at once and the fact store charges each request's latency to it, so waiting "
    "for it costs the call exactly what memory lets it cost, with no wall-clock sleep. "
    "Nothing else in the start takes time on it, so all of it is memory's. The budget is the "
    "deadline, once, to read: answers are recorded behind the call's answer (as "
    "`docs/memory.md` states it).",
    "- *fact-store requests*: every request the start made, recorded by the store (`settings`: "
    "the switch; `heads`: every key's head, one query; `head`, `append`: recording an "
    "answer); a racing call's are included.",
    "- A field the case does not name must stay empty: nothing written, nothing offered, no "
    "mark. Values are compared as the field reads them (`70` and `70.0` kg are one).",
    "- The counts are defined in `bench/memory_bench/grading.py`; a case's every other label "
    "(marks, derivation words and rule, requests, values that must appear nowhere, what the "
    "history says was true) is checked too, and listed below when it fails.",
]


def render(totals: Totals) -> list[str]:
    """The whole report."""
    return [
        "# memory-bench",
        "",
        "Labelled principals and cases through the real `FormService` with memory, in process "
        "(`python -m bench.memory_bench`; `--publish` writes this file). Cases: "
        "`bench/memory_bench/cases/`; method: `bench/README.md`. Correctness first, "
        "coverage after it: a fill rate goes up when memory gets more willing to guess.",
        "",
        *METHOD,
        "",
        "## Correctness",
        "",
        *correctness(totals),
        "",
        "## Coverage",
        "",
        *coverage(totals),
        "",
        "## Recall delivered, first and second call",
        "",
        "A start whose fact store answers after the deadline opens without memory; the "
        "agent's next call (here a `form_read`, the store answering at once by then) gets "
        "what memory owed it, as offers. A failing store answered nothing and owes nothing.",
        "",
        *delivered(totals),
        "",
        "## By category",
        "",
        *categories(totals),
        "",
        "## Findings",
        "",
        *findings(totals),
        "",
        "## Principals",
        "",
        *principals(),
        "",
        "## Every case",
        "",
        *cases(totals),
    ]


def printed(totals: Totals) -> list[str]:
    """What the run prints: the counts, the categories and the findings."""
    return [
        f"memory-bench: {len(totals.verdicts)} labelled cases, "
        f"{totals.passed} as labelled (correctness first, coverage after)",
        "",
        *correctness(totals),
        "",
        *coverage(totals),
        "",
        *delivered(totals),
        "",
        *categories(totals),
        "",
        "Findings:",
        *findings(totals),
    ]
