"""The Temporal secret through a real Secrets Manager endpoint (moto's server, over the network).

The functions and the worker find the endpoint the way boto3 does
(``AWS_ENDPOINT_URL_SECRETS_MANAGER``), build their Powertools provider for the region the
secret's ARN names, and connect with what the secret holds. ``Client.connect`` is replaced by
a recorder: the local Temporal dev server speaks neither TLS nor API keys.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import boto3
import pytest
from temporalio.client import Client

from formwork.config import Settings
from formwork.infra.local.dynamodb import LocalDynamoDB
from formwork.temporal import client as temporal_client
from formwork.temporal.client import connect

API_KEY = "tmprl-api-key-from-moto-0123456789"


@pytest.fixture
def secrets(moto_server: LocalDynamoDB, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A Secrets Manager client on moto's endpoint, and this process pointed at it."""
    for name, value in {
        "AWS_ENDPOINT_URL_SECRETS_MANAGER": moto_server.endpoint,
        "AWS_ACCESS_KEY_ID": "local",
        "AWS_SECRET_ACCESS_KEY": "local",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(temporal_client, "_providers", {})
    return boto3.client(
        "secretsmanager",
        endpoint_url=moto_server.endpoint,
        region_name="eu-west-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )


def test_a_client_connects_with_the_secret_read_from_secrets_manager(
    secrets: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the API key stored as a secret (in eu-west-1), and only its ARN in the settings
    created = secrets.create_secret(
        Name=f"formwork-{uuid.uuid4().hex[:8]}/temporal",
        SecretString=json.dumps({"api_key": API_KEY}),
    )
    arn = created["ARN"]
    settings = Settings.from_env(
        {"TEMPORAL_ADDRESS": "ns.acct.tmprl.cloud:7233", "FORMWORK_TEMPORAL_SECRET_ID": arn}
    ).temporal
    calls: list[dict[str, Any]] = []

    async def record(target: str, **kwargs: Any) -> str:
        calls.append(kwargs)
        return "client"

    monkeypatch.setattr(Client, "connect", record)
    # WHEN the process connects, then connects again after the key was rotated in the store
    asyncio.run(connect(settings))
    secrets.put_secret_value(SecretId=arn, SecretString="tmprl-rotated-key-000000000000")
    asyncio.run(connect(settings))
    # THEN both connections used the stored key: read once, kept for SECRET_MAX_AGE
    assert [(c["api_key"], c["tls"]) for c in calls] == [(API_KEY, True), (API_KEY, True)]
    assert set(temporal_client._providers) == {"eu-west-1"}
