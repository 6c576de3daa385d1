"""The two secret sources pass the same contract: configuration, and Secrets Manager (moto's
implementation of its API, in process, reached through boto3 as production reaches AWS)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping

import boto3
import pytest
from moto import mock_aws

from formwork.webhooks.secrets import (
    SecretsManagerSecrets,
    SecretSource,
    SecretsUnavailable,
    StaticSecrets,
)
from formwork.webhooks.secrets_contract import CURRENT, Holding, SecretSourceContract

PREFIX = "formwork/webhooks/"


class TestStaticSecrets(SecretSourceContract):
    @pytest.fixture
    def holding(self) -> Holding:
        return StaticSecrets


class TestSecretsManagerSecrets(SecretSourceContract):
    @pytest.fixture
    def holding(self) -> Iterator[Holding]:
        with mock_aws():
            client = boto3.client("secretsmanager", region_name="eu-west-1")

            def holding(secrets: Mapping[str, tuple[str, ...]]) -> SecretSource:
                for name, keys in secrets.items():
                    value = keys[0] if len(keys) == 1 else json.dumps(list(keys))
                    client.create_secret(Name=PREFIX + name, SecretString=value)
                return SecretsManagerSecrets(client, PREFIX)

            yield holding


def test_a_stored_secret_too_short_to_sign_with_is_unavailable_not_used() -> None:
    with mock_aws():
        client = boto3.client("secretsmanager", region_name="eu-west-1")
        client.create_secret(Name=PREFIX + "crm", SecretString="short")
        source = SecretsManagerSecrets(client, PREFIX)
        with pytest.raises(SecretsUnavailable):
            source.keys_for("crm")


def test_a_rotation_array_with_blanks_keeps_the_keys_only() -> None:
    with mock_aws():
        client = boto3.client("secretsmanager", region_name="eu-west-1")
        client.create_secret(Name=PREFIX + "crm", SecretString=json.dumps([CURRENT, " "]))
        assert SecretsManagerSecrets(client, PREFIX).keys_for("crm") == (CURRENT,)
