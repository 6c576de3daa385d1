"""The due index: the instances the sweeper may have to act on, by when, across every tenant,
read without scanning the store.

The approval index's pattern (``forms.storage.approvals``): where an instance stands is a pure
function of the instance as stored (``due_place``), written by the same write that stores it,
so keeping it costs a commit no extra read and no extra write, and a sweep reads only the
instances that are due, however many the store holds.

An instance has a place while something of its outbox may need the sweeper, sorted by the
earliest instant that something can be due (``due_at``):

* an executor entry pending and never dispatched: when it was raised (``created_at``; the tool
  call that raised it normally dispatches it at once, the sweeper is for when it did not);
* an executor entry pending and dispatched: when it was dispatched (the sweeper starts it
  again once ``FORMWORK_REDISPATCH_AFTER_SECONDS`` have passed since: a setting, so the rule is
  the sweeper's, ``forms.outbox.due_entries``);
* an approval pending with a deadline: the deadline (its timeout applies then; on Temporal an
  approval run that was lost, or never started, is started then and expires it at once, which
  is what the run would have done: a decision never travels through Temporal).

Anything else (nothing pending, approvals without a deadline, failed entries) has no place.
The partition is one of ``DUE_SHARDS`` fixed shards (a hash of the instance id), since the
sweeper reads every tenant: a sweep is ``DUE_SHARDS`` queries of ``due_sk <= now``, so its cost
follows what is due, never the number of instances. The sort key is the instant, ``#``, a
digest of the id (``tiebreak``).

The promise, on every adapter (``forms.storage.due_contract``): ``due(now)`` yields every
instance that, as stored when its page was read, has a place at or before ``now``, at least
once; it never yields one whose stored place is later or gone (a lagging GSI can name one
that moved on: the adapter re-derives the place from the instance it read). What to do with
each is the sweeper's decision (``formwork.aws.relay``), on the instance as read.

Logic is here; adapters implement one primitive, ``_due_read``.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from datetime import datetime

from forms.instance import FormInstance, InstanceState
from forms.storage.approvals import Place, sortable, tiebreak
from forms.storage.port import OutboxScan

DUE_SHARDS = 8
"""Fixed partitions of the index. A GSI partition takes about 1,000 writes a second; each
hook moves its instance's place about three times (raised, dispatched, done), so eight shards
leave room for thousands of hook state changes a second, and a sweep costs eight Queries when
nothing is due."""
UPTO_END = "#~"
"""Appended to an instant: after every sort key of that instant (``~`` sorts after hex)."""


def due_at(instance: FormInstance) -> datetime | None:
    """The earliest instant something of ``instance``'s outbox may need the sweeper (module
    docstring), or None."""
    moments: list[datetime] = []
    for entry in instance.state.outbox.values():
        if entry.status != "pending":
            continue
        if entry.kind == "executor":
            moments.append(entry.dispatched_at or entry.created_at)
        elif entry.deadline is not None:
            moments.append(entry.deadline)
    return min(moments) if moments else None


def due_place(instance: FormInstance) -> Place | None:
    """Where ``instance`` stands in the due index, or None (not in it)."""
    when = due_at(instance)
    if when is None:
        return None
    return Place(due_partition(shard(instance.id)), f"{sortable(when)}#{tiebreak(instance.id)}")


def shard(instance_id: str) -> int:
    """The shard of an instance: stable, and spread evenly over ``DUE_SHARDS``."""
    return int.from_bytes(hashlib.sha256(instance_id.encode()).digest()[:4]) % DUE_SHARDS


def due_partition(n: int) -> str:
    return f"D#{n}"


class DueIndex(ABC):
    """Reads the due index an adapter keeps beside its instances (module docstring)."""

    def due(
        self, now: datetime, keep_going: Callable[[], bool] | None = None
    ) -> Iterator[FormInstance]:
        """Each instance due at or before ``now``, as stored when its page was read, shard
        by shard, the earliest first within a shard. ``keep_going()`` is asked before each
        page after the first is read; a False stops there, before the read (a Lambda running
        out of time pays for no page it will not sweep)."""
        upto = sortable(now) + UPTO_END
        first = True
        for n in range(DUE_SHARDS):
            pages = self._due_read(due_partition(n), upto)  # each page is read on next()
            while True:
                if not first and keep_going is not None and not keep_going():
                    return
                page = next(pages, None)
                if page is None:
                    break
                first = False
                for instance in page:
                    if instance is None:
                        continue
                    place = due_place(instance)
                    if place is not None and place.sort <= upto:
                        yield instance

    @abstractmethod
    def _due_read(self, partition: str, upto: str) -> Iterator[list[FormInstance | None]]:
        """The places of ``partition`` whose sort key is at most ``upto``, page by page in
        sort-key order, each as its instance stored now (None when it is gone)."""


class DueScan(OutboxScan):
    """The sweeper's ``OutboxScan`` over a due index: the instances due now on ``clock``.

    Narrower than a scan's promise on purpose: an instance whose pending entries are not due
    yet (an approval before its deadline, a hook dispatched a moment ago) is not read; the
    sweeper would do nothing with it.
    """

    def __init__(self, index: DueIndex, clock: Callable[[], datetime]) -> None:
        self.index = index
        self.clock = clock

    def pending(
        self, keep_going: Callable[[], bool] | None = None
    ) -> Iterator[tuple[str, InstanceState]]:
        for instance in self.index.due(self.clock(), keep_going):
            yield instance.id, instance.state
