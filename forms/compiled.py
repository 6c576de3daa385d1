"""The compiled form: an immutable index the engine and the tools read.

``compile_form`` (in ``forms.compiler``) builds it once per definition: fields and steps in
definition order, each field's type facts (and the fact key it holds, if any), the alias index
over normalised ids, labels and declared aliases, the hooks in dispatch order, and the
migrations.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Generic, Literal, TypeVar, overload

from forms.definition import Approval, Executor, FormDef, Migration, Predicate
from forms.schema import FieldType
from forms.suggest import rank

HookKind = Literal["field", "step", "checkpoint", "form"]

_T = TypeVar("_T")


def keep_on(form: CompiledForm, name: str, value: _T) -> _T:
    """Keep ``value`` on ``form`` as its attribute ``name`` (what a module derives once per
    compiled form: the form is immutable and a new version is a new object) and return it.

    Set with ``object.__setattr__`` (the dataclass is frozen), never through ``vars(form)``:
    on CPython 3.11 the first use of an object's ``__dict__`` turns its attributes from the
    inline layout into a plain dict, after which every ``form.x`` read on the hot path costs
    several times more (measured: about 2.5k instructions per tool call)."""
    object.__setattr__(form, name, value)
    return value


class derived(Generic[_T]):  # noqa: N801 (used as a decorator, like functools.cached_property)
    """``functools.cached_property`` for the compiled form: the value is made on the first
    read and kept through ``keep_on`` (``cached_property`` writes into ``__dict__``, which
    slows every later attribute read of the form; see ``keep_on``)."""

    def __init__(self, make: Callable[[Any], _T]) -> None:
        self._make = make
        self.__doc__ = make.__doc__
        self._name = make.__name__

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, form: None, owner: type) -> derived[_T]: ...
    @overload
    def __get__(self, form: CompiledForm, owner: type) -> _T: ...
    def __get__(self, form: CompiledForm | None, owner: type) -> derived[_T] | _T:
        if form is None:
            return self
        return keep_on(form, self._name, self._make(form))


_CAMEL_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NOT_ALNUM = re.compile(r"[^0-9a-z]+")


@lru_cache(maxsize=4096)  # asked on every call on a tenant's form (its name, its instance's id)
def normalise(name: str) -> str:
    """The alias key of an id, label or alias: camelCase split, lowercased, punctuation (``-``,
    ``_``, spaces) removed, so ``travel-claim``, ``travel_claim`` and ``Travel Claim`` agree."""
    return _NOT_ALNUM.sub("", _CAMEL_HUMP.sub(" ", name.strip()).lower())


@dataclass(frozen=True, slots=True)
class CompiledField:
    id: str
    label: str
    step: str
    index: int
    type: FieldType
    ask: str | None
    when: Predicate | None
    when_arity: int
    on_fill: Executor | None
    decided_by_approver: bool = False
    example: str | None = None
    """One valid answer as text; the type string shows it in place of a pattern."""
    aliases: tuple[str, ...] = ()
    """Further spellings the definition declares for the id (synonyms such as ``dob``)."""
    no_preference: bool = False
    """A required field that takes an explicit "no preference" (a decline) as its answer."""
    memory: str | None = None
    """The fact key the field holds: memory fills or offers it when the form starts, and the
    user's answer to it is remembered."""

    @property
    def offered(self) -> bool:
        """Whether a model or a person is ever asked for it (offered it to write, in reads,
        questions, schemas and hints): not a field only an approver's decision writes
        (``decided_by_approver``)."""
        return not self.decided_by_approver

    @property
    def declinable(self) -> bool:
        """Whether the user may decline it: optional, or it takes "no preference"."""
        return self.type.optional or self.no_preference

    @property
    def optional(self) -> bool:
        return self.type.optional


@dataclass(frozen=True, slots=True)
class CompiledStep:
    id: str
    title: str
    preview: str
    guidance: str | None
    index: int
    fields: tuple[str, ...]
    first_field: int
    when: Predicate | None
    when_arity: int
    on_complete: Executor | None


@dataclass(frozen=True, slots=True)
class CompiledCheckpoint:
    id: str
    title: str
    when: Predicate
    when_arity: int
    run: Executor | None
    approval: Approval | None = None
    binds: tuple[str, ...] = ()
    """For an approval: the fields whose answers a decision is bound to, in definition order."""


