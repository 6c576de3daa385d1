"""Settings from the environment, the composition root, and what the handler costs to import."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from forms import FormRegistry, InMemoryFormStore
from forms.examples import EXAMPLES
from formwork import bootstrap
from formwork.config import ConfigError, Settings
from functions.local import LocalContext, invoke
from tests.functional.conftest import SETTINGS, build_event, make_service

ROOT = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------------------- settings


def test_settings_defaults_from_an_empty_environment() -> None:
    settings = Settings.from_env({})
    assert settings == Settings()
    assert settings.table_name is None
    assert settings.region == "us-east-1"
    assert settings.tenant_claim is None
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
    assert Settings.from_env({"TENANT_CLAIM": "  "}).tenant_claim is None


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
    # WHEN the service is built / THEN it serves that registry itself
    service = bootstrap.build_service(settings, store=InMemoryFormStore())
    assert service.registry is REGISTRY


def test_build_service_wires_the_registry_a_store_and_a_dispatcher() -> None:
    store = InMemoryFormStore()
    service = bootstrap.build_service(Settings(), store=store)
    assert service.store is store
    assert [f.id for f in service.registry.forms()] == [f.id for f in EXAMPLES]
    assert service.dispatcher is not None
    assert service.replay_window == timedelta(hours=24)


def test_the_replay_window_comes_from_the_environment() -> None:
    settings = Settings.from_env({"FORMWORK_REPLAY_WINDOW_HOURS": "72"})
    service = bootstrap.build_service(settings, store=InMemoryFormStore())
    assert service.replay_window == timedelta(hours=72)


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


def test_a_warm_container_keeps_one_service(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN no installed service, and a builder that counts its calls
    built: list[Any] = []

    def build(settings: Settings, store: Any = None) -> Any:
        built.append(settings)
        return make_service()

    monkeypatch.setattr(bootstrap, "build_service", build)
    monkeypatch.setenv("TENANT_CLAIM", "org")
    bootstrap.reset()
    try:
        # WHEN the service is asked for twice
        first, second = bootstrap.service(), bootstrap.service()
        # THEN it was built once, from the environment's settings
        assert first is second
        assert len(built) == 1 and built[0].tenant_claim == "org"
    finally:
        bootstrap.reset()


def test_use_service_restores_what_was_there() -> None:
    outer, inner = make_service(), make_service()
    bootstrap.install(outer, SETTINGS)
    try:
        with bootstrap.use_service(inner, settings=Settings(max_body_bytes=10)):
            assert bootstrap.service() is inner
            assert bootstrap.settings().max_body_bytes == 10
        assert bootstrap.service() is outer
        assert bootstrap.settings() is SETTINGS
    finally:
        bootstrap.reset()


def test_a_misconfigured_deployment_answers_500_without_details(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN an environment with a broken setting and nothing installed
    monkeypatch.setenv("FORMWORK_MAX_BODY_BYTES", "lots")
    bootstrap.reset()
    try:
        # WHEN a request arrives / THEN it is a generic JSON 500 (the log has the cause)
        response = invoke(build_event("GET", "/tools"), LocalContext())
    finally:
        bootstrap.reset()
    assert response["statusCode"] == 500
    assert json.loads(response["body"]) == {
        "error": "internal_error",
        "message": "the request failed on our side",
    }


# ---------------------------------------------------------------------------- cold start


def test_importing_the_handler_does_not_import_boto3() -> None:
    # GIVEN a fresh interpreter / WHEN the handler module is imported and GET /tools served
    code = (
        "import sys, json\n"
        "from functions.local import invoke\n"
        "from tests.functional.conftest import build_event\n"
        "from formwork.bootstrap import use_service\n"
        "with use_service():\n"
        "    r = invoke(build_event('GET', '/tools'))\n"
        "print(json.dumps({'status': r['statusCode'], "
        "'boto3': 'boto3' in sys.modules, "
        "'adapter': 'forms.storage.dynamodb' in sys.modules}))\n"
    )
    out = (
        subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    # THEN neither boto3 nor the DynamoDB adapter was loaded: only a request that needs the
    # store pays for them (botocore itself comes in with the X-Ray SDK that Tracer imports)
    assert json.loads(out) == {"status": 200, "boto3": False, "adapter": False}


def test_a_genuine_bug_is_a_bare_500(caplog: pytest.LogCaptureFixture) -> None:
    # GIVEN a store that fails (a bug or an outage below the service)
    class BrokenStore(InMemoryFormStore):
        def list_conversation(self, principal: str, conversation_id: str) -> Any:
            raise RuntimeError("secret internals /var/task/forms/x.py")

    with bootstrap.use_service(make_service(BrokenStore()), settings=SETTINGS):
        # WHEN a route reaches it
        response = invoke(build_event("GET", "/conversations/conv-1/status"))
    # THEN the caller gets a generic JSON 500, and only the log has the details
    assert response["statusCode"] == 500
    assert json.loads(response["body"]) == {
        "error": "internal_error",
        "message": "the request failed on our side",
    }
    assert "secret" not in response["body"]
    assert any("unhandled error" in r.getMessage() for r in caplog.records)
