"""Memory's pure core: decay decisions, the vocabulary, type fit, derivations, statements,
bi-temporal histories and recall planning (``forms.memory``)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import EmailStr, Field

import forms.memory
from forms.memory import (
    DEFAULT_DERIVATIONS,
    FOREVER,
    PRECEDENCE,
    DecayClass,
    DecayPolicy,
    DecayRule,
    DerivationRule,
    Fact,
    FactHead,
    FactHistory,
    FactRevision,
    Fill,
    InvalidPolicy,
    InvalidVocabulary,
    Offer,
    Origin,
    RecallField,
    RecallPlan,
    Refusal,
    Source,
    Statement,
    UnknownFactKey,
    Use,
    Vocabulary,
    apply_revision,
    fact_key,
    plan_confirmation,
    plan_deletion,
    plan_recall,
    plan_statement,
    prefill_values,
    type_fit,
)
from forms.schema import field_type

ROOT = Path(__file__).resolve().parents[2]
NOW = datetime(2026, 9, 3, 12, tzinfo=UTC)
DAY = timedelta(days=1)
YEAR = 365 * DAY
TICK = timedelta(microseconds=1)
API = Source(kind="api", ref="chatbot")
CHAT = Source(kind="conversation", ref="conv-1")
VOCABULARY = Vocabulary.default()
POLICY = DecayPolicy.default()


def state(
    statement: Statement, head: FactHead | None = None, now: datetime = NOW
) -> FactRevision | Refusal:
    return plan_statement(statement, head, vocabulary=VOCABULARY, now=now)


def said(key: str, value: Any = None, **more: Any) -> Statement:
    return Statement(key=key, value=value, source=more.pop("source", API), **more)


def stated(key: str, value: Any, at: datetime, **more: Any) -> FactHead:
    """The head after one statement of ``value`` at ``at``."""
    planned = state(said(key, value, stated_at=at, **more), None, at)
    assert isinstance(planned, FactRevision), planned
    return apply_revision(None, planned)


def then(head: FactHead, statement: Statement, at: datetime) -> FactHead:
    planned = state(statement, head, at)
    assert isinstance(planned, FactRevision), planned
    return apply_revision(head, planned)


def fact(head: FactHead) -> Fact:
    assert head.fact is not None
    return head.fact


# ====================================================================== decay


@pytest.mark.parametrize(
    ("decay", "age", "use"),
    [
        (DecayClass.NEVER, timedelta(0), Use.FILL),
        (DecayClass.NEVER, 80 * YEAR, Use.FILL),
        (DecayClass.YEARS, 3 * YEAR, Use.FILL),
        (DecayClass.YEARS, 3 * YEAR + TICK, Use.OFFER),
        (DecayClass.YEARS, 10 * YEAR, Use.OFFER),
        (DecayClass.YEARS, 10 * YEAR + TICK, Use.NONE),
        (DecayClass.MONTHS, 180 * DAY, Use.FILL),
        (DecayClass.MONTHS, 180 * DAY + TICK, Use.OFFER),
        (DecayClass.MONTHS, 2 * YEAR, Use.OFFER),
        (DecayClass.MONTHS, 2 * YEAR + TICK, Use.NONE),
        (DecayClass.STEPS, timedelta(0), Use.OFFER),  # a fresh salary is still only offered
        (DecayClass.STEPS, 2 * YEAR, Use.OFFER),
        (DecayClass.STEPS, 2 * YEAR + TICK, Use.NONE),
        (DecayClass.WEEKS, timedelta(0), Use.OFFER),  # weight: offer, never fill
        (DecayClass.WEEKS, 180 * DAY, Use.OFFER),
        (DecayClass.WEEKS, 180 * DAY + TICK, Use.NONE),
        (DecayClass.DO_NOT_STORE, timedelta(0), Use.NONE),
        (DecayClass.YEARS, -DAY, Use.FILL),  # a clock behind the statement: age 0
    ],
)
def test_each_class_fills_offers_or_drops_at_its_boundaries(
    decay: DecayClass, age: timedelta, use: Use
) -> None:
    assert POLICY.decide(decay, last_seen=NOW - age, now=NOW) is use


def test_the_default_keys_follow_the_half_life_table() -> None:
    decay = {key.key: key.decay for key in VOCABULARY}
    assert decay["person.date_of_birth"] is DecayClass.NEVER
    assert {decay[k] for k in ("person.full_name", "contact.email", "person.height_cm")} == {
        DecayClass.YEARS
    }
    assert decay["address.city"] is DecayClass.MONTHS
    assert decay["person.weight_kg"] is DecayClass.WEEKS
    assert decay["work.salary"] is decay["work.job_title"] is DecayClass.STEPS
    assert decay["work.current_project"] is DecayClass.DO_NOT_STORE
    # AND no class that is only offered ever fills, whatever the age
    for only_offered in (DecayClass.WEEKS, DecayClass.STEPS):
        rule = POLICY.rule(only_offered)
        assert rule is not None and rule.fill_within is None


def test_a_deployment_replaces_a_rule_and_keeps_the_others() -> None:
    policy = POLICY.with_rules(
        {"weeks": {"fill_within": "P7D", "offer_within": "P30D"}, "steps": DecayRule(
            fill_within=None, offer_within=None
        )}
    )  # fmt: skip
    assert policy.decide(DecayClass.WEEKS, last_seen=NOW - 7 * DAY, now=NOW) is Use.FILL
    assert policy.decide(DecayClass.WEEKS, last_seen=NOW - 8 * DAY, now=NOW) is Use.OFFER
    assert policy.decide(DecayClass.STEPS, last_seen=NOW, now=NOW) is Use.NONE
    assert policy.rule(DecayClass.YEARS) == POLICY.rule(DecayClass.YEARS)
    assert POLICY.decide(DecayClass.WEEKS, last_seen=NOW, now=NOW) is Use.OFFER  # unchanged


@pytest.mark.parametrize(
    ("rules", "says"),
    [
        ({"fortnights": {"fill_within": None, "offer_within": None}}, "fortnights"),
        ({"do_not_store": {"fill_within": None, "offer_within": None}}, "never stored"),
        ({"months": {"fill_within": "P30D", "offer_within": "P7D"}}, "at least fill_within"),
        ({"months": {"fill_within": "P30D", "offer_within": None}}, "at least fill_within"),
        ({"months": {"fill_within": "-P1D", "offer_within": None}}, "negative"),
        ({"months": {"fill_within": "P1D"}}, "months"),
    ],
)
def test_a_bad_rule_is_refused_when_the_policy_is_built(rules: dict[str, Any], says: str) -> None:
    with pytest.raises(InvalidPolicy, match=says):
        POLICY.with_rules(rules)


def test_a_policy_needs_a_rule_for_every_stored_class() -> None:
    with pytest.raises(InvalidPolicy, match="weeks"):
        DecayPolicy({DecayClass.NEVER: DecayRule(fill_within=FOREVER, offer_within=FOREVER)})


# ====================================================================== vocabulary


def test_a_deployment_extends_the_vocabulary_with_its_own_keys() -> None:
    blood = fact_key("person.blood_type", "Blood type", Literal["A", "B", "AB", "O"], "never")
    extended = VOCABULARY.extended([blood])
    assert extended.get("person.blood_type") is blood
    assert "person.blood_type" not in VOCABULARY and len(extended) == len(VOCABULARY) + 1
    assert [k.key for k in extended][-1] == "person.blood_type"  # the order given


def test_a_bad_vocabulary_reports_every_problem_at_once() -> None:
    keys = [
        fact_key("Weight", "Weight", int, "weeks"),
        fact_key("person", "Person", str, "years"),
        fact_key("person.weight-kg", "Weight", int, "weeks"),
        fact_key("person.weight_kg", "Weight again", int, "weeks"),  # a clash
        fact_key("person.nickname", " ", str, "years"),
        fact_key("person.children", "Children", list[str], "years"),
        fact_key("person.shoe_size", "Shoe size", int, "years", unit=""),
    ]
    with pytest.raises(InvalidVocabulary) as raised:
        VOCABULARY.extended(keys)
    problems = raised.value.problems
    assert len(problems) == 7
    assert sum("dotted lowercase name" in p for p in problems) == 3
    assert any("'person.weight_kg' is declared twice" in p for p in problems)
    assert any("empty label" in p for p in problems)
    assert any("one value" in p and "list of string" in p for p in problems)
    assert any("empty unit" in p for p in problems)


def test_a_key_whose_type_pydantic_cannot_validate_or_whose_class_is_unknown() -> None:
    class Opaque:
        pass

    with pytest.raises(InvalidVocabulary, match=r"person\.thing"):
        fact_key("person.thing", "Thing", Opaque, "years")
    with pytest.raises(InvalidVocabulary, match="fortnights"):
        fact_key("person.thing", "Thing", int, "fortnights")


@pytest.mark.parametrize(
    ("sent", "meant"),
    [
        ("person.weigth_kg", "person.weight_kg"),
        ("person.weigth", "person.weight_kg"),
        ("dob", "person.date_of_birth"),
        ("contact.emial", "contact.email"),
        ("weight", "person.weight_kg"),
    ],
)
def test_an_unknown_key_says_what_it_likely_meant(sent: str, meant: str) -> None:
    with pytest.raises(UnknownFactKey) as raised:
        VOCABULARY.get(sent)
    assert raised.value.did_you_mean[0] == meant
    assert meant in str(raised.value)
    assert VOCABULARY.did_you_mean("zzz.qqq") == []


# ====================================================================== type fit


class Cabin(Enum):
    ECONOMY = "economy"
    BUSINESS = "business"


BLOOD = fact_key("person.blood_type", "Blood type", Literal["A", "B", "AB", "O"], "never")
CABIN = fact_key("travel.cabin", "Cabin", Literal["economy", "business"], "months")
SMOKER = fact_key("person.smoker", "Smoker", bool, "months")
CUSTOM = {k.key: k for k in (BLOOD, CABIN, SMOKER)}


@pytest.mark.parametrize(
    ("key", "annotation", "fits"),
    [
        ("person.height_cm", int, True),
        ("person.height_cm", Decimal, True),  # an integer fills a decimal field
        ("person.height_cm", float | None, True),
        ("person.height_cm", Annotated[int, Field(ge=100, le=250)], True),  # bounds: per value
        ("person.height_cm", str, False),
        ("person.height_cm", bool, False),
        ("person.height_cm", Literal[170, 180], False),
        ("person.weight_kg", Decimal, True),
        ("person.weight_kg", float, True),
        ("person.weight_kg", int, False),  # a decimal would lose its fraction
        ("person.date_of_birth", date, True),
        ("person.date_of_birth", date | None, True),
        ("person.date_of_birth", datetime, False),
        ("person.date_of_birth", str, False),
        ("contact.email", str, True),  # an email is text
        ("contact.email", EmailStr, True),
        ("person.full_name", EmailStr, False),  # not all text is an email
        ("person.full_name", Literal["Ana", "Bob"], False),  # str into Literal does not fit
        ("person.full_name", Annotated[str, Field(pattern=r"^[A-Z]")], True),
        ("person.full_name", list[str], False),
        ("person.blood_type", Literal["O", "A", "B", "AB", "unknown"], True),
        ("person.blood_type", Literal["A", "B"], False),
        ("person.blood_type", str, True),
        ("travel.cabin", Cabin, True),
        ("travel.cabin", Cabin | None, True),
        ("person.smoker", bool, True),
        ("person.smoker", int, False),
    ],
)
def test_a_fact_fits_a_field_when_the_field_takes_every_value_of_it(
    key: str, annotation: Any, fits: bool
) -> None:
    fact_key_ = CUSTOM.get(key) or VOCABULARY.get(key)
    fit = type_fit(fact_key_, annotation)
    assert fit.fits is fits and bool(fit) is fits
    assert (fit.reason is None) is fits


def test_a_misfit_names_both_types_for_the_compile_check() -> None:
    problem = VOCABULARY.check_field("person.weight_kg", int)
    assert problem is not None
    assert "decimal number > 0 and <= 700" in problem and "the field takes integer" in problem
    assert VOCABULARY.check_field("person.weight_kg", field_type(float | None)) is None
    unknown = VOCABULARY.check_field("person.wieght_kg", float)
    assert unknown is not None and "did you mean person.weight_kg" in unknown
    never = VOCABULARY.check_field("work.current_project", str)
    assert never is not None and "never stored" in never


# ====================================================================== derivations


@pytest.mark.parametrize(
    ("words", "unit", "value", "rule", "converted"),
    [
        ("5'8\"", "cm", "173", "feet_inches_to_cm", True),
        ("5’8”", "cm", "173", "feet_inches_to_cm", True),
        ("5 ft 8 in", "cm", "173", "feet_inches_to_cm", True),
        ("6'", "cm", "183", "feet_inches_to_cm", True),
        ("1.73 m", "cm", "173", "metres_to_cm", True),
        ("1,73 m", "cm", "173", "metres_to_cm", True),
        ("173cm", "cm", "173", "cm", False),
        ("173 CM", "cm", "173", "cm", False),
        ("70 kg", "kg", "70", "kg", False),
        ("70.5kg", "kg", "70.5", "kg", False),
        ("154 lb", "kg", "69.9", "pounds_to_kg", True),
        ("154 pounds", "kg", "69.9", "pounds_to_kg", True),
        ("11 st 2 lb", "kg", "70.8", "stones_to_kg", True),
        ("11 stone", "kg", "69.9", "stones_to_kg", True),
    ],
)
def test_a_rule_reads_a_quantity_into_the_keys_unit(
    words: str, unit: str, value: str, rule: str, converted: bool
) -> None:
    derived = DEFAULT_DERIVATIONS.derive(words, unit)
    assert derived is not None
    assert (derived.text, derived.rule, derived.converted) == (value, rule, converted)


@pytest.mark.parametrize(
    ("words", "unit"),
    [
        ("about 70 kg", "kg"),  # a hedge
        ("I'm 5'8\"", "cm"),  # a sentence
        ("70", "kg"),  # no unit: kg or lb?
        ("70-75 kg", "kg"),  # a range
        ("80 kg now, 70 kg before", "kg"),
        ("5'14\"", "cm"),  # not a length
        ("11 st 15 lb", "kg"),
        ("70 kg", "cm"),  # another unit
        ("Berlin", None),  # a key with no unit has no rules
    ],
)
def test_no_rule_means_no_value(words: str, unit: str | None) -> None:
    assert DEFAULT_DERIVATIONS.derive(words, unit) is None


def test_a_deployment_adds_a_rule_and_words_two_rules_read_give_nothing() -> None:
    import re

    def by_hand(match: re.Match[str]) -> Decimal:
        return Decimal(match[1]) * 4 * Decimal("2.54")

    hands = DerivationRule("hands_to_cm", "cm", re.compile(r"(\d{2}) hands"), by_hand, places=0)
    more = DEFAULT_DERIVATIONS.with_rules([hands])
    derived = more.derive("16 hands", "cm")
    assert derived is not None and (derived.text, derived.rule) == ("163", "hands_to_cm")
    clash = DerivationRule("cm_again", "cm", re.compile(r"(\d+) ?cm"), lambda m: Decimal(m[1]))
    assert more.with_rules([clash]).derive("173 cm", "cm") is None  # ambiguous: nothing
    with pytest.raises(ValueError, match="hands_to_cm"):
        more.with_rules([hands])


# ====================================================================== statements


def test_words_alone_are_read_by_a_rule_and_the_derivation_is_kept() -> None:
    planned = state(said("person.height_cm", words="5'8\""))
    assert isinstance(planned, FactRevision)
    assert (planned.change, planned.value, planned.seq, planned.recorded_at) == (
        "stated",
        173,
        0,
        NOW,
    )
    assert planned.derivation is not None
    assert (planned.derivation.rule, planned.derivation.words) == ("feet_inches_to_cm", "5'8\"")
    read = state(said("person.weight_kg", words="70 kg"))
    assert isinstance(read, FactRevision)
    assert (read.value, read.derivation, read.words) == ("70", None, "70 kg")  # read, not derived


def test_a_value_with_words_a_rule_reads_must_agree_with_them() -> None:
    agreed = state(said("person.height_cm", 173, words="5 ft 8"))
    assert isinstance(agreed, FactRevision) and agreed.derivation is not None
    disagreed = state(said("person.height_cm", 180, words="5'8\""))
    assert isinstance(disagreed, Refusal) and disagreed.code == "words_disagree"
    assert "173 cm" in disagreed.message and "180 cm" in disagreed.message
    context = state(said("person.height_cm", 180, words="a bit over six foot I think"))
    assert isinstance(context, FactRevision) and context.derivation is None  # no rule: context


@pytest.mark.parametrize(
    ("statement", "code"),
    [
        (said("person.weight_kg", words="about 70 kg"), "no_rule"),
        (said("person.weight_kg"), "no_value"),
        (said("person.height_cm", 500), "invalid_value"),
        (said("person.height_cm", "tall"), "invalid_value"),
        (said("contact.email", "ana at example"), "invalid_value"),
        (said("work.current_project", "the Q3 migration"), "not_stored"),
        (said("person.wieght_kg", "70"), "unknown_fact_key"),
        (said("address.city", "Paris", valid_until=NOW - YEAR), "invalid_period"),
        (
            said("address.city", "Paris", valid_from=NOW - YEAR, valid_until=NOW - 2 * YEAR),
            "invalid_period",
        ),
    ],
)
def test_a_statement_that_cannot_become_a_fact_is_refused_as_data(
    statement: Statement, code: str
) -> None:
    refused = state(statement)
    assert isinstance(refused, Refusal) and refused.code == code
    dumped = json.loads(refused.model_dump_json())
    assert dumped["code"] == code and dumped["message"]


def test_an_unknown_key_refusal_carries_the_likely_keys() -> None:
    refused = state(said("person.wieght_kg", "70"))
    assert isinstance(refused, Refusal) and refused.did_you_mean[0] == "person.weight_kg"


def test_a_past_period_with_its_start_is_a_statement() -> None:
    planned = state(
        said("address.city", "Paris", valid_from=NOW - 3 * YEAR, valid_until=NOW - YEAR)
    )
    assert isinstance(planned, FactRevision) and planned.change == "stated"


def test_the_kind_of_change_follows_what_is_in_force() -> None:
    head = stated("person.weight_kg", "70", NOW - 30 * DAY, words="70 kg")
    # the same value again: a confirmation (the original words and date stay)
    again = state(said("person.weight_kg", "70.0", source=CHAT), head)
    assert isinstance(again, FactRevision)
    assert (again.change, again.value, again.confirmed_at, again.stated_at) == (
        "confirmed",
        "70",
        NOW,
        None,
    )
    confirmed = fact(apply_revision(head, again))
    assert (confirmed.words, confirmed.stated_at, confirmed.last_seen) == (
        "70 kg",
        NOW - 30 * DAY,
        NOW,
    )
    # another value: a statement; flagged as a correction: a correction
    other = state(said("person.weight_kg", "72"), head)
    fix = state(said("person.weight_kg", "72", correction=True), head)
    assert isinstance(other, FactRevision) and isinstance(fix, FactRevision)
    assert (other.change, fix.change, fix.seq) == ("stated", "corrected", 1)
    # a correction with nothing in force is a statement
    first = state(said("person.weight_kg", "72", correction=True))
    assert isinstance(first, FactRevision) and first.change == "stated"


def test_a_correction_cannot_end_before_the_fact_it_corrects_starts() -> None:
    head = stated("address.city", "Lyon", NOW - 10 * DAY)
    refused = state(said("address.city", "Lille", correction=True, valid_until=NOW - YEAR), head)
    assert isinstance(refused, Refusal) and refused.code == "invalid_period"


def test_revisions_are_recorded_in_order_even_from_a_clock_behind() -> None:
    head = stated("address.city", "Lyon", NOW)
    behind = state(said("address.city", "Paris", stated_at=NOW - DAY), head, now=NOW - DAY)
    assert isinstance(behind, FactRevision) and behind.recorded_at == NOW
    # AND Paris, said the day before Lyon, holds until Lyon: Lyon stays the fact in force
    after = apply_revision(head, behind)
    assert fact(after).value == "Lyon"
    assert [(p.value, p.since, p.valid_until) for p in after.periods] == [
        ("Paris", NOW - DAY, NOW),
        ("Lyon", NOW, None),
    ]


def test_confirming_and_deleting_need_a_fact_in_force() -> None:
    for plan in (plan_confirmation, plan_deletion):
        refused = plan(None, source=API, now=NOW)
        assert isinstance(refused, Refusal) and refused.code == "no_fact"
    head = stated("address.city", "Lyon", NOW - DAY)
    deletion = plan_deletion(head, source=API, now=NOW)
    assert isinstance(deletion, FactRevision)
    deleted = apply_revision(head, deletion)
    assert deleted.fact is None
    for plan in (plan_confirmation, plan_deletion):
        refused = plan(deleted, source=API, now=NOW)
        assert isinstance(refused, Refusal) and refused.code == "no_fact"


def test_a_revision_keeps_its_shape() -> None:
    base: dict[str, Any] = {
        "key": "address.city", "seq": 0, "source": API, "recorded_at": NOW,
    }  # fmt: skip
    bad: list[dict[str, Any]] = [
        {"change": "stated", "stated_at": NOW},  # no value
        {"change": "stated", "value": "Lyon"},  # no stated_at
        {"change": "confirmed", "value": "Lyon", "stated_at": NOW},
        {"change": "deleted", "value": "Lyon"},
        {"change": "stated", "value": "Lyon", "stated_at": NOW, "erased": True},
        {"change": "stated", "value": "Lyon", "stated_at": NOW, "valid_from": NOW,
         "valid_until": NOW},
        {"change": "stated", "value": "Lyon", "stated_at": NOW.replace(tzinfo=None)},
        {"change": "stated", "value": "Lyon", "stated_at": NOW, "key": "City"},
    ]  # fmt: skip
    for fields in bad:
        with pytest.raises(ValueError):
            FactRevision.model_validate({**base, **fields})


# ====================================================================== bi-temporal


def history(*steps: tuple[Statement, datetime]) -> FactHistory:
    """The history of the statements, each planned on the head before it at its time."""
    revisions: list[FactRevision] = []
    head: FactHead | None = None
    for statement, at in steps:
        planned = state(statement, head, at)
        assert isinstance(planned, FactRevision), planned
        head = apply_revision(head, planned)
        revisions.append(planned)
    return FactHistory(revisions)


JAN, MAR, JUN, SEP = (datetime(2026, m, 1, tzinfo=UTC) for m in (1, 3, 6, 9))


def test_a_contradiction_closes_the_old_value_where_the_new_one_begins() -> None:
    city = history(
        (said("address.city", "Lyon", stated_at=JAN), JAN),
        (said("address.city", "Berlin", valid_from=MAR, stated_at=JUN), JUN),
    )
    [lyon, berlin] = city.timeline()
    assert (lyon.value, lyon.since, lyon.valid_until) == ("Lyon", JAN, MAR)
    assert (berlin.value, berlin.since, berlin.valid_until) == ("Berlin", MAR, None)
    # what was true in April, as we believe now: Berlin; as we believed in May: Lyon
    april = datetime(2026, 4, 1, tzinfo=UTC)
    may = datetime(2026, 5, 1, tzinfo=UTC)
    assert (city.valid_at(april) or lyon).value == "Berlin"
    assert (city.valid_at(april, as_of=may) or berlin).value == "Lyon"
    assert (city.as_of(may) or berlin).value == "Lyon"
    # before anything was said there is nothing, in either time
    assert city.as_of(JAN - DAY) is None
    assert city.valid_at(JAN - DAY) is None


def test_a_past_period_cuts_into_the_timeline_and_leaves_the_value_in_force() -> None:
    city = history(
        (said("address.city", "Lyon", valid_from=JAN - 5 * YEAR, stated_at=JAN), JAN),
        (
            said("address.city", "Paris", valid_from=JAN - 3 * YEAR, valid_until=JAN - 2 * YEAR),
            MAR,
        ),
    )
    assert [(p.value, p.since, p.valid_until) for p in city.timeline()] == [
        ("Lyon", JAN - 5 * YEAR, JAN - 3 * YEAR),
        ("Paris", JAN - 3 * YEAR, JAN - 2 * YEAR),
        ("Lyon", JAN - 2 * YEAR, None),
    ]
    head = city.head()
    assert head is not None and fact(head).value == "Lyon" and fact(head).since == JAN - 2 * YEAR


def test_a_correction_replaces_the_value_over_its_period_and_the_old_belief_stays() -> None:
    weight = history(
        (said("person.weight_kg", "70", stated_at=JAN), JAN),
        (said("person.weight_kg", "57", correction=True, stated_at=MAR), MAR),
    )
    [only] = weight.timeline()
    assert (only.value, only.since, only.stated_at) == ("57", JAN, MAR)
    assert (weight.as_of(JAN + DAY) or only).value == "70"
    assert (weight.valid_at(JAN + DAY) or only).value == "57"  # it was 57 all along


def test_a_deletion_empties_the_timeline_from_then_on() -> None:
    head = stated("address.city", "Lyon", JAN)
    deletion = plan_deletion(head, source=API, now=MAR)
    first = FactRevision.model_validate(
        {"key": "address.city", "seq": 0, "change": "stated", "value": "Lyon", "source": API,
         "stated_at": JAN, "recorded_at": JAN}
    )  # fmt: skip
    assert isinstance(deletion, FactRevision)
    read = FactHistory([first.erase(), deletion])
    assert read.timeline() == [] and read.valid_at(JAN + DAY) is None
    before = read.as_of(JAN + DAY)  # we knew something then; what it was is erased
    assert before is not None and before.erased and before.value is None


def test_a_history_must_be_one_keys_revisions_in_order() -> None:
    one = FactRevision.model_validate(
        {"key": "address.city", "seq": 1, "change": "deleted", "source": API, "recorded_at": NOW}
    )
    with pytest.raises(ValueError):
        FactHistory([one])


@st.composite
def steps(draw: st.DrawFn) -> list[tuple[Statement | None, datetime]]:
    """Statements (some dated, some corrections, some of the value in force) and deletions
    (None), one day apart."""
    out: list[tuple[Statement | None, datetime]] = []
    for n in range(draw(st.integers(1, 12))):
        at = JAN + n * DAY
        if draw(st.integers(0, 9)) == 0:
            out.append((None, at))
            continue
        shift = draw(st.none() | st.integers(-40, 10))
        start = at + shift * DAY if shift is not None else None
        length = draw(st.none() | st.integers(1, 30).map(lambda d: d * DAY))
        until = (start or at) + length if length is not None else None
        statement = said(
            "address.city",
            draw(st.sampled_from(["Lyon", "Paris", "Berlin"])),
            stated_at=at,
            valid_from=start,
            valid_until=until,
            correction=draw(st.booleans()),
        )
        out.append((statement, at))
    return out


@settings(max_examples=200, deadline=None)
@given(steps())
def test_the_head_is_always_the_latest_period_of_the_whole_timeline(
    planned: list[tuple[Statement | None, datetime]],
) -> None:
    # GIVEN any sequence of statements and deletions, each planned on the head before it
    revisions: list[FactRevision] = []
    head: FactHead | None = None
    for statement, at in planned:
        if statement is None:
            revision = plan_deletion(head, source=API, now=at)
        else:
            revision = state(statement, head, at)
        if isinstance(revision, Refusal):
            continue
        head = apply_revision(head, revision, lambda: revisions)  # as the store reads it
        revisions.append(revision)
    if head is None:
        return
    # THEN folding only the head's one period kept the same fact as the whole timeline has
    timeline = FactHistory(revisions).timeline()
    assert head.fact == max(timeline, key=lambda p: p.since, default=None)
    assert FactHistory(revisions).head() == head
    # AND the periods are in order and never overlap
    for earlier, later in itertools.pairwise(timeline):
        assert earlier.valid_until is not None and earlier.valid_until <= later.since


# ====================================================================== recall


def recall_field(field_id: str, key: str, annotation: Any, **more: Any) -> RecallField:
    return RecallField(field_id, key, field_type(annotation), **more)


FORM = [
    recall_field("dob", "person.date_of_birth", date),
    recall_field("height", "person.height_cm", int),
    recall_field("weight", "person.weight_kg", float),
    recall_field("email", "contact.email", str),
]


def recall(facts: list[Fact], fields: list[RecallField] = FORM, now: datetime = NOW) -> RecallPlan:
    return plan_recall(fields, facts, vocabulary=VOCABULARY, policy=POLICY, now=now)


def test_slow_facts_fill_fast_facts_are_offered_and_missing_facts_give_nothing() -> None:
    # GIVEN ana's date of birth and weight, stated in June; no height, no email
    facts = [
        fact(stated("person.date_of_birth", "1990-05-01", JUN)),
        fact(stated("person.weight_kg", "70", JUN, words="70 kg")),
    ]
    plan = recall(facts, now=SEP)
    # THEN the date of birth fills, the weight is offered, not filled
    assert list(plan.fills) == ["dob"] and plan.fills["dob"].value == "1990-05-01"
    assert list(plan.offers) == ["weight"] and plan.offers["weight"].value == 70
    # AND a principal with no stored height or email gets no height or email key at all
    for absent in ("height", "email"):
        assert absent not in plan.fills and absent not in plan.offers
    assert [(s.field_id, s.reason) for s in plan.skipped] == [
        ("height", "no_fact"),
        ("email", "no_fact"),
    ]


def test_no_facts_fill_nothing() -> None:
    plan = recall([])
    assert (dict(plan.fills), dict(plan.offers)) == ({}, {})
    assert {s.reason for s in plan.skipped} == {"no_fact"}


def test_an_answer_or_a_prefill_is_never_replaced_by_memory() -> None:
    facts = [fact(stated("person.date_of_birth", "1990-05-01", MAR))]
    fields = [
        recall_field("dob", "person.date_of_birth", date, answered=True),
        recall_field("dob2", "person.date_of_birth", date, prefilled=True),
        recall_field("dob3", "person.date_of_birth", date),
    ]
    plan = recall(facts, fields)
    assert list(plan.fills) == ["dob3"]
    assert [(s.field_id, s.reason) for s in plan.skipped] == [
        ("dob", "answered"),
        ("dob2", "prefilled"),
    ]


@pytest.mark.parametrize(
    ("age", "outcome"),
    [(3 * YEAR, "fill"), (3 * YEAR + TICK, "offer"), (10 * YEAR + TICK, "too_old")],
)
def test_recall_follows_the_age_of_the_fact(age: timedelta, outcome: str) -> None:
    height = fact(stated("person.height_cm", 173, NOW - age))
    plan = recall([height], [FORM[1]])
    found = "fill" if plan.fills else "offer" if plan.offers else plan.skipped[0].reason
    assert found == outcome


def test_a_confirmation_makes_an_old_fact_fresh_again() -> None:
    head = stated("person.height_cm", 173, NOW - 5 * YEAR)
    assert recall([fact(head)], [FORM[1]]).offers
    confirmed = plan_confirmation(head, source=CHAT, now=NOW - DAY)
    assert isinstance(confirmed, FactRevision)
    plan = recall([fact(apply_revision(head, confirmed))], [FORM[1]])
    assert plan.fills["height"].age == DAY


def test_a_value_goes_to_the_field_as_the_field_stores_it_or_not_at_all() -> None:
    facts = [
        fact(stated("person.height_cm", 173, MAR)),
        fact(stated("person.weight_kg", "70.5", MAR)),
    ]
    fields = [
        recall_field("as_decimal", "person.height_cm", Decimal),
        recall_field("as_float", "person.weight_kg", float),
        recall_field("as_text", "person.weight_kg", str),  # misfit, though "70.5" is text
        recall_field("short", "person.height_cm", Annotated[int, Field(le=150)]),
        recall_field("whole", "person.weight_kg", int),
    ]
    plan = recall(facts, fields, now=MAR + DAY)
    assert plan.fills["as_decimal"].value == "173"
    assert plan.offers["as_float"].value == 70.5
    assert [(s.field_id, s.reason) for s in plan.skipped] == [
        ("as_text", "type_misfit"),
        ("short", "field_refuses"),
        ("whole", "type_misfit"),
    ]


def test_keys_memory_cannot_serve_and_facts_not_true_now_give_nothing() -> None:
    away = fact(stated("address.city", "London", MAR, valid_until=JUN))
    moving = fact(stated("address.country", "France", MAR, valid_from=SEP + YEAR))
    fields = [
        recall_field("city", "address.city", str),
        recall_field("country", "address.country", str),
        recall_field("project", "work.current_project", str),
        recall_field("shoe", "person.shoe_size", int),
    ]
    plan = recall([away, moving], fields, now=SEP)
    assert (dict(plan.fills), dict(plan.offers)) == ({}, {})
    assert [s.reason for s in plan.skipped] == [
        "not_valid_now",
        "not_valid_now",
        "not_stored",
        "unknown_key",
    ]


def test_a_fact_from_a_clock_slightly_ahead_still_fills() -> None:
    ahead = fact(stated("person.date_of_birth", "1990-05-01", NOW + timedelta(seconds=30)))
    plan = recall([ahead], [FORM[0]])
    assert plan.fills["dob"].age == timedelta(0)


def test_fills_and_offers_carry_their_provenance_and_say_so() -> None:
    height = fact(stated("person.height_cm", None, MAR, words="5'8\""))
    weight = fact(stated("person.weight_kg", "70", JUN, words="70 kg"))
    plan = recall([height, weight], now=SEP)
    fill, offer = plan.fills["height"], plan.offers["weight"]
    assert isinstance(fill, Fill) and isinstance(offer, Offer)
    assert fill.note() == "from memory: Height 173 cm (derived from “5'8\"”), said 2026-03-01"
    assert offer.note() == "from memory, confirm: Weight 70 kg, said 2026-06-01"
    assert fill.provenance == {
        "source": "memory",
        "fact_key": "person.height_cm",
        "stated_at": MAR.isoformat(),
        "confirmed_at": None,
        "words": "5'8\"",
        "derived_from": "5'8\"",
        "rule": "feet_inches_to_cm",
    }
    assert offer.age == SEP - JUN


def test_the_precedence_is_answer_then_prefill_then_memory_then_defaults() -> None:
    assert PRECEDENCE == (Origin.ANSWER, Origin.PREFILL, Origin.MEMORY, Origin.DEFAULT)
    facts = [
        fact(stated("person.date_of_birth", "1990-05-01", MAR)),
        fact(stated("person.height_cm", 173, MAR)),
        fact(stated("person.weight_kg", "70", MAR)),
        fact(stated("contact.email", "ana@example.com", MAR)),
    ]
    plan = recall(facts, now=MAR + DAY)
    chosen = prefill_values(
        ["dob", "height", "weight", "email", "currency", "nothing"],
        answered={"dob"},
        prefill={"height": 180, "email": "  "},
        recall=plan,
        defaults={"dob": "2000-01-01", "weight": 80, "email": "x@y.z", "currency": "EUR"},
    )
    assert {k: (v.origin, v.value) for k, v in chosen.items()} == {
        "height": (Origin.PREFILL, 180),  # the explicit prefill beats memory
        "email": (Origin.MEMORY, "ana@example.com"),  # a blank prefill is none
        "currency": (Origin.DEFAULT, "EUR"),
    }
    # the answered field gets nothing at all; the offered weight takes no default
    assert "dob" not in chosen and "weight" not in chosen and "nothing" not in chosen
    assert chosen["email"].fill is plan.fills["email"]


# ====================================================================== the package


def test_the_public_names_exist_and_the_handler_does_not_load_memory() -> None:
    for name in forms.memory.__all__:
        assert getattr(forms.memory, name) is not None
    code = (
        "import sys, json\nimport formwork.aws.api\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('forms.memory')"
        " or m.endswith('facts'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
