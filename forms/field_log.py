"""A field's log: the append-only revisions written to one field, and the cursor in force.

A ``FieldHistory`` is what ``FormInstance.history`` holds per field (``forms.instance``): plain
data when stored, and in memory a log that may share its entries with the longer logs appended
after it, or load them only when first read. ``Revision`` is one entry; ``Source`` says who
wrote it. ``with_changes`` applies a commit's changes to an instance's logs.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler, JsonValue
from pydantic_core import core_schema

from forms.marked import Marked, fresh

if TYPE_CHECKING:
    from forms.instance import FieldChange

RevisionKind = Literal["value", "retraction", "decline"]
Source = Literal[
    "agent",
    "executor",
    "approver",
    "webhook",
    "memory",
    "migration",
    "operator",
    "user",
    "handover",
]
"""Who wrote a revision. ``user`` is the person themselves, on their form page
(``forms.app.page_writes``); ``agent`` the model acting for them in the conversation;
``handover`` an answer carried over from the instance this one took over from
(``forms.handover``): ``actor`` is that instance's id, ``note`` names its field and revision."""


class Frozen(BaseModel):
    """A stored record's part: immutable, and no key it does not declare."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Revision(Frozen):
    """One entry of a field's log. Never edited, never removed.

    ``kind`` is ``value`` (``value`` holds the canonical JSON of a validated answer),
    ``retraction`` ("the user took that back") or ``decline`` ("the user prefers not to say").
    ``prev`` is the cursor that was in force when this entry was appended: undo goes back to it.
    """

    kind: RevisionKind
    value: JsonValue = None
    by: Source
    actor: str | None = None
    tool_call_id: str | None = None
    at: datetime
    prev: int = -1
    note: str | None = None
    """Free text the writer attached (an approver's reason, say)."""


class FieldHistory:
    """A field's append-only revision log and the cursor naming the entry in force.

    Immutable, so two snapshots of an instance share a log without copying it. A store may
    hand out a *partial* log: the entry count, the cursor, the entries the engine reads on
    every call (the one in force, the one undo would restore, the one redo would bring back)
    and a way to read the rest. Filling, retracting and declining append on top of the cursor
    and never need more; undo, redo and the history view read the whole log (``revisions``),
    which a partial log loads once, on first use. Serialises as ``{"revisions", "cursor"}``.
    """

    __slots__ = ("_base", "_based", "_count", "_cursor", "_entries", "_redo", "_revisions", "_tail")

    # A log is a *base* (the first ``_based`` entries: read by ``_base()`` on first use, or
    # none) and a *tail* (the entries after it, in a list that logs appended from this one
    # share: an append on the newest log of a list extends the list in place instead of
    # copying it, so appending costs what is appended, not the history).

    def __init__(self, revisions: Sequence[Revision] = (), cursor: int = -1) -> None:
        tail = list(revisions)
        if not -1 <= cursor < len(tail):
            raise ValueError(f"cursor {cursor} outside a log of {len(tail)} entries")
        self._set(None, 0, {}, tail, len(tail), cursor, None)

    def _set(
        self,
        base: Callable[[], tuple[Revision, ...]] | None,
        based: int,
        entries: Mapping[int, Revision],
        tail: list[Revision],
        count: int,
        cursor: int,
        redo: int | None,
    ) -> None:
        self._base = base
        self._based = based
        self._entries = entries
        self._tail = tail
        self._count = count
        self._cursor = cursor
        self._redo = redo
        self._revisions: tuple[Revision, ...] | None = None

    @classmethod
    def partial(
        cls,
        count: int,
        cursor: int,
        entries: Mapping[int, Revision],
        redo: int | None,
        load: Callable[[], tuple[Revision, ...]],
    ) -> FieldHistory:
        """A log of ``count`` entries of which only ``entries`` (by index) are in memory.

        ``redo`` is what ``redo_target`` answers; ``load()`` returns the whole log, and is
        called at most once (a log of another length is a ``ValueError``).
        """
        if not -1 <= cursor < count:
            raise ValueError(f"cursor {cursor} outside a log of {count} entries")
        log = cls.__new__(cls)
        log._set(_once(load), count, entries, [], count, cursor, redo)
        return log

    @property
    def cursor(self) -> int:
        return self._cursor

    @property
    def count(self) -> int:
        """How many entries the log has (the index the next appended entry gets)."""
        return self._count

    @property
    def loaded(self) -> bool:
        """Whether every entry is in memory (always, except for a partial log not yet read)."""
        return self._base is None or _is_done(self._base)

    def _base_entries(self) -> tuple[Revision, ...]:
        """The base's entries (read now if they were not yet)."""
        if self._base is None:
            return ()
        base = self._base()
        if len(base) != self._based:
            raise ValueError(f"read {len(base)} revisions of a log of {self._based}")
        return base

    @property
    def revisions(self) -> tuple[Revision, ...]:
        """Every entry, oldest first (a partial log reads them now, once)."""
        if self._revisions is None:
            own = self._count - self._based
            self._revisions = (*self._base_entries(), *self._tail[:own])
        return self._revisions

    def entry(self, index: int) -> Revision:
        """The entry at ``index`` (0 <= index < count)."""
        if not 0 <= index < self._count:
            raise IndexError(f"no revision {index} in a log of {self._count}")
        if index >= self._based:
            return self._tail[index - self._based]
        if index in self._entries and not self.loaded:
            return self._entries[index]
        return self._base_entries()[index]

    def in_force(self) -> Revision | None:
        cursor = self._cursor
        if cursor >= self._based:  # in the tail (so is every entry of a log never stored)
            return self._tail[cursor - self._based]
        return self.entry(cursor) if cursor >= 0 else None

    def position(self) -> tuple[Revision | None, int, int]:
        """The entry in force (``in_force``), the cursor and the count, in one call: what a
        write reads of a log on every call (three reads of it cost more than one)."""
        cursor, based = self._cursor, self._based
        if cursor >= based:  # in the tail (so is every entry of a log never stored)
            return self._tail[cursor - based], cursor, self._count
        return (self.entry(cursor) if cursor >= 0 else None), cursor, self._count

    def undo_target(self) -> int | None:
        """The cursor undo would move to, or None when there is nothing to undo."""
        current = self.in_force()
        return None if current is None else current.prev

    def redo_target(self) -> int | None:
        """The cursor redo would move to: the newest entry appended on top of the current one.

        The entry in force is always the newest child of its own ``prev``, so undo followed by
        redo returns to exactly where it started, and redo followed by undo likewise.
        """
        if not self.loaded:
            return self._redo
        for index in range(self._count - 1, self._cursor, -1):
            if self.entry(index).prev == self._cursor:
                return index
        return None

    def head(self) -> dict[int, Revision]:
        """The entries the engine reads on every call, by index: the one in force, the one
        undo would restore and the one redo would bring back (those that exist)."""
        head: dict[int, Revision] = {}
        for index in (self._cursor, self.undo_target(), self.redo_target()):
            if index is not None and index >= 0:
                head[index] = self.entry(index)
        return head

    def appended(self, more: Sequence[Revision], cursor: int) -> FieldHistory:
        """This log with ``more`` appended and ``cursor`` in force (``ValueError`` when the
        cursor is outside the new log). A partial log stays partial when the move is the
        usual one (append on top of the cursor, the newest entry in force); any other move
        reads the whole log first."""
        count = self._count + len(more)
        if not -1 <= cursor < count:
            raise ValueError(f"cursor {cursor} outside a log of {count} entries")
        if self._base is not None and not _is_done(self._base):  # not ``self.loaded``
            prev = more[-1].prev if more else -1
            usual = bool(more) and cursor == count - 1
            if not (usual and (prev < 0 or prev >= self._based or prev in self._entries)):
                self._base_entries()  # anything but the usual append needs the whole log
        own = self._count - self._based
        with _APPENDING:
            tail, n = self._tail, len(more)
            if len(tail) == own:
                tail.extend(more)  # this is the newest log of the list: share it
            elif len(tail) < own + n or not all(map(_is, tail[own : own + n], more)):
                # an older log (the list may have grown long since): a branch of its own
                tail = [*tail[:own], *more]
            # else the same entries were appended to this log already (a commit applied
            # twice: planned, then stored): share them
        # the new log's slots set here, not through ``_set``: a log is appended on every write
        log = _new_log(FieldHistory)
        log._base = self._base
        log._based = self._based
        log._entries = self._entries
        log._tail = tail
        log._count = count
        log._cursor = cursor
        log._redo = None
        log._revisions = None
        return log

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FieldHistory):
            return NotImplemented
        return (self._cursor, self.revisions) == (other._cursor, other.revisions)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        if not self.loaded:
            return f"FieldHistory(partial, count={self._count}, cursor={self._cursor})"
        return f"FieldHistory(revisions={self.revisions!r}, cursor={self._cursor})"

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        data = handler.generate_schema(_LogData)
        return core_schema.no_info_after_validator_function(
            lambda d: d if isinstance(d, FieldHistory) else FieldHistory(d.revisions, d.cursor),
            core_schema.union_schema([core_schema.is_instance_schema(cls), data]),
            serialization=core_schema.plain_serializer_function_ser_schema(
                lambda log: _LogData(revisions=log.revisions, cursor=log.cursor),
                return_schema=data,
            ),
        )


