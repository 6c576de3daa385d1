"""How ``DynamoDBFormStore`` reads: an instance by id (its HOME pointer once, then its home
item), a home item parsed into a ``FormInstance`` whose field logs come partial and are read
from the revision items once a call needs them, the instances it last read or wrote (by id
and version, so a commit planned on a read adds none), and the sparse indexes' listings (one
Query, one BatchGetItem of the homes they name). The layout is ``forms.storage.dynamodb``'s
docstring's."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from forms.errors import StoreError
from forms.instance import FieldHistory, FormInstance, InstanceState, Revision
from forms.storage.dynamodb_items import (
    HOME_SK,
    REVISIONS,
    Header,
    Heads,
    Known,
    Parts,
    field_of,
    instance_key,
    item_key,
)
from forms.storage.dynamodb_requests import query_items
from forms.storage.dynamodb_requests import s as _s

APPROVAL_INDEX = "approvals"
"""The table's global secondary index on ``approval_pk`` / ``approval_sk`` (template.yaml)."""
FAILED_HOOK_INDEX = "failed_hooks"
"""The table's global secondary index on ``failed_pk`` / ``failed_sk`` (template.yaml)."""
OPEN_FORM_INDEX = "open_forms"
"""The table's global secondary index on ``open_pk`` / ``open_sk`` (template.yaml)."""
DUE_INDEX = "due"
"""The table's global secondary index on ``due_pk`` / ``due_sk`` (template.yaml): the sweeper's."""
DUE_PAGE = 100
"""Places one Query of the due index returns (then one BatchGetItem of their homes)."""


