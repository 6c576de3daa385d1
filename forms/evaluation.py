"""What an evaluation is: the statuses, values and conditions derived from an instance.

``evaluate`` (in ``forms.engine``, step 3 of the processing model) derives an ``Evaluation``
on every call (incrementally, from what the field logs carry: ``forms.incremental``). This
module holds what one is made of and the readings it takes per step and per field: the typed
value of a stored answer, a predicate called with the values and state it may see (a
predicate that raises is a ``PredicateError``, a definition bug), the step the conversation is
on, and each field's status (answered, pending, optional, held, not applicable, declined, no
preference, ask again while its step is revisited, or invalid: an answer kept from an earlier
version that this one refuses, on record but not counted until it is resolved).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from forms.compiled import CompiledField, CompiledForm, Hook
from forms.errors import FormworkError, InvalidFormDefinition
from forms.instance import FormInstance, HookState, Rejection, Revision, StepOverride
from forms.schema import Accepted, FieldType
from forms.state import FormState, Values
from forms.statuses import FieldStatus


class PredicateError(FormworkError):
    """A predicate raised while evaluating; nothing is committed. A definition bug."""


class FieldEval(NamedTuple):
    """A field's readings: whether it applies, its status, and the revision in force."""

    id: str
    applies: bool
    status: FieldStatus
    revision: Revision | None


class StepSummary(NamedTuple):
    """Which steps apply and which of those are still to do, as step positions in ascending
    order: what the status line and a step read need of every step (the open step's place
    ``k/N`` among the steps that apply, the next steps still to do after it and how many more
    there are), answered by bisection rather than a walk over the steps.

    The incremental core keeps one, updated for the steps a commit touched
    (``forms.incremental``); ``evaluate_from_scratch`` derives it from its own walk (``of``).
    """

    applicable: tuple[int, ...]
    unfinished: tuple[int, ...]
    """Steps that apply and are not complete."""

    @staticmethod
    def of(
        order: tuple[str, ...], applies: Mapping[str, bool], complete: Mapping[str, bool]
    ) -> StepSummary:
        """The summary of every step in ``order`` (a walk: for a pass from nothing)."""
        applicable = tuple(i for i, s in enumerate(order) if applies[s])
        return StepSummary(applicable, tuple(i for i in applicable if not complete[order[i]]))

    def moved(
        self,
        touched: Iterable[str],
        index: Mapping[str, int],
        applies: Mapping[str, bool],
        complete: Mapping[str, bool],
    ) -> StepSummary:
        """This summary with the ``touched`` steps (whose applicability or completeness
        changed; ``index`` gives their positions) put in or taken out as ``applies`` and
        ``complete`` now say: a bisection each, never a walk over the steps."""
        applicable, unfinished = list(self.applicable), list(self.unfinished)
        for step_id in touched:
            si = index[step_id]
            step_applies = applies[step_id]
            _place(applicable, si, step_applies)
            _place(unfinished, si, step_applies and not complete[step_id])
        return StepSummary(tuple(applicable), tuple(unfinished))

    def position(self, index: int) -> tuple[int, int] | None:
        """``(k, N)``: step ``index`` is the k-th of the N steps that apply (None: it does not
        apply)."""
        at = bisect_left(self.applicable, index)
        if at < len(self.applicable) and self.applicable[at] == index:
            return at + 1, len(self.applicable)
        return None

    def later(self, index: int, shown: int) -> tuple[tuple[int, ...], int]:
        """The first ``shown`` steps after step ``index`` that apply and are not complete, and
        how many more there are after those."""
        at = bisect_right(self.unfinished, index)
        first = self.unfinished[at : at + shown]
        return first, len(self.unfinished) - at - len(first)


def _place(positions: list[int], position: int, member: bool) -> None:
    """Put ``position`` in the ascending list ``positions`` or take it out, as ``member`` says."""
    at = bisect_left(positions, position)
    present = at < len(positions) and positions[at] == position
    if member and not present:
        positions.insert(at, position)
    elif present and not member:
        del positions[at]


