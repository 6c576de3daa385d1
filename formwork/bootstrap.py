"""The composition root: the one place that builds the real adapters and wires them together.

A warm Lambda container builds one ``FormService`` on its first tool call and keeps it (the
boto3 client, the compiled forms). boto3 and the DynamoDB adapter are imported inside the
builders, so requests that never touch storage (``GET /tools``, the OpenAPI document) and cold
starts that fail early do not pay for them.

Tests and the local gateway inject what they need instead::

    with use_service(service, settings=Settings(tenant_claim="tenant")):
        response = functions.api.lambda_handler(event, LocalContext())

or, for a process that serves one configuration for its whole life, ``install(service,
settings)`` (``reset()`` undoes it). The webhook route's parts (its settings, the delivery log,
the inbound and outbound secret sources, its clock) live in the same container, built on first
use; tests inject them with ``use_webhooks(...)``.
"""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from formwork.config import ConfigError, Settings, WebhookSettings

if TYPE_CHECKING:
    from forms.app.service import Dispatcher, FormService
    from forms.definition import FormDef
    from forms.registry import FormRegistry
    from forms.storage.port import FormStore
    from formwork.webhooks import DeliveryLog, Direction, SecretSource

# ---------------------------------------------------------------------------- builders


def build_dynamodb_client(settings: Settings) -> Any:
    """A boto3 DynamoDB client; pointed at ``DYNAMODB_ENDPOINT_URL`` when that is set."""
    import boto3
    from botocore.config import Config

    config = Config(
        retries={"mode": "standard", "max_attempts": 3}, connect_timeout=3, read_timeout=5
    )
    if settings.dynamodb_endpoint_url is None:
        return boto3.client("dynamodb", region_name=settings.region, config=config)
    # A local endpoint (moto) accepts any credentials; do not require real ones on a laptop.
    return boto3.client(
        "dynamodb",
        region_name=settings.region,
        endpoint_url=settings.dynamodb_endpoint_url,
        aws_access_key_id="local",
        aws_secret_access_key="local",
        config=config,
    )


def build_store(settings: Settings) -> FormStore:
    """The DynamoDB store on ``TABLE_NAME``."""
    table = settings.require_table()
    from forms.storage.dynamodb import DynamoDBFormStore

    store: FormStore = DynamoDBFormStore(build_dynamodb_client(settings), table)
    return store


def load_forms(reference: str) -> tuple[FormDef, ...] | FormRegistry:
    """What ``module:attribute`` names: a ``FormDef``, a non-empty sequence of them, or a
    ``FormRegistry`` (several versions of a form, say), as ``formwork check`` accepts."""
    from forms.definition import FormDef
    from forms.registry import FormRegistry

    module_name, _, attribute = reference.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(
            f"FORMWORK_FORMS={reference!r}: cannot import {module_name}: {exc}"
        ) from exc
    try:
        value = getattr(module, attribute)
    except AttributeError:
        raise ConfigError(
            f"FORMWORK_FORMS={reference!r}: module {module_name} has no {attribute}"
        ) from None
    if isinstance(value, FormRegistry):
        return value
    if isinstance(value, FormDef):
        return (value,)
    if (
        not isinstance(value, Sequence)
        or isinstance(value, str)
        or not value
        or not all(isinstance(item, FormDef) for item in value)
    ):
        raise ConfigError(
            f"FORMWORK_FORMS={reference!r}: expected a FormDef, a non-empty sequence of "
            f"FormDef or a FormRegistry, found {type(value).__name__}"
        )
    return tuple(value)


def build_registry(settings: Settings) -> FormRegistry:
    from forms.registry import FormRegistry

    loaded = load_forms(settings.forms)
    return loaded if isinstance(loaded, FormRegistry) else FormRegistry(loaded)


def build_dispatcher(settings: Settings) -> Dispatcher:
    """What runs hooks after a commit: ``FORMWORK_DISPATCH=inprocess`` (default) runs them in
    this process; ``temporal`` starts a Temporal workflow per hook occurrence
    (``workflows.dispatch``), connecting on first use."""
    if settings.dispatch == "temporal":
        from workflows.dispatch import TemporalDispatcher

        return TemporalDispatcher.from_settings(settings)
    from forms.app.hooks import InProcessDispatcher

    return InProcessDispatcher()


def build_service(
    settings: Settings, store: FormStore | None = None, dispatcher: Dispatcher | None = None
) -> FormService:
    """A ``FormService`` over the configured forms, ``store`` (default: DynamoDB) and
    ``dispatcher`` (default: the one ``FORMWORK_DISPATCH`` names)."""
    from forms.app.service import FormService

    registry = build_registry(settings)
    return FormService(
        registry,
        store if store is not None else build_store(settings),
        dispatcher if dispatcher is not None else build_dispatcher(settings),
        replay_window=timedelta(hours=settings.replay_window_hours),
    )


def build_delivery_log(settings: Settings) -> DeliveryLog:
    """The webhook delivery log: on the forms table (``TABLE_NAME``) when it is set, else in
    this process's memory."""
    if settings.table_name is not None:
        from formwork.webhooks.dynamodb import DynamoDBDeliveryLog

        return DynamoDBDeliveryLog(build_dynamodb_client(settings), settings.table_name)
    from formwork.webhooks.memory import InMemoryDeliveryLog

    return InMemoryDeliveryLog()


