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

A commit is the port's (``FormStore``): ``apply_commit`` on the instance this store last read
or wrote (``_planned_on``; or one GetItem), then ``_write``: one conditional write (``version =
expected``) of the home item, the new revision items and the call record, in one transaction.
The store remembers a copy of what it wrote; the port returns the applied instance itself.
``docs/dynamodb.md`` has the access patterns and their cost in requests and capacity.

Here: the writes and the home item; keys and revision items are ``dynamodb_items``, reads
and index listings ``dynamodb_reads``, what every adapter shares ``dynamodb_requests``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from forms.errors import AlreadyExists, NotFound, StoreError
from forms.instance import CallRecord, Commit, FormInstance, NewCall, Revision
from forms.storage.approvals import ApprovalIndex, approval_place
from forms.storage.due import DueIndex, due_place
from forms.storage.dynamodb_items import (
    DYNAMODB_ITEM_LIMIT,
    HOME_PREFIX,
    HOME_SK,
    ITEM_OVERHEAD,
    Header,
    Known,
    conversation_key,
    head_text,
    heads_text,
    home_key,
    instance_key,
    revision_items,
    slim_head,
)
from forms.storage.dynamodb_reads import (
    APPROVAL_INDEX,
    DUE_INDEX,
    FAILED_HOOK_INDEX,
    OPEN_FORM_INDEX,
    InstanceReads,
)
from forms.storage.dynamodb_requests import (
    CHECK_FAILED,
    add_call,
    call_put,
    item_too_large,
    largest_item,
    put_action,
    query_items,
    read_call,
    refused,
    transact,
)
from forms.storage.dynamodb_requests import item_bytes as _item_bytes
from forms.storage.dynamodb_requests import reason_codes as _reason_codes
from forms.storage.dynamodb_requests import s as _s
from forms.storage.failed_hooks import FailedHookIndex, failed_place
from forms.storage.open_forms import OpenFormIndex, open_place
from forms.storage.port import FormStore
from forms.storage.sizes import check_instance, too_large

__all__ = [
    "APPROVAL_INDEX",
    "DUE_INDEX",
    "DYNAMODB_ITEM_LIMIT",
    "FAILED_HOOK_INDEX",
    "HOME_PREFIX",
    "HOME_SK",
    "OPEN_FORM_INDEX",
    "DynamoDBFormStore",
    "conversation_key",
    "home_item",
    "home_key",
    "instance_key",
]


