"""The page-link ledger on the forms table, through an injected low-level boto3 client.

One item per used link: ``pk = PL#<principal>``, ``sk = <link id>``, ``expires_at`` (unix
seconds, the table's TTL attribute), and, when the claim names them, ``holder`` (a digest of
the claiming browser's entry cookie) and ``claimed_at``. A claim is one conditional ``PutItem``
(``attribute_not_exists(pk)``): of two exchanges of one link racing, exactly one wins.
``holder`` is one strongly consistent ``GetItem``, read only after a claim was refused. The
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

    def claim(
        self, principal: str, link_id: str, expires_at: int, holder: str = "", at: int = 0
    ) -> bool:
        item = {**self._key(principal, link_id), "expires_at": n(int(expires_at))}
        if holder:
            item["holder"] = s(holder)
            item["claimed_at"] = n(int(at))
        try:
            self._client.put_item(
                TableName=self._table,
                Item=item,
                ConditionExpression="attribute_not_exists(pk)",
            )
        except Exception as exc:
            if reason_codes(exc) == ["ConditionalCheckFailed"]:
                return False  # claimed before
            raise
        return True

    def holder(self, principal: str, link_id: str) -> tuple[str, int] | None:
        found = self._client.get_item(
            TableName=self._table, Key=self._key(principal, link_id), ConsistentRead=True
        ).get("Item")
        if found is None:
            return None
        holder = found.get("holder", {}).get("S", "")
        return holder, int(found.get("claimed_at", {}).get("N", "0"))

    @staticmethod
    def _key(principal: str, link_id: str) -> dict[str, dict[str, str]]:
        return {"pk": s(PAGE_LINK_PREFIX + escape(principal)), "sk": s(link_id)}
