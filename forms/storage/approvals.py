"""The approval index: a tenant's instances that owe an approval, the earliest deadline first,
and those whose approvals were settled, the latest first, read a page at a time, never by
scanning the store.

Where an instance stands in it is a pure function of the instance as stored
(``approval_place``): the adapters write that place in the same write that stores the
instance (``FormStore.create`` and ``commit``), so keeping the index costs a commit no extra
read and no extra write, and a page costs the same however many instances the store holds.

* **owed** (partition ``A#<tenant>#owed``): the form is open and an approval entry of its
  outbox is pending. Sorted by the earliest deadline of its pending approvals (none: last),
  then a digest of the instance id.
* **settled** (partition ``A#<tenant>#settled``): nothing is owed, and at least one approval
  was decided or expired (an entry ``done`` without an error; a withdrawn one does not
  count). Sorted by when the last one was settled, read newest first.

A sort key ends in a digest of the instance id (``tiebreak``), not the id: a page's cursor is
the sort key of the last place it read, which can be an instance the reader may not see (an
approval of another role), and a cursor must name no instance.
* anything else: not in the index.

``<tenant>`` is the principal's tenant, escaped (``T`` and the tenant), or ``-`` for a
tenant-less principal: ``owed(tenant)`` lists exactly the instances whose filler has that
tenant, which is the first thing ``forms.app.approvals.may_decide`` asks of an approver. An
instance is in one partition at most; which approvals of it a given person may decide, the
app layer works out (roles and the filler are in the definition and the instance).

The promises, on every adapter (``forms.storage.approvals_contract``):

1. An instance is listed under ``owed`` only when, as stored when the page was read, it owes
   an approval (and under ``settled`` only when it owes none and settled one): the adapter
   reads the instances themselves, so a lagging index (DynamoDB's global secondary indexes
   are eventually consistent) can leave one out for a moment, never show one that moved on.
2. Another tenant's instances are never listed.
3. Pages are in index order; ``next`` is the sort key of the last place the page read (a
   cursor: pass it as ``after`` for the page after), None when nothing follows.

Logic is here; adapters implement one primitive, ``_index_read``.
"""

from __future__ import annotations

import hashlib
import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from forms.instance import FormInstance
from forms.principals import tenant_of
from forms.storage.dynamodb_requests import escape

Listing = Literal["owed", "settled"]

MAX_PAGE = 50
"""The most places one page reads (DynamoDB: one Query, then one BatchGetItem of at most
this many home items, each up to 400 KB, which stays near BatchGetItem's 16 MB)."""
NO_DEADLINE = "~"
"""The sort key's time part for an approval without a deadline: after every instant."""

_CURSOR = re.compile(r"(?:~|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z)#[0-9a-f]{32}")


@dataclass(frozen=True, slots=True)
class Place:
    """Where an instance stands in the index: the partition and the sort key within it."""

    partition: str
    sort: str


@dataclass(frozen=True, slots=True)
class ApprovalPage:
    """One page of a listing: the instances as stored now, in index order, and the cursor
    of the page after (None when nothing follows). ``cursors[i]`` reads on right after
    ``instances[i]``, for a caller that stops part way through the page."""

    instances: tuple[FormInstance, ...]
    next: str | None
    cursors: tuple[str, ...] = ()


def approval_place(instance: FormInstance) -> Place | None:
    """Where ``instance`` stands in the index (see the module docstring), or None."""
    tenant = tenant_part(tenant_of(instance.principal))
    approvals = [e for e in instance.state.outbox.values() if e.kind == "approval"]
    pending = [e for e in approvals if e.status == "pending"]
    if pending and instance.state.status == "open":
        deadlines = [e.deadline for e in pending if e.deadline is not None]
        when = sortable(min(deadlines)) if deadlines else NO_DEADLINE
        return Place(partition(tenant, "owed"), f"{when}#{tiebreak(instance.id)}")
    settled = [
        e.finished_at
        for e in approvals
        if e.status == "done" and e.error is None and e.finished_at is not None
    ]
    if settled:
        return Place(
            partition(tenant, "settled"), f"{sortable(max(settled))}#{tiebreak(instance.id)}"
        )
    return None


