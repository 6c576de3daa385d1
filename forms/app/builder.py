"""The builder service: a builder agent's tool calls on a tenant's durable drafts, and
publishing what they built (``docs/builder.md``).

The edits themselves are pure (``forms.documents.edits``); this is the shell around them:
the draft as stored (``forms.storage.drafts``), the edit log, idempotency by tool-call id, the
user's Stop, per-tenant limits, and publishing through the ``Catalog``. The tenant is the
verified principal's (``tenant_key``); nothing of one tenant's drafts reaches another.

What one ``call`` does, in order:

1. checks the form id, the tool-call id and the chat id, and fingerprints the call as sent
   (tool, input and selection; ``forms.app.calls.fingerprint``). The id is the chat's: it is
   recorded as ``<chat>/<tool-call id>`` (``scoped_call_id``), so two chats that both number
   their calls ``call_0`` never meet; a call sent without a chat is recorded nowhere (never
   replayed, never a conflict: sent again, it runs again);
2. a tool that is not a builder tool is ``unknown_tool`` (every tool in the hint, from
   ``BUILDER_ARGUMENTS``); ``inspect_form`` is a read: it reads the draft and answers,
   recording nothing;
3. a cancelled call (the person pressed Stop or closed the panel) records ``cancelled`` under
   its id and applies nothing;
4. otherwise it reads the draft (one read) and plans on it: ``undo_edit`` and ``redo_edit``
   move over the edit log, every other tool goes through ``apply_edit`` with the tenant's
   ``Limits``; a refusal is recorded under the id (``record_call``), an edit or move is
   committed with the call's record in the same write (one write), compare-and-set; a draft
   the store refuses as too large (``size_limit``) is a refusal recorded the same way;
   A call that names no selection uses the caller's stored one (the field or step the person
   last clicked on the canvas, ``select``), when the service has a ``SelectionStore``; the
   fingerprint stays the call as sent, so a replay is found whatever was clicked since;
5. the plan and its write are an attempt of the one commit loop (``forms.app.loop``,
   ``CommitPolicy.retry``, the service's ``policy``): a lost compare-and-set plans again on
   the draft the conflict carries, within the policy's budget, then ``busy``, recording
   nothing; a write refused because the id is recorded answers the first result with
   ``"replayed": true`` (``CommitPolicy.replayed``; ``tool_call_conflict`` when the id came
   with other input), applying nothing.

Every failure a caller can cause comes back as data: ``{"ok": false, "error": code,
"message": ..., "hint": ...}``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Literal, TypeVar

from pydantic import BaseModel, JsonValue

from forms.app.builder_tools import (
    BUILDER_ARGUMENTS,
    CANCELLED,
    DraftView,
    InspectForm,
    LogLine,
    NotPublishable,
    RedoEdit,
    UndoEdit,
    moved,
    no_draft,
    unknown_tool,
)
from forms.app.calls import CallId, fingerprint, scoped_call_id
from forms.app.catalog import Catalog, tenant_key
from forms.app.loop import CommitPolicy
from forms.documents import EditError, Limits, Selection, apply_edit, inspect, selection_line
from forms.documents.edit_parse import parse_arguments
from forms.errors import (
    BadRequest,
    CallRecorded,
    InvalidFormDefinition,
    NotFound,
    SizeLimit,
    ToolError,
    TooManyConflicts,
)
from forms.instance import CallRecord, NewCall
from forms.storage.documents import Published
from forms.storage.drafts import (
    Draft,
    DraftCommit,
    DraftStore,
    DraftSummary,
    EditEntry,
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
_M = TypeVar("_M", bound=BaseModel)

Result = dict[str, JsonValue]
_FORM_ID = re.compile(r"^[a-z][a-z0-9-]{0,62}$")


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
    ) -> Result:
        """One builder tool call on ``principal``'s tenant's draft of ``form_id``; the result
        is JSON for the model, every failure as data. ``chat`` is the chat that made the call:
        its tool-call ids are recorded as that chat's; without one, nothing is recorded."""
        try:
            _check_form_id(form_id)
            if tool not in BUILDER_ARGUMENTS:
                raise unknown_tool(tool)
            check_id(call_id, "tool_call_id")
            if chat is not None:
                check_id(chat, "chat_id")
            sent = (
                selection.model_dump(exclude_none=True)
                if isinstance(selection, Selection)
                else selection
            )
            digest = fingerprint(tool, {"input": payload, "selection": sent})
            call = CallId(tool, scoped_call_id(chat, call_id), digest, recorded=chat is not None)
            tenant = tenant_key(principal)
            if cancelled:
                if tool == "inspect_form":
                    return dict(CANCELLED)
                return self._record(tenant, form_id, call, dict(CANCELLED))
            chosen = sent if sent else self._stored(tenant, form_id, principal)
            if tool == "inspect_form":
                return self._inspect(tenant, form_id, payload, chosen)
            return self._write(principal, tenant, form_id, call, payload, chosen)
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

    def _inspect(self, tenant: str, form_id: str, payload: object, sent: object) -> Result:
        args = _parse(InspectForm, payload)
        draft = self._load(tenant, form_id)
        if draft is None:
            raise no_draft()
        return {"ok": True, **inspect(draft.document, args.scope, args.id, _selection(sent))}

    def _write(
        self,
        principal: str,
        tenant: str,
        form_id: str,
        call: CallId,
        payload: object,
        sent: object,
    ) -> Result:

        def attempt(draft: Draft | None) -> Result:
            try:
                result, commit = self._plan(
                    principal, tenant, form_id, draft, call, payload, sent, self.clock()
                )
            except EditError as refused:
                return self._record(tenant, form_id, call, refused.as_result())
            self.store.commit(commit)
            return result

        try:
            return self.policy.retry(self._load(tenant, form_id), attempt, busy=_busy)
        except CallRecorded as taken:
            return self._replay(call, taken.record)
        except SizeLimit as refused:  # can never land as sent: the id keeps the refusal
            return self._record(tenant, form_id, call, error_result(refused))

    def _plan(
        self,
        principal: str,
        tenant: str,
        form_id: str,
        draft: Draft | None,
        call: CallId,
        payload: object,
        sent: object,
        now: datetime,
    ) -> tuple[Result, DraftCommit]:
        """The result of ``call`` on ``draft`` and the commit that applies it (with its
        record); ``EditError`` when it is refused."""
        version = draft.version if draft is not None else 0
        if call.tool in ("undo_edit", "redo_edit"):
            _parse(BUILDER_ARGUMENTS[call.tool], payload)
            result = moved(draft, "undo" if call.tool == "undo_edit" else "redo")
            record = _new_call(call, result, now)
            way: Literal["undo", "redo"] = "undo" if call.tool == "undo_edit" else "redo"
            return result, DraftCommit(
                tenant, form_id, version, principal, now, move=way, call=record
            )
        arguments = _arguments(payload)
        if call.tool == "create_form" and "id" not in arguments:
            arguments = {**arguments, "id": form_id}
        edited = apply_edit(
            draft.document if draft is not None else None,
            call.tool,
            arguments,
            selection=_selection(sent),
            limits=self.limits(tenant),
            vocabulary=self.catalog.vocabulary,  # the one publishing compiles with
            executors=self.catalog.executors,  # the names publishing accepts
        )
        if edited.document.id != form_id:
            raise EditError(
                "invalid",
                f"This draft is the form {form_id!r}; its id cannot change.",
                f"Leave out id, or send {form_id!r}.",
            )
        result = edited.as_result()
        entry = EditEntry(
            tool=call.tool,
            call_id=call.id.rpartition("/")[2],  # the id as the model sent it, not its chat's
            by=principal,
            at=now,
            summary=edited.summary,
            document=edited.document,
            prev=draft.cursor if draft is not None else -1,
        )
        record = _new_call(call, result, now)
        return result, DraftCommit(
            tenant, form_id, version, principal, now, edit=entry, call=record
        )

    def _record(self, tenant: str, form_id: str, call: CallId, result: Result) -> Result:
        """Bind the id to a result that applied nothing; a retry gets the first result."""
        record = _new_call(call, result, self.clock())
        if record is None:
            return result
        try:
            self.store.record_call(tenant, form_id, record)
        except CallRecorded as taken:
            return self._replay(call, taken.record)
        return result

    def _replay(self, call: CallId, record: CallRecord) -> Result:
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


def _new_call(call: CallId, result: Result, now: datetime) -> NewCall | None:
    if not call.recorded:
        return None
    record = CallRecord(tool=call.tool, fingerprint=call.fingerprint, result=result, at=now)
    return NewCall(call_id=call.id, record=record)


def _parse(model: type[_M], payload: object) -> _M:
    parsed: _M = parse_arguments(model, _arguments(payload))[0]
    return parsed


def _arguments(payload: object) -> Mapping[str, object]:
    if payload is None:
        return {}
    if not isinstance(payload, Mapping):
        raise EditError(
            "invalid", "The arguments must be a JSON object.", "Send the tool's arguments as keys."
        )
    return payload


def _selection(sent: object) -> Selection | None:
    if sent is None:
        return None
    return _parse(Selection, sent)


def _check_form_id(form_id: str) -> None:
    if not isinstance(form_id, str) or not _FORM_ID.fullmatch(form_id):
        raise BadRequest(
            "the form id must be a lowercase letter, then up to 62 lowercase letters, digits "
            "or hyphens",
            "name the draft like a form id: job-application",
        )
