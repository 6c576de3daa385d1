"""The form instance: the only shape storage ever sees.

A ``FormInstance`` is plain, JSON-serialisable data, read-only once a store holds it
(``FormInstance.snapshot``: frozen models, ``Sealed`` and ``SealedList`` containers), so
stores and callers share instances instead of copying them. It holds, per field, an
append-only log of ``Revision`` entries and a cursor naming the revision in force (-1: none),
plus the instance's bookkeeping (``InstanceState``): status, per-hook edge state and
counters, the step override left by a jump, recorded rejections, the dispatch outbox, and what
memory filled or offered when the form started (``Recollection``). Tool-call records live
beside instances, per conversation (``CallRecord``), so they stay out of the path of every
read.

Everything the engine *means* (liveness, applicability, statuses, completion) is derived from
this record on every call; nothing stored is a cache of it except ``HookState.holds``, which is
the previous commit's condition and is what makes a rising edge detectable. In memory, the
field logs and hook states (``Marked`` dicts) carry what the engine last derived from them, so
the next call re-derives only what its changes touch; that is never stored, and any change
to them drops it.

A ``Commit`` is how an instance changes: per field, revisions to append and a new cursor, plus the
new bookkeeping. ``apply_commit`` is the one implementation of applying it; adapters call it (or
do the same thing in their own storage) rather than writing their own.

A field's log (``Revision``, ``FieldHistory``) lives in ``forms.field_log`` and is importable
from here too.
"""

from datetime import datetime
from operator import itemgetter
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from forms.call_records import CallRecord, NewCall
from forms.errors import ConflictError
from forms.field_log import FieldHistory, Frozen, Revision, RevisionKind, Source, with_changes
from forms.keys import parse_key
from forms.marked import Marked, Sealed, SealedList, built, seal
from forms.statuses import EntryStatus, Status

__all__ = [
    "KNOCK_ON_LIMIT",
    "LOOP_STOPPED",
    "CallRecord",
    "Commit",
    "EntryKind",
    "FieldChange",
    "FieldHistory",
    "FormInstance",
    "HandoverLink",
    "HookState",
    "InstanceState",
    "NewCall",
    "OutboxEntry",
    "RecallOwed",
    "Recollection",
    "Rejection",
    "Revision",
    "RevisionKind",
    "Source",
    "StepOverride",
    "applied_unshared",
    "apply_commit",
    "replace_instance",
    "sealed_in_place",
    "stopped",
    "with_changes",
]

EntryKind = Literal["executor", "approval"]


class _Part(Frozen):
    """A part of an instance's record. The models here build their validators when first used
    (``defer_build``), and their annotations are real, not strings pydantic evaluates back: the
    stream relay's cold start imports them, and its first batch validates ``InstanceState``."""

    model_config = ConfigDict(defer_build=True)


class HookState(_Part):
    """Per hook: whether its condition held after the last commit, and how many edges it has had.

    ``basis``, for an approval checkpoint while it holds: a digest of the answers its decision
    is bound to. A different digest on a later commit is a new crossing (a new occurrence).
    """

    holds: bool = False
    count: int = 0
    basis: str | None = None


class OutboxEntry(_Part):
    """One hook occurrence to dispatch. Written in the same commit as the answer that caused it."""

    key: str
    hook_id: str
    occurrence: int
    kind: EntryKind = "executor"
    """``approval`` entries wait for a human decision (``decide``) instead of running code."""
    deadline: datetime | None = None
    """For approvals: when the declared timeout outcome applies if nobody has decided."""
    status: EntryStatus = "pending"
    attempts: int = 0
    error: str | None = None
    created_at: datetime
    dispatched_at: datetime | None = None
    """When a durable runner (a Temporal workflow keyed by ``key``) was started for it; the
    lasting record of dispatch, since the runner forgets closed ids after its retention."""
    finished_at: datetime | None = None
    cause: str | None = None
    """The key of the hook occurrence whose commit raised this one (a knock-on), if any."""
    depth: int = 0
    """How many executor commits in a row led to this entry: 0 when an answer, a decision or
    an operator raised it, one more than its ``cause``'s when an executor's effects did. An
    entry past ``KNOCK_ON_LIMIT`` is recorded ``failed`` instead of running (``stopped``)."""
    subject: dict[str, JsonValue] | None = None
    """For approvals: the answers the decision is asked on (the checkpoint's bound fields, as
    stored), so the approver sees what they approve and the record shows what was approved."""


