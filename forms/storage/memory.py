"""An in-process ``FormStore``: a dict behind one lock.

Production code, not a test fake: it backs the unit tests and single-process deployments.
Instances go in and come out read-only (``FormInstance.snapshot()``: frozen models, sealed
containers), so the store keeps and hands out the very same objects: a read copies nothing,
and a commit shares with the instance before it every container and field log it left alone.
The port (``FormStore``) applies a commit once, on the stored instance ``_planned_on`` hands it
(a recorded call refused there first); ``_write`` keeps the instance it makes (the one the
engine built with it, when the engine planned it on what is stored, sealed) after checking,
under the lock, that the stored version is still the one expected, and the port returns that
same instance to the caller. Beside each instance the store keeps what a
write needs of it (``_Kept``: its conversation, what its size bound counts of its ids and logs,
what its places are read from), so a commit's write reads none of it off the stored instance:
its size bound adds to the stored instance's what the commit's new logs add, and a commit that
leaves the status, the definition version and the outbox as they were (most answers) keeps
the instance's places in the indexes as they stood (``_places``). A call's record is read
(and, when deferred, made: its result rendered) only for a write this store is about to make,
after the version and the call id are checked and before anything of it is stored: every
write refuses a taken id with ``_refuse_taken`` and keeps its record with ``_keep_call``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from operator import itemgetter
from typing import Any

from forms.errors import AlreadyExists, CallRecorded, ConflictError, NotFound
from forms.instance import (
    CallRecord,
    Commit,
    FormInstance,
    InstanceState,
    NewCall,
)
from forms.storage.approvals import ApprovalIndex, Place, approval_place
from forms.storage.due import DueIndex, due_place
from forms.storage.failed_hooks import FailedHookIndex, failed_place
from forms.storage.open_forms import OpenFormIndex, open_place
from forms.storage.port import FormStore, OutboxScan
from forms.storage.sizes import (
    check_instance,
    keys_bytes,
    keys_bytes_after,
    within,
)

_ConversationKey = tuple[str, str]
_Places = tuple[object, ...]
_Kept = tuple[FormInstance, _ConversationKey, int, Mapping[str, object], _Places]
"""What the store keeps of an instance it holds: the instance, its conversation, what its size
bound counts of its ids and logs (``sizes.keys_bytes``), its logs, and what its places in the
indexes are read from (``_places``): a commit's write reads them, not the instance."""


