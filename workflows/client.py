"""Connecting to Temporal from configuration (``formwork.temporal.settings.TemporalSettings``).

Three shapes, one set of variables:

* local dev server or a self-hosted cluster without TLS: ``TEMPORAL_ADDRESS`` (and
  ``TEMPORAL_NAMESPACE``); nothing else.
* Temporal Cloud with an API key: ``TEMPORAL_ADDRESS`` (the namespace's or the region's
  endpoint), ``TEMPORAL_NAMESPACE`` (``<namespace>.<account>``), and the key. TLS is implied.
* mTLS (Temporal Cloud with certificates, or a self-hosted cluster): a client certificate and
  key, optionally ``TEMPORAL_TLS_SERVER_CA_CERT_PATH`` and ``TEMPORAL_TLS_SERVER_NAME``.

Where the credentials come from:

* deployed: ``FORMWORK_TEMPORAL_SECRET_ID`` names a Secrets Manager secret, read here when
  connecting (through Powertools' ``SecretsProvider``, kept for ``SECRET_MAX_AGE`` seconds).
  Its value is the API key itself, or a JSON object with any of ``api_key``,
  ``tls_client_cert`` and ``tls_client_key`` (PEM, both or neither) and
  ``tls_server_ca_cert`` (PEM). The template passes the secret's ARN, never its value.
* local and development: ``TEMPORAL_API_KEY``, and the PEM files
  ``TEMPORAL_TLS_CLIENT_CERT_PATH`` / ``TEMPORAL_TLS_CLIENT_KEY_PATH``.

The variable names other than ``FORMWORK_TEMPORAL_SECRET_ID`` are those of Temporal's CLI and
SDK environment configuration.

A ``Client`` belongs to the event loop it connected on; keep one per process (the worker has
its own; the Lambda functions keep theirs in ``formwork.temporal.connection``).
``connect_service`` connects the gRPC services alone, with the same settings: importing this
module does not load ``temporalio.client`` (``connect`` does), so a process that only reads a
task queue's backlog never pays for it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from temporalio.service import ConnectConfig, ServiceClient, TLSConfig

from formwork.temporal.settings import ConfigError, TemporalSettings

if TYPE_CHECKING:
    from temporalio.client import Client

_log = logging.getLogger("formwork.temporal")

SECRET_MAX_AGE = 300
"""Seconds a Temporal secret read from Secrets Manager is reused before it is read again."""
SECRET_KEYS = frozenset({"api_key", "tls_client_cert", "tls_client_key", "tls_server_ca_cert"})

SecretReader = Callable[[str], str]
"""Reads a secret's value by its id (name or ARN)."""


class CredentialsUnavailable(RuntimeError):
    """The Temporal secret could not be read (the store failed or refused); a later connect
    tries again."""


@dataclass(frozen=True, slots=True)
class Credentials:
    """What a client authenticates with: an API key and/or an mTLS client certificate."""

    api_key: str | None = field(default=None, repr=False)
    client_cert: bytes | None = None
    client_key: bytes | None = field(default=None, repr=False)
    server_ca: bytes | None = None


def parse_secret(text: str, secret_id: str) -> Credentials:
    """A Temporal secret's value: the API key, or a JSON object of ``SECRET_KEYS``. Errors
    name the secret and the problem, never the value."""
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):  # no API key starts so: JSON was meant
        if not stripped:
            raise ConfigError(f"the Temporal secret {secret_id} is empty")
        return Credentials(api_key=stripped)
    try:
        loaded = json.loads(stripped)
    except ValueError:
        raise ConfigError(f"the Temporal secret {secret_id} is not valid JSON") from None
    if not isinstance(loaded, dict) or not loaded:
        raise ConfigError(f"the Temporal secret {secret_id} is an empty or non-object JSON")
    unknown = sorted(str(k) for k in loaded if k not in SECRET_KEYS)
    if unknown:
        raise ConfigError(
            f"the Temporal secret {secret_id} has unknown keys {unknown}: expected "
            f"{sorted(SECRET_KEYS)}"
        )
    if not all(isinstance(v, str) and v.strip() for v in loaded.values()):
        raise ConfigError(f"the Temporal secret {secret_id} holds an empty or non-text value")
    values: dict[str, str] = {k: v.strip() for k, v in loaded.items()}
    if ("tls_client_cert" in values) != ("tls_client_key" in values):
        raise ConfigError(
            f"the Temporal secret {secret_id} needs both tls_client_cert and tls_client_key, "
            "or neither"
        )
    if "api_key" not in values and "tls_client_cert" not in values:
        raise ConfigError(
            f"the Temporal secret {secret_id} holds neither an api_key nor a client certificate"
        )

    def pem(key: str) -> bytes | None:
        value = values.get(key)
        return value.encode("utf-8") + b"\n" if value is not None else None

    return Credentials(
        api_key=values.get("api_key"),
        client_cert=pem("tls_client_cert"),
        client_key=pem("tls_client_key"),
        server_ca=pem("tls_server_ca_cert"),
    )


