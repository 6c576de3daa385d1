"""The hook task queue's backlog, read with this deployment's Temporal settings.

The bridge from the Lambda shell (``functions.backlog``, which never imports ``workflows``)
to the Temporal shell: the process's one Temporal connection (``workflows.dispatch``) and
``DescribeTaskQueue`` (``workflows.backlog``).
"""

from __future__ import annotations

from formwork.config import TemporalSettings
from workflows.backlog import Backlog, describe_backlog
from workflows.dispatch import connection_for


def read_backlog(settings: TemporalSettings, timeout: float) -> Backlog:
    """The backlog of ``settings.task_queue``; raises ``TimeoutError`` after ``timeout``
    seconds."""
    connection = connection_for(settings)

    async def describe() -> Backlog:
        return await describe_backlog(await connection.client(), settings.task_queue)

    return connection.run(describe(), timeout=timeout)


__all__ = ["Backlog", "read_backlog"]
