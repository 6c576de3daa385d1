"""Settings from the environment, the composition root (``bootstrap`` and its ``App``), and what
the handler costs to import."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from forms import FormRegistry, InMemoryFormStore
from forms.app.hooks import InProcessDispatcher
from forms.examples import EXAMPLES
from formwork import application, bootstrap
from formwork.aws.local import LocalContext, invoke
from formwork.config import ConfigError, Settings
from formwork.infra.local.dynamodb import load_template
from tests.functional.conftest import SETTINGS, build_event, make_service
from tests.support import Deferred, app_for, service_for

ROOT = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------------------- settings


def test_settings_defaults_from_an_empty_environment() -> None:
    settings = Settings.from_env({})
    assert settings == Settings()
    assert settings.table_name is None
    assert settings.region == "us-east-1"
    assert settings.tenant_claim == "tenant"
    assert settings.forms == "forms.examples:EXAMPLES"
    assert settings.max_body_bytes == 65536


def test_settings_read_every_variable() -> None:
    env = {
        "TABLE_NAME": "formwork-FormsTable-1ABC",
        "DYNAMODB_ENDPOINT_URL": "http://127.0.0.1:8000",
        "AWS_REGION": "eu-west-1",
        "AWS_DEFAULT_REGION": "us-west-2",
        "TENANT_CLAIM": "custom:tenant",
        "FORMWORK_FORMS": "forms.examples:EXAMPLES",
        "FORMWORK_MAX_BODY_BYTES": "1024",
    }
    assert Settings.from_env(env) == Settings(
        table_name="formwork-FormsTable-1ABC",
        dynamodb_endpoint_url="http://127.0.0.1:8000",
        region="eu-west-1",
        tenant_claim="custom:tenant",
        forms="forms.examples:EXAMPLES",
        max_body_bytes=1024,
    )
    assert Settings.from_env({"AWS_DEFAULT_REGION": "us-west-2"}).region == "us-west-2"


def test_a_deployment_is_single_tenant_only_when_it_says_so() -> None:
    # GIVEN a deployment that names no tenant claim, or names it blank
    # THEN it still has one, "tenant": tokens without it are refused, not pooled
    assert Settings.from_env({}).tenant_claim == "tenant"
    assert Settings.from_env({"TENANT_CLAIM": "  "}).tenant_claim == "tenant"
    assert Settings().tenant_claim == "tenant"
    # AND only "none" (any case) makes it single-tenant
    for single in ("none", "NONE", " None "):
        assert Settings.from_env({"TENANT_CLAIM": single}).tenant_claim is None
    # AND the template's parameter defaults to the same, and takes "none" but not blank
    parameter = load_template()["Parameters"]["TenantClaim"]
    assert parameter["Default"] == "tenant"
    allowed = re.compile(parameter["AllowedPattern"])
    assert allowed.fullmatch("none") and allowed.fullmatch("custom:tenant")
    assert not allowed.fullmatch("")


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("TABLE_NAME", "a"),
        ("TABLE_NAME", "bad name"),
        ("DYNAMODB_ENDPOINT_URL", "127.0.0.1:8000"),
        ("AWS_REGION", "Mars"),
        ("TENANT_CLAIM", "tenant id"),
        ("FORMWORK_FORMS", "forms.examples"),
        ("FORMWORK_MAX_BODY_BYTES", "64k"),
        ("FORMWORK_MAX_BODY_BYTES", "0"),
        ("FORMWORK_MAX_BODY_BYTES", "99999999"),
        ("FORMWORK_REPLAY_WINDOW_HOURS", "0"),
        ("FORMWORK_REPLAY_WINDOW_HOURS", "2h"),
    ],
)
def test_bad_settings_name_the_variable(variable: str, value: str) -> None:
    with pytest.raises(ConfigError, match=variable):
        Settings.from_env({variable: value})


def test_settings_are_frozen() -> None:
    with pytest.raises(AttributeError):
        Settings().max_body_bytes = 1  # type: ignore[misc]


def test_the_dynamodb_store_needs_a_table_name() -> None:
    with pytest.raises(ConfigError, match="TABLE_NAME is not set"):
        bootstrap.build_store(Settings())


# ---------------------------------------------------------------------------- composition


def test_forms_load_from_a_module_attribute() -> None:
    assert bootstrap.load_forms("forms.examples:EXAMPLES") == EXAMPLES
    assert bootstrap.load_forms("forms.examples:travel_claim") == (EXAMPLES[0],)


@pytest.mark.parametrize(
    ("reference", "says"),
    [
        ("forms.nowhere:EXAMPLES", "cannot import"),
        ("forms.examples:NOTHING", "has no NOTHING"),
        ("forms.examples:EXAMPLES.nothing", "has no EXAMPLES.nothing"),
        ("forms.examples:not-a-name", 'expected "package.module:attribute"'),
        ("forms.examples:__doc__", "sequence of FormDef"),
        ("forms.surface.tools:TOOLS", "sequence of FormDef"),
    ],
)
def test_bad_forms_references_are_config_errors(reference: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        bootstrap.load_forms(reference)


REGISTRY = FormRegistry(EXAMPLES)
"""A registry a deployment may name as its forms (several versions of a form, say)."""


def test_a_registry_is_served_as_it_is() -> None:
    # GIVEN FORMWORK_FORMS naming a FormRegistry, as formwork check accepts
    settings = Settings(forms="tests.functional.test_bootstrap:REGISTRY")
    # WHEN the service is built / THEN it serves that registry itself, through the catalog
    app = bootstrap.bootstrap(settings, store=InMemoryFormStore())
    assert app.service.registry is app.catalog
    assert app.catalog.registry is REGISTRY


def test_the_service_wires_the_registry_a_store_and_a_dispatcher() -> None:
    store = InMemoryFormStore()
    app = bootstrap.bootstrap(Settings(), store=store)
    service = app.service
    assert service.store is store is app.store
    assert [f.id for f in service.registry.forms()] == [f.id for f in EXAMPLES]
    assert isinstance(service.dispatcher, InProcessDispatcher)
    assert service.dispatcher is app.dispatcher
    assert service.replay_window == timedelta(hours=24)


def test_the_replay_window_comes_from_the_environment() -> None:
    settings = Settings.from_env({"FORMWORK_REPLAY_WINDOW_HOURS": "72"})
    service = bootstrap.bootstrap(settings, store=InMemoryFormStore()).service
    assert service.replay_window == timedelta(hours=72)


def test_the_parts_given_are_used_as_they_are() -> None:
    # GIVEN a service, and parts of a service
    service, deferred, store = make_service(), Deferred(), InMemoryFormStore()
    # WHEN Apps are made with them / THEN they serve exactly those
    whole = bootstrap.bootstrap(SETTINGS, service=service)
    assert (whole.service, whole.store, whole.registry) == (
        service,
        service.store,
        service.registry,
    )
    assert whole.settings is SETTINGS
    parts = bootstrap.bootstrap(Settings(), registry=REGISTRY, store=store, dispatcher=deferred)
    assert parts.service.registry is parts.catalog and parts.catalog.registry is REGISTRY
    assert parts.service.store is store
    assert parts.service.dispatcher is deferred
    # AND dispatcher=None is a service without a dispatcher (the Temporal worker's)
    assert bootstrap.bootstrap(Settings(), store=store, dispatcher=None).service.dispatcher is None
    # AND a service and its parts are not given together
    with pytest.raises(ValueError, match="not both"):
        bootstrap.bootstrap(Settings(), service=service, store=store)
    with pytest.raises(ValueError, match="not both"):  # the service's policy is the App's
        bootstrap.bootstrap(Settings(), service=service, commit_policy=service.policy)


def test_the_dynamodb_adapters_of_an_app_share_one_client() -> None:
    settings = Settings(table_name="formwork-test", dynamodb_endpoint_url="http://127.0.0.1:1")
    app = bootstrap.bootstrap(settings)
    store, log = app.store, app.delivery_log
    assert type(store).__name__ == "DynamoDBFormStore"
    assert type(log).__name__ == "DynamoDBDeliveryLog"
    assert store._client is log._client is app.dynamodb_client  # type: ignore[attr-defined]


def test_the_dynamodb_client_points_at_the_local_endpoint() -> None:
    settings = Settings(dynamodb_endpoint_url="http://127.0.0.1:8999", region="eu-west-1")
    client = bootstrap.build_dynamodb_client(settings)
    assert client.meta.endpoint_url == "http://127.0.0.1:8999"
    assert client.meta.region_name == "eu-west-1"


def test_build_store_builds_the_dynamodb_adapter() -> None:
    pytest.importorskip("forms.storage.dynamodb", reason="the DynamoDB adapter has not landed")
    settings = Settings(table_name="formwork-test", dynamodb_endpoint_url="http://127.0.0.1:1")
    store = bootstrap.build_store(settings)
    assert type(store).__name__ == "DynamoDBFormStore"


def test_an_app_builds_each_part_once_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN an App given nothing, and a builder that counts its calls
    built: list[Settings] = []

    def build(settings: Settings, vocabulary: object = None) -> FormRegistry:
        built.append(settings)
        return REGISTRY

    monkeypatch.setattr(application, "build_registry", build)
    monkeypatch.setenv("TENANT_CLAIM", "org")
    monkeypatch.delenv("TABLE_NAME", raising=False)
    monkeypatch.delenv("FORMWORK_DISPATCH", raising=False)
    app = bootstrap.bootstrap(store=InMemoryFormStore())
    # WHEN the service is asked for twice, from two threads at once
    with ThreadPoolExecutor(2) as pool:
        first, second = pool.map(lambda _: app.service, range(2))
    # THEN it was built once, from the environment's settings
    assert first is second
    assert len(built) == 1 and built[0].tenant_claim == "org"
    assert app.settings is built[0]


def test_this_processs_app_is_made_once_and_builds_nothing_until_asked() -> None:
    # GIVEN a fresh interpreter / WHEN its App is asked for twice
    code = (
        "import sys, json\n"
        "from formwork import process\n"
        "app = process.app()\n"
        "print(json.dumps({'same': process.app() is app, 'built': sorted(app._parts)}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()[-1]
    # THEN it is one App, with nothing built yet (not even the settings)
    assert json.loads(out) == {"same": True, "built": []}


def test_a_misconfigured_deployment_answers_500_without_details(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN an environment with a broken setting, and an App reading it
    monkeypatch.setenv("FORMWORK_MAX_BODY_BYTES", "lots")
    app = bootstrap.bootstrap()
    # WHEN a request arrives / THEN it is a generic JSON 500 (the log has the cause)
    response = invoke(build_event("GET", "/tools"), LocalContext(), app=app)
    assert response["statusCode"] == 500
    assert json.loads(response["body"]) == {
        "error": "internal_error",
        "message": "the request failed on our side",
    }


def test_a_genuine_bug_is_a_bare_500(caplog: pytest.LogCaptureFixture) -> None:
    # GIVEN a store that fails (a bug or an outage below the service)
    class BrokenStore(InMemoryFormStore):
        def list_conversation(self, principal: str, conversation_id: str) -> Any:
            raise RuntimeError("secret internals /var/task/forms/x.py")

    app = app_for(make_service(BrokenStore()), settings=SETTINGS)
    # WHEN a route reaches it
    response = invoke(build_event("GET", "/conversations/conv-1/status"), app=app)
    # THEN the caller gets a generic JSON 500, and only the log has the details
    assert response["statusCode"] == 500
    assert json.loads(response["body"]) == {
        "error": "internal_error",
        "message": "the request failed on our side",
    }
    assert "secret" not in response["body"]
    assert any("unhandled error" in r.getMessage() for r in caplog.records)


# ---------------------------------------------------------------------------- the worker


def test_the_worker_serves_an_app_without_a_dispatcher() -> None:
    from formwork.temporal.worker import serve
    from formwork.worker import worker_app

    # GIVEN the worker's App: same settings, no dispatcher (the worker runs the hooks)
    settings = Settings(table_name="formwork-test", dispatch="temporal")
    assert worker_app(settings).dispatcher is None
    assert worker_app(settings).settings is settings
    # WHEN it is handed an App whose service would dispatch / THEN it refuses before connecting
    dispatching = bootstrap.bootstrap(settings, store=InMemoryFormStore(), dispatcher=Deferred())
    with pytest.raises(ValueError, match="no dispatcher"):
        asyncio.run(serve(dispatching, stop=asyncio.Event()))


def test_a_service_over_a_catalog_brings_its_catalog_and_the_registry_inside_it() -> None:
    # GIVEN a service over a catalog (code forms plus tenants' documents)
    from forms.app.catalog import Catalog
    from forms.storage.documents import InMemoryFormDocumentStore

    catalog = Catalog(REGISTRY, InMemoryFormDocumentStore(), timer=lambda: 0.0)
    service = service_for(registry=catalog)
    # WHEN an App is made with it / THEN its catalog and registry are those, not wrapped again
    app = bootstrap.bootstrap(SETTINGS, service=service)
    assert app.catalog is catalog and app.registry is REGISTRY
    assert app.builder.catalog is catalog


# ---------------------------------------------------------------------------- where data is kept


def stores_of(app: bootstrap.App) -> list[object]:
    """Every store of ``app`` its storage builds, in the order the storage declares them."""
    stores = [app.store, app.documents, app.drafts, app.selections, app.facts, app.page_links]
    return [*stores, app.delivery_log]


def test_one_storage_builds_every_store_of_its_kind() -> None:
    from formwork.storage import InMemoryStorage

    # GIVEN an App on in-memory storage, even with a table named
    app = bootstrap.bootstrap(Settings(table_name="formwork-test"), storage=InMemoryStorage())
    # THEN every store is in memory, the drafts' selections beside its drafts
    stores = stores_of(app)
    assert [type(s).__name__ for s in stores] == [
        "InMemoryFormStore",
        "InMemoryFormDocumentStore",
        "InMemoryDraftStore",
        "InMemorySelectionStore",
        "InMemoryFactStore",
        "InMemoryPageLinkLedger",
        "InMemoryDeliveryLog",
    ]
    assert app.storage.kind == "memory"
    # AND the sweeper reads the store's own due index
    assert type(app.outbox_scan).__name__ == "DueScan"


def test_the_table_storage_builds_every_store_on_one_client() -> None:
    # GIVEN a deployment on a table (no request is made: the adapters are only built)
    client = object()
    app = bootstrap.bootstrap(Settings(table_name="formwork-test"), dynamodb_client=client)
    stores = [*stores_of(app), app.storage.outbox_scan()]
    # THEN each is the DynamoDB adapter, on the App's client and the table
    assert [type(s).__name__ for s in stores] == [
        "DynamoDBFormStore",
        "DynamoDBFormDocumentStore",
        "DynamoDBDraftStore",
        "DynamoDBSelectionStore",
        "DynamoDBFactStore",
        "DynamoDBPageLinkLedger",
        "DynamoDBDeliveryLog",
        "DynamoDBOutboxScan",
    ]
    assert {s._client for s in stores} == {client}  # type: ignore[attr-defined]
    assert app.storage.kind == "dynamodb"


def test_the_storage_is_the_kind_of_the_form_store_given_else_the_tables() -> None:
    # GIVEN an in-memory form store (a test's App): its neighbours are in memory too
    assert bootstrap.bootstrap(Settings(), store=InMemoryFormStore()).storage.kind == "memory"
    assert bootstrap.bootstrap(SETTINGS, service=make_service()).storage.kind == "memory"
    # GIVEN nothing and no table: a store is a ConfigError naming the variable, as before
    with pytest.raises(ConfigError, match="TABLE_NAME is not set"):
        _ = bootstrap.bootstrap(Settings()).store


def test_the_apps_time_ids_and_waits_reach_the_services_it_builds() -> None:
    from forms.app.behind import Behind

    # GIVEN an App given its clock, timer, ids, backoff and work behind answers
    behind, waits = Behind(), []

    def wait(attempt: int) -> None:
        waits.append(attempt)

    app = bootstrap.bootstrap(
        Settings(),
        store=InMemoryFormStore(),
        clock=lambda: 1_900_000_000.0,
        timer=lambda: 42.0,
        new_id=lambda: "fi_given",
        backoff=wait,
        behind=behind,
    )
    # THEN the service and memory use them: a start is named and timed by them
    from forms import Caller

    caller = Caller("acme/alice", "conv-1")
    started = app.service.call(caller, "form_start", "call-1", {"form": "travel-claim"})
    assert started["ok"], started
    stored = app.store.get("fi_given")
    assert stored.created_at.timestamp() == app.now() == 1_900_000_000.0
    assert app.backoff is wait
    memory = app.memory
    assert memory is not None and memory.behind is behind and memory.timer is app.timer
    # AND another App has its own work behind answers
    assert bootstrap.bootstrap(Settings()).behind is not bootstrap.bootstrap(Settings()).behind


def test_one_commit_policy_is_every_services() -> None:
    # GIVEN an App given its backoff, on a replay window the settings set
    def wait(attempt: int) -> None:
        del attempt

    settings = Settings(replay_window_hours=72)
    app = bootstrap.bootstrap(settings, store=InMemoryFormStore(), backoff=wait)
    # THEN the form service, the builder and memory's use cases share one policy: its wait
    # the App's backoff, its window the settings'
    policy = app.commit_policy
    assert app.service.policy is policy and app.builder.policy is policy
    assert app.memory_api.commits is policy
    assert policy.backoff is wait and policy.replay_window == timedelta(hours=72)
    # AND the service's commit loop measures time on the App's timer
    assert app.service.loop.timer is app.timer
    # AND a service handed to bootstrap brings its policy to the builder and memory
    given = service_for(*EXAMPLES)
    other = app_for(given)
    assert other.builder.policy is given.policy and other.memory_api.commits is given.policy
