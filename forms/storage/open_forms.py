"""The open-form index: a tenant's open instances of one form, by the version they run on,
read a page at a time, never by scanning the store. What a bulk migration reads: the open
instances of a form on a version older than the current one (``older``).

The approval index's pattern (``forms.storage.approvals``): where an instance stands is a
pure function of the instance as stored (``open_place``), written by the same write that
stores it.

* **open** (partition ``O#<tenant>#<form id>``, both escaped): the instance is open. Sorted
  by its form version (eight digits), then a digest of the instance id (a cursor names no
  instance).
* closed (completed, submitted, terminated, abandoned): not in the index. An instance enters
  it when created and leaves it with the commit that closes it; the GSI is written then, and
  when a migration moves it to another version, never on its other commits.

The promises, on every adapter (``forms.storage.open_forms_contract``): an instance is listed
only when, as stored when the page was read, it is open and on a version below the bound;
another tenant's instances, or another form's, are never listed; pages are in version order
and ``next`` reads on.

Logic is here; adapters implement one primitive, ``_open_read``.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod

from forms.instance import FormInstance
from forms.principals import tenant_of
from forms.storage.approvals import (
    ApprovalPage,
    Place,
    in_partition,
    index_page,
    tenant_part,
    tiebreak,
)
from forms.storage.dynamodb_requests import escape

OpenPage = ApprovalPage
"""A page of the index: instances as stored now, in version order, and the next cursor."""

_CURSOR = re.compile(r"\d{8}#[0-9a-f]{32}")
MAX_VERSION = 99_999_999


def open_place(instance: FormInstance) -> Place | None:
    """Where ``instance`` stands in the open-form index (module docstring), or None."""
    if instance.state.status != "open":
        return None
    return Place(
        open_partition(tenant_part(tenant_of(instance.principal)), instance.form_id),
        f"{version_part(instance.form_version)}#{tiebreak(instance.id)}",
    )


def open_partition(tenant: str, form_id: str) -> str:
    """The index partition of a tenant key part (``tenant_part``) and a form id."""
    return f"O#{tenant}#{escape(form_id)}"


def version_part(version: int) -> str:
    """A form version as a sort key part: eight digits, so text order is version order."""
    return f"{min(max(version, 0), MAX_VERSION):08d}"


class OpenFormIndex(ABC):
    """Reads the open-form index an adapter keeps beside its instances."""

    def older(
        self,
        tenant: str | None,
        form_id: str,
        below: int,
        *,
        limit: int = 20,
        after: str | None = None,
    ) -> OpenPage:
        """The tenant's open instances of ``form_id`` on a version below ``below``, the oldest
        version first; ``ValueError`` for a bad limit or cursor."""
        where = open_partition(tenant_part(tenant), form_id)
        return index_page(
            limit,
            after,
            _check_cursor,
            lambda n: self._open_read(where, version_part(below), after, n),
            lambda instance: _kept(instance, where, below),
        )

    @abstractmethod
    def _open_read(
        self, partition: str, below: str, after: str | None, limit: int
    ) -> list[tuple[str, FormInstance | None]]:
        """Up to ``limit`` places of ``partition`` after ``after`` and before ``below``, in
        sort-key order, each with a snapshot of its instance as stored now (None: gone)."""


def _check_cursor(cursor: str) -> None:
    if not _CURSOR.fullmatch(cursor):
        raise ValueError("not a cursor of this listing: pass back the 'next' of a page")


def _kept(instance: FormInstance, where: str, below: int) -> bool:
    return in_partition(open_place(instance), where) and instance.form_version < below
