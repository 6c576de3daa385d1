"""What a draft is and what a commit does to it: the one definition every ``DraftStore``
adapter follows (``forms.storage.drafts`` is the port).

A builder agent edits a *draft* in small tool calls (``forms.documents.edits``). The store
keeps, per (tenant, form id), the draft's **edit log**: one ``EditEntry`` per edit that was
applied (the tool, its tool-call id, who, when, the sentence the model read, and the whole
document after it), and a cursor naming the entry in force. Like a field's revision log
(``forms.instance.FieldHistory``), each entry remembers ``prev``, the entry in force when it
was appended: undo moves the cursor to ``prev``, redo to the newest entry appended on top of
the entry in force, and a new edit appends on top of the cursor. Nothing an edit replaced,
or an undo stepped back from, is ever lost.

A read returns the draft's head (``Draft``): the entry in force, with its document, the
cursor, the counts and what undo and redo need (the entries they move to), never the log
itself. ``apply_draft_commit`` is the one definition of what a commit does to a draft;
``head_texts`` what a head stores (and its size check).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict

from forms.documents.model import FormDocument
from forms.errors import Conflict
from forms.instance import NewCall
from forms.storage.sizes import check, draft_bytes

__all__ = [
    "Draft",
    "DraftCommit",
    "DraftConflict",
    "DraftSummary",
    "EditEntry",
    "Move",
    "Redo",
    "apply_draft_commit",
    "copied",
    "copy_draft",
    "head_texts",
    "summary_of",
]

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


def copy_draft(draft: Draft) -> Draft:
    """A draft the caller owns: its entry in force (and so its document) copied."""
    return replace(draft, current=draft.current.model_copy(deep=True))


def copied(draft: Draft | None) -> Draft | None:
    return copy_draft(draft) if draft is not None else None
