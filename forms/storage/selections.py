"""The editor's selection, per draft and person: the port and the in-memory adapter.

A person looking at a draft on the builder's canvas (``docs/pages.md``, "The builder's
canvas") clicks a field or a step; that is the **selection** the builder tools fall back to
when a call leaves out which field or step it means ("make this one required"). It is kept on
the server, per (tenant, form id, person), beside the draft, so the agent's next tool call
sees it whichever container answers it.

Promises every adapter keeps:

1. **Beside its draft.** ``put`` stores a selection only while the tenant has a draft of that
   form (a conditional write): for any other form, another tenant's included, it raises
   ``NotFound`` and stores nothing. Whether the selected field or step is in the draft is the
   caller's to check (``forms.app.builder.BuilderService.select``).
2. **Per person.** Two people of one tenant on one draft have two selections; ``get`` of a
   person who selected nothing is None.
3. **Tenants are apart.** Every method takes the tenant; the same form id and person in two
   tenants are two selections.
4. **Last write wins.** A selection is a pointer, not history: a later ``put`` replaces it,
   ``None`` clears it.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from datetime import datetime

from forms.documents.edit_arguments import Selection
from forms.errors import NotFound
from forms.storage.drafts import DraftStore


class SelectionStore(ABC):
    """Where each person's selection on each draft is kept."""

    @abstractmethod
    def get(self, tenant: str, form_id: str, person: str) -> Selection | None:
        """The person's selection on the tenant's draft, or None."""

    @abstractmethod
    def put(
        self, tenant: str, form_id: str, person: str, selection: Selection | None, at: datetime
    ) -> None:
        """Store (``None``: clear) the person's selection; ``NotFound`` when the tenant has no
        draft of that form, and nothing is stored."""


class InMemorySelectionStore(SelectionStore):
    """Selections in memory, beside an in-memory ``DraftStore`` (whose drafts ``put`` checks)."""

    def __init__(self, drafts: DraftStore) -> None:
        self._drafts = drafts
        self._lock = threading.Lock()
        self._selected: dict[tuple[str, str, str], Selection] = {}

    def get(self, tenant: str, form_id: str, person: str) -> Selection | None:
        with self._lock:
            found = self._selected.get((tenant, form_id, person))
        return found.model_copy() if found is not None else None

    def put(
        self, tenant: str, form_id: str, person: str, selection: Selection | None, at: datetime
    ) -> None:
        self._drafts.get(tenant, form_id)  # NotFound: no such draft in this tenant
        with self._lock:
            if selection is None:
                self._selected.pop((tenant, form_id, person), None)
            else:
                self._selected[(tenant, form_id, person)] = selection.model_copy()


__all__ = ["InMemorySelectionStore", "NotFound", "SelectionStore"]