def with_changes(
    history: Mapping[str, FieldHistory], changes: Mapping[str, FieldChange]
) -> Marked[FieldHistory]:
    """``history`` (an instance's logs) with ``changes`` (a commit's) applied: a new mapping
    sharing the logs it leaves alone (``ValueError`` for a cursor outside its log)."""
    result = fresh(history)
    for field_id, change in changes.items():
        old = history.get(field_id, _EMPTY)
        made = change.__dict__  # a model's attributes cost ~10x a dict's (BaseModel.__getattr__)
        try:
            log = old.appended(made["append"], made["cursor"])
        except ValueError:
            raise ValueError(f"field {field_id}: cursor {made['cursor']} outside its log") from None
        _dict_set(result, field_id, log)  # a fresh copy carrying nothing: no mark to drop
    return result


class _LogData(Frozen):
    """A ``FieldHistory`` as data: how it is validated and serialised."""

    revisions: tuple[Revision, ...] = ()
    cursor: int = -1


_APPENDING = threading.Lock()
"""Held while a log checks that it is the newest of its list and extends it."""


class _Once:
    """``load`` memoised: the first call's result, returned to every later one."""

    __slots__ = ("_load", "_lock", "done")

    def __init__(self, load: Callable[[], tuple[Revision, ...]]) -> None:
        self._load = load
        self._lock = threading.Lock()
        self.done: tuple[Revision, ...] | None = None

    def __call__(self) -> tuple[Revision, ...]:
        with self._lock:
            if self.done is None:
                self.done = tuple(self._load())
            return self.done


def _once(load: Callable[[], tuple[Revision, ...]]) -> Callable[[], tuple[Revision, ...]]:
    return load if isinstance(load, _Once) else _Once(load)


def _is_done(load: Callable[[], tuple[Revision, ...]]) -> bool:
    return isinstance(load, _Once) and load.done is not None


_EMPTY = FieldHistory()
_dict_set = dict.__setitem__
_new_log = object.__new__
_is = operator.is_
