"""One field of the form page as a person reads it (``field_view``): its status and reason in
words, the value in force and who wrote it, its revisions, what memory filled or offers, and
the input the page offers for it.

Every status, reason and mark comes from the engine and ``forms.surface.view`` (``field_row``);
here they are only worded for a person. Author and user text is passed as it is stored:
escaping it is the renderer's job. All names are importable from ``forms.app.pages``.
"""

from __future__ import annotations

import json
from typing import Any

from forms.app.page_views import FieldView, InputView, MemoryView, RevisionView
from forms.app.page_writes import head, input_kind
from forms.compiled import CompiledField, CompiledForm
from forms.evaluation import Evaluation
from forms.instance import FormInstance, Recollection, Revision
from forms.surface.recalled import from_account, memory_mark
from forms.surface.view import field_row

STATUS_TEXT: dict[str, str] = {
    "answered": "Answered",
    "pending": "Pending",
    "optional": "Optional, not answered",
    "held": "Held",
    "not_applicable": "Not applicable",
    "declined": "Declined",
    "no_preference": "No preference",
    "ask_again": "To check again",
    "invalid": "No longer valid",
    "unanswered": "Not answered",
}
"""What a person reads for each field status (``forms.statuses.FieldRowStatus``)."""

SOURCE_TEXT: dict[str, str] = {
    "agent": "the agent",
    "executor": "an automated check",
    "approver": "an approver",
    "webhook": "a connected system",
    "memory": "memory",
    "migration": "a form update",
    "operator": "an operator",
    "user": "you",
    "handover": "an earlier form",
}
"""Who wrote a revision, in words (``forms.instance.Source``)."""

HELD_STEP = "Kept, but its step does not apply with the current answers."
HELD_FIELD = "Kept, but the question does not apply with the current answers."
FILLED_FROM_MEMORY = "Filled from memory — not confirmed"
FILLED_FROM_ACCOUNT = "Filled from your account — not confirmed"
"""A field's badge while memory's fill (or the account's default) is in force, unconfirmed:
a state of its own, not "Answered", until the person or the agent confirms it."""
OFFERED_FROM_MEMORY = "Offered from memory — not applied"
OFFERED_FROM_ACCOUNT = "Offered from your account — not applied"
"""A field's badge while memory (or the account) only offers a value and nothing is in force:
the offer is not an answer, and the badge says so in words, not "Pending"."""
OFFERED_ON: frozenset[str] = frozenset({"pending", "optional", "unanswered"})
"""The statuses an offer's badge replaces: a field with no answer in force."""
UNWRITABLE: frozenset[str] = frozenset({"held", "not_applicable"})
"""Statuses whose field the page offers no input for: the question does not apply now (a
held answer is kept and shown; the agent or a later answer may bring it back)."""


