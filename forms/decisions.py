"""Approval decisions that no longer stand, withdrawn in the commit that ends them.

A decision is a revision of the approval's field whose ``tool_call_id`` is ``approval:<approval
id>`` (:data:`APPROVAL_CALL_PREFIX`), and it stands only for the crossing it was asked on. When a
commit changes an answer the approval is bound to, or the checkpoint stops holding,
``stale_decisions`` retracts the decision in force; ``withdraw_stale_approvals`` closes the
pending approvals no decision is owed for any more (also when the form closes:
:data:`WITHDRAWN_ON_CLOSE`), so no decision and no timeout outcome can be written for them
afterwards.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from forms.compiled import CompiledForm
from forms.edges import NEVER, bound_answers
from forms.evaluation import Evaluation
from forms.instance import FieldChange, FormInstance, HookState, OutboxEntry, Revision
from forms.keys import idempotency_key, occurrence_of


def withdraw_stale_approvals(
    outbox: Mapping[str, OutboxEntry],
    hooks: Mapping[str, HookState],
    now: datetime,
    closed: bool,
) -> Mapping[str, OutboxEntry]:
    """Close the pending approvals no decision is owed for any more: the crossing ended (a
    correction took the form back under the threshold, say), a new crossing superseded it
    (an answer it was asked on changed: the new one has its own key), or the form closed.
    No decision, and no timeout outcome, may be written for them afterwards. ``outbox``
    itself when none is (an instance's containers are not changed in place: it is shared)."""
    result: dict[str, OutboxEntry] | None = None
    for key, entry in outbox.items():
        if entry.kind != "approval" or entry.status != "pending":
            continue
        state = hooks.get(entry.hook_id, NEVER)
        if closed:
            why = WITHDRAWN_ON_CLOSE.removeprefix("withdrawn: ")
        elif not state.holds:
            why = "the checkpoint no longer holds"
        elif state.count != entry.occurrence:
            why = "an answer it was asked on changed; a new approval replaces it"
        else:
            continue
        result = dict(outbox) if result is None else result
        result[key] = entry.model_copy(
            update={"status": "done", "finished_at": now, "error": f"withdrawn: {why}"}
        )
    return outbox if result is None else result


WITHDRAWN_ON_CLOSE = "withdrawn: the form closed"
"""The error of an approval withdrawn because its form closed (completed, terminated,
abandoned) before anyone decided it."""


def decision_occurrence(revision: Revision | None) -> int | None:
    """The occurrence of the approval a decision revision answers (None if it is not one)."""
    if revision is None or revision.kind != "value" or revision.tool_call_id is None:
        return None
    if not revision.tool_call_id.startswith(APPROVAL_CALL_PREFIX):
        return None
    return occurrence_of(revision.tool_call_id)


APPROVAL_CALL_PREFIX = "approval:"
"""Decision revisions carry ``tool_call_id = "approval:<approval id>"``."""


def stale_decisions(
    form: CompiledForm,
    instance: FormInstance,
    evaluation: Evaluation,
    outbox: Mapping[str, OutboxEntry],
    now: datetime,
) -> dict[str, FieldChange]:
    """Retractions of every decision in force that no longer answers its checkpoint's current
    crossing: the answers it was given on changed (a new approval is owed), or the checkpoint
    stopped holding. A decision only ever stands for the values it was made on."""
    changes: dict[str, FieldChange] = {}
    for hook in form.approval_hooks:
        assert hook.approval is not None
        history = instance.field(hook.approval.field)
        occurrence = decision_occurrence(history.in_force())
        if occurrence is None:
            continue
        state = evaluation.hooks.get(hook.id, NEVER)
        if state.holds and state.count == occurrence:
            continue
        if state.holds:
            asked = outbox.get(idempotency_key(instance.id, hook.id, occurrence))
            now_bound = bound_answers(instance, hook.binds, evaluation.live)
            changed = [
                form.fields[f].label
                for f in hook.binds
                if asked is None or (asked.subject or {}).get(f) != now_bound[f]
            ]
            why = f"{', '.join(changed) or 'an answer'} changed after the decision"
        else:
            why = "the checkpoint no longer holds"
        retraction = Revision(
            kind="retraction",
            by="operator",
            actor="formwork",
            at=now,
            prev=history.cursor,
            note=f"withdrawn: {why}",
        )
        changes[hook.approval.field] = FieldChange(append=(retraction,), cursor=history.count)
    return changes
