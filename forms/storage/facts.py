"""The fact store: each principal's memory, per key an append-only history and its head.

The port holds the logic (``append`` plans nothing: it checks the principal, reads the head
the revision was planned on, applies ``forms.memory.apply_revision`` and writes); adapters
implement a few primitives. ``InMemoryFactStore`` is the in-memory adapter;
``forms.storage.dynamodb_facts.DynamoDBFactStore`` the DynamoDB one; both pass
``forms.storage.facts_contract``.

A principal is the verified ``tenant/sub`` (or ``sub``) string, whole: every key the store
writes derives from all of it, so nothing of one principal is readable as another's, within a
tenant or across tenants. The empty principal (an anonymous caller) has no memory: every
method refuses it with ``ValueError``, so no two anonymous callers can ever share one.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from datetime import datetime

from forms.errors import CallRecorded, Conflict, NotFound
from forms.instance import CallRecord
from forms.memory.errors import FactConflict
from forms.memory.facts import Fact, FactHead, FactRevision, MemorySettings, apply_revision
from forms.storage.sizes import check, text_bytes

__all__ = [
    "REPLAY_PREFIX",
    "FactConflict",
    "FactStore",
    "InMemoryFactStore",
    "recorded",
    "replay_key",
]

REPLAY_PREFIX = "replay:"
"""A revision whose ``source.ref`` starts with this carries its write's idempotency key (a
page's post key): the store applies it once per fact key (``FactStore`` promise 7)."""


class FactStore(ABC):
    """Where each principal's facts, their histories and memory settings live.

    Memory relies on these promises, and on nothing else:

    1. **History only grows.** ``append`` adds one revision at the end of a key's history;
       a revision once stored is never changed or removed, with one exception: appending a
       ``deleted`` revision erases the content (value, words, derivation) of every earlier
       revision of that key in the same write, keeping its record (``erased=True``).
       ``apply_revision`` is the single definition of the head an append leaves (it reads
       the key's history through ``_read_history`` for the rare revision a head cannot fold
       alone).
    2. **Appends are compare-and-set.** A revision is appended only when its ``seq`` is the
       key's stored version (0 for a key never stated), which then goes up by one; otherwise
       it fails with ``Conflict`` carrying the head as stored now, and stores nothing. Two
       writers never lose a revision: one lands, the other plans again.
    3. **All or nothing.** A revision and its head (and, for a deletion, the erasure) land in
       one write, or none of them does.
    4. **Principals are apart.** Every method takes the principal; another principal's fact
       (in the same tenant or another) is ``NotFound`` (or None, or an empty list) exactly
       like a missing one.
    5. **Sizes are bounded.** An append whose head or revision would pass one stored item
       (``forms.storage.sizes``) fails with ``SizeLimit`` and stores nothing, whatever the
       adapter: the base checks before it writes.
    6. **Settings default on.** A principal who never changed them has memory on.
    7. **A replay key is applied once per fact key.** An append whose revision carries a
       write's idempotency key (``replay_key``) that a revision of the same key already
       carries fails with ``CallRecorded`` (``recorded``) and stores nothing, as a form or
       draft store refuses a tool-call id it recorded: the key is kept in the same write as
       the revision, so two copies of one write apply once, however they race.

    Returned values are immutable models: nothing a caller does changes what is stored.
    Left to each adapter: the storage engine, its schema, how atomicity is achieved.
    """

    # ------------------------------------------------------------------ reading

    def head(self, principal: str, key: str) -> FactHead | None:
        """The key's head (with its version, also after a deletion); None if never stated."""
        return self._read_head(_checked(principal), key)

    def heads(self, principal: str) -> list[FactHead]:
        """Every key the principal ever stated, deleted ones too, by key."""
        return sorted(self._read_heads(_checked(principal)), key=lambda head: head.key)

    def current(self, principal: str, at: datetime | None = None) -> list[Fact]:
        """The fact in force for each key (deleted keys are left out): the period holding at
        ``at`` (world time) where one does, as recall reads it, else the latest; without
        ``at``, the latest (a move planned for later shows the planned city)."""
        found = (head.fact if at is None else head.at(at) for head in self.heads(principal))
        return [fact for fact in found if fact is not None]

    def get(self, principal: str, key: str, at: datetime | None = None) -> Fact:
        """The fact in force for ``key``, as ``current`` reads it: the period holding at
        ``at`` (world time) where one does, else the latest; without ``at``, the latest.
        ``NotFound`` when never stated or deleted."""
        head = self.head(principal, key)
        fact = None if head is None else head.fact if at is None else head.at(at)
        if fact is None:
            raise NotFound(f"no fact {key!r}")
        return fact

    def history(self, principal: str, key: str) -> list[FactRevision]:
        """Every revision of ``key``, oldest first (``seq`` 0, 1, ...); ``NotFound`` when the
        key was never stated."""
        revisions = self._read_history(_checked(principal), key)
        if not revisions:
            raise NotFound(f"no fact {key!r}")
        return revisions

    def export(self, principal: str) -> list[FactRevision]:
        """Every revision of every key, by key then ``seq``: all the store holds of them."""
        return self._read_all(_checked(principal))

    def settings(self, principal: str) -> MemorySettings:
        """The principal's memory settings (on, when never set)."""
        return self._read_settings(_checked(principal)) or MemorySettings()

    # ------------------------------------------------------------------ writing

    def append(self, principal: str, revision: FactRevision) -> FactHead:
        """Append ``revision`` to its key's history; the head after it.

        ``Conflict`` when ``revision.seq`` is not the stored version; ``ValueError`` when
        the revision cannot apply (``apply_revision``); ``SizeLimit`` when the head after it
        (the fact in force, with the periods it keeps) or the revision would pass one stored
        item (``forms.storage.sizes``). Nothing is stored in any of those cases."""
        principal = _checked(principal)
        before = self._planned_on(principal, revision.key, revision.seq)
        after = apply_revision(
            before, revision, lambda: self._read_history(principal, revision.key)
        )
        size = max(text_bytes(after.model_dump_json()), text_bytes(revision.model_dump_json()))
        check("fact", size, revision.key)  # SizeLimit: nothing written
        self._write(principal, before, after, revision)
        return after

    def put_settings(self, principal: str, settings: MemorySettings) -> None:
        """Replace the principal's memory settings."""
        self._write_settings(_checked(principal), settings)

    # ------------------------------------------------------------------ primitives

    @abstractmethod
    def _read_head(self, principal: str, key: str) -> FactHead | None:
        """The stored head, or None."""

    @abstractmethod
    def _read_heads(self, principal: str) -> list[FactHead]:
        """Every stored head of the principal, in any order."""

    @abstractmethod
    def _read_history(self, principal: str, key: str) -> list[FactRevision]:
        """The key's revisions by ``seq`` (empty when none)."""

    @abstractmethod
    def _read_all(self, principal: str) -> list[FactRevision]:
        """Every revision of the principal, by key then ``seq``."""

    @abstractmethod
    def _read_settings(self, principal: str) -> MemorySettings | None:
        """The stored settings, or None."""

    @abstractmethod
    def _write_settings(self, principal: str, settings: MemorySettings) -> None:
        """Store the settings."""

    @abstractmethod
    def _write(
        self, principal: str, before: FactHead | None, after: FactHead, revision: FactRevision
    ) -> None:
        """Store ``revision`` and ``after`` at once, only if the stored head is still at
        ``before``'s version (``Conflict`` with the stored head otherwise); a deletion
        also erases revisions ``before.erased .. revision.seq - 1``."""

    def _planned_on(self, principal: str, key: str, version: int) -> FactHead | None:
        """The head a revision of ``version`` was planned on: the stored one, unless the
        adapter remembers that version (the write's condition catches it if it moved on)."""
        return self._read_head(principal, key)


