"""The composition root: ``bootstrap(settings, **overrides) -> App``, the one place that builds
the real adapters and wires them together.

An ``App`` holds the application's parts for one configuration: the settings, the
``FormService`` (its registry, store and dispatcher), the webhook settings, the delivery log,
the inbound and outbound secret sources and the webhook route's clock. Every entry point takes
its parts from one: the Lambda handlers (``functions.api``, ``functions.relay``), the Temporal
worker (``workflows.worker``) and the benches. Lambda calls a handler with the event and the
context alone, and it serves with its process's App (``formwork.process.app()``); every handler
also takes ``app=``, which tests and the local tools pass with an App of their own::

    app = bootstrap(Settings(tenant_claim="tenant"), service=service)
    response = functions.api.lambda_handler(event, LocalContext(), app=app)

A part given to ``bootstrap`` is used as it is; every other part, the settings included (read
from the environment), is built on first use and kept, under a lock. A warm Lambda container
keeps its App, so the boto3 client and the compiled forms are built once. boto3 and the
DynamoDB adapter are imported inside the builders, so requests that never touch storage
(``GET /tools``, the OpenAPI document) and cold starts that fail early do not pay for them; so
are the webhook route's parts (``formwork.webhook_settings``, ``formwork.webhooks``: pydantic
models), which only a webhook request builds, and the builder's (the published documents, the
drafts, the ``Catalog`` and the ``BuilderService``), which only a builder route builds, and
memory's (the fact store, the vocabulary, the decay policy), which only what uses memory builds.

The ``FormService`` is built over ``catalog``: the code forms (``registry``) plus each
caller's tenant's published documents, so a form a tenant publishes is served to its people
on their next call, with no redeploy. A ``service`` handed to ``bootstrap`` brings its own:
its catalog (and the registry inside it), or its registry alone.
"""

from __future__ import annotations

import os
import pkgutil
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from enum import Enum
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar, cast

from formwork.config import ConfigError, Settings

if TYPE_CHECKING:
    from forms.app.builder import BuilderService
    from forms.app.catalog import Catalog
    from forms.app.memory import Memory
    from forms.app.migrations import MigrationStarter
    from forms.app.operations import FailureQueue, Sweeper
    from forms.app.service import Dispatcher, FormService
    from forms.definition import Executor, FormDef
    from forms.memory import DecayPolicy, FactKey, Vocabulary
    from forms.registry import FormRegistry
    from forms.storage.documents import FormDocumentStore
    from forms.storage.drafts import DraftStore
    from forms.storage.facts import FactStore
    from forms.storage.port import FormStore, OutboxScan
    from forms.storage.selections import SelectionStore
    from formwork.webhook_settings import WebhookSettings
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


def build_store(settings: Settings, client: Any = None) -> FormStore:
    """The DynamoDB store on ``TABLE_NAME``, on ``client`` (default: a new one)."""
    table = settings.require_table()
    from forms.storage.dynamodb import DynamoDBFormStore

    store: FormStore = DynamoDBFormStore(
        client if client is not None else build_dynamodb_client(settings), table
    )
    return store


def load_attribute(variable: str, reference: str) -> Any:
    """What ``module:attribute`` (the value of ``variable``) names, resolved by the standard
    library's ``pkgutil.resolve_name``; a ``ConfigError`` naming the variable when the module
    cannot be imported or has no such attribute."""
    module_name, _, attribute = reference.partition(":")
    try:
        return pkgutil.resolve_name(reference)
    except ImportError as exc:
        raise ConfigError(f"{variable}={reference!r}: cannot import {module_name}: {exc}") from exc
    except AttributeError:
        if module_name not in sys.modules:  # raised by the module's own code while importing
            raise
        raise ConfigError(
            f"{variable}={reference!r}: module {module_name} has no {attribute}"
        ) from None
    except ValueError:
        raise ConfigError(
            f'{variable}={reference!r} is not valid: expected "package.module:attribute"'
        ) from None


def load_forms(reference: str) -> tuple[FormDef, ...] | FormRegistry:
    """What ``module:attribute`` names: a ``FormDef``, a non-empty sequence of them, or a
    ``FormRegistry`` (several versions of a form, say), as ``formwork check`` accepts."""
    from forms.definition import FormDef
    from forms.registry import FormRegistry

    value = load_attribute("FORMWORK_FORMS", reference)
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


