"""Who may decide an approval: the approver (``Approver``: a verified principal and its roles),
what they decide (``Decision``), the approval an outbox entry waits on (``approval_of``), and
the rule (``may_decide``): a principal of the form owner's tenant, holding the role the
definition names, never the person who filled the form.

The one rule behind every door: a decision (``forms.app.approvals.decide``), the approver's
queue and one approval's view (``forms.app.approval_queue``) all ask it, so an approval someone
may not decide is as missing to them as one that never existed. Importable from
``forms.app.approvals``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from forms.compiled import CompiledForm
from forms.definition import Approval as ApprovalDef
from forms.instance import OutboxEntry
from forms.principals import subject_of, tenant_of

Decision = Literal["approved", "rejected"]


@dataclass(frozen=True, slots=True)
class Approver:
    """Who decides: the verified principal and the roles its token carries."""

    principal: str
    roles: frozenset[str]


def approval_of(form: CompiledForm, entry: OutboxEntry | None) -> ApprovalDef | None:
    """The approval an outbox entry waits on, as ``form`` declares it: None when the entry is
    not an approval's, or its checkpoint declares none (any more)."""
    if entry is None or entry.kind != "approval":
        return None
    hook = form.hook(entry.hook_id)
    return hook.approval if hook is not None else None


def may_decide(approver: Approver, role: str, filled_by: str) -> bool:
    """Only a principal of the form owner's tenant holding the role the definition names, and
    never the person who filled the form (under any principal), may decide its approval."""
    # same tenant and another person: so never the filler's own principal either
    return (
        role in approver.roles
        and tenant_of(approver.principal) == tenant_of(filled_by)
        and subject_of(approver.principal) != subject_of(filled_by)
    )
