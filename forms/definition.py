"""Form definitions: Python code, never serialised.

A form is a ``FormDef`` holding an ordered list of ``Step`` classes. A step class declares its
fields as annotated attributes, pydantic-style; the annotation *is* the field's type, and the
field is optional exactly when that type accepts ``None``::

    class Trip(Step):
        title = "Trip"
        preview = "destination and dates"

        destination: str = field("Destination")
        departure: date = field("Departure date")
        purpose: str | None = field("Purpose of the trip")   # optional: accepts None

Predicates (``when=``) take the values seen so far (``v``) and, optionally, the form state
(``s``)::

        flight_no: str = field("Flight number", when=lambda v: v.mode == "air")

Executors (``on_fill=``, ``Step.on_complete``, ``Checkpoint(run=...)``, ``FormDef.on_complete``)
take a ``HookContext`` and return effects (see ``forms.effects``).

Nothing here is checked until ``compile_form`` (in ``forms.compiler``) runs; a typo in a field
or step reference fails there, naming it.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

if TYPE_CHECKING:
    from forms.state import HookContext

Predicate = Callable[..., bool]
"""``(values) -> bool`` or ``(values, state) -> bool``."""

Executor = Callable[["HookContext"], Any]
"""``(ctx: HookContext) -> Effect | list[Effect] | None``."""


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """What ``field(...)`` returns: everything about a field except its type."""

    label: str
    ask: str | None = None
    when: Predicate | None = None
    on_fill: Executor | None = None
    aliases: tuple[str, ...] = ()
    decided_by_approver: bool = False
    example: str | None = None
    no_preference: bool = False
    memory: str | None = None


def field(
    label: str,
    *,
    ask: str | None = None,
    when: Predicate | None = None,
    on_fill: Executor | None = None,
    aliases: Sequence[str] = (),
    decided_by_approver: bool = False,
    example: str | None = None,
    no_preference: bool = False,
    memory: str | None = None,
) -> Any:
    """Declare a field on a ``Step`` subclass.

    ``label`` is what the agent and the status line show; ``ask`` is optional guidance on how
    to ask for it; ``when`` gates applicability (an answer that stops applying is held, never
    dropped); ``on_fill`` runs on the rising edge of the field having a live answer; ``aliases``
    are extra spellings the agent may use for the id. ``decided_by_approver`` makes the field
    the record of an approval checkpoint's decision: only a decision writes it (the agent,
    executors and seeds cannot), and it must be named by a ``Checkpoint(approval=...)``.
    ``example`` is one valid answer, as text (``"BL-2041"``): the agent reads ``text like
    BL-2041`` instead of the field's regular expression, which stays the check. The compiler
    checks that the field's type accepts it. ``no_preference`` lets a required field take an
    explicit "no preference" ("any date is fine"): a decline, which then counts as answered.
    ``memory`` names the fact key the field holds (``"person.date_of_birth"``): when the form
    starts, memory may fill it from what the user stated before, or offer that value for the
    agent to confirm, and the user's answer to it is remembered (``docs/memory.md``). The
    compiler checks that the key is in the deployment's vocabulary and that its values fit the
    field's type.

    Typed ``Any`` (like ``pydantic.Field``) so ``x: int = field("X")`` type-checks.
    """
    return FieldSpec(
        label=label,
        ask=ask,
        when=when,
        on_fill=on_fill,
        aliases=tuple(aliases),
        decided_by_approver=decided_by_approver,
        example=example,
        no_preference=no_preference,
        memory=memory,
    )


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


STEP_SETTINGS = ("id", "title", "preview", "guidance", "when", "on_complete")
"""What a step says about itself, as opposed to the fields it declares."""


class Step:
    """Base class of a form step. Subclass it and declare fields as annotated attributes.

    Step settings: ``title`` (required), ``preview`` (one line: what the step collects, shown
    for later steps in the status line; derived from the fields when not given), ``guidance``
    (how the agent should run the step), ``when`` (step applicability predicate),
    ``on_complete`` (executor on the rising edge of the step being complete), ``id`` (defaults
    to the class name in snake_case). Give them as class keywords, which keeps every name free
    for fields (a field may be called ``title``, ``id`` or ``when``)::

        class Booking(Step, title="Booking", preview="what and when"):
            title: str = field("Title of the event")
            when: date = field("When it takes place")

    or, as long as no field uses the name, as plain class attributes (``title = "Booking"``).
    """

    def __init_subclass__(
        cls,
        *,
        id: str | None = None,
        title: str | None = None,
        preview: str | None = None,
        guidance: str | None = None,
        when: Predicate | None = None,
        on_complete: Executor | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init_subclass__(**kwargs)
        given = {
            "id": id,
            "title": title,
            "preview": preview,
            "guidance": guidance,
            "when": when,
            "on_complete": on_complete,
        }
        cls.__step_settings__ = {k: v for k, v in given.items() if v is not None}

    __step_settings__: ClassVar[dict[str, Any]] = {}

    @classmethod
    def setting(cls, name: str) -> Any:
        """A step setting: from the class keywords, else a class attribute of that name that
        is not a field. ``title``, ``preview`` and ``guidance`` are inherited from parent
        steps; ``id``, ``when`` and ``on_complete`` belong to the class that states them."""
        inherited = name in ("title", "preview", "guidance")
        for klass in cls.__mro__ if inherited else (cls,):
            if not (isinstance(klass, type) and issubclass(klass, Step)) or klass is Step:
                continue
            given = klass.__dict__.get("__step_settings__", {})
            if name in given:
                return given[name]
            value = klass.__dict__.get(name)
            if value is not None and not isinstance(value, FieldSpec):
                return value.__func__ if isinstance(value, staticmethod) else value
        return None

    @classmethod
    def step_id(cls) -> str:
        explicit = cls.setting("id")
        if isinstance(explicit, str):
            return explicit
        return _CAMEL.sub("_", cls.__name__).lower()

    @classmethod
    def predicate(cls) -> Predicate | None:
        found: Predicate | None = cls.setting("when")
        return found

    @classmethod
    def completion_executor(cls) -> Executor | None:
        found: Executor | None = cls.setting("on_complete")
        return found

    @classmethod
    def field_specs(cls) -> dict[str, FieldSpec]:
        """Field id -> spec, in declaration order (annotations carry the order)."""
        specs: dict[str, FieldSpec] = {}
        for name in inspect.get_annotations(cls):
            value = cls.__dict__.get(name)
            if isinstance(value, FieldSpec):
                specs[name] = value
        return specs


def _own_callable(cls: type, name: str) -> Any:
    value: Any = cls.__dict__.get(name)
    if isinstance(value, staticmethod):
        value = value.__func__
    return value


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A trigger: ``when(values, state)`` over every live value, firing ``run`` on its rising edge.

    Checkpoint predicates may read any field and ``state.fired(...)``; executors may return any
    effect, including a jump (routing) or a fail (a policy rejection).
    """

    id: str
    when: Predicate
    run: Executor | None = None
    title: str | None = None
    approval: Approval | None = None


