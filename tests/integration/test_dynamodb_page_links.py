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
