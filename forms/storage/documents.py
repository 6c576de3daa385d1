"""Published form documents, per tenant: the port, and its in-memory adapter.

A tenant publishes a form document; the store gives it the next version of that form, and
keeps every version as it was published, for ever: instances pin the version they started
on, so what they were written against never changes. The *catalog* of a tenant is each of
its forms' latest version. Every method takes the tenant; nothing of one tenant is reachable
through another's, and another tenant's form is ``NotFound`` exactly like a missing one.

The tenant is the verified principal's (``forms.principals.tenant_of``); a deployment without
tenants keeps its documents under the tenant ``""``.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from forms.errors import NotFound, StoreError
from forms.storage.sizes import check, text_bytes

if TYPE_CHECKING:  # the store keeps documents as they are handed in; no need to load the model
    from forms.documents.model import FormDocument


class PublishConflict(StoreError):
    """A publish that expected another latest version of the form; nothing was stored."""

    def __init__(self, form_id: str, expected: int, latest: int) -> None:
        super().__init__(
            f"form {form_id!r}: expected version {expected} to be the latest, found {latest}"
        )
        self.form_id = form_id
        self.expected = expected
        self.latest = latest


@dataclass(frozen=True, slots=True)
class Published:
    """One published version of a tenant's form."""

    tenant: str
    version: int
    document: FormDocument
    by: str
    at: datetime

    @property
    def form_id(self) -> str:
        return self.document.id


def document_text(document: FormDocument) -> str:
    """The JSON a published version stores of ``document``. ``SizeLimit`` when it passes
    ``forms.storage.sizes.ITEM_LIMIT``: every adapter calls this before it stores a version,
    so all refuse the same documents."""
    text = document.model_dump_json(by_alias=True)
    check("published_version", text_bytes(text), document.id)
    return text


class FormDocumentStore(ABC):
    """Where a tenant's published form documents live.

    1. **Versions are immutable.** ``published(tenant, form, n)`` returns the same document
       for ever once version ``n`` exists.
    2. **Versions are dense and assigned once.** A publish gets the latest version plus one
       (1 for a new form); two concurrent publishes of one form get two different versions,
       never the same one. With ``expected`` (the version the publisher last saw), a publish
       on a form that moved on fails with ``PublishConflict`` and stores nothing.
    3. **Sizes are bounded.** A document whose JSON passes the item limit
       (``document_text``) is refused with ``SizeLimit``, and nothing is stored.
    4. **Tenants are apart.** Nothing a method returns for one tenant was published by
       another; an unknown tenant has an empty catalog.

    The port holds the logic (a publish: the next version, planned on the catalog as read,
    refused on a stale ``expected``, tried again when another publish of the tenant landed
    first; a missing version is ``NotFound``); adapters implement the primitives below.
    """

    _attempts = 20
    """How many publishes in a row may lose a race before one gives up (``StoreError``)."""

    def publish(
        self,
        tenant: str,
        document: FormDocument,
        *,
        by: str,
        at: datetime,
        expected: int | None = None,
    ) -> Published:
        """Store ``document`` as the next version of its form in ``tenant``'s catalog."""
        text = self._stored_text(document)  # SizeLimit: nothing stored
        for _ in range(self._attempts):
            forms, catalog_version = self._read_catalog(tenant)
            latest = forms.get(document.id, 0)
            if expected is not None and expected != latest:
                raise PublishConflict(document.id, expected, latest)
            published = Published(tenant, latest + 1, document, by, at)
            if self._add(published, text, {**forms, document.id: latest + 1}, catalog_version):
                return published
        raise StoreError(f"form {document.id!r}: {self._attempts} publishes in a row lost a race")

    def published(self, tenant: str, form_id: str, version: int) -> Published:
        """One version of a tenant's form; ``NotFound`` when the tenant has no such version."""
        found = self._read_version(tenant, form_id, version)
        if found is None:
            raise NotFound(f"no version {version} of form {form_id!r}")
        return found

    def catalog(self, tenant: str) -> dict[str, int]:
        """The tenant's forms and each one's latest version, in the order first published."""
        return self._read_catalog(tenant)[0]

    # ------------------------------------------------------------------ primitives

    @abstractmethod
    def _stored_text(self, document: FormDocument) -> str:
        """The JSON this adapter stores of ``document``: ``document_text``'s (its
        ``SizeLimit`` refuses the document before anything is read or stored)."""

    @abstractmethod
    def _read_catalog(self, tenant: str) -> tuple[dict[str, int], int]:
        """The tenant's catalog (form id -> latest version, in the order first published)
        and its version, which every publish of the tenant moves on (0: none yet)."""

    @abstractmethod
    def _read_version(self, tenant: str, form_id: str, version: int) -> Published | None:
        """One stored version, or None."""

    @abstractmethod
    def _add(self, published: Published, text: str, forms: dict[str, int], catalog: int) -> bool:
        """Store ``published`` (``text`` its document's JSON) and ``forms`` as the tenant's
        catalog at once, only if the catalog is still at version ``catalog``; False (nothing
        stored) when another publish of the tenant landed first."""


class InMemoryFormDocumentStore(FormDocumentStore):
    """A thread-safe ``FormDocumentStore`` in memory: for tests and single-process use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._versions: dict[tuple[str, str], list[Published]] = {}
        self._order: dict[str, list[str]] = {}
        self._publishes: dict[str, int] = {}
        """Per tenant, how many versions it published: its catalog's version."""

    def _stored_text(self, document: FormDocument) -> str:
        return document_text(document)

    def _read_catalog(self, tenant: str) -> tuple[dict[str, int], int]:
        with self._lock:
            forms = {f: len(self._versions[(tenant, f)]) for f in self._order.get(tenant, [])}
            return forms, self._publishes.get(tenant, 0)

    def _read_version(self, tenant: str, form_id: str, version: int) -> Published | None:
        with self._lock:
            versions = self._versions.get((tenant, form_id), [])
            return versions[version - 1] if 1 <= version <= len(versions) else None

    def _add(self, published: Published, text: str, forms: dict[str, int], catalog: int) -> bool:
        tenant = published.tenant
        with self._lock:
            if self._publishes.get(tenant, 0) != catalog:
                return False
            self._publishes[tenant] = catalog + 1
            versions = self._versions.setdefault((tenant, published.form_id), [])
            if not versions:
                self._order.setdefault(tenant, []).append(published.form_id)
            versions.append(published)
            return True
