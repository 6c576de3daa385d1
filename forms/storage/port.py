"""The storage port: the only thing the engine knows about persistence."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from datetime import datetime

from forms.errors import NotFound
from forms.instance import (
    CallRecord,
    Commit,
    FormInstance,
    InstanceState,
    NewCall,
    applied_unshared,
    sealed_in_place,
)
from forms.storage.calls import CALL_PRIMITIVES, CallRecords


class FormStore(CallRecords, ABC):
    """Where form instances live between tool calls.

    The engine relies on these promises, and on nothing else:

    1. **History only grows.** A commit appends revisions to field logs and moves cursors; it
       never replaces, reorders or removes an entry already stored. ``forms.instance.apply_commit``
       is the single definition of what applying a commit means; an adapter calls it, or does
       exactly the same thing in its own storage.
    2. **``version`` is compare-and-set.** A commit is applied only when its ``expected_version``
       equals the stored ``version``, which then goes up by one. Otherwise it fails with
       ``ConflictError`` whose ``current`` is the instance as stored now, so the engine can
       recompute and retry without another read. The engine retries a few times: what it needs
       is that a stale writer reliably *loses*, not that any particular writer wins.
    3. **A commit is all-or-nothing.** Either every field change and the new state are stored,
       or nothing is (a rejected commit, for a conflict or a bad cursor, leaves no trace).
    4. **Reads are snapshots.** Nothing a caller does to a returned instance (or to one it handed
       in) changes what is stored, and nothing the store does later changes an instance it has
       already returned. The port keeps it by construction rather than by copying: what it
       takes in and hands out is read-only (``FormInstance.snapshot``: frozen models, ``Sealed``
       and ``SealedList`` containers), so a store keeps and hands out the very same instance.
    5. **A tool-call id is recorded once per conversation.** A create or commit that carries a
       call (``NewCall``) stores its record in the same all-or-nothing write, and fails with
       ``CallRecorded`` (carrying the first record, storing nothing) when the principal's
       conversation already recorded that id, whatever instance it went to. Two concurrent
       ``form_start`` calls with one id therefore create exactly one instance. Records are
       kept apart from instances, so reading an instance never reads them.

    6. **Sizes are bounded.** A create or commit whose instance would pass one stored item
       (``forms.storage.sizes.check_instance``: its identity, state and each written field's
       place in its log) fails with ``SizeLimit`` and stores nothing, whatever the adapter.

    Deliberately left to each adapter: the storage engine and its schema, indexing, retention
    and archiving, how atomicity and compare-and-set are achieved (locks, conditional writes,
    transactions), encryption, and any multi-tenancy beyond the ``principal`` field that
    ``list_conversation`` filters on.

    The port holds the logic (the read-only snapshots taken in, ``NotFound``, a
    commit planned with ``applied_unshared``, a handover kept in its conversation, a list's
    order, a taken call id read back as ``CallRecorded``); an adapter implements the primitives
    below the line (``FORM_STORE_PRIMITIVES``; ``_planned_on`` it may). A wrapper that overrides
    every public method need not implement them, so they raise ``NotImplementedError`` rather
    than being abstract.
    """

    def create(self, instance: FormInstance, call: NewCall | None = None) -> None:
        """Store a new instance as given (its read-only snapshot), with ``call`` recorded.

        The instance may already carry revisions and any version: starting a form with seed
        values is one atomic create. Raises ``AlreadyExists`` when the id is taken, leaving the
        stored instance untouched, and ``CallRecorded`` when the conversation already recorded
        ``call``'s id (nothing is stored).
        """
        self._add(instance.snapshot(), call)

    def record_call(self, principal: str, conversation_id: str, call: NewCall) -> None:
        """Record a call that changed no instance; ``CallRecorded`` if its id is taken."""
        self._record_call(principal, conversation_id, call)

    def get_call(self, principal: str, conversation_id: str, call_id: str) -> CallRecord | None:
        """The record of ``call_id`` in this principal's conversation, or None."""
        return self._read_call(principal, conversation_id, call_id)

    def get(self, instance_id: str) -> FormInstance:
        """The stored instance, read-only (shared, not copied). ``NotFound`` when there is none."""
        found = self._read_instance(instance_id)
        if found is None:
            raise NotFound(f"instance {instance_id} not found")
        return found  # read-only as the adapter hands it out

    def list_conversation(self, principal: str, conversation_id: str) -> list[FormInstance]:
        """Every instance of this principal in this conversation, read-only, oldest first.

        Ordered by ``created_at``, then ``id``. Instances of another principal that happen to
        use the same conversation id are never returned. An unknown pair gives an empty list.
        """
        found = self._read_conversation(principal, conversation_id)  # read-only, a new list
        if len(found) < 2:  # most conversations hold one instance: nothing to order
            return found
        return sorted(found, key=_oldest_first)

    def commit(self, commit: Commit) -> FormInstance:
        """Apply ``commit`` atomically and return the instance stored after it: read-only, the
        very one the in-memory adapter keeps (the instance the engine made, when it planned the
        commit on what is stored; sealed, not copied).

        Raises ``NotFound`` for an unknown instance, ``CallRecorded`` when the commit carries a
        call whose id the instance's conversation already recorded (checked first),
        ``ConflictError`` (carrying the current stored instance) when ``expected_version`` is
        stale, ``ValueError`` when the commit would rewrite history (a cursor outside its
        log), and ``SizeLimit`` when the instance would pass one stored item. Nothing is
        stored in any of those cases.
        """
        stored = self._planned_on(commit)  # ``_plan``'s steps, without its handover's check
        if stored is None:
            raise NotFound(f"instance {commit.instance_id} not found")
        applied = sealed_in_place(applied_unshared(stored, commit))
        self._write(commit, stored, applied, None)
        return applied  # read-only: the caller and the adapter may both hold it

    def hand_over(self, commit: Commit, target: FormInstance) -> FormInstance:
        """Apply ``commit`` (the source's closing commit) and create ``target`` (the instance
        that takes over, in the same principal's conversation) in one all-or-nothing write,
        and return the source as stored after, read-only as ``commit``'s result is
        (``forms.handover``).

        Both halves or neither: a commit that fails for any reason ``commit`` fails for
        (``NotFound``, ``CallRecorded``, ``ConflictError`` when ``expected_version`` is stale,
        ``ValueError``, ``SizeLimit``) creates nothing, and a target that cannot be created
        (``AlreadyExists``, ``SizeLimit``) leaves the source untouched. The call record the
        commit carries is stored in the same write. ``ValueError`` when ``target`` is not in
        the source's conversation.
        """
        started = target.snapshot()
        stored, applied = self._plan(commit, started)
        self._write(commit, stored, applied, started)
        return applied

    def _plan(
        self, commit: Commit, target: FormInstance | None = None
    ) -> tuple[FormInstance, FormInstance]:
        """The instance ``commit`` is planned on and the instance it makes of it, read-only
        (``sealed_in_place``: the containers the commit brings sealed, no copy of the model).
        ``NotFound``; ``ValueError`` for a target outside the source's conversation or a cursor
        outside its log; ``Conflict`` (carrying the stored instance) when the version planned
        on is not the one expected."""
        stored = self._planned_on(commit)
        if stored is None:
            raise NotFound(f"instance {commit.instance_id} not found")
        if target is not None and (target.principal, target.conversation_id) != (
            stored.principal,
            stored.conversation_id,
        ):
            raise ValueError("a handover starts its target in the source's conversation")
        return stored, sealed_in_place(applied_unshared(stored, commit))

    # ------------------------------------------------------------------ primitives

    def _planned_on(self, commit: Commit) -> FormInstance | None:
        """The instance ``commit`` is planned on: the stored one, unless the adapter remembers
        the version it expects (the write's condition catches an instance that moved on). An
        adapter may refuse a recorded call here already (``CallRecorded``). The port never
        changes it nor hands it out."""
        return self._read_instance(commit.instance_id)

    def _add(self, instance: FormInstance, call: NewCall | None) -> None:
        """Store ``instance`` (read-only: the adapter's to keep) and ``call``'s record at
        once, unless its id is taken (``AlreadyExists``) or the call's is (``CallRecorded``);
        ``SizeLimit`` (``check_instance``) first. Nothing stored on any of them."""
        raise NotImplementedError

    def _write(
        self, commit: Commit, stored: FormInstance, after: FormInstance, target: FormInstance | None
    ) -> None:
        """Store ``after`` (what ``commit`` makes of ``stored``, read-only: the adapter may
        keep it as it is, the port hands the same instance to the caller), ``target`` when a
        handover starts one (read-only too), and the call's record, at once, only if the
        stored version is still ``commit.expected_version``. Otherwise ``CallRecorded`` (the
        call's id is taken), ``Conflict`` (with the instance stored now) or ``AlreadyExists``
        (the target's id is taken), and nothing stored. ``SizeLimit`` (``check_instance``)
        first; a call's record is made (``forms.app.calls.deferred_call``: its result
        rendered) only once the write is decided."""
        raise NotImplementedError

    def _read_instance(self, instance_id: str) -> FormInstance | None:
        """The stored instance, read-only (what the port took in, or sealed with
        ``FormInstance.snapshot`` when the adapter parsed it), or None: the port hands it out
        as it is."""
        raise NotImplementedError

    def _read_conversation(self, principal: str, conversation_id: str) -> list[FormInstance]:
        """Every stored instance of this principal's conversation, in any order, each
        read-only as ``_read_instance`` hands it out, in a list of the caller's own (the port
        hands it out, sorted when it holds two or more)."""
        raise NotImplementedError


def _oldest_first(instance: FormInstance) -> tuple[datetime, str]:
    return instance.created_at, instance.id


FORM_STORE_PRIMITIVES = (
    "_read_instance",
    "_read_conversation",
    "_add",
    "_write",
    *CALL_PRIMITIVES,
)
"""What a ``FormStore`` adapter implements (``_planned_on`` it may)."""


class OutboxScan(ABC):
    """Finds the instances whose outbox holds a pending entry: what the sweeper looks at when
    the stream relay could not deliver (a batch past its retries, records past the stream's
    retention, a relay that was down).

    The promise: every instance whose stored outbox held a pending entry for the whole scan is
    yielded at least once. The states yielded may be stale (a scan is not a snapshot of the
    whole store), so a caller decides anything that matters on the instance as stored now. A
    scan is paged; ``keep_going()``, when given, is asked before each further page, and a
    False stops the scan there (a Lambda running out of time).
    """

    @abstractmethod
    def pending(
        self, keep_going: Callable[[], bool] | None = None
    ) -> Iterator[tuple[str, InstanceState]]:
        """(instance id, state) of each instance with a pending outbox entry, page by page."""
