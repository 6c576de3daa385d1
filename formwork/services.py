"""The application's services, built from an App's parts: the ``FormService``, the catalog, the
``BuilderService``, ``Memory`` and its use cases (``MemoryApi``), what runs hooks, what the
sweeper reads, and the operator tools' AWS and Temporal clients.

Each builder takes every part it wires from the App (``formwork.bootstrap``): the clock, the id
source, the one commit policy every aggregate's loop shares (its backoff between conflicted
commits, its replay window), the timer, the stores, the dispatcher and the work behind answers
are the App's, never a default of the service's own, so what a test gives ``bootstrap``
(``clock=...``) reaches every service. The engine, boto3 and Temporal are imported inside the
builders: nothing here loads before a request needs it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from formwork.config import Settings

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
    from forms.memory import DecayPolicy, Vocabulary
    from forms.registry import FormRegistry
    from forms.storage.documents import FormDocumentStore
    from forms.storage.drafts import DraftStore
    from forms.storage.facts import FactStore
    from forms.storage.page_links import PageLinkLedger
    from forms.storage.port import FormStore, OutboxScan
    from formwork.bootstrap import App
    from formwork.storage import Storage
    from formwork.webhook_settings import WebhookSettings
    from formwork.webhooks import DeliveryLog, SecretSource


# Only type checkers read ``Parts`` (``bootstrap``'s ``**given: Unpack[Parts]``): made at run
# time, a TypedDict compiles each of its string annotations (``typing.ForwardRef``), about 3M
# instructions of every cold start; at run time it is the plain dict ``bootstrap`` receives.
if TYPE_CHECKING:
    from typing import TypedDict

    class Parts(TypedDict, total=False):
        """The parts ``bootstrap`` takes by name, each used as it is (None: built on first use).
        ``clock`` (Unix seconds) is the time of every service the App builds, its pages' links and
        its webhooks; ``timer`` (monotonic seconds) measures durations; ``new_id`` names new
        instances; ``new_token`` draws the random ids of page links, sessions and posts;
        ``backoff`` waits before retry ``attempt`` of a conflicted commit; ``commit_policy`` is
        how every aggregate's commit loop retries and replays (built on ``backoff`` and the
        replay window when not given; a given ``service`` brings its own); ``behind`` tracks the
        work calls leave behind their answers; ``storage`` is where every store not given is kept;
        ``secrets`` and ``notify_secrets`` are the inbound and outbound secrets."""

        registry: FormRegistry | None
        store: FormStore | None
        storage: Storage | None
        outbox_scan: OutboxScan | None
        dynamodb_client: Any
        clock: Callable[[], float] | None
        timer: Callable[[], float] | None
        new_id: Callable[[], str] | None
        new_token: Callable[[int], str] | None
        backoff: Callable[[int], None] | None
        commit_policy: CommitPolicy | None
        behind: Behind | None
        webhook_settings: WebhookSettings | None
        delivery_log: DeliveryLog | None
        secrets: SecretSource | None
        notify_secrets: SecretSource | None
        documents: FormDocumentStore | None
        drafts: DraftStore | None
        page_links: PageLinkLedger | None
        catalog: Catalog | None
        builder: BuilderService | None
        facts: FactStore | None
        vocabulary: Vocabulary | None
        decay_policy: DecayPolicy | None
        failure_queue: FailureQueue | None
        sweeper: Sweeper | None
        migration_starter: MigrationStarter | None

else:
    Parts = dict


# ---------------------------------------------------------------------------- the services


def build_commit_policy(app: App) -> CommitPolicy:
    """The one ``CommitPolicy`` of every aggregate's loop (instances, drafts, facts): the
    loop's budgets, the App's backoff between conflicted commits, and the replay window
    ``FORMWORK_REPLAY_WINDOW_HOURS`` sets. The App hands this same object to the
    ``FormService``, the ``BuilderService`` and ``MemoryApi``."""
    from forms.app.loop import CommitPolicy

    window = timedelta(hours=app.settings.replay_window_hours)
    return CommitPolicy(backoff=app.backoff, replay_window=window)


def build_service(app: App) -> FormService:
    """The ``FormService`` over the App's catalog (the code forms plus each caller's tenant's
    published documents), store and dispatcher, on the App's clock, ids, timer and commit
    policy."""
    from forms.app.service import FormService

    return FormService(
        app.catalog,
        app.store,
        app.dispatcher,
        clock=app.utc_now,
        new_id=app.new_id,
        timer=app.timer,
        policy=app.commit_policy,
        memory=app.memory,
        count=memory_metric,  # HooksFailed, as an EMF metric where Powertools is
    )


def service_parts(service: FormService) -> dict[str, object]:
    """The App parts a whole ``service`` brings: itself, its store, dispatcher, commit policy,
    catalog and the registry inside it (or its registry alone)."""
    from forms.app.catalog import Catalog

    forms = service.registry
    parts: dict[str, object] = {
        "service": service,
        "store": service.store,
        "dispatcher": service.dispatcher,
        "commit_policy": service.policy,  # the builder's and memory's too
    }
    if isinstance(forms, Catalog):  # the service's catalog, and the code forms inside it
        parts.update(catalog=forms, registry=forms.registry)
    else:
        parts["registry"] = forms
    return parts


def build_catalog(app: App) -> Catalog:
    """The code forms and the tenants' published documents, read again after
    ``FORMWORK_CATALOG_TTL_SECONDS`` on the App's timer."""
    from forms.app.catalog import Catalog

    return Catalog(
        app.registry,
        app.documents,
        timer=app.timer,
        executors=app.executors,
        ttl=app.settings.catalog_ttl_seconds,
    )