class DynamoDBFormStore(
    InstanceReads, FormStore, ApprovalIndex, FailedHookIndex, OpenFormIndex, DueIndex
):
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
    callers still only ever receive snapshots. How it reads is ``InstanceReads``
    (``forms.storage.dynamodb_reads``), the items it writes ``forms.storage.dynamodb_items``.
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
        if not 1_000 <= max_item_bytes <= DYNAMODB_ITEM_LIMIT - ITEM_OVERHEAD:
            raise ValueError(f"max_item_bytes must be 1000..{DYNAMODB_ITEM_LIMIT - ITEM_OVERHEAD}")
        super().__init__(
            client, table_name, read_attempts=read_attempts, pause=pause, remember=remember
        )
        self._max_item_bytes = max_item_bytes

    def _add(self, instance: FormInstance, call: NewCall | None) -> None:
        known, home, actions = self._created(instance)
        if call is not None:
            actions.append(call_put(self._table, home[0], call))
        try:
            self._send(actions, instance.form_id)
        except self._client.exceptions.TransactionCanceledException as exc:
            codes = _reason_codes(exc)
            if call is not None and codes[-1:] == [CHECK_FAILED]:
                raise self._recorded(instance.principal, instance.conversation_id, call) from None
            if CHECK_FAILED in codes:
                raise AlreadyExists(f"instance {instance.id} already exists") from None
            raise
        self._keep(known, home)

    def _add_call(self, principal: str, conversation_id: str, call: NewCall) -> bool:
        pk = conversation_key(principal, conversation_id)
        return add_call(self._client, self._table, pk, call)

    def _read_call(self, principal: str, conversation_id: str, call_id: str) -> CallRecord | None:
        pk = conversation_key(principal, conversation_id)
        return read_call(self._client, self._table, pk, call_id)

    def _read_instance(self, instance_id: str) -> FormInstance | None:
        known = self._read(instance_id)
        return known.instance if known is not None else None

    def _read_conversation(self, principal: str, conversation_id: str) -> list[FormInstance]:
        pk = conversation_key(principal, conversation_id)
        return [
            self._known_from(item).instance
            for item in query_items(self._client, self._table, pk, prefix=HOME_PREFIX)
        ]

    def _planned_on(self, commit: Commit) -> FormInstance | None:
        known = self._recalled(commit.instance_id, commit.expected_version)
        if known is None:
            known = self._read(commit.instance_id)
        return known.instance if known is not None else None

    def _write(
        self, commit: Commit, stored: FormInstance, after: FormInstance, target: FormInstance | None
    ) -> None:
        """One write: ``after``'s home put on ``version = expected`` and its new revision
        items, a handover's target (HOME, home and revision items, each conditional on not
        existing) and the call record. A handover's two homes share the conversation's
        partition; DynamoDB applies all of it or none of it."""
        heads, actions = self._applied(commit, stored, after)
        home, closing = home_key(after), len(actions)
        if target is not None:
            start, target_home, creating = self._created(target)
            actions += creating
        if commit.call is not None:
            actions.append(call_put(self._table, home[0], commit.call))
        try:
            self._send(actions, (target or after).form_id)
        except (
            self._client.exceptions.ConditionalCheckFailedException,
            self._client.exceptions.TransactionCanceledException,
        ) as exc:
            error = self._refused(exc, commit, after, home)
            if (
                target is not None
                and type(error) is StoreError
                and CHECK_FAILED in _reason_codes(exc)[closing:]
            ):
                raise AlreadyExists(f"instance {target.id} already exists") from None
            raise error from None
        self._keep(Known(after.snapshot(), heads), home)  # the port hands ``after`` out
        if target is not None:
            self._keep(start, target_home)

    def _applied(
        self, commit: Commit, stored: FormInstance, applied: FormInstance
    ) -> tuple[dict[str, str], list[dict[str, Any]]]:
        """``applied``'s heads (a head ``commit`` leaves alone is the text ``stored`` had) and
        the actions that write it: its home put on ``version = expected`` (``SizeLimit``
        first), then its new revision items."""
        known = self._recalled(stored.id, stored.version)  # what _planned_on read or recalled
        if known is not None:
            heads = dict(known.heads)
        else:  # forgotten since (many instances in between): the same texts, made again
            heads = {f: head_text(log) for f, log in stored.history.items()}
        for field_id in commit.fields:
            heads[field_id] = head_text(applied.history[field_id])
        appended = {f: change.append for f, change in commit.fields.items() if change.append}
        home_put = put_action(
            self._table,
            home_item(applied, heads),
            "#v = :expected",
            names={"#v": "version"},
            values={":expected": {"N": str(commit.expected_version)}},
        )
        return heads, [home_put, *self._revision_puts(applied.id, applied.version, appended)]

    def _created(
        self, instance: FormInstance
    ) -> tuple[Known, tuple[str, str], list[dict[str, Any]]]:
        """A new instance as this store keeps it, its home's key, and the actions that create
        it: its HOME pointer, its home and its revision items, each only if it is not there."""
        known = Known(instance, {f: head_text(log) for f, log in instance.history.items()})
        home = home_key(instance)
        pointer = {
            "pk": _s(instance_key(instance.id)),
            "sk": _s(HOME_SK),
            "home_pk": _s(home[0]),
            "home_sk": _s(home[1]),
        }
        appended = {f: log.revisions for f, log in instance.history.items() if log.count}
        return (
            known,
            home,
            [
                put_action(self._table, pointer, "attribute_not_exists(pk)"),
                put_action(
                    self._table, home_item(instance, known.heads), "attribute_not_exists(pk)"
                ),
                *self._revision_puts(instance.id, instance.version, appended),
            ],
        )

    def _revision_puts(
        self, instance_id: str, version: int, appended: Mapping[str, tuple[Revision, ...]]
    ) -> list[dict[str, Any]]:
        """The Put actions of the revision items holding ``appended`` (written once each)."""
        items = revision_items(instance_key(instance_id), version, appended, self._max_item_bytes)
        return [put_action(self._table, item, "attribute_not_exists(pk)") for item in items]

    def _refused(
        self, exc: Any, commit: Commit, instance: FormInstance, home: tuple[str, str]
    ) -> StoreError:
        """The port's error for a cancelled commit of ``instance`` (``refused``): the call's
        id taken, a conflict carrying the instance read again, or the codes."""
        call, owner = commit.call, (instance.principal, instance.conversation_id)
        return refused(
            exc,
            kind="instance",
            subject=commit.instance_id,
            expected=commit.expected_version,
            current=lambda: self._current(commit.instance_id, home),
            recorded=(lambda: self._recorded(*owner, call)) if call is not None else None,
        )

    def _current(self, instance_id: str, home: tuple[str, str]) -> FormInstance:
        """The instance as stored now, read again (``NotFound``: it is gone)."""
        fresh = self._read_home(instance_id, home)
        if fresh is None:
            raise NotFound(f"instance {instance_id} not found")
        return fresh.instance.snapshot()

    # ------------------------------------------------------------------ writing

    def _send(self, actions: list[dict[str, Any]], form_id: str) -> None:
        """One write: a PutItem for a single action, else one transaction. DynamoDB's own
        refusal of an item past its size (should ``check_instance`` ever let one through) is
        the same ``SizeLimit``, never an internal error."""
        try:
            if len(actions) == 1:
                self._client.put_item(**actions[0]["Put"])
            else:
                transact(self._client, actions)
        except Exception as exc:
            if item_too_large(exc):
                raise too_large("instance", largest_item(actions), form_id) from None
            raise


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
            texts[field_id] = head_text(log)
    header = Header(
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
        "heads": _s(heads_text(texts)),
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
    excess = _item_bytes(item) - (DYNAMODB_ITEM_LIMIT - ITEM_OVERHEAD)
    if excess > 0:
        for field_id in sorted(texts, key=lambda f: -len(texts[f])):
            if excess <= 0:
                break
            slim = slim_head(instance.history[field_id])
            excess -= len(texts[field_id].encode()) - len(slim.encode())
            texts[field_id] = slim
        item["heads"] = _s(heads_text(texts))
    if _item_bytes(item) > DYNAMODB_ITEM_LIMIT:  # pragma: no cover - check_instance's margin
        raise too_large("instance", _item_bytes(item), instance.form_id)
    return item
