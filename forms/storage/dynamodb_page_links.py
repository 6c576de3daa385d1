"""The page-link ledger on the forms table, through an injected low-level boto3 client.

One item per used link: ``pk = PL#<principal>``, ``sk = <link id>``, ``expires_at`` (unix
seconds, the table's TTL attribute). A claim is one conditional ``PutItem``
(``attribute_not_exists(pk)``): of two exchanges of one link racing, exactly one wins. The
principal (``tenant/sub``) is escaped as every adapter escapes a key part (``%`` and ``#``),
so the keys of two principals never collide, nor with the other kinds of item (``I#``,
``W#``, ``M#``...).

This module does not import boto3: the client comes from the caller.
"""

from __future__ import annotations

from typing import Any

from forms.storage.dynamodb_requests import escape, n, reason_codes, s
from forms.storage.page_links import PageLinkLedger

PAGE_LINK_PREFIX = "PL#"


class DynamoDBPageLinkLedger(PageLinkLedger):
    """Used page links on the forms table (one conditional put per claim)."""

    def __init__(self, client: Any, table: str) -> None:
        self._client = client
        self._table = table

    def claim(self, principal: str, link_id: str, expires_at: int) -> bool:
        try:
            self._client.put_item(
                TableName=self._table,
                Item={
                    "pk": s(PAGE_LINK_PREFIX + escape(principal)),
                    "sk": s(link_id),
                    "expires_at": n(int(expires_at)),
                },
                ConditionExpression="attribute_not_exists(pk)",
            )
        except Exception as exc:
            if reason_codes(exc) == ["ConditionalCheckFailed"]:
                return False  # claimed before
            raise
        return True
