"""Draft form documents, per tenant: the port and its in-memory adapter.

What a draft is (its edit log, its head, a commit) is ``forms.storage.draft_model``, whose
names this module re-exports. Beside each draft, the store keeps its **call records**
(``forms.instance.CallRecord``), one per tool-call id, written once, so a retried builder call
gets its first result back; ``history`` reads the log.

The tenant is the verified principal's (``forms.app.catalog.tenant_key``); a deployment
without tenants keeps its drafts under ``""``. ``InMemoryDraftStore`` is the in-memory
adapter, ``forms.storage.dynamodb_drafts.DynamoDBDraftStore`` the DynamoDB one; both pass
``forms.storage.drafts_contract``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from forms.errors import CallRecorded, Conflict, NotFound
from forms.instance import CallRecord, NewCall
from forms.storage.calls import CALL_PRIMITIVES, CallRecords
from forms.storage.draft_model import (
    Draft,
    DraftCommit,
    DraftConflict,
    DraftSummary,
    EditEntry,
    Move,
    Redo,
    apply_draft_commit,
    copied,
    head_texts,
    summary_of,
)
from forms.storage.draft_model import copy_draft as _copy

__all__ = [
    "PRIMITIVES",
    "Draft",
    "DraftCommit",
    "DraftConflict",
    "DraftStore",
    "DraftSummary",
    "EditEntry",
    "InMemoryDraftStore",
    "Move",
    "Redo",
    "apply_draft_commit",
    "head_texts",
    "summary_of",
]


class DraftStore(CallRecords):
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

    The port holds the logic (what a missing draft is, planning a commit with
    ``apply_draft_commit``, the size check, the copies handed out, a list's order, what a
    refused call record reads back); adapters implement the primitives below the line. A
    wrapper that overrides every public method (a test's counting store) need not implement
    them, so they raise ``NotImplementedError`` rather than being abstract.
    """

    # ------------------------------------------------------------------ reading

    def get(self, tenant: str, form_id: str) -> Draft:
        """The draft's head; ``NotFound`` when the tenant has no draft of that form."""
        draft = self._read_head(tenant, form_id)
        if draft is None:
            raise NotFound(f"no draft of form {form_id!r}")
        return _copy(draft)

    def history(self, tenant: str, form_id: str) -> list[EditEntry]:
        """Every entry of the draft's edit log, oldest first (an entry's index is its
        position); ``NotFound`` when there is no draft."""
        entries = self._read_log(tenant, form_id)
        if entries is None:
            raise NotFound(f"no draft of form {form_id!r}")
        return entries

    def list_drafts(self, tenant: str) -> list[DraftSummary]:
        """The tenant's drafts, by form id."""
        return sorted(self._read_lines(tenant), key=lambda line: line.form_id)

    def get_call(self, tenant: str, form_id: str, call_id: str) -> CallRecord | None:
        """The first record of ``call_id`` for this draft, or None."""
        return self._read_call(tenant, form_id, call_id)  # CallRecords' primitive

    # ------------------------------------------------------------------ writing

    def commit(self, commit: DraftCommit) -> Draft:
        """Apply ``commit`` atomically, with its call's record; return the draft after it.

        ``CallRecorded`` when the call's id is taken, ``Conflict`` on a stale
        ``expected_version``, ``ValueError`` when the change cannot apply, ``SizeLimit`` when
        the draft would pass the item limit; nothing is stored in any of those cases."""
        tenant, form_id = commit.tenant, commit.form_id
        current = self._planned_on(commit)
        try:
            applied = apply_draft_commit(
                current, commit, lambda index: self._read_entry(tenant, form_id, index)
            )
        except Conflict as stale:  # what was read shows it, a copy: nothing written
            raise Conflict(form_id, stale.expected, copied(stale.current), kind="draft") from None
        self._write(commit, applied)
        return _copy(applied)

    def record_call(self, tenant: str, form_id: str, call: NewCall) -> None:
        """Record a call that changed no draft; ``CallRecorded`` if the id is taken. A draft
        need not exist (a call refused before ``create_form`` is recorded too)."""
        self._record_call(tenant, form_id, call)

    # ------------------------------------------------------------------ primitives

    def _read_head(self, tenant: str, form_id: str) -> Draft | None:
        """The stored head, or None (the port copies it before handing it out)."""
        raise NotImplementedError

    def _planned_on(self, commit: DraftCommit) -> Draft | None:
        """The head ``commit`` is planned on: the stored one, unless the adapter remembers
        the version it expects (the write's condition catches a draft that moved on). An
        adapter may refuse a recorded call here already (``CallRecorded``)."""
        return self._read_head(commit.tenant, commit.form_id)

    def _read_entry(self, tenant: str, form_id: str, index: int) -> EditEntry:
        """One entry of the stored log (undo and redo read the one they move to)."""
        raise NotImplementedError

    def _read_log(self, tenant: str, form_id: str) -> list[EditEntry] | None:
        """The whole edit log, the caller's own copies; None when there is no draft."""
        raise NotImplementedError

    def _read_lines(self, tenant: str) -> list[DraftSummary]:
        """Every draft of the tenant as a line of a list, in any order."""
        raise NotImplementedError

    def _write(self, commit: DraftCommit, applied: Draft) -> None:
        """Store ``applied`` (the head after ``commit``), its new entry for an edit, and the
        call's record, at once, only if the stored version is still
        ``commit.expected_version``: otherwise ``CallRecorded`` (the call's id is taken) or
        ``Conflict`` (with the head stored now), and nothing stored. ``head_texts`` first:
        its ``SizeLimit`` stores nothing either (the JSON it gives is what a head stores)."""
        raise NotImplementedError