class InMemoryFormStore(
    FormStore, OutboxScan, ApprovalIndex, FailedHookIndex, OpenFormIndex, DueIndex
):
    """A thread-safe ``FormStore`` held in memory; every method runs under one lock (but
    ``_planned_on``, whose reads ``_write`` makes again under it). It is also its own
    ``OutboxScan`` (pages of ``page_size`` instances, in creation order) and its own
    ``ApprovalIndex`` (each partition's places kept beside the instances, updated by the
    write that stores the instance)."""

    def __init__(self, *, page_size: int = 100) -> None:
        self.page_size = page_size
        self._lock = threading.Lock()
        self._kept: dict[str, _Kept] = {}
        """Each instance held, by id, with what a write needs of it (``_Kept``): the one
        record of what is stored, so no second dict has to be kept in step with it."""
        self._by_conversation: dict[_ConversationKey, list[str]] = {}
        self._places: dict[str, Place] = {}
        self._index: dict[str, dict[str, str]] = {}
        """The approval index: partition -> sort key -> instance id."""
        self._failed_places: dict[str, Place] = {}
        self._failed: dict[str, dict[str, str]] = {}
        """The failed-hook index: partition -> sort key -> instance id."""
        self._open_places: dict[str, Place] = {}
        self._open: dict[str, dict[str, str]] = {}
        """The open-form index: partition -> sort key -> instance id."""
        self._due_places: dict[str, Place] = {}
        self._due: dict[str, dict[str, str]] = {}
        """The due index (the sweeper's): partition -> sort key -> instance id."""
        self._calls: dict[_ConversationKey, dict[str, str]] = {}
        """Call records as JSON text: a record is written on every write call and read back
        only by a retry, so it is serialised once (cheap, and nothing shared) and parsed when
        read."""

    def _add(self, instance: FormInstance, call: NewCall | None) -> None:
        fields = instance.__dict__
        keys = keys_bytes(fields)
        within(keys, fields["state"].__dict__, instance)  # SizeLimit: nothing stored
        key = _CONVERSATION(fields)
        with self._lock:
            if instance.id in self._kept:
                raise AlreadyExists(f"instance {instance.id} already exists")
            calls = self._calls.get(key)
            _refuse_taken(calls, call)
            self._keep_call(key, calls, call)
            self._hold(instance, key, keys)
            self._by_conversation.setdefault(key, []).append(instance.id)
            self._place(instance)

    def _hold(self, instance: FormInstance, key: _ConversationKey, keys: int) -> None:
        """Hold ``instance`` and what the store keeps beside it; the caller holds the lock."""
        fields = instance.__dict__
        places = _places(fields, fields["state"].__dict__)
        self._kept[fields["id"]] = (instance, key, keys, fields["history"], places)

    def _add_call(self, principal: str, conversation_id: str, call: NewCall) -> bool:
        key = (principal, conversation_id)
        with self._lock:
            calls = self._calls.get(key)
            if calls is not None and call.call_id in calls:
                return False
            self._keep_call(key, calls, call)
            return True

    def _read_call(self, principal: str, conversation_id: str, call_id: str) -> CallRecord | None:
        with self._lock:
            found = self._calls.get((principal, conversation_id), {}).get(call_id)
        return CallRecord.model_validate_json(found) if found is not None else None

    def _read_instance(self, instance_id: str) -> FormInstance | None:
        with self._lock:  # a stored instance is replaced, never changed, and read-only
            kept = self._kept.get(instance_id)
        return kept[0] if kept is not None else None

    def _read_conversation(self, principal: str, conversation_id: str) -> list[FormInstance]:
        lock = self._lock  # likewise (the port sorts them); not ``with``, as in ``_write``
        lock.acquire()
        try:
            ids = self._by_conversation.get((principal, conversation_id))
            if ids is None:
                return []
            kept = self._kept
            if len(ids) == 1:  # most conversations: no comprehension (a function call) to run
                return [kept[ids[0]][0]]
            return [kept[i][0] for i in ids]
        finally:
            lock.release()

    def _planned_on(self, commit: Commit) -> FormInstance | None:
        # No lock: one read of each dict is atomic, and ``_write`` checks the version and the
        # call id again under the lock (a recorded call is refused here first, whatever
        # version it expects)
        changes = commit.__dict__  # read once: a model's attribute costs several dict reads
        kept = self._kept.get(changes["instance_id"])
        if kept is None:
            return None
        call = changes["call"]
        if call is not None:
            _refuse_taken(self._calls.get(kept[1]), call)
        return kept[0]

    def _write(
        self, commit: Commit, stored: FormInstance, after: FormInstance, target: FormInstance | None
    ) -> None:
        changes, fields = commit.__dict__, after.__dict__  # a model's attributes cost more
        state, history = fields["state"].__dict__, fields["history"]
        instance_id = changes["instance_id"]
        known = self._kept.get(instance_id)  # no lock: one read (``stored``'s, checked below)
        keys = (  # the size bound: ``stored``'s keys, and what the commit adds to them
            keys_bytes_after(known[2], known[3], history, changes["fields"])
            if known is not None and known[0] is stored
            else keys_bytes(fields)
        )
        within(keys, state, after)  # SizeLimit: nothing stored
        if target is not None:
            check_instance(target)
        call, expected = changes["call"], changes["expected_version"]
        lock = self._lock
        lock.acquire()  # not ``with``: its ``__exit__`` call costs as much again, on every write
        try:  # both halves of a handover under the one lock
            kept = self._kept.get(instance_id)
            if kept is None:
                raise NotFound(f"instance {instance_id} not found")
            current, key = kept[0], kept[1]
            # moved on since it was planned (``stored`` itself is at ``expected``: the port
            # applied the commit to it, ``applied_unshared`` refusing any other version)
            if current is not stored and current.__dict__["version"] != expected:
                raise ConflictError(instance_id, expected, current)
            calls = self._calls.get(key)
            _refuse_taken(calls, call)
            if target is not None:
                if target.id in self._kept:
                    raise AlreadyExists(f"instance {target.id} already exists")
                self._hand_over(key, kept, after, target, calls, call)
                return
            self._keep_call(key, calls, call)  # first: a record not made stores nothing
            places = _places(fields, state)
            # ``after`` itself: the port sealed it (read-only)
            self._kept[instance_id] = (after, key, keys, history, places)
            if places != kept[4]:  # most answers leave every place as it stood
                self._place(after)
        finally:
            lock.release()

    def _hand_over(
        self,
        key: _ConversationKey,
        stored: _Kept,
        kept: FormInstance,
        target: FormInstance,
        calls: dict[str, str] | None,
        call: NewCall | None,
    ) -> None:
        """Store ``target``, ``kept`` (the source after its closing commit) and the call's
        record, or, when that fails half-way, undo what landed, so neither stands; the caller
        holds the lock and what it keeps beside the source as stored (``stored``)."""
        try:
            self._keep_call(key, calls, call)
            self._hold(target, key, keys_bytes(target.__dict__))
            self._by_conversation.setdefault(key, []).append(target.id)
            self._place(target)
            self._hold(kept, key, keys_bytes(kept.__dict__))
            self._place(kept)
        except BaseException:
            self._unplace(target.id)
            self._kept.pop(target.id, None)
            ids = self._by_conversation.get(key, [])
            if target.id in ids:
                ids.remove(target.id)
            self._kept[kept.id] = stored
            self._place(stored[0])
            if call is not None:
                self._calls.get(key, {}).pop(call.call_id, None)
            raise

    def _unplace(self, instance_id: str) -> None:
        """Take ``instance_id`` out of every index; the caller holds the lock."""
        for places, index in (
            (self._places, self._index),
            (self._failed_places, self._failed),
            (self._open_places, self._open),
            (self._due_places, self._due),
        ):
            place = places.pop(instance_id, None)
            if place is not None:
                index[place.partition].pop(place.sort, None)

    def pending(
        self, keep_going: Callable[[], bool] | None = None
    ) -> Iterator[tuple[str, InstanceState]]:
        with self._lock:
            ids = list(self._kept)
        for start in range(0, len(ids), self.page_size):
            if start and keep_going is not None and not keep_going():
                return
            with self._lock:  # each page as stored when it is read, like a paged scan
                page = [self._kept[i][0] for i in ids[start : start + self.page_size]]
                found = [
                    (i.id, i.state)
                    for i in page
                    if any(e.status == "pending" for e in i.state.outbox.values())
                ]
            yield from found

    def _index_read(
        self, partition: str, after: str | None, limit: int, *, newest_first: bool
    ) -> list[tuple[str, FormInstance | None]]:
        with self._lock:
            places = self._index.get(partition, {})
            keys = sorted(places, reverse=newest_first)
            if after is not None:
                keys = [k for k in keys if (k < after if newest_first else k > after)]
            return [(k, self._kept[places[k]][0].snapshot()) for k in keys[:limit]]

    def _failed_read(
        self, partition: str, after: str | None, limit: int
    ) -> list[tuple[str, FormInstance | None]]:
        with self._lock:
            places = self._failed.get(partition, {})
            keys = sorted(places, reverse=True)
            if after is not None:
                keys = [k for k in keys if k < after]
            return [(k, self._kept[places[k]][0].snapshot()) for k in keys[:limit]]

    def _open_read(
        self, partition: str, below: str, after: str | None, limit: int
    ) -> list[tuple[str, FormInstance | None]]:
        with self._lock:
            places = self._open.get(partition, {})
            keys = sorted(k for k in places if k < below and (after is None or k > after))
            return [(k, self._kept[places[k]][0].snapshot()) for k in keys[:limit]]

    def _due_read(self, partition: str, upto: str) -> Iterator[list[FormInstance | None]]:
        with self._lock:
            keys = sorted(k for k in self._due.get(partition, {}) if k <= upto)
        for start in range(0, len(keys), self.page_size):
            with self._lock:  # each page as stored when it is read, like a paged Query
                places = self._due.get(partition, {})
                page = [places.get(k) for k in keys[start : start + self.page_size]]
                found = [self._kept[i][0].snapshot() if i is not None else None for i in page]
            yield found  # outside the lock: the caller reads and writes the store meanwhile

    def _place(self, instance: FormInstance) -> None:
        """Move ``instance`` to its places in the approval, failed-hook, open-form and due indexes;
        the caller holds the lock."""
        before = self._places.pop(instance.id, None)
        if before is not None:
            self._index[before.partition].pop(before.sort, None)
        after = approval_place(instance)
        if after is not None:
            self._places[instance.id] = after
            self._index.setdefault(after.partition, {})[after.sort] = instance.id
        was = self._failed_places.pop(instance.id, None)
        if was is not None:
            self._failed[was.partition].pop(was.sort, None)
        now = failed_place(instance)
        if now is not None:
            self._failed_places[instance.id] = now
            self._failed.setdefault(now.partition, {})[now.sort] = instance.id
        left = self._open_places.pop(instance.id, None)
        if left is not None:
            self._open[left.partition].pop(left.sort, None)
        stands = open_place(instance)
        if stands is not None:
            self._open_places[instance.id] = stands
            self._open.setdefault(stands.partition, {})[stands.sort] = instance.id
        gone = self._due_places.pop(instance.id, None)
        if gone is not None:
            self._due[gone.partition].pop(gone.sort, None)
        due = due_place(instance)
        if due is not None:
            self._due_places[instance.id] = due
            self._due.setdefault(due.partition, {})[due.sort] = instance.id

    def _keep_call(
        self, key: _ConversationKey, calls: dict[str, str] | None, call: NewCall | None
    ) -> None:
        """Make ``call``'s record and keep it under ``key``, whose records are ``calls``
        (None: none yet); the caller holds the lock and refused a taken id
        (``_refuse_taken``). Called only once the write is decided and before anything else
        of it is stored: a deferred record (``forms.app.calls.deferred_call``: its result
        rendered) is made only for a write that lands, and one that fails to be made stores
        nothing."""
        if call is None:
            return
        record = call.record_json()
        if calls is None:
            calls = self._calls[key] = {}
        calls[call.call_id] = record


_CONVERSATION: Callable[[dict[str, object]], _ConversationKey] = itemgetter(
    "principal", "conversation_id"
)
"""An instance's conversation (from its ``__dict__``): the key its instances and call records
are kept under."""


def _refuse_taken(calls: dict[str, str] | None, call: NewCall | None) -> None:
    """``CallRecorded`` (with the first record, read back) when ``calls``, a conversation's
    records, hold ``call``'s id already."""
    if call is not None and calls is not None:
        first = calls.get(call.call_id)
        if first is not None:
            raise CallRecorded(call.call_id, CallRecord.model_validate_json(first))


def _places(fields: dict[str, Any], state: dict[str, Any]) -> _Places:
    """What an instance's places are read from, from its and its state's ``__dict__``: equal
    (the outbox first by identity, as a tuple's items compare) for the same places. Each place
    is read from the instance's identity (a commit keeps it), its status, its definition
    version and its outbox alone (``approval_place``, ``failed_place``, ``open_place``,
    ``due_place``), so a commit that changes none of those (most answers) moves nothing, and
    ``_write`` places it again only when these differ (tests/unit/test_store_places.py)."""
    return (fields["form_version"], state["status"], state["outbox"])
