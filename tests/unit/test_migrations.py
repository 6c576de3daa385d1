"""Bulk migration of a form's open instances (``forms.app.migrations``): the dry run says what
would happen to each of the operator's tenant's instances and writes nothing; the run moves
them through the engine's migration, instance by instance, and is idempotent."""

from __future__ import annotations

from typing import Literal

import pytest

from forms import Caller, FormDef, InMemoryFormStore, Step, field
from forms.app.migrations import migrate_page, plan_migration
from forms.app.operations import Operator
from forms.app.service import new_instance_id
from forms.definition import Migration
from forms.errors import UnknownForm
from tests.support import Session, service_for

OLGA = Operator("acme/olga", frozenset({"operator"}))


class V1(Step):
    title = "Main"
    mail: str = field("Email")
    size: Literal["s", "m", "xl"] = field("Size")
    code: str = field("Code")


class V2(Step):
    title = "Main"
    email: str = field("Email")
    size: Literal["s", "m"] = field("Size")
    code: int = field("Code")


FIRST = FormDef(id="order", version=1, title="Order", steps=[V1])
SECOND = FormDef(
    id="order",
    version=2,
    title="Order",
    steps=[V2],
    migrations=[Migration(from_version=1, renames={"mail": "email"}, convert={"code": int})],
)


def started(store: InMemoryFormStore, principal: str, conversation: str, code: str) -> str:
    service = service_for(FIRST, store=store, new_id=new_instance_id)
    session = Session(service, Caller(principal, conversation))
    started = session.ok("form_start", form="order")
    session.ok(
        "form_fill",
        form="order",
        values={"mail": f"{conversation}@example.com", "size": "xl", "code": code},
    )
    return str(started["instance"])


World = tuple[InMemoryFormStore, dict[str, str]]


@pytest.fixture
def world() -> World:
    store = InMemoryFormStore()
    ids = {
        "good": started(store, "acme/ana", "c1", "12"),
        "bad": started(store, "acme/bo", "c2", "twelve"),
        "theirs": started(store, "globex/gus", "c3", "7"),
    }
    return store, ids


def test_the_dry_run_says_what_would_happen_to_each_and_writes_nothing(world: World) -> None:
    store, ids = world
    service = service_for(FIRST, SECOND, store=store)
    versions = {i: store.get(i).version for i in ids.values()}
    plan = plan_migration(service, OLGA, "order")
    assert (plan.form_id, plan.to_version, plan.next) == ("order", 2, None)
    by_id = {p.instance_id: p for p in plan.instances}
    # THEN only the operator's tenant's instances are planned
    assert set(by_id) == {ids["good"], ids["bad"]}
    good, bad = by_id[ids["good"]], by_id[ids["bad"]]
    assert good.outcome == "moves" and good.moved == ("code", "email")
    assert good.invalid == ("size",)  # "xl" is no longer a size: kept, asked again
    assert (good.from_version, good.to_version) == (1, 2)
    assert bad.outcome == "fails" and "code" in (bad.reason or "")
    # AND nothing was written
    assert {i: store.get(i).version for i in ids.values()} == versions


def test_the_run_moves_what_the_dry_run_said_and_a_second_run_finds_only_the_failed(
    world: World,
) -> None:
    store, ids = world
    service = service_for(FIRST, SECOND, store=store)
    done = migrate_page(service, OLGA.principal, "order", 2)
    results = {m.instance_id: m.result for m in done.results}
    assert results == {ids["good"]: "moved", ids["bad"]: "failed"}
    moved = store.get(ids["good"])
    assert moved.form_version == 2
    email, code = moved.field("email").in_force(), moved.field("code").in_force()
    assert email is not None and email.value == "c1@example.com"
    assert code is not None and code.value == 12
    assert store.get(ids["bad"]).form_version == 1
    assert store.get(ids["theirs"]).form_version == 1  # another tenant's: untouched
    again = migrate_page(service, OLGA.principal, "order", 2)
    assert [(m.instance_id, m.result) for m in again.results] == [(ids["bad"], "failed")]
    # AND the moved instance reads on its new version
    read = Session(service, Caller("acme/ana", "c1")).ok("form_read", form="order")
    assert {r["id"]: r["status"] for r in read["fields"]}["size"] == "invalid"


def test_a_run_for_a_version_no_longer_current_moves_nothing(world: World) -> None:
    store, ids = world
    service = service_for(FIRST, SECOND, store=store)
    done = migrate_page(service, OLGA.principal, "order", 1)  # started when 1 was current
    assert all(m.result == "skipped" for m in done.results)
    assert store.get(ids["good"]).form_version == 1


def test_without_a_migration_path_the_instance_stays(world: World) -> None:
    store, ids = world
    lone = FormDef(id="order", version=2, title="Order", steps=[V2])  # no migration from 1
    service = service_for(FIRST, lone, store=store)
    (plan, *_) = [
        p for p in plan_migration(service, OLGA, "order").instances if p.instance_id == ids["good"]
    ]
    assert plan.outcome == "no_path" and "no migration" in (plan.reason or "")


def test_a_form_the_tenant_has_not_is_unknown(world: World) -> None:
    store, _ = world
    with pytest.raises(UnknownForm):
        plan_migration(service_for(FIRST, SECOND, store=store), OLGA, "nothing")
