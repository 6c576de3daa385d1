"""The hook task queue's backlog, read with this deployment's Temporal settings.

The bridge from the Lambda shell (``formwork.aws.backlog``, which never imports
``formwork.temporal``) to the Temporal shell: the process's one Temporal connection
(``formwork.temporal.connection``) and ``DescribeTaskQueue`` (``formwork.temporal.backlog``).
Only the connection's gRPC services are asked for, so neither ``temporalio.client`` nor the
dispatcher is imported; in a process that dispatches too, the services are its client's.
"""

from __future__ import annotations

from formwork.config import TemporalSettings
from formwork.temporal.backlog import Backlog, describe_backlog
from formwork.temporal.connection import connection_for


def read_backlog(settings: TemporalSettings, timeout: float) -> Backlog:
    """The backlog of ``settings.task_queue``; raises ``TimeoutError`` after ``timeout``
    seconds."""
    connection = connection_for(settings)

    async def describe() -> Backlog:
        service = await connection.service()
        return await describe_backlog(service, settings.namespace, settings.task_queue)

    return connection.run(describe(), timeout=timeout)


__all__ = ["Backlog", "read_backlog"]
