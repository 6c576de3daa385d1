"""``FactStore`` on the forms table, beside the instances, documents and drafts (own key space).

One partition per principal holds all of its memory::

    M#<principal> / SETTINGS               settings (JSON: MemorySettings)
    M#<principal> / H#<key>                v (N): the key's version (revisions appended);
                                           head (JSON: FactHead, with the fact in force)
    M#<principal> / R#<key>#<seq:010d>     rev (JSON: the revision's record: key, seq, change,
                                           source, dates); content (JSON: value, words,
                                           derivation), removed when a deletion erases it
    M#<principal> / K#<key>#<replay key>   a write's idempotency key, once applied (written
                                           once, conditionally, with its revision)

``<principal>`` (the whole ``tenant/sub``) and ``<key>`` have ``%`` and ``#`` escaped, so no
principal's items share a partition with another's, and a key's items never read as
another's.

- Listing the facts in force is one consistent Query of the ``H#`` items, whatever the
  histories' length; a key's head, and the settings, one GetItem each.
- An append is one TransactWriteItems: the head (``attribute_not_exists`` for a key's first
  revision, else ``v = :expected``, listed first) and the revision (``attribute_not_exists``).
  The store remembers the last head it read or wrote of up to ``remember`` keys, so an append
  planned on a head it read (or listed) reads nothing more; the condition refuses it if the
  key moved on, and the head is then read again for the ``Conflict``
  (``forms.storage.dynamodb_requests.refused``, as for instances and drafts).
- A revision carrying a replay key (``forms.storage.facts.replay_key``) adds its ``K#`` item
  (``attribute_not_exists``, listed last): a copy of the write is refused as ``CallRecorded``
  by the same transaction, without a read.
- A deletion adds, to the same transaction, one ``REMOVE content`` update per earlier revision
  not yet erased. A transaction holds 100 actions: past 98 revisions to erase, the oldest are
  erased first, in transactions of their own, so a deletion that lands never leaves content
  behind (a deletion that then loses a race has erased part of a history the user asked to
  forget, and is planned again).
- A key's history is one Query of its ``R#`` items; ``export`` one Query of all of them.
"""

from __future__ import annotations

import json
from typing import Any

from forms.memory.facts import FactHead, FactRevision, MemorySettings
from forms.storage.dynamodb_requests import escape as _escape
from forms.storage.dynamodb_requests import (
    get_item,
    item_too_large,
    largest_item,
    put_action,
    query_items,
    refused,
)
from forms.storage.dynamodb_requests import n as _n
from forms.storage.dynamodb_requests import s as _s
from forms.storage.facts import FactStore, recorded, replay_key
from forms.storage.remembered import Remembered
from forms.storage.sizes import too_large

_SETTINGS = "SETTINGS"
_HEAD = "H#"
_REVISION = "R#"
_REPLAYED = "K#"
_CONTENT = {"value", "words", "derivation"}
_ACTIONS = 100
"""The most actions one TransactWriteItems takes."""


