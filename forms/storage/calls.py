"""The tool-call records a store keeps beside an aggregate: one per call id, written once, so
a retried call gets its first result back. What the instance and the draft stores share.

A record is kept under a pair of names: ``(principal, conversation id)`` for instances,
``(tenant, form id)`` for drafts. The logic is here, once: recording a call that changed
nothing, and the refusal of an id already taken (``CallRecorded``, carrying the first record
read back). An adapter implements two primitives, ``_add_call`` and ``_read_call``; its
writes that carry a call refuse a taken id with ``_recorded`` too. (The fact store refuses a
replayed write by its key instead: ``forms.storage.facts.recorded``.)
"""

from __future__ import annotations

from forms.errors import CallRecorded, StoreError
from forms.instance import CallRecord, NewCall


class CallRecords:
    """The call-record half of a store's port: the logic, over two primitives."""

    def _record_call(self, owner: str, scope: str, call: NewCall) -> None:
        """Record ``call`` under ``(owner, scope)``; ``CallRecorded`` (with the first record,
        nothing stored) when its id is taken."""
        if not self._add_call(owner, scope, call):
            raise self._recorded(owner, scope, call)

    def _recorded(self, owner: str, scope: str, call: NewCall) -> CallRecorded:
        """The refusal of ``call`` whose id ``(owner, scope)`` recorded, with the first
        record (read back: a conditional write that found the id taken does not return it)."""
        first = self._read_call(owner, scope, call.call_id)
        if first is None:  # deleted in between (a table TTL); the write was still refused
            raise StoreError(f"tool call {call.call_id} was refused as recorded but is gone")
        return CallRecorded(call.call_id, first)

    # ------------------------------------------------------------------ primitives

    def _read_call(self, owner: str, scope: str, call_id: str) -> CallRecord | None:
        """The stored record of ``call_id`` (the caller's own copy), or None."""
        raise NotImplementedError

    def _add_call(self, owner: str, scope: str, call: NewCall) -> bool:
        """Store ``call``'s record unless its id is taken (False, nothing stored)."""
        raise NotImplementedError


CALL_PRIMITIVES = ("_read_call", "_add_call")
"""What an adapter of a port with call records implements for them."""