def replay_key(revision: FactRevision) -> str | None:
    """The idempotency key ``revision`` carries (its ``source.ref`` with ``REPLAY_PREFIX``),
    or None."""
    ref = revision.source.ref
    return ref if ref is not None and ref.startswith(REPLAY_PREFIX) else None


def recorded(revision: FactRevision) -> CallRecorded:
    """The refusal of ``revision`` whose replay key its fact key already carries: the key
    as the call id, a record naming the fact key (the first revision is the key's history)."""
    ref = replay_key(revision) or ""
    record = CallRecord(
        tool="fact", fingerprint=ref, result={"key": revision.key}, at=revision.recorded_at
    )
    return CallRecorded(ref, record)


def _checked(principal: str) -> str:
    if not principal:
        raise ValueError("memory belongs to a verified principal; an anonymous caller has none")
    return principal


class InMemoryFactStore(FactStore):
    """A thread-safe ``FactStore`` in memory: for tests and single-process use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._heads: dict[tuple[str, str], FactHead] = {}
        self._revisions: dict[tuple[str, str], list[FactRevision]] = {}
        self._settings: dict[str, MemorySettings] = {}

    def _read_head(self, principal: str, key: str) -> FactHead | None:
        with self._lock:
            return self._heads.get((principal, key))

    def _read_heads(self, principal: str) -> list[FactHead]:
        with self._lock:
            return [head for (owner, _), head in self._heads.items() if owner == principal]

    def _read_history(self, principal: str, key: str) -> list[FactRevision]:
        with self._lock:
            return list(self._revisions.get((principal, key), ()))

    def _read_all(self, principal: str) -> list[FactRevision]:
        with self._lock:
            owned = sorted(key for owner, key in self._revisions if owner == principal)
            return [r for key in owned for r in self._revisions[(principal, key)]]

    def _read_settings(self, principal: str) -> MemorySettings | None:
        with self._lock:
            return self._settings.get(principal)

    def _write_settings(self, principal: str, settings: MemorySettings) -> None:
        with self._lock:
            self._settings[principal] = settings

    def _write(
        self, principal: str, before: FactHead | None, after: FactHead, revision: FactRevision
    ) -> None:
        where = (principal, revision.key)
        replay = replay_key(revision)
        with self._lock:
            log = self._revisions.get(where, [])
            if replay is not None and any(r.source.ref == replay for r in log):
                raise recorded(revision)
            stored = self._heads.get(where)
            if (stored.version if stored else 0) != (before.version if before else 0):
                raise Conflict(revision.key, revision.seq, stored, kind="fact")
            log = self._revisions.setdefault(where, [])
            if revision.change == "deleted":
                start = before.erased if before is not None else 0
                log[start:] = [earlier.erase() for earlier in log[start:]]
            log.append(revision)
            self._heads[where] = after
