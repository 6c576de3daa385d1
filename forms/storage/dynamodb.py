"""A ``FormStore`` on one DynamoDB table, through an injected low-level boto3 client.

No boto3 import here: the caller builds the client (``boto3.client("dynamodb")``) and hands it
in, and errors are caught through ``client.exceptions``. Values are stored as JSON text in
string attributes, so numbers never go through DynamoDB's Number type.

Items of one instance share its partition, ``pk = "I#<instance_id>"`` (sort keys below); a
principal's conversation has a partition of its own for its index and its tool-call records::

    I#<id> / STATE                    header, version (N), per-field cursor and count, state
    I#<id> / R#<version:010d>#<part>  revisions appended by the commit that produced <version>
    P#<principal>#C#<conv> / I#<created_at>#<id>   the conversation index item
    P#<principal>#C#<conv> / C#<tool_call_id>      one CallRecord (written once, conditionally)

``docs/dynamodb.md`` has the access patterns and their cost in requests.

Query is only read-committed against transactions: one page may show a transaction's STATE item
and not yet its revision items, or the reverse. Every item written by a commit therefore carries
the version it belongs to, the STATE item says exactly which items make up that version (counts
per field), and a read that does not add up is taken again. Call records are outside the
instance partition, so reading an instance never reads them; a commit carrying a call puts its
record with ``attribute_not_exists`` in the same transaction, so an id applies at most once.

A commit is one strongly consistent Query, ``apply_commit`` on what it read, and one conditional
write (``version = expected``). A commit that loses the race reads only what was written since
its own read to build the ``current`` its ``ConflictError`` carries.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter

from forms.errors import AlreadyExists, CallRecorded, ConflictError, NotFound, StoreError
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
from forms.storage.port import FormStore

MAX_TRANSACTION_ACTIONS = 100
"""DynamoDB's limit on the actions of one TransactWriteItems."""
MAX_TRANSACTION_BYTES = 4_000_000
"""DynamoDB's limit on the total size of one TransactWriteItems (4 MB), with some headroom."""
DYNAMODB_ITEM_LIMIT = 400_000
"""DynamoDB's item size limit (400 KB)."""

STATE_SK = "STATE"
INSTANCE_PREFIX = "I#"
"""The partition key of an instance's items is this prefix and the instance id."""
_REVISIONS = "R#"
_CALL = "C#"
_ITEM_OVERHEAD = 200
"""Bytes reserved in a revision item for its keys and other attributes besides the payload."""

_Parts = TypeAdapter(dict[str, list[Revision]])
_Fields = TypeAdapter(dict[str, tuple[int, int]])


