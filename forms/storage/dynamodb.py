"""A ``FormStore`` on one DynamoDB table, through an injected low-level boto3 client.

No boto3 import here: the caller builds the client (``boto3.client("dynamodb")``) and hands it
in, and errors are caught through ``client.exceptions``. Values are stored as JSON text in
string attributes, so numbers never go through DynamoDB's Number type.

An instance lives in its conversation's partition, beside the conversation's other instances
and its tool-call records; its revision log lives in a partition of its own::

    P#<principal>#C#<conv> / I#<created_at>#<id>   the instance's home: header, version (N),
                                                    per-field heads, state
    P#<principal>#C#<conv> / C#<tool_call_id>      one CallRecord (written once, conditionally)
    I#<id> / HOME                                  where its home is (written once, never changed)
    I#<id> / R#<version:010d>#<part>               revisions appended by the commit of <version>

A home item also carries ``approval_pk`` / ``approval_sk`` while the instance stands in the
approval index (``forms.storage.approvals.approval_place``): the keys of the table's sparse
global secondary index ``approvals`` (``APPROVAL_INDEX``, keys only), so the index is written
by the home item's own put, in the commit's one transaction, and holds only those instances.
A listing is one Query of the index and one BatchGetItem of the home items it names. In the
same way it carries ``failed_pk`` / ``failed_sk`` while a hook of it has failed for good
(``forms.storage.failed_hooks.failed_place``), the keys of the sparse index ``failed_hooks``
(``FAILED_HOOK_INDEX``) an operator lists a tenant's failed hooks by, and ``open_pk`` /
``open_sk`` while it is open (``forms.storage.open_forms.open_place``; ``open_forms``,
``OPEN_FORM_INDEX``), what a bulk migration reads a form's older open instances from, and
``due_pk`` / ``due_sk`` while something of its outbox may need the sweeper
(``forms.storage.due.due_place``; ``due``, ``DUE_INDEX``, read by shard up to now).

A field's *head* is what every call reads of its log: the count, the cursor, the entries in
force, undo would restore and redo would bring back. The home item holds the heads, not the
revisions, so reading an instance costs its form's size, never its history: listing a
conversation is one Query, reading an instance by id one GetItem (plus one for its HOME item
the first time this store meets the id). Logs come back partial (``FieldHistory.partial``);
undo, redo and the history view read the revision items, once, when they first need them.

A commit is ``apply_commit`` on the instance this store last read or wrote (or one GetItem)
and one conditional write (``version = expected``) of the home item, the new revision items
and the call record, in one transaction. ``docs/dynamodb.md`` has the access patterns and
their cost in requests and capacity.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter

from forms.errors import AlreadyExists, CallRecorded, NotFound, StoreError
from forms.instance import (
    CallRecord,
    Commit,
    FieldHistory,
    FormInstance,
    InstanceState,
    NewCall,
    Revision,
    apply_commit,
)
from forms.storage.approvals import ApprovalIndex, approval_place, sortable
from forms.storage.due import DueIndex, due_place
from forms.storage.dynamodb_requests import (
    CHECK_FAILED,
    item_too_large,
    largest_item,
    put_action,
    query_items,
    refused,
)
from forms.storage.dynamodb_requests import escape as _escape
from forms.storage.dynamodb_requests import item_bytes as _item_bytes
from forms.storage.dynamodb_requests import reason_codes as _reason_codes
from forms.storage.dynamodb_requests import s as _s
from forms.storage.failed_hooks import FailedHookIndex, failed_place
from forms.storage.open_forms import OpenFormIndex, open_place
from forms.storage.port import FormStore
from forms.storage.sizes import check, check_instance, text_bytes, too_large

MAX_TRANSACTION_ACTIONS = 100
"""DynamoDB's limit on the actions of one TransactWriteItems."""
MAX_TRANSACTION_BYTES = 4_000_000
"""DynamoDB's limit on the total size of one TransactWriteItems (4 MB), with some headroom."""
DYNAMODB_ITEM_LIMIT = 400_000
"""DynamoDB's item size limit (400 KB)."""

HOME_PREFIX = "I#"
"""The sort keys of instance homes in a conversation's partition start with this."""
INSTANCE_PREFIX = "I#"
"""The partition key of an instance's own items (HOME, revisions) is this and its id."""
HOME_SK = "HOME"
_REVISIONS = "R#"
_CALL = "C#"
_ITEM_OVERHEAD = 200
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
"""Bytes reserved in a revision item for its keys and other attributes besides the payload."""

