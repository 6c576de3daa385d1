"""Knowledge updates (the fact changed: the newest must win) and deletions (a fact the user
deleted never returns)."""

from __future__ import annotations

from datetime import date

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
    START,
    YEAR,
    Answered,
    Case,
    Deleted,
    Fill,
    Offer,
    TrueOn,
    ago,
    on,
)

KNOWLEDGE_UPDATES = [
    Case(
        id="ku_correction_offered",
        category="knowledge_update",
        claim="a weight corrected through the fact editor: the correction is offered",
        start=alice(),
        facts=(
            alice_said("person.weight_kg", "70", at=ago(40 * DAY)),
            alice_said("person.weight_kg", "72", at=ago(10 * DAY), correction=True),
        ),
        expect={"weight_kg": Offer("72", when=said(ago(10 * DAY)))},
        true_on=(TrueOn("person.weight_kg", ago(30 * DAY), "72"),),
    ),
    Case(
        id="ku_correction_filled",
        category="knowledge_update",
        claim="a height corrected: the corrected value fills, the wrong one never",
        start=alice(),
        facts=(
            alice_said("person.height_cm", 170, at=ago(200 * DAY)),
            alice_said("person.height_cm", 173, at=ago(20 * DAY), correction=True),
        ),
        expect={"height_cm": Fill(173, when=said(ago(20 * DAY)))},
    ),
    Case(
        id="ku_newer_statement",
        category="knowledge_update",
        claim="she moved: the newer city fills, the old one's period is closed, not erased",
        start=alice(),
        facts=(
            alice_said("address.city", "Lyon", at=ago(300 * DAY)),
            alice_said("address.city", "Berlin", at=ago(30 * DAY)),
        ),
        expect={"city": Fill("Berlin", when=said(ago(30 * DAY)))},
        true_on=(
            TrueOn("address.city", ago(100 * DAY), "Lyon"),
            TrueOn("address.city", ago(DAY), "Berlin"),
        ),
    ),
    Case(
        id="ku_newer_job",
        category="knowledge_update",
        claim="a new job title: the newer one is offered (steps never fill)",
        start=alice(),
        facts=(
            alice_said("work.job_title", "Engineer", at=ago(400 * DAY)),
            alice_said("work.job_title", "Engineering manager", at=ago(60 * DAY)),
        ),
        expect={"job_title": Offer("Engineering manager")},
    ),
    Case(
        id="ku_dated_contradiction",
        category="knowledge_update",
        claim='"Lyon since January", then "Berlin since March": Berlin fills, Lyon held to March',
        start=alice(),
        facts=(
            alice_said(
                "address.city", "Lyon", at=on(date(2026, 2, 1)), valid_from=on(date(2026, 1, 1))
            ),
            alice_said(
                "address.city", "Berlin", at=on(date(2026, 6, 1)), valid_from=on(date(2026, 3, 1))
            ),
        ),
        expect={"city": Fill("Berlin", when="said 2026-06-01")},
        true_on=(
            TrueOn("address.city", on(date(2026, 2, 15)), "Lyon"),
            TrueOn("address.city", on(date(2026, 4, 1)), "Berlin"),
        ),
    ),
    Case(
        id="ku_newest_is_about_the_past",
        category="knowledge_update",
        claim="the newest statement is about the past (Paris 2019-2021): the present city stays",
        start=alice(),
        facts=(
            alice_said("address.city", "Berlin", at=ago(100 * DAY)),
            alice_said(
                "address.city",
                "Paris",
                at=ago(5 * DAY),
                valid_from=on(date(2019, 1, 1)),
                valid_until=on(date(2021, 1, 1)),
            ),
        ),
        expect={"city": Fill("Berlin", when=said(ago(100 * DAY)))},
        true_on=(
            TrueOn("address.city", on(date(2020, 6, 1)), "Paris"),
            TrueOn("address.city", START, "Berlin"),
        ),
    ),
    Case(
        id="ku_moving_next_month",
        category="knowledge_update",
        claim='"I move to Berlin on 10 October", said last week: today she lives in Lyon, which '
        "fills; Berlin is never filled before it is true",
        start=alice(),
        facts=(
            alice_said("address.city", "Lyon", at=ago(100 * DAY)),
            alice_said(
                "address.city", "Berlin", at=ago(5 * DAY), valid_from=on(date(2026, 10, 10))
            ),
        ),
        expect={"city": Fill("Lyon", when=said(ago(100 * DAY)))},
        true_on=(
            TrueOn("address.city", START, "Lyon"),
            TrueOn("address.city", on(date(2026, 11, 1)), "Berlin"),
        ),
    ),
    Case(
        id="ku_answer_in_a_form",
        category="knowledge_update",
        claim="she answered 68 kg in an earlier health check: that answer is the weight offered",
        start=alice(),
        facts=(
            alice_said("person.weight_kg", "70", at=ago(40 * DAY)),
            Answered(form=HEALTH, values={"weight_kg": "68"}, at=ago(3 * DAY), who=ALICE),
        ),
        expect={"weight_kg": Offer("68", when=said(ago(3 * DAY)))},
        true_on=(TrueOn("person.weight_kg", ago(20 * DAY), "70"),),
    ),
    Case(
        id="ku_corrected_in_a_form",
        category="knowledge_update",
        claim="memory filled 173 in an earlier form and she answered 175 there: 175 fills now",
        start=alice(),
        facts=(
            alice_said("person.height_cm", 173, at=ago(200 * DAY)),
            Answered(form=HEALTH, values={"height_cm": 175}, at=ago(4 * DAY), who=ALICE),
        ),
        expect={"height_cm": Fill(175, when=said(ago(4 * DAY)))},
        true_on=(TrueOn("person.height_cm", ago(100 * DAY), 173),),
    ),
    Case(
        id="ku_back_and_forth",
        category="knowledge_update",
        claim="70, then 72, then 70 again: the latest statement (70, five days ago) is offered",
        start=alice(),
        facts=(
            alice_said("person.weight_kg", "70", at=ago(60 * DAY)),
            alice_said("person.weight_kg", "72", at=ago(30 * DAY)),
            alice_said("person.weight_kg", "70", at=ago(5 * DAY)),
        ),
        expect={"weight_kg": Offer("70", when=said(ago(5 * DAY)))},
    ),
    Case(
        id="ku_restated_same_value",
        category="knowledge_update",
        claim="a four-year-old height said again last month: a confirmation, so it fills",
        start=alice(),
        facts=(
            alice_said("person.height_cm", 173, at=ago(4 * YEAR)),
            alice_said("person.height_cm", 173, at=ago(30 * DAY)),
        ),
        expect={"height_cm": Fill(173, when=confirmed(ago(30 * DAY)))},
    ),
    Case(
        id="ku_stale_then_corrected",
        category="knowledge_update",
        claim="an eleven-year-old height (unused) corrected yesterday: the correction fills",
        start=alice(),
        facts=(
            alice_said("person.height_cm", 170, at=ago(11 * YEAR)),
            alice_said("person.height_cm", 172, at=ago(DAY), correction=True),
        ),
        expect={"height_cm": Fill(172, when=said(ago(DAY)))},
    ),
]