class _Header(BaseModel):
    """The instance's identity, as stored on its STATE item."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    form_id: str
    form_version: int
    principal: str
    conversation_id: str
    created_at: datetime


class DynamoDBFormStore(FormStore):
    """Form instances in one DynamoDB table (``pk``/``sk`` strings), strongly consistent.

    ``client`` is a boto3 DynamoDB *client*; ``max_item_bytes`` bounds the payload of one
    revision item (below DynamoDB's 400 KB). ``read_attempts`` bounds how often a read that
    caught a transaction half-visible is repeated; ``pause(attempt)``, if given, runs between
    attempts (the composition root may pass a short sleep; the engine keeps no clock).

    ``remember`` is how many instances to keep the last read (or write) of, by id and version,
    so that a commit computed from a read this adapter just made does not read again. That is
    safe because everything up to a version is immutable, and the write's condition on
    ``version`` refuses it if the instance moved on; callers still only ever receive snapshots.
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
        self._recent: OrderedDict[str, FormInstance] = OrderedDict()
        self._recent_lock = threading.Lock()

    # ------------------------------------------------------------------ the port

    def create(self, instance: FormInstance, call: NewCall | None = None) -> None:
        stored = instance.snapshot()
        pk = instance_key(stored.id)
        conversation = conversation_key(stored.principal, stored.conversation_id)
        actions = [
            self._put(self._state_item(stored), "attribute_not_exists(pk)"),
            self._put(
                {
                    "pk": _s(conversation),
                    "sk": _s(f"I#{sortable(stored.created_at)}#{stored.id}"),
                    "instance_id": _s(stored.id),
                },
                "attribute_not_exists(pk)",
            ),
        ]
        appended = {f: log.revisions for f, log in stored.history.items() if log.revisions}
        actions += [
            self._put(item, "attribute_not_exists(pk)")
            for item in self._revision_items(pk, stored.version, appended)
        ]
        if call is not None:
            actions.append(self._call_put(conversation, call))
        try:
            self._transact(actions)
        except self._client.exceptions.TransactionCanceledException as exc:
            codes = _reason_codes(exc)
            if call is not None and codes[-1:] == ["ConditionalCheckFailed"]:
                raise self._recorded(conversation, call) from None
            if "ConditionalCheckFailed" in codes:
                raise AlreadyExists(f"instance {stored.id} already exists") from None
            raise

    def record_call(self, principal: str, conversation_id: str, call: NewCall) -> None:
        conversation = conversation_key(principal, conversation_id)
        try:
            self._client.put_item(**self._call_put(conversation, call)["Put"])
        except self._client.exceptions.ConditionalCheckFailedException:
            raise self._recorded(conversation, call) from None

    def get_call(self, principal: str, conversation_id: str, call_id: str) -> CallRecord | None:
        return self._get_call(conversation_key(principal, conversation_id), call_id)

    def get(self, instance_id: str) -> FormInstance:
        loaded = self._load(instance_id)
        if loaded is None:
            raise NotFound(f"instance {instance_id} not found")
        return loaded

    def list_conversation(self, principal: str, conversation_id: str) -> list[FormInstance]:
        index = self._query(conversation_key(principal, conversation_id), prefix="I#")
        found: list[FormInstance] = []
        for item in index:
            loaded = self._load(item["instance_id"]["S"])
            if loaded is not None:  # an index item whose create is not visible yet
                found.append(loaded)
        return sorted(found, key=lambda inst: (inst.created_at, inst.id))

    def commit(self, commit: Commit) -> FormInstance:
        current = self._recalled(commit.instance_id, commit.expected_version)
        if current is None:
            current = self._load(commit.instance_id)
        if current is None:
            raise NotFound(f"instance {commit.instance_id} not found")
        conversation = conversation_key(current.principal, current.conversation_id)
        applied = apply_commit(current, commit)  # ConflictError / ValueError: nothing written
        pk = instance_key(applied.id)
        version = applied.version
        appended = {f: change.append for f, change in commit.fields.items() if change.append}
        revision_actions = [
            self._put(item, "attribute_not_exists(pk)")
            for item in self._revision_items(pk, version, appended)
        ]
        state_put = self._put(
            self._state_item(applied),
            "#v = :expected",
            names={"#v": "version"},
            values={":expected": {"N": str(commit.expected_version)}},
        )
        actions = [state_put, *revision_actions]
        if commit.call is not None:
            actions.append(self._call_put(conversation, commit.call))
        try:
            if len(actions) == 1:
                self._client.put_item(**state_put["Put"])
            else:
                self._transact(actions)
        except (
            self._client.exceptions.ConditionalCheckFailedException,
            self._client.exceptions.TransactionCanceledException,
        ) as exc:
            codes = _reason_codes(exc)
            if commit.call is not None and codes[-1:] == ["ConditionalCheckFailed"]:
                raise self._recorded(conversation, commit.call) from None
            lost = codes[:1] == ["ConditionalCheckFailed"] or "TransactionConflict" in codes
            if not lost:
                raise StoreError(f"commit to {applied.id} cancelled: {codes}") from exc
            fresh = self._catch_up(current)
            if fresh is None:
                raise NotFound(f"instance {applied.id} not found") from None
            raise ConflictError(applied.id, commit.expected_version, fresh) from None
        self._keep(applied)
        return applied.snapshot()

    # ------------------------------------------------------------------ reading

    def _load(self, instance_id: str) -> FormInstance | None:
        """The instance, or None when there is none. When this store remembers a state of it,
        only what was written since is read (items up to a version never change): a container
        that has seen an instance reads its STATE item and the newest revisions, not its whole
        history."""
        with self._recent_lock:
            known = self._recent.get(instance_id)
        return self._catch_up(known) if known is not None else self._read_whole(instance_id)

    def _read_whole(self, instance_id: str) -> FormInstance | None:
        """The instance from all its items, or None when there is none."""
        for attempt in range(self._read_attempts):
            if attempt and self._pause is not None:
                self._pause(attempt)
            items = self._query(instance_key(instance_id))
            state = _state_of(items)
            if state is None:
                return None
            built = _assemble(state, items)
            if built is not None:
                self._keep(built)
                return built.snapshot()
        raise StoreError(
            f"instance {instance_id}: {self._read_attempts} reads did not add up to one version"
        )

    def _keep(self, instance: FormInstance) -> None:
        """Remember ``instance`` (never handed out) as the last known state of its id."""
        if self._remember <= 0:
            return
        with self._recent_lock:
            self._recent[instance.id] = instance
            self._recent.move_to_end(instance.id)
            while len(self._recent) > self._remember:
                self._recent.popitem(last=False)

    def _recalled(self, instance_id: str, version: int) -> FormInstance | None:
        """The remembered state of ``instance_id`` if it is exactly ``version``."""
        with self._recent_lock:
            found = self._recent.get(instance_id)
        if found is None or found.version != version:
            return None
        return found

    def _catch_up(self, base: FormInstance) -> FormInstance | None:
        """The instance as stored now, reading only what was written after ``base``.

        ``base`` is a state of the instance read earlier (moments ago in the same call, or
        remembered from an earlier call). Items up to its version never change, so one Query
        from the revision items after it (through STATE) gives the same result as a full read.
        """
        pk = instance_key(base.id)
        after = f"{_REVISIONS}{base.version:010d}#~"  # past every part of base's version
        for attempt in range(self._read_attempts):
            if attempt and self._pause is not None:
                self._pause(attempt)
            items = self._query(pk, after=after)
            state = _state_of(items)
            if state is None:
                return None
            built = _assemble(state, items, base)
            if built is not None:
                self._keep(built)
                return built.snapshot()
        return self._read_whole(base.id)

    def _query(
        self, pk: str, *, after: str | None = None, prefix: str | None = None
    ) -> list[dict[str, Any]]:
        """The items of a partition (with sort key past ``after``, or starting with ``prefix``),
        in sort-key order. One strongly consistent Query, paged.
        """
        items: list[dict[str, Any]] = []
        request: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": _s(pk)},
            "ConsistentRead": True,
        }
        if after is not None:
            request["KeyConditionExpression"] = "pk = :pk AND sk > :after"
            request["ExpressionAttributeValues"][":after"] = _s(after)
        elif prefix is not None:
            request["KeyConditionExpression"] = "pk = :pk AND begins_with(sk, :prefix)"
            request["ExpressionAttributeValues"][":prefix"] = _s(prefix)
        while True:
            page = self._client.query(**request)
            items.extend(page.get("Items", []))
            last = page.get("LastEvaluatedKey")
            if not last:
                return items
            request["ExclusiveStartKey"] = last

    def _get_call(self, conversation: str, call_id: str) -> CallRecord | None:
        found = self._client.get_item(
            TableName=self._table, Key=_key(conversation, _CALL + call_id), ConsistentRead=True
        ).get("Item")
        return CallRecord.model_validate_json(found["record"]["S"]) if found else None

    def _recorded(self, conversation: str, call: NewCall) -> CallRecorded:
        """The error for a call whose id a conditional put found taken, with the first record."""
        first = self._get_call(conversation, call.call_id)
        if first is None:  # deleted in between (a table TTL); the write was still refused
            raise StoreError(f"tool call {call.call_id} was refused as recorded but is gone")
        return CallRecorded(call.call_id, first)

    # ------------------------------------------------------------------ writing

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

    def _put(
        self,
        item: dict[str, Any],
        condition: str | None,
        *,
        names: dict[str, str] | None = None,
        values: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        put: dict[str, Any] = {"TableName": self._table, "Item": item}
        if condition is not None:
            put["ConditionExpression"] = condition
        if names:
            put["ExpressionAttributeNames"] = names
        if values:
            put["ExpressionAttributeValues"] = values
        return {"Put": put}

    def _state_item(self, instance: FormInstance) -> dict[str, Any]:
        header = _Header(
            id=instance.id,
            form_id=instance.form_id,
            form_version=instance.form_version,
            principal=instance.principal,
            conversation_id=instance.conversation_id,
            created_at=instance.created_at,
        )
        fields = {f: (log.cursor, len(log.revisions)) for f, log in instance.history.items()}
        item = {
            "pk": _s(instance_key(instance.id)),
            "sk": _s(STATE_SK),
            "version": {"N": str(instance.version)},
            "header": _s(header.model_dump_json()),
            "fields": _s(_Fields.dump_json(fields).decode()),
            "state": _s(instance.state.model_dump_json()),
        }
        if _item_bytes(item) > DYNAMODB_ITEM_LIMIT:
            raise ValueError(
                f"instance {instance.id}: its state item would be {_item_bytes(item)} bytes, "
                "over DynamoDB's 400 KB; nothing was stored"
            )
        return item

    def _call_put(self, conversation: str, call: NewCall) -> dict[str, Any]:
        item = {
            "pk": _s(conversation),
            "sk": _s(_CALL + call.call_id),
            "record": _s(call.record.model_dump_json()),
        }
        return self._put(item, "attribute_not_exists(pk)")

    def _revision_items(
        self, pk: str, version: int, appended: Mapping[str, tuple[Revision, ...]]
    ) -> list[dict[str, Any]]:
        """The items holding ``appended``, split so no payload passes ``max_item_bytes``."""
        limit = self._max_item_bytes - len(pk.encode()) - _ITEM_OVERHEAD
        items = []
        for part, payload in enumerate(_pack(appended, limit)):
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


# ---------------------------------------------------------------------- keys


def instance_key(instance_id: str) -> str:
    return f"{INSTANCE_PREFIX}{instance_id}"


def conversation_key(principal: str, conversation_id: str) -> str:
    """The index partition of one principal's conversation; '#' and '%' escaped, so unambiguous."""
    return f"P#{_escape(principal)}#C#{_escape(conversation_id)}"


def sortable(moment: datetime) -> str:
    """A fixed-width UTC timestamp: sorts as text exactly as the instants sort (naive = UTC)."""
    utc = moment.astimezone(UTC) if moment.tzinfo is not None else moment
    return (
        f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T{utc.hour:02d}:{utc.minute:02d}:"
        f"{utc.second:02d}.{utc.microsecond:06d}Z"
    )


def _escape(part: str) -> str:
    return part.replace("%", "%25").replace("#", "%23")


def _s(text: str) -> dict[str, str]:
    return {"S": text}


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


def _state_of(items: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The STATE item among a partition's items (it sorts last), if there is one."""
    return next((i for i in reversed(items) if i["sk"]["S"] == STATE_SK), None)


def _assemble(
    state: Mapping[str, Any],
    items: list[dict[str, Any]],
    base: FormInstance | None = None,
) -> FormInstance | None:
    """The instance as of ``state``'s version, or None when ``items`` miss some of it.

    With ``base`` (an earlier read), ``items`` need only hold the revision items of later
    versions. Items of other kinds in the partition (call records of an earlier layout) are
    ignored.
    """
    version = int(state["version"]["N"])
    fields = _Fields.validate_json(state["fields"]["S"])
    since = -1 if base is None else base.version
    logs: dict[str, list[Revision]] = {}
    if base is not None:
        logs = {f: list(log.revisions) for f, log in base.history.items()}
    for item in items:
        sk: str = item["sk"]["S"]
        # Revision items of a later version belong to a commit this STATE does not show yet.
        if sk.startswith(_REVISIONS) and since < _revision_version(sk) <= version:
            for field_id, revisions in _Parts.validate_json(item["revs"]["S"]).items():
                logs.setdefault(field_id, []).extend(revisions)
    history: dict[str, FieldHistory] = {}
    for field_id, (cursor, count) in fields.items():
        revisions = logs.pop(field_id, [])
        if len(revisions) < count:
            return None  # a revision item of this version is not visible yet
        if len(revisions) > count:
            raise StoreError(f"field {field_id}: {len(revisions)} revisions stored, {count} known")
        history[field_id] = FieldHistory(revisions, cursor)
    if logs:
        raise StoreError(f"revisions stored for unknown fields {sorted(logs)}")
    header = _Header.model_validate_json(state["header"]["S"])
    return FormInstance(
        **header.model_dump(),
        version=version,
        history=history,
        state=InstanceState.model_validate_json(state["state"]["S"]),
    )


def _revision_version(sk: str) -> int:
    """The version in a revision item's sort key ``R#<version>#<part>``."""
    return int(sk[len(_REVISIONS) : len(_REVISIONS) + 10])


def _reason_codes(exc: Any) -> list[str]:
    """The per-action cancellation codes of a TransactionCanceledException, in action order.

    For a plain conditional write that failed (ConditionalCheckFailedException) the one code.
    """
    response = getattr(exc, "response", {}) or {}
    reasons = response.get("CancellationReasons")
    if reasons is None:
        code = response.get("Error", {}).get("Code", "")
        return ["ConditionalCheckFailed"] if code == "ConditionalCheckFailedException" else []
    return [str(r.get("Code", "")) for r in reasons]


def _item_bytes(item: Mapping[str, Any]) -> int:
    """An upper estimate of an item's size: names plus string and number values."""
    total = 0
    for name, value in item.items():
        total += len(name.encode())
        for text in value.values():
            total += len(str(text).encode())
    return total