def build_registry(settings: Settings, vocabulary: Vocabulary | None = None) -> FormRegistry:
    """The forms ``FORMWORK_FORMS`` names, their fact keys checked against ``vocabulary``
    (None: Formwork's, loaded only by forms that use memory). A ``FormRegistry`` named there
    is used as it is, with its own."""
    from forms.registry import FormRegistry

    loaded = load_forms(settings.forms)
    if isinstance(loaded, FormRegistry):
        return loaded
    return FormRegistry(loaded, vocabulary=vocabulary)


def memory_metric(name: str) -> None:
    """Count one memory event (``forms.app.memory.METRICS``) as a CloudWatch metric, written
    in the embedded metric format on the function's log; where Powertools is not installed,
    the log line the memory part writes is the record."""
    try:
        from aws_lambda_powertools.metrics import MetricUnit, single_metric
    except ImportError:  # the engine installed without the aws extra
        return
    namespace = os.environ.get("POWERTOOLS_METRICS_NAMESPACE") or "Formwork"
    with single_metric(name=name, unit=MetricUnit.Count, value=1, namespace=namespace):
        pass


def load_executors(reference: str | None) -> dict[str, Executor]:
    """What ``module:attribute`` names: a mapping of executor name -> executor (a callable),
    the executors a published form document may name (``FORMWORK_EXECUTORS``); none when
    ``reference`` is None."""
    if reference is None:
        return {}
    value = load_attribute("FORMWORK_EXECUTORS", reference)
    if not isinstance(value, Mapping) or not all(
        isinstance(name, str) and callable(executor) for name, executor in value.items()
    ):
        raise ConfigError(
            f"FORMWORK_EXECUTORS={reference!r}: expected a mapping of names to executors "
            f"(callables), found {type(value).__name__}"
        )
    return dict(value)


def load_fact_keys(reference: str | None) -> tuple[FactKey, ...]:
    """What ``module:attribute`` names: a ``FactKey`` or a sequence of them, the keys the
    deployment adds to the fact vocabulary (``FORMWORK_FACT_KEYS``); none when ``reference``
    is None."""
    if reference is None:
        return ()
    from forms.memory import FactKey

    value = load_attribute("FORMWORK_FACT_KEYS", reference)
    if isinstance(value, FactKey):
        return (value,)
    if (
        not isinstance(value, Sequence)
        or isinstance(value, str)
        or not all(isinstance(key, FactKey) for key in value)
    ):
        raise ConfigError(
            f"FORMWORK_FACT_KEYS={reference!r}: expected a FactKey or a sequence of FactKey "
            f"(forms.memory.fact_key), found {type(value).__name__}"
        )
    return tuple(value)


def build_vocabulary(settings: Settings) -> Vocabulary:
    """Formwork's fact keys plus the deployment's (``FORMWORK_FACT_KEYS``); a ``ConfigError``
    naming the variable and every problem when they do not make one vocabulary (a malformed
    name, a name declared twice or taken by a default key)."""
    from forms.memory import InvalidVocabulary, Vocabulary

    extra = load_fact_keys(settings.fact_keys)
    if not extra:
        return Vocabulary.default()
    try:
        return Vocabulary.default().extended(extra)
    except InvalidVocabulary as bad:
        raise ConfigError(
            f"FORMWORK_FACT_KEYS={settings.fact_keys!r}: " + "; ".join(bad.problems)
        ) from None


def build_dispatcher(settings: Settings) -> Dispatcher:
    """What runs hooks after a commit: ``FORMWORK_DISPATCH=inprocess`` (default) runs them in
    this process; ``temporal`` starts a Temporal workflow per hook occurrence
    (``workflows.dispatch``), connecting on first use."""
    if settings.dispatch == "temporal":
        from workflows.dispatch import TemporalDispatcher

        return TemporalDispatcher.from_settings(settings)
    from forms.app.hooks import InProcessDispatcher

    return InProcessDispatcher()


