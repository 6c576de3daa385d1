"""Draft form documents, per tenant: the port, the one definition of a commit, and the
in-memory adapter.

A builder agent edits a *draft* in small tool calls (``forms.documents.edits``). The store
keeps, per (tenant, form id), the draft's **edit log**: one ``EditEntry`` per edit that was
applied (the tool, its tool-call id, who, when, the sentence the model read, and the whole
document after it), and a cursor naming the entry in force. Like a field's revision log
(``forms.instance.FieldHistory``), each entry remembers ``prev``, the entry in force when it
was appended: undo moves the cursor to ``prev``, redo to the newest entry appended on top of
the entry in force, and a new edit appends on top of the cursor. Nothing an edit replaced,
or an undo stepped back from, is ever lost.

Beside each draft, the store keeps its **call records** (``forms.instance.CallRecord``), one
per tool-call id, written once, so a retried builder call gets its first result back.

A read returns the draft's head (``Draft``): the entry in force, with its document, the
cursor, the counts and what undo and redo need (the entries they move to), never the log
itself; ``history`` reads the log.

``apply_draft_commit`` is the one definition of what a commit does to a draft; adapters call
it, or do exactly the same in their own storage. The tenant is the verified principal's
(``forms.app.catalog.tenant_key``); a deployment without tenants keeps its drafts under ``""``.
"""

from __future__ import annotations

import json
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict

from forms.documents.model import FormDocument
from forms.errors import CallRecorded, Conflict, NotFound
from forms.instance import CallRecord, NewCall
from forms.storage.sizes import check, draft_bytes

Move = Literal["undo", "redo"]


class EditEntry(BaseModel):
    """One applied edit of a draft. Never changed, never removed.

    ``prev`` is the index of the entry in force when this one was appended (-1 for the first):
    undo goes back to it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: str
    call_id: str
    by: str
    at: datetime
    summary: str
    document: FormDocument
    prev: int = -1


class Redo(NamedTuple):
    """A step of the redo path: the entry redo brings back, and its sentence."""

    entry: int
    summary: str


@dataclass(frozen=True, slots=True)
class Draft:
    """A draft as stored now: its head, which is all a tool call reads.

    ``current`` is the entry in force (index ``cursor`` of a log of ``count`` entries), and
    ``document`` its document. ``redo`` is the path redo walks from here: ``redo[0]`` is the
    newest entry appended on top of the entry in force, ``redo[1]`` the newest on top of that,
    and so on (empty after an edit, one longer after each undo), each with its sentence, so the
    head says what undo and redo would do without reading the log. ``version`` goes up by one
    with every commit (compare-and-set); ``changed_by`` and ``changed_at`` are the last
    commit's."""

    tenant: str
    form_id: str
    version: int
    count: int
    cursor: int
    current: EditEntry
    redo: tuple[Redo, ...]
    changed_by: str
    changed_at: datetime

    @property
    def document(self) -> FormDocument:
        return self.current.document

    @property
    def undo_target(self) -> int | None:
        """The entry undo would bring back, or None when there is nothing to undo."""
        return self.current.prev if self.current.prev >= 0 else None

    @property
    def redo_target(self) -> int | None:
        """The entry redo would bring back, or None when there is nothing to redo."""
        return self.redo[0].entry if self.redo else None


@dataclass(frozen=True, slots=True)
class DraftSummary:
    """A draft in a list: which form, its title now, how far along, last changed when."""

    form_id: str
    title: str
    version: int
    edits: int
    changed_by: str
    changed_at: datetime


@dataclass(frozen=True, slots=True)
class DraftCommit:
    """One change of a draft: append ``edit`` on top of the cursor, or ``move`` the cursor
    (undo, redo); exactly one of the two. ``expected_version`` is the version the change was
    planned on (0: the draft does not exist yet, and only an edit can start it). ``call`` is
    the call record stored in the same write."""

    tenant: str
    form_id: str
    expected_version: int
    by: str
    at: datetime
    edit: EditEntry | None = None
    move: Move | None = None
    call: NewCall | None = None

    def __post_init__(self) -> None:
        if (self.edit is None) == (self.move is None):
            raise ValueError("a draft commit is an edit or a move, and only one")