DELETED = [
    Case(
        id="deleted_weight",
        category="deleted",
        claim="a weight deleted in the fact editor: never offered, erased from the store",
        start=alice(),
        facts=(
            alice_said("person.weight_kg", "83.4", at=ago(30 * DAY)),
            Deleted(key="person.weight_kg", at=ago(5 * DAY), who=ALICE),
        ),
        unseen=("83.4",),
        not_kept=("83.4",),
    ),
    Case(
        id="deleted_date_of_birth",
        category="deleted",
        claim="a date of birth (never expires) deleted: never filled again",
        start=alice(),
        facts=(
            alice_said("person.date_of_birth", BORN, at=ago(3 * YEAR)),
            Deleted(key="person.date_of_birth", at=ago(DAY), who=ALICE),
        ),
        unseen=(BORN,),
        not_kept=(BORN,),
    ),
    Case(
        id="deleted_then_stated_again",
        category="deleted",
        claim="Lyon deleted, then Nantes stated: Nantes fills, Lyon appears nowhere",
        start=alice(),
        facts=(
            alice_said("address.city", "Lyon", at=ago(50 * DAY)),
            Deleted(key="address.city", at=ago(20 * DAY), who=ALICE),
            alice_said("address.city", "Nantes", at=ago(5 * DAY)),
        ),
        expect={"city": Fill("Nantes")},
        unseen=("Lyon",),
        not_kept=("Lyon",),
    ),
    Case(
        id="deleted_one_of_two",
        category="deleted",
        claim="the weight deleted, the date of birth kept: one fills, the other is absent",
        start=alice(),
        facts=(
            alice_said("person.date_of_birth", BORN, at=ago(30 * DAY)),
            alice_said("person.weight_kg", "83.4", at=ago(30 * DAY)),
            Deleted(key="person.weight_kg", at=ago(DAY), who=ALICE),
        ),
        expect={"date_of_birth": Fill(BORN)},
        unseen=("83.4",),
    ),
]
