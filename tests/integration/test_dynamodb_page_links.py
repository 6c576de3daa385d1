"""The DynamoDB page-link ledger on the local endpoints: a link is claimed once, per principal,
and of two claims racing exactly one wins."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from forms.storage.dynamodb_page_links import DynamoDBPageLinkLedger

UNTIL = 1_800_000_000


def test_a_link_is_claimed_once_per_principal_with_its_expiry(dynamodb: Any, table: str) -> None:
    ledger = DynamoDBPageLinkLedger(dynamodb, table)
    assert ledger.claim("acme/alice", "link-1", UNTIL)
    assert not ledger.claim("acme/alice", "link-1", UNTIL)
    assert ledger.claim("globex/alice", "link-1", UNTIL)
    item = dynamodb.get_item(
        TableName=table, Key={"pk": {"S": "PL#acme/alice"}, "sk": {"S": "link-1"}}
    )["Item"]
    assert item["expires_at"] == {"N": str(UNTIL)}  # the table's TTL attribute


def test_of_claims_racing_on_one_link_exactly_one_wins(dynamodb: Any, table: str) -> None:
    ledger = DynamoDBPageLinkLedger(dynamodb, table)
    with ThreadPoolExecutor(8) as pool:
        won = list(pool.map(lambda _: ledger.claim("acme/alice", "race", UNTIL), range(8)))
    assert won.count(True) == 1


def test_principals_that_differ_only_by_an_escape_are_two_principals(
    dynamodb: Any, table: str
) -> None:
    ledger = DynamoDBPageLinkLedger(dynamodb, table)
    assert ledger.claim("acme/a#b", "link", UNTIL)
    assert ledger.claim("acme/a%23b", "link", UNTIL)
    assert not ledger.claim("acme/a#b", "link", UNTIL)