KNOCK_ON_LIMIT = 20
"""The longest chain of executor commits each raising the next hook occurrence (a checkpoint
whose effect raises another, whose effect raises the first again, ...). The entry that would
run past it is recorded as failed, with ``LOOP_STOPPED`` in its error, and waits for an
operator: hooks that keep triggering each other stop there, in every process that runs them,
since the depth travels on the entries."""

LOOP_STOPPED = "stopped: hooks kept triggering each other"
"""How the error of an entry stopped at ``KNOCK_ON_LIMIT`` starts."""


def stopped(entry: OutboxEntry) -> bool:
    """Whether ``entry`` was stopped at ``KNOCK_ON_LIMIT`` (and is still failed)."""
    return entry.status == "failed" and entry.depth > KNOCK_ON_LIMIT


class StepOverride(_Part):
    """Where a jump left the conversation.

    ``focus`` (a forward jump) holds until that step is complete; ``revisit`` (a backward jump)
    reopens a completed step and holds until the next write into it.
    """

    step: str
    kind: Literal["focus", "revisit"]
    by: str


class Rejection(_Part):
    """A ``Fail`` effect: a message the agent must relay, active while its hook holds."""

    key: str
    hook_id: str
    message: str
    at: datetime

    @property
    def occurrence(self) -> int:
        """The crossing that produced it: the last segment of its idempotency key."""
        return parse_key(self.key).occurrence


class Recollection(_Part):
    """What memory did for one field when the form started, and where the value came from.

    A ``fill`` wrote ``value`` into the empty field as a revision ``by: memory`` (its index in
    the field's log is ``entry``): while that revision is in force, the answer is marked as
    from memory and unconfirmed. An ``offer`` wrote nothing: it stands, shown for the agent to
    ask about, while nothing has been written to the field since (its log still ``entry``
    entries long). ``key`` is the fact key; ``fact_revision`` the fact's revision (its
    ``seq``), so an answer equal to ``value`` confirms that very fact. ``shown`` is the value
    as people read it, with its unit (``70 kg``); ``derived_from`` and ``rule`` say when it was
    read from other words (``5'8"``, ``feet_inches_to_cm``)."""

    use: Literal["fill", "offer"]
    key: str
    value: JsonValue
    shown: str
    entry: int
    fact_revision: int
    stated_at: datetime
    confirmed_at: datetime | None = None
    derived_from: str | None = None
    rule: str | None = None

    def stands(self, history: FieldHistory) -> bool:
        """Whether it still shows: a fill while its revision is in force, an offer while
        nothing was written to the field after it."""
        if self.use == "fill":
            return history.cursor == self.entry
        return history.count == self.entry

    def when(self) -> str:
        """``said 2026-09-03``, or ``confirmed 2027-01-10`` when confirmed since."""
        confirmed = self.confirmed_at
        if confirmed is not None and confirmed > self.stated_at:
            return f"confirmed {confirmed.date().isoformat()}"
        return f"said {self.stated_at.date().isoformat()}"


class RecallOwed(_Part):
    """Memory's read missed its deadline when the form started, so the recall is owed: the
    next call of the agent's conversation on the instance delivers it, as offers only (the user
    may have answered in between). ``since``: when the form started; ``named``: the fields the
    starting call named, which memory leaves to what that call said."""

    since: datetime
    named: tuple[str, ...] = ()


