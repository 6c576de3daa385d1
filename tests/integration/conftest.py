"""Integration fixtures: real services on loopback, started and stopped by the tests.

``local_dynamodb`` runs moto's DynamoDB server single-threaded in a child process for the whole
session; each test that asks for ``table`` gets a fresh table created from ``template.yaml``.
Everything here talks to the services over the network, as production code talks to AWS.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from infra.local.dynamodb import LocalDynamoDB, client, create_table


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/integration/" in str(item.fspath):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def local_dynamodb() -> Iterator[LocalDynamoDB]:
    with LocalDynamoDB() as db:
        yield db


@pytest.fixture
def dynamodb(local_dynamodb: LocalDynamoDB) -> Any:
    """A boto3 DynamoDB client pointed at the local endpoint."""
    return client(local_dynamodb.endpoint)


@pytest.fixture
def table(dynamodb: Any) -> Iterator[str]:
    """A fresh table, shaped as template.yaml declares it; deleted afterwards."""
    name = f"formwork-{uuid.uuid4().hex[:12]}"
    create_table(dynamodb, name)
    yield name
    dynamodb.delete_table(TableName=name)


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
