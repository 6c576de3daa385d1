"""The storage port: the only thing the engine knows about persistence."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator

from forms.errors import NotFound
from forms.instance import CallRecord, Commit, FormInstance, InstanceState, NewCall
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
       already returned.
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

    The port holds its reads and call records (``get``, ``list_conversation``, ``record_call``,
    ``get_call``) over primitives (``FORM_STORE_PRIMITIVES``); ``create``, ``commit`` and
    ``hand_over`` are each adapter's.
    """

    @abstractmethod
    def create(self, instance: FormInstance, call: NewCall | None = None) -> None:
        """Store a new instance as given (a snapshot of it), with ``call`` recorded.

        The instance may already carry revisions and any version: starting a form with seed
        values is one atomic create. Raises ``AlreadyExists`` when the id is taken, leaving the
        stored instance untouched, and ``CallRecorded`` when the conversation already recorded
        ``call``'s id (nothing is stored).
        """

    def record_call(self, principal: str, conversation_id: str, call: NewCall) -> None:
        """Record a call that changed no instance; ``CallRecorded`` if its id is taken."""
        self._record_call(principal, conversation_id, call)

    def get_call(self, principal: str, conversation_id: str, call_id: str) -> CallRecord | None:
        """The record of ``call_id`` in this principal's conversation, or None."""
        return self._read_call(principal, conversation_id, call_id)

    def get(self, instance_id: str) -> FormInstance:
        """A snapshot of the stored instance. Raises ``NotFound`` when there is none."""
        found = self._read_instance(instance_id)
        if found is None:
            raise NotFound(f"instance {instance_id} not found")
        return found.snapshot()

    def list_conversation(self, principal: str, conversation_id: str) -> list[FormInstance]:
        """Snapshots of every instance of this principal in this conversation, oldest first.

        Ordered by ``created_at``, then ``id``. Instances of another principal that happen to
        use the same conversation id are never returned. An unknown pair gives an empty list.
        """
        found = self._read_conversation(principal, conversation_id)
        return [i.snapshot() for i in sorted(found, key=lambda i: (i.created_at, i.id))]

    @abstractmethod
    def commit(self, commit: Commit) -> FormInstance:
        """Apply ``commit`` atomically and return a snapshot of the stored result.

        Raises ``NotFound`` for an unknown instance, ``CallRecorded`` when the commit carries a
        call whose id the instance's conversation already recorded (checked first),
        ``ConflictError`` (carrying the current stored instance) when ``expected_version`` is
        stale, ``ValueError`` when the commit would rewrite history (a cursor outside its
        log), and ``SizeLimit`` when the instance would pass one stored item. Nothing is
        stored in any of those cases.
        """

    @abstractmethod
    def hand_over(self, commit: Commit, target: FormInstance) -> FormInstance:
        """Apply ``commit`` (the source's closing commit) and create ``target`` (the instance
        that takes over, in the same principal's conversation) in one all-or-nothing write,
        and return a snapshot of the source as stored after (``forms.handover``).

        Both halves or neither: a commit that fails for any reason ``commit`` fails for
        (``NotFound``, ``CallRecorded``, ``ConflictError`` when ``expected_version`` is stale,
        ``ValueError``, ``SizeLimit``) creates nothing, and a target that cannot be created
        (``AlreadyExists``, ``SizeLimit``) leaves the source untouched. The call record the
        commit carries is stored in the same write. ``ValueError`` when ``target`` is not in
        the source's conversation.
        """

    # ------------------------------------------------------------------ primitives

    def _read_instance(self, instance_id: str) -> FormInstance | None:
        """The stored instance (the port hands out a snapshot of it), or None."""
        raise NotImplementedError

    def _read_conversation(self, principal: str, conversation_id: str) -> list[FormInstance]:
        """Every stored instance of this principal's conversation, in any order (the port
        hands out snapshots of them)."""
        raise NotImplementedError


FORM_STORE_PRIMITIVES = ("_read_instance", "_read_conversation", *CALL_PRIMITIVES)
"""What a ``FormStore`` adapter implements besides ``create``, ``commit`` and ``hand_over``,
which are still each adapter's own (planning a write is where the in-memory adapter's
copy-once path and the DynamoDB adapter's remembered heads differ)."""


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
