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
from dataclasses import MISSING, FrozenInstanceError, dataclass, field, fields
from typing import Any, NoReturn, Protocol, TypeVar, dataclass_transform

DEFAULT_TEMPORAL_ADDRESS = "localhost:7233"
DEFAULT_TEMPORAL_NAMESPACE = "default"
DEFAULT_TASK_QUEUE = "formwork-hooks"

_ADDRESS = re.compile(r"[A-Za-z0-9_.\[\]:-]+:\d{1,5}")
_NAME = re.compile(r"[A-Za-z0-9_.@-]{1,200}")
_SECRET_ID = r"[A-Za-z0-9/_+=.@:-]{1,2048}"
"""A Secrets Manager ``SecretId``: a secret's name or its ARN. A pattern ``re`` compiles when
first used, not at import: only a deployment whose Temporal credentials are a secret reads it."""


class ConfigError(ValueError):
    """An environment variable is missing or holds a value the tool API cannot use."""


def invalid(variable: str, value: str, expected: str) -> NoReturn:
    """Raise the ``ConfigError`` of a bad ``value`` of ``variable`` (shortened if long)."""
    shown = value if len(value) <= 80 else value[:77] + "..."
    raise ConfigError(f"{variable}={shown!r} is not valid: expected {expected}")


_T = TypeVar("_T")


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def settings_class(cls: type[_T]) -> type[_T]:
    """``@dataclass(frozen=True, slots=True)``, with ``__init__``, ``__repr__``, ``__eq__``,
    ``__hash__`` and the frozen class's ``__setattr__``, ``__delattr__``, ``__getstate__`` and
    ``__setstate__`` that behave as the generated ones but are written out here: dataclass makes
    those by compiling their source as it creates the class, on every cold start (about 4 ms
    of CPU for ``Settings``' thirty fields and ``TemporalSettings``' ten, a twentieth of
    ``import boto3``); here they are in the module's bytecode. A settings class is made once
    and read all the time, so that they look their fields up when called costs nothing.
    (Assigning or deleting any attribute is ``FrozenInstanceError``; ``__dataclass_params__``
    says ``frozen=False``, as it says ``init=False``: nothing reads it.)"""
    made = dataclass(slots=True, init=False, repr=False, eq=False)(cls)
    for name, method in (
        ("__init__", _init),
        ("__repr__", _repr),
        ("__eq__", _eq),
        ("__hash__", _hash),
        ("__setattr__", _setattr),
        ("__delattr__", _delattr),
        ("__getstate__", _getstate),
        ("__setstate__", _setstate),
    ):
        setattr(made, name, method)
    return made


def _init(self: Any, *args: Any, **kwargs: Any) -> None:
    """A dataclass's ``__init__``: the fields by position or by name, each once, their
    defaults (or default factories) for the rest, then ``__post_init__``."""
    specs = fields(self)
    if len(args) > len(specs):
        raise TypeError(f"{type(self).__name__}() takes {len(specs)} arguments, {len(args)} given")
    values = dict(zip((spec.name for spec in specs), args, strict=False))
    for name, value in kwargs.items():
        if name in values or not any(spec.name == name for spec in specs):
            said = "got multiple values for" if name in values else "got an unexpected keyword"
            raise TypeError(f"{type(self).__name__}() {said} argument {name!r}")
        values[name] = value
    for spec in specs:
        if spec.name in values:
            value = values[spec.name]
        elif spec.default is not MISSING:
            value = spec.default
        elif spec.default_factory is not MISSING:
            value = spec.default_factory()
        else:
            raise TypeError(f"{type(self).__name__}() missing argument {spec.name!r}")
        object.__setattr__(self, spec.name, value)
    post_init = getattr(self, "__post_init__", None)
    if post_init is not None:
        post_init()


def _repr(self: Any) -> str:
    shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if f.repr)
    return f"{type(self).__qualname__}({shown})"


def _values(self: Any) -> tuple[Any, ...]:
    return tuple(getattr(self, f.name) for f in fields(self))


def _eq(self: Any, other: object) -> object:
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _values(self) == _values(other)


def _hash(self: Any) -> int:
    return hash(_values(self))


def _setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _getstate(self: Any) -> list[Any]:
    """Pickling: the fields' values, in their order (a list, as dataclass's)."""
    return [getattr(self, f.name) for f in fields(self)]


def _setstate(self: Any, state: Any) -> None:
    """Unpickling: the fields from ``_getstate``'s values."""
    for spec, value in zip(fields(self), state, strict=False):
        object.__setattr__(self, spec.name, value)


@settings_class
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
            if not re.fullmatch(_SECRET_ID, self.secret_id):
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
