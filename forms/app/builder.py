"""The builder service: a builder agent's tool calls on a tenant's durable drafts, and
publishing what they built (``docs/builder.md``).

The edits themselves are pure (``forms.documents.edits``); this is the shell around them:
the draft as stored (``forms.storage.drafts``), the edit log, idempotency by tool-call id, the
user's Stop, per-tenant limits, and publishing through the ``Catalog``. The tenant is the
verified principal's (``tenant_key``); nothing of one tenant's drafts reaches another.

What one ``call`` does, in order:

1. checks the form id, the tool-call id and the chat id once (``DraftCall``), and fingerprints
   the call as sent (tool, input and selection; ``forms.app.calls.fingerprint``). The id is the
   chat's: it is recorded as ``<chat>/<tool-call id>`` (``scoped_call_id``), so two chats that
   both number their calls ``call_0`` never meet; a call sent without a chat is recorded
   nowhere (never replayed, never a conflict: sent again, it runs again);
2. a tool that is not a builder tool is ``unknown_tool`` (every tool in the hint, from
   ``BUILDER_ARGUMENTS``); ``inspect_form`` is a read: it reads the draft and answers,
   recording nothing;
3. a cancelled call (the person pressed Stop or closed the panel) records ``cancelled`` under
   its id and applies nothing;
4. otherwise it reads the draft (one read) and plans on it (``forms.app.builder_plans``, pure):
   ``undo_edit`` and ``redo_edit`` move over the edit log, every other tool goes through
   ``apply_edit`` with the tenant's ``Limits``; a refusal is recorded under the id
   (``record_call``), an edit or move is committed with the call's record in the same write
   (one write), compare-and-set; a draft the store refuses as too large (``size_limit``) is a
   refusal recorded the same way; A call that names no selection uses the caller's stored one
   (the field or step the person last clicked on the canvas, ``select``), when the service has
   a ``SelectionStore``; the fingerprint stays the call as sent, so a replay is found whatever
   was clicked since;
5. the plan and its write are an attempt of the one commit loop (``forms.app.loop``,
   ``CommitPolicy.retry``, the service's ``policy``): a lost compare-and-set plans again on the
   draft the conflict carries, within the policy's budget, then ``busy``, recording nothing; a
   write refused because the id is recorded answers the first result with ``"replayed": true``
   (``CommitPolicy.replayed``; ``tool_call_conflict`` when the id came with other input),
   applying nothing.

Every failure a caller can cause comes back as data: ``{"ok": false, "error": code,
"message": ..., "hint": ...}``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime

from forms.app.builder_plans import (
    DraftCall,
    Grounds,
    check_form_id,
    new_call,
    parse,
    plan_call,
    read_selection,
)
from forms.app.builder_tools import (
    BUILDER_ARGUMENTS,
    CANCELLED,
    BuilderAnswer,
    DraftView,
    InspectForm,
    LogLine,
    NotPublishable,
    RedoEdit,
    UndoEdit,
    no_draft,
    unknown_tool,
)
from forms.app.calls import CallId, fingerprint, scoped_call_id
from forms.app.catalog import Catalog, tenant_key
from forms.app.loop import CommitPolicy
from forms.documents import EditError, Limits, Selection, inspect, selection_line
from forms.errors import (
    CallRecorded,
    InvalidFormDefinition,
    NotFound,
    SizeLimit,
    ToolError,
    TooManyConflicts,
)
from forms.instance import CallRecord
from forms.storage.documents import Published
from forms.storage.drafts import (
    Draft,
    DraftStore,
    DraftSummary,
)
from forms.storage.selections import SelectionStore
from forms.surface.results import error_result
from forms.surface.tools import check_id

__all__ = [
    "BUILDER_ARGUMENTS",
    "CANCELLED",
    "BuilderService",
    "DraftView",
    "InspectForm",
    "LogLine",
    "NotPublishable",
    "RedoEdit",
    "UndoEdit",
]

_log = logging.getLogger(__name__)


class BuilderService:
    """Builder tool calls on durable drafts, per tenant; publishing a draft.

    Every part is given, none is a default of the service's own: the composition root
    (``formwork.bootstrap``) decides the clock, each tenant's ``limits`` and ``policy``, the
    one ``CommitPolicy`` of every aggregate's loop (``forms.app.loop``: how a lost
    compare-and-set is tried again, and how long a call is replayed); ``selections`` may be
    None (no stored selection). Who may publish is the HTTP layer's to decide (a role from
    the verified claims): this service publishes for any principal of the tenant it is
    handed."""

    def __init__(
        self,
        drafts: DraftStore,
        catalog: Catalog,
        *,
        clock: Callable[[], datetime],
        limits: Callable[[str], Limits],
        policy: CommitPolicy,
        selections: SelectionStore | None,
    ) -> None:
        self.store = drafts
        self.selections = selections
        self.catalog = catalog
        self.clock = clock
        self.limits = limits
        self.policy = policy

    # ------------------------------------------------------------------ tool calls

    def call(
        self,
        principal: str,
        form_id: str,
        tool: str,
        call_id: str,
        payload: object,
        *,
        selection: Selection | Mapping[str, object] | None = None,
        cancelled: bool = False,
        chat: str | None = None,
    ) -> BuilderAnswer:
        """One builder tool call on ``principal``'s tenant's draft of ``form_id``; the result
        is JSON for the model, every failure as data. ``chat`` is the chat that made the call:
        its tool-call ids are recorded as that chat's; without one, nothing is recorded."""
        try:
            sent = _checked(principal, form_id, tool, call_id, payload, selection, chat)
            if cancelled:
                if tool == "inspect_form":
                    return dict(CANCELLED)
                return self._record(sent.tenant, form_id, sent.call, dict(CANCELLED))
            if sent.selection is None:  # the person's stored one, when the call names none
                stored = self._stored(sent.tenant, form_id, principal)
                sent = replace(sent, selection=stored)
            if tool == "inspect_form":
                return self._inspect(sent)
            return self._write(sent)
        except EditError as refused:
            return refused.as_result()
        except ToolError as refused:
            return error_result(refused)
        except Exception:
            _log.exception("builder call %s on %s failed", tool, form_id)
            return {
                "ok": False,
                "error": "internal_error",
                "message": "The call failed on our side.",
                "hint": "Send the same call again (same tool_call_id) once; if it fails again, "
                "tell the person.",
            }

    def _inspect(self, sent: DraftCall) -> BuilderAnswer:
        args = parse(InspectForm, sent.payload)
        draft = self._load(sent.tenant, sent.form_id)
        if draft is None:
            raise no_draft()
        found = inspect(draft.document, args.scope, args.id, read_selection(sent.selection))
        return {"ok": True, **found}

    def _write(self, sent: DraftCall) -> BuilderAnswer:
        """Plan ``sent`` on the draft and commit it with its record, an attempt of the one
        commit loop; a refusal is recorded alone, a recorded id answers its first result."""
        grounds = Grounds(self.limits(sent.tenant), self.catalog)

        def attempt(draft: Draft | None) -> BuilderAnswer:
            try:
                result, commit = plan_call(draft, sent, self.clock(), grounds)
            except EditError as refused:
                return self._record(sent.tenant, sent.form_id, sent.call, refused.as_result())
            self.store.commit(commit)
            return result

        try:
            return self.policy.retry(self._load(sent.tenant, sent.form_id), attempt, busy=_busy)
        except CallRecorded as taken:
            return self._replay(sent.call, taken.record)
        except SizeLimit as refused:  # can never land as sent: the id keeps the refusal
            return self._record(sent.tenant, sent.form_id, sent.call, error_result(refused))

    def _record(
        self, tenant: str, form_id: str, call: CallId, result: BuilderAnswer
    ) -> BuilderAnswer:
        """Bind the id to a result that applied nothing; a retry gets the first result."""
        record = new_call(call, result, self.clock())
        if record is None:
            return result
        try:
            self.store.record_call(tenant, form_id, record)
        except CallRecorded as taken:
            return self._replay(call, taken.record)
        return result

    def _replay(self, call: CallId, record: CallRecord) -> BuilderAnswer:
        return self.policy.replayed(call, record, self.clock())

    def _stored(self, tenant: str, form_id: str, person: str) -> dict[str, str] | None:
        """The person's stored selection on the draft, as a call would send it (None: none)."""
        if self.selections is None:
            return None
        found = self.selections.get(tenant, form_id, person)
        return (found.model_dump(exclude_none=True) or None) if found is not None else None

    def _load(self, tenant: str, form_id: str) -> Draft | None:
        try:
            return self.store.get(tenant, form_id)
        except NotFound:
            return None

    # ------------------------------------------------------------------ the editor and people

    def draft(self, principal: str, form_id: str) -> DraftView:
        """The principal's tenant's draft of ``form_id`` with its edit log; ``NotFound`` when
        there is none (another tenant's draft included)."""
        tenant = tenant_key(principal)
        draft = self.store.get(tenant, form_id)
        log = self.store.history(tenant, form_id)[: draft.count]
        lines = tuple(
            LogLine(i, e.tool, e.call_id, e.by, e.at, e.summary, e.prev, i == draft.cursor)
            for i, e in enumerate(log)
        )
        return DraftView(draft, lines)

    def select(self, principal: str, form_id: str, selection: Selection | None) -> None:
        """Store what ``principal`` selected on their tenant's draft (None clears it): the
        field or step their next builder call without an id means. ``NotFound`` when the
        tenant has no such draft; ``EditError`` (``not_found``) when the draft has no such
        field or step; nothing stored in either case."""
        if self.selections is None:
            raise EditError("invalid", "This deployment keeps no selection.", "Name the id.")
        tenant = tenant_key(principal)
        if selection is not None and (selection.field or selection.step):
            draft = self.store.get(tenant, form_id)
            selection_line(draft.document, selection)  # EditError: not in the draft
        else:
            selection = None
        self.selections.put(tenant, form_id, principal, selection, self.clock())

    def selected(self, principal: str, form_id: str) -> Selection | None:
        """What ``principal`` last selected on their tenant's draft, or None."""
        if self.selections is None:
            return None
        return self.selections.get(tenant_key(principal), form_id, principal)

    def drafts(self, principal: str) -> list[DraftSummary]:
        """The drafts of the principal's tenant, by form id."""
        return self.store.list_drafts(tenant_key(principal))

    def publish(self, principal: str, form_id: str, *, expected: int | None = None) -> Published:
        """Compile the current draft and publish it as the next version of its form in the
        principal's tenant (``Catalog.publish``): its principals' next calls can start it.

        A human action: the HTTP layer checks the role from the verified claims before calling
        this. ``NotFound`` when the tenant has no such draft; ``NotPublishable`` with every
        problem when the draft does not compile (or takes a code form's id);
        ``PublishConflict`` when ``expected`` (the latest version the publisher saw) is not
        the latest."""
        draft = self.store.get(tenant_key(principal), form_id)
        try:
            return self.catalog.publish(
                principal, draft.document, at=self.clock(), expected=expected
            )
        except InvalidFormDefinition as invalid:
            raise NotPublishable(form_id, invalid.problems) from None


def _busy() -> TooManyConflicts:
    return TooManyConflicts(
        "The draft was busy with other edits; nothing was applied.", "Send the same call again."
    )


def _checked(
    principal: str,
    form_id: str,
    tool: str,
    call_id: str,
    payload: object,
    selection: Selection | Mapping[str, object] | None,
    chat: str | None,
) -> DraftCall:
    """The call as checked once: the form id, the tool, the tool-call id and the chat id,
    and its fingerprint as sent (tool, input and selection), recorded as the chat's."""
    check_form_id(form_id)
    if tool not in BUILDER_ARGUMENTS:
        raise unknown_tool(tool)
    check_id(call_id, "tool_call_id")
    if chat is not None:
        check_id(chat, "chat_id")
    sent = (
        selection.model_dump(exclude_none=True) if isinstance(selection, Selection) else selection
    )
    digest = fingerprint(tool, {"input": payload, "selection": sent})
    call = CallId(tool, scoped_call_id(chat, call_id), digest, recorded=chat is not None)
    return DraftCall(principal, tenant_key(principal), form_id, call, payload, sent or None)