class InstanceReads:
    """The reading half of ``DynamoDBFormStore``: the client and table, how often a log that
    does not add up yet is read again (``pause(attempt)`` between), and how many instances
    to remember."""

    def __init__(
        self,
        client: Any,
        table_name: str,
        *,
        read_attempts: int,
        pause: Callable[[int], None] | None,
        remember: int,
    ) -> None:
        if read_attempts < 1:
            raise ValueError("read_attempts must be at least 1")
        self._client = client
        self._table = table_name
        self._read_attempts = read_attempts
        self._pause = pause
        self._remember = remember
        self._recent: OrderedDict[str, Known] = OrderedDict()
        self._homes: OrderedDict[str, tuple[str, str]] = OrderedDict()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ reading

    def _read(self, instance_id: str) -> Known | None:
        """The instance as stored now (one GetItem of its home, plus one of its HOME item
        the first time this store meets the id), or None when there is none."""
        with self._lock:
            home = self._homes.get(instance_id)
        if home is None:
            found = self._client.get_item(
                TableName=self._table,
                Key=item_key(instance_key(instance_id), HOME_SK),
                ConsistentRead=True,
            ).get("Item")
            if found is None:
                return None
            home = (found["home_pk"]["S"], found["home_sk"]["S"])
        return self._read_home(instance_id, home)

    def _read_home(self, instance_id: str, home: tuple[str, str]) -> Known | None:
        item = self._client.get_item(
            TableName=self._table, Key=item_key(*home), ConsistentRead=True
        ).get("Item")
        if item is None:  # its HOME item is written in the same transaction: a TTL removal
            return None
        return self._known_from(item)

    def _known_from(self, item: Mapping[str, Any]) -> Known:
        """The instance a home item holds: the remembered one if it is that version."""
        instance_id = item["instance_id"]["S"]
        version = int(item["version"]["N"])
        with self._lock:
            remembered = self._recent.get(instance_id)
        if remembered is not None and remembered.instance.version == version:
            return remembered
        known = self._parse(item, instance_id, version)
        self._keep(known, (item["pk"]["S"], item["sk"]["S"]))
        return known

    def _parse(self, item: Mapping[str, Any], instance_id: str, version: int) -> Known:
        header = Header.model_validate_json(item["header"]["S"])
        heads_text = item["heads"]["S"]
        heads = Heads.validate_json(heads_text)
        load = self._log_reader(instance_id, version, {f: h.count for f, h in heads.items()})
        history = {
            field_id: FieldHistory.partial(
                head.count,
                head.cursor,
                head.entries,
                head.redo,
                field_of(load, field_id),
            )
            for field_id, head in heads.items()
        }
        instance = FormInstance.model_construct(
            **dict(header),
            version=version,
            history=history,
            state=InstanceState.model_validate_json(item["state"]["S"]),
        )
        # sealed once (``FormInstance.snapshot``): every read of this version hands it out as is
        return Known(instance.snapshot(), {f: head.model_dump_json() for f, head in heads.items()})

    def _log_reader(
        self, instance_id: str, version: int, counts: Mapping[str, int]
    ) -> Callable[[], dict[str, tuple[Revision, ...]]]:
        """A function reading every field's log as of ``version`` (once; later calls return
        the first result): one Query of the instance's revision items up to that version."""
        done: list[dict[str, tuple[Revision, ...]]] = []
        lock = threading.Lock()

        def read() -> dict[str, tuple[Revision, ...]]:
            with lock:
                if not done:
                    done.append(self._read_logs(instance_id, version, counts))
                return done[0]

        return read

    def _read_logs(
        self, instance_id: str, version: int, counts: Mapping[str, int]
    ) -> dict[str, tuple[Revision, ...]]:
        """Every field's revisions up to ``version``, taken again while they do not add up to
        ``counts`` (a read-committed Query may see part of a transaction still landing)."""
        pk = instance_key(instance_id)
        upto = f"{REVISIONS}{version:010d}#~"
        for attempt in range(self._read_attempts):
            if attempt and self._pause is not None:
                self._pause(attempt)
            logs: dict[str, list[Revision]] = {}
            for item in query_items(self._client, self._table, pk, between=(REVISIONS, upto)):
                for field_id, revisions in Parts.validate_json(item["revs"]["S"]).items():
                    logs.setdefault(field_id, []).extend(revisions)
            unknown = sorted(set(logs) - set(counts))
            if unknown:
                raise StoreError(f"instance {instance_id}: revisions of unknown fields {unknown}")
            over = [f for f, log in logs.items() if len(log) > counts[f]]
            if over:
                raise StoreError(f"instance {instance_id}: more revisions than counted in {over}")
            if all(len(logs.get(f, ())) == n for f, n in counts.items()):
                return {f: tuple(log) for f, log in logs.items()}
        raise StoreError(
            f"instance {instance_id}: {self._read_attempts} reads of its log did not add up"
        )

    def _keep(self, known: Known, home: tuple[str, str]) -> None:
        """Remember ``known`` (never handed out) as the last state of its id, and its home."""
        instance_id = known.instance.id
        with self._lock:
            self._homes[instance_id] = home
            self._homes.move_to_end(instance_id)
            while len(self._homes) > max(self._remember, 1) * 16:
                self._homes.popitem(last=False)
            if self._remember <= 0:
                return
            self._recent[instance_id] = known
            self._recent.move_to_end(instance_id)
            while len(self._recent) > self._remember:
                self._recent.popitem(last=False)

    def _recalled(self, instance_id: str, version: int) -> Known | None:
        """The remembered state of ``instance_id`` if it is exactly ``version``."""
        with self._lock:
            found = self._recent.get(instance_id)
        if found is None or found.instance.version != version:
            return None
        return found

    # ------------------------------------------------------------------ the indexes

    def _index_read(
        self, partition: str, after: str | None, limit: int, *, newest_first: bool
    ) -> list[tuple[str, FormInstance | None]]:
        return self._gsi_read(
            APPROVAL_INDEX, "approval", partition, after, limit, newest_first=newest_first
        )

    def _failed_read(
        self, partition: str, after: str | None, limit: int
    ) -> list[tuple[str, FormInstance | None]]:
        return self._gsi_read(FAILED_HOOK_INDEX, "failed", partition, after, limit)

    def _open_read(
        self, partition: str, below: str, after: str | None, limit: int
    ) -> list[tuple[str, FormInstance | None]]:
        # One condition on the sort key: BETWEEN the cursor (inclusive: dropped below) and the
        # bound (every key of version ``below`` sorts after it).
        found = self._gsi_read(
            OPEN_FORM_INDEX,
            "open",
            partition,
            None,
            limit + 1,
            newest_first=False,
            between=(after or "0", below),
        )
        return [(sort, home) for sort, home in found if sort != after][:limit]

    def _due_read(self, partition: str, upto: str) -> Iterator[list[FormInstance | None]]:
        request: dict[str, Any] = {
            "TableName": self._table,
            "IndexName": DUE_INDEX,
            "KeyConditionExpression": "due_pk = :p AND due_sk <= :upto",
            "ExpressionAttributeValues": {":p": _s(partition), ":upto": _s(upto)},
            "Limit": DUE_PAGE,
        }
        while True:
            page = self._client.query(**request)
            places = [(item["pk"]["S"], item["sk"]["S"]) for item in page.get("Items", [])]
            if places:
                homes = self._read_homes(places)
                yield [
                    self._known_from(homes[home]).instance.snapshot() if home in homes else None
                    for home in places
                ]
            last = page.get("LastEvaluatedKey")
            if not last:
                return
            request["ExclusiveStartKey"] = last

    def _gsi_read(
        self,
        index: str,
        prefix: str,
        partition: str,
        after: str | None,
        limit: int,
        *,
        newest_first: bool = True,
        between: tuple[str, str] | None = None,
    ) -> list[tuple[str, FormInstance | None]]:
        """Up to ``limit`` places of a sparse keys-only index (keys ``<prefix>_pk`` /
        ``<prefix>_sk``) past ``after``, each with its home as stored now (one Query, one
        BatchGetItem)."""
        pk, sk = f"{prefix}_pk", f"{prefix}_sk"
        condition = f"{pk} = :p"
        values: dict[str, Any] = {":p": _s(partition)}
        if after is not None:
            condition += f" AND {sk} " + ("< :after" if newest_first else "> :after")
            values[":after"] = _s(after)
        elif between is not None:
            condition += f" AND {sk} BETWEEN :low AND :high"
            values[":low"], values[":high"] = _s(between[0]), _s(between[1])
        request: dict[str, Any] = {
            "TableName": self._table,
            "IndexName": index,
            "KeyConditionExpression": condition,
            "ExpressionAttributeValues": values,
            "ScanIndexForward": not newest_first,
            "Limit": limit,
        }
        places: list[tuple[str, tuple[str, str]]] = []
        while len(places) < limit:
            page = self._client.query(**request)
            places += [
                (item[sk]["S"], (item["pk"]["S"], item["sk"]["S"]))
                for item in page.get("Items", [])
            ]
            last = page.get("LastEvaluatedKey")
            if not last:
                break
            request["ExclusiveStartKey"] = last
            request["Limit"] = limit - len(places)
        places = places[:limit]
        homes = self._read_homes([home for _, home in places])
        found: list[tuple[str, FormInstance | None]] = []
        for sort, home in places:
            item = homes.get(home)
            found.append((sort, self._known_from(item).instance.snapshot() if item else None))
        return found

    def _read_homes(self, homes: list[tuple[str, str]]) -> dict[tuple[str, str], dict[str, Any]]:
        """The home items at ``homes`` (strongly consistent), by key: one BatchGetItem, and
        another for any keys DynamoDB left unprocessed (up to ``read_attempts`` in all)."""
        found: dict[tuple[str, str], dict[str, Any]] = {}
        keys = [item_key(*home) for home in dict.fromkeys(homes)]
        wanted: dict[str, Any] = {self._table: {"Keys": keys, "ConsistentRead": True}}
        for attempt in range(self._read_attempts):
            if not wanted.get(self._table, {}).get("Keys"):
                return found
            if attempt and self._pause is not None:
                self._pause(attempt)
            response = self._client.batch_get_item(RequestItems=wanted)
            for item in response.get("Responses", {}).get(self._table, []):
                found[(item["pk"]["S"], item["sk"]["S"])] = item
            wanted = response.get("UnprocessedKeys") or {}
        if wanted.get(self._table, {}).get("Keys"):
            raise StoreError(f"{self._read_attempts} batch reads left home items unread")
        return found
