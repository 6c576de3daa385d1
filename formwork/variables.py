"""Reading settings from environment variables: each kind of value and its ``ConfigError``.

``Variables`` is an environment as ``formwork.config.Settings.from_env`` reads it: an empty
value counts as unset, and a value that is not of its kind (a whole number, seconds, a switch,
the context claims, ``TEMPORAL_TLS``) is the ``ConfigError`` naming its variable; what a
setting may hold once read is ``Settings``' to check. The context claims are read and checked
here, as a value and as a setting.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from formwork.temporal.settings import (
    DEFAULT_TASK_QUEUE,
    DEFAULT_TEMPORAL_ADDRESS,
    DEFAULT_TEMPORAL_NAMESPACE,
    TemporalSettings,
    invalid,
)

DEFAULT_CONTEXT_CLAIMS: tuple[tuple[str, str], ...] = (
    ("person.locale", "locale"),
    ("person.timezone", "zoneinfo"),
    ("person.currency", "currency"),
)
"""Which verified claim gives each context default (fact key, claim name): OpenID Connect's
standard ``locale`` and ``zoneinfo``, and a ``currency`` claim a deployment's identity
provider may add."""
OFF_VALUES = frozenset({"", "off", "none"})
"""How ``FORMWORK_CONTEXT_CLAIMS`` turns context defaults off (any case)."""
_FACT_KEY = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+")
"""``forms.memory.vocabulary.KEY_PATTERN`` (this module imports no engine)."""
_CONTEXT_CLAIM = re.compile(r"[A-Za-z0-9_:./#-]{1,128}")
"""A claim name, namespaced ones included (``https://example.com/currency``, as Auth0 asks
custom claims to be)."""
SWITCH_VALUES = {"on": True, "off": False, "true": True, "false": False, "1": True, "0": False}
"""How ``FORMWORK_MEMORY`` may be spelled (any case)."""
_WHOLE = re.compile(r"\d{1,9}")
_SECONDS = re.compile(r"\d{1,5}(\.\d{1,3})?")
_TRUE_OR_FALSE = {"true": True, "false": False, "1": True, "0": False}
"""How ``TEMPORAL_TLS`` may be spelled (any case)."""
_CONTEXT_EXPECTED = (
    "fact.key=claim pairs, comma-separated, each fact key once (such as "
    "person.locale=locale,person.timezone=zoneinfo), or off"
)


def parse_context_claims(raw: str) -> tuple[tuple[str, str], ...]:
    """``FORMWORK_CONTEXT_CLAIMS``'s value as ``(fact key, claim name)`` pairs; empty or
    ``off``: none. A malformed value is a ``ConfigError``."""
    text = raw.strip()
    if text.lower() in OFF_VALUES:
        return ()
    pairs = []
    for item in text.split(","):
        key, sep, claim = (part.strip() for part in item.partition("="))
        if not sep:
            invalid("FORMWORK_CONTEXT_CLAIMS", raw, _CONTEXT_EXPECTED)
        pairs.append((key, claim))
    found = tuple(pairs)
    check_context_claims(found, raw)
    return found


def check_context_claims(pairs: object, raw: str | None = None) -> None:
    """Each pair a fact key and a claim name, each fact key once."""
    shown = raw if raw is not None else repr(pairs)
    if not isinstance(pairs, tuple):
        invalid("FORMWORK_CONTEXT_CLAIMS", shown, _CONTEXT_EXPECTED)
    keys: set[str] = set()
    for pair in pairs:
        if (
            not isinstance(pair, tuple)
            or len(pair) != 2
            or not all(isinstance(part, str) for part in pair)
            or not _FACT_KEY.fullmatch(pair[0])
            or len(pair[0]) > 80
            or not _CONTEXT_CLAIM.fullmatch(pair[1])
            or pair[0] in keys
        ):
            invalid("FORMWORK_CONTEXT_CLAIMS", shown, _CONTEXT_EXPECTED)
        keys.add(pair[0])


def check_whole(variable: str, number: object, low: int, high: int, expected: str) -> None:
    """A whole number (not a bool) from ``low`` to ``high``, or the ``ConfigError``."""
    if isinstance(number, bool) or not isinstance(number, int) or not low <= number <= high:
        invalid(variable, str(number), expected)


class Variables:
    """An environment as the settings read it: an empty value counts as unset, and a value
    that is not of its kind is the ``ConfigError`` naming its variable."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env

    def text(self, name: str) -> str | None:
        return self.env.get(name, "").strip() or None

    def whole(self, name: str, default: int, expected: str = "a whole number") -> int:
        raw = self.text(name)
        if raw is None:
            return default
        if not _WHOLE.fullmatch(raw):
            invalid(name, raw, expected)
        return int(raw)

    def seconds(self, name: str, default: float) -> float:
        raw = self.text(name)
        if raw is None:
            return default
        if not _SECONDS.fullmatch(raw):
            invalid(name, raw, "a number of seconds, such as 5")
        return float(raw)

    def switch(self, name: str, *, default: bool) -> bool:
        raw = self.text(name)
        if raw is None:
            return default
        if raw.lower() not in SWITCH_VALUES:
            invalid(name, raw, "on or off")
        return SWITCH_VALUES[raw.lower()]

    def context_claims(self) -> tuple[tuple[str, str], ...]:
        raw = self.env.get("FORMWORK_CONTEXT_CLAIMS")  # set but empty: off, not unset
        return DEFAULT_CONTEXT_CLAIMS if raw is None else parse_context_claims(raw)

    def temporal(self) -> TemporalSettings:
        """The Temporal adapter's settings (``formwork.temporal.settings``), from the variables
        Temporal's own CLI reads and the secret's."""
        tls = (self.text("TEMPORAL_TLS") or "false").lower()
        if tls not in _TRUE_OR_FALSE:
            invalid("TEMPORAL_TLS", tls, "true or false")
        return TemporalSettings(
            address=self.text("TEMPORAL_ADDRESS") or DEFAULT_TEMPORAL_ADDRESS,
            namespace=self.text("TEMPORAL_NAMESPACE") or DEFAULT_TEMPORAL_NAMESPACE,
            task_queue=self.text("TEMPORAL_TASK_QUEUE") or DEFAULT_TASK_QUEUE,
            api_key=self.text("TEMPORAL_API_KEY"),
            tls=_TRUE_OR_FALSE[tls],
            tls_cert=self.text("TEMPORAL_TLS_CLIENT_CERT_PATH"),
            tls_key=self.text("TEMPORAL_TLS_CLIENT_KEY_PATH"),
            tls_ca=self.text("TEMPORAL_TLS_SERVER_CA_CERT_PATH"),
            tls_server_name=self.text("TEMPORAL_TLS_SERVER_NAME"),
            secret_id=self.text("FORMWORK_TEMPORAL_SECRET_ID"),
        )
