"""The form page's view model: one instance as a person reads it, built from the same reads as
the agent's tools.

``form_page`` locates the caller's instance exactly as ``form_read`` does (``locate``: one read
of the caller's conversation, so another principal's or another tenant's instance is as
unknown as a missing one), settles it through the commit loop and evaluates it with the engine;
every status, reason and mark comes from the engine and ``forms.surface.view`` (``field_row``,
``standing``, ``undo_redo``), never derived again here. What it returns is plain data (frozen
dataclasses of strings and numbers), so the HTML shell renders it without knowing the engine.

Author and user text is passed as it is stored (a label, a value's rendering): escaping it is
the renderer's job, done once, by the template engine's autoescaping.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from forms.app.catalog import Catalog, tenant_key
from forms.app.conversation import Caller, locate
from forms.app.loop import CommitLoop
from forms.app.page_writes import head, input_kind
from forms.compiled import CompiledField, CompiledForm
from forms.engine import evaluate
from forms.errors import NotFound, ToolError
from forms.evaluation import Evaluation
from forms.instance import FormInstance, HandoverLink, Recollection, Revision
from forms.storage.documents import FormDocumentStore
from forms.surface.recalled import from_account, memory_mark, standing
from forms.surface.view import field_row, step_state, undo_redo

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


@dataclass(frozen=True, slots=True)
class RevisionView:
    n: int
    kind: str
    value: str | None
    by: str
    at: str
    note: str | None
    in_force: bool


@dataclass(frozen=True, slots=True)
class MemoryView:
    use: str
    """``fill`` (written, unconfirmed) or ``offer`` (shown, not written)."""
    mark: str
    """The engine's words for it (``from memory, said 2026-09-03; unconfirmed``)."""
    headline: str
    """What it is, as a sentence (``Memory offers: 70 kg.``)."""
    details: tuple[str, ...]
    """Where it came from, one sentence each: the words it was read from (when derived),
    and when it was said or last confirmed (nothing for the account's values)."""
    shown: str
    said_as: str | None
    """The user's own words it was read from, when it was derived (``5'8"``)."""
    when: str
    from_account: bool


@dataclass(frozen=True, slots=True)
class InputView:
    kind: str
    """``page_writes.InputKind``: text, long_text, number, boolean, choice, choices, date, json."""
    options: tuple[str, ...]
    current: str
    """The value in force as the input shows it (empty when none)."""
    chosen: tuple[str, ...] = ()
    """For ``choices``: the options in force."""
    offer: str | None = None
    """What memory offers, as JSON, for its Apply button; None when it offers nothing."""


@dataclass(frozen=True, slots=True)
class FieldView:
    id: str
    label: str
    type: str | None
    status: str
    status_text: str
    optional: bool
    value: str | None
    by: str | None
    at: str | None
    reason: str | None
    memory: MemoryView | None
    decided_by: str | None
    revisions: tuple[RevisionView, ...]
    column: tuple[int, int] | None = None
    """A document form's place on its 12-column grid: the first column (1-12) and the width
    (1-12); None for a code form, or a field the document placed nowhere."""
    seen: str = "0.-1"
    """The field's log head as rendered (``page_writes.head``): a move on it carries this."""
    input: InputView | None = None
    """How the person answers it on the page; None when they cannot (the form is closed,
    the question does not apply now, or only an approver's decision writes it)."""
    can_retract: bool = False
    can_decline: bool = False
    can_undo: bool = False
    can_redo: bool = False


@dataclass(frozen=True, slots=True)
class StepView:
    id: str
    title: str
    state: str
    guidance: str | None
    fields: tuple[FieldView, ...]
    grid: bool = False
    """Whether its fields sit on the document's 12-column grid (``FieldView.column``)."""


@dataclass(frozen=True, slots=True)
class HookView:
    key: str
    title: str
    status: str
    attempts: int
    error: str | None


@dataclass(frozen=True, slots=True)
class ApprovalView:
    key: str
    title: str
    role: str
    status: str
    """``owed``, ``decided`` or ``failed``."""
    deadline: str | None
    finished_at: str | None
    error: str | None


