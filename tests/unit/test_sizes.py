"""One stored item's size limit (``forms.storage.sizes``): where it refuses, what the refusal
carries to the model, and which of DynamoDB's errors mean the same thing."""

from __future__ import annotations

from typing import Any

import pytest

from forms.errors import SizeLimit
from forms.storage.dynamodb_requests import item_too_large
from forms.storage.sizes import ITEM_LIMIT, check, text_bytes
from forms.surface.results import error_result


class ClientError(Exception):
    """The shape of botocore's ``ClientError``: a ``response`` dict."""

    def __init__(self, response: dict[str, Any]) -> None:
        super().__init__(str(response))
        self.response = response


def test_the_limit_is_inclusive_and_counts_utf8_bytes() -> None:
    # GIVEN sizes at and just past the limit / THEN only the one past it is refused
    check("draft", ITEM_LIMIT, "intake")
    with pytest.raises(SizeLimit) as refused:
        check("draft", ITEM_LIMIT + 1, "intake")
    assert (refused.value.item, refused.value.size, refused.value.limit) == (
        "draft",
        ITEM_LIMIT + 1,
        ITEM_LIMIT,
    )
    # AND text is measured in UTF-8 bytes, as DynamoDB measures it
    assert (text_bytes("abc"), text_bytes("é"), text_bytes("日本")) == (3, 2, 6)


def test_the_refusal_reaches_the_model_as_data_with_the_sizes_and_what_to_do() -> None:
    # GIVEN a draft refused for its size
    with pytest.raises(SizeLimit) as refused:
        check("draft", 412_345, "intake")
    # WHEN it is made a tool result
    result = error_result(refused.value)
    # THEN it names the item, its size, the limit and what to do; never "send it again"
    assert result["ok"] is False and result["error"] == "size_limit"
    assert (result["item"], result["size"], result["limit"]) == ("draft", 412_345, ITEM_LIMIT)
    assert "'intake'" in result["message"] and "412,345 bytes" in result["message"]
    assert "split" in result["hint"] and "again" not in result["hint"]


@pytest.mark.parametrize(
    ("response", "too_large"),
    [
        (
            {
                "Error": {
                    "Code": "ValidationException",
                    "Message": "Item size has exceeded the maximum allowed size",
                }
            },
            True,
        ),
        (
            {
                "Error": {"Code": "TransactionCanceledException", "Message": "cancelled"},
                "CancellationReasons": [
                    {"Code": "None"},
                    {"Code": "ValidationError", "Message": "Item size has exceeded the maximum"},
                ],
            },
            True,
        ),
        (
            {
                "Error": {
                    "Code": "ValidationException",
                    "Message": "One or more parameter values were invalid",
                }
            },
            False,
        ),
        (
            {
                "Error": {"Code": "TransactionCanceledException", "Message": "cancelled"},
                "CancellationReasons": [{"Code": "ConditionalCheckFailed"}, {"Code": "None"}],
            },
            False,
        ),
    ],
)
def test_only_dynamodbs_item_size_refusals_are_read_as_too_large(
    response: dict[str, Any], too_large: bool
) -> None:
    assert item_too_large(ClientError(response)) is too_large


def test_an_error_without_a_response_is_not_too_large() -> None:
    assert item_too_large(ValueError("Item size")) is False
