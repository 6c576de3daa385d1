"""Behaviour of forms.schema: type strings, optional detection, strict validation and hints."""

from __future__ import annotations

import json
from datetime import date, datetime, time
from decimal import Decimal
from enum import Enum
from time import perf_counter
from typing import Annotated, Any, Literal, Optional

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import AnyUrl, BaseModel, Field, TypeAdapter

from forms.schema import Accepted, FieldType, Rejected, field_type, json_depth


class Address(BaseModel):
    street: str
    city: str
    postcode: str | None = None


class Item(BaseModel):
    name: str
    qty: int


class Order(BaseModel):
    items: list[Item]
    address: Address


class Tree(BaseModel):
    name: str
    children: list[Tree] = []


class Colour(Enum):
    RED = "red"
    BLUE = "blue"


Email = Annotated[str, Field(json_schema_extra={"format": "email"})]


def rejected(annotation: Any, value: object) -> Rejected:
    result = field_type(annotation).validate(value)
    assert isinstance(result, Rejected), result
    return result


def accepted(annotation: Any, value: object) -> Accepted:
    result = field_type(annotation).validate(value)
    assert isinstance(result, Accepted), result
    return result


# ------------------------------------------------------------------ type strings


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        (bool, "true or false"),
        (str, "string"),
        (Annotated[str, Field(min_length=2, max_length=100)], "string, 2-100 chars"),
        (Annotated[str, Field(min_length=2)], "string, at least 2 chars"),
        (Annotated[str, Field(max_length=100)], "string, at most 100 chars"),
        (Annotated[str, Field(min_length=1)], "string, at least 1 char"),
        (Annotated[str, Field(pattern=r"^[A-Z]{3}$")], "string matching ^[A-Z]{3}$"),
        (
            Annotated[str, Field(min_length=2, pattern=r"^[A-Z]{3}$")],
            "string matching ^[A-Z]{3}$, at least 2 chars",
        ),
        (Email, "email address"),
        (AnyUrl, "URL"),
        (int, "integer"),
        (Annotated[int, Field(ge=0)], "integer >= 0"),
        (Annotated[int, Field(ge=1, le=10)], "integer 1-10"),
        (Annotated[int, Field(gt=0)], "integer > 0"),
        (Annotated[int, Field(lt=5)], "integer < 5"),
        (Annotated[int, Field(gt=0, multiple_of=5)], "integer > 0, multiple of 5"),
        (float, "number"),
        (Annotated[float, Field(ge=-5, le=5)], "number -5 to 5"),
        (Annotated[float, Field(gt=0, le=1.5)], "number > 0 and <= 1.5"),
        (Decimal, "decimal number"),
        (
            Annotated[Decimal, Field(ge=0, max_digits=5, decimal_places=2)],
            "decimal number >= 0, max 2 decimals, max 5 digits",
        ),
        (date, "date YYYY-MM-DD"),
        (datetime, "date-time ISO 8601"),
        (time, "time HH:MM[:SS]"),
        (Literal["air", "rail", "car"], 'one of "air", "rail", "car"'),
        (Literal[1, 2], "one of 1, 2"),
        (Literal["x"], 'exactly "x"'),
        (Literal["a"] | Literal["b"], 'one of "a", "b"'),
        (Colour, 'one of "red", "blue"'),
        (list[str], "list of string"),
        (Annotated[list[str], Field(min_length=1, max_length=5)], "list of string, 1-5 items"),
        (Annotated[list[int], Field(min_length=1)], "list of integer, at least 1 item"),
        (set[int], "list of unique integer"),
        (tuple[int, str], "list [integer, string]"),
        (Address, "object {street: string, city: string, postcode?: string}"),
        (
            Order,
            "object {items: list of object {name: string, qty: integer}, "
            "address: object {street: string, city: string, postcode?: string}}",
        ),
        (Tree, "object {name: string, children?: list of object}"),
        (int | None, "integer"),
        (Optional[Address], "object {street: string, city: string, postcode?: string}"),  # noqa: UP045
        (int | str, "integer or string"),
        (dict[str, int], "object of integer"),
        (dict[str, Any], "object"),
        (Any, "any JSON value"),
    ],
)
def test_given_an_annotation_when_compiled_then_type_string_names_what_is_accepted(
    annotation: Any, expected: str
) -> None:
    assert field_type(annotation).type_string == expected


