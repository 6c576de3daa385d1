"""The forms a tenant's catalog keeps between reads (``forms.app.catalog._Tenant``).

A call on a published form looks it up twice (by name to find the instance, by the instance
to run it); while the tenant's catalog is younger than ``ttl`` both are answered from the
forms kept with it. GIVEN a catalog with a long ``ttl`` WHEN forms are asked for, published,
published past it, or asked for by other tenants THEN every answer is the one a catalog
read on every call (``ttl`` 0) gives: a publish through the catalog is seen at once, one past
it once ``ttl`` has passed, another tenant's form stays unknown, and the kept tenants are
bounded.
"""

from __future__ import annotations

import pytest

from forms import Caller, FormRegistry
from forms.app.catalog import Catalog
from forms.errors import UnknownForm
from forms.examples.travel_claim import travel_claim
from forms.storage.documents import InMemoryFormDocumentStore
from forms.storage.documents_contract import T0, document
from tests.support import Session, service_for
from tests.unit.test_catalog import Ticks
from tests.unit.test_migrated_answers import profile

ANA = Caller("acme/ana", "conv-1")
BO = Caller("globex/bo", "conv-2")


def catalog(ttl: float, ticks: Ticks | None = None, size: int = 512) -> Catalog:
    store = InMemoryFormDocumentStore()
    timer = ticks or Ticks()
    return Catalog(FormRegistry([travel_claim]), store, ttl=ttl, timer=timer, cache_size=size)


@pytest.mark.parametrize("ttl", [0.0, 3600.0])
def test_a_publish_through_the_catalog_moves_the_next_write_at_once(ttl: float) -> None:
    forms = catalog(ttl)
    forms.publish("acme/lead", profile(1), at=T0)
    ana = Session(service_for(registry=forms), ANA)
    ana.ok("form_start", form="profile")
    ana.ok("form_fill", form="profile", values={"name": "Ana"})
    (instance,) = ana.store.list_conversation(ANA.principal, ANA.conversation_id)
    # the form found by name and the one the instance runs on are one and the same
    assert forms.latest("profile", ANA.principal) is forms.for_instance(instance)[0]
    assert instance.form_version == 1
    # WHEN version 2 is published (inside the ttl)
    forms.publish("acme/lead", profile(2), at=T0)
    ana.ok("form_fill", form="profile", values={"age": 40})
    # THEN the next write runs on it
    (instance,) = ana.store.list_conversation(ANA.principal, ANA.conversation_id)
    assert instance.form_version == 2
    assert forms.latest("profile", ANA.principal).version == 2


def test_a_publish_past_the_catalog_shows_once_ttl_has_passed() -> None:
    ticks = Ticks()
    forms = catalog(5.0, ticks)
    forms.publish("acme/lead", profile(1), at=T0)
    ana = Session(service_for(registry=forms), ANA)
    ana.ok("form_start", form="profile")
    ana.ok("form_fill", form="profile", values={"name": "Ana"})
    # WHEN another container publishes version 2 straight to the store
    forms.documents.publish("acme", profile(2), by="acme/lead", at=T0)
    # THEN this catalog serves version 1 until it is older than ttl, then version 2
    ana.ok("form_fill", form="profile", values={"age": "forty"})
    (instance,) = ana.store.list_conversation(ANA.principal, ANA.conversation_id)
    assert instance.form_version == 1
    assert forms.latest("profile", ANA.principal).version == 1
    ticks.now = 5.0
    assert forms.latest("profile", ANA.principal).version == 2
    ana.ok("form_fill", form="profile", values={"name": "Ana B"})
    (instance,) = ana.store.list_conversation(ANA.principal, ANA.conversation_id)
    assert instance.form_version == 2


def test_a_kept_form_is_its_tenant_s_only() -> None:
    forms = catalog(3600.0)
    forms.publish(ANA.principal, document(), at=T0)
    assert forms.latest("intake", ANA.principal).id == "intake"  # now kept for acme
    # THEN globex is told it does not exist, by the catalog and by the tools alike
    with pytest.raises(UnknownForm):
        forms.latest("intake", BO.principal)
    bo = Session(service_for(registry=forms), BO)
    refused = bo.call("form_start", {"form": "intake"})
    assert refused["ok"] is False and refused["error"] == "unknown_form"
    assert refused["hint"] == "forms you can start: travel-claim"
    # AND a spelling of the id is resolved as ever (only ids are kept)
    assert forms.latest("Intake", "acme/cy") is forms.latest("intake", "acme/cy")


def test_the_kept_tenants_are_bounded() -> None:
    forms = catalog(3600.0, size=2)
    for tenant in ("t1", "t2", "t3"):
        forms.publish(f"{tenant}/p", document(), at=T0)
        assert forms.latest("intake", f"{tenant}/p").id == "intake"
    assert len(forms._catalogs) == 2
    # the tenant dropped first is read again when next asked
    assert forms.latest("intake", "t1/p").id == "intake"
    assert list(forms._catalogs) == ["t3", "t1"]