class HandoverLink(_Part):
    """The other end of a handover (``forms.handover``): on the instance handed over, the one
    that took over (``to``); on that one, where it came from (``from``)."""

    instance: str
    form: str
    at: datetime
    carried: tuple[str, ...] = ()
    """The source's field ids whose answers (or declines) were carried."""
    dropped: dict[str, str] = Field(default_factory=dict)
    """Source field id -> why its answer was not carried (no such field, the type refused it)."""
    reason: str | None = None
    """Why it was handed over (a checkpoint's ``HandOver`` reason), if said."""
    chain: int = 1
    """How many handovers in a row led here (1: the source was not itself started by one).
    Checkpoints handing over from form to form stop at ``KNOCK_ON_LIMIT``."""


class InstanceState(BaseModel):
    """Everything about an instance except the field logs. A commit replaces it whole."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    status: Status = "open"
    closed_reason: str | None = None
    hooks: dict[str, HookState] = Field(default_factory=dict)
    override: StepOverride | None = None
    rejections: list[Rejection] = Field(default_factory=list)
    outbox: dict[str, OutboxEntry] = Field(default_factory=dict)
    updated_at: datetime
    recalled: dict[str, Recollection] = Field(default_factory=dict)
    """Per field id, what memory filled or offered when the form started, or offered at a
    later call when its read came late (none: memory was off, failed, or had nothing for it)."""
    recall_owed: RecallOwed | None = None
    """Set when memory's read came too late for the start: a later call delivers it."""
    page_edits: list[str] = Field(default_factory=list)
    """Field ids the person changed on their form page since the agent's last write, in the
    order they were changed: the agent's status line says so until its next write."""
    handed_to: HandoverLink | None = None
    """Set when this instance closed ``handed_over``: the instance and form that took over."""
    handed_from: HandoverLink | None = None
    """Set on an instance started by a handover: the instance and form it took over from."""

    def status_text(self) -> str:
        """The status with the reason it closed, for sentences: ``completed (submitted)``; a
        handover's reason says it all: ``handed over to enterprise fi_…``."""
        if self.status == "handed_over" and self.closed_reason:
            return self.closed_reason
        return self.status + (f" ({self.closed_reason})" if self.closed_reason else "")


