"""Migrating the open instances of a form in bulk, for an operator: a dry run that says what
would happen to each, then the run itself (a Temporal workflow, ``formwork.temporal.migrations``,
whose activity calls ``migrate_page`` a page at a time).

An instance otherwise moves to the current version of its form only when its version is no
longer served, at its next write (``CommitLoop._migrated``). A bulk migration moves every open
instance of the operator's tenant on an older version now, through the same engine function
(``forms.registry.migration_commit``: renames and conversions appended as ``migration``
revisions, nothing rewritten), so a dry run and the run say the same thing for an instance
that did not change in between.

What happens to an instance:

* ``moves``: it is moved to the current version. ``moved`` lists the fields whose answer a
  rename or a conversion carried over; ``invalid`` the answered fields the current version
  refuses (they stay on record, read ``invalid`` with their reason and hold completion until
  corrected, as any migrated answer does).
* ``fails``: a conversion raised, or gave a value the field refuses; it stays as it is.
* ``no_path``: the current version has no migration from its version; it stays as it is.

The instances are read through the open-form index (``forms.storage.open_forms``): the
tenant's open instances of the form on a version below the current one, never a scan.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal, Protocol

from forms.app.catalog import Catalog
from forms.app.operations import Operator
from forms.compiled import CompiledForm
from forms.definition import Migration
from forms.errors import ConflictError, MigrationFailed, NotFound, VersionMismatch
from forms.evaluation import refusal
from forms.instance import Commit, FormInstance, apply_commit
from forms.principals import tenant_of
from forms.registry import Forms, migration_chain, migration_commit
from forms.storage.open_forms import OpenFormIndex

if TYPE_CHECKING:
    from forms.app.service import FormService

PlanOutcome = Literal["moves", "fails", "no_path"]
"""What a dry run says would happen to an instance (module docstring)."""
RunOutcome = Literal["moved", "failed", "no_path", "skipped", "busy"]
"""What the run did to an instance (``Migrated``)."""
MAX_COMMIT_ATTEMPTS = 5
"""Commits of one instance's migration before it is left for the next run (``busy``)."""


@dataclass(frozen=True, slots=True)
class InstancePlan:
    """What a migration would do to one instance (module docstring)."""

    instance_id: str
    principal: str
    conversation_id: str
    from_version: int
    to_version: int
    outcome: PlanOutcome
    moved: tuple[str, ...] = ()
    invalid: tuple[str, ...] = ()
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class MigrationPlan:
    """A page of a dry run: the current version and what would happen to each instance."""

    form_id: str
    to_version: int
    instances: tuple[InstancePlan, ...]
    next: str | None


@dataclass(frozen=True, slots=True)
class Migrated:
    """What the run did to one instance: ``moved``, ``failed``, ``no_path``, ``skipped`` (it
    closed or moved on meanwhile) or ``busy`` (it kept changing under the run)."""

    instance_id: str
    result: RunOutcome
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class MigratedPage:
    results: tuple[Migrated, ...]
    next: str | None


def current_form(registry: Forms, form_id: str, principal: str) -> CompiledForm:
    """The current version of ``form_id`` as the operator's tenant sees it (its code forms
    and its published documents); ``UnknownForm`` otherwise, another tenant's included."""
    return registry.latest(form_id, principal)


def plan_migration(
    service: FormService,
    operator: Operator,
    form_id: str,
    *,
    limit: int = 20,
    after: str | None = None,
) -> MigrationPlan:
    """The dry run: what moving each of the tenant's open instances of ``form_id`` on an
    older version would do, a page at a time; nothing is written. ``UnknownForm`` for a form
    the tenant has not, ``ValueError`` for a bad limit or cursor."""
    target = current_form(service.registry, form_id, operator.principal)
    page = _index(service).older(
        operator.tenant, target.id, target.version, limit=limit, after=after
    )
    now = service.clock()
    plans = tuple(
        plan_instance(service.registry, target, instance, now)[0] for instance in page.instances
    )
    return MigrationPlan(target.id, target.version, plans, page.next)