def build_secrets_client(settings: Settings) -> Any:
    """A boto3 Secrets Manager client (``AWS_ENDPOINT_URL_SECRETS_MANAGER`` points it at a
    local endpoint, as boto3 reads that itself)."""
    import boto3
    from botocore.config import Config

    config = Config(
        retries={"mode": "standard", "max_attempts": 2}, connect_timeout=2, read_timeout=3
    )
    return boto3.client("secretsmanager", region_name=settings.region, config=config)


def build_secret_source(
    settings: Settings, webhooks: WebhookSettings, direction: Direction
) -> SecretSource:
    """One direction's secrets, never the other's: inbound from ``FORMWORK_WEBHOOK_SECRETS``
    when set, else Secrets Manager under the inbound prefix; outbound from
    ``FORMWORK_NOTIFY_SECRETS`` when set, else Secrets Manager under the notify prefix. One
    direction at a time, so neither builds a Secrets Manager client before it needs one."""
    from formwork.webhooks.secrets import SecretsManagerSecrets, StaticSecrets

    if direction == "inbound":
        configured, prefix, what = webhooks.secrets, webhooks.secret_prefix, "webhook"
    else:
        configured, prefix, what = webhooks.notify_secrets, webhooks.notify_prefix, "notify"
    if configured is not None:
        return StaticSecrets(dict(configured))
    return SecretsManagerSecrets(build_secrets_client(settings), prefix, what=what)


# ---------------------------------------------------------------------------- the container


class _Container:
    """What one warm Lambda container keeps between requests."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.settings: Settings | None = None
        self.service: FormService | None = None
        self.webhooks: WebhookSettings | None = None
        self.delivery_log: DeliveryLog | None = None
        self.secrets: dict[Direction, SecretSource] = {}
        self.clock: Callable[[], float] | None = None


_container = _Container()


def settings() -> Settings:
    """This container's settings: installed ones, else read from the environment once."""
    with _container.lock:
        if _container.settings is None:
            _container.settings = Settings.from_env()
        return _container.settings


def service() -> FormService:
    """This container's service: installed, else built on first use and kept while warm."""
    with _container.lock:
        if _container.service is None:
            _container.service = build_service(settings())
        return _container.service


def install(service: FormService | None = None, settings: Settings | None = None) -> None:
    """Use ``service`` and/or ``settings`` from now on (a long-running local process)."""
    with _container.lock:
        if settings is not None:
            _container.settings = settings
        if service is not None:
            _container.service = service


def webhook_settings() -> WebhookSettings:
    """The webhook route's settings: injected, else read from the environment once."""
    with _container.lock:
        if _container.webhooks is None:
            _container.webhooks = WebhookSettings.from_env()
        return _container.webhooks


def delivery_log() -> DeliveryLog:
    """This container's delivery log: injected, else built on first use and kept."""
    with _container.lock:
        if _container.delivery_log is None:
            _container.delivery_log = build_delivery_log(settings())
        return _container.delivery_log


def secret_source(direction: Direction) -> SecretSource:
    """This container's inbound or outbound secrets: injected, else built on first use."""
    with _container.lock:
        if direction not in _container.secrets:
            built = build_secret_source(settings(), webhook_settings(), direction)
            _container.secrets[direction] = built
        return _container.secrets[direction]


def webhook_now() -> float:
    """Unix seconds on the webhook route's clock (the injected one in tests)."""
    clock = _container.clock
    return clock() if clock is not None else time.time()


def reset() -> None:
    """Forget everything built or installed; the next request builds it from the environment."""
    with _container.lock:
        _container.service = None
        _container.settings = None
        _container.webhooks = None
        _container.delivery_log = None
        _container.secrets = {}
        _container.clock = None


@contextmanager
def use_service(
    service: FormService | None = None, *, settings: Settings | None = None
) -> Iterator[None]:
    """Serve requests with ``service`` (and ``settings``) inside the block; restore after.

    Without ``settings`` the block uses ``Settings()`` (the defaults, no environment), so a
    test does not depend on the variables of the shell that runs it.
    """
    with _container.lock:
        previous = (_container.service, _container.settings)
        _container.settings = settings if settings is not None else Settings()
        if service is not None:
            _container.service = service
    try:
        yield
    finally:
        with _container.lock:
            _container.service, _container.settings = previous


@contextmanager
def use_webhooks(
    *,
    settings: WebhookSettings | None = None,
    log: DeliveryLog | None = None,
    secrets: SecretSource | None = None,
    notify_secrets: SecretSource | None = None,
    clock: Callable[[], float] | None = None,
) -> Iterator[None]:
    """Serve webhooks with these parts inside the block (tests); restore after.

    ``settings`` defaults to ``WebhookSettings()`` (no configured sources), ``log`` to a fresh
    in-memory log, ``clock`` to the real one. ``secrets`` and ``notify_secrets`` stand in for
    the inbound and outbound secret sources; without them each is built from ``settings``.
    """
    from formwork.webhooks.memory import InMemoryDeliveryLog

    injected: dict[Direction, SecretSource] = {}
    if secrets is not None:
        injected["inbound"] = secrets
    if notify_secrets is not None:
        injected["outbound"] = notify_secrets
    with _container.lock:
        previous = (
            _container.webhooks,
            _container.delivery_log,
            _container.secrets,
            _container.clock,
        )
        _container.webhooks = settings if settings is not None else WebhookSettings()
        _container.delivery_log = log if log is not None else InMemoryDeliveryLog()
        _container.secrets = injected
        _container.clock = clock
    try:
        yield
    finally:
        with _container.lock:
            (
                _container.webhooks,
                _container.delivery_log,
                _container.secrets,
                _container.clock,
            ) = previous
