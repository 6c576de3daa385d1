"""The status line costs the same however many steps a form has.

It goes into every result and every system prompt. Its ``later:`` line previews the next
``LATER_STEPS`` steps still to do and counts the rest, so a form of 100 steps of 10 fields each
(1,000 fields) reads as long as one of 5. A wide step names its first ``LABELS_SHOWN`` pending
labels and counts the rest, and no label or title shows past ``STATUS_TEXT_CHARS``.
"""

from __future__ import annotations

from typing import Any

from forms import Caller, FormDef, Step, field
from forms.surface.status_line import LABELS_SHOWN, LATER_STEPS, STATUS_TEXT_CHARS
from tests.support import Session, service_for

CALLER = Caller("ana", "conv-1")


def make_step(k: int) -> type[Step]:
    """Step ``k``: ten required text fields, applying from the start."""
    annotations: dict[str, Any] = {f"f{k}_{n}": str for n in range(10)}
    namespace: dict[str, Any] = {
        "__annotations__": annotations,
        "id": f"s{k}",
        "title": f"Part {k}",
        **{name: field(f"Question {n} of part {k}") for n, name in enumerate(annotations)},
    }
    return type(f"Part{k}", (Step,), namespace)


def many_steps(steps: int) -> FormDef:
    return FormDef(
        id=f"steps-{steps}",
        version=1,
        title=f"{steps} steps",
        steps=[make_step(k) for k in range(1, steps + 1)],
    )


def started(steps: int, **values: str) -> tuple[Session, str]:
    session = Session(service_for(many_steps(steps)), CALLER)
    result = session.ok("form_start", form=f"steps-{steps}", values=values or None)
    return session, result["status_line"]


def part(k: int) -> dict[str, str]:
    """Answers that complete part ``k``."""
    return {f"f{k}_{n}": "yes" for n in range(10)}


def later(line: str) -> list[str]:
    (found,) = [x for x in line.splitlines() if x.startswith("later: ")]
    return found.removeprefix("later: ").split(" · ")


def test_a_hundred_steps_preview_the_next_few_and_count_the_rest() -> None:
    # GIVEN a form of 100 steps of ten fields, every step applying, just started
    _, line = started(100)
    # THEN the later line previews the next LATER_STEPS steps and counts the other 96
    assert later(line) == [
        "Part 2 (question 0 of part 2, question 1 of part 2, …)",
        "Part 3 (question 0 of part 3, question 1 of part 3, …)",
        "Part 4 (question 0 of part 4, question 1 of part 4, …)",
        f"+{99 - LATER_STEPS} more steps",
    ]


def test_the_line_is_as_long_on_a_hundred_steps_as_on_five() -> None:
    _, five = started(5)
    _, hundred = started(100)
    # only the numbers differ: "1/5" against "1/100", "+1 more step" against "+96 more steps"
    assert len(hundred) - len(five) <= len("00") + len("95 s")
    assert len(hundred) < 500  # ten pending labels of the open step, three previews


def test_steps_already_complete_are_skipped_and_the_count_follows() -> None:
    # GIVEN parts 3 and 4 answered ahead of their turn
    _, line = started(100, **part(3), **part(4))
    # THEN the preview is of parts 2, 5 and 6, and 94 are counted
    shown = [x.split(" (")[0] for x in later(line)]
    assert shown == ["Part 2", "Part 5", "Part 6", "+94 more steps"]


def test_near_the_end_nothing_is_counted_and_one_more_is_one_step() -> None:
    _, four = started(5)
    assert later(four)[-1] == "+1 more step"
    session, _ = started(100)
    for tens in range(0, 96, 8):  # parts 1-96 answered, 80 answers a call
        batch = {k: v for n in range(tens + 1, tens + 9) for k, v in part(n).items()}
        line = session.ok("form_fill", form="steps-100", values=batch)["status_line"]
    assert line.splitlines()[0].startswith('[form: steps-100] step 97/100 "Part 97"')
    assert [x.split(" (")[0] for x in later(line)] == ["Part 98", "Part 99", "Part 100"]


def one_step(fields: int, label: str) -> FormDef:
    annotations: dict[str, Any] = {f"q{n}": str for n in range(fields)}
    namespace: dict[str, Any] = {
        "__annotations__": annotations,
        "id": "only",
        "title": "Title " + "t" * 3000,
        **{name: field(f"{label} {n}") for n, name in enumerate(annotations)},
    }
    return FormDef(id="wide", version=1, title="Wide", steps=[type("Only", (Step,), namespace)])


def test_a_wide_step_names_the_first_labels_and_counts_the_rest() -> None:
    # GIVEN one step of 30 fields
    session = Session(service_for(one_step(30, "Question")), CALLER)
    line = session.ok("form_start", form="wide")["status_line"]
    # THEN the line names LABELS_SHOWN of them and counts the rest
    pending = line.split(" · pending: ")[1]
    assert pending == ", ".join(f"Question {n}" for n in range(LABELS_SHOWN)) + (
        f" +{30 - LABELS_SHOWN} more"
    )


def test_a_long_label_or_title_is_cut_in_the_line_and_whole_in_a_read() -> None:
    # GIVEN labels and a step title of thousands of characters
    session = Session(service_for(one_step(2, "L" * 5000)), CALLER)
    result = session.ok("form_start", form="wide")
    # THEN the line shows each at most STATUS_TEXT_CHARS long
    assert f'"Title {"t" * (STATUS_TEXT_CHARS - 7)}…"' in result["status_line"]
    assert (
        f"{'L' * (STATUS_TEXT_CHARS - 1)}…, {'L' * (STATUS_TEXT_CHARS - 1)}…"
        in (result["status_line"])
    )
    assert len(result["status_line"]) < 4 * STATUS_TEXT_CHARS
    # AND a read shows the label whole
    read = session.ok("form_read", form="wide")
    assert read["fields"][0]["label"] == "L" * 5000 + " 0"
