"""``DraftStore`` on the forms table, beside the instances and the published documents (own
key space).

Per draft, one partition holding its head, its edit log and its call records; per tenant, one
partition listing its drafts::

    T#<tenant>#D#<form_id> / HEAD             v (N): the version; count, cursor (N);
                                              current (JSON: the entry in force, with its
                                              document); redo (JSON: [entry, sentence] pairs);
                                              by, at: the last commit's
    T#<tenant>#D#<form_id> / E#<index:010d>   entry (JSON: one EditEntry, written once)
    T#<tenant>#D#<form_id> / C#<call_id>      record (JSON: a CallRecord, written once)
    T#<tenant>#DRAFTS / D#<form_id>           title, v, count, by, at: the draft's line in a list

``<tenant>`` and ``<form_id>`` have ``%`` and ``#`` escaped, so no tenant reads another's keys.

- Reading a draft is one consistent GetItem of its head, whatever its history: the head holds
  the entry in force (so the document), the cursor, the counts, and what undo and redo need
  (the entry in force's ``prev``, and the redo path: indices and sentences).
- A commit is one TransactWriteItems: the head (``attribute_not_exists`` for a new draft, else
  ``v = :expected``, listed first), the new entry for an edit (``attribute_not_exists``), the
  list line, and the call record (``attribute_not_exists``, listed last). Undo and redo first
  read the one entry they move to (one GetItem). The store remembers the last head it read or
  wrote of up to ``remember`` drafts (and that a draft it looked for was missing), so a commit
  planned on what it read adds no read; the write's condition refuses it if the draft moved on.
- A cancelled write is read back: the call item failed (``CallRecorded``, one GetItem of the
  record) or the head's condition or a concurrent transaction (``Conflict`` carrying the
  head read again), as ``forms.storage.dynamodb_requests.refused`` maps every adapter's.
  Nothing is written in either case.
- ``history`` is the head and one Query of the ``E#`` items below its count (read again if a
  landing transaction's items were not all visible yet); ``list_drafts`` one Query of the
  tenant's list. Call records are read only by ``get_call`` and a refused write.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from forms.documents.model import STORED
from forms.errors import StoreError
from forms.instance import CallRecord, NewCall
from forms.storage.draft_model import copied, head_texts
from forms.storage.drafts import Draft, DraftCommit, DraftStore, DraftSummary, EditEntry, Redo
from forms.storage.dynamodb_requests import (
    add_call,
    call_put,
    get_item,
    item_too_large,
    largest_item,
    put_action,
    query_items,
    read_call,
    refused,
)
from forms.storage.dynamodb_requests import escape as _escape
from forms.storage.dynamodb_requests import n as _n
from forms.storage.dynamodb_requests import s as _s
from forms.storage.remembered import Remembered
from forms.storage.sizes import too_large

_HEAD = "HEAD"
_ENTRY = "E#"


class DynamoDBDraftStore(DraftStore):
    """Drafts in the forms table, through a low-level boto3 DynamoDB client: the primitives
    of ``DraftStore``, whose logic is the port's."""

    def __init__(
        self,
        client: Any,
        table_name: str,
        *,
        remember: int = 256,
        read_attempts: int = 5,
    ) -> None:
        self._client = client
        self._table = table_name
        self._read_attempts = read_attempts
        self._known: Remembered[tuple[str, str], Draft] = Remembered(remember)

    # ------------------------------------------------------------------ reading

    def _read_head(self, tenant: str, form_id: str) -> Draft | None:
        item = get_item(self._client, self._table, _draft_key(tenant, form_id), _HEAD)
        draft = None
        if item is not None:
            draft = Draft(
                tenant,
                form_id,
                int(item["v"]["N"]),
                int(item["count"]["N"]),
                int(item["cursor"]["N"]),
                EditEntry.model_validate_json(item["current"]["S"], context=STORED),
                tuple(Redo(*step) for step in json.loads(item["redo"]["S"])),
                item["by"]["S"],
                datetime.fromisoformat(item["at"]["S"]),
            )
        self._known.keep((tenant, form_id), draft)
        return draft

    def _planned_on(self, commit: DraftCommit) -> Draft | None:
        where = (commit.tenant, commit.form_id)
        found, known = self._known.at(where, commit.expected_version)
        return known if found else self._read_head(*where)

    def _read_entry(self, tenant: str, form_id: str, index: int) -> EditEntry:
        item = get_item(self._client, self._table, _draft_key(tenant, form_id), _entry_sk(index))
        if item is None:
            raise StoreError(f"draft {form_id!r}: entry {index} of its edit log is missing")
        return EditEntry.model_validate_json(item["entry"]["S"], context=STORED)

    def _read_log(self, tenant: str, form_id: str) -> list[EditEntry] | None:
        draft = self._read_head(tenant, form_id)
        if draft is None:
            return None
        pk = _draft_key(tenant, form_id)
        for _ in range(self._read_attempts):
            entries = [
                EditEntry.model_validate_json(item["entry"]["S"], context=STORED)
                for item in query_items(
                    self._client,
                    self._table,
                    pk,
                    between=(_entry_sk(0), _entry_sk(draft.count - 1)),
                )
            ]
            if len(entries) == draft.count:
                return entries
        raise StoreError(f"draft {form_id!r}: its edit log did not read whole")

    def _read_lines(self, tenant: str) -> list[DraftSummary]:
        items = query_items(self._client, self._table, _list_key(tenant))
        return [
            DraftSummary(
                item["form_id"]["S"],
                item["title"]["S"],
                int(item["v"]["N"]),
                int(item["count"]["N"]),
                item["by"]["S"],
                datetime.fromisoformat(item["at"]["S"]),
            )
            for item in items
        ]

    def _read_call(self, tenant: str, form_id: str, call_id: str) -> CallRecord | None:
        return read_call(self._client, self._table, _draft_key(tenant, form_id), call_id)

    # ------------------------------------------------------------------ writing

    def _add_call(self, tenant: str, form_id: str, call: NewCall) -> bool:
        return add_call(self._client, self._table, _draft_key(tenant, form_id), call)

    def _write(self, commit: DraftCommit, applied: Draft) -> None:
        tenant, form_id = commit.tenant, commit.form_id
        actions = self._actions(commit, applied, head_texts(applied))  # SizeLimit: no write
        try:
            self._client.transact_write_items(TransactItems=actions)
        except Exception as exc:
            if item_too_large(exc):  # past what head_texts measured: refused all the same
                raise too_large("draft", largest_item(actions), form_id) from None
            if not isinstance(exc, self._client.exceptions.TransactionCanceledException):
                raise
            call = commit.call
            raise refused(
                exc,
                kind="draft",
                subject=form_id,
                expected=commit.expected_version,
                current=lambda: copied(self._read_head(tenant, form_id)),
                recorded=(lambda: self._recorded(tenant, form_id, call)) if call else None,
            ) from None
        self._known.keep((tenant, form_id), applied)

    def _actions(
        self, commit: DraftCommit, applied: Draft, texts: tuple[str, str]
    ) -> list[dict[str, Any]]:
        """The transaction of a commit: the head (on the expected version), the new entry of
        an edit, the list line and the call record (last)."""
        pk = _draft_key(commit.tenant, commit.form_id)
        current_text, redo_text = texts
        head = {
            "pk": _s(pk),
            "sk": _s(_HEAD),
            "v": _n(applied.version),
            "count": _n(applied.count),
            "cursor": _n(applied.cursor),
            "redo": _s(redo_text),
            "current": _s(current_text),
            "by": _s(applied.changed_by),
            "at": _s(applied.changed_at.isoformat()),
        }
        expected = commit.expected_version
        if expected == 0:
            actions = [put_action(self._table, head, "attribute_not_exists(pk)")]
        else:
            actions = [put_action(self._table, head, "v = :v", values={":v": _n(expected)})]
        if commit.edit is not None:
            entry = {"pk": _s(pk), "sk": _s(_entry_sk(applied.cursor)), "entry": head["current"]}
            actions.append(put_action(self._table, entry, "attribute_not_exists(pk)"))
        actions.append(put_action(self._table, _line(applied), None))
        if commit.call is not None:
            actions.append(call_put(self._table, pk, commit.call))
        return actions


def _line(draft: Draft) -> dict[str, Any]:
    return {
        "pk": _s(_list_key(draft.tenant)),
        "sk": _s("D#" + _escape(draft.form_id)),
        "form_id": _s(draft.form_id),
        "title": _s(draft.document.title),
        "v": _n(draft.version),
        "count": _n(draft.count),
        "by": _s(draft.changed_by),
        "at": _s(draft.changed_at.isoformat()),
    }


def _draft_key(tenant: str, form_id: str) -> str:
    return f"T#{_escape(tenant)}#D#{_escape(form_id)}"


def _list_key(tenant: str) -> str:
    return f"T#{_escape(tenant)}#DRAFTS"


def _entry_sk(index: int) -> str:
    return f"{_ENTRY}{index:010d}"
