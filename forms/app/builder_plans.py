"""What one builder tool call plans on a draft: the edit or the move and the commit that
applies it with the call's record, pure (no store, no clock: the time is given).

``BuilderService`` (``forms.app.builder``) reads the draft, hands it here inside an attempt of
the one commit loop, and writes what comes back compare-and-set. A ``DraftCall`` is the call as
checked once: the principal, the tenant, the draft's form id, its ``CallId`` (fingerprint and
chat-scoped id), the arguments as sent and the selection it means. ``plan_call`` answers the
result for the model and the ``DraftCommit``, or raises ``EditError`` when the edit is refused
(the service records the refusal under the id).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal, TypeVar

from pydantic import BaseModel

from forms.app.builder_tools import BuilderAnswer, moved
from forms.app.calls import CallId
from forms.documents import BUILDER_TOOLS_BY_NAME, EditError, Limits, Selection, apply_edit
from forms.documents.edit_parse import parse_arguments
from forms.errors import BadRequest
from forms.instance import CallRecord, NewCall
from forms.storage.drafts import Draft, DraftCommit, EditEntry

if TYPE_CHECKING:
    from forms.app.catalog import Catalog

_M = TypeVar("_M", bound=BaseModel)
_FORM_ID = re.compile(r"^[a-z][a-z0-9-]{0,62}$")


@dataclass(frozen=True, slots=True)
class DraftCall:
    """One builder call on a tenant's draft, checked: who made it, the tenant's key, the
    draft's form id, the call's id and fingerprint, its arguments as sent, and the selection
    it means (as sent, else the person's stored one; None: none)."""

    principal: str
    tenant: str
    form_id: str
    call: CallId
    payload: object
    selection: object


@dataclass(frozen=True, slots=True)
class Grounds:
    """What an edit is checked against: the tenant's limits, and the catalog it is published
    into (its vocabulary and its executors' names, what publishing accepts)."""

    limits: Limits
    catalog: Catalog


def plan_call(
    draft: Draft | None, sent: DraftCall, now: datetime, grounds: Grounds
) -> tuple[BuilderAnswer, DraftCommit]:
    """The result of ``sent`` on ``draft`` (None: there is none yet) and the commit that
    applies it with its record; ``EditError`` when it is refused."""
    call = sent.call
    move: Literal["undo", "redo"] | None = None
    entry: EditEntry | None = None
    spec = BUILDER_TOOLS_BY_NAME[call.tool]
    if spec.does in ("undo", "redo"):
        parse(spec.arguments, sent.payload)
        move = "undo" if spec.does == "undo" else "redo"
        result = moved(draft, move)
    else:
        entry, result = _edited(draft, sent, now, grounds)
    version = draft.version if draft is not None else 0
    record = new_call(call, result, now)
    commit = DraftCommit(
        sent.tenant, sent.form_id, version, sent.principal, now, edit=entry, move=move, call=record
    )
    return result, commit


def _edited(
    draft: Draft | None, sent: DraftCall, now: datetime, grounds: Grounds
) -> tuple[EditEntry, BuilderAnswer]:
    """The edit ``sent`` makes to ``draft`` as the log's next entry, and its result."""
    call = sent.call
    given = arguments(sent.payload)
    if call.tool == "create_form" and "id" not in given:
        given = {**given, "id": sent.form_id}
    edited = apply_edit(
        draft.document if draft is not None else None,
        call.tool,
        given,
        selection=read_selection(sent.selection),
        limits=grounds.limits,
        vocabulary=grounds.catalog.vocabulary,  # the one publishing compiles with
        executors=grounds.catalog.executors,  # the names publishing accepts
    )
    if edited.document.id != sent.form_id:
        raise EditError(
            "invalid",
            f"This draft is the form {sent.form_id!r}; its id cannot change.",
            f"Leave out id, or send {sent.form_id!r}.",
        )
    entry = EditEntry(
        tool=call.tool,
        call_id=call.id.rpartition("/")[2],  # the id as the model sent it, not its chat's
        by=sent.principal,
        at=now,
        summary=edited.summary,
        document=edited.document,
        prev=draft.cursor if draft is not None else -1,
    )
    return entry, edited.as_result()


def new_call(call: CallId, result: BuilderAnswer, now: datetime) -> NewCall | None:
    """The record of ``call`` answered ``result`` (None: a call recorded nowhere)."""
    if not call.recorded:
        return None
    record = CallRecord(tool=call.tool, fingerprint=call.fingerprint, result=result, at=now)
    return NewCall(call_id=call.id, record=record)


def parse(model: type[_M], payload: object) -> _M:
    """``payload`` read as ``model``'s arguments (``EditError`` when they do not read)."""
    parsed: _M = parse_arguments(model, arguments(payload))[0]
    return parsed


def arguments(payload: object) -> Mapping[str, object]:
    """The call's arguments as an object (none: empty); ``EditError`` for anything else."""
    if payload is None:
        return {}
    if not isinstance(payload, Mapping):
        raise EditError(
            "invalid", "The arguments must be a JSON object.", "Send the tool's arguments as keys."
        )
    return payload


def read_selection(sent: object) -> Selection | None:
    """The selection as sent, read (None: none)."""
    if sent is None:
        return None
    return parse(Selection, sent)


def check_form_id(form_id: str) -> None:
    """``BadRequest`` unless ``form_id`` is named like a form id."""
    if not isinstance(form_id, str) or not _FORM_ID.fullmatch(form_id):
        raise BadRequest(
            "the form id must be a lowercase letter, then up to 62 lowercase letters, digits "
            "or hyphens",
            "name the draft like a form id: job-application",
        )


__all__ = [
    "DraftCall",
    "Grounds",
    "arguments",
    "check_form_id",
    "new_call",
    "parse",
    "plan_call",
    "read_selection",
]