def tiebreak(instance_id: str) -> str:
    """What orders places of one instant and keeps sort keys unique, naming no instance: the
    first 128 bits of the id's SHA-256, in hex (ids are random, so it cannot be turned back)."""
    return hashlib.sha256(instance_id.encode()).hexdigest()[:32]


def tenant_part(tenant: str | None) -> str:
    """A tenant as a key part: ``-`` for none, else ``T`` and the tenant with ``%`` and ``#``
    escaped (so two tenants never share a partition, and none reads as tenant-less)."""
    if tenant is None:
        return "-"
    return "T" + escape(tenant)


def partition(tenant: str, listing: Listing) -> str:
    """The index partition of ``listing`` for a tenant key part (``tenant_part``)."""
    return f"A#{tenant}#{listing}"


def sortable(moment: datetime) -> str:
    """A fixed-width UTC timestamp: sorts as text exactly as the instants sort (naive = UTC)."""
    utc = moment.astimezone(UTC) if moment.tzinfo is not None else moment
    return (
        f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T{utc.hour:02d}:{utc.minute:02d}:"
        f"{utc.second:02d}.{utc.microsecond:06d}Z"
    )


def check_cursor(cursor: str) -> str:
    """``cursor`` if it is a sort key this index writes; ``ValueError`` otherwise."""
    if not _CURSOR.fullmatch(cursor):
        raise ValueError("not a cursor of this listing: pass back the 'next' of a page")
    return cursor


class ApprovalIndex(ABC):
    """Reads the approval index an adapter keeps beside its instances (module docstring)."""

    def owed(
        self, tenant: str | None, *, limit: int = 20, after: str | None = None
    ) -> ApprovalPage:
        """The tenant's instances that owe an approval, the earliest deadline first."""
        return self._page(tenant, "owed", limit, after)

    def settled(
        self, tenant: str | None, *, limit: int = 20, after: str | None = None
    ) -> ApprovalPage:
        """The tenant's instances that owe nothing and settled an approval, latest first."""
        return self._page(tenant, "settled", limit, after)

    def _page(
        self, tenant: str | None, listing: Listing, limit: int, after: str | None
    ) -> ApprovalPage:
        where = partition(tenant_part(tenant), listing)
        return index_page(
            limit,
            after,
            check_cursor,
            lambda n: self._index_read(where, after, n, newest_first=listing == "settled"),
            lambda instance: in_partition(approval_place(instance), where),
        )

    @abstractmethod
    def _index_read(
        self, partition: str, after: str | None, limit: int, *, newest_first: bool
    ) -> list[tuple[str, FormInstance | None]]:
        """Up to ``limit`` places of ``partition`` past ``after`` (in sort-key order, or
        reversed when ``newest_first``), each with a snapshot of its instance as stored now
        (None when it is gone)."""


def in_partition(place: Place | None, where: str) -> bool:
    """Whether an instance's place (None: it has none) is in partition ``where``."""
    return place is not None and place.partition == where


def index_page(
    limit: int,
    after: str | None,
    check: Callable[[str], object],
    read: Callable[[int], list[tuple[str, FormInstance | None]]],
    stands: Callable[[FormInstance], bool],
) -> ApprovalPage:
    """One page of a sparse index, as every listing reads it: ``limit`` checked (1 to
    ``MAX_PAGE``), then ``after`` (``check`` raises ``ValueError`` for a cursor not of this
    listing); ``read(n)`` gives up to ``n`` places past the cursor with each instance as stored
    now (None: gone). One more than ``limit`` is read to know whether a page follows; of the
    ``limit`` first, only the instances where the listing still ``stands`` are kept (the index
    lags the items it is written from)."""
    if not 1 <= limit <= MAX_PAGE:
        raise ValueError(f"a page holds 1 to {MAX_PAGE} places")
    if after is not None:
        check(after)
    found = read(limit + 1)
    more = len(found) > limit
    found = found[:limit]
    kept = [
        (sort, instance) for sort, instance in found if instance is not None and stands(instance)
    ]
    return ApprovalPage(
        tuple(instance for _, instance in kept),
        found[-1][0] if more and found else None,
        tuple(sort for sort, _ in kept),
    )
