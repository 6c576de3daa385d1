"""Starting a bulk migration's workflow from the API (``forms.app.migrations.MigrationStarter``
on Temporal), on the process's Temporal connection
(``formwork.temporal.connection.connection_for``)."""

from __future__ import annotations

from temporalio.common import WorkflowIDConflictPolicy

from forms.app.migrations import StartFailed
from formwork.temporal.connection import TemporalConnection
from formwork.temporal.migrations import (
    MIGRATION_WORKFLOW,
    MigrationInput,
    MigrationOutcome,
    workflow_id,
)

START_TIMEOUT_SECONDS = 8.0


class TemporalMigrationStarter:
    """Starts (or joins) a run from the API (``forms.app.migrations.MigrationStarter``), on
    the process's Temporal connection."""

    def __init__(
        self,
        connection: TemporalConnection,
        task_queue: str,
        timeout: float = START_TIMEOUT_SECONDS,
    ) -> None:
        self._connection = connection
        self._task_queue = task_queue
        self._timeout = timeout

    def start_migration(self, principal: str, form_id: str, to_version: int) -> tuple[str, bool]:
        """The run's id, and whether this call started it (False: one was going already)."""
        connection = self._connection
        run_id = workflow_id(principal, form_id, to_version)

        async def start() -> bool:
            client = await connection.client()
            handle = await client.start_workflow(
                MIGRATION_WORKFLOW,
                MigrationInput(principal, form_id, to_version),
                id=run_id,
                task_queue=self._task_queue,
                result_type=MigrationOutcome,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                static_summary=f"migrate {form_id} to version {to_version}",
            )
            response = getattr(handle, "_start_workflow_response", None)
            return bool(getattr(response, "started", True))

        try:
            return run_id, connection.run(start(), timeout=self._timeout)
        except Exception as exc:  # unreachable, refused (RPCError), timed out, no credentials
            raise StartFailed(f"{type(exc).__name__}: {exc}") from exc
