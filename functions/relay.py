"""The relay: dispatches what a tool call committed but did not get to dispatch.

Two Lambda handlers. With ``FORMWORK_DISPATCH=temporal``:

* ``lambda_handler``: the table's DynamoDB stream (partial failures reported with
  ``ReportBatchItemFailures`` as Powertools' ``BatchProcessor`` reports them:
  ``partial_response``). For each instance home item written, the entries of its outbox that
  need a run are started (``TemporalDispatcher.send``, no waiting) and marked dispatched:
  executors pending and never dispatched, or dispatched at least
  ``FORMWORK_REDISPATCH_AFTER_SECONDS`` ago and still pending (``due_entries``); approvals never
  dispatched, or still pending that long past their deadline (``due_approval_runs``). Each key's
  run is looked at first (``formwork.temporal.starter``, ``look_first``): one still going, such
  as the run a tool call is waiting for (its entry says never dispatched until the wait ends),
  is neither started nor marked. A record whose dispatch fails is reported; Lambda retries from
  it, and after its retries the batch's coordinates go to the on-failure queue.
* ``sweep_handler``: on a schedule, for what the stream can no longer deliver (a batch that
  exhausted its retries, records past the stream's 24-hour retention, a relay that was down).
  With ``{"instance_ids": [...]}`` it looks at those instances only; otherwise it reads the
  App's outbox scan (``forms.storage.port.OutboxScan``: the instances due now in the store's
  due index, ``forms.storage.due``, never the whole table). ``docs/dispatch.md`` has what a
  sweep costs.

With in-process dispatch there are no runs to catch up on (in-process hooks never record a
dispatch), so the stream relay does nothing; the sweeper still sweeps, for approvals: nothing
else waits on their deadlines, so it applies the timeout outcome of every approval past its
deadline (``FormService.expire_approvals``). On Temporal the approval's workflow does that.

Lambda calls both with the event and the context, and they work with this process's App
(``formwork.process.app()``); tests pass ``app=`` to work with theirs.

Both are idempotent: starting a run is deduplicated by its workflow id (the key), recording
dispatch is a compare-and-set commit that leaves recorded entries alone, and an approval
decided or expired already is not expired again.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from aws_lambda_powertools import Logger
from aws_lambda_powertools.metrics import MetricUnit, single_metric
from aws_lambda_powertools.utilities.batch.exceptions import (
    BatchProcessingError,
    ExceptionInfo,
    UnexpectedBatchTypeError,
)
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import (
    DynamoDBRecord,
    DynamoDBRecordEventName,
)

from forms.errors import NotFound
from forms.instance import OutboxEntry
from forms.outbox import due_approval_runs, due_approvals, due_entries
from forms.storage.dynamodb_outbox import state_of
from formwork import process

if TYPE_CHECKING:
    from forms.app.hooks import HookRunner
    from forms.app.service import FormService
    from formwork.bootstrap import App

SERVICE = os.getenv("POWERTOOLS_SERVICE_NAME") or "formwork"
logger = Logger(service=SERVICE)

SWEEP_MARGIN_MS = 10_000
"""A sweep stops taking new pages when the invocation has less time than this left."""


@runtime_checkable
class Sender(Protocol):
    """A durable dispatcher: starts runs without waiting (``TemporalDispatcher``)."""

    def send(
        self,
        runner: HookRunner,
        entries: list[OutboxEntry],
        *,
        wait_ms: int = 0,
        look_first: bool = False,
    ) -> list[str]: ...


class Relay:
    """Finds the entries of an outbox that need a dispatch and dispatches them."""

    def __init__(self, service: FormService, *, redispatch_after: timedelta) -> None:
        self.service = service
        self.redispatch_after = redispatch_after

    @property
    def sender(self) -> Sender | None:
        dispatcher = self.service.dispatcher
        return dispatcher if isinstance(dispatcher, Sender) else None

    def dispatch_due(self, instance_id: str, outbox: Mapping[str, OutboxEntry]) -> list[str]:
        """Dispatch what ``outbox`` (as seen in a stream image or a scan) still needs."""
        sender = self.sender
        if sender is None:
            return []
        due = self.due(outbox)
        if due:
            # Decide on the stored state, not on an image that may be old (a replayed record,
            # an eventually consistent scan): a re-run may start a second run under the key,
            # and the tool call that wrote a record has usually dispatched (or finished) its
            # hooks by the time the stream delivers it; one read here saves a start and a write.
            # A hook whose run is still going when the record arrives shows as never dispatched
            # (the call records it only if it outlasts its wait): the sender looks at the run
            # before starting anything, and leaves a going one alone (``look_first``).
            try:
                current = self.service.store.get(instance_id).state.outbox
            except NotFound:
                return []
            due = self.due(current)
        if not due:
            return []
        keys = sender.send(self.service, due, look_first=True)
        logger.info("relayed hooks", extra={"instance_id": instance_id, "keys": keys})
        return keys

    def due(self, outbox: Mapping[str, OutboxEntry]) -> list[OutboxEntry]:
        """The entries of ``outbox`` whose runs need starting: hooks, then approvals."""
        now = self.service.clock()
        return due_entries(outbox, now, self.redispatch_after) + due_approval_runs(
            outbox, now, self.redispatch_after
        )

    def expire_due(self, instance_id: str, outbox: Mapping[str, OutboxEntry]) -> list[str]:
        """With in-process dispatch: apply the timeout outcome of the instance's approvals past
        their deadline (on Temporal, each approval's workflow does it at its deadline)."""
        if self.sender is not None or not due_approvals(outbox, self.service.clock()):
            return []
        expired = self.service.expire_approvals(instance_id)
        if expired:
            logger.info("expired approvals", extra={"instance_id": instance_id, "keys": expired})
        return expired

    def sweep_one(self, instance_id: str, outbox: Mapping[str, OutboxEntry], into: Sweep) -> None:
        """What a sweep does for one instance: dispatch what it needs, expire what is due."""
        into.seen += 1
        late = self.service.clock() - self.redispatch_after
        into.overdue += len(due_approvals(outbox, late))
        try:
            into.dispatched += self.dispatch_due(instance_id, outbox)
            into.expired += self.expire_due(instance_id, outbox)
        except Exception as exc:
            logger.exception("sweep could not dispatch", extra={"instance_id": instance_id})
            into.failed[instance_id] = f"{type(exc).__name__}: {exc}"

    def on_record(self, record: DynamoDBRecord) -> None:
        """One stream record: act on instance home items that were inserted or modified."""
        if record.event_name == DynamoDBRecordEventName.REMOVE or record.dynamodb is None:
            return
        found = state_of(record.dynamodb.new_image)
        if found is not None:
            self.dispatch_due(found[0], found[1].outbox)

    def sweep(self, instance_ids: list[str]) -> dict[str, Any]:
        """Look at ``instance_ids`` as stored now; dispatch what each still needs."""
        found = Sweep()
        for instance_id in instance_ids:
            try:
                instance = self.service.store.get(instance_id)
            except NotFound:
                continue
            self.sweep_one(instance_id, instance.state.outbox, found)
        return found.summary(len(instance_ids), inprocess=self.sender is None)


class Sweep:
    """What one sweep did. A plain class: ``@dataclass`` compiles its generated methods when
    the module is imported, about 0.005x ``import boto3`` on the stream relay's cold start,
    which never sweeps."""

    __slots__ = ("dispatched", "expired", "failed", "overdue", "seen")

    def __init__(self) -> None:
        self.seen = 0
        self.dispatched: list[str] = []
        """Keys whose runs were started (Temporal)."""
        self.expired: list[str] = []
        """Approvals whose timeout outcome was applied (in-process dispatch)."""
        self.failed: dict[str, str] = {}
        self.overdue = 0
        """Approvals found pending more than the redispatch delay past their deadline: their
        timeout outcome should have applied by now (counted before this sweep acts on them)."""

    def summary(self, instances: int, *, inprocess: bool) -> dict[str, Any]:
        result: dict[str, Any] = {
            "instances": instances,
            "dispatched": self.dispatched,
            "failed": self.failed,
        }
        if self.overdue:
            result["overdue_approvals"] = self.overdue
        if inprocess:  # no runs to start; approvals past their deadline expired here
            result.update(expired=self.expired, skipped="inprocess dispatch")
        return result


# ---------------------------------------------------------------------------- handlers


def relay(app: App) -> Relay:
    """The relay over ``app``'s service."""
    return Relay(
        app.service,
        redispatch_after=timedelta(seconds=app.settings.redispatch_after_seconds),
    )


def lambda_handler(
    event: dict[str, Any], context: Any, *, app: App | None = None
) -> dict[str, Any]:
    """DynamoDB Streams batches; reports the records that could not be dispatched."""
    del context
    current = relay(app if app is not None else process.app())
    return partial_response(event, current.on_record)


def partial_response(
    event: dict[str, Any], on_record: Callable[[DynamoDBRecord], None]
) -> dict[str, Any]:
    """``on_record`` for each record of a DynamoDB Streams batch, in order; the records it
    raised for are reported as failed (``batchItemFailures``, by sequence number), and when
    every record failed the whole batch is (``BatchProcessingError``).

    What Powertools' ``process_partial_response`` with a ``BatchProcessor`` for DynamoDB
    Streams answers and raises, for the same event (``tests/unit/test_relay_batch.py`` holds
    that), written out because ``aws_lambda_powertools.utilities.batch`` imports ``asyncio``
    (with ``ssl``, ``socket`` and ``subprocess``) for its async processor: 0.15x ``import
    boto3`` on the relay's cold start, which the stream relay never uses.
    """
    try:
        records = event.get("Records", [])
    except AttributeError as error:
        raise ValueError(_INVALID_EVENT) from error
    if not records or not isinstance(records, list):
        raise UnexpectedBatchTypeError(_UNEXPECTED_BATCH)
    failed: list[DynamoDBRecord] = []
    exceptions: list[ExceptionInfo] = []
    for raw in records:
        record = DynamoDBRecord(raw)
        try:
            on_record(record)
        except Exception:
            failed.append(record)
            exceptions.append(sys.exc_info())
    if failed and len(failed) == len(records):
        raise BatchProcessingError(
            msg=f"All records failed processing. {len(exceptions)} individual errors logged "
            "separately below.",
            child_exceptions=exceptions,
        )
    # As Powertools reads it: a failed record without a ``dynamodb`` key raises here too.
    return {
        "batchItemFailures": [
            {"itemIdentifier": cast("Any", record.dynamodb).sequence_number} for record in failed
        ]
    }


_INVALID_EVENT = (
    "Invalid event format. Please ensure batch event is a valid DynamoDBStreams event. \n"
    "See sample events in our documentation for either SQS, KinesisDataStreams, DynamoDBStreams, "
    "Kafka: \n https://docs.powertools.aws.dev/lambda/python/latest/utilities/batch/"
    "#processing-messages-from-sqs"
)
_UNEXPECTED_BATCH = (
    "Unexpected batch event type. Possible values are: SQS, KinesisDataStreams, "
    "DynamoDBStreams, Kafka"
)


def sweep_handler(
    event: dict[str, Any] | None, context: Any, *, app: App | None = None
) -> dict[str, Any]:
    """Scheduled: scan for undispatched entries (and, with in-process dispatch, approvals past
    their deadline). ``{"instance_ids": [...]}``: those only.

    ``dispatched`` lists the keys whose runs were started (Temporal); with in-process dispatch
    ``expired`` lists the approvals whose timeout outcome was applied.
    """
    served = app if app is not None else process.app()
    current = relay(served)
    ids = (event or {}).get("instance_ids")
    if isinstance(ids, list):
        return current.sweep([str(i) for i in ids])

    def keep_going() -> bool:
        remaining = getattr(context, "get_remaining_time_in_millis", None)
        return remaining is None or remaining() > SWEEP_MARGIN_MS

    found = Sweep()
    for instance_id, state in served.outbox_scan.pending(keep_going):
        current.sweep_one(instance_id, state.outbox, found)
    summary = found.summary(found.seen, inprocess=current.sender is None)
    logger.info("sweep finished", extra={"summary": json.dumps(summary)})
    count_overdue(found.overdue)
    return summary


APPROVALS_OVERDUE = "ApprovalsOverdue"
"""The metric each full sweep writes (0 included, so the alarm always has data): approvals
still pending more than ``FORMWORK_REDISPATCH_AFTER_SECONDS`` past their deadline."""


def count_overdue(overdue: int) -> None:
    """Write ``APPROVALS_OVERDUE`` in the embedded metric format on the sweeper's log."""
    namespace = os.getenv("POWERTOOLS_METRICS_NAMESPACE") or "Formwork"
    with single_metric(
        name=APPROVALS_OVERDUE, unit=MetricUnit.Count, value=overdue, namespace=namespace
    ):
        pass
