"""The forms a caller can use: the deployment's, and its tenant's published documents.

A ``Catalog`` answers what a ``FormRegistry`` answers (the latest version of a form by name,
the forms to list, the definition an instance runs on) for one principal at a time: the code
forms every tenant shares, plus the documents the principal's tenant published
(``forms.storage.documents``), compiled on first use with the deployment's executors and
with its registry's fact vocabulary (the fact keys documents' fields hold are checked against
the same keys as the code forms' ``memory=``). A form
published a moment ago is served without a redeploy (the tenant's catalog is read again once
``ttl`` seconds have passed on ``timer``, a monotonic clock the composition root passes in:
0 reads it on every call).

Versions of a document are immutable, so each is compiled once and kept (up to
``cache_size``). An open instance of a document form moves to the latest published version on
its next write, by field id: answers to fields the new version still has carry over as they
are, answers to fields it dropped stay on record in the instance's logs (never removed), and
the migration commit says so (``by: migration``). An answer carried over that the new version
refuses stays too, as ``invalid`` (``forms.evaluation.refusal``): not counted, asked again,
holding submission until it is resolved. A closed instance stays on its version.

Another tenant's form is ``UnknownForm``, exactly as a form that does not exist.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from forms.compiled import CompiledForm, normalise
from forms.definition import Migration
from forms.errors import InvalidFormDefinition, NotFound, UnknownForm
from forms.handover import check_declared
from forms.instance import FormInstance
from forms.principals import tenant_of
from forms.registry import FormRegistry
from forms.suggest import rank

if TYPE_CHECKING:  # loaded when a tenant's document is first compiled, not with the service
    from forms.documents.build import ExecutorRegistry
    from forms.documents.model import FormDocument
    from forms.memory.vocabulary import Vocabulary
    from forms.storage.documents import FormDocumentStore, Published


class Catalog:
    """Code forms for everyone, published documents per tenant, behind one registry API."""

    def __init__(
        self,
        registry: FormRegistry,
        documents: FormDocumentStore,
        *,
        timer: Callable[[], float],
        executors: ExecutorRegistry | None = None,
        ttl: float = 5.0,
        cache_size: int = 512,
    ) -> None:
        self.registry = registry
        self.documents = documents
        self.executors = dict(executors or {})
        self.ttl = ttl
        self._timer = timer
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._compiled: OrderedDict[tuple[str, str, int], CompiledForm] = OrderedDict()
        self._catalogs: dict[str, _Tenant] = {}

    # ------------------------------------------------------------------ the registry's API

    def latest(self, name: str, principal: str | None = None) -> CompiledForm:
        """The current version of the form ``name`` denotes, for ``principal``."""
        # Asked first, not by catching the registry's UnknownForm: building that error ranks
        # close names (difflib), hundreds of microseconds a call on every tenant's form. One
        # look-up (``find``) says whether the registry serves it and what it serves.
        found = self.registry.find(name)
        if found is not None:
            return found
        if principal is None:
            return self.registry.latest(name)  # its UnknownForm, close names and all
        tenant = tenant_key(principal)
        kept = self._kept(tenant)
        if kept is not None and name in kept.latest:  # asked before, by its id: every call
            return kept.latest[name]
        entry = self._catalog(tenant)
        catalog = entry.catalog
        form_id = _resolve(name, catalog)
        if form_id is None:
            known = [f.id for f in self.registry.forms()] + list(catalog)
            raise UnknownForm(
                f"no form {name!r}",
                f"forms you can start: {', '.join(known) or 'none'}",
                rank(name, {f: (f,) for f in known}),
            )
        form = entry.latest[form_id] = self._version(tenant, form_id, catalog[form_id])
        return form

    def forms(self, principal: str | None = None) -> list[CompiledForm]:
        """The latest version of every form ``principal`` can start: code forms first."""
        found = self.registry.forms()
        if principal is not None:
            tenant = tenant_key(principal)
            found += [self._version(tenant, f, v) for f, v in self._catalog(tenant).catalog.items()]
        return found

    def for_instance(self, instance: FormInstance) -> tuple[CompiledForm, list[Migration]]:
        """The definition ``instance`` runs on, and the migrations to apply first."""
        if self.registry.serves(instance.form_id):
            return self.registry.for_instance(instance)
        # a published form's instance: its fields read from its ``__dict__`` once, as each
        # pydantic attribute read costs about four dict reads (``__getattr__`` on its class)
        values = instance.__dict__
        form_id, version = values["form_id"], values["form_version"]
        tenant = tenant_key(values["principal"])
        kept = self._kept(tenant)
        if kept is not None and kept.catalog.get(form_id) == version and form_id in kept.latest:
            return kept.latest[form_id], []  # on the latest version: pinned is latest
        pinned = self._version(tenant, form_id, version)
        if values["state"].status != "open":
            return pinned, []
        latest = self._catalog(tenant).catalog.get(form_id, version)
        if latest <= version:
            return pinned, []
        return self._version(tenant, form_id, latest), [Migration(from_version=version)]

    # ------------------------------------------------------------------ publishing

    def check(self, document: FormDocument, version: int = 1) -> CompiledForm:
        """``document`` compiled with this deployment's executors and fact vocabulary
        (``InvalidFormDefinition`` with every problem when it does not compile, or when its id
        is a code form's)."""
        if self.registry.serves(document.id):
            raise InvalidFormDefinition(
                f"form {document.id!r}: that id is a form of this deployment; choose another"
            )
        return self._compile_document(document, version)

    @property
    def vocabulary(self) -> Vocabulary:
        """The fact vocabulary documents' keys are checked against: the registry's, the one
        its code forms' keys are checked against."""
        return self.registry.vocabulary

    def publish(
        self,
        principal: str,
        document: FormDocument,
        *,
        at: datetime,
        expected: int | None = None,
    ) -> Published:
        """Check ``document`` and publish it as the next version of its form in
        ``principal``'s tenant; the tenant's next call sees it. A handover it declares to a
        form the tenant can start is checked against that form's fields and types
        (``forms.handover.check_handover``); one to a form not there yet is checked when it
        runs."""
        compiled = self.check(document)
        problems = check_declared(compiled, lambda form_id: self._found(form_id, principal))
        if problems:
            raise InvalidFormDefinition.of([f"form {document.id!r}: {p}" for p in problems])
        tenant = tenant_key(principal)
        published = self.documents.publish(tenant, document, by=principal, at=at, expected=expected)
        with self._lock:
            self._catalogs.pop(tenant, None)
        return published

    # ------------------------------------------------------------------ inside

    def _found(self, form_id: str, principal: str) -> CompiledForm | None:
        """The form ``form_id`` as ``principal`` can start it, or None."""
        try:
            return self.latest(form_id, principal)
        except UnknownForm:
            return None

    def _kept(self, tenant: str) -> _Tenant | None:
        """The tenant's catalog as last read, while it is younger than ``ttl``; else None.
        Read without the lock: a dict's ``get`` is one step under the GIL, and an entry is
        replaced whole, never changed but for the forms it keeps."""
        entry = self._catalogs.get(tenant)
        return entry if entry is not None and self._timer() < entry.expires else None

    def _catalog(self, tenant: str) -> _Tenant:
        """The tenant's catalog, read again from the store once ``ttl`` has passed (the
        entries of ``cache_size`` tenants kept, the longest unread dropped first)."""
        now = self._timer()
        with self._lock:
            cached = self._catalogs.get(tenant)
        if cached is not None and now < cached.expires:
            return cached
        entry = _Tenant(now + self.ttl, self.documents.catalog(tenant))
        with self._lock:
            self._catalogs.pop(tenant, None)
            self._catalogs[tenant] = entry
            while len(self._catalogs) > self._cache_size:
                del self._catalogs[next(iter(self._catalogs))]
        return entry

    def _version(self, tenant: str, form_id: str, version: int) -> CompiledForm:
        key = (tenant, form_id, version)
        with self._lock:
            found = self._compiled.get(key)
            if found is not None:
                self._compiled.move_to_end(key)
                return found
        try:
            published = self.documents.published(tenant, form_id, version)
        except NotFound:
            raise UnknownForm(
                f"form {form_id!r} is no longer served", "abandon this instance"
            ) from None
        compiled = self._compile_document(published.document, version)
        with self._lock:
            self._compiled[key] = compiled
            while len(self._compiled) > self._cache_size:
                self._compiled.popitem(last=False)
        return compiled

    def _compile_document(self, document: FormDocument, version: int) -> CompiledForm:
        """``document`` compiled; the vocabulary is asked for only when a field holds a key,
        so a document without any never loads memory."""
        from forms.documents.build import compile_document
        from forms.documents.fact_keys import declares_memory

        return compile_document(
            document,
            version=version,
            executors=self.executors,
            vocabulary=self.vocabulary if declares_memory(document) else None,
        )


class _Tenant:
    """A tenant's catalog as read at one time (each form's latest version, until
    ``expires``) and, by form id, the compiled latest versions asked for since: what a call on
    a published form looks up twice (``latest`` to find the instance, ``for_instance`` to run
    it), answered from here while the catalog is young, without the store's, the compiled
    cache's or the lock's cost. Only a form's own id is a key, so the forms kept are at most
    the catalog's; a publish drops the entry (``Catalog.publish``), and with it the forms."""

    __slots__ = ("catalog", "expires", "latest")

    def __init__(self, expires: float, catalog: dict[str, int]) -> None:
        self.expires = expires
        self.catalog = catalog
        self.latest: dict[str, CompiledForm] = {}


def tenant_key(principal: str) -> str:
    """The tenant a principal publishes under and reads from (``""`` without tenants)."""
    return tenant_of(principal) or ""


def _resolve(name: str, catalog: dict[str, int]) -> str | None:
    if name in catalog:
        return name
    wanted = normalise(name)
    return next((form_id for form_id in catalog if normalise(form_id) == wanted), None)