@dataclass(frozen=True, slots=True)
class Hook:
    """A point executors hang on. ``id`` is the middle segment of the idempotency key.

    A hook is *dispatched* (gets an outbox entry on each rising edge) when it has an executor
    or, for a checkpoint, an approval to wait for.
    """

    id: str
    kind: HookKind
    target: str
    executor: Executor | None
    approval: Approval | None = None
    title: str = ""
    binds: tuple[str, ...] = ()

    @property
    def dispatched(self) -> bool:
        return self.executor is not None or self.approval is not None


@dataclass(frozen=True)
class CompiledForm:
    """The checked, indexed form. Immutable; built once per definition and cached."""

    definition: FormDef
    id: str
    version: int
    title: str
    description: str
    fields: Mapping[str, CompiledField]
    steps: Mapping[str, CompiledStep]
    checkpoints: Mapping[str, CompiledCheckpoint]
    hooks: tuple[Hook, ...]
    field_index: Mapping[str, int]
    step_index: Mapping[str, int]
    aliases: Mapping[str, str]
    step_aliases: Mapping[str, str]
    migrations: Mapping[int, Migration]
    closes_on_complete: bool
    on_complete: Executor | None

    def resolve_field(self, name: str) -> str | None:
        """The field id ``name`` denotes (exact id, or an alias of an id or label)."""
        if name in self.fields:
            return name
        return self.aliases.get(normalise(name))

    def resolve_step(self, name: str) -> str | None:
        if name in self.steps:
            return name
        return self.step_aliases.get(normalise(name))

    def suggest_fields(self, name: str, limit: int = 3) -> list[str]:
        """Field ids ``name`` most likely meant (see ``forms.suggest``), best first."""
        return rank(name[:128], self._field_spellings, limit)

    def suggest_steps(self, name: str, limit: int = 3) -> list[str]:
        return rank(name[:128], self._step_spellings, limit)

    @derived
    def _field_spellings(self) -> dict[str, tuple[str, ...]]:
        """Every field's spellings as written (id, label, declared aliases): the suggestion
        measures read their words, which the normalised alias keys have lost."""
        return {f: (f, field.label, *field.aliases) for f, field in self.fields.items()}

    @derived
    def _step_spellings(self) -> dict[str, tuple[str, ...]]:
        return {s: (s, step.title) for s, step in self.steps.items()}

    @derived
    def step_order(self) -> tuple[str, ...]:
        """Step ids by position."""
        return tuple(self.steps)

    @derived
    def field_order(self) -> tuple[str, ...]:
        """Field ids by position (``field_index``)."""
        return tuple(self.fields)

    @derived
    def memory_fields(self) -> tuple[str, ...]:
        """Ids of the fields that declare a fact key, in definition order."""
        return tuple(f for f, field in self.fields.items() if field.memory is not None)

    @derived
    def checkpoint_hooks(self) -> tuple[Hook, ...]:
        """The checkpoints' hooks, in dispatch order."""
        return tuple(hook for hook in self.hooks if hook.kind == "checkpoint")

    @derived
    def field_hooks(self) -> dict[str, Hook]:
        """Each field's on-fill hook, by field id."""
        return {hook.target: hook for hook in self.hooks if hook.kind == "field"}

    @derived
    def step_hooks(self) -> dict[str, Hook]:
        """Each step's on-complete hook, by step id."""
        return {hook.target: hook for hook in self.hooks if hook.kind == "step"}

    @derived
    def checkpoint_runs(self) -> tuple[tuple[Hook, CompiledCheckpoint, str], ...]:
        """Each checkpoint's hook, the checkpoint, and how its predicate is named in errors,
        in dispatch order: what every commit asks again."""
        return tuple(
            (hook, self.checkpoints[hook.target], f"checkpoint {hook.target!r} when")
            for hook in self.checkpoint_hooks
        )

    @derived
    def when_names(self) -> tuple[dict[str, str], dict[str, str]]:
        """How each field's and each step's predicate is named in errors (``field 'x' when``),
        by field id, then by step id: made once, not on every run of the predicate."""
        return (
            {f: f"field {f!r} when" for f, field in self.fields.items() if field.when is not None},
            {s: f"step {s!r} when" for s, step in self.steps.items() if step.when is not None},
        )

    @derived
    def approval_hooks(self) -> tuple[Hook, ...]:
        """The hooks that wait for an approval, in dispatch order."""
        return tuple(hook for hook in self.hooks if hook.approval is not None)

    @derived
    def hook_position(self) -> dict[str, int]:
        """Each hook's place in dispatch order."""
        return {hook.id: i for i, hook in enumerate(self.hooks)}

    def hook(self, hook_id: str) -> Hook | None:
        return self._hooks_by_id.get(hook_id)

    @derived
    def _hooks_by_id(self) -> dict[str, Hook]:
        return {hook.id: hook for hook in self.hooks}