def test_given_bool_when_described_then_never_offers_yes_or_no() -> None:
    assert "yes" not in field_type(bool).type_string


def test_given_any_annotation_when_compiled_then_json_schema_is_pydantics() -> None:
    # THEN the raw schema is pydantic's own (a Decimal is a number-or-string there)
    assert field_type(Decimal).json_schema == TypeAdapter(Decimal).json_schema()
    assert field_type(date).json_schema == {"type": "string", "format": "date"}


# ------------------------------------------------------------------ optional


@pytest.mark.parametrize(
    "annotation",
    [Optional[int], int | None, Annotated[int | None, Field(ge=0)], Address | None, Any],  # noqa: UP045
)
def test_given_a_type_accepting_none_when_compiled_then_it_is_optional(annotation: Any) -> None:
    assert field_type(annotation).optional is True


@pytest.mark.parametrize("annotation", [int, str, Address, Annotated[int, Field(ge=0)]])
def test_given_a_type_rejecting_none_when_compiled_then_it_is_required(annotation: Any) -> None:
    assert field_type(annotation).optional is False


def test_given_a_model_with_optional_keys_when_compiled_then_the_model_itself_is_required() -> None:
    ftype = field_type(Address)
    assert ftype.optional is False
    assert isinstance(ftype.validate(None), Rejected)


# ------------------------------------------------------------------ compile errors


def test_given_an_unknown_class_when_compiled_then_type_error_explains() -> None:
    class Opaque:
        pass

    with pytest.raises(TypeError, match="unsupported field annotation"):
        field_type(Opaque)


def test_given_an_undefined_forward_reference_when_compiled_then_type_error() -> None:
    with pytest.raises(TypeError, match="Undefined"):
        field_type("Undefined")


# ------------------------------------------------------------------ strict JSON validation


@pytest.mark.parametrize(
    ("annotation", "value"),
    [(int, "42"), (int, 3.0), (int, True), (bool, "true"), (bool, 1), (float, "1.5"), (str, 1)],
)
def test_given_strict_json_when_a_value_has_the_wrong_json_type_then_rejected(
    annotation: Any, value: object
) -> None:
    assert isinstance(field_type(annotation).validate(value), Rejected)


@pytest.mark.parametrize(
    ("annotation", "value", "json_value"),
    [
        (int, 42, 42),
        (float, 2, 2.0),
        (bool, False, False),
        (Literal["air", "rail"], "air", "air"),
        (Colour, "red", "red"),
        (list[str], ["a", "b"], ["a", "b"]),
        (dict[str, int], {"a": 1}, {"a": 1}),
        (time, "10:30", "10:30:00"),
    ],
)
def test_given_a_valid_json_value_when_validated_then_accepted_canonically(
    annotation: Any, value: object, json_value: object
) -> None:
    assert accepted(annotation, value).json_value == json_value


def test_given_a_date_field_when_iso_string_sent_then_stored_as_string_typed_as_date() -> None:
    result = accepted(date, "2026-03-01")
    assert result.typed == date(2026, 3, 1)
    assert result.json_value == "2026-03-01"


def test_given_a_decimal_field_when_number_or_numeric_string_sent_then_stored_as_string() -> None:
    # GIVEN strict JSON mode: a Decimal accepts a JSON number and a numeric string
    assert accepted(Decimal, "1.50").json_value == "1.50"
    assert accepted(Decimal, "1.50").typed == Decimal("1.50")
    assert accepted(Decimal, 2).json_value == "2"


def test_given_a_model_field_when_object_sent_then_stored_as_dict_typed_as_model() -> None:
    result = accepted(Address, {"street": "1 Main St", "city": "Leeds"})
    assert result.typed == Address(street="1 Main St", city="Leeds")
    assert result.json_value == {"street": "1 Main St", "city": "Leeds", "postcode": None}