_Parts = TypeAdapter(dict[str, list[Revision]])


class _Header(BaseModel):
    """The instance's identity, as stored on its home item."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    form_id: str
    form_version: int
    principal: str
    conversation_id: str
    created_at: datetime


class _Head(BaseModel):
    """What a home item keeps of one field's log (``FieldHistory.head``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cursor: int
    count: int
    redo: int | None = None
    entries: dict[int, Revision] = {}


_Heads = TypeAdapter(dict[str, _Head])


class _Known:
    """An instance this store read or wrote, with each field's head as JSON text.

    The text of a head that a commit does not touch is reused as is, so a commit serialises
    only the fields it changes.
    """

    __slots__ = ("heads", "instance")

    def __init__(self, instance: FormInstance, heads: dict[str, str]) -> None:
        self.instance = instance
        self.heads = heads


class DynamoDBFormStore(FormStore, ApprovalIndex, FailedHookIndex, OpenFormIndex, DueIndex):
    """Form instances in one DynamoDB table (``pk``/``sk`` strings), strongly consistent; also
    the ``ApprovalIndex`` over them (the index itself is eventually consistent, the instances
    a listing returns are read strongly consistent).

    ``client`` is a boto3 DynamoDB *client*; ``max_item_bytes`` bounds the payload of one
    revision item (below DynamoDB's 400 KB). ``read_attempts`` bounds how often a read of a
    log that does not add up yet (a transaction still landing) is repeated; ``pause(attempt)``,
    if given, runs between attempts (the composition root may pass a short sleep; the engine
    keeps no clock).

    ``remember`` is how many instances to keep the last read (or write) of, by id and version,
    so that a commit computed from a read this adapter just made does not read again. That is
    safe because the write's condition on ``version`` refuses it if the instance moved on;
    callers still only ever receive snapshots.
    """

    def __init__(
        self,
        client: Any,
        table_name: str,
        *,
        max_item_bytes: int = 350_000,
        read_attempts: int = 5,
        pause: Callable[[int], None] | None = None,
        remember: int = 256,
    ) -> None:
        if not 1_000 <= max_item_bytes <= DYNAMODB_ITEM_LIMIT - _ITEM_OVERHEAD:
            raise ValueError(f"max_item_bytes must be 1000..{DYNAMODB_ITEM_LIMIT - _ITEM_OVERHEAD}")
        if read_attempts < 1:
            raise ValueError("read_attempts must be at least 1")
        self._client = client
        self._table = table_name
        self._max_item_bytes = max_item_bytes
        self._read_attempts = read_attempts
        self._pause = pause
        self._remember = remember
        self._recent: OrderedDict[str, _Known] = OrderedDict()
        self._homes: OrderedDict[str, tuple[str, str]] = OrderedDict()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ the port

    def create(self, instance: FormInstance, call: NewCall | None = None) -> None:
        stored = instance.snapshot()
        pk = instance_key(stored.id)
        home = home_key(stored)
        known = _Known(stored, {f: _head_text(log) for f, log in stored.history.items()})
        actions = [
            put_action(
                self._table,
                {"pk": _s(pk), "sk": _s(HOME_SK), "home_pk": _s(home[0]), "home_sk": _s(home[1])},
                "attribute_not_exists(pk)",
            ),
            put_action(
                self._table, home_item(known.instance, known.heads), "attribute_not_exists(pk)"
            ),
        ]
        appended = {f: log.revisions for f, log in stored.history.items() if log.count}
        actions += [
            put_action(self._table, item, "attribute_not_exists(pk)")
            for item in self._revision_items(pk, stored.version, appended)
        ]
        if call is not None:
            actions.append(self._call_put(home[0], call))
        try:
            self._send(actions, stored.form_id)
        except self._client.exceptions.TransactionCanceledException as exc:
            codes = _reason_codes(exc)
            if call is not None and codes[-1:] == [CHECK_FAILED]:
                raise self._recorded(home[0], call) from None
            if CHECK_FAILED in codes:
                raise AlreadyExists(f"instance {stored.id} already exists") from None
            raise
        self._keep(known, home)

    def record_call(self, principal: str, conversation_id: str, call: NewCall) -> None:
        conversation = conversation_key(principal, conversation_id)
        try:
            self._client.put_item(**self._call_put(conversation, call)["Put"])
        except self._client.exceptions.ConditionalCheckFailedException:
            raise self._recorded(conversation, call) from None

    def get_call(self, principal: str, conversation_id: str, call_id: str) -> CallRecord | None:
        return self._get_call(conversation_key(principal, conversation_id), call_id)

    def get(self, instance_id: str) -> FormInstance:
        known = self._read(instance_id)
        if known is None:
            raise NotFound(f"instance {instance_id} not found")
        return known.instance.snapshot()

    def list_conversation(self, principal: str, conversation_id: str) -> list[FormInstance]:
        pk = conversation_key(principal, conversation_id)
        found = [
            self._known_from(item)
            for item in query_items(self._client, self._table, pk, prefix=HOME_PREFIX)
        ]
        return [known.instance.snapshot() for known in found]  # sort-key order: created, id

    def commit(self, commit: Commit) -> FormInstance:
        known = self._recalled(commit.instance_id, commit.expected_version)
        if known is None:
            known = self._read(commit.instance_id)
        if known is None:
            raise NotFound(f"instance {commit.instance_id} not found")
        current = known.instance
        applied = apply_commit(current, commit)  # Conflict / ValueError: nothing written
        heads = dict(known.heads)
        for field_id in commit.fields:
            heads[field_id] = _head_text(applied.history[field_id])
        after = _Known(applied, heads)
        home = home_key(applied)
        appended = {f: change.append for f, change in commit.fields.items() if change.append}
        home_put = put_action(
            self._table,
            home_item(after.instance, after.heads),
            "#v = :expected",
            names={"#v": "version"},
            values={":expected": {"N": str(commit.expected_version)}},
        )
        actions = [
            home_put,
            *(
                put_action(self._table, item, "attribute_not_exists(pk)")
                for item in self._revision_items(
                    instance_key(applied.id), applied.version, appended
                )
            ),
        ]
        if commit.call is not None:
            actions.append(self._call_put(home[0], commit.call))
        try:
            self._send(actions, applied.form_id)
        except (
            self._client.exceptions.ConditionalCheckFailedException,
            self._client.exceptions.TransactionCanceledException,
        ) as exc:
            raise self._refused(exc, commit, home) from None
        self._keep(after, home)
        return applied.snapshot()

    def hand_over(self, commit: Commit, target: FormInstance) -> FormInstance:
        """One transaction: the source's home put (conditional on ``expected_version``) and
        its new revision items, the target's HOME, home and revision items (each conditional
        on not existing) and the call record. The two homes share the conversation's
        partition; DynamoDB applies all of it or none of it."""
        started = target.snapshot()
        known = self._recalled(commit.instance_id, commit.expected_version)
        if known is None:
            known = self._read(commit.instance_id)
        if known is None:
            raise NotFound(f"instance {commit.instance_id} not found")
        current = known.instance
        if (started.principal, started.conversation_id) != (
            current.principal,
            current.conversation_id,
        ):
            raise ValueError("a handover starts its target in the source's conversation")
        applied = apply_commit(current, commit)  # Conflict / ValueError: nothing written
        heads = dict(known.heads)
        for field_id in commit.fields:
            heads[field_id] = _head_text(applied.history[field_id])
        after = _Known(applied, heads)
        home = home_key(applied)
        appended = {f: change.append for f, change in commit.fields.items() if change.append}
        actions = [
            put_action(
                self._table,
                home_item(after.instance, after.heads),
                "#v = :expected",
                names={"#v": "version"},
                values={":expected": {"N": str(commit.expected_version)}},
            ),
            *(
                put_action(self._table, item, "attribute_not_exists(pk)")
                for item in self._revision_items(
                    instance_key(applied.id), applied.version, appended
                )
            ),
        ]
        closing = len(actions)
        start = _Known(started, {f: _head_text(log) for f, log in started.history.items()})
        target_pk, target_home = instance_key(started.id), home_key(started)
        actions += [
            put_action(
                self._table,
                {
                    "pk": _s(target_pk),
                    "sk": _s(HOME_SK),
                    "home_pk": _s(target_home[0]),
                    "home_sk": _s(target_home[1]),
                },
                "attribute_not_exists(pk)",
            ),
            put_action(self._table, home_item(started, start.heads), "attribute_not_exists(pk)"),
            *(
                put_action(self._table, item, "attribute_not_exists(pk)")
                for item in self._revision_items(
                    target_pk,
                    started.version,
                    {f: log.revisions for f, log in started.history.items() if log.count},
                )
            ),
        ]
        if commit.call is not None:
            actions.append(self._call_put(home[0], commit.call))
        try:
            self._transact(actions)
        except self._client.exceptions.TransactionCanceledException as exc:
            error = self._refused(exc, commit, home)
            if type(error) is StoreError and CHECK_FAILED in _reason_codes(exc)[closing:]:
                raise AlreadyExists(f"instance {started.id} already exists") from None
            raise error from None
        except Exception as exc:
            if item_too_large(exc):
                raise too_large("instance", largest_item(actions), started.form_id) from None
            raise
        self._keep(after, home)
        self._keep(start, target_home)
        return applied.snapshot()

    # ------------------------------------------------------------------ the approval index

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
        keys = [_key(*home) for home in dict.fromkeys(homes)]
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

    # ------------------------------------------------------------------ reading

    def _read(self, instance_id: str) -> _Known | None:
        """The instance as stored now (one GetItem of its home, plus one of its HOME item
        the first time this store meets the id), or None when there is none."""
        with self._lock:
            home = self._homes.get(instance_id)
        if home is None:
            found = self._client.get_item(
                TableName=self._table,
                Key=_key(instance_key(instance_id), HOME_SK),
                ConsistentRead=True,
            ).get("Item")
            if found is None:
                return None
            home = (found["home_pk"]["S"], found["home_sk"]["S"])
        return self._read_home(instance_id, home)

    def _read_home(self, instance_id: str, home: tuple[str, str]) -> _Known | None:
        item = self._client.get_item(
            TableName=self._table, Key=_key(*home), ConsistentRead=True
        ).get("Item")
        if item is None:  # its HOME item is written in the same transaction: a TTL removal
            return None
        return self._known_from(item)

    def _known_from(self, item: Mapping[str, Any]) -> _Known:
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

    def _parse(self, item: Mapping[str, Any], instance_id: str, version: int) -> _Known:
        header = _Header.model_validate_json(item["header"]["S"])
        heads_text = item["heads"]["S"]
        heads = _Heads.validate_json(heads_text)
        load = self._log_reader(instance_id, version, {f: h.count for f, h in heads.items()})
        history = {
            field_id: FieldHistory.partial(
                head.count,
                head.cursor,
                head.entries,
                head.redo,
                _field_of(load, field_id),
            )
            for field_id, head in heads.items()
        }
        instance = FormInstance.model_construct(
            **dict(header),
            version=version,
            history=history,
            state=InstanceState.model_validate_json(item["state"]["S"]),
        )
        return _Known(instance, {f: head.model_dump_json() for f, head in heads.items()})

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
        upto = f"{_REVISIONS}{version:010d}#~"
        for attempt in range(self._read_attempts):
            if attempt and self._pause is not None:
                self._pause(attempt)
            logs: dict[str, list[Revision]] = {}
            for item in query_items(self._client, self._table, pk, between=(_REVISIONS, upto)):
                for field_id, revisions in _Parts.validate_json(item["revs"]["S"]).items():
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

    def _keep(self, known: _Known, home: tuple[str, str]) -> None:
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

    def _recalled(self, instance_id: str, version: int) -> _Known | None:
        """The remembered state of ``instance_id`` if it is exactly ``version``."""
        with self._lock:
            found = self._recent.get(instance_id)
        if found is None or found.instance.version != version:
            return None
        return found

    def _get_call(self, conversation: str, call_id: str) -> CallRecord | None:
        found = self._client.get_item(
            TableName=self._table, Key=_key(conversation, _CALL + call_id), ConsistentRead=True
        ).get("Item")
        return CallRecord.model_validate_json(found["record"]["S"]) if found else None

    def _refused(self, exc: Any, commit: Commit, home: tuple[str, str]) -> StoreError:
        """The port's error for a cancelled commit (``refused``): the call's id taken, a
        conflict carrying the instance read again, or the codes."""
        call = commit.call
        return refused(
            exc,
            kind="instance",
            subject=commit.instance_id,
            expected=commit.expected_version,
            current=lambda: self._current(commit.instance_id, home),
            recorded=(lambda: self._recorded(home[0], call)) if call is not None else None,
        )

    def _current(self, instance_id: str, home: tuple[str, str]) -> FormInstance:
        """The instance as stored now, read again (``NotFound``: it is gone)."""
        fresh = self._read_home(instance_id, home)
        if fresh is None:
            raise NotFound(f"instance {instance_id} not found")
        return fresh.instance.snapshot()

    def _recorded(self, conversation: str, call: NewCall) -> CallRecorded:
        """The error for a call whose id a conditional put found taken, with the first record."""
        first = self._get_call(conversation, call.call_id)
        if first is None:  # deleted in between (a table TTL); the write was still refused
            raise StoreError(f"tool call {call.call_id} was refused as recorded but is gone")
        return CallRecorded(call.call_id, first)

    # ------------------------------------------------------------------ writing

    def _send(self, actions: list[dict[str, Any]], form_id: str) -> None:
        """One write: a PutItem for a single action, else one transaction. DynamoDB's own
        refusal of an item past its size (should ``check_instance`` ever let one through) is
        the same ``SizeLimit``, never an internal error."""
        try:
            if len(actions) == 1:
                self._client.put_item(**actions[0]["Put"])
            else:
                self._transact(actions)
        except Exception as exc:
            if item_too_large(exc):
                raise too_large("instance", largest_item(actions), form_id) from None
            raise

    def _transact(self, actions: list[dict[str, Any]]) -> None:
        if len(actions) > MAX_TRANSACTION_ACTIONS:
            raise ValueError(
                f"this write needs {len(actions)} items, over DynamoDB's "
                f"{MAX_TRANSACTION_ACTIONS} per transaction; nothing was stored"
            )
        size = sum(_item_bytes(a.get("Put", {}).get("Item", {})) for a in actions)
        if size > MAX_TRANSACTION_BYTES:
            raise ValueError(
                f"this write is {size} bytes, over DynamoDB's 4 MB per transaction; "
                "nothing was stored"
            )
        self._client.transact_write_items(TransactItems=actions)

    def _call_put(self, conversation: str, call: NewCall) -> dict[str, Any]:
        item = {
            "pk": _s(conversation),
            "sk": _s(_CALL + call.call_id),
            "record": _s(call.record.model_dump_json()),
        }
        return put_action(self._table, item, "attribute_not_exists(pk)")

    def _revision_items(
        self, pk: str, version: int, appended: Mapping[str, tuple[Revision, ...]]
    ) -> list[dict[str, Any]]:
        """The items holding ``appended``, split so no payload passes ``max_item_bytes``."""
        limit = self._max_item_bytes - len(pk.encode()) - _ITEM_OVERHEAD
        items = []
        for part, payload in enumerate(_pack(appended, limit)):
            check("revision", text_bytes(payload))  # one revision alone past an item
            items.append(
                {
                    "pk": _s(pk),
                    "sk": _s(f"{_REVISIONS}{version:010d}#{part:03d}"),
                    "revs": _s(payload),
                }
            )
        if len(items) > 999:
            raise ValueError(f"{len(items)} revision items in one write; nothing was stored")
        return items


