"""``WorkerBacklogFunction``: every minute, the hook task queue's backlog as CloudWatch metrics.

Scheduled by the template when the worker service is deployed (``DispatchMode=temporal``).
It asks Temporal for the backlog of ``TEMPORAL_TASK_QUEUE`` (``formwork.backlog``) and writes
it in the embedded metric format on its log, which CloudWatch turns into metrics (no
``cloudwatch:PutMetricData`` grant): namespace ``POWERTOOLS_METRICS_NAMESPACE``, dimensions
``service`` and ``TaskQueue``:

* ``BacklogPerWorker``: tasks waiting per polling worker, what the worker service's target
  tracking policy keeps near ``WorkerBacklogTarget``;
* ``Backlog`` (tasks waiting), ``BacklogAgeSeconds`` (the oldest), ``PollingWorkers``.

Published from outside the workers, so the number is there when no worker runs.
"""

from __future__ import annotations

import os
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.metrics import MetricUnit, single_metric

from formwork import process
from formwork.backlog import Backlog, read_backlog
from formwork.bootstrap import App

logger = Logger(service=os.getenv("POWERTOOLS_SERVICE_NAME") or "formwork")

DESCRIBE_TIMEOUT_SECONDS = 20.0
PER_WORKER = "BacklogPerWorker"
"""The metric the worker service's target tracking policy reads (template.yaml)."""
TASK_QUEUE_DIMENSION = "TaskQueue"


def lambda_handler(
    event: dict[str, Any] | None, context: Any, *, app: App | None = None
) -> dict[str, Any]:
    """Describe the queue, publish the metrics, answer what was published."""
    del event, context
    settings = (app if app is not None else process.app()).settings.temporal
    backlog = read_backlog(settings, DESCRIBE_TIMEOUT_SECONDS)
    publish(backlog, settings.task_queue)
    summary = {
        "task_queue": settings.task_queue,
        "workflow_tasks": backlog.workflow_tasks,
        "activity_tasks": backlog.activity_tasks,
        "age_seconds": backlog.age_seconds,
        "workers": backlog.workers,
        "per_worker": backlog.per_worker,
    }
    logger.info("task queue backlog", extra=summary)
    return summary


def publish(backlog: Backlog, task_queue: str) -> None:
    """Write the backlog's metrics in the embedded metric format (one record each)."""
    namespace = os.getenv("POWERTOOLS_METRICS_NAMESPACE") or "Formwork"
    for name, unit, value in (
        (PER_WORKER, MetricUnit.Count, backlog.per_worker),
        ("Backlog", MetricUnit.Count, float(backlog.tasks)),
        ("BacklogAgeSeconds", MetricUnit.Seconds, backlog.age_seconds),
        ("PollingWorkers", MetricUnit.Count, float(backlog.workers)),
    ):
        with single_metric(name=name, unit=unit, value=value, namespace=namespace) as metric:
            metric.add_dimension(name=TASK_QUEUE_DIMENSION, value=task_queue)