@pytest.mark.parametrize("value", [{1, 2}, object(), float("nan"), float("inf")])
def test_given_a_non_json_value_when_validated_then_rejected_not_raised(value: object) -> None:
    assert "expected a JSON value" in rejected(int, value).message


def test_given_none_on_a_required_type_when_validated_then_rejected() -> None:
    assert rejected(int, None).message == "expected integer, got null"


def test_given_none_on_an_optional_type_when_validated_then_accepted() -> None:
    assert accepted(int | None, None).json_value is None


# ------------------------------------------------------------------ messages


def test_given_bool_field_when_string_sent_then_message_says_expected_and_got() -> None:
    assert rejected(bool, "yes").message == 'expected true or false, got the string "yes"'


def test_given_nested_errors_when_rejected_then_locations_prefix_messages() -> None:
    value = {"items": [{"name": "a", "qty": 1}, {"name": 7, "qty": 1}], "address": {}}
    message = rejected(Order, value).message
    assert message.startswith("items[1].name: expected string, got the number 7; ")
    assert "address.street: required field is missing" in message


def test_given_many_errors_when_rejected_then_at_most_three_are_reported() -> None:
    message = rejected(list[int], ["a", "b", "c", "d", "e"]).message
    assert message.count("; ") == 2
    assert "[3]" not in message


def test_given_a_constraint_error_when_rejected_then_pydantic_wording_with_input() -> None:
    result = rejected(Annotated[int, Field(ge=0)], -1)
    assert result.message == "input should be greater than or equal to 0, got the number -1"


def test_given_a_union_when_no_branch_matches_then_one_message_for_the_union() -> None:
    result = rejected(int | str, [1])
    assert result.message == "expected integer or string, got a list"
    assert result.hint is None


def test_given_a_union_inside_a_model_when_rejected_then_location_stops_at_the_field() -> None:
    class Shipment(BaseModel):
        ref: int | str

    assert rejected(Shipment, {"ref": None}).message == "ref: expected integer or string, got null"


# ------------------------------------------------------------------ hints


@pytest.mark.parametrize("word", ["yes", "Y", " TRUE ", "1", "true"])
def test_given_bool_field_when_truthy_string_sent_then_hint_says_true(word: str) -> None:
    assert rejected(bool, word).hint == "send the JSON boolean true (no quotes)"


@pytest.mark.parametrize("word", ["no", "N", "False", "0"])
def test_given_bool_field_when_falsy_string_sent_then_hint_says_false(word: str) -> None:
    assert rejected(bool, word).hint == "send the JSON boolean false (no quotes)"


def test_given_bool_field_when_other_string_sent_then_hint_offers_both() -> None:
    assert rejected(bool, "maybe").hint == "send the JSON boolean true or false (no quotes)"


@pytest.mark.parametrize(
    ("annotation", "sent", "hint"),
    [
        (int, "42", "send the number 42 without quotes"),
        (int, " 1,200 ", "send the number 1200 without quotes"),
        (int, "42.0", "send the number 42 without quotes"),
        (float, "1.50", "send the number 1.50 without quotes"),
        (float, "1,200.5", "send the number 1200.5 without quotes"),
        (Decimal, "1,200", "send the number 1200 without quotes"),
        (int, 3.0, "send 3"),
    ],
)
def test_given_a_number_field_when_quoted_number_sent_then_hint_shows_the_number(
    annotation: Any, sent: object, hint: str
) -> None:
    assert rejected(annotation, sent).hint == hint


@pytest.mark.parametrize("sent", ["3.5", 3.5])
def test_given_int_field_when_fraction_sent_then_hint_asks_for_a_whole_number(
    sent: object,
) -> None:
    hint = rejected(int, sent).hint
    assert hint is not None
    assert "whole number" in hint


@pytest.mark.parametrize("sent", ["1,20", "abc", "nan"])
def test_given_a_number_field_when_ambiguous_string_sent_then_no_number_is_guessed(
    sent: str,
) -> None:
    assert rejected(float, sent).hint is None


@pytest.mark.parametrize("sent", ["Air", " air ", "AIR"])
def test_given_a_literal_when_a_case_or_spacing_variant_sent_then_hint_is_exact(
    sent: str,
) -> None:
    assert rejected(Literal["air", "rail", "car"], sent).hint == 'send exactly "air"'