def home_item(instance: FormInstance, heads: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The home item of ``instance`` as this store writes it (``heads``: each field's head as
    JSON text, when the caller has them already).

    ``SizeLimit`` first when the instance passes one stored item even without its answers in
    force (``forms.storage.sizes.check_instance``). When the answers at hand would take the
    item past DynamoDB's 400 KB, the biggest heads keep only their cursors (those fields read
    their log when a call needs them), which that check guarantees is enough.
    """
    state = instance.state.model_dump_json()
    check_instance(instance, state)
    texts = dict(heads) if heads is not None else {}
    for field_id, log in instance.history.items():
        if field_id not in texts:
            texts[field_id] = _head_text(log)
    header = _Header(
        id=instance.id,
        form_id=instance.form_id,
        form_version=instance.form_version,
        principal=instance.principal,
        conversation_id=instance.conversation_id,
        created_at=instance.created_at,
    )
    pk, sk = home_key(instance)
    item = {
        "pk": _s(pk),
        "sk": _s(sk),
        "instance_id": _s(instance.id),
        "version": {"N": str(instance.version)},
        "header": _s(header.model_dump_json()),
        "heads": _s(_heads_text(texts)),
        "state": _s(state),
    }
    place = approval_place(instance)
    if place is not None:  # the sparse index's keys: only while it stands in the index
        item["approval_pk"], item["approval_sk"] = _s(place.partition), _s(place.sort)
    failed = failed_place(instance)
    if failed is not None:  # likewise, while a hook of it has failed for good
        item["failed_pk"], item["failed_sk"] = _s(failed.partition), _s(failed.sort)
    opened = open_place(instance)
    if opened is not None:  # and while it is open
        item["open_pk"], item["open_sk"] = _s(opened.partition), _s(opened.sort)
    due = due_place(instance)
    if due is not None:  # and while something of its outbox may need the sweeper
        item["due_pk"], item["due_sk"] = _s(due.partition), _s(due.sort)
    excess = _item_bytes(item) - (DYNAMODB_ITEM_LIMIT - _ITEM_OVERHEAD)
    if excess > 0:
        for field_id in sorted(texts, key=lambda f: -len(texts[f])):
            if excess <= 0:
                break
            slim = _slim(instance.history[field_id])
            excess -= len(texts[field_id].encode()) - len(slim.encode())
            texts[field_id] = slim
        item["heads"] = _s(_heads_text(texts))
    if _item_bytes(item) > DYNAMODB_ITEM_LIMIT:  # pragma: no cover - check_instance's margin
        raise too_large("instance", _item_bytes(item), instance.form_id)
    return item


def _head_text(log: FieldHistory) -> str:
    """A field's head as JSON text, as a home item stores it."""
    head = _Head(cursor=log.cursor, count=log.count, redo=log.redo_target(), entries=log.head())
    return head.model_dump_json()


