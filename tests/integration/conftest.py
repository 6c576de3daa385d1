"""Integration fixtures: real services on loopback, started and stopped by the tests.

``local_dynamodb`` is a DynamoDB on loopback for the whole session, twice over: moto's server,
single-threaded in a child process, and AWS's own DynamoDB Local
(``formwork.infra.local.dynamodb_local``, the session's one ``dynamodb_local``);
every test that uses it runs against both, so what passes is DynamoDB's behaviour, not one
emulator's. Each test that asks for ``table`` gets a fresh table created from ``template.yaml``,
and ``table_settings``, ``store`` and ``app`` are a deployment on it: its settings, its form
store, and its App (``formwork.bootstrap``), every DynamoDB part on the test's client.
Everything here talks to the services over the network, as production code talks to AWS.
A session is one test process: ``make test`` runs two (pytest-xdist), each starting its own
services on free ports, each test file whole in one of them.

The tests that start a whole ``LocalStack`` (``make dev``'s stack) run it on DynamoDB Local,
the stack's default: on ``dynamodb_local``, each stack with a table of its own (one JVM start
for the session), or, in ``test_local_stack.py``, on one the stack starts itself, as
``make dev`` does (and once on moto, which stays selectable).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from forms.storage.dynamodb import DynamoDBFormStore
from formwork.bootstrap import App, bootstrap
from formwork.config import Settings
from formwork.infra.local.dynamodb import LocalDynamoDB, client, create_table
from formwork.infra.local.dynamodb_local import DynamoDBLocal

Endpoint = LocalDynamoDB | DynamoDBLocal


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/integration/" in str(item.fspath):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def dynamodb_local() -> Iterator[DynamoDBLocal]:
    """DynamoDB Local, started once for the session on a free loopback port."""
    with DynamoDBLocal() as server:
        yield server


@pytest.fixture(scope="session", params=["moto", "dynamodb-local"])
def local_dynamodb(request: pytest.FixtureRequest) -> Iterator[Endpoint]:
    """moto's DynamoDB, then DynamoDB Local (``dynamodb_local``): each started once."""
    if request.param == "dynamodb-local":
        yield request.getfixturevalue("dynamodb_local")
        return
    with LocalDynamoDB() as server:
        yield server


@pytest.fixture(scope="session")
def moto_server() -> Iterator[LocalDynamoDB]:
    """moto's server alone, for what only moto serves beside DynamoDB (Secrets Manager)."""
    with LocalDynamoDB() as server:
        yield server


@pytest.fixture
def dynamodb(local_dynamodb: Endpoint) -> Any:
    """A boto3 DynamoDB client pointed at the local endpoint."""
    return client(local_dynamodb.endpoint)


@pytest.fixture
def table(dynamodb: Any) -> Iterator[str]:
    """A fresh table, shaped as template.yaml declares it; deleted afterwards."""
    name = f"formwork-{uuid.uuid4().hex[:12]}"
    create_table(dynamodb, name)
    yield name
    dynamodb.delete_table(TableName=name)


@pytest.fixture
def table_settings(local_dynamodb: Endpoint, table: str) -> Settings:
    """The settings of a deployment on ``table`` at the local endpoint (the rest defaults)."""
    return Settings(table_name=table, dynamodb_endpoint_url=local_dynamodb.endpoint)


@pytest.fixture
def store(dynamodb: Any, table: str) -> DynamoDBFormStore:
    """The DynamoDB form store on ``table``."""
    return DynamoDBFormStore(dynamodb, table)


@pytest.fixture
def app(table_settings: Settings, dynamodb: Any, store: DynamoDBFormStore) -> App:
    """The App of a deployment on ``table``: ``store``, and the other parts built from
    ``table_settings`` on first use, on the test's client."""
    return bootstrap(table_settings, store=store, dynamodb_client=dynamodb)


class Requests:
    """The DynamoDB operations a client sends, by name, in order."""

    def __init__(self, client: Any) -> None:
        self.names: list[str] = []
        client.meta.events.register("before-call.dynamodb.*", self._seen)

    def _seen(self, event_name: str, **_: Any) -> None:
        self.names.append(event_name.rsplit(".", 1)[1])

    def take(self) -> list[str]:
        taken, self.names = self.names, []
        return taken
