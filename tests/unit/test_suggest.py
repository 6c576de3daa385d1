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