class Evaluation(NamedTuple):
    """Everything the engine derives from an instance, on every call. Read-only: its mappings
    may be shared with what the field logs carry (``forms.incremental``), and its hook states
    with the state a transition commits. A named tuple: one is built on every call, at a
    fraction of a frozen dataclass's cost (``_replace`` makes a copy with some changed)."""

    fields: Mapping[str, FieldEval]
    live: Mapping[str, Any]
    step_applies: Mapping[str, bool]
    step_complete: Mapping[str, bool]
    open_step: str | None
    revisit: str | None
    steps: StepSummary
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


_Reading = tuple[Revision, Any, str | None, object]
_TYPED: dict[int, _Reading] = {}
_TYPED_LIMIT = 4_096


def _read(field: CompiledField, revision: Revision) -> _Reading:
    """A stored answer read by the field's type: the typed value, and why the type refuses
    it (None: it accepts it), then the type. Values were validated when written, but against
    the version they were written for: a newer version that took an instance over may refuse
    them.

    Memoised per revision object and the type that read it: revisions are immutable, so the
    reading of one never changes. The entry keeps both alive, so their ids cannot be reused.
    """
    kind = field.type
    hit = _TYPED.get(id(revision))
    if hit is not None and hit[0] is revision and hit[3] is kind:
        return hit
    return _validated(kind, revision)


def _validated(kind: FieldType, revision: Revision) -> _Reading:
    """``_read`` on a miss in the memo: the type reads the answer, and the memo notes it."""
    result = kind.validate(revision.value)
    if isinstance(result, Accepted):
        reading: _Reading = (revision, result.typed, None, kind)
    else:
        reading = (revision, revision.value, result.message, kind)
    if len(_TYPED) >= _TYPED_LIMIT:
        _TYPED.clear()
    _TYPED[id(revision)] = reading
    return reading


def remember_reading(field: CompiledField, revision: Revision, typed: Any) -> None:
    """Note that ``field``'s type accepts the answer ``revision`` holds as ``typed``: what the
    write that validated the value by that same type just now (``forms.operations.plan_fill``)
    knows, so the engine's first read of the new answer takes it from the memo instead of
    validating it a second time. Right because a value a type accepted reads back as the same
    typed value from its stored JSON (``tests/unit/test_answer_readings.py`` holds every kind
    of field to that)."""
    if len(_TYPED) >= _TYPED_LIMIT:
        _TYPED.clear()
    _TYPED[id(revision)] = (revision, typed, None, field.type)


def typed_value(field: CompiledField, revision: Revision) -> Any:
    """The typed value of a stored answer the field's type accepts (``refusal`` is None)."""
    return _read(field, revision)[1]


def refusal(field: CompiledField, revision: Revision | None) -> str | None:
    """Why the field, as this version defines it, refuses the answer ``revision`` holds (an
    answer kept from a version that accepted it); None for any other revision."""
    if revision is None or revision.kind != "value":
        return None
    return _read(field, revision)[2]


def counts(field: CompiledField, revision: Revision | None) -> bool:
    """Whether ``revision`` is an answer the field accepts: one that can be live."""
    return revision is not None and revision.kind == "value" and _read(field, revision)[2] is None


def blocking(field: CompiledField, applies: bool, revision: Revision | None) -> bool:
    """Whether the field keeps its step from completing: it applies and either holds an
    answer its type now refuses (optional or not: it has to be resolved), or is required and
    has neither a live answer nor "no preference"."""
    if not applies:
        return False
    if revision is not None and revision.kind == "value":
        return _read(field, revision)[2] is not None  # a refused answer blocks until resolved
    return not field.optional and not no_preference(field, revision)


