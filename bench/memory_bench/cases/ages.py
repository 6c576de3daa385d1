"""Temporal reasoning: each decay class a minute inside and outside its fill and offer
windows, periods of world time against the age of what was said, and confirmations that
make a fact young again.

"Just inside" and "just outside" are a minute either side of a window, from the measured
start (``model.START``); the service's clock is a few seconds past it when memory plans."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any, Literal

from bench.memory_bench.cases.common import (
    ALICE,
    BORN,
    HEALTH,
    alice,
    alice_said,
    confirmed,
    said,
)
from bench.memory_bench.model import (
    DAY,
    MINUTE,
    YEAR,
    Answered,
    Case,
    Confirmed,
    Empty,
    Expected,
    Fill,
    Offer,
    ago,
    on,
)

_Use = Literal["fill", "offer", "stale"]


def _windows(
    name: str,
    field_id: str,
    key: str,
    value: Any,
    fill: timedelta | None,
    offer: timedelta,
) -> list[Case]:
    """A decay class a minute inside and a minute outside each of its windows (``fill``: None
    when the class never fills)."""
    spans: list[tuple[str, timedelta, int, _Use]] = []
    if fill is not None:
        spans += [("fill_inside", fill, -1, "fill"), ("fill_outside", fill, 1, "offer")]
    spans += [("offer_inside", offer, -1, "offer"), ("offer_outside", offer, 1, "stale")]
    told = {"fill": "fills", "offer": "offered, not filled", "stale": "too old: not used"}
    cases = []
    for label, window, side, use in spans:
        at = ago(window + side * MINUTE)
        expected: Expected = (
            Fill(value, when=said(at))
            if use == "fill"
            else Offer(value, when=said(at))
            if use == "offer"
            else Empty("stale")
        )
        days = window.days
        span = f"{days // 365} years" if days % 365 == 0 else f"{days} days"
        cases.append(
            Case(
                id=f"{name}_{label}",
                category="temporal",
                claim=f"{key} ({name}) {span} {'less' if side < 0 else 'and'} a minute old: "
                f"{told[use]}",
                start=alice(),
                facts=(alice_said(key, value, at=at),),
                expect={field_id: expected},
            )
        )
    return cases


TEMPORAL = [
    Case(
        id="never_forty_years",
        category="temporal",
        claim="a date of birth stated forty years ago still fills (never expires)",
        start=alice(),
        facts=(alice_said("person.date_of_birth", BORN, at=ago(40 * YEAR)),),
        expect={"date_of_birth": Fill(BORN, when=said(ago(40 * YEAR)))},
    ),
    *_windows("years", "height_cm", "person.height_cm", 173, 3 * YEAR, 10 * YEAR),
    *_windows("months", "city", "address.city", "Lyon", 180 * DAY, 2 * YEAR),
    *_windows("steps", "salary", "work.salary", "52000", None, 2 * YEAR),
    *_windows("weeks", "weight_kg", "person.weight_kg", "70", None, 180 * DAY),
    Case(
        id="years_email_two_years",
        category="temporal",
        claim="an email stated two years ago fills",
        start=alice(),
        facts=(alice_said("contact.email", "alice@example.com", at=ago(2 * YEAR)),),
        expect={"email": Fill("alice@example.com")},
    ),
    Case(
        id="steps_fresh_job_title",
        category="temporal",
        claim="a job title stated yesterday is still only offered (steps never fill)",
        start=alice(),
        facts=(alice_said("work.job_title", "Engineer", at=ago(DAY)),),
        expect={"job_title": Offer("Engineer")},
    ),
    Case(
        id="weeks_fresh_weight",
        category="temporal",
        claim="a weight stated an hour ago is still only offered (weeks never fill)",
        start=alice(),
        facts=(alice_said("person.weight_kg", "70", at=ago(DAY / 24)),),
        expect={"weight_kg": Offer("70")},
    ),
    Case(
        id="period_ends_later",
        category="temporal",
        claim="Lisbon until December, said ten days ago: true now, so it fills",
        start=alice(),
        facts=(
            alice_said(
                "address.city", "Lisbon", at=ago(10 * DAY), valid_until=on(date(2026, 12, 1))
            ),
        ),
        expect={"city": Fill("Lisbon")},
    ),
    Case(
        id="long_true_said_recently",
        category="temporal",
        claim="Berlin since 2019, said ten days ago: its age is ten days (when it was said), "
        "not seven years, so it fills",
        start=alice(),
        facts=(
            alice_said("address.city", "Berlin", at=ago(10 * DAY), valid_from=on(date(2019, 4, 1))),
        ),
        expect={"city": Fill("Berlin", when=said(ago(10 * DAY)))},
    ),
    Case(
        id="confirmed_refreshes_fill",
        category="temporal",
        claim="a height stated five years ago, confirmed a year ago: young again, it fills",
        start=alice(),
        facts=(
            alice_said("person.height_cm", 173, at=ago(5 * YEAR)),
            Confirmed(key="person.height_cm", at=ago(YEAR), who=ALICE),
        ),
        expect={"height_cm": Fill(173, when=confirmed(ago(YEAR)))},
    ),
    Case(
        id="confirmed_refreshes_offer",
        category="temporal",
        claim="a weight stated 200 days ago (too old), confirmed 20 days ago: offered again",
        start=alice(),
        facts=(
            alice_said("person.weight_kg", "70", at=ago(200 * DAY)),
            Confirmed(key="person.weight_kg", at=ago(20 * DAY), who=ALICE),
        ),
        expect={"weight_kg": Offer("70", when=confirmed(ago(20 * DAY)))},
    ),
    Case(
        id="confirmed_by_an_answer",
        category="temporal",
        claim="a four-year-old height offered in an earlier form and confirmed there: it fills",
        start=alice(),
        facts=(
            alice_said("person.height_cm", 173, at=ago(4 * YEAR)),
            Answered(form=HEALTH, values={"height_cm": 173}, at=ago(2 * DAY), who=ALICE),
        ),
        expect={"height_cm": Fill(173, when=confirmed(ago(2 * DAY)))},
    ),
    Case(
        id="confirmed_a_fill",
        category="temporal",
        claim="a height memory filled three days ago (then just under three years old) and she "
        "sent it again: confirmed, so it still fills now that it is past three years",
        start=alice(),
        facts=(
            alice_said("person.height_cm", 173, at=ago(3 * YEAR + DAY)),
            Answered(form=HEALTH, values={"height_cm": 173}, at=ago(3 * DAY), who=ALICE),
        ),
        expect={"height_cm": Fill(173, when=confirmed(ago(3 * DAY)))},
    ),
    Case(
        id="confirmed_spelled_otherwise",
        category="temporal",
        claim='70 kg offered, she answered "70.0": the same weight, so a confirmation',
        start=alice(),
        facts=(
            alice_said("person.weight_kg", "70", at=ago(100 * DAY)),
            Answered(form=HEALTH, values={"weight_kg": "70.0"}, at=ago(2 * DAY), who=ALICE),
        ),
        expect={"weight_kg": Offer("70", when=confirmed(ago(2 * DAY)))},
    ),
    Case(
        id="do_not_store",
        category="temporal",
        claim="a current project (do_not_store) is refused when stated: nothing kept, nothing used",
        start=alice(),
        facts=(
            alice_said(
                "work.current_project", "the memory bench", at=ago(DAY), refused="not_stored"
            ),
        ),
        not_kept=("the memory bench",),
        unseen=("the memory bench",),
    ),
]
