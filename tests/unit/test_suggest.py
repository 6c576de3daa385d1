"""did_you_mean ranking: plausible intentions offered, poor guesses withheld."""

import pytest

from forms.suggest import rank, score, words

FIELDS = {
    "staff_id": ("staff_id", "Staff ID"),
    "years_trading": ("years_trading", "Years trading"),
    "date_of_birth": ("date_of_birth", "Date of birth"),
    "treatment_received": ("treatment_received", "Treatment received"),
    "description": ("description", "What happened"),
    "destination": ("destination", "Destination"),
}


@pytest.mark.parametrize(
    ("sent", "expected"),
    [
        ("trading_years", ["years_trading"]),  # the same words in another order
        ("received_treatment", ["treatment_received"]),
        ("dob", ["date_of_birth"]),  # an acronym
        ("destinaton", ["destination"]),  # a typo
        ("staf_id", ["staff_id"]),
    ],
)
def test_plausible_intentions_are_offered(sent: str, expected: list[str]) -> None:
    # GIVEN a form's fields WHEN a near miss is ranked THEN the meant field comes first
    assert rank(sent, FIELDS)[: len(expected)] == expected


@pytest.mark.parametrize("sent", ["injury_description", "employee_id", "solicitor_name", "x"])
def test_poor_guesses_are_withheld(sent: str) -> None:
    # GIVEN a name that merely contains a field id, or shares nothing meaningful with any
    # WHEN ranked THEN nothing is offered: a wrong suggestion invites a wrong write
    assert rank(sent, FIELDS) == []


def test_words_split_every_convention_and_drop_fillers() -> None:
    assert words("dateOfBirth") == ("date", "birth")
    assert words("date-of_birth") == ("date", "birth")
    assert words("  Full   name ") == ("full", "name")


def test_score_is_symmetric_in_word_order_and_bounded() -> None:
    assert score("years trading", "trading years") == 1.0
    assert 0.0 <= score("abc", "xyz") <= 1.0
    assert score("", "anything") == 0.0


# --------------------------------------------------------------------------- leading words

TRIP = {
    "trip_type": ("trip_type", "Type of trip"),
    "incident_type": ("incident_type", "Type of incident"),
    "incident_date": ("incident_date", "Date of incident"),
    "police_report_number": ("police_report_number", "Police report number"),
    "has_lawyer": ("has_lawyer", "Already has a lawyer"),
    "lawyer_name": ("lawyer_name", "Lawyer's name and firm"),
    "registration_number": ("registration_number", "Company registration number"),
    "company_name": ("company_name", "Company name"),
}


@pytest.mark.parametrize(
    ("sent", "expected"),
    [
        ("trip_kind", ["trip_type"]),  # the leading word of exactly one field's id
        ("police_ref", ["police_report_number"]),
        ("tripKind", ["trip_type"]),
    ],
)
def test_a_leading_word_only_one_field_uses_makes_it_plausible(
    sent: str, expected: list[str]
) -> None:
    # GIVEN fields of which only one starts with (and uses) the sent name's first word
    # WHEN the name is ranked THEN that field is offered
    assert rank(sent, TRIP) == expected


@pytest.mark.parametrize("sent", ["incident_kind", "lawyer", "kind_of_trip", "tr_kind"])
def test_a_leading_word_several_fields_use_offers_nothing(sent: str) -> None:
    # GIVEN a first word two fields use (incident_type and incident_date; lawyer_name and
    # has_lawyer), or one that leads no id, or one too short to mean anything
    # WHEN ranked THEN nothing is offered: the whole strings look alike, but "kind" is no typo
    # of "date", and picking one of two fields would be a guess
    assert rank(sent, TRIP) == []


def test_leading_word_candidates_rank_after_what_the_measures_find() -> None:
    # GIVEN "company_reg_number": an abbreviation of the registration number's label, and a
    # first word that only company_name's id starts with... but the label uses it too
    # WHEN ranked THEN only the field the words describe is offered
    assert rank("company_reg_number", TRIP) == ["registration_number"]
    # AND where a measure finds one field and the leading word another, the measured one leads
    fields = {"ship_name": ("ship_name", "Name of the ship"), "shop_type": ("shop_type", "Shop")}
    assert rank("ship_type", fields) == ["shop_type", "ship_name"]


def test_typos_still_match_word_by_word() -> None:
    # GIVEN names with a typo or an abbreviation in one word
    # THEN the character measure still counts them, word by word
    assert score("staf_id", "staff_id") > 0.7
    assert score("cost_center", "cost centre") > 0.7
    assert score("accident_date", "incident_date") > 0.7
    # AND a word that is no typo of its counterpart drops the character measure to word overlap
    assert score("incident_kind", "incident_date") == 0.5