def test_given_a_literal_when_unrelated_value_sent_then_hint_lists_options() -> None:
    hint = rejected(Literal["air", "rail", "car"], "boat").hint
    assert hint == 'send one of "air", "rail", "car"'


def test_given_an_enum_when_case_variant_sent_then_hint_is_exact() -> None:
    assert rejected(Colour, "Red").hint == 'send exactly "red"'


def test_given_a_numeric_literal_when_quoted_option_sent_then_hint_is_the_number() -> None:
    assert rejected(Literal[1, 2], "1").hint == "send exactly 1"


@pytest.mark.parametrize("sent", ["3/1/2026", "1 March 2026", 20260301])
def test_given_a_date_field_when_non_iso_sent_then_format_hint_without_guessing(
    sent: object,
) -> None:
    assert rejected(date, sent).hint == 'send the date as "YYYY-MM-DD"'


def test_given_a_date_field_when_iso_date_time_sent_then_hint_is_its_date_part() -> None:
    assert rejected(date, "2026-03-01T10:00:00").hint == 'send only the date: "2026-03-01"'


def test_given_a_datetime_field_when_non_iso_sent_then_hint_gives_iso_example() -> None:
    hint = rejected(datetime, "March 1st").hint
    assert hint is not None
    assert "ISO 8601" in hint
    assert "2026-03-01T14:30:00Z" in hint


def test_given_a_time_field_when_bad_time_sent_then_hint_gives_format() -> None:
    assert rejected(time, "noon").hint == 'send the time as "HH:MM" or "HH:MM:SS"'


def test_given_a_list_field_when_a_scalar_sent_then_hint_wraps_it() -> None:
    assert rejected(list[str], "a").hint == 'wrap it in a JSON list: ["a"]'


def test_given_a_list_field_when_an_encoded_list_sent_then_hint_says_not_a_string() -> None:
    assert rejected(list[str], '["a"]').hint == "send a JSON list, not a string containing one"


def test_given_a_model_field_when_an_encoded_object_sent_then_hint_says_not_a_string() -> None:
    hint = rejected(Address, '{"street": "a", "city": "b"}').hint
    assert hint == "send a JSON object, not a string containing one"


@pytest.mark.parametrize(("sent", "shown"), [(42, '"42"'), (1.5, '"1.5"')])
def test_given_a_string_field_when_a_number_sent_then_hint_quotes_it(
    sent: object, shown: str
) -> None:
    assert rejected(str, sent).hint == f"send it as a JSON string: {shown}"


def test_given_a_nested_field_when_rejected_then_hint_carries_the_location() -> None:
    value = {"items": [{"name": "a", "qty": "2"}], "address": {"street": "s", "city": "c"}}
    assert rejected(Order, value).hint == "items[0].qty: send the number 2 without quotes"


@pytest.mark.parametrize(
    ("annotation", "sent", "hint"),
    [
        (Annotated[str, Field(min_length=2)], "A", "send at least 2 characters"),
        (Annotated[str, Field(max_length=3)], "ABCD", "send at most 3 characters"),
        (Annotated[list[int], Field(min_length=1)], [], "send at least 1 item"),
        (Annotated[str, Field(pattern=r"^[A-Z]{3}$")], "abc", "send a string matching ^[A-Z]{3}$"),
    ],
)
def test_given_a_constrained_field_when_violated_then_hint_states_the_constraint(
    annotation: Any, sent: object, hint: str
) -> None:
    assert rejected(annotation, sent).hint == hint


def test_given_no_clear_fix_when_rejected_then_hint_is_none() -> None:
    assert rejected(int, "abc").hint is None


# ------------------------------------------------------------------ default number bounds

SAFE = 2**53 - 1


@pytest.mark.parametrize("value", [SAFE, -SAFE, 0])
def test_given_an_unbounded_int_when_within_json_safe_range_then_accepted(value: int) -> None:
    assert accepted(int, value).json_value == value


