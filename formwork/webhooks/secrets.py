"""Where webhook secrets come from: a port (``SecretSource``) and its two adapters.

Inbound and outbound secrets are two separate sources, never one (``docs/webhooks.md``,
Secrets): ``formwork.webhook_secrets.build_secret_source`` builds each direction's from its own
variable or its own Secrets Manager prefix.

- ``StaticSecrets``: secrets given in configuration (``FORMWORK_WEBHOOK_SECRETS``,
  ``FORMWORK_NOTIFY_SECRETS``; local, dev and tests).
- ``SecretsManagerSecrets``: AWS Secrets Manager ``<prefix><name>``, read through Powertools'
  ``SecretsProvider`` on an injected boto3 client and kept per container for five minutes.

Powertools and botocore are imported when a Secrets Manager source is built or fails, not with
this module, so a process that never reads Secrets Manager never loads them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any, Literal, Protocol

from formwork.webhooks.signing import check_secret

_log = logging.getLogger("formwork.webhooks")

Direction = Literal["inbound", "outbound"]
"""Inbound: the secrets sources sign requests in with. Outbound: what notifications are signed
with. The two are never the same store."""

SECRET_MAX_AGE = 300
"""Seconds a secret fetched from Secrets Manager is used before it is fetched again (so a
rotation reaches every warm container within five minutes)."""


class SecretsUnavailable(Exception):
    """The secret store could not be read (answered with 503: the sender retries later)."""


class SecretSource(Protocol):
    """The secrets of named senders (inbound sources) or receivers (outbound names)."""

    def keys_for(self, source: str) -> tuple[str, ...]:
        """The secrets ``source`` may sign with, newest first; empty: an unknown source.
        Raises ``SecretsUnavailable`` when the store cannot be read."""
        ...


class StaticSecrets:
    """Secrets from configuration (``FORMWORK_WEBHOOK_SECRETS`` or ``FORMWORK_NOTIFY_SECRETS``)."""

    def __init__(self, secrets: Mapping[str, tuple[str, ...]]) -> None:
        self._secrets = dict(secrets)

    def keys_for(self, source: str) -> tuple[str, ...]:
        return self._secrets.get(source, ())

    def __repr__(self) -> str:
        return f"StaticSecrets(sources={sorted(self._secrets)!r})"


def parse_secret_value(text: str) -> tuple[str, ...]:
    """A Secrets Manager ``SecretString``: the secret itself, or a JSON array of secrets
    (newest first) while rotating. Surrounding whitespace is ignored."""
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            loaded = json.loads(stripped)
        except ValueError:
            loaded = None
        if isinstance(loaded, list) and all(isinstance(k, str) for k in loaded):
            return tuple(k.strip() for k in loaded if k.strip())
    return (stripped,) if stripped else ()


class SecretsManagerSecrets:
    """Secrets from AWS Secrets Manager (``<prefix><name>``), cached per container.

    Reads go through Powertools' ``SecretsProvider``, which keeps each value for ``max_age``
    seconds. Only configured names are ever asked for (an unknown inbound source is refused
    before this), so the number of secrets read is bounded by the configuration. A missing
    secret means no keys (and is logged: the configuration names a secret nobody stored);
    any other failure is ``SecretsUnavailable``.
    """

    def __init__(
        self, client: Any, prefix: str, *, max_age: int = SECRET_MAX_AGE, what: str = "webhook"
    ) -> None:
        from aws_lambda_powertools.utilities.parameters import SecretsProvider

        self._provider = SecretsProvider(boto3_client=client)
        self._prefix = prefix
        self._max_age = max_age
        self._what = what

    def keys_for(self, source: str) -> tuple[str, ...]:
        from aws_lambda_powertools.utilities.parameters.exceptions import GetParameterError

        name = self._prefix + source
        try:
            value = self._provider.get(name, max_age=self._max_age)
        except GetParameterError as exc:
            code = _aws_error_code(exc)
            if code == "ResourceNotFoundException":
                _log.error("%s secret %s does not exist", self._what, name)
                return ()
            _log.error("reading %s secret %s failed: %s", self._what, name, code)
            raise SecretsUnavailable(f"the secret store could not be read ({code})") from None
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value or "")
        keys = parse_secret_value(text)
        if not keys or not all(check_secret(k) for k in keys):
            _log.error("%s secret %s is empty or shorter than allowed", self._what, name)
            raise SecretsUnavailable(f"the {self._what} secret {source!r} is misconfigured")
        return keys


def _aws_error_code(exc: BaseException) -> str:
    """The AWS error code behind a Powertools ``GetParameterError`` (or the error's type)."""
    from botocore.exceptions import ClientError

    cause = exc.__cause__ or exc.__context__
    if isinstance(cause, ClientError):
        return str(cause.response.get("Error", {}).get("Code", "") or "ClientError")
    return type(cause).__name__ if cause is not None else type(exc).__name__
