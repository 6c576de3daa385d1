"""The webhook route's settings, read once from the environment and checked when read: which
sources may call in and what for, whose secrets sign what, how much clock skew.

A bad value fails with a ``ConfigError`` that names the variable, as ``formwork.config`` does
for the service's settings.

| variable | meaning | default |
| --- | --- | --- |
| ``FORMWORK_WEBHOOK_SOURCES`` | JSON: the inbound sources, their tenants and forms | none |
| ``FORMWORK_WEBHOOK_SECRETS`` | JSON ``{source: secret(s)}``: inbound secrets (dev) | unset |
| ``FORMWORK_WEBHOOK_SECRET_PREFIX`` | else Secrets Manager ``<prefix><source>`` | see below |
| ``FORMWORK_NOTIFY_SECRETS`` | JSON ``{name: secret(s)}``: outbound secrets (dev) | unset |
| ``FORMWORK_NOTIFY_SECRET_PREFIX`` | else Secrets Manager ``<prefix><name>`` | see below |
| ``FORMWORK_WEBHOOK_TOLERANCE`` | seconds a signed webhook timestamp may be off | ``300`` |

docs/webhooks.md ("Settings") has the same table; ``tests/unit/test_settings_catalogue.py``
checks that every variable read here is in it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from formwork.config import ConfigError, invalid
from formwork.webhooks import (
    ANY,
    FORM_ID_PATTERN,
    MIN_SECRET_LENGTH,
    TENANT_PATTERN,
    SourceLimits,
    check_secret,
    check_source,
)

DEFAULT_WEBHOOK_SECRET_PREFIX = "formwork/webhooks/"
"""Inbound source ``crm`` reads the Secrets Manager secret ``formwork/webhooks/crm`` by default."""
DEFAULT_NOTIFY_SECRET_PREFIX = "formwork/notify/"
"""``notifier(..., secret="crm")`` signs with the secret ``formwork/notify/crm`` by default."""
DEFAULT_WEBHOOK_TOLERANCE = 300
_SECRET_PREFIX = re.compile(r"[A-Za-z0-9/_+=.@-]{1,256}")

Secrets = tuple[tuple[str, tuple[str, ...]], ...]
"""``(name, secrets)`` pairs, sorted by name; each name's secrets newest first."""


@dataclass(frozen=True, slots=True)
class WebhookSettings:
    """Webhooks: which sources may call in and what for, whose secrets, how much clock skew.

    Inbound (``POST /webhooks/{source}``). ``sources`` (``FORMWORK_WEBHOOK_SOURCES``) are the
    only sources there are, each with its ``SourceLimits``; a request naming any other is
    refused before any secret is looked up. Their secrets are ``secrets``
    (``FORMWORK_WEBHOOK_SECRETS``, local and dev) when set, else the Secrets Manager secret
    ``secret_prefix + source``.

    Outbound (``formwork.aws.notify.notifier``). The secret named ``n`` is ``notify_secrets``'s
    (``FORMWORK_NOTIFY_SECRETS``) when set, else the Secrets Manager secret
    ``notify_prefix + n``. The two directions never share a secret: the prefixes may not
    overlap, and a configured secret may not appear on both sides, so whoever receives
    notifications holds nothing that signs a request in.

    Secrets are never shown in ``repr`` or in error messages.
    """

    sources: tuple[tuple[str, SourceLimits], ...] = ()
    secrets: Secrets | None = field(default=None, repr=False)
    secret_prefix: str = DEFAULT_WEBHOOK_SECRET_PREFIX
    notify_secrets: Secrets | None = field(default=None, repr=False)
    notify_prefix: str = DEFAULT_NOTIFY_SECRET_PREFIX
    tolerance: int = DEFAULT_WEBHOOK_TOLERANCE

    def __post_init__(self) -> None:

        for source, _ in self.sources:
            if not check_source(source):
                invalid(
                    "FORMWORK_WEBHOOK_SOURCES",
                    source,
                    "source names of 1-32 lower-case letters, digits, _ and -",
                )
        _check_secrets("FORMWORK_WEBHOOK_SECRETS", self.secrets)
        _check_secrets("FORMWORK_NOTIFY_SECRETS", self.notify_secrets)
        for variable, prefix in (
            ("FORMWORK_WEBHOOK_SECRET_PREFIX", self.secret_prefix),
            ("FORMWORK_NOTIFY_SECRET_PREFIX", self.notify_prefix),
        ):
            if not _SECRET_PREFIX.fullmatch(prefix):
                invalid(
                    variable,
                    prefix,
                    "a Secrets Manager name prefix (letters, digits, / _ + = . @ -)",
                )
        if self.secret_prefix.startswith(self.notify_prefix) or self.notify_prefix.startswith(
            self.secret_prefix
        ):
            raise ConfigError(
                f"FORMWORK_WEBHOOK_SECRET_PREFIX={self.secret_prefix!r} and "
                f"FORMWORK_NOTIFY_SECRET_PREFIX={self.notify_prefix!r} overlap: inbound and "
                "outbound secrets need prefixes of their own, neither starting with the other"
            )
        inbound = {key for _, keys in self.secrets or () for key in keys}
        shared = [name for name, keys in self.notify_secrets or () if inbound & set(keys)]
        if shared:
            raise ConfigError(
                f"FORMWORK_NOTIFY_SECRETS: the secret of {shared[0]!r} is also an inbound "
                "secret in FORMWORK_WEBHOOK_SECRETS; a notification's receiver could then sign "
                "requests in. Give each direction its own secrets"
            )
        tolerance = self.tolerance
        if (
            isinstance(tolerance, bool)
            or not isinstance(tolerance, int)
            or not 1 <= tolerance <= 3600
        ):
            invalid(
                "FORMWORK_WEBHOOK_TOLERANCE", str(tolerance), "a whole number of seconds, 1-3600"
            )

    def limits(self, source: str) -> SourceLimits | None:
        """What ``source`` may do; None: it is not a configured source."""
        return dict(self.sources).get(source)

    def static_keys(self, source: str) -> tuple[str, ...] | None:
        """The configured inbound secrets of ``source`` (empty: none), or None when inbound
        secrets come from Secrets Manager."""
        if self.secrets is None:
            return None
        return dict(self.secrets).get(source, ())

    def static_notify_keys(self, name: str) -> tuple[str, ...] | None:
        """The configured outbound secrets named ``name`` (empty: none), or None when
        outbound secrets come from Secrets Manager."""
        if self.notify_secrets is None:
            return None
        return dict(self.notify_secrets).get(name, ())

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> WebhookSettings:
        env = os.environ if environ is None else environ

        def get(name: str) -> str:
            return env.get(name, "").strip()

        raw_tolerance = get("FORMWORK_WEBHOOK_TOLERANCE")
        tolerance = DEFAULT_WEBHOOK_TOLERANCE
        if raw_tolerance:
            if not re.fullmatch(r"\d{1,9}", raw_tolerance):
                invalid("FORMWORK_WEBHOOK_TOLERANCE", raw_tolerance, "a whole number of seconds")
            tolerance = int(raw_tolerance)
        raw_sources = get("FORMWORK_WEBHOOK_SOURCES")
        raw_secrets = get("FORMWORK_WEBHOOK_SECRETS")
        raw_notify = get("FORMWORK_NOTIFY_SECRETS")
        return cls(
            sources=parse_webhook_sources(raw_sources) if raw_sources else (),
            secrets=parse_webhook_secrets(raw_secrets) if raw_secrets else None,
            secret_prefix=get("FORMWORK_WEBHOOK_SECRET_PREFIX") or DEFAULT_WEBHOOK_SECRET_PREFIX,
            notify_secrets=parse_webhook_secrets(raw_notify, "FORMWORK_NOTIFY_SECRETS")
            if raw_notify
            else None,
            notify_prefix=get("FORMWORK_NOTIFY_SECRET_PREFIX") or DEFAULT_NOTIFY_SECRET_PREFIX,
            tolerance=tolerance,
        )


