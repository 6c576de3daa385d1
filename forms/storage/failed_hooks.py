"""The failed-hook index: a tenant's instances holding a hook that failed for good (an executor
entry of the outbox ``failed``: out of attempts, a final error, or stopped at the knock-on
limit), the latest failure first, read a page at a time, never by scanning the store.

It is the approval index's pattern (``forms.storage.approvals``) over another question: where an
instance stands is a pure function of the instance as stored (``failed_place``), written by
the same write that stores it, so keeping it costs a commit no extra read and no extra write.

* **failed** (partition ``F#<tenant>``): an executor entry of the outbox is ``failed``. Sorted
  by the latest ``finished_at`` of those entries, then a digest of the instance id (a cursor
  names no instance, as in the approval index).
* anything else: not in the index. A retried entry is ``pending`` again, so the instance
  leaves the index with the commit that reopens its last failed entry.

The promises, on every adapter (``forms.storage.failed_hooks_contract``):

1. An instance is listed only when, as stored when the page was read, it holds a failed hook
   (the adapter reads the instances themselves; a lagging index can leave one out for a
   moment, never show one that was retried).
2. Another tenant's instances are never listed.
3. Pages are newest first; ``next`` is the sort key of the last place the page read (pass it
   as ``after``), None when nothing follows.

Logic is here; adapters implement one primitive, ``_failed_read``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from forms.instance import FormInstance
from forms.principals import tenant_of
from forms.storage.approvals import (
    ApprovalPage,
    Place,
    check_cursor,
    in_partition,
    index_page,
    sortable,
    tenant_part,
    tiebreak,
)

FailedPage = ApprovalPage
"""A page of the index: instances as stored now, newest failure first, and the next cursor."""


def failed_place(instance: FormInstance) -> Place | None:
    """Where ``instance`` stands in the failed-hook index (module docstring), or None."""
    failed = [
        entry.finished_at or entry.created_at
        for entry in instance.state.outbox.values()
        if entry.kind == "executor" and entry.status == "failed"
    ]
    if not failed:
        return None
    tenant = tenant_part(tenant_of(instance.principal))
    return Place(failed_partition(tenant), f"{sortable(max(failed))}#{tiebreak(instance.id)}")


def failed_partition(tenant: str) -> str:
    """The index partition for a tenant key part (``tenant_part``)."""
    return f"F#{tenant}"


class FailedHookIndex(ABC):
    """Reads the failed-hook index an adapter keeps beside its instances."""

    def failed(
        self, tenant: str | None, *, limit: int = 20, after: str | None = None
    ) -> FailedPage:
        """The tenant's instances holding a failed hook, the latest failure first."""
        where = failed_partition(tenant_part(tenant))
        return index_page(
            limit,
            after,
            check_cursor,
            lambda n: self._failed_read(where, after, n),
            lambda instance: in_partition(failed_place(instance), where),
        )

    @abstractmethod
    def _failed_read(
        self, partition: str, after: str | None, limit: int
    ) -> list[tuple[str, FormInstance | None]]:
        """Up to ``limit`` places of ``partition`` before ``after`` (newest first), each with a
        snapshot of its instance as stored now (None when it is gone)."""
