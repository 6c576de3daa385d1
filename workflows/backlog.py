"""The hook task queue's backlog, the number the workers are scaled on.

``describe_backlog`` asks Temporal (``DescribeTaskQueue`` with ``report_stats``) how many
workflow tasks and activity tasks wait on the queue, how old the oldest is, and which workers
poll it. ``formwork.aws.backlog`` publishes it every minute as CloudWatch metrics; the worker
service's target tracking policy keeps ``BacklogPerWorker`` (tasks waiting per polling worker)
near a target (docs/deploy.md, "The worker").

The counts are Temporal's *approximate* backlog: tasks added and not yet handed to a poller.
Tasks a worker holds are not in it, and a partitioned queue may report late by a few seconds;
it is a signal for scaling, not an account.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from temporalio.api.enums.v1 import TaskQueueKind, TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest

if TYPE_CHECKING:
    from temporalio.service import ServiceClient


@dataclass(frozen=True)
class Backlog:
    """What waits on one task queue, and who polls it."""

    workflow_tasks: int
    activity_tasks: int
    age_seconds: float
    """The oldest waiting task's age, workflow or activity (0 when none waits)."""
    workers: int
    """Distinct worker identities that polled the queue recently (either type)."""

    @property
    def tasks(self) -> int:
        return self.workflow_tasks + self.activity_tasks

    @property
    def per_worker(self) -> float:
        """Tasks waiting per polling worker; with no worker polling, all of them (so a
        service whose workers all died still asks for more)."""
        return self.tasks / max(self.workers, 1)


async def describe_backlog(service: ServiceClient, namespace: str, task_queue: str) -> Backlog:
    """The backlog of ``task_queue`` in ``namespace``, asked of the workflow service alone
    (no ``temporalio.client``: ``formwork.temporal.connection``)."""
    counts: dict[int, int] = {}
    age = 0.0
    identities: set[str] = set()
    for kind in (TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW, TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY):
        response = await service.workflow_service.describe_task_queue(
            DescribeTaskQueueRequest(
                namespace=namespace,
                task_queue=TaskQueue(name=task_queue, kind=TaskQueueKind.TASK_QUEUE_KIND_NORMAL),
                task_queue_type=kind,
                report_stats=True,
            )
        )
        counts[kind] = response.stats.approximate_backlog_count
        age = max(age, response.stats.approximate_backlog_age.ToTimedelta().total_seconds())
        identities.update(p.identity for p in response.pollers)
    return Backlog(
        workflow_tasks=counts[TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW],
        activity_tasks=counts[TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY],
        age_seconds=age,
        workers=len(identities),
    )