def build_builder(app: App) -> BuilderService:
    """The ``BuilderService`` on the App's drafts, catalog and selections: the plan's limits
    from the settings, the App's clock and commit policy."""
    from forms.app.builder import BuilderService
    from forms.documents import Limits

    settings = app.settings
    plan = Limits(max_steps=settings.builder_max_steps, max_fields=settings.builder_max_fields)
    return BuilderService(
        app.drafts,
        app.catalog,
        clock=app.utc_now,
        limits=lambda tenant: plan,
        policy=app.commit_policy,
        selections=app.selections,
    )


def build_memory_api(app: App) -> MemoryApi:
    """Memory's use cases (``forms.app.memory_api``) on the App's fact store, vocabulary,
    decay policy, clock and commit policy; ``FORMWORK_MEMORY`` is the deployment's switch."""
    from forms.app.memory_api import MemoryApi

    return MemoryApi(
        app.facts,
        app.vocabulary,
        app.decay_policy,
        app.settings.memory,
        app.utc_now,
        app.commit_policy,
    )


def build_memory(app: App) -> Memory | None:
    """Memory on the App's fact store, within ``FORMWORK_MEMORY_DEADLINE_MS`` on the App's
    timer, its work behind answers tracked by the App's ``behind``; None when
    ``FORMWORK_MEMORY`` turns it off. The vocabulary and the decay policy load when a call
    first uses them, unless the App was given them or the settings extend the vocabulary."""
    settings = app.settings
    if not settings.memory:
        return None
    from forms.app.memory import Memory

    return Memory(
        app.facts,
        vocabulary=app.deployment_vocabulary(),
        policy=app.decay_policy if app.holds("decay_policy") else None,
        deadline=timedelta(milliseconds=settings.memory_deadline_ms),
        timer=app.timer,
        count=memory_metric,
        behind=app.behind,
    )


def build_outbox_scan(app: App) -> OutboxScan:
    """What the sweeper reads: the instances due now in the store's due index
    (``forms.storage.due``; both adapters keep one), on the service's clock, else the store
    itself when it is its own scan, else the storage's scan of the table."""
    from forms.storage.due import DueIndex, DueScan
    from forms.storage.port import OutboxScan

    store = app.store
    if isinstance(store, DueIndex):
        return DueScan(store, app.service.clock)
    if isinstance(store, OutboxScan):
        return store
    return app.storage.outbox_scan()


def build_decay_policy() -> DecayPolicy:
    """Formwork's rules for how old a fact of each decay class may be to fill or be offered."""
    from forms.memory import DecayPolicy

    return DecayPolicy.default()


def real_backoff() -> Callable[[int], None]:
    """Jittered exponential sleeps between conflicted commits (``jittered_backoff``)."""
    from forms.app.service import jittered_backoff

    return jittered_backoff


def real_ids() -> Callable[[], str]:
    """Random instance ids (``fi_`` and 20 hex digits)."""
    from forms.app.service import new_instance_id

    return new_instance_id


def new_behind() -> Behind:
    """Nothing behind any answer yet."""
    from forms.app.behind import Behind

    return Behind()


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


# ---------------------------------------------------------------------------- dispatch, operators


def build_dispatcher(settings: Settings) -> Dispatcher:
    """What runs hooks after a commit: ``FORMWORK_DISPATCH=inprocess`` (default) runs them in
    this process; ``temporal`` starts a Temporal workflow per hook occurrence
    (``formwork.temporal.dispatch``), connecting on first use."""
    if settings.dispatch == "temporal":
        from formwork.temporal.dispatch import TemporalDispatcher

        return TemporalDispatcher.from_settings(settings)
    from forms.app.hooks import InProcessDispatcher

    return InProcessDispatcher()


def build_failure_queue(settings: Settings) -> FailureQueue | None:
    """The relay's failure queue (SQS at ``FORMWORK_RELAY_FAILURES_URL``); None when the
    deployment names none."""
    url = settings.relay_failures_url
    if url is None:
        return None
    import boto3

    from formwork.relay_failures import SqsFailureQueue

    return SqsFailureQueue(boto3.client("sqs", region_name=settings.region), url)


def build_sweeper(settings: Settings) -> Sweeper | None:
    """Starts a sweep (the function ``FORMWORK_SWEEPER_FUNCTION`` names); None: none."""
    name = settings.sweeper_function
    if name is None:
        return None
    import boto3

    from formwork.relay_failures import LambdaSweeper

    return LambdaSweeper(boto3.client("lambda", region_name=settings.region), name)


def build_migration_starter(settings: Settings) -> MigrationStarter | None:
    """Starts a bulk migration's workflow on Temporal (``FORMWORK_DISPATCH=temporal``); None
    in a deployment that runs no Temporal worker."""
    if settings.dispatch != "temporal":
        return None
    from formwork.temporal.connection import connection_for
    from formwork.temporal.migration_starter import TemporalMigrationStarter

    temporal = settings.temporal
    return TemporalMigrationStarter(connection_for(temporal), temporal.task_queue)
