"""Where a deployment keeps its data: one choice, ``Storage``, that builds every store of one
kind (``formwork.bootstrap`` asks it for each store on first use).

``DynamoDBStorage`` keeps everything on the forms table (``TABLE_NAME``), through one boto3
client: the instances, the tenants' published documents, the drafts and the selections on
them, the facts, the page-link ledger and the webhook delivery log, and it scans the table for
the sweeper when the form store keeps no due index. ``InMemoryStorage`` keeps all of them in
this process (a test's or a local run's App: nothing outlives the process). No store is built
before it is asked for, and neither kind imports its adapters with this module: boto3 and the
DynamoDB adapters load when the first store is built, so a request that never touches storage
(``GET /tools``) does not pay for them.

An App is given its storage (``bootstrap(storage=InMemoryStorage())``), or takes the kind of
the form store it was given (``storage_for``: an in-memory form store keeps its neighbours in
memory too), else the table's. What is given whole (``bootstrap(drafts=...)``) is used as it
is, whatever the storage.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from formwork.config import ConfigError, Settings

if TYPE_CHECKING:
    from forms.storage.documents import FormDocumentStore
    from forms.storage.drafts import DraftStore
    from forms.storage.facts import FactStore
    from forms.storage.page_links import PageLinkLedger
    from forms.storage.port import FormStore, OutboxScan
    from forms.storage.selections import SelectionStore
    from formwork.webhooks import DeliveryLog


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
    return DynamoDBStorage(
        client if client is not None else build_dynamodb_client(settings), table
    ).form_store()


def build_delivery_log(settings: Settings, client: Any = None) -> DeliveryLog:
    """The webhook delivery log: on the forms table (``TABLE_NAME``, through ``client``,
    default a new one) when it is set, else in this process's memory."""
    if settings.table_name is None:
        return InMemoryStorage().delivery_log()
    client = client if client is not None else build_dynamodb_client(settings)
    return DynamoDBStorage(client, settings.table_name).delivery_log()


class Storage(ABC):
    """Builds each store of one kind; an App asks once per store and keeps what it gets."""

    kind: str
    """What the stores are kept in, in words (``"memory"``, ``"dynamodb"``)."""

    @abstractmethod
    def form_store(self) -> FormStore:
        """The instances, their call records and indexes."""

    @abstractmethod
    def documents(self) -> FormDocumentStore:
        """The tenants' published form documents."""

    @abstractmethod
    def drafts(self) -> DraftStore:
        """The tenants' drafts, their edit logs and call records."""

    @abstractmethod
    def selections(self, drafts: DraftStore) -> SelectionStore:
        """Each person's selection on each draft (beside ``drafts``)."""

    @abstractmethod
    def facts(self) -> FactStore:
        """Each principal's facts, their histories and memory settings."""

    @abstractmethod
    def page_links(self) -> PageLinkLedger:
        """The page links already exchanged (each is spent once)."""

    @abstractmethod
    def delivery_log(self) -> DeliveryLog:
        """The webhook deliveries, both directions."""

    @abstractmethod
    def outbox_scan(self) -> OutboxScan:
        """What the sweeper reads when the form store keeps no due index of its own."""


class InMemoryStorage(Storage):
    """Every store in this process's memory (a test's, a local run's)."""

    kind = "memory"

    def form_store(self) -> FormStore:
        from forms.storage.memory import InMemoryFormStore

        return InMemoryFormStore()

    def documents(self) -> FormDocumentStore:
        from forms.storage.documents import InMemoryFormDocumentStore

        return InMemoryFormDocumentStore()

    def drafts(self) -> DraftStore:
        from forms.storage.drafts import InMemoryDraftStore

        return InMemoryDraftStore()

    def selections(self, drafts: DraftStore) -> SelectionStore:
        from forms.storage.selections import InMemorySelectionStore

        return InMemorySelectionStore(drafts)

    def facts(self) -> FactStore:
        from forms.storage.facts import InMemoryFactStore

        return InMemoryFactStore()

    def page_links(self) -> PageLinkLedger:
        from forms.storage.page_links import InMemoryPageLinkLedger

        return InMemoryPageLinkLedger()

    def delivery_log(self) -> DeliveryLog:
        from formwork.webhooks.memory import InMemoryDeliveryLog

        return InMemoryDeliveryLog()

    def outbox_scan(self) -> OutboxScan:
        raise ConfigError("an in-memory form store is its own outbox scan: give the App one")


class DynamoDBStorage(Storage):
    """Every store on the forms table ``table``, through the boto3 ``client``."""

    kind = "dynamodb"

    def __init__(self, client: Any, table: str) -> None:
        self.client = client
        self.table = table

    def form_store(self) -> FormStore:
        from forms.storage.dynamodb import DynamoDBFormStore

        return DynamoDBFormStore(self.client, self.table)

    def documents(self) -> FormDocumentStore:
        from forms.storage.dynamodb_documents import DynamoDBFormDocumentStore

        return DynamoDBFormDocumentStore(self.client, self.table)

    def drafts(self) -> DraftStore:
        from forms.storage.dynamodb_drafts import DynamoDBDraftStore

        return DynamoDBDraftStore(self.client, self.table)

    def selections(self, drafts: DraftStore) -> SelectionStore:
        from forms.storage.dynamodb_selections import DynamoDBSelectionStore

        return DynamoDBSelectionStore(self.client, self.table)

    def facts(self) -> FactStore:
        from forms.storage.dynamodb_facts import DynamoDBFactStore

        return DynamoDBFactStore(self.client, self.table)

    def page_links(self) -> PageLinkLedger:
        from forms.storage.dynamodb_page_links import DynamoDBPageLinkLedger

        return DynamoDBPageLinkLedger(self.client, self.table)

    def delivery_log(self) -> DeliveryLog:
        from formwork.webhooks.dynamodb import DynamoDBDeliveryLog

        return DynamoDBDeliveryLog(self.client, self.table)

    def outbox_scan(self) -> OutboxScan:
        from forms.storage.dynamodb_outbox import DynamoDBOutboxScan

        return DynamoDBOutboxScan(self.client, self.table)


def storage_for(store: object) -> Storage | None:
    """The storage of ``store``'s kind when that is known here (an in-memory form store keeps
    its neighbours in memory); None: the table's, which the App builds from its settings.
    The one place that looks at a store's class to choose where the others are kept."""
    from forms.storage.memory import InMemoryFormStore

    return InMemoryStorage() if isinstance(store, InMemoryFormStore) else None
