"""The operator routes over HTTP: the operator role required, an operator acting within their
tenant only (another tenant's hook is the same 404 as a missing one), the relay's failure
queue for the platform tenant's operators only, and nothing stored on a refusal."""

from __future__ import annotations

import json
from typing import Any

import pytest

from forms.app.operations import InMemoryFailureQueue
from formwork.config import Settings
from tests.functional.conftest import Api
from tests.unit.test_operations import HOOK, Sweeps, failure, fill_name, setup

OLGA: dict[str, Any] = {"sub": "olga", "tenant": "acme", "roles": "[operator]"}
GUS: dict[str, Any] = {"sub": "gus", "tenant": "globex", "roles": "[operator]"}
ALICE: dict[str, Any] = {"sub": "alice", "tenant": "acme", "roles": "[finance]"}
SETTINGS = Settings(tenant_claim="tenant", platform_tenant="acme")


@pytest.fixture
def world() -> tuple[Api, str, str, InMemoryFailureQueue, Sweeps]:
    service, _, _ = setup(failures=6)
    mine = fill_name(service, "acme/alice")
    theirs = fill_name(service, "globex/bob")
    queue, sweeps = InMemoryFailureQueue(), Sweeps()
    queue.send("m0", failure(0))
    api = Api.over(service, settings=SETTINGS, failure_queue=queue, sweeper=sweeps)
    return api, f"{mine}:{HOOK}:1", f"{theirs}:{HOOK}:1", queue, sweeps


def retry(api: Api, key: str, claims: dict[str, Any]) -> Any:
    from tests.functional.conftest import build_event

    return api.send(build_event("POST", f"/operator/hooks/{key}/retry", claims=claims))


def test_an_operator_lists_their_tenants_failed_hooks(world: Any) -> None:
    api, mine, theirs, _, _ = world
    answer = api.get("/operator/hooks/failed", claims=OLGA)
    assert answer.status == 200, answer
    assert [h["key"] for h in answer.json()["hooks"]] == [mine]
    assert answer.json()["next"] is None
    other = api.get("/operator/hooks/failed", claims=GUS).json()
    assert [h["key"] for h in other["hooks"]] == [theirs]


def test_without_the_operator_role_every_route_is_403(world: Any) -> None:
    api, mine, _, queue, sweeps = world
    assert api.get("/operator/hooks/failed", claims=ALICE).status == 403
    assert retry(api, mine, ALICE).status == 403
    assert api.get("/operator/relay/failures", claims=ALICE).status == 403
    redrive = api.send(_post("/operator/relay/failures/redrive", ALICE))
    assert redrive.status == 403 and queue.count() == 1 and sweeps.started == 0
    assert api.get("/operator/hooks/failed", claims=None).status == 401


def test_another_tenants_hook_is_the_same_404_as_a_missing_one(world: Any) -> None:
    api, _, theirs, _, _ = world
    missing = retry(api, f"fi_nothing:{HOOK}:1", OLGA)
    foreign = retry(api, theirs, OLGA)
    assert missing.status == foreign.status == 404
    assert missing.json()["error"] == foreign.json()["error"] == "unknown_hook"
    # AND the other tenant's hook is untouched
    assert [h["key"] for h in api.get("/operator/hooks/failed", claims=GUS).json()["hooks"]] == [
        theirs
    ]


def test_a_retry_by_key_reruns_the_hook(world: Any) -> None:
    api, mine, _, _, _ = world
    answer = retry(api, mine.replace(":", "%3A"), OLGA)
    assert answer.status == 200, answer
    assert answer.json() == {"ok": True, "key": mine, "instance_id": mine.split(":")[0]}
    assert api.get("/operator/hooks/failed", claims=OLGA).json()["hooks"] == []
    assert retry(api, mine, OLGA).status == 404  # nothing failed left
    assert retry(api, "a*b", OLGA).status == 400


def test_bad_limits_and_cursors_are_400(world: Any) -> None:
    api = world[0]
    for query in ({"limit": "0"}, {"limit": "51"}, {"after": "fi_1"}):
        assert api.get("/operator/hooks/failed", query=query, claims=OLGA).status == 400


def _post(path: str, claims: dict[str, Any] | None) -> dict[str, Any]:
    from tests.functional.conftest import build_event

    return build_event("POST", path, claims=claims)


def test_the_platform_tenants_operator_reads_back_and_redrives_the_relays_failures(
    world: Any,
) -> None:
    api, _, _, queue, sweeps = world
    # GIVEN another tenant's operator: refused, nothing touched
    assert api.get("/operator/relay/failures", claims=GUS).status == 403
    assert api.send(_post("/operator/relay/failures/redrive", GUS)).status == 403
    assert sweeps.started == 0 and queue.count() == 1
    # WHEN the platform tenant's operator reads it back: the message stays
    read = api.get("/operator/relay/failures", claims=OLGA)
    assert read.status == 200, read
    body = read.json()
    assert body["approximate_count"] == 1
    assert body["failures"][0]["condition"] == "RetryAttemptsExhausted"
    assert queue.count() == 1
    # AND redrives it: one sweep started, then the message deleted
    done = api.send(_post("/operator/relay/failures/redrive", OLGA))
    assert done.status == 200, done
    assert done.json()["sweep_started"] and sweeps.started == 1
    assert [b["message_id"] for b in done.json()["redriven"]] == ["m0"]
    assert queue.count() == 0