@pytest.mark.parametrize("value", [SAFE + 1, -SAFE - 1, 10**30, int("7" * 4000)])
def test_given_an_unbounded_int_when_past_json_safe_range_then_rejected_naming_it(
    value: int,
) -> None:
    # GIVEN an int field that declares no bound WHEN a huge integer is sent
    result = rejected(int, value)
    # THEN it is refused with a hint naming the range (and never a 4,000-digit echo)
    assert result.hint == f"send an integer -{SAFE} to {SAFE}"
    assert len(result.message) < 120


def test_given_a_4000_digit_integer_when_rejected_then_message_counts_its_digits() -> None:
    assert rejected(int, int("7" * 4000)).message.endswith("got a number with 4000 digits")


def test_given_an_integer_past_pythons_digit_limit_when_validated_then_rejected_not_raised() -> (
    None
):
    # GIVEN an int too long for Python to turn into text (sys.get_int_max_str_digits)
    # WHEN validated THEN a clean rejection comes back, for any field type
    for annotation in (int, Decimal, str):
        result = rejected(annotation, 10**5000)
        assert result.message == "expected a JSON value, got a number with too many digits"


def test_given_one_declared_bound_when_the_other_side_is_hit_then_the_default_applies() -> None:
    # GIVEN an int declaring only ge=0
    # WHEN a value above the default ceiling is sent THEN the hint names the full range
    assert rejected(Annotated[int, Field(ge=0)], SAFE + 1).hint == f"send an integer 0-{SAFE}"
    # AND a value under the declared floor gets the declared bound only
    assert rejected(Annotated[int, Field(ge=0)], -1).hint == "send an integer >= 0"


def test_given_a_declared_bound_past_the_default_when_validated_then_the_declared_one_rules() -> (
    None
):
    assert accepted(Annotated[int, Field(le=10**20)], 10**19).json_value == 10**19
    assert accepted(Annotated[Decimal, Field(le=10**18)], "1e17").typed == Decimal("1e17")


@pytest.mark.parametrize("sent", ["1E+999999999", "1E-999999999", "1" * 16_000, 1e20, "-1e15"])
def test_given_an_unbounded_decimal_when_huge_or_tiny_then_rejected_naming_the_range(
    sent: object,
) -> None:
    result = rejected(Decimal, sent)
    assert result.hint == (
        "send a decimal number > -1000000000000000 and < 1000000000000000, max 30 digits"
    )


def test_given_an_unbounded_decimal_when_ordinary_then_accepted_as_before() -> None:
    assert accepted(Decimal, "999999999999999.99").json_value == "999999999999999.99"
    assert accepted(Decimal, "0.000001").json_value == "0.000001"


@pytest.mark.parametrize("sent", ["1e400", "-1e400", "1e999999999"])
def test_given_a_float_when_a_non_finite_value_arrives_then_rejected(sent: str) -> None:
    # GIVEN JSON number text too large for a float: json.loads reads it as infinity
    parsed = json.loads(sent)
    # WHEN it is validated, or sent quoted THEN it is refused either way, never stored
    assert rejected(float, parsed).message == "expected a JSON value, got a non-finite number"
    assert isinstance(field_type(float).accept(sent), Rejected)


def test_given_a_nested_model_when_a_number_inside_is_huge_then_the_default_applies() -> None:
    # GIVEN a model whose int field declares no bound (pydantic would reuse the model's own
    # validator, without the default bounds, unless told not to)
    value = {"items": [{"name": "a", "qty": 10**20}], "address": {"street": "s", "city": "c"}}
    # WHEN validated THEN the nested integer is bounded too, with its location
    result = rejected(Order, value)
    assert result.message.startswith("items[0].qty: input should be less than or equal to")
    assert result.hint == f"items[0].qty: send an integer -{SAFE} to {SAFE}"


def test_given_default_bounds_when_described_then_type_strings_stay_short() -> None:
    # THEN only declared bounds are named: a default is a sanity limit, not worth the tokens
    assert field_type(int).type_string == "integer"
    assert field_type(Decimal).type_string == "decimal number"
    assert field_type(float).type_string == "number"