DraftConflict = Conflict
"""The draft store's older name for ``forms.errors.Conflict``: a commit planned on another
version of the draft, ``current`` the draft as stored now (None: there is none)."""


def apply_draft_commit(
    current: Draft | None, commit: DraftCommit, entry: Callable[[int], EditEntry]
) -> Draft:
    """The draft after ``commit``: the one definition every adapter follows.

    ``entry(index)`` reads one entry of the stored log (a move needs the entry it moves to).
    Raises ``Conflict`` when ``expected_version`` is not the stored version, and
    ``ValueError`` when the change cannot apply (an edit not appended on top of the cursor,
    an undo or redo with nothing to move to). Nothing is stored in either case."""
    version = current.version if current is not None else 0
    if commit.expected_version != version:
        raise Conflict(commit.form_id, commit.expected_version, current, kind="draft")
    if commit.edit is not None:
        cursor = current.cursor if current is not None else -1
        if commit.edit.prev != cursor:
            raise ValueError(f"an edit appends on top of entry {cursor}, not {commit.edit.prev}")
        count = current.count if current is not None else 0
        return Draft(
            commit.tenant,
            commit.form_id,
            version + 1,
            count + 1,
            count,
            commit.edit,
            (),
            commit.by,
            commit.at,
        )
    if current is None:
        raise ValueError(f"there is no draft {commit.form_id!r} to {commit.move}")
    if commit.move == "undo":
        target = current.undo_target
        redo = (Redo(current.cursor, current.current.summary), *current.redo)
    else:
        target = current.redo_target
        redo = current.redo[1:]
    if target is None:
        raise ValueError(f"draft {commit.form_id!r}: nothing to {commit.move}")
    return replace(
        current,
        version=version + 1,
        cursor=target,
        current=entry(target),
        redo=redo,
        changed_by=commit.by,
        changed_at=commit.at,
    )


def head_texts(draft: Draft) -> tuple[str, str]:
    """The JSON of what a draft's head holds: the entry in force (with its document) and the
    redo path. ``SizeLimit`` when together they pass ``forms.storage.sizes.ITEM_LIMIT``: every
    adapter calls this before it stores a commit, so all refuse the same drafts."""
    entry = draft.current.model_dump_json(by_alias=True)
    redo = json.dumps(list(draft.redo))
    check("draft", draft_bytes(entry, redo), draft.form_id)
    return entry, redo


class DraftStore(ABC):
    """Where a tenant's drafts, their edit logs and their call records live.

    The builder relies on these promises, and on nothing else:

    1. **History only grows.** A commit appends one entry to a draft's edit log, or moves its
       cursor (undo to the entry's ``prev``, redo to the newest entry appended on top); an
       entry once stored is never changed or removed (``history`` returns it as it was
       appended, whatever came after). ``apply_draft_commit`` is the single definition.
    2. **``version`` is compare-and-set.** A commit is applied only when its
       ``expected_version`` is the stored version (0 for a draft that does not exist), which
       then goes up by one; otherwise it fails with ``Conflict`` carrying the draft as
       stored now, and stores nothing.
    3. **All or nothing.** A commit and the call record it carries land in one write, or
       neither does. A commit whose draft would pass the item limit (``head_texts``) fails
       with ``SizeLimit`` and stores nothing.
    4. **Snapshots.** Nothing a caller does to a returned draft, entry or document changes
       what is stored, and nothing the store does later changes what it returned.
    5. **A tool-call id is recorded once per draft.** A commit carrying a call (``NewCall``)
       whose id the draft already recorded fails with ``CallRecorded`` (carrying the first
       record) and stores nothing (a commit that is also stale may fail with ``Conflict``
       instead: planned again, it meets the record); ``record_call`` records a call that
       changed nothing the same way. Records are kept apart from the draft: reading a draft
       never reads them.
    6. **Tenants are apart.** Every method takes the tenant; another tenant's draft is
       ``NotFound`` (or None, or an empty list) exactly like a missing one, and the same form
       id in two tenants is two drafts.

    Left to each adapter: the storage engine, its schema, how atomicity is achieved, and
    retention (a draft and its records are kept until the deployment removes them).
    """

    @abstractmethod
    def get(self, tenant: str, form_id: str) -> Draft:
        """The draft's head; ``NotFound`` when the tenant has no draft of that form."""

    @abstractmethod
    def commit(self, commit: DraftCommit) -> Draft:
        """Apply ``commit`` atomically, with its call's record; return the draft after it.

        ``CallRecorded`` when the call's id is taken, ``Conflict`` on a stale
        ``expected_version``, ``ValueError`` when the change cannot apply, ``SizeLimit`` when
        the draft would pass the item limit; nothing is stored in any of those cases."""

    @abstractmethod
    def history(self, tenant: str, form_id: str) -> list[EditEntry]:
        """Every entry of the draft's edit log, oldest first (an entry's index is its
        position); ``NotFound`` when there is no draft."""

    @abstractmethod
    def list_drafts(self, tenant: str) -> list[DraftSummary]:
        """The tenant's drafts, by form id."""

    @abstractmethod
    def record_call(self, tenant: str, form_id: str, call: NewCall) -> None:
        """Record a call that changed no draft; ``CallRecorded`` if the id is taken. A draft
        need not exist (a call refused before ``create_form`` is recorded too)."""

    @abstractmethod
    def get_call(self, tenant: str, form_id: str, call_id: str) -> CallRecord | None:
        """The first record of ``call_id`` for this draft, or None."""


