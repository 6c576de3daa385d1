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

This module builds the page; the view model's types are ``forms.app.page_views``, one field
as a person reads it ``forms.app.page_fields``, and what the person's last post did, in their
words, ``forms.app.page_notices``. Every name is importable from here (``__all__``).
"""

from __future__ import annotations

from collections.abc import Mapping

from forms.app.catalog import Catalog, tenant_key
from forms.app.conversation import Caller, locate
from forms.app.loop import CommitLoop
from forms.app.page_fields import (
    FILLED_FROM_ACCOUNT,
    FILLED_FROM_MEMORY,
    HELD_FIELD,
    HELD_STEP,
    OFFERED_FROM_ACCOUNT,
    OFFERED_FROM_MEMORY,
    OFFERED_ON,
    SOURCE_TEXT,
    STATUS_TEXT,
    UNWRITABLE,
    field_view,
    sentence,
    shown_time,
)
from forms.app.page_notices import DONE, TROUBLE, Notice, notice
from forms.app.page_views import (
    FieldView,
    FormPage,
    HookView,
    InputView,
    MemoryView,
    PageApprovalView,
    RevisionView,
    StepView,
)
from forms.compiled import CompiledForm
from forms.engine import evaluate
from forms.errors import NotFound, ToolError
from forms.evaluation import Evaluation
from forms.instance import FormInstance, HandoverLink, Recollection
from forms.storage.documents import FormDocumentStore
from forms.surface.recalled import standing
from forms.surface.view import step_state, undo_redo

__all__ = [
    "DONE",
    "FILLED_FROM_ACCOUNT",
    "FILLED_FROM_MEMORY",
    "HELD_FIELD",
    "HELD_STEP",
    "OFFERED_FROM_ACCOUNT",
    "OFFERED_FROM_MEMORY",
    "OFFERED_ON",
    "SOURCE_TEXT",
    "STATUS_TEXT",
    "TROUBLE",
    "UNWRITABLE",
    "FieldView",
    "FormPage",
    "HookView",
    "InputView",
    "MemoryView",
    "Notice",
    "PageApprovalView",
    "RevisionView",
    "StepView",
    "document_columns",
    "form_page",
    "notice",
    "sentence",
]


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
    steps = _steps(form, instance, ev, closed, marks, columns)
    hooks, approvals = _outbox(form, instance)
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
        hooks=hooks,
        approvals=approvals,
        rejections=tuple(r.message for r in ev.active_rejections),
        undo=moves.get("undo"),
        redo=moves.get("redo"),
        updated_at=shown_time(instance.state.updated_at) or "",
        revision=instance.version,
        memory_fills=tuple(form.fields[f].label for f, mark in marks.items() if mark.use == "fill"),
        is_open=not closed,
        handed_over_to=_title_of(loop, caller, instance.state.handed_to),
        handed_over_from=_title_of(loop, caller, instance.state.handed_from),
    )


def _steps(
    form: CompiledForm,
    instance: FormInstance,
    ev: Evaluation,
    closed: bool,
    marks: Mapping[str, Recollection],
    columns: Mapping[str, tuple[int, int]],
) -> tuple[StepView, ...]:
    """Every step of the form, in order, with its fields (``field_view``), each placed on the
    document's grid when ``columns`` places it."""
    return tuple(
        StepView(
            id=step.id,
            title=step.title,
            state=_step_state(instance, ev, step.id),
            guidance=step.guidance,
            fields=tuple(
                field_view(form, instance, ev, f, closed, marks.get(f), columns.get(f))
                for f in step.fields
            ),
            grid=any(f in columns for f in step.fields),
        )
        for step in form.steps.values()
    )


def _outbox(
    form: CompiledForm, instance: FormInstance
) -> tuple[tuple[HookView, ...], tuple[PageApprovalView, ...]]:
    """What the instance owes, in its outbox's order: the hooks, and the approvals apart."""
    hooks: list[HookView] = []
    approvals: list[PageApprovalView] = []
    for entry in instance.state.outbox.values():
        hook = form.hook(entry.hook_id)
        title = (hook.title if hook is not None else "") or entry.hook_id
        if entry.kind == "approval":
            approval = hook.approval if hook is not None else None
            approvals.append(
                PageApprovalView(
                    key=entry.key,
                    title=(approval.prompt if approval is not None else None) or title,
                    role=approval.role if approval is not None else "",
                    status={"pending": "owed", "done": "decided"}.get(entry.status, "failed"),
                    deadline=shown_time(entry.deadline),
                    finished_at=shown_time(entry.finished_at),
                    error=entry.error,
                )
            )
        else:
            hooks.append(HookView(entry.key, title, entry.status, entry.attempts, entry.error))
    return tuple(hooks), tuple(approvals)


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
