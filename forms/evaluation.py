"""What an evaluation is: the statuses, values and conditions derived from an instance.

``evaluate`` (in ``forms.engine``, step 3 of the processing model) derives an ``Evaluation``
on every call (incrementally, from what the field logs carry: ``forms.incremental``). This
module holds what one is made of and the readings it takes per step and per field: the typed
value of a stored answer, a predicate called with the values and state it may see (a
predicate that raises is a ``PredicateError``, a definition bug), the step the conversation is
on, and each field's status (answered, pending, optional, held, not applicable, declined, no
preference, or ask again while its step is revisited).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from forms.compiled import CompiledField, CompiledForm, Hook
from forms.errors import FormworkError, InvalidFormDefinition
from forms.instance import FormInstance, HookState, Rejection, Revision, StepOverride
from forms.schema import Accepted
from forms.state import FormState, Values

FieldStatus = Literal[
    "answered",
    "pending",
    "optional",
    "held",
    "not_applicable",
    "declined",
    "no_preference",
    "ask_again",
]


class PredicateError(FormworkError):
    """A predicate raised while evaluating; nothing is committed. A definition bug."""


@dataclass(frozen=True, slots=True)
class FieldEval:
    id: str
    applies: bool
    status: FieldStatus
    revision: Revision | None


@dataclass(frozen=True, slots=True)
class Evaluation:
    """Everything the engine derives from an instance, on every call. Read-only: its mappings
    may be shared with what the field logs carry (``forms.incremental``), and its hook states
    with the state a transition commits."""

    fields: Mapping[str, FieldEval]
    live: Mapping[str, Any]
    step_applies: Mapping[str, bool]
    step_complete: Mapping[str, bool]
    open_step: str | None
    revisit: str | None
    active_rejections: tuple[Rejection, ...]
    waiting: tuple[str, ...]
    """Hooks whose executors have not finished (or, for checkpoints, failed): they may still
    reject or reroute, so the form cannot complete until they are done."""
    ready: bool
    hooks: Mapping[str, HookState]
    rising: tuple[Hook, ...]
    flipped: tuple[str, ...] = ()
    """Fields whose answer is live now and was not before (or the reverse), by the hook states
    edges were detected against, in definition order: where held and restored answers are."""

    def state_for(
        self, form: CompiledForm, running: Hook | None = None, occurrence: int = 0
    ) -> FormState:
        """The form state executors see (everything decided, ``fired`` allowed).

        For the executor of a checkpoint's own occurrence (``running``, ``occurrence``),
        ``fired`` of that checkpoint answers whether it fired *before* this occurrence, so a
        router's first-time branch (``if not s.fired("router")``) runs on its first firing.
        """
        fired = {c: self.hooks[f"checkpoint.{c}"].count for c in form.checkpoints}
        if running is not None and running.kind == "checkpoint":
            fired[running.target] = occurrence - 1
        return FormState(
            form.step_index,
            self.step_applies,
            self.step_complete,
            fired,
            self.ready,
            self.open_step,
        )

    def values_for(self, form: CompiledForm) -> Values:
        return Values(self.live, form.field_index)


_TYPED: dict[tuple[int, int], tuple[Revision, Any]] = {}
_TYPED_LIMIT = 4_096


def typed_value(field: CompiledField, revision: Revision) -> Any:
    """The typed value of a stored answer (stored values were validated when written).

    Memoised per (field type, revision object): revisions are immutable, so the typed value of
    one never changes. The entry keeps the revision alive, so its id cannot be reused.
    """
    key = (id(field.type), id(revision))
    hit = _TYPED.get(key)
    if hit is not None and hit[0] is revision:
        return hit[1]
    result = field.type.validate(revision.value)
    typed = result.typed if isinstance(result, Accepted) else revision.value
    if len(_TYPED) >= _TYPED_LIMIT:
        _TYPED.clear()
    _TYPED[key] = (revision, typed)
    return typed


def call_predicate(
    predicate: Any, arity: int, values: Values, state: FormState, reader: str
) -> bool:
    """Call a predicate with the values (and the state, if it takes two), naming it
    ``reader`` in errors; anything it raises but a definition error is a ``PredicateError``."""
    state._reader = reader
    try:
        outcome = predicate(values) if arity == 1 else predicate(values, state)
    except InvalidFormDefinition:
        raise
    except Exception as exc:
        raise PredicateError(f"{reader} raised {type(exc).__name__}: {exc}") from exc
    return bool(outcome)


def no_preference(field: CompiledField, revision: Revision | None) -> bool:
    """A required field answered by "no preference" (where it takes one) counts as answered."""
    return field.no_preference and revision is not None and revision.kind == "decline"


def find_open_step(
    form: CompiledForm,
    override: StepOverride | None,
    applies: Mapping[str, bool],
    complete: Mapping[str, bool],
    revisit: str | None,
) -> str | None:
    """The step the conversation is on: a revisit, else a focus not yet complete, else the
    first step that applies and is not complete (None when nothing is left to ask)."""
    if revisit is not None:
        return revisit
    if (
        override is not None
        and override.kind == "focus"
        and applies.get(override.step)
        and not complete.get(override.step)
    ):
        return override.step
    for step_id in form.steps:
        if applies[step_id] and not complete[step_id]:
            return step_id
    return None


def field_eval(
    field: CompiledField, applies: bool, instance: FormInstance, revisit: str | None
) -> FieldEval:
    """A field's status, from whether it applies and the kind of its revision in force."""
    revision = instance.field(field.id).in_force()
    return FieldEval(field.id, applies, field_status(field, applies, revision, revisit), revision)


def field_status(
    field: CompiledField, applies: bool, revision: Revision | None, revisit: str | None
) -> FieldStatus:
    """The status of a field that applies (or not) with ``revision`` in force."""
    kind = revision.kind if revision is not None else None
    status: FieldStatus
    if not applies:
        status = "held" if kind in ("value", "decline") else "not_applicable"
    elif kind == "value":
        status = "ask_again" if field.step == revisit else "answered"
    elif kind == "decline":
        status = "no_preference" if field.no_preference else "declined"
    else:
        status = "optional" if field.optional else "pending"
    return status