@dataclass(frozen=True, slots=True)
class FormPage:
    instance_id: str
    form_id: str
    title: str
    version: int
    status: str
    status_text: str
    closed_reason: str | None
    complete: bool
    steps: tuple[StepView, ...]
    hooks: tuple[HookView, ...]
    approvals: tuple[ApprovalView, ...]
    rejections: tuple[str, ...]
    undo: str | None
    redo: str | None
    updated_at: str
    revision: int
    """The instance's version: what a later post will say it was rendered from."""
    memory_fills: tuple[str, ...] = ()
    """Labels of the values memory filled that stand unconfirmed: submit waits on them."""
    is_open: bool = True
    handed_over_to: str | None = None
    """The title of the form this one was handed over to (no link: the person's page for it
    is a link of its own)."""
    handed_over_from: str | None = None
    """The title of the form this one took over from."""


def form_page(
    loop: CommitLoop,
    caller: Caller,
    instance_id: str,
    documents: FormDocumentStore | None = None,
) -> FormPage:
    """The page of the caller's instance ``instance_id`` (``UnknownInstance`` when the
    caller's conversation holds none: missing, another principal's or another tenant's).
    With ``documents``, a tenant's published document form is laid out on its 12-column grid
    (one more read, of the version the instance runs on)."""
    stored, _ = locate(loop, caller, "", instance_id)
    form, instance = loop.settle(stored)
    ev = evaluate(form, instance)
    closed = instance.state.status != "open"
    marks = standing(form, instance, ev)
    columns = document_columns(loop, documents, instance)
    steps = tuple(
        StepView(
            id=step.id,
            title=step.title,
            state=_step_state(instance, ev, step.id),
            guidance=step.guidance,
            fields=tuple(
                _field(form, instance, ev, f, closed, marks.get(f), columns.get(f))
                for f in step.fields
            ),
            grid=any(f in columns for f in step.fields),
        )
        for step in form.steps.values()
    )
    hooks: list[HookView] = []
    approvals: list[ApprovalView] = []
    for entry in instance.state.outbox.values():
        hook = form.hook(entry.hook_id)
        title = (hook.title if hook is not None else "") or entry.hook_id
        if entry.kind == "approval":
            approval = hook.approval if hook is not None else None
            approvals.append(
                ApprovalView(
                    key=entry.key,
                    title=(approval.prompt if approval is not None else None) or title,
                    role=approval.role if approval is not None else "",
                    status={"pending": "owed", "done": "decided"}.get(entry.status, "failed"),
                    deadline=_time(entry.deadline),
                    finished_at=_time(entry.finished_at),
                    error=entry.error,
                )
            )
        else:
            hooks.append(HookView(entry.key, title, entry.status, entry.attempts, entry.error))
    moves = {} if closed else undo_redo(form, instance)
    return FormPage(
        instance_id=instance.id,
        form_id=form.id,
        title=form.title,
        version=instance.form_version,
        status=instance.state.status,
        status_text=instance.state.status_text(),
        closed_reason=_reason(instance),
        complete=ev.ready,
        steps=steps,
        hooks=tuple(hooks),
        approvals=tuple(approvals),
        rejections=tuple(r.message for r in ev.active_rejections),
        undo=moves.get("undo"),
        redo=moves.get("redo"),
        updated_at=_time(instance.state.updated_at) or "",
        revision=instance.version,
        memory_fills=tuple(form.fields[f].label for f, mark in marks.items() if mark.use == "fill"),
        is_open=not closed,
        handed_over_to=_title_of(loop, caller, instance.state.handed_to),
        handed_over_from=_title_of(loop, caller, instance.state.handed_from),
    )


def _title_of(loop: CommitLoop, caller: Caller, link: HandoverLink | None) -> str | None:
    """The title of the form at the other end of a handover (its id if it is no longer
    served); None when there is none."""
    if link is None:
        return None
    try:
        return loop.registry.latest(link.form, caller.principal).title
    except ToolError:
        return link.form


def _reason(instance: FormInstance) -> str | None:
    """Why the instance closed, for the person: a handover's own reason (the target is
    named beside it), else the recorded one."""
    link = instance.state.handed_to
    return link.reason if link is not None else instance.state.closed_reason


def document_columns(
    loop: CommitLoop, documents: FormDocumentStore | None, instance: FormInstance
) -> dict[str, tuple[int, int]]:
    """Each laid-out field of a published document form: its first column (1-12) and width,
    from the version ``instance`` runs on; empty for a code form or without ``documents``."""
    catalog = loop.registry
    if documents is None or not isinstance(catalog, Catalog):
        return {}
    if catalog.registry.serves(instance.form_id):
        return {}
    try:
        published = documents.published(
            tenant_key(instance.principal), instance.form_id, instance.form_version
        )
    except NotFound:
        return {}
    return {
        item.id: (item.layout.x + 1, item.layout.w)
        for step in published.document.steps
        for item in step.items
        if item.layout is not None  # a block's id names no field: never looked up
    }