def build_delivery_log(settings: Settings, client: Any = None) -> DeliveryLog:
    """The webhook delivery log: on the forms table (``TABLE_NAME``, through ``client``,
    default a new one) when it is set, else in this process's memory."""
    if settings.table_name is not None:
        from formwork.webhooks.dynamodb import DynamoDBDeliveryLog

        return DynamoDBDeliveryLog(
            client if client is not None else build_dynamodb_client(settings),
            settings.table_name,
        )
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


# ---------------------------------------------------------------------------- the application


class FromSettings(Enum):
    """``bootstrap(dispatcher=FROM_SETTINGS)``, the default: the dispatcher ``FORMWORK_DISPATCH``
    names. (``dispatcher=None`` is a choice of its own: no dispatcher at all.)"""

    FROM_SETTINGS = "from settings"


FROM_SETTINGS: Final = FromSettings.FROM_SETTINGS

_T = TypeVar("_T")


class App:
    """The application's parts for one configuration; ``bootstrap`` makes one.

    Each part is what ``bootstrap`` was given, or built on first use and kept (one build per
    App, however many threads ask at once). Nothing is built when the App is made, not even the
    settings, so an entry point can make its App at import and still answer a bad variable
    with a 500 on its first request.
    """

    def __init__(self, settings: Settings | None, parts: dict[str, object]) -> None:
        self._lock = threading.RLock()
        self._parts: dict[str, object] = dict(parts)
        if settings is not None:
            self._parts["settings"] = settings

    def _part(self, name: str, build: Callable[[], _T]) -> _T:
        with self._lock:
            if name not in self._parts:
                self._parts[name] = build()
            return cast("_T", self._parts[name])

    # ------------------------------------------------------------------ the service

    @property
    def settings(self) -> Settings:
        """The deployment's settings (default: read from the environment)."""
        return self._part("settings", Settings.from_env)

    @property
    def registry(self) -> FormRegistry:
        """The forms ``FORMWORK_FORMS`` names."""
        return self._part("registry", lambda: build_registry(self.settings, self._vocabulary()))

    @property
    def dynamodb_client(self) -> Any:
        """The boto3 DynamoDB client every DynamoDB adapter of this App shares."""
        return self._part("dynamodb_client", lambda: build_dynamodb_client(self.settings))

    @property
    def store(self) -> FormStore:
        """The form store (default: DynamoDB on ``TABLE_NAME``)."""

        def build() -> FormStore:
            self.settings.require_table()  # before building a client for nothing
            return build_store(self.settings, self.dynamodb_client)

        return self._part("store", build)

    @property
    def failure_queue(self) -> FailureQueue | None:
        """The relay's failure queue (SQS at ``FORMWORK_RELAY_FAILURES_URL``); None when the
        deployment names none."""

        def build() -> FailureQueue | None:
            url = self.settings.relay_failures_url
            if url is None:
                return None
            import boto3

            from formwork.relay_failures import SqsFailureQueue

            return SqsFailureQueue(boto3.client("sqs", region_name=self.settings.region), url)

        return self._part("failure_queue", build)

    @property
    def sweeper(self) -> Sweeper | None:
        """Starts a sweep (the function ``FORMWORK_SWEEPER_FUNCTION`` names); None: none."""

        def build() -> Sweeper | None:
            name = self.settings.sweeper_function
            if name is None:
                return None
            import boto3

            from formwork.relay_failures import LambdaSweeper

            return LambdaSweeper(boto3.client("lambda", region_name=self.settings.region), name)

        return self._part("sweeper", build)

    @property
    def migration_starter(self) -> MigrationStarter | None:
        """Starts a bulk migration's workflow on Temporal (``FORMWORK_DISPATCH=temporal``);
        None in a deployment that runs no Temporal worker."""

        def build() -> MigrationStarter | None:
            if self.settings.dispatch != "temporal":
                return None
            from workflows.dispatch import connection_for
            from workflows.migration_starter import TemporalMigrationStarter

            temporal = self.settings.temporal
            return TemporalMigrationStarter(connection_for(temporal), temporal.task_queue)

        return self._part("migration_starter", build)

    @property
    def outbox_scan(self) -> OutboxScan:
        """What the sweeper reads: the instances due now in the store's due index
        (``forms.storage.due``; both adapters keep one), else the store itself when it is its
        own scan, else a Scan of the forms table (``TABLE_NAME``)."""

        def build() -> OutboxScan:
            from forms.storage.due import DueIndex, DueScan
            from forms.storage.port import OutboxScan

            store = self.store
            if isinstance(store, DueIndex):
                return DueScan(store, self.service.clock)
            if isinstance(store, OutboxScan):
                return store
            from forms.storage.dynamodb_outbox import DynamoDBOutboxScan

            return DynamoDBOutboxScan(self.dynamodb_client, self.settings.require_table())

        return self._part("outbox_scan", build)

    @property
    def dispatcher(self) -> Dispatcher | None:
        """What runs hooks after a commit (default: the one ``FORMWORK_DISPATCH`` names)."""
        return self._part("dispatcher", lambda: build_dispatcher(self.settings))

    @property
    def service(self) -> FormService:
        """The ``FormService`` over the registry, the store and the dispatcher."""

        def build() -> FormService:
            from forms.app.service import FormService

            # the code forms plus each caller's tenant's published documents
            return FormService(
                self.catalog,
                self.store,
                self.dispatcher,
                replay_window=timedelta(hours=self.settings.replay_window_hours),
                memory=self.memory,
                count=memory_metric,  # HooksFailed, as an EMF metric where Powertools is
            )

        return self._part("service", build)

    # ------------------------------------------------------------------ the builder

    def _in_memory(self) -> bool:
        """Whether the form store keeps its data in this process (then so do the documents
        and the drafts: a test's or a local run's App has no table)."""
        from forms.storage.memory import InMemoryFormStore

        return isinstance(self.store, InMemoryFormStore)

    @property
    def documents(self) -> FormDocumentStore:
        """The tenants' published form documents: on the forms table, or in memory beside an
        in-memory form store."""

        def build() -> FormDocumentStore:
            if self._in_memory():
                from forms.storage.documents import InMemoryFormDocumentStore

                return InMemoryFormDocumentStore()
            from forms.storage.dynamodb_documents import DynamoDBFormDocumentStore

            return DynamoDBFormDocumentStore(self.dynamodb_client, self.settings.require_table())

        return self._part("documents", build)

    @property
    def drafts(self) -> DraftStore:
        """The tenants' drafts, their edit logs and call records: on the forms table, or in
        memory beside an in-memory form store."""

        def build() -> DraftStore:
            if self._in_memory():
                from forms.storage.drafts import InMemoryDraftStore

                return InMemoryDraftStore()
            from forms.storage.dynamodb_drafts import DynamoDBDraftStore

            return DynamoDBDraftStore(self.dynamodb_client, self.settings.require_table())

        return self._part("drafts", build)

    @property
    def executors(self) -> dict[str, Executor]:
        """The executors published documents may name (``FORMWORK_EXECUTORS``; none)."""
        return self._part("executors", lambda: load_executors(self.settings.executors))

    @property
    def catalog(self) -> Catalog:
        """The forms a principal can use: the code forms (``registry``) and the documents
        the principal's tenant published, read again after ``FORMWORK_CATALOG_TTL_SECONDS``."""

        def build() -> Catalog:
            from forms.app.catalog import Catalog

            return Catalog(
                self.registry,
                self.documents,
                timer=time.monotonic,
                executors=self.executors,
                ttl=self.settings.catalog_ttl_seconds,
            )

        return self._part("catalog", build)

    @property
    def builder(self) -> BuilderService:
        """The ``BuilderService``: builder tool calls on the drafts, publishing through the
        catalog; the plan's limits from the settings, the App's clock, the service's backoff."""

        def build() -> BuilderService:
            from forms.app.builder import BuilderService
            from forms.app.service import jittered_backoff
            from forms.documents import Limits

            settings = self.settings
            plan = Limits(
                max_steps=settings.builder_max_steps, max_fields=settings.builder_max_fields
            )
            return BuilderService(
                self.drafts,
                self.catalog,
                clock=self.utc_now,
                limits=lambda tenant: plan,
                backoff=jittered_backoff,
                replay_window=timedelta(hours=settings.replay_window_hours),
                selections=self.selections,
            )

        return self._part("builder", build)

    @property
    def selections(self) -> SelectionStore:
        """Each person's selection on each draft (the builder's canvas sets it, the builder
        tools fall back to it): beside the drafts, on the forms table or in memory."""

        def build() -> SelectionStore:
            if self._in_memory():
                from forms.storage.selections import InMemorySelectionStore

                return InMemorySelectionStore(self.drafts)
            from forms.storage.dynamodb_selections import DynamoDBSelectionStore

            return DynamoDBSelectionStore(self.dynamodb_client, self.settings.require_table())

        return self._part("selections", build)

    # ------------------------------------------------------------------ memory

    @property
    def facts(self) -> FactStore:
        """Each principal's facts, their histories and memory settings: on the forms table,
        or in memory beside an in-memory form store."""

        def build() -> FactStore:
            if self._in_memory():
                from forms.storage.facts import InMemoryFactStore

                return InMemoryFactStore()
            from forms.storage.dynamodb_facts import DynamoDBFactStore

            return DynamoDBFactStore(self.dynamodb_client, self.settings.require_table())

        return self._part("facts", build)

    @property
    def memory(self) -> Memory | None:
        """Memory for the service: recall into ``form_start`` and facts from answers, on the
        App's fact store, within ``FORMWORK_MEMORY_DEADLINE_MS``; None when ``FORMWORK_MEMORY``
        turns it off for the deployment (no fact is read or written). The vocabulary and the
        decay policy load when a call first uses them."""

        def build() -> Memory | None:
            settings = self.settings
            if not settings.memory:
                return None
            from forms.app.memory import Memory

            return Memory(
                self.facts,
                vocabulary=self._vocabulary(),
                policy=self.decay_policy if "decay_policy" in self._parts else None,
                deadline=timedelta(milliseconds=settings.memory_deadline_ms),
                count=memory_metric,
            )

        return self._part("memory", build)

    def _vocabulary(self) -> Vocabulary | None:
        """The deployment's vocabulary when it is not Formwork's alone (given, or extended by
        ``FORMWORK_FACT_KEYS``); None lets what needs Formwork's load it on first use."""
        if "vocabulary" in self._parts or self.settings.fact_keys:
            return self.vocabulary
        return None

    @property
    def vocabulary(self) -> Vocabulary:
        """The fact keys memory holds: Formwork's, plus those ``FORMWORK_FACT_KEYS`` names (the
        forms' keys are checked against it, the memory routes and recall read it)."""
        return self._part("vocabulary", lambda: build_vocabulary(self.settings))

    @property
    def decay_policy(self) -> DecayPolicy:
        """How old a fact of each decay class may be to fill or to be offered (Formwork's
        rules unless given)."""

        def build() -> DecayPolicy:
            from forms.memory import DecayPolicy

            return DecayPolicy.default()

        return self._part("decay_policy", build)

    # ------------------------------------------------------------------ webhooks

    @property
    def webhook_settings(self) -> WebhookSettings:
        """The webhook sources and secrets (default: read from the environment)."""
        from formwork.webhook_settings import WebhookSettings

        return self._part("webhook_settings", WebhookSettings.from_env)

    @property
    def delivery_log(self) -> DeliveryLog:
        """The webhook delivery log (on the forms table when ``TABLE_NAME`` is set)."""

        def build() -> DeliveryLog:
            if self.settings.table_name is None:
                return build_delivery_log(self.settings)
            return build_delivery_log(self.settings, self.dynamodb_client)

        return self._part("delivery_log", build)

    def secret_source(self, direction: Direction) -> SecretSource:
        """The inbound or the outbound secrets; each built on its first use, never the other's
        with it (neither builds a Secrets Manager client before it needs one)."""
        return self._part(
            f"secrets.{direction}",
            lambda: build_secret_source(self.settings, self.webhook_settings, direction),
        )

    def now(self) -> float:
        """Unix seconds on the App's clock, the webhook route's and the builder's (the real
        one unless given)."""
        clock = cast("Callable[[], float] | None", self._parts.get("clock"))
        return clock() if clock is not None else time.time()

    def utc_now(self) -> datetime:
        """``now()`` as an aware UTC datetime (the builder's clock)."""
        return datetime.fromtimestamp(self.now(), UTC)