def field_view(
    form: CompiledForm,
    instance: FormInstance,
    ev: Evaluation,
    field_id: str,
    closed: bool,
    mark: Recollection | None,
    column: tuple[int, int] | None = None,
) -> FieldView:
    """The field ``field_id`` as the person reads it on the page (``mark``: what memory or the
    account filled or offers in it; ``column``: its place on a document's grid)."""
    field = form.fields[field_id]
    fe = ev.fields[field_id]
    row = field_row(field, fe, closed=closed, memory=mark)
    status = str(row["status"])
    history = instance.history.get(field_id)
    in_force = history.in_force() if history is not None else None
    reason: str | None = row.get("reason")
    if status == "held":
        reason = HELD_STEP if not ev.step_applies[field.step] else HELD_FIELD
    elif reason:  # the engine's clause for the agent, read on the page as a sentence
        reason = sentence(reason[:1].upper() + reason[1:])
    revisions: tuple[RevisionView, ...] = ()
    if history is not None:
        revisions = tuple(
            _revision(i, r, i == history.cursor) for i, r in enumerate(history.revisions)
        )
    status_text = STATUS_TEXT.get(status, status)
    log = instance.field(field_id)
    writable = not closed and field.offered and status not in UNWRITABLE
    if mark is not None and mark.use == "fill" and status == "answered":
        status_text = FILLED_FROM_ACCOUNT if from_account(mark) else FILLED_FROM_MEMORY
    elif mark is not None and mark.use == "offer" and status in OFFERED_ON:
        status_text = OFFERED_FROM_ACCOUNT if from_account(mark) else OFFERED_FROM_MEMORY
    return FieldView(
        id=field.id,
        label=field.label,
        type=row.get("type"),
        status=status,
        status_text=status_text,
        optional=field.optional,
        value=_shown(in_force) if in_force is not None and in_force.kind == "value" else None,
        by=_source(in_force.by) if in_force is not None else None,
        at=shown_time(in_force.at) if in_force is not None else None,
        reason=reason,
        memory=_memory(mark) if mark is not None else None,
        decided_by=row.get("decided_by"),
        revisions=revisions,
        column=column,
        seen=head(log),
        input=_input(field, in_force, mark) if writable else None,
        can_retract=writable and in_force is not None and in_force.kind == "value",
        can_decline=writable and field.declinable and status not in ("declined", "no_preference"),
        can_undo=writable and log.undo_target() is not None,
        can_redo=writable and log.redo_target() is not None,
    )


def _input(field: CompiledField, in_force: Revision | None, mark: Recollection | None) -> InputView:
    kind, options = input_kind(field.type.json_schema)
    value = in_force.value if in_force is not None and in_force.kind == "value" else None
    chosen: tuple[str, ...] = ()
    if kind == "choices" and isinstance(value, list):
        chosen = tuple(str(v) for v in value)
    if value is None:
        current = ""
    elif isinstance(value, str):
        current = value
    elif isinstance(value, bool):
        current = "true" if value else "false"
    else:
        current = json.dumps(value, ensure_ascii=False)
    offer = None
    if mark is not None and mark.use == "offer":
        offer = json.dumps(mark.value, ensure_ascii=False)
    return InputView(kind=kind, options=options, current=current, chosen=chosen, offer=offer)


def _memory(mark: Recollection) -> MemoryView:
    account = from_account(mark)
    if mark.use == "fill":
        source = "your account" if account else "memory"
        headline = f"Filled from {source}, not confirmed yet."
    else:
        headline = sentence(f"{'Your account' if account else 'Memory'} offers: {mark.shown}")
    details: list[str] = []
    if mark.derived_from:
        details.append(sentence(f"Worked out from your words “{mark.derived_from}”"))
    if not account:  # the account's values are the token's claims: nobody said them
        verb, _, day = mark.when().partition(" ")
        details.append(f"You {verb} it on {day}.")
    return MemoryView(
        use=mark.use,
        mark=memory_mark(mark),
        headline=headline,
        details=tuple(details),
        shown=mark.shown,
        said_as=mark.derived_from,
        when=mark.when(),
        from_account=account,
    )


def sentence(text: str) -> str:
    """``text`` ending as a sentence: a full stop added unless it already ends with one
    (or a question or exclamation mark), so a value ending in ``.`` gets no second one."""
    text = text.rstrip()
    return text if text.endswith((".", "!", "?")) else f"{text}."


def _revision(n: int, revision: Revision, in_force: bool) -> RevisionView:
    return RevisionView(
        n=n,
        kind=revision.kind,
        value=_shown(revision) if revision.kind == "value" else None,
        by=_source(revision.by),
        at=shown_time(revision.at) or "",
        note=revision.note,
        in_force=in_force,
    )


def _shown(revision: Revision) -> str:
    value: Any = revision.value
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _source(by: str) -> str:
    return SOURCE_TEXT.get(by, by)


def shown_time(moment: Any) -> str | None:
    """A moment as the page shows it (``2026-09-03 14:05 UTC``); None for none."""
    return None if moment is None else f"{moment:%Y-%m-%d %H:%M} UTC"