def test_a_deployment_without_a_queue_answers_503() -> None:
    service, _, _ = setup()
    api = Api.over(service, settings=SETTINGS)
    answer = api.get("/operator/relay/failures", claims=OLGA)
    assert answer.status == 503 and json.loads(answer.text)["error"] == "unavailable"


# ---------------------------------------------------------------------------- migrations


class Starter:
    def __init__(self, fail: bool = False) -> None:
        self.runs: list[tuple[str, str, int]] = []
        self.fail = fail

    def start_migration(self, principal: str, form_id: str, to_version: int) -> tuple[str, bool]:
        if self.fail:
            from forms.app.migrations import StartFailed

            raise StartFailed("TimeoutError: Temporal did not answer")
        self.runs.append((principal, form_id, to_version))
        return f"migrate:x:{form_id}:v{to_version}", len(self.runs) == 1


@pytest.fixture
def orders() -> tuple[Any, dict[str, str]]:
    from forms.storage import InMemoryFormStore
    from tests.support import service_for
    from tests.unit.test_migrations import FIRST, SECOND, started

    store = InMemoryFormStore()
    ids = {
        "acme": started(store, "acme/ana", "c1", "12"),
        "globex": started(store, "globex/gus", "c2", "7"),
    }
    return service_for(FIRST, SECOND, store=store), ids


def migrate(api: Api, claims: dict[str, Any] | None, body: Any = None, form: str = "order") -> Any:
    from tests.functional.conftest import build_event

    text = None if body is None else json.dumps(body)
    return api.send(
        build_event("POST", f"/operator/forms/{form}/migrate", body=text, claims=claims)
    )


def test_a_dry_run_lists_the_tenants_instances_and_writes_nothing(orders: Any) -> None:
    service, ids = orders
    api = Api.over(service, settings=SETTINGS)
    before = service.store.get(ids["acme"]).version
    answer = migrate(api, OLGA)  # no body: a dry run
    assert answer.status == 200, answer
    body = answer.json()
    assert body["dry_run"] and body["to_version"] == 2 and body["next"] is None
    (row,) = body["instances"]
    assert row["instance_id"] == ids["acme"] and row["outcome"] == "moves"
    assert row["moved"] == ["code", "email"] and row["invalid"] == ["size"]
    assert service.store.get(ids["acme"]).version == before
    theirs = migrate(api, GUS, {"dry_run": True}).json()["instances"]
    assert [r["instance_id"] for r in theirs] == [ids["globex"]]


def test_a_run_starts_the_workflow_once_and_needs_temporal(orders: Any) -> None:
    service, _ = orders
    starter = Starter()
    api = Api.over(service, settings=SETTINGS, migration_starter=starter)
    first = migrate(api, OLGA, {"dry_run": False})
    assert first.status == 202, first
    assert first.json() == {
        "dry_run": False,
        "form_id": "order",
        "to_version": 2,
        "workflow_id": "migrate:x:order:v2",
        "started": True,
    }
    assert starter.runs == [("acme/olga", "order", 2)]
    assert migrate(api, OLGA, {"dry_run": False}).json()["started"] is False  # joined
    # AND a deployment without Temporal refuses the run, not the dry run
    inprocess = Api.over(service, settings=SETTINGS)
    refused = migrate(inprocess, OLGA, {"dry_run": False})
    assert refused.status == 409 and refused.json()["error"] == "needs_temporal"
    down = Api.over(service, settings=SETTINGS, migration_starter=Starter(fail=True))
    assert migrate(down, OLGA, {"dry_run": False}).status == 503


def test_migrate_refusals(orders: Any) -> None:
    service, _ = orders
    starter = Starter()
    api = Api.over(service, settings=SETTINGS, migration_starter=starter)
    assert migrate(api, ALICE).status == 403
    assert migrate(api, ALICE, {"dry_run": False}).status == 403 and starter.runs == []
    assert migrate(api, None).status == 401
    missing = migrate(api, OLGA, form="nothing")
    assert missing.status == 404 and missing.json()["error"] == "unknown_form"
    assert migrate(api, OLGA, {"after": "fi_1"}).status == 400
    assert migrate(api, OLGA, {"dry_run": "false"}).status == 422  # a string is not a bool
    assert migrate(api, OLGA, {"dry_run": True, "force": True}).status == 422


def test_another_tenants_published_form_is_the_same_404_as_none() -> None:
    from forms import FormRegistry
    from forms.app.catalog import Catalog
    from forms.documents import FormDocument
    from forms.examples.travel_claim import travel_claim
    from forms.storage.documents import InMemoryFormDocumentStore
    from forms.storage.documents_contract import T0
    from tests.support import service_for

    forms = Catalog(
        FormRegistry([travel_claim]), InMemoryFormDocumentStore(), timer=lambda: 0.0, ttl=0
    )
    name = {"kind": "short_text", "id": "name", "label": "Name"}
    document = {
        "id": "survey",
        "title": "Survey",
        "steps": [{"id": "s", "title": "S", "items": [name]}],
    }
    forms.publish("globex/lead", FormDocument.model_validate(document), at=T0)
    api = Api.over(service_for(registry=forms), settings=SETTINGS)
    theirs = migrate(api, OLGA, form="survey")
    missing = migrate(api, OLGA, form="no-such-form")
    assert theirs.status == missing.status == 404
    assert theirs.json()["error"] == missing.json()["error"] == "unknown_form"
    assert migrate(api, GUS, form="survey").status == 200  # their own
