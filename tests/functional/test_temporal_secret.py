"""Temporal credentials from Secrets Manager: read at run time, cached, never in the environment.

The secret's value is the API key, or JSON with the API key and/or mTLS material
(``formwork.temporal.client.parse_secret``). Reads go through Powertools' ``SecretsProvider`` over
an in-process stand-in for boto3's client (the same two-call fake the webhook tests use);
``tests/integration/test_temporal_secret.py`` reads through moto's Secrets Manager endpoint.
``Client.connect`` is replaced by a recorder: what matters is what the functions and the
worker would connect with.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from temporalio.client import Client, TLSConfig

from formwork.config import ConfigError, Settings, TemporalSettings
from formwork.temporal import client as temporal_client
from formwork.temporal import connection as temporal_connection
from formwork.temporal.client import (
    Credentials,
    CredentialsUnavailable,
    connect,
    credentials,
    parse_secret,
    read_secret,
    region_of,
)
from tests.support import FakeSecretsManager

API_KEY = "tmprl-api-key-0123456789abcdef"
CERT = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----"
KEY = "-----BEGIN PRIVATE KEY-----\nMIIEfake\n-----END PRIVATE KEY-----"
ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:formwork/temporal-AbCdEf"
CLOUD = {
    "TEMPORAL_ADDRESS": "ns.acct.tmprl.cloud:7233",
    "TEMPORAL_NAMESPACE": "ns.acct",
    "FORMWORK_TEMPORAL_SECRET_ID": ARN,
}


def provider(fake: FakeSecretsManager) -> Any:
    from aws_lambda_powertools.utilities.parameters import SecretsProvider

    return SecretsProvider(boto3_client=fake)


class Recorder:
    """Stands in for ``Client.connect``: records what a client would connect with."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def __call__(self, target: str, **kwargs: Any) -> str:
        self.calls.append({"target": target, **kwargs})
        return "client"


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    recording = Recorder()
    monkeypatch.setattr(Client, "connect", recording)
    return recording


# ---------------------------------------------------------------------------- settings


def test_the_secret_id_is_read_from_the_environment_and_implies_tls() -> None:
    settings = Settings.from_env(CLOUD).temporal
    assert settings.secret_id == ARN
    assert settings.api_key is None
    assert settings.uses_tls
    assert Settings.from_env({}).temporal.secret_id is None


@pytest.mark.parametrize(
    "extra",
    [
        {"TEMPORAL_API_KEY": API_KEY},
        {"TEMPORAL_TLS_CLIENT_CERT_PATH": "/c.pem", "TEMPORAL_TLS_CLIENT_KEY_PATH": "/k.pem"},
        {"FORMWORK_TEMPORAL_SECRET_ID": "not a secret id"},
    ],
)
def test_a_secret_and_plain_credentials_together_are_refused(extra: dict[str, str]) -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({**CLOUD, **extra})
    assert API_KEY not in str(caught.value)


def test_plain_variables_still_work_for_local_and_dev(recorder: Recorder) -> None:
    # GIVEN the development way: the key in TEMPORAL_API_KEY, no secret
    settings = Settings.from_env(
        {**CLOUD, "FORMWORK_TEMPORAL_SECRET_ID": "", "TEMPORAL_API_KEY": API_KEY}
    )

    # WHEN a client connects (nothing is asked of Secrets Manager)
    def no_reads(secret_id: str) -> str:
        raise AssertionError("no secret should be read")

    asyncio.run(connect(settings.temporal, read=no_reads))
    # THEN it uses the variable's key, over TLS
    (call,) = recorder.calls
    assert (call["api_key"], call["tls"]) == (API_KEY, True)


# ---------------------------------------------------------------------------- the secret's value


def test_a_plain_secret_is_the_api_key() -> None:
    assert parse_secret(f"  {API_KEY}\n", ARN) == Credentials(api_key=API_KEY)


def test_a_json_secret_carries_the_api_key_and_mtls_material() -> None:
    text = json.dumps(
        {
            "api_key": API_KEY,
            "tls_client_cert": CERT,
            "tls_client_key": KEY,
            "tls_server_ca_cert": CERT,
        }
    )
    found = parse_secret(text, ARN)
    assert found.api_key == API_KEY
    assert found.client_cert == CERT.encode() + b"\n"
    assert found.client_key == KEY.encode() + b"\n"
    assert found.server_ca == CERT.encode() + b"\n"
    assert API_KEY not in repr(found) and "MIIEfake" not in repr(found)