PRIMITIVES = ("_read_head", "_read_entry", "_read_log", "_read_lines", "_write", *CALL_PRIMITIVES)
"""What a ``DraftStore`` adapter implements (``_planned_on`` it may)."""


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

    def _read_head(self, tenant: str, form_id: str) -> Draft | None:
        with self._lock:
            stored = self._drafts.get((tenant, form_id))
            return stored.head if stored is not None else None

    def _planned_on(self, commit: DraftCommit) -> Draft | None:
        key = (commit.tenant, commit.form_id)
        with self._lock:  # a recorded call is refused first, whatever version it expects
            self._check_call(key, commit.call)
            stored = self._drafts.get(key)
            return _copy(stored.head) if stored is not None else None

    def _read_entry(self, tenant: str, form_id: str, index: int) -> EditEntry:
        with self._lock:
            return self._drafts[(tenant, form_id)].log[index]

    def _read_log(self, tenant: str, form_id: str) -> list[EditEntry] | None:
        with self._lock:
            stored = self._drafts.get((tenant, form_id))
            if stored is None:
                return None
            return [entry.model_copy(deep=True) for entry in stored.log]

    def _read_lines(self, tenant: str) -> list[DraftSummary]:
        with self._lock:
            heads = [s.head for (t, _), s in self._drafts.items() if t == tenant]
        return [summary_of(head) for head in heads]

    def _read_call(self, tenant: str, form_id: str, call_id: str) -> CallRecord | None:
        with self._lock:
            record = self._calls.get((tenant, form_id), {}).get(call_id)
            return record.model_copy(deep=True) if record is not None else None

    def _add_call(self, tenant: str, form_id: str, call: NewCall) -> bool:
        with self._lock:
            calls = self._calls.setdefault((tenant, form_id), {})
            if call.call_id in calls:
                return False
            calls[call.call_id] = call.record.model_copy(deep=True)
            return True

    def _write(self, commit: DraftCommit, applied: Draft) -> None:
        head_texts(applied)  # SizeLimit: nothing stored
        key = (commit.tenant, commit.form_id)
        head = _copy(applied)
        with self._lock:
            self._check_call(key, commit.call)
            stored = self._drafts.get(key)
            if (stored.head.version if stored is not None else 0) != commit.expected_version:
                now = _copy(stored.head) if stored is not None else None
                raise Conflict(commit.form_id, commit.expected_version, now, kind="draft")
            log = stored.log if stored is not None else []
            if commit.edit is not None:
                log = [*log, head.current]
            self._drafts[key] = _Stored(head, log)
            if commit.call is not None:
                record = commit.call.record.model_copy(deep=True)
                self._calls.setdefault(key, {})[commit.call.call_id] = record

    def _check_call(self, key: tuple[str, str], call: NewCall | None) -> None:
        """``CallRecorded`` when ``call``'s id is taken; the caller holds the lock."""
        if call is not None and call.call_id in self._calls.get(key, {}):
            first = self._calls[key][call.call_id]
            raise CallRecorded(call.call_id, first.model_copy(deep=True))
