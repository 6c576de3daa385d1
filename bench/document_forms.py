"""The engine bench's document-form cases: the travel claim as a tenant publishes it (forms
built as data) next to the very same definition served as a code form.

Both services hold the same definition (the claim exported as a document, then read back as
the ``FormDef`` a person would write for it), so the two tool calls differ only in how the
form is found: the catalog (the code forms first, then the caller's tenant's published
versions, compiled once and cached) or the code registry alone. The export leaves out what a
document cannot hold (the claim's code predicates and its executor); both cases leave it out.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from forms import Caller, FormInstance, FormRegistry, FormService
from forms.app.catalog import Catalog
from forms.documents.build import to_definition
from forms.documents.export import export_document
from forms.examples.grant_application import grant_application
from forms.examples.health_check import health_check
from forms.examples.purchase_request import purchase_request
from forms.examples.travel_claim import travel_claim
from forms.storage.documents import InMemoryFormDocumentStore

TENANT_CALLER = Caller("acme/bench", "bench-conversation")
"""A principal of tenant ``acme``: the one whose published forms the catalog serves."""

FIRST_FILL = {"full_name": "Ada Lovelace", "staff_id": "AB1234"}

Build = Callable[[Any], FormService]
"""How the engine bench builds a service on a code registry or a catalog (``_service_on``)."""


def prepare_pair(build: Build) -> tuple[tuple[FormService, FormInstance], ...]:
    """(the claim as a tenant's document, the same definition as a code form), each started
    and at step 2 like the bench's travel claim."""
    document = export_document(travel_claim).document
    code_forms = [grant_application, health_check, purchase_request]
    documents = InMemoryFormDocumentStore()
    catalog = Catalog(FormRegistry(code_forms), documents, timer=lambda: 0.0, ttl=3600.0)
    catalog.publish(TENANT_CALLER.principal, document, at=datetime(2026, 1, 1, tzinfo=UTC))
    as_code = FormRegistry([*code_forms, to_definition(document)])
    return tuple(_started(build(forms)) for forms in (catalog, as_code))


def _started(service: FormService) -> tuple[FormService, FormInstance]:
    for call_id, tool, args in (
        ("c0", "form_start", {"form": "travel-claim"}),
        ("c1", "form_fill", {"form": "travel-claim", "values": FIRST_FILL}),
    ):
        result = service.call(TENANT_CALLER, tool, call_id, args)
        if not result.get("ok"):
            raise SystemExit(f"bench setup failed: {result}")
    principal, conversation = TENANT_CALLER.principal, TENANT_CALLER.conversation_id
    return service, service.store.list_conversation(principal, conversation)[0]
