"""What predicates and executors see: typed values and the form state.

``Values`` exposes the live answers as attributes: a field that is unanswered, declined, or does
not currently apply reads as ``None``; a name that is not a field raises
``InvalidFormDefinition`` (a definition bug must never read as a silent ``None``/false).

While the engine evaluates applicability, a predicate may only read what is declared before the
field or step it gates (the compiler checks this from the source; ``Values`` enforces it at run
time too, for predicates whose source is not available). That ordering is what makes one pass
in definition order a fixed point.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from forms.errors import InvalidFormDefinition

if TYPE_CHECKING:
    from forms.definition import Step
    from forms.instance import HandoverLink


class Values:
    """Read-only attribute view over live, validated, typed answers."""

    # One slot holds the values, the index and the watch (None, or the limit and the notes),
    # set through the slot itself (``__setattr__`` refuses): a slot's ``__set__`` is a Python
    # call, and one Values is made per commit.
    __slots__ = ("_seen",)

    def __init__(self, values: Mapping[str, Any], index: Mapping[str, int]) -> None:
        _set_seen(self, (values, index, None))

    def _limit(self, horizon: int, reader: str, reads: set[str] | None = None) -> None:
        """From now on, refuse fields at position ``horizon`` and after (naming ``reader`` in
        the error), and note every field read in ``reads`` (None: do not note). Incremental
        evaluation learns from it what each predicate depends on."""
        values, index, _ = self._seen
        _set_seen(self, (values, index, (horizon, reader, reads)))

    def _unlimit(self) -> None:
        """Every field readable again, nothing noted (as made)."""
        values, index, _ = self._seen
        _set_seen(self, (values, index, None))

    def __getattr__(self, name: str) -> Any:
        values, index, watch = self._seen
        position = index.get(name)
        if position is None:
            raise InvalidFormDefinition(f"{name!r} is not a field of this form")
        if watch is not None:
            horizon, reader, reads = watch
            if position >= horizon:
                raise InvalidFormDefinition(
                    f"{reader} reads {name!r}, which is declared after it; a predicate may "
                    "only read fields declared before the field or step it gates"
                )
            if reads is not None:
                reads.add(name)
        return values.get(name)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("values are read-only; return a Patch effect to change them")

    def __repr__(self) -> str:
        values, index, watch = self._seen
        horizon = len(index) if watch is None else watch[0]
        if watch is not None and watch[2] is not None:
            watch[2].add(READS_ALL)
        live = {k: values[k] for k, position in index.items() if position < horizon and k in values}
        return f"Values({live!r})"


_set_seen = Values._seen.__set__  # type: ignore[attr-defined]

READS_ALL = "*"
"""Noted as read by a predicate that looked at every value at once (``repr(v)``)."""


def _step_id(step: str | type[Step]) -> str:
    return step if isinstance(step, str) else step.step_id()


class FormState:
    """Where the conversation is: step applicability and completion, fired checkpoints, done.

    Field and step predicates may ask about steps declared before them; checkpoint predicates
    and executors may ask about anything, including ``fired``.
    """

    __slots__ = (
        "_applies",
        "_complete",
        "_done",
        "_fired",
        "_horizon",
        "_open_step",
        "_order",
        "_reader",
        "_reads",
    )

    def __init__(
        self,
        order: Mapping[str, int],
        applies: Mapping[str, bool],
        complete: Mapping[str, bool],
        fired: Mapping[str, int] | None,
        done: bool,
        open_step: str | None,
    ) -> None:
        self._order = order
        self._applies = applies
        self._complete = complete
        self._fired = fired
        self._done = done
        self._open_step = open_step
        self._reader = ""
        self._horizon: int | None = None
        self._reads: set[str] | None = None

    def _limit(self, horizon: int | None, reads: set[str] | None) -> None:
        """Decide only steps before position ``horizon`` (None: those in ``complete``), and
        note every step asked about in ``reads`` (None: do not note)."""
        self._horizon = horizon
        self._reads = reads

    def _known(self, step: str | type[Step]) -> str:
        step_id = _step_id(step)
        position = self._order.get(step_id)
        if position is None:
            raise InvalidFormDefinition(f"{step_id!r} is not a step of this form")
        if self._reads is not None:
            self._reads.add(step_id)
        decided = step_id in self._complete if self._horizon is None else position < self._horizon
        if not decided:
            raise InvalidFormDefinition(
                f"{self._reader} asks about step {step_id!r}, which is not decided yet at that "
                "point; a predicate may only ask about steps declared before it"
            )
        return step_id

    def step_complete(self, step: str | type[Step]) -> bool:
        """True when the step applies and every applicable required field in it is answered."""
        return self._complete[self._known(step)]

    def step_applies(self, step: str | type[Step]) -> bool:
        return self._applies[self._known(step)]

    def fired(self, checkpoint: str) -> bool:
        """True when the checkpoint has fired at least once (checkpoints and executors only).

        Checkpoint predicates see the firings of earlier commits. In a checkpoint's own
        executor, its own ``fired`` counts the occurrences *before* the one running: False on
        its first firing, True on a later crossing."""
        if self._fired is None:
            raise InvalidFormDefinition(
                f"{self._reader} calls fired({checkpoint!r}); only checkpoints and executors may"
            )
        if checkpoint not in self._fired:
            raise InvalidFormDefinition(f"{checkpoint!r} is not a checkpoint of this form")
        return self._fired[checkpoint] > 0

    @property
    def done(self) -> bool:
        """True when every applicable required field has an answer and nothing is blocking."""
        return self._done

    @property
    def open_step(self) -> str | None:
        """The step the conversation is on (None when nothing is left to ask)."""
        return self._open_step


@dataclass(frozen=True, slots=True)
class HookContext:
    """What an executor receives.

    ``key`` is the idempotency key ``{instance_id}:{hook_id}:{occurrence}``: the same on every
    retry of this occurrence, new on a genuine second crossing. Pass it to anything the
    executor calls that accepts one.
    """

    values: Values
    state: FormState
    answers: Mapping[str, Any]
    """Every live answer by field id, in definition order (held answers are not included)."""
    key: str
    hook_id: str
    occurrence: int
    instance_id: str
    form_id: str
    conversation_id: str
    principal: str
    status: str = "open"
    """The instance's status when the executor runs (``completed``, ``terminated``, ...)."""
    closed_reason: str | None = None
    occurred_at: datetime | None = None
    """When the edge happened (the commit that created this occurrence): the same on every
    retry, unlike the time the executor happens to run."""
    handed_to: HandoverLink | None = None
    """On an instance closed ``handed_over``: the instance and form that took over, and
    what was carried (``InstanceState.handed_to``)."""
