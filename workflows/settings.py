"""The Temporal adapter's settings: how to reach Temporal, checked when made.

``TemporalSettings`` is a value the adapter is given (``formwork.temporal.client.connect``,
``formwork.temporal.connection.connection_for``); ``formwork.config`` reads it from the environment,
with every other setting, and re-exports it. ``ConfigError`` and ``invalid`` are here for the same
reason: the adapter raises them (a bad value, an unreadable secret) and imports nothing of
``formwork``, the composition root that imports the adapter; everyone else takes them from
``formwork.config``. ``DispatchSettings`` is what the dispatcher reads of the deployment's
settings, which it is given. Standard library only: every Lambda cold start imports this
module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NoReturn, Protocol

DEFAULT_TEMPORAL_ADDRESS = "localhost:7233"
DEFAULT_TEMPORAL_NAMESPACE = "default"
DEFAULT_TASK_QUEUE = "formwork-hooks"

_ADDRESS = re.compile(r"[A-Za-z0-9_.\[\]:-]+:\d{1,5}")
_NAME = re.compile(r"[A-Za-z0-9_.@-]{1,200}")
_SECRET_ID = re.compile(r"[A-Za-z0-9/_+=.@:-]{1,2048}")
"""A Secrets Manager ``SecretId``: a secret's name or its ARN."""


class ConfigError(ValueError):
    """An environment variable is missing or holds a value the tool API cannot use."""


def invalid(variable: str, value: str, expected: str) -> NoReturn:
    """Raise the ``ConfigError`` of a bad ``value`` of ``variable`` (shortened if long)."""
    shown = value if len(value) <= 80 else value[:77] + "..."
    raise ConfigError(f"{variable}={shown!r} is not valid: expected {expected}")


@dataclass(frozen=True, slots=True)
class TemporalSettings:
    """How to reach Temporal: a local dev server, a self-hosted cluster, or Temporal Cloud.

    The variables are the ones Temporal's own CLI and SDKs read (``temporal env``), so one
    environment serves the worker, the functions and the ``temporal`` command alike.

    TLS is on when ``tls`` is true, when an API key is set (Temporal Cloud), when any of
    the certificate paths is set (mTLS), or when the credentials come from Secrets Manager
    (``secret_id``); the paths and the secret are read when connecting, not here.

    ``secret_id`` (``FORMWORK_TEMPORAL_SECRET_ID``) is how a deployment passes credentials:
    the secret holds the API key, or a JSON object with the API key and/or the mTLS client
    certificate and key (``formwork.temporal.client`` reads it). ``api_key`` and the certificate
    paths are for local and development use; neither may be set beside a secret.
    """

    address: str = DEFAULT_TEMPORAL_ADDRESS
    namespace: str = DEFAULT_TEMPORAL_NAMESPACE
    task_queue: str = DEFAULT_TASK_QUEUE
    api_key: str | None = field(default=None, repr=False)
    tls: bool = False
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_ca: str | None = None
    tls_server_name: str | None = None
    secret_id: str | None = None

    def __post_init__(self) -> None:
        if not _ADDRESS.fullmatch(self.address):
            invalid("TEMPORAL_ADDRESS", self.address, "host:port, for example localhost:7233")
        if not _NAME.fullmatch(self.namespace):
            invalid("TEMPORAL_NAMESPACE", self.namespace, "a namespace name")
        if not _NAME.fullmatch(self.task_queue):
            invalid("TEMPORAL_TASK_QUEUE", self.task_queue, "a task queue name")
        if (self.tls_cert is None) != (self.tls_key is None):
            invalid(
                "TEMPORAL_TLS_CLIENT_CERT_PATH"
                if self.tls_cert is None
                else "TEMPORAL_TLS_CLIENT_KEY_PATH",
                "",
                "both TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH, or neither",
            )
        if self.secret_id is not None:
            if not _SECRET_ID.fullmatch(self.secret_id):
                invalid(
                    "FORMWORK_TEMPORAL_SECRET_ID",
                    self.secret_id,
                    "a Secrets Manager secret name or ARN",
                )
            if self.api_key is not None or self.tls_cert is not None:
                raise ConfigError(
                    "FORMWORK_TEMPORAL_SECRET_ID is set together with TEMPORAL_API_KEY or "
                    "TEMPORAL_TLS_CLIENT_CERT_PATH/TEMPORAL_TLS_CLIENT_KEY_PATH: take the "
                    "credentials from the secret or from those variables, not both"
                )

    @property
    def uses_tls(self) -> bool:
        return bool(self.tls or self.api_key or self.tls_cert or self.tls_ca or self.secret_id)


class DispatchSettings(Protocol):
    """What the dispatcher reads of a deployment's settings
    (``formwork.temporal.dispatch.TemporalDispatcher.from_settings``): ``formwork.config.Settings``
    has it, and this shell is given it rather than importing it."""

    @property
    def temporal(self) -> TemporalSettings: ...
    @property
    def hook_wait_ms(self) -> int: ...
    @property
    def hook_max_attempts(self) -> int: ...
    @property
    def hook_timeout_seconds(self) -> int: ...
    @property
    def hook_heartbeat_seconds(self) -> int: ...
