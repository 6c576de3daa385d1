"""Abstention (no usable fact: nothing filled, nothing offered) and derived values (words read
into a value: the words shown, the rule recorded, never a guess)."""

from __future__ import annotations

from datetime import date

from bench.memory_bench.cases.common import (
    BORN,
    DAN,
    HEALTH,
    HEALTH_FACTS,
    HEALTH_RECALLED,
    READ_AND_LIST,
    alice,
    alice_said,
)
from bench.memory_bench.model import (
    DAY,
    Case,
    Empty,
    Fill,
    Offer,
    Start,
    ago,
    on,
)

ABSTENTION = [
    Case(
        id="nothing_stated",
        category="abstention",
        claim="a principal who never stated anything: every field empty, nothing offered",
        start=Start(who=DAN),
        requests=READ_AND_LIST,
    ),
    Case(
        id="only_date_of_birth",
        category="abstention",
        claim="only a date of birth stated: it fills, and every other field (no weight!) is empty",
        start=alice(),
        facts=(alice_said("person.date_of_birth", BORN, at=ago(30 * DAY)),),
        expect={"date_of_birth": Fill(BORN)},
    ),
    Case(
        id="words_no_rule_reads",
        category="abstention",
        claim='"about 70 kg" is refused (no rule reads it), so there is no weight to offer',
        start=alice(),
        facts=(
            alice_said("person.weight_kg", words="about 70 kg", at=ago(DAY), refused="no_rule"),
        ),
    ),
    Case(
        id="field_refuses_height",
        category="abstention",
        claim="a 260 cm height (the key allows it, the health check stops at 250): not clamped",
        start=alice(HEALTH),
        facts=(alice_said("person.height_cm", 260, at=ago(DAY)),),
        expect={"height_cm": Empty("unfit")},
    ),
    Case(
        id="field_refuses_precision",
        category="abstention",
        claim="a 70.25 kg weight into a field of one decimal: never rounded, not offered",
        start=alice(HEALTH),
        facts=(alice_said("person.weight_kg", "70.25", at=ago(DAY)),),
        expect={"weight_kg": Empty("unfit")},
    ),
    Case(
        id="period_ended",
        category="abstention",
        claim="Lisbon until 1 August: not true now, so nothing (the period ended)",
        start=alice(),
        facts=(
            alice_said(
                "address.city",
                "Lisbon",
                at=ago(60 * DAY),
                valid_from=on(date(2026, 5, 1)),
                valid_until=on(date(2026, 8, 1)),
            ),
        ),
        unseen=("Lisbon",),
    ),
]

DERIVED = [
    Case(
        id="feet_and_inches",
        category="derived",
        claim="5'8\" read as 173 cm: filled, the words shown, the rule recorded",
        start=alice(HEALTH),
        facts=HEALTH_FACTS,
        expect=HEALTH_RECALLED,
    ),
    Case(
        id="metres",
        category="derived",
        claim="1.73 m read as 173 cm: filled, the words shown",
        start=alice(),
        facts=(alice_said("person.height_cm", words="1.73 m", at=ago(10 * DAY)),),
        expect={"height_cm": Fill(173, derived_from="1.73 m", rule="metres_to_cm")},
    ),
    Case(
        id="pounds",
        category="derived",
        claim="154 lb read as 69.9 kg: offered with the words",
        start=alice(HEALTH),
        facts=(alice_said("person.weight_kg", words="154 lb", at=ago(10 * DAY)),),
        expect={"weight_kg": Offer("69.9", derived_from="154 lb", rule="pounds_to_kg")},
    ),
    Case(
        id="stones",
        category="derived",
        claim="11 st 2 lb read as 70.8 kg: offered with the words",
        start=alice(HEALTH),
        facts=(alice_said("person.weight_kg", words="11 st 2 lb", at=ago(10 * DAY)),),
        expect={"weight_kg": Offer("70.8", derived_from="11 st 2 lb", rule="stones_to_kg")},
    ),
    Case(
        id="said_in_the_unit",
        category="derived",
        claim='"70 kg" is read, not derived: offered without claiming a derivation',
        start=alice(HEALTH),
        facts=(alice_said("person.weight_kg", words="70 kg", at=ago(10 * DAY)),),
        expect={"weight_kg": Offer("70")},
    ),
    Case(
        id="derived_then_corrected",
        category="derived",
        claim="5'8\" corrected to 175: 175 fills, and the old words are shown no more",
        start=alice(),
        facts=(
            alice_said("person.height_cm", words="5'8\"", at=ago(100 * DAY)),
            alice_said("person.height_cm", 175, at=ago(10 * DAY), correction=True),
        ),
        expect={"height_cm": Fill(175)},
        unseen=("5'8",),
    ),
]