def _check_secrets(variable: str, secrets: Secrets | None) -> None:

    for name, keys in secrets or ():
        if not check_source(name):
            invalid(variable, name, "names of 1-32 lower-case letters, digits, _ and -")
        if not keys or not all(check_secret(key) for key in keys):
            raise ConfigError(
                f"{variable}: the secret of {name!r} is not valid: expected whsec_ and the "
                "base64 of 24 to 64 bytes (Standard Webhooks), or another string of at least "
                f"{MIN_SECRET_LENGTH} characters; or a non-empty list of them"
            )


def parse_webhook_secrets(text: str, variable: str = "FORMWORK_WEBHOOK_SECRETS") -> Secrets:
    """``{"crm": "secret", "other": ["new", "old"]}`` as sorted pairs; the text itself is
    never echoed in an error (it holds secrets)."""

    problem = ConfigError(
        f"{variable} is not valid: expected a JSON object mapping each name to its secret or "
        'a list of secrets, such as {"crm": "..."}'
    )
    try:
        loaded = json.loads(text)
    except ValueError:
        raise problem from None
    if not isinstance(loaded, dict):
        raise problem
    pairs: list[tuple[str, tuple[str, ...]]] = []
    for source, value in loaded.items():
        keys = (value,) if isinstance(value, str) else value
        if not isinstance(keys, list | tuple) or not all(isinstance(k, str) for k in keys):
            raise problem
        pairs.append((source, tuple(keys)))
    return tuple(sorted(pairs))


_SOURCES_EXAMPLE = (
    '{"crm": {"tenants": ["acme"], "forms": ["travel-claim"]}, '
    '"intranet": {"tenants": "*", "forms": "*"}}'
)


def parse_webhook_sources(text: str) -> tuple[tuple[str, SourceLimits], ...]:
    """``FORMWORK_WEBHOOK_SOURCES``: each source with the tenants and forms it may start
    sessions for, sorted by source. Both keys are required: ``"*"`` (any) has to be written
    out, a list names each one allowed."""

    variable = "FORMWORK_WEBHOOK_SOURCES"
    try:
        loaded = json.loads(text)
    except ValueError:
        loaded = None
    if not isinstance(loaded, dict):
        invalid(variable, text, f"a JSON object such as {_SOURCES_EXAMPLE}")

    def names(source: str, key: str, value: object, pattern: str) -> frozenset[str] | None:
        if value == ANY:
            return None
        if (
            isinstance(value, list)
            and value
            and all(isinstance(v, str) and re.fullmatch(pattern, v) for v in value)
        ):
            return frozenset(value)
        what = "tenant names" if key == "tenants" else "form ids"
        raise ConfigError(
            f'{variable}: {key!r} of source {source!r} is not valid: expected "*" (any) or '
            f"a non-empty list of {what}"
        )

    sources: list[tuple[str, SourceLimits]] = []
    for source, limits in loaded.items():
        if not isinstance(limits, dict) or set(limits) != {"tenants", "forms"}:
            raise ConfigError(
                f'{variable}: source {source!r} needs exactly the keys "tenants" and '
                f'"forms", each "*" or a list, such as {_SOURCES_EXAMPLE}'
            )
        sources.append(
            (
                source,
                SourceLimits(
                    tenants=names(source, "tenants", limits["tenants"], TENANT_PATTERN),
                    forms=names(source, "forms", limits["forms"], FORM_ID_PATTERN),
                ),
            )
        )
    return tuple(sorted(sources, key=lambda pair: pair[0]))