def credentials(settings: TemporalSettings, read: SecretReader | None = None) -> Credentials:
    """The credentials ``settings`` name: from the secret when ``secret_id`` is set (read
    with ``read``, default Secrets Manager), else from the variables and PEM files."""
    server_ca = _read(settings.tls_ca, "TEMPORAL_TLS_SERVER_CA_CERT_PATH")
    if settings.secret_id is None:
        return Credentials(
            api_key=settings.api_key,
            client_cert=_read(settings.tls_cert, "TEMPORAL_TLS_CLIENT_CERT_PATH"),
            client_key=_read(settings.tls_key, "TEMPORAL_TLS_CLIENT_KEY_PATH"),
            server_ca=server_ca,
        )
    found = parse_secret((read or read_secret)(settings.secret_id), settings.secret_id)
    if found.server_ca is not None and server_ca is not None:
        raise ConfigError(
            f"the Temporal secret {settings.secret_id} has tls_server_ca_cert and "
            "TEMPORAL_TLS_SERVER_CA_CERT_PATH is set too: keep one"
        )
    return Credentials(
        api_key=found.api_key,
        client_cert=found.client_cert,
        client_key=found.client_key,
        server_ca=found.server_ca or server_ca,
    )


def tls_config(settings: TemporalSettings, found: Credentials | None = None) -> bool | TLSConfig:
    """``False`` (plain), ``True`` (TLS, system roots) or a ``TLSConfig`` with the client
    certificate, server CA and server name (``found``: the credentials, else read from the
    settings' files)."""
    if not settings.uses_tls:
        return False
    creds = found if found is not None else credentials(settings)
    if not (creds.client_cert or creds.server_ca or settings.tls_server_name):
        return True
    return TLSConfig(
        client_cert=creds.client_cert,
        client_private_key=creds.client_key,
        server_root_ca_cert=creds.server_ca,
        domain=settings.tls_server_name,
    )


async def connect(
    settings: TemporalSettings, *, identity: str | None = None, read: SecretReader | None = None
) -> Client:
    """A client for ``settings`` (call it on the loop that will use the client). A secret is
    read off the loop, in a thread."""
    from temporalio.client import Client

    found = await asyncio.to_thread(credentials, settings, read)
    return await Client.connect(
        settings.address,
        namespace=settings.namespace,
        api_key=found.api_key,
        tls=tls_config(settings, found),
        identity=identity,
    )


async def connect_service(
    settings: TemporalSettings, *, identity: str | None = None, read: SecretReader | None = None
) -> ServiceClient:
    """The gRPC services alone for ``settings``, connected as ``connect`` connects (what its
    client is built on): same address, TLS and credentials; requests name the namespace. For
    a process that needs no ``Client`` (the backlog function), which this module's import does
    not load."""
    found = await asyncio.to_thread(credentials, settings, read)
    return await ServiceClient.connect(
        ConnectConfig(
            target_host=settings.address,
            api_key=found.api_key,
            tls=tls_config(settings, found),
            identity=identity or "",
        )
    )


# ---------------------------------------------------------------------------- Secrets Manager

_providers: dict[str | None, Any] = {}
_providers_lock = threading.Lock()


def region_of(secret_id: str) -> str | None:
    """The region an ARN names (``arn:aws:secretsmanager:<region>:...``); None for a name."""
    parts = secret_id.split(":")
    if secret_id.startswith("arn:") and len(parts) >= 7 and parts[3]:
        return parts[3]
    return None


def secrets_provider(region: str | None) -> Any:
    """This process's Powertools ``SecretsProvider`` for ``region`` (None: the one boto3
    finds, ``AWS_REGION`` in Lambda), built on first use. ``AWS_ENDPOINT_URL_SECRETS_MANAGER``
    points it at a local endpoint, as boto3 reads that itself."""
    from aws_lambda_powertools.utilities.parameters import SecretsProvider

    with _providers_lock:
        found = _providers.get(region)
        if found is None:
            import boto3
            from botocore.config import Config

            config = Config(
                retries={"mode": "standard", "max_attempts": 2}, connect_timeout=2, read_timeout=3
            )
            client = boto3.client("secretsmanager", region_name=region, config=config)
            found = _providers[region] = SecretsProvider(boto3_client=client)
        return found


def read_secret(secret_id: str, *, provider: Any = None) -> str:
    """The value of the secret ``secret_id`` (a name or an ARN) from Secrets Manager, through
    ``provider`` (default: the process's, for the ARN's region), which keeps it for
    ``SECRET_MAX_AGE`` seconds. ``CredentialsUnavailable`` when it cannot be read."""
    from aws_lambda_powertools.utilities.parameters.exceptions import GetParameterError
    from botocore.exceptions import BotoCoreError

    try:
        source = provider if provider is not None else secrets_provider(region_of(secret_id))
        value = source.get(secret_id, max_age=SECRET_MAX_AGE)
    except (GetParameterError, BotoCoreError) as exc:
        cause = exc.__cause__ or exc.__context__ or exc
        code = type(cause).__name__
        response = getattr(cause, "response", None)
        if isinstance(response, dict):
            code = str(response.get("Error", {}).get("Code") or code)
        _log.error("reading the Temporal secret %s failed: %s", secret_id, code)
        raise CredentialsUnavailable(
            f"the Temporal secret {secret_id} could not be read ({code})"
        ) from None
    return value.decode("utf-8") if isinstance(value, bytes) else str(value or "")


def _read(path: str | None, variable: str) -> bytes | None:
    if path is None:
        return None
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"{variable}={path!r} cannot be read: {exc}") from exc