@dataclass(slots=True)
class _Stored:
    head: Draft
    log: list[EditEntry]


class InMemoryDraftStore(DraftStore):
    """A thread-safe ``DraftStore`` in memory: for tests and single-process use. Documents are
    copied on the way in and out, so what it holds is nobody else's."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._drafts: dict[tuple[str, str], _Stored] = {}
        self._calls: dict[tuple[str, str], dict[str, CallRecord]] = {}

    def get(self, tenant: str, form_id: str) -> Draft:
        with self._lock:
            stored = self._drafts.get((tenant, form_id))
            if stored is None:
                raise NotFound(f"no draft of form {form_id!r}")
            return _copy(stored.head)

    def commit(self, commit: DraftCommit) -> Draft:
        key = (commit.tenant, commit.form_id)
        with self._lock:
            calls = self._calls.get(key, {})
            if commit.call is not None and commit.call.call_id in calls:
                first = calls[commit.call.call_id]
                raise CallRecorded(commit.call.call_id, first.model_copy(deep=True))
            stored = self._drafts.get(key)
            log = stored.log if stored is not None else []
            current = _copy(stored.head) if stored is not None else None
            head = _copy(apply_draft_commit(current, commit, log.__getitem__))
            head_texts(head)  # SizeLimit: nothing stored
            if commit.edit is not None:
                log = [*log, head.current]
            self._drafts[key] = _Stored(head, log)
            if commit.call is not None:
                record = commit.call.record.model_copy(deep=True)
                self._calls.setdefault(key, {})[commit.call.call_id] = record
            return _copy(head)

    def history(self, tenant: str, form_id: str) -> list[EditEntry]:
        with self._lock:
            stored = self._drafts.get((tenant, form_id))
            if stored is None:
                raise NotFound(f"no draft of form {form_id!r}")
            return [entry.model_copy(deep=True) for entry in stored.log]

    def list_drafts(self, tenant: str) -> list[DraftSummary]:
        with self._lock:
            heads = [s.head for (t, _), s in self._drafts.items() if t == tenant]
        return [summary_of(head) for head in sorted(heads, key=lambda d: d.form_id)]

    def record_call(self, tenant: str, form_id: str, call: NewCall) -> None:
        with self._lock:
            calls = self._calls.setdefault((tenant, form_id), {})
            if call.call_id in calls:
                raise CallRecorded(call.call_id, calls[call.call_id].model_copy(deep=True))
            calls[call.call_id] = call.record.model_copy(deep=True)

    def get_call(self, tenant: str, form_id: str, call_id: str) -> CallRecord | None:
        with self._lock:
            record = self._calls.get((tenant, form_id), {}).get(call_id)
            return record.model_copy(deep=True) if record is not None else None


def summary_of(draft: Draft) -> DraftSummary:
    """A draft's line in ``list_drafts``."""
    return DraftSummary(
        draft.form_id,
        draft.document.title,
        draft.version,
        draft.count,
        draft.changed_by,
        draft.changed_at,
    )


def _copy(draft: Draft) -> Draft:
    return replace(draft, current=draft.current.model_copy(deep=True))