def _slim(log: FieldHistory) -> str:
    """A field's head without its entries (read from the log when needed)."""
    return _Head(cursor=log.cursor, count=log.count, redo=log.redo_target()).model_dump_json()


def _heads_text(heads: Mapping[str, str]) -> str:
    return "{" + ",".join(f"{json.dumps(f)}:{text}" for f, text in heads.items()) + "}"


def _field_of(
    load: Callable[[], dict[str, tuple[Revision, ...]]], field_id: str
) -> Callable[[], tuple[Revision, ...]]:
    def revisions() -> tuple[Revision, ...]:
        return load().get(field_id, ())

    return revisions


# ---------------------------------------------------------------------- keys


def instance_key(instance_id: str) -> str:
    return f"{INSTANCE_PREFIX}{instance_id}"


def home_key(instance: FormInstance) -> tuple[str, str]:
    """Where an instance's home item is: its conversation's partition, by creation instant."""
    return (
        conversation_key(instance.principal, instance.conversation_id),
        f"{HOME_PREFIX}{sortable(instance.created_at)}#{instance.id}",
    )


def conversation_key(principal: str, conversation_id: str) -> str:
    """The index partition of one principal's conversation; '#' and '%' escaped, so unambiguous."""
    return f"P#{_escape(principal)}#C#{_escape(conversation_id)}"