class FormInstance(BaseModel):
    """One conversation's run of one form definition version."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    id: str
    form_id: str
    form_version: int
    principal: str
    conversation_id: str
    created_at: datetime
    version: int = 0
    history: dict[str, FieldHistory] = Field(default_factory=dict)
    state: InstanceState

    def field(self, field_id: str) -> FieldHistory:
        """The log of ``field_id`` (an empty one when nothing was ever written)."""
        return self.history.get(field_id) or _EMPTY_HISTORY

    def snapshot(self) -> "FormInstance":
        """This instance read-only, to share instead of copy: itself when its containers are
        sealed already (every instance a store holds or hands out), else a copy holding sealed
        ones (``seal``: a ``Marked`` sealed in place, a plain dict or list copied)."""
        values = self.__dict__  # read once: a model's attribute costs several dict reads
        history, state = values["history"], values["state"]
        if not _all_sealed(fields := state.__dict__):
            state = built(InstanceState, {**fields, **{n: seal(fields[n]) for n in _CONTAINERS}})
        elif type(history) is Sealed:
            return self
        return built(FormInstance, {**values, "history": seal(history), "state": state})

    def revision_count(self) -> int:
        return sum(h.count for h in self.history.values())


class FieldChange(_Part):
    """Per field: entries to append (oldest first) and the cursor to leave in force."""

    append: tuple[Revision, ...] = ()
    cursor: int


class Commit(_Part):
    """An all-or-nothing change to one instance, applied only if ``expected_version`` matches."""

    instance_id: str
    expected_version: int
    fields: dict[str, FieldChange] = Field(default_factory=dict)
    state: InstanceState
    form_version: int | None = None
    """Set only by a migration: the definition version the instance moves to."""
    call: NewCall | None = None
    """The tool call this commit applies, recorded with it (all or nothing); the commit fails
    with ``CallRecorded`` when the conversation already recorded that id."""


def apply_commit(instance: FormInstance, commit: Commit) -> FormInstance:
    """Apply ``commit`` to ``instance`` and return the new instance; the input is not modified.

    Raises ``ConflictError`` (carrying ``instance``) when the versions do not match, and
    ``ValueError`` when the commit would rewrite history (a cursor past the end of the log).
    The result is read-only (``FormInstance.snapshot``): it shares with the input and the
    commit only what nobody can change (a ``Marked`` of the commit's state is sealed).
    """
    return applied_unshared(instance, commit).snapshot()


def applied_unshared(instance: FormInstance, commit: Commit) -> FormInstance:
    """``apply_commit`` without the final snapshot: the result shares the commit's state. For
    the engine's own instances and for the port, which seals it; a commit the engine planned
    on logs with ``instance``'s content gives the instance the engine made with it."""
    # ``__dict__`` read: a pydantic model's attribute costs several times (``__getattr__``)
    values, changes = instance.__dict__, commit.__dict__
    if changes["instance_id"] != values["id"]:
        raise ValueError(f"commit for {commit.instance_id} applied to {instance.id}")
    if changes["expected_version"] != values["version"]:
        raise ConflictError(instance.id, commit.expected_version, instance.snapshot())
    version, form_version = values["version"] + 1, changes["form_version"] or values["form_version"]
    # The engine marks the changes it planned with what it derived from the logs it planned
    # on and after them, the instance it made and its source fields: logs carrying the first match.
    fields, logs = changes["fields"], values["history"]
    derived: _Derived | None = fields.derived if isinstance(fields, Marked) else None
    before, after, made, based = derived or (None, None, None, None)
    planned_here = before is not None and isinstance(logs, Marked) and before is logs.derived
    if planned_here and made is not None:
        # the instance applying would build, but for its logs (which match), is ``made``'s:
        # its fields compared as two dicts' would be (first by identity), none built; none
        # when ``instance`` is the one it planned on (a store handing out its own, in memory)
        kept, moved = made.__dict__, (version, form_version, changes["state"])
        if (based is values or _IDENTITY(kept) == _IDENTITY(values)) and _MOVED(kept) == moved:
            return made
    history = with_changes(logs, fields)
    if planned_here:
        history.derived = after
    parts = {"version": version, "form_version": form_version, "history": history}
    return built(FormInstance, {**values, **parts, "state": changes["state"]})


_Derived = tuple[Any, Any, "FormInstance | None", Any]  # a mark, read from its slot (no getattr)
# a FormInstance's fields but its logs: those a commit never changes, and those it moves
_IDENTITY = itemgetter("id", "form_id", "principal", "conversation_id", "created_at")
_MOVED = itemgetter("version", "form_version", "state")
_CONTAINERS = ("hooks", "rejections", "outbox", "recalled", "page_edits")  # its dicts, lists


def _all_sealed(values: dict[str, Any]) -> bool:
    """Whether a state's containers (its ``__dict__``'s) are sealed (spelled out: a loop is 2x)."""
    return (
        type(values["hooks"]) is Sealed
        and type(values["outbox"]) is Sealed
        and type(values["recalled"]) is Sealed
        and type(values["rejections"]) is SealedList
        and type(values["page_edits"]) is SealedList
    )


def sealed_in_place(instance: FormInstance) -> FormInstance:
    """``instance`` read-only where it stands: each container replaced, in its model's
    ``__dict__``, by a sealed one with the same content (``seal``). For the instance a commit
    makes (the engine's, whose state is the commit's): its maker sees the content it built,
    and a plain container it still holds stops being the instance's. No model is built."""
    fields = instance.__dict__
    values = fields["state"].__dict__
    if not _all_sealed(values):  # the usual commit brings its hook states as they were
        for name in _CONTAINERS:
            values[name] = seal(values[name])  # itself when sealed already
    if type(fields["history"]) is not Sealed:
        fields["history"] = seal(fields["history"])
    return instance


def replace_instance(instance: FormInstance, **changes: Any) -> FormInstance:
    """A copy of ``instance`` with some attributes replaced, not validated again: the engine
    builds every replacement from validated parts (on the path of every commit)."""
    return built(FormInstance, {**instance.__dict__, **changes})


_EMPTY_HISTORY = FieldHistory()