def _step_state(instance: FormInstance, ev: Evaluation, step_id: str) -> str:
    """The step read's state, in the person's words where they differ."""
    state = step_state(instance, ev, step_id)
    return "to go through again" if state == "revisit" else state


def _field(
    form: CompiledForm,
    instance: FormInstance,
    ev: Evaluation,
    field_id: str,
    closed: bool,
    mark: Recollection | None,
    column: tuple[int, int] | None = None,
) -> FieldView:
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
        at=_time(in_force.at) if in_force is not None else None,
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
        at=_time(revision.at) or "",
        note=revision.note,
        in_force=in_force,
    )


def _shown(revision: Revision) -> str:
    value: Any = revision.value
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _source(by: str) -> str:
    return SOURCE_TEXT.get(by, by)


def _time(moment: Any) -> str | None:
    return None if moment is None else f"{moment:%Y-%m-%d %H:%M} UTC"


# ------------------------------------------------------------------ what a post did, in words


@dataclass(frozen=True, slots=True)
class Notice:
    """What the person's last post did, shown at the top of the page (and beside its field
    when it is about one)."""

    ok: bool
    text: str
    field: str | None = None


DONE: dict[str, str] = {
    "answer": "Saved {label}.",
    "retract": "Took back your answer to {label}.",
    "decline": "Noted that you prefer not to answer {label}.",
    "undo": "Undid the last change to {label}.",
    "redo": "Redid the change to {label}.",
    "apply": "Used what memory offered for {label}.",
    "confirm_memory": "Confirmed the answers filled from memory.",
    "clear_memory": "Cleared the answers filled from memory.",
    "submit": "Sent. Your answers are submitted.",
}
"""What each page move did, as the person reads it once it landed."""

TROUBLE: dict[str, str] = {
    "form_closed": "This form is closed: it takes no more changes.",
    "tool_call_conflict": "That was already sent. The page now shows the form as it stands.",
    "tool_call_expired": "That was sent a while ago and is not sent again. The page now shows "
    "the form as it stands.",
    "too_many_conflicts": "The form was busy with other changes and nothing was saved. "
    "Please try again.",
    "bad_request": "That could not be read. Please reload the page and try again.",
    "unknown_instance": "This form could not be found.",
    "internal_error": "Something went wrong on our side and nothing was saved. Please try again.",
    "definition_error": "Something went wrong on our side and nothing was saved.",
}
"""A refusal the person can do nothing about but try again, in their words (the tool's own
message is written for the agent)."""


def notice(page: FormPage, action: str, field_id: str | None, result: Mapping[str, Any]) -> Notice:
    """What ``result`` (of the person's ``action`` on ``field_id``) says to the person, read
    against the page as it stands after it."""
    labels = {f.id: f.label for step in page.steps for f in step.fields}
    label = labels.get(field_id or "", field_id or "")
    rejected = result.get("rejected")
    if isinstance(rejected, list) and rejected:
        first = rejected[0]
        where = str(first.get("field", field_id))
        return Notice(False, f"{labels.get(where, where)}: {first.get('error')}.", where)
    if result.get("unknown"):
        return Notice(False, "That question is not on this form. Please reload the page.")
    error = result.get("error")
    if error is not None:
        message = str(result.get("message", ""))
        if error in ("changed_meanwhile", "memory_unconfirmed", "cannot_revise"):
            text = sentence(message[:1].upper() + message[1:])
            hint = result.get("hint") if error != "cannot_revise" else None
            if isinstance(hint, str) and hint:
                text += " " + sentence(hint[:1].upper() + hint[1:])
            return Notice(False, text, field_id)
        return Notice(False, TROUBLE.get(str(error), TROUBLE["internal_error"]), field_id)
    if result.get("submitted") is False:
        why = str(result.get("not_submitted", ""))
        return Notice(False, sentence(f"Not sent yet: {why}" if why else "Not sent yet"))
    return Notice(True, DONE.get(action, "Saved.").format(label=label), field_id)