def _key(pk: str, sk: str) -> dict[str, Any]:
    return {"pk": _s(pk), "sk": _s(sk)}


# ---------------------------------------------------------------------- packing and assembling


def _pack(appended: Mapping[str, tuple[Revision, ...]], limit: int) -> Iterator[str]:
    """JSON objects ``{field_id: [revision, ...]}`` of at most ``limit`` bytes each, in order.

    Concatenating each field's lists across the parts, in order, gives back ``appended``. A
    single revision larger than ``limit`` gets a part of its own.
    """
    part: dict[str, list[str]] = {}
    size = 2  # "{}"
    for field_id, revisions in appended.items():
        name = len(json.dumps(field_id, ensure_ascii=False).encode()) + 3  # "id":[] and a comma
        for revision in revisions:
            text = revision.model_dump_json()
            cost = len(text.encode()) + 1 + (0 if field_id in part else name)
            if part and size + cost > limit:
                yield _dump_part(part)
                part, size = {}, 2
                cost = len(text.encode()) + 1 + name
            part.setdefault(field_id, []).append(text)
            size += cost
    if part:
        yield _dump_part(part)


def _dump_part(part: dict[str, list[str]]) -> str:
    body = ",".join(
        json.dumps(field_id, ensure_ascii=False) + ":[" + ",".join(revisions) + "]"
        for field_id, revisions in part.items()
    )
    return "{" + body + "}"