class DynamoDBFactStore(FactStore):
    """Principals' facts in the forms table, through a low-level boto3 DynamoDB client."""

    def __init__(self, client: Any, table_name: str, *, remember: int = 1024) -> None:
        self._client = client
        self._table = table_name
        self._known: Remembered[tuple[str, str], FactHead] = Remembered(remember)

    # ------------------------------------------------------------------ reading

    def _read_head(self, principal: str, key: str) -> FactHead | None:
        item = get_item(self._client, self._table, _partition(principal), _HEAD + _escape(key))
        head = FactHead.model_validate_json(item["head"]["S"]) if item is not None else None
        self._known.keep((principal, key), head)
        return head

    def _read_heads(self, principal: str) -> list[FactHead]:
        heads = [
            FactHead.model_validate_json(item["head"]["S"])
            for item in query_items(self._client, self._table, _partition(principal), prefix=_HEAD)
        ]
        for head in heads:
            self._known.keep((principal, head.key), head)
        return heads

    def _read_history(self, principal: str, key: str) -> list[FactRevision]:
        return [
            _revision(item)
            for item in query_items(
                self._client, self._table, _partition(principal), prefix=_revision_prefix(key)
            )
        ]

    def _read_all(self, principal: str) -> list[FactRevision]:
        return [
            _revision(item)
            for item in query_items(
                self._client, self._table, _partition(principal), prefix=_REVISION
            )
        ]

    def _read_settings(self, principal: str) -> MemorySettings | None:
        item = get_item(self._client, self._table, _partition(principal), _SETTINGS)
        return MemorySettings.model_validate_json(item["settings"]["S"]) if item else None

    def _planned_on(self, principal: str, key: str, version: int) -> FactHead | None:
        found, known = self._known.at((principal, key), version)
        return known if found else self._read_head(principal, key)

    # ------------------------------------------------------------------ writing

    def _write_settings(self, principal: str, settings: MemorySettings) -> None:
        item = {
            "pk": _s(_partition(principal)),
            "sk": _s(_SETTINGS),
            "settings": _s(settings.model_dump_json()),
        }
        self._client.put_item(TableName=self._table, Item=item)

    def _write(
        self, principal: str, before: FactHead | None, after: FactHead, revision: FactRevision
    ) -> None:
        pk = _s(_partition(principal))
        head = {
            "pk": pk,
            "sk": _s(_HEAD + _escape(revision.key)),
            "v": {"N": str(after.version)},
            "head": _s(after.model_dump_json()),
        }
        if before is None:
            actions = [put_action(self._table, head, "attribute_not_exists(pk)")]
        else:
            actions = [put_action(self._table, head, "v = :v", values={":v": _n(before.version)})]
        record = revision.model_dump(mode="json", exclude={*_CONTENT, "erased"})
        content = revision.model_dump(mode="json", include=_CONTENT)
        item = {
            "pk": pk,
            "sk": _s(_revision_sk(revision.key, revision.seq)),
            "rev": _s(json.dumps(record)),
            "content": _s(json.dumps(content)),
        }
        actions.append(put_action(self._table, item, "attribute_not_exists(pk)"))
        replay = replay_key(revision)
        once = []
        if replay is not None:
            sk = _s(f"{_REPLAYED}{_escape(revision.key)}#{_escape(replay)}")
            once = [put_action(self._table, {"pk": pk, "sk": sk}, "attribute_not_exists(pk)")]
        if revision.change == "deleted":
            first = before.erased if before is not None else 0
            erase = [self._erase(pk, revision.key, seq) for seq in range(first, revision.seq)]
            room = _ACTIONS - len(actions) - len(once)
            early, erase = erase[: max(len(erase) - room, 0)], erase[max(len(erase) - room, 0) :]
            for start in range(0, len(early), _ACTIONS):
                self._client.transact_write_items(TransactItems=early[start : start + _ACTIONS])
            actions += erase
        actions += once
        try:
            self._client.transact_write_items(TransactItems=actions)
        except Exception as exc:
            if item_too_large(exc):  # past what the base measured: the same refusal
                raise too_large("fact", largest_item(actions), revision.key) from None
            if not isinstance(exc, self._client.exceptions.TransactionCanceledException):
                raise
            raise refused(
                exc,
                kind="fact",
                subject=revision.key,
                expected=revision.seq,
                current=lambda: self._read_head(principal, revision.key),
                guarded=2,  # the head's version, and the revision's place
                recorded=(lambda: recorded(revision)) if replay is not None else None,
            ) from None
        self._known.keep((principal, revision.key), after)

    # ------------------------------------------------------------------ inside

    def _erase(self, pk: dict[str, str], key: str, seq: int) -> dict[str, Any]:
        return {
            "Update": {
                "TableName": self._table,
                "Key": {"pk": pk, "sk": _s(_revision_sk(key, seq))},
                "UpdateExpression": "REMOVE content",
                "ConditionExpression": "attribute_exists(pk)",
            }
        }


def _revision(item: dict[str, Any]) -> FactRevision:
    """A revision item read back: its record, with its content unless erased."""
    data = json.loads(item["rev"]["S"])
    if "content" in item:
        data.update(json.loads(item["content"]["S"]))
    else:
        data["erased"] = True
    return FactRevision.model_validate(data)


def _partition(principal: str) -> str:
    return f"M#{_escape(principal)}"


def _revision_prefix(key: str) -> str:
    return f"{_REVISION}{_escape(key)}#"


def _revision_sk(key: str, seq: int) -> str:
    return f"{_revision_prefix(key)}{seq:010d}"