def plan_instance(
    registry: Forms, target: CompiledForm, instance: FormInstance, now: datetime
) -> tuple[InstancePlan, Commit | None]:
    """What moving ``instance`` onto ``target`` does, and the commit that does it (None when it
    cannot move)."""

    def plan(outcome: PlanOutcome, **found: object) -> InstancePlan:
        return InstancePlan(
            instance_id=instance.id,
            principal=instance.principal,
            conversation_id=instance.conversation_id,
            from_version=instance.form_version,
            to_version=target.version,
            outcome=outcome,
            **found,  # type: ignore[arg-type]
        )

    try:
        chain = _chain(registry, target, instance)
    except VersionMismatch as exc:
        return plan("no_path", reason=exc.message), None
    try:
        commit = migration_commit(target, instance, chain, now)
    except MigrationFailed as exc:
        return plan("fails", reason=exc.message), None
    after = apply_commit(instance, commit)
    invalid = tuple(
        field_id
        for field_id, field in target.fields.items()
        if refusal(field, after.field(field_id).in_force()) is not None
    )
    return plan("moves", moved=tuple(sorted(commit.fields)), invalid=invalid), commit


def migrate_page(
    service: FormService,
    principal: str,
    form_id: str,
    to_version: int,
    *,
    limit: int = 20,
    after: str | None = None,
) -> MigratedPage:
    """The run, one page: move each of the tenant's open instances of ``form_id`` below
    ``to_version`` onto the current version, compare-and-set on the instance as stored. What
    the workflow's activity calls; idempotent (a moved instance leaves the listing). Stops
    with ``skipped`` for every instance when the current version is no longer ``to_version``
    (a newer one was published since the run started: start another)."""
    target = current_form(service.registry, form_id, principal)
    page = _index(service).older(
        tenant_of(principal), target.id, to_version, limit=limit, after=after
    )
    if target.version != to_version:
        return MigratedPage(
            tuple(
                Migrated(i.id, "skipped", "a newer version was published") for i in page.instances
            ),
            None,
        )
    results = tuple(_migrate_one(service, target, instance) for instance in page.instances)
    return MigratedPage(results, page.next)


def _migrate_one(service: FormService, target: CompiledForm, instance: FormInstance) -> Migrated:
    current = instance
    for _ in range(MAX_COMMIT_ATTEMPTS):
        if current.state.status != "open" or current.form_version >= target.version:
            return Migrated(current.id, "skipped", "closed or already moved")
        plan, commit = plan_instance(service.registry, target, current, service.clock())
        if commit is None:
            result: RunOutcome = "failed" if plan.outcome == "fails" else "no_path"
            return Migrated(current.id, result, plan.reason)
        try:
            service.store.commit(commit)
        except ConflictError as conflict:
            try:
                current = conflict.current or service.store.get(current.id)
            except NotFound:
                return Migrated(current.id, "skipped", "the instance is gone")
            continue
        return Migrated(current.id, "moved")
    return Migrated(current.id, "busy", "it kept changing; the next run moves it")


class StartFailed(Exception):
    """The run could not be started (Temporal unreachable, refused, too slow to answer)."""


class MigrationStarter(Protocol):
    """Starts the run (``formwork.temporal.migration_starter``, on Temporal) or joins the one going;
    ``StartFailed`` when it cannot."""

    def start_migration(
        self, principal: str, form_id: str, to_version: int
    ) -> tuple[str, bool]: ...


@dataclass(frozen=True, slots=True)
class StartedMigration:
    """A run: its workflow id, the version it moves instances to, and whether this request
    started it (False: one was going already for this form and version; it was joined)."""

    form_id: str
    to_version: int
    workflow_id: str
    started: bool


def start_migration(
    service: FormService, starter: MigrationStarter, operator: Operator, form_id: str
) -> StartedMigration:
    """Start the run that moves the operator's tenant's open instances of ``form_id`` onto
    its current version; ``UnknownForm`` for a form the tenant has not."""
    target = current_form(service.registry, form_id, operator.principal)
    run_id, started = starter.start_migration(operator.principal, target.id, target.version)
    return StartedMigration(target.id, target.version, run_id, started)


def _chain(registry: Forms, target: CompiledForm, instance: FormInstance) -> list[Migration]:
    """The migrations onto ``target``: a published document's versions carry none (its
    instances move version to version as they are, as the catalog moves them), a code form's
    are its definition's."""
    if isinstance(registry, Catalog) and not registry.registry.serves(target.id):
        return [Migration(from_version=instance.form_version)]
    return migration_chain(target, instance.form_version)


def _index(service: FormService) -> OpenFormIndex:
    store = service.store
    if not isinstance(store, OpenFormIndex):  # both adapters are
        raise TypeError(f"{type(store).__name__} keeps no open-form index")
    return store
