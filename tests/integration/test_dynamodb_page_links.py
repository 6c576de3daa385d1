"""The DynamoDB page-link ledger on the local endpoints: the ledger's contract, and the item a
claim writes (escaped key, the table's TTL attribute)."""

from __future__ import annotations

from typing import Any

import pytest

from forms.storage.dynamodb_page_links import DynamoDBPageLinkLedger
from forms.storage.page_links import PageLinkLedger
from forms.storage.page_links_contract import UNTIL, PageLinkLedgerContract


class TestDynamoDBPageLinkLedger(PageLinkLedgerContract):
    @pytest.fixture
    def ledger(self, dynamodb: Any, table: str) -> PageLinkLedger:
        return DynamoDBPageLinkLedger(dynamodb, table)


def test_a_claim_is_one_item_under_the_escaped_principal_expiring_with_the_link(
    dynamodb: Any, table: str
) -> None:
    assert DynamoDBPageLinkLedger(dynamodb, table).claim("acme/a#b", "link-1", UNTIL)
    item = dynamodb.get_item(
        TableName=table, Key={"pk": {"S": "PL#acme/a%23b"}, "sk": {"S": "link-1"}}
    )["Item"]
    assert item["expires_at"] == {"N": str(UNTIL)}  # the table's TTL attribute


def test_a_claim_naming_its_holder_keeps_it_and_when_on_the_item(dynamodb: Any, table: str) -> None:
    ledger = DynamoDBPageLinkLedger(dynamodb, table)
    assert ledger.claim("acme/alice", "link-2", UNTIL, holder="d1g35t", at=1_700_000_000)
    item = dynamodb.get_item(
        TableName=table, Key={"pk": {"S": "PL#acme/alice"}, "sk": {"S": "link-2"}}
    )["Item"]
    assert item["holder"] == {"S": "d1g35t"} and item["claimed_at"] == {"N": "1700000000"}