def reading(
    field: CompiledField, applies: bool, revision: Revision | None
) -> tuple[bool, Any, FieldStatus, bool]:
    """A field's readings with ``revision`` in force, outside a revisit, in one look at the
    answer: whether it is live, its typed value (None unless live), its status, and whether it
    keeps its step from completing. The same as ``counts``, ``typed_value``, ``field_status``
    and ``blocking`` taken one by one (what the from-scratch walk does)."""
    # a value this type read before (most: the write that made it noted its reading) is taken
    # from the memo at once, without a look at the revision's kind (a model's attribute): only
    # values are memoised; on a miss the type reads the value (``_read`` less its memo look-up)
    field_type = field.type
    hit = _TYPED.get(id(revision))
    if hit is None or hit[0] is not revision or hit[3] is not field_type:
        kind = revision.kind if revision is not None else None
        if kind != "value":
            if not applies:
                return False, None, "held" if kind == "decline" else "not_applicable", False
            if kind == "decline":
                status: FieldStatus = "no_preference" if field.no_preference else "declined"
                return False, None, status, not field.optional and not field.no_preference
            return False, None, "optional" if field.optional else "pending", not field.optional
        assert revision is not None
        hit = _validated(field_type, revision)
    _, typed, refused, _ = hit
    if not applies:
        return False, None, "held", False
    if refused is not None:
        return False, None, "invalid", True
    return True, typed, "answered", False


def blocked_as(field: CompiledField, status: str) -> bool:
    """``blocking`` read from the status ``reading`` gave the field (never ``ask_again``,
    which only a revisit's copy holds): no second look at the answer."""
    return status in ("invalid", "pending") or (status == "declined" and not field.optional)


def call_predicate(
    predicate: Any, arity: int, values: Values, state: FormState | None, reader: str
) -> bool:
    """Call a predicate with the values (and the state, if it takes two: ``state`` may be
    None for one that takes the values alone), naming it ``reader`` in errors; anything it
    raises but a definition error is a ``PredicateError``."""
    if state is not None:
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


def revisited_step(override: StepOverride | None, applies: Mapping[str, bool]) -> str | None:
    """The step a backward jump reopened, while it applies."""
    if override is not None and override.kind == "revisit" and applies.get(override.step):
        return override.step
    return None


def asked_again(
    form: CompiledForm, fields: Mapping[str, FieldEval], revisit: str
) -> dict[str, FieldEval]:
    """``fields`` (the field statuses) with the answers of the revisited step to ask again."""
    fields = dict(fields)
    for field_id in form.steps[revisit].fields:
        fe = fields[field_id]
        if fe.status == "answered":
            fields[field_id] = FieldEval(field_id, fe.applies, "ask_again", fe.revision)
    return fields


Decided = tuple[
    Mapping[str, FieldEval],
    Mapping[str, Any],
    Mapping[str, bool],
    Mapping[str, bool],
    str | None,
    str | None,
    StepSummary,
]
"""What step 3 decided: the first seven attributes of an ``Evaluation`` (a plain tuple)."""


def overridden_step(
    override: StepOverride | None,
    applies: Mapping[str, bool],
    complete: Mapping[str, bool],
    revisit: str | None,
) -> str | None:
    """The step a jump holds the conversation on: a revisit, else a focus not yet complete
    (None: the open step is the first one still to do)."""
    if revisit is not None:
        return revisit
    if (
        override is not None
        and override.kind == "focus"
        and applies.get(override.step)
        and not complete.get(override.step)
    ):
        return override.step
    return None


def find_open_step(
    form: CompiledForm,
    override: StepOverride | None,
    applies: Mapping[str, bool],
    complete: Mapping[str, bool],
    revisit: str | None,
) -> str | None:
    """The step the conversation is on: a revisit, else a focus not yet complete, else the
    first step that applies and is not complete (None when nothing is left to ask)."""
    held = overridden_step(override, applies, complete, revisit)
    if held is not None:
        return held
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
    elif kind == "value" and refusal(field, revision) is not None:
        status = "invalid"
    elif kind == "value":
        status = "ask_again" if field.step == revisit else "answered"
    elif kind == "decline":
        status = "no_preference" if field.no_preference else "declined"
    else:
        status = "optional" if field.optional else "pending"
    return status
