"""The forms a deployment serves, by id and version, and how old instances reach the current one.

An instance pins the definition version it started on. While that version is registered the
instance keeps running on it. When it is gone, the current definition's migrations (a chain
``from_version`` -> next) move the instance forward; without a chain the instance is reported
as a version mismatch, never read against a definition it was not written for.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from forms.compile_memory import default_vocabulary
from forms.compiled import CompiledForm, normalise
from forms.compiler import compile_form
from forms.definition import FormDef, Migration
from forms.errors import InvalidFormDefinition, MigrationFailed, UnknownForm, VersionMismatch
from forms.handover import check_declared, check_handover
from forms.instance import Commit, FieldChange, FormInstance, Revision
from forms.schema import Accepted
from forms.suggest import rank

if TYPE_CHECKING:
    from forms.vocabulary import Vocabulary


class Forms(Protocol):
    """What the application asks about forms: a ``FormRegistry`` (the deployment's forms), or
    a ``forms.app.catalog.Catalog`` (those plus what the principal's tenant published)."""

    def latest(self, name: str, principal: str | None = None) -> CompiledForm:
        """The current version of the form ``name`` denotes, for ``principal``."""
        ...

    def forms(self, principal: str | None = None) -> list[CompiledForm]:
        """The latest version of every form ``principal`` can start."""
        ...

    def for_instance(self, instance: FormInstance) -> tuple[CompiledForm, list[Migration]]:
        """The definition to run ``instance`` on, and the migrations to apply first."""
        ...


class FormRegistry:
    """Compiled forms by id and version. Registration compiles (and so checks) a definition.

    The same forms for every principal (``principal`` is accepted and ignored, so a registry
    is a ``Forms``). ``vocabulary`` is the deployment's fact vocabulary: the fact keys fields
    declare (``memory=``) are checked against it when they are registered (None: Formwork's
    own, ``Vocabulary.default()``, loaded only if a form declares a key)."""

    def __init__(
        self, definitions: Iterable[FormDef] = (), *, vocabulary: Vocabulary | None = None
    ) -> None:
        self._forms: dict[str, dict[int, CompiledForm]] = {}
        self._latest: dict[str, CompiledForm] = {}
        """Each form's highest version, by id, in registration order: kept in step by
        ``register`` so the lookup every tool call makes (``latest``) is one dict read,
        not a ``max`` over the versions."""
        self._aliases: dict[str, str] = {}
        self._vocabulary = vocabulary
        for definition in definitions:
            self.register(definition)

    @property
    def vocabulary(self) -> Vocabulary:
        """The fact vocabulary declared keys are checked against."""
        if self._vocabulary is None:
            return default_vocabulary()
        return self._vocabulary

    def register(self, definition: FormDef) -> CompiledForm:
        compiled = compile_form(definition, vocabulary=self._vocabulary)
        problems = self._handovers(compiled)
        if problems:
            raise InvalidFormDefinition.of([f"form {compiled.id!r}: {p}" for p in problems])
        versions = self._forms.get(compiled.id, {})
        if compiled.version in versions and versions[compiled.version] is not compiled:
            raise InvalidFormDefinition(
                f"form {compiled.id!r} version {compiled.version} is registered twice"
            )
        key = normalise(compiled.id)
        if self._aliases.setdefault(key, compiled.id) != compiled.id:
            raise InvalidFormDefinition(
                f"form ids {self._aliases[key]!r} and {compiled.id!r} collide once normalised"
            )
        # stored only once every check passed: a refused definition leaves nothing behind
        versions[compiled.version] = compiled
        self._forms[compiled.id] = versions
        latest = self._latest.get(compiled.id)
        if latest is None or compiled.version >= latest.version:
            self._latest[compiled.id] = compiled
        return compiled

    def _handovers(self, compiled: CompiledForm) -> list[str]:
        """The handovers ``compiled`` declares to registered forms, and those registered
        forms declare to it, checked (``forms.handover.check_handover``)."""

        def find(form_id: str) -> CompiledForm | None:
            if form_id == compiled.id:
                return compiled
            return self._latest.get(form_id)

        problems = check_declared(compiled, find)
        for other in self._latest.values():
            renames = other.definition.hands_over_to.get(compiled.id)
            if other.id != compiled.id and renames is not None:
                problems += [
                    f"{other.id} hands over to it: {p}"
                    for p in check_handover(other, compiled, renames)
                ]
        return problems

    def forms(self, principal: str | None = None) -> list[CompiledForm]:
        """The latest version of every form, in registration order."""
        return list(self._latest.values())

    def serves(self, name: str) -> bool:
        """Whether ``name`` (an id or a spelling of it) denotes one of these forms."""
        return name in self._latest or normalise(name) in self._aliases

    def find(self, name: str) -> CompiledForm | None:
        """The current version of the form ``name`` denotes (its id or a spelling of it), or
        None when it denotes none of these: ``serves`` and ``latest`` in one look-up."""
        found = self._latest.get(name)
        if found is None:  # a spelling of an id (rare): normalised
            form_id = self._aliases.get(normalise(name))
            return None if form_id is None else self._latest[form_id]
        return found

    def latest(self, name: str, principal: str | None = None) -> CompiledForm:
        """The current version of the form ``name`` denotes (its id or a spelling of it)."""
        found = self._latest.get(name)  # most calls name the id: ``find``'s first look-up
        if found is not None:
            return found
        found = self.find(name)
        if found is None:
            known = ", ".join(self._latest) or "none"
            close = rank(name, {f: (f, form.title) for f, form in self._latest.items()})
            raise UnknownForm(f"no form {name!r}", f"forms you can start: {known}", close)
        return found

    def for_instance(self, instance: FormInstance) -> tuple[CompiledForm, list[Migration]]:
        """The definition to run ``instance`` on, and the migrations to apply first (if any)."""
        values = instance.__dict__  # a pydantic attribute costs several dict reads
        form_id, version = values["form_id"], values["form_version"]
        versions = self._forms.get(form_id)
        if versions is None:
            raise UnknownForm(f"form {form_id!r} is no longer served", "abandon this instance")
        pinned = versions.get(version)
        if pinned is not None:  # most instances: on a version still served
            return pinned, []
        current = self._latest[form_id]
        return current, migration_chain(current, version)


def migration_chain(current: CompiledForm, version: int) -> list[Migration]:
    """The migrations that move an instance on ``version`` onto ``current`` (none when it is
    on it); ``VersionMismatch`` when a step is missing or ``version`` is newer."""
    chain: list[Migration] = []
    start = version
    while version < current.version:
        step = current.migrations.get(version)
        if step is None:
            raise VersionMismatch(
                f"this {current.id!r} was started on version {start}; "
                f"version {current.version} has no migration from version {version}",
                "abandon this instance and start the form again",
            )
        chain.append(step)
        version = _next_version(current, version)
    if version != current.version:
        raise VersionMismatch(
            f"this {current.id!r} is on version {start}, newer than "
            f"the {current.version} served here",
            "retry later: a newer deployment is rolling out",
        )
    return chain


def _next_version(form: CompiledForm, version: int) -> int:
    later = [v for v in form.migrations if v > version]
    return min(later) if later else form.version


def migration_commit(
    form: CompiledForm, instance: FormInstance, chain: list[Migration], now: datetime
) -> Commit:
    """The commit that moves ``instance`` onto ``form``: nothing is removed or rewritten.

    A rename appends the old field's in-force entry to the new field's log (the old log stays
    under its old id); a conversion appends the converted value. Either way the new entry is a
    ``migration`` revision, so the log says where the value came from.
    """
    versions = f"from version {instance.form_version} to {form.version}"
    in_force, moved = _carried(form, instance, chain, versions)
    changes: dict[str, FieldChange] = {}
    for field_id in form.fields:
        target = in_force.get(field_id)
        history = instance.field(field_id)
        if target is None or target is history.in_force():
            continue
        if field_id not in moved:
            continue
        if target.kind == "value":
            # a moved value is an answer like any other: the new field must accept it
            checked = form.fields[field_id].type.validate(target.value)
            if not isinstance(checked, Accepted):
                raise _failed(
                    form,
                    f"moving {field_id!r} {versions} gave a value the field does not accept "
                    f"({checked.message})",
                )
            target = target.model_copy(update={"value": checked.json_value})
        entry = target.model_copy(
            update={
                "prev": history.cursor,
                "at": now,
                "by": "migration",
                "actor": f"v{instance.form_version}->v{form.version}",
                "tool_call_id": None,
            }
        )
        changes[field_id] = FieldChange(append=(entry,), cursor=history.count)
    return Commit(
        instance_id=instance.id,
        expected_version=instance.version,
        fields=changes,
        state=instance.state.model_copy(update={"updated_at": now}),
        form_version=form.version,
    )


def _carried(
    form: CompiledForm, instance: FormInstance, chain: list[Migration], versions: str
) -> tuple[dict[str, Revision | None], set[str]]:
    """Each field's in-force entry after ``chain``'s renames and conversions, and the fields
    a rename or a conversion moved."""
    in_force: dict[str, Revision | None] = {
        field_id: history.in_force() for field_id, history in instance.history.items()
    }
    moved: set[str] = set()
    for migration in chain:
        for old, new in migration.renames.items():
            if old in in_force:
                in_force[new] = in_force.pop(old)
                moved.add(new)
        for field_id, convert in migration.convert.items():
            current = in_force.get(field_id)
            if current is not None and current.kind == "value":
                try:
                    converted = convert(current.value)
                except Exception as exc:
                    raise _failed(
                        form, f"converting {field_id!r} {versions} raised {type(exc).__name__}"
                    ) from exc
                if converted != current.value:
                    in_force[field_id] = current.model_copy(update={"value": converted})
                    moved.add(field_id)
    return in_force, moved


def _failed(form: CompiledForm, detail: str) -> MigrationFailed:
    return MigrationFailed(
        f"this {form.id} cannot be moved to the current definition: {detail}; it stays as it "
        "was, and nothing was saved",
        "tell the user this form needs attention on our side; other forms are unaffected",
    )