@dataclass(frozen=True, slots=True)
class Approval:
    """Make a checkpoint wait for a human decision when it rises.

    While the decision is pending (and the checkpoint still holds) the form cannot complete,
    but the conversation goes on and writes are taken. A principal holding ``role`` (from a
    claim, never the person who filled the form) approves or rejects; the decision is written
    to ``field`` (declared with ``decided_by_approver=True``; its type must accept
    ``"approved"`` and ``"rejected"``) as a revision by the approver, and fires that field's
    edges like any answer. After ``timeout_seconds`` with no decision, ``on_timeout`` is written
    instead (by the operator, actor ``timeout``). A checkpoint with an approval has no ``run``.

    A decision is bound to the answers it was given on: ``binds`` names them (by default, the
    fields the checkpoint's predicate reads). A change to any of them while the checkpoint holds
    is a new crossing: the decision in force (or the request still pending) is withdrawn and a
    new approval opens under a new key, so the form only completes with a decision on the
    values it holds. A decision is also withdrawn when the checkpoint stops holding.
    """

    field: str
    role: str
    timeout_seconds: int = 3 * 24 * 3600
    on_timeout: Literal["approved", "rejected"] = "rejected"
    prompt: str | None = None
    binds: Sequence[str] | None = None


@dataclass(frozen=True, slots=True)
class Migration:
    """How an instance started on ``from_version`` becomes one of the next version.

    ``renames`` maps an old field id to its new id: the answer in force under the old id is
    appended to the new id's log as a ``migration`` revision (the old log stays, untouched,
    under the old id). ``convert`` maps a field id (its new name) to a function over its
    in-force JSON value; a changed result is appended the same way. Renames chain across
    versions: a target only has to exist in the current version or be renamed again later.
    """

    from_version: int
    renames: Mapping[str, str] = dc_field(default_factory=dict)
    convert: Mapping[str, Callable[[Any], Any]] = dc_field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class FormDef:
    """A whole form: id, version, ordered steps, checkpoints and the form-level executor.

    Complete is a state, not an end: by default a complete form stays open for corrections (a
    correction that breaks completeness reopens it, and completing again is a new occurrence
    of ``on_complete`` under a new key) until the agent submits it after the user confirms
    (``form_fill`` with ``submit``) or an effect closes it. ``closes_on_complete=True`` closes
    the instance the moment it completes instead, for forms with nothing to confirm.
    """

    id: str
    version: int
    title: str
    steps: Sequence[type[Step]]
    checkpoints: Sequence[Checkpoint] = ()
    on_complete: Executor | None = None
    migrations: Sequence[Migration] = ()
    description: str = ""
    closes_on_complete: bool = False
    on_close: Executor | None = None
    """Runs once when the instance closes, for any reason (completed, terminated, abandoned,
    handed over); ``ctx.status`` and ``ctx.closed_reason`` say which. For notifying other
    systems."""
    hands_over_to: Mapping[str, Mapping[str, str | None]] = dc_field(default_factory=dict)
    """The forms a ``HandOver`` effect may hand this one over to, each with its renames
    (source field id -> target field id, or None to leave it behind; a field not named keeps
    its id). Checked when both
    forms are in one registry: renamed fields exist and every field that would travel has a
    type on the target that takes the source's values (``forms.handover.check_handover``)."""
