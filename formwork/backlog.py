"""The hook task queue's backlog, read with this deployment's Temporal settings.

The bridge from the Lambda shell (``formwork.aws.backlog``, which never imports
``formwork.temporal``) to the Temporal shell: the process's one Temporal connection
(``formwork.temporal.dispatch``) and ``DescribeTaskQueue`` (``formwork.temporal.backlog``).
"""

from __future__ import annotations

from formwork.config import TemporalSettings
from formwork.temporal.backlog import Backlog, describe_backlog
from formwork.temporal.dispatch import connection_for


def read_backlog(settings: TemporalSettings, timeout: float) -> Backlog:
    """The backlog of ``settings.task_queue``; raises ``TimeoutError`` after ``timeout``
    seconds."""
    connection = connection_for(settings)

    async def describe() -> Backlog:
        return await describe_backlog(await connection.client(), settings.task_queue)

    return connection.run(describe(), timeout=timeout)


__all__ = ["Backlog", "read_backlog"]