@pytest.mark.parametrize(
    "value",
    [
        "",
        "{not json",
        "{}",
        json.dumps({"apikey": API_KEY}),
        json.dumps({"api_key": ""}),
        json.dumps({"tls_client_cert": CERT}),
        json.dumps({"tls_server_ca_cert": CERT}),
        json.dumps([API_KEY]),
    ],
)
def test_a_malformed_secret_is_a_config_error_that_does_not_echo_it(value: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_secret(value, ARN)
    assert ARN in str(caught.value)
    assert API_KEY not in str(caught.value) and "MIIBfake" not in str(caught.value)


# ---------------------------------------------------------------------------- reading it


def test_the_secret_is_read_once_and_kept() -> None:
    fake = FakeSecretsManager({ARN: API_KEY})
    cached = provider(fake)
    assert read_secret(ARN, provider=cached) == API_KEY
    assert read_secret(ARN, provider=cached) == API_KEY
    assert fake.calls == [ARN]


@pytest.mark.parametrize("error", ["AccessDeniedException", "ResourceNotFoundException"])
def test_a_secret_that_cannot_be_read_is_unavailable(error: str) -> None:
    with pytest.raises(CredentialsUnavailable, match=error):
        read_secret(ARN, provider=provider(FakeSecretsManager({}, error=error)))


def test_an_arn_names_the_region_to_read_it_in() -> None:
    assert region_of(ARN) == "eu-west-1"
    assert region_of("formwork/temporal") is None


# ---------------------------------------------------------------------------- connecting


def test_the_functions_connect_with_the_key_from_the_secret(recorder: Recorder) -> None:
    # GIVEN a deployment that passes only the secret's ARN
    fake = FakeSecretsManager({ARN: API_KEY})
    cached = provider(fake)
    settings = Settings.from_env(CLOUD).temporal
    # WHEN a client connects
    asyncio.run(connect(settings, read=lambda sid: read_secret(sid, provider=cached)))
    # THEN it authenticates with the secret's key, over TLS, to the configured endpoint
    (call,) = recorder.calls
    assert call["target"] == "ns.acct.tmprl.cloud:7233"
    assert (call["namespace"], call["api_key"], call["tls"]) == ("ns.acct", API_KEY, True)
    assert fake.calls == [ARN]


def test_mtls_material_from_the_secret_becomes_the_tls_config(recorder: Recorder) -> None:
    secret = json.dumps({"tls_client_cert": CERT, "tls_client_key": KEY})
    settings = TemporalSettings(address="ns.acct.tmprl.cloud:7233", secret_id=ARN)
    asyncio.run(connect(settings, read=lambda sid: secret))
    (call,) = recorder.calls
    assert call["api_key"] is None
    tls = call["tls"]
    assert isinstance(tls, TLSConfig)
    assert (tls.client_cert, tls.client_private_key) == (
        CERT.encode() + b"\n",
        KEY.encode() + b"\n",
    )
    assert tls.server_root_ca_cert is None


def test_a_server_ca_in_the_secret_and_in_a_file_is_ambiguous(tmp_path: Any) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text(CERT)
    settings = TemporalSettings(address="h:7233", secret_id=ARN, tls_ca=str(ca))
    secret = json.dumps({"api_key": API_KEY, "tls_server_ca_cert": CERT})
    with pytest.raises(ConfigError, match="TEMPORAL_TLS_SERVER_CA_CERT_PATH"):
        credentials(settings, read=lambda sid: secret)
    found = credentials(settings, read=lambda sid: API_KEY)
    assert (found.api_key, found.server_ca) == (API_KEY, CERT.encode())


def test_the_lambda_connection_reads_the_secret_when_it_connects(
    recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the functions' connection for a deployment's settings, the store faked
    fake = FakeSecretsManager({ARN: API_KEY})
    monkeypatch.setattr(temporal_client, "_providers", {"eu-west-1": provider(fake)})
    settings = Settings.from_env(CLOUD).temporal
    connection = temporal_connection.connection_for(settings)
    try:
        # WHEN it connects (the first dispatch of a warm container)
        connected: Any = connection.run(connection.client(), timeout=10)
        assert connected == "client"
    finally:
        connection.close()
        monkeypatch.delitem(temporal_connection._connections, settings)
    # THEN the secret was read, in the ARN's region, and its key used
    assert fake.calls == [ARN]
    (call,) = recorder.calls
    assert call["api_key"] == API_KEY and call["identity"] == "formwork-lambda"