def bootstrap(
    settings: Settings | None = None,
    *,
    service: FormService | None = None,
    registry: FormRegistry | None = None,
    store: FormStore | None = None,
    outbox_scan: OutboxScan | None = None,
    dispatcher: Dispatcher | Literal[FromSettings.FROM_SETTINGS] | None = FROM_SETTINGS,
    dynamodb_client: Any = None,
    webhook_settings: WebhookSettings | None = None,
    delivery_log: DeliveryLog | None = None,
    secrets: SecretSource | None = None,
    notify_secrets: SecretSource | None = None,
    clock: Callable[[], float] | None = None,
    documents: FormDocumentStore | None = None,
    drafts: DraftStore | None = None,
    catalog: Catalog | None = None,
    builder: BuilderService | None = None,
    facts: FactStore | None = None,
    vocabulary: Vocabulary | None = None,
    decay_policy: DecayPolicy | None = None,
    failure_queue: FailureQueue | None = None,
    sweeper: Sweeper | None = None,
    migration_starter: MigrationStarter | None = None,
) -> App:
    """The application for ``settings`` (default: the environment's, read on first use).

    Every other argument replaces the part of that name; a part not given is built from the
    settings on first use. ``service`` is the whole ``FormService`` (then its registry, store
    and dispatcher are its own: do not pass them too); ``dispatcher=None`` builds the service
    without a dispatcher (commits record their hooks and nothing runs them here: the Temporal
    worker). ``outbox_scan`` is what the sweeper reads (default: the store when it scans
    itself, else the forms table). ``dynamodb_client`` is the boto3 client the DynamoDB
    adapters and the sweeper's scan use; ``secrets`` and ``notify_secrets`` are the inbound
    and outbound secret sources; ``clock`` is the App's, the webhook route's and the builder's
    (Unix seconds). ``documents`` and ``drafts`` are the builder's stores (default: on the
    table, or in memory beside an in-memory form store), ``catalog`` the code forms plus the
    tenants' published documents, ``builder`` the whole ``BuilderService``. ``facts`` is
    the fact store (default: on the table, or in memory beside an in-memory form store),
    ``vocabulary`` the fact keys (default: Formwork's plus ``FORMWORK_FACT_KEYS``),
    ``decay_policy`` the decay rules (default: Formwork's). ``failure_queue`` and ``sweeper``
    are what the operator routes read and start (default: the relay's SQS queue and the
    sweeper function the settings name), ``migration_starter`` what starts a bulk migration's
    workflow (default: on Temporal when ``FORMWORK_DISPATCH`` is ``temporal``, else none).
    """
    if service is not None and (
        registry is not None or store is not None or dispatcher is not FROM_SETTINGS
    ):
        raise ValueError("pass a service or its parts (registry, store, dispatcher), not both")
    parts: dict[str, object] = {}
    if service is not None:
        from forms.app.catalog import Catalog

        forms = service.registry
        parts.update(service=service, store=service.store, dispatcher=service.dispatcher)
        if isinstance(forms, Catalog):  # the service's catalog, and the code forms inside it
            parts.update(catalog=forms, registry=forms.registry)
        else:
            parts["registry"] = forms
    given: dict[str, object | None] = {
        "registry": registry,
        "store": store,
        "outbox_scan": outbox_scan,
        "dynamodb_client": dynamodb_client,
        "webhook_settings": webhook_settings,
        "delivery_log": delivery_log,
        "secrets.inbound": secrets,
        "secrets.outbound": notify_secrets,
        "clock": clock,
        "documents": documents,
        "drafts": drafts,
        "catalog": catalog,
        "builder": builder,
        "facts": facts,
        "vocabulary": vocabulary,
        "decay_policy": decay_policy,
        "failure_queue": failure_queue,
        "sweeper": sweeper,
        "migration_starter": migration_starter,
    }
    parts.update({name: part for name, part in given.items() if part is not None})
    if dispatcher is not FROM_SETTINGS:
        parts["dispatcher"] = dispatcher
    return App(settings, parts)
