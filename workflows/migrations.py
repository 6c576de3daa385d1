"""``FormMigrationWorkflow``: an operator's bulk migration of a form's open instances
(``POST /operator/forms/{form_id}/migrate`` without ``dry_run``), one activity per page.

The workflow only pages: each activity (``migrate_page``) reads one page of the tenant's open
instances of the form on an older version and moves each through
``forms.app.migrations.migrate_page``, compare-and-set, returning what it did and the cursor
of the next page. A retried page moves nothing twice (a moved instance has left the listing),
so the activity is safe to retry. Its id is ``migrate:<tenant>:<form>:v<version>``: a second
start while a run is going joins it; after it ends, a new run may start (to pick up instances
that failed once their cause is fixed).

Sandbox rules: the workflow is re-imported in Temporal's sandbox; it names its activity by
string and exchanges plain dataclasses; the activity's use case (``forms.app.migrations``)
comes in through ``imports_passed_through``, as the hook activity's module does.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING

from temporalio import activity, workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from forms.app.migrations import migrate_page

if TYPE_CHECKING:
    from forms.app.service import FormService

MIGRATION_WORKFLOW = "FormMigrationWorkflow"
MIGRATE_PAGE_ACTIVITY = "migrate_page"
PAGE_SIZE = 25
MAX_PAGES = 2000
"""Pages one run reads at most (50,000 instances at the default page size, about 6,000
history events, well under Temporal's limits); a run that stops there says so, and the next
run goes on from the start of what is left."""


@dataclass(frozen=True)
class MigrationInput:
    """What one run migrates: the operator's tenant's (``principal``'s) open instances of
    ``form_id`` onto version ``to_version``, ``page_size`` at a time."""

    principal: str
    form_id: str
    to_version: int
    page_size: int = PAGE_SIZE


@dataclass(frozen=True)
class PageInput:
    run: MigrationInput
    after: str | None = None


@dataclass
class PageOutcome:
    moved: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    no_path: dict[str, str] = field(default_factory=dict)
    busy: list[str] = field(default_factory=list)
    skipped: int = 0
    next: str | None = None


@dataclass
class MigrationOutcome:
    """What a run did: the instances moved (a count), those that could not move (by id, with
    why), those that kept changing (``busy``: the next run moves them), pages read, and
    whether it stopped at ``MAX_PAGES``."""

    moved: int = 0
    failed: dict[str, str] = field(default_factory=dict)
    no_path: dict[str, str] = field(default_factory=dict)
    busy: list[str] = field(default_factory=list)
    skipped: int = 0
    pages: int = 0
    stopped_early: bool = False


def workflow_id(principal: str, form_id: str, to_version: int) -> str:
    """The run's id: one run per tenant, form and target version at a time."""
    tenant, slash, _ = principal.partition("/")
    return f"migrate:{tenant if slash else '-'}:{form_id}:v{to_version}"


@workflow.defn(name=MIGRATION_WORKFLOW)
class FormMigrationWorkflow:
    """Page through the open instances to migrate until none is left."""

    @workflow.run
    async def run(self, run: MigrationInput) -> MigrationOutcome:
        total = MigrationOutcome()
        after: str | None = None
        while total.pages < MAX_PAGES:
            page = await workflow.execute_activity(
                MIGRATE_PAGE_ACTIVITY,
                PageInput(run, after),
                result_type=PageOutcome,
                start_to_close_timeout=timedelta(minutes=5),
                retry_policy=RetryPolicy(maximum_attempts=5, maximum_interval=timedelta(minutes=1)),
            )
            total.pages += 1
            total.moved += len(page.moved)
            total.failed.update(page.failed)
            total.no_path.update(page.no_path)
            total.busy += page.busy
            total.skipped += page.skipped
            if page.next is None:
                return total
            after = page.next
        total.stopped_early = True
        return total


class MigrationActivities:
    """The activity, bound to the worker's service."""

    def __init__(self, service: FormService) -> None:
        self.service = service

    @activity.defn(name=MIGRATE_PAGE_ACTIVITY)
    async def migrate_page(self, page: PageInput) -> PageOutcome:
        return await asyncio.to_thread(self._migrate, page)

    def _migrate(self, page: PageInput) -> PageOutcome:
        run = page.run
        done = migrate_page(
            self.service,
            run.principal,
            run.form_id,
            run.to_version,
            limit=run.page_size,
            after=page.after,
        )
        outcome = PageOutcome(next=done.next)
        for result in done.results:
            if result.result == "moved":
                outcome.moved.append(result.instance_id)
            elif result.result == "failed":
                outcome.failed[result.instance_id] = result.reason or ""
            elif result.result == "no_path":
                outcome.no_path[result.instance_id] = result.reason or ""
            elif result.result == "busy":
                outcome.busy.append(result.instance_id)
            else:
                outcome.skipped += 1
        return outcome