def test_given_a_huge_value_when_validated_then_it_is_quick() -> None:
    # GIVEN values built to be slow to parse, compare or print
    hostile: list[tuple[Any, object]] = [
        (int, int("9" * 4299)),
        (int, "9" * 16_000),
        (float, "9" * 16_000),
        (Decimal, "9" * 16_000),
        (Decimal, "1E+999999999"),
        (Literal["a"], "9" * 16_000),
    ]
    compiled = [(field_type(annotation), value) for annotation, value in hostile]
    started = perf_counter()
    for ftype, value in compiled * 20:
        # WHEN each is validated and accepted THEN each is rejected, and all of it is fast
        assert isinstance(ftype.accept(value), Rejected)
    assert perf_counter() - started < 2.0


# ------------------------------------------------------------------ unambiguous encodings


@pytest.mark.parametrize(
    ("annotation", "sent", "stored"),
    [
        (bool, "yes", True),
        (bool, " TRUE ", True),
        (bool, "No", False),
        (bool, "false", False),
        (bool | None, "yes", True),
        (int, "6", 6),
        (int, " -3 ", -3),
        (Annotated[int, Field(ge=0, le=10)], "0", 0),
        (float, "0.7", 0.7),
        (float, "1e3", 1000.0),
        (float, "6", 6.0),
        (Literal["kitchen speaker", "hall"], "Kitchen  Speaker", "kitchen speaker"),
        (Literal["2", "3"], 2, "2"),
        (Literal["False", "True"], False, "False"),
        (Literal[1, 2], "1", 1),
        (Colour, " RED ", "red"),
        (list[int], ["1", 2], [1, 2]),
        (dict[str, bool], {"a": "no"}, {"a": False}),
        (
            Order,
            {"items": [{"name": "a", "qty": "2"}], "address": {"street": "s", "city": "c"}},
            {
                "items": [{"name": "a", "qty": 2}],
                "address": {"street": "s", "city": "c", "postcode": None},
            },
        ),
    ],
)
def test_given_an_unambiguous_encoding_when_accepted_then_the_value_is_read_and_flagged(
    annotation: Any, sent: object, stored: object
) -> None:
    # GIVEN a value in another encoding than strict JSON, with one clear reading
    ftype = field_type(annotation)
    # WHEN accepted THEN the clear reading is stored, flagged as coerced
    result = ftype.accept(sent)
    assert isinstance(result, Accepted), result
    assert (result.json_value, result.coerced) == (stored, True)
    # AND strict validation still refuses the encoding as sent
    assert isinstance(ftype.validate(sent), Rejected)


@pytest.mark.parametrize(
    ("annotation", "sent"),
    [
        (bool, "1"),  # a digit in a yes/no field may be a count meant elsewhere
        (bool, "0"),
        (bool, 1),
        (bool, 0),
        (bool, "y"),
        (bool, "on"),
        (bool, ""),
        (bool, "   "),
        (int, "6.0"),  # a decimal point says it was not written as an integer
        (int, "6.5"),
        (int, 6.0),
        (int, "1e3"),
        (int, "1,200"),  # a thousands separator in one locale is a decimal comma in another
        (int, "007"),
        (int, "+6"),
        (int, "٣"),  # a non-ASCII digit
        (int, ""),
        (float, "1,5"),
        (float, "1e999"),
        (float, "nan"),
        (str, 2134),  # a number for text may have lost a leading zero
        (Literal["a", "A"], "a "),  # two options match once case is ignored
        (Literal["a", "b"], "c"),
        (Literal["null", "x"], None),
        (int | str, [1]),  # a union: no single reading
        (Annotated[int, Field(gt=0)], "0"),  # read, but 0 is not > 0
        (Order, {"items": [{"name": 1, "qty": "2"}], "address": {"street": "s", "city": "c"}}),
    ],
)
def test_given_an_ambiguous_or_invalid_encoding_when_accepted_then_it_is_rejected(
    annotation: Any, sent: object
) -> None:
    assert isinstance(field_type(annotation).accept(sent), Rejected)


def test_given_an_encoded_value_that_is_itself_invalid_when_accepted_then_says_why() -> None:
    result = field_type(Annotated[int, Field(gt=0)]).accept("0")
    assert result == Rejected(
        "input should be greater than 0, got the number 0", "send an integer > 0"
    )


