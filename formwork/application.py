"""The ``App``: the application's parts for one configuration, each what ``bootstrap`` was
given or built on first use and kept (``formwork.bootstrap`` makes one and says what it holds).

Each property names the builder it calls when the part was not given, looked up here at the
call: ``formwork.references`` (what the settings name), ``formwork.storage`` (the storage kinds,
the DynamoDB client), ``formwork.services`` (the services, the dispatcher, the operator tools'
clients) and ``formwork.webhook_secrets`` (the webhook secret sources). A test or a bench that
replaces a builder patches it on this module (``monkeypatch.setattr(formwork.application,
"build_registry", ...)``).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar, cast

from formwork.config import Settings
from formwork.references import build_registry, build_vocabulary, load_executors
from formwork.services import (
    build_builder,
    build_catalog,
    build_commit_policy,
    build_decay_policy,
    build_dispatcher,
    build_failure_queue,
    build_memory,
    build_memory_api,
    build_migration_starter,
    build_outbox_scan,
    build_service,
    build_sweeper,
    new_behind,
    real_backoff,
    real_ids,
)
from formwork.storage import (
    DynamoDBStorage,
    Storage,
    build_delivery_log,
    build_dynamodb_client,
    storage_for,
)
from formwork.webhook_secrets import build_secret_source, build_secrets_client

if TYPE_CHECKING:
    from forms.app.behind import Behind
    from forms.app.builder import BuilderService
    from forms.app.catalog import Catalog
    from forms.app.loop import CommitPolicy
    from forms.app.memory import Memory
    from forms.app.memory_api import MemoryApi
    from forms.app.migrations import MigrationStarter
    from forms.app.operations import FailureQueue, Sweeper
    from forms.app.service import Dispatcher, FormService
    from forms.definition import Executor
    from forms.memory import DecayPolicy, Vocabulary
    from forms.registry import FormRegistry
    from forms.storage.documents import FormDocumentStore
    from forms.storage.drafts import DraftStore
    from forms.storage.facts import FactStore
    from forms.storage.page_links import PageLinkLedger
    from forms.storage.port import FormStore, OutboxScan
    from forms.storage.selections import SelectionStore
    from formwork.webhook_settings import WebhookSettings
    from formwork.webhooks import DeliveryLog, Direction, SecretSource

__all__ = ["App"]

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

    def _stored(self, name: str, build: Callable[[Storage], _T]) -> _T:
        """A store, built by the App's storage on first use (the storage chosen only then)."""
        return self._part(name, lambda: build(self.storage))

    def holds(self, name: str) -> bool:
        """Whether the part ``name`` was given or is built already (nothing is built)."""
        with self._lock:
            return name in self._parts

    # ------------------------------------------------------------------ time, ids, waits

    @property
    def clock(self) -> Callable[[], float]:
        """Unix seconds: the time every service, page and webhook reads (default: the real)."""
        return self._part("clock", lambda: time.time)

    def now(self) -> float:
        """Unix seconds on the App's clock."""
        return self.clock()

    def utc_now(self) -> datetime:
        """``now()`` as an aware UTC datetime (the services' clock)."""
        return datetime.fromtimestamp(self.now(), UTC)

    @property
    def timer(self) -> Callable[[], float]:
        """Monotonic seconds, what measures durations: the catalog's time to live, memory's
        deadline (default: ``time.monotonic``)."""
        return self._part("timer", lambda: time.monotonic)

    @property
    def new_id(self) -> Callable[[], str]:
        """A new instance's id (default: ``fi_`` and 20 random hex digits)."""
        return self._part("new_id", real_ids)

    @property
    def new_token(self) -> Callable[[int], str]:
        """A new random URL-safe token of ``n`` bytes: page links' and sessions' ids, the
        page forms' post keys (default: ``secrets.token_urlsafe``)."""
        return self._part("new_token", lambda: secrets.token_urlsafe)

    @property
    def backoff(self) -> Callable[[int], None]:
        """The wait before retry ``attempt`` of a conflicted commit, instances' and drafts'
        (default: jittered exponential sleeps, ``forms.app.service.jittered_backoff``)."""
        return self._part("backoff", real_backoff)

    @property
    def commit_policy(self) -> CommitPolicy:
        """How every aggregate's commit loop (instances, drafts, facts) retries a lost
        compare-and-set and how long a recorded call is replayed: one object, handed to the
        ``FormService``, the ``BuilderService`` and ``MemoryApi`` alike (default: the loop's
        budgets, ``backoff``, ``FORMWORK_REPLAY_WINDOW_HOURS``; a given ``service``'s own)."""
        return self._part("commit_policy", lambda: build_commit_policy(self))

    @property
    def behind(self) -> Behind:
        """The work this App's calls leave running behind their answers (memory's); the
        process's App is the one Lambda's after-response extension waits for."""
        return self._part("behind", new_behind)

    # ------------------------------------------------------------------ storage

    @property
    def settings(self) -> Settings:
        """The deployment's settings (default: read from the environment)."""
        return self._part("settings", Settings.from_env)

    @property
    def dynamodb_client(self) -> Any:
        """The boto3 DynamoDB client every DynamoDB adapter of this App shares."""
        return self._part("dynamodb_client", lambda: build_dynamodb_client(self.settings))

    @property
    def storage(self) -> Storage:
        """Where every store not given is kept: the kind of the form store given (in memory
        beside an in-memory one), else the forms table (``TABLE_NAME``)."""

        def build() -> Storage:
            chosen = storage_for(self._parts["store"]) if self.holds("store") else None
            if chosen is not None:
                return chosen
            table = self.settings.require_table()  # before building a client for nothing
            return DynamoDBStorage(self.dynamodb_client, table)

        return self._part("storage", build)

    @property
    def store(self) -> FormStore:
        """The form store (default: the storage's, DynamoDB on ``TABLE_NAME``)."""
        return self._stored("store", lambda storage: storage.form_store())

    @property
    def documents(self) -> FormDocumentStore:
        """The tenants' published form documents."""
        return self._stored("documents", lambda storage: storage.documents())

    @property
    def drafts(self) -> DraftStore:
        """The tenants' drafts, their edit logs and call records."""
        return self._stored("drafts", lambda storage: storage.drafts())

    @property
    def selections(self) -> SelectionStore:
        """Each person's selection on each draft (the builder's canvas sets it, the builder
        tools fall back to it), beside the drafts."""
        return self._stored("selections", lambda storage: storage.selections(self.drafts))

    @property
    def facts(self) -> FactStore:
        """Each principal's facts, their histories and memory settings."""
        return self._stored("facts", lambda storage: storage.facts())

    @property
    def page_links(self) -> PageLinkLedger:
        """The page links already exchanged for a session (``formwork.aws.pages.access``)."""
        return self._stored("page_links", lambda storage: storage.page_links())

    @property
    def outbox_scan(self) -> OutboxScan:
        """What the sweeper reads (``formwork.services.build_outbox_scan``)."""
        return self._part("outbox_scan", lambda: build_outbox_scan(self))

    # ------------------------------------------------------------------ the service

    @property
    def registry(self) -> FormRegistry:
        """The forms ``FORMWORK_FORMS`` names."""
        return self._part(
            "registry", lambda: build_registry(self.settings, self.deployment_vocabulary())
        )

    @property
    def dispatcher(self) -> Dispatcher | None:
        """What runs hooks after a commit (default: the one ``FORMWORK_DISPATCH`` names)."""
        return self._part("dispatcher", lambda: build_dispatcher(self.settings))

    @property
    def service(self) -> FormService:
        """The ``FormService`` over the catalog, the store and the dispatcher."""
        return self._part("service", lambda: build_service(self))

    @property
    def failure_queue(self) -> FailureQueue | None:
        """The relay's failure queue (``FORMWORK_RELAY_FAILURES_URL``); None: none."""
        return self._part("failure_queue", lambda: build_failure_queue(self.settings))

    @property
    def sweeper(self) -> Sweeper | None:
        """Starts a sweep (the function ``FORMWORK_SWEEPER_FUNCTION`` names); None: none."""
        return self._part("sweeper", lambda: build_sweeper(self.settings))

    @property
    def migration_starter(self) -> MigrationStarter | None:
        """Starts a bulk migration's workflow on Temporal (``FORMWORK_DISPATCH=temporal``);
        None in a deployment that runs no Temporal worker."""
        return self._part("migration_starter", lambda: build_migration_starter(self.settings))

    # ------------------------------------------------------------------ the builder

    @property
    def executors(self) -> dict[str, Executor]:
        """The executors published documents may name (``FORMWORK_EXECUTORS``; none)."""
        return self._part("executors", lambda: load_executors(self.settings.executors))

    @property
    def catalog(self) -> Catalog:
        """The forms a principal can use: the code forms (``registry``) and the documents
        the principal's tenant published, read again after ``FORMWORK_CATALOG_TTL_SECONDS``."""
        return self._part("catalog", lambda: build_catalog(self))

    @property
    def builder(self) -> BuilderService:
        """The ``BuilderService``: builder tool calls on the drafts, publishing through the
        catalog."""
        return self._part("builder", lambda: build_builder(self))

    # ------------------------------------------------------------------ memory

    @property
    def memory(self) -> Memory | None:
        """Memory for the service; None when ``FORMWORK_MEMORY`` turns it off."""
        return self._part("memory", lambda: build_memory(self))

    @property
    def memory_api(self) -> MemoryApi:
        """Memory's use cases for its owner (``forms.app.memory_api``), what the memory routes
        call: on the App's fact store, vocabulary, decay policy, clock and commit policy."""
        return self._part("memory_api", lambda: build_memory_api(self))

    def deployment_vocabulary(self) -> Vocabulary | None:
        """The deployment's vocabulary when it is not Formwork's alone (given, or extended by
        ``FORMWORK_FACT_KEYS``); None lets what needs Formwork's load it on first use."""
        if self.holds("vocabulary") or self.settings.fact_keys:
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
        return self._part("decay_policy", build_decay_policy)

    # ------------------------------------------------------------------ webhooks

    @property
    def webhook_settings(self) -> WebhookSettings:
        """The webhook sources and secrets (default: read from the environment)."""
        from formwork.webhook_settings import WebhookSettings

        return self._part("webhook_settings", WebhookSettings.from_env)

    @property
    def delivery_log(self) -> DeliveryLog:
        """The webhook delivery log: the storage's when ``TABLE_NAME`` is set, else in this
        process's memory."""

        def build() -> DeliveryLog:
            if self.settings.table_name is None:
                return build_delivery_log(self.settings)
            return self.storage.delivery_log()

        return self._part("delivery_log", build)

    def secret_source(self, direction: Direction) -> SecretSource:
        """The inbound or the outbound secrets; each built on its first use, never the other's
        with it (neither builds a Secrets Manager client before it needs one)."""
        return self._part(
            f"secrets.{direction}",
            lambda: build_secret_source(self.settings, self.webhook_settings, direction),
        )

    def secrets_provider(self) -> Any:
        """Powertools' ``SecretsProvider`` over this App's Secrets Manager client, built on first
        use: each secret's value is kept for the ``max_age`` its reader asks (the page key's
        ``KEY_REFRESH_SECONDS``). An App part, so a test's App starts with nothing read."""
        from aws_lambda_powertools.utilities.parameters import SecretsProvider

        return self._part(
            "secrets_provider",
            lambda: SecretsProvider(boto3_client=build_secrets_client(self.settings)),
        )
