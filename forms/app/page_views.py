"""The form page's view model, as data: what ``forms.app.pages.form_page`` returns.

Plain frozen dataclasses of strings and numbers, so the HTML shell renders a page without
knowing the engine: a page (``FormPage``) of steps (``StepView``), each of fields
(``FieldView``: the value in force, its revisions, what memory filled or offers, and how the
person may answer it), with the hooks and approvals the instance owes. Built by
``forms.app.pages`` (the page) and ``forms.app.page_fields`` (a field); all importable from
``forms.app.pages``.
"""

from __future__ import annotations

from dataclasses import dataclass


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
class PageApprovalView:
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
    approvals: tuple[PageApprovalView, ...]
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