def test_given_a_valid_value_when_accepted_then_it_is_not_flagged() -> None:
    assert field_type(bool).accept(True) == Accepted(True, True, coerced=False)
    assert field_type(Decimal).accept("1.50") == Accepted("1.50", Decimal("1.50"))


# ------------------------------------------------------------------ examples

BUDGET_LINE = Annotated[str, Field(pattern=r"^BL-\d{4}$")]


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        (BUDGET_LINE, "text like BL-2041"),
        (BUDGET_LINE | None, "text like BL-2041"),
        (
            Annotated[str, Field(pattern=r"^BL-\d{4}$", max_length=7)],
            "text like BL-2041, at most 7 chars",
        ),
        (date, "date YYYY-MM-DD, e.g. BL-2041"),
    ],
)
def test_given_an_example_when_compiled_then_the_type_string_shows_it_not_the_pattern(
    annotation: Any, expected: str
) -> None:
    assert field_type(annotation, example="BL-2041").type_string == expected


def test_given_an_example_when_the_pattern_is_missed_then_the_hint_shows_both() -> None:
    # GIVEN a patterned field with an example
    ftype = field_type(BUDGET_LINE, example="BL-2041")
    # WHEN a value misses the pattern THEN the regex is still the check, and the hint shows the
    # example next to it
    result = ftype.validate("BL-20411")
    assert isinstance(result, Rejected)
    assert result.hint == "send text like BL-2041 (matching ^BL-\\d{4}$)"
    assert isinstance(ftype.validate("BL-2041"), Accepted)


# ------------------------------------------------------------------ json_depth


@pytest.mark.parametrize(
    ("value", "depth"),
    [
        (1, 0),
        ("text", 0),
        (None, 0),
        ([], 1),
        ({}, 1),
        ([1, 2], 1),
        ([[1]], 2),
        ({"a": [1, {"b": []}]}, 4),
    ],
)
def test_given_a_json_value_when_measured_then_depth_counts_nesting(
    value: object, depth: int
) -> None:
    assert json_depth(value) == depth


def test_given_very_deep_nesting_when_measured_then_no_recursion_error() -> None:
    value: list[Any] = []
    for _ in range(50_000):
        value = [value]
    assert json_depth(value) == 50_001


def test_given_a_cycle_when_measured_then_value_error() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="cyclic"):
        json_depth(loop)


# ------------------------------------------------------------------ properties

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
    | st.dates().map(str)
    | st.decimals(allow_nan=False, allow_infinity=False).map(str)
)
JSON_VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner)
)
COMPILED = [
    field_type(annotation)
    for annotation in (
        int,
        str,
        bool,
        float,
        Decimal,
        date,
        int | None,
        list[str],
        Literal["air", "rail"],
        Address,
        Annotated[int, Field(ge=0)],
    )
]


@given(ftype=st.sampled_from(COMPILED), value=JSON_VALUES | SCALARS.map(str))
def test_given_any_json_value_when_accepted_then_what_is_stored_passes_strict_validation(
    ftype: FieldType, value: object
) -> None:
    # GIVEN any JSON value, including the text of any scalar ("true", "12", "None")
    # WHEN accepted (reading unambiguous encodings)
    result = ftype.accept(value)
    # THEN whatever is stored is valid as strict JSON, and is stored as itself
    if isinstance(result, Accepted):
        again = ftype.validate(result.json_value)
        assert isinstance(again, Accepted)
        assert (again.json_value, again.coerced) == (result.json_value, False)
        assert result.coerced == isinstance(ftype.validate(value), Rejected)
    else:
        assert result.message


@given(ftype=st.sampled_from(COMPILED), value=JSON_VALUES)
def test_given_any_json_value_when_validated_then_never_raises_and_accepted_round_trips(
    ftype: FieldType, value: object
) -> None:
    result = ftype.validate(value)
    if isinstance(result, Accepted):
        again = ftype.validate(result.json_value)
        assert isinstance(again, Accepted)
        assert again.json_value == result.json_value
    else:
        assert result.message
