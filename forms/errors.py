"""Every error the engine raises, in one hierarchy.

Two families:

* ``InvalidFormDefinition`` is a programming error in a form definition. It is raised when a
  definition is compiled (import time at the latest) and never reaches a model.
* ``ToolError`` and its subclasses are things a caller (usually a model) did wrong or asked for
  that cannot happen. The tool layer turns them into data: a code, a message, and a hint saying
  what to send instead. They never escape as exceptions from a tool call.

``StoreError`` covers the storage ports: a compare-and-set conflict (``Conflict``, the one
of every store: instances, drafts, facts) carries what is stored now, so the caller can plan
again without another read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

if TYPE_CHECKING:
    from forms.instance import CallRecord


class FormworkError(Exception):
    """Base of every error raised by the engine."""


class InvalidFormDefinition(FormworkError):
    """A form definition breaks a rule; the message names the rule and the offending part.

    The compiler reports every rule a definition breaks at once: ``problems`` holds one
    message per problem (the message is them all, one per line)."""

    def __init__(self, message: str, *, problems: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.problems: tuple[str, ...] = tuple(problems) or (message,)

    @classmethod
    def of(cls, problems: Sequence[str]) -> InvalidFormDefinition:
        """One error for several problems."""
        return cls("\n".join(problems), problems=problems)


class ToolError(FormworkError):
    """A tool call that cannot be carried out. Returned to the model as data."""

    code = "tool_error"

    def __init__(
        self, message: str, hint: str | None = None, did_you_mean: Sequence[str] = ()
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.did_you_mean = tuple(did_you_mean)
        """The ids an unknown name likely meant, best first: ``did_you_mean`` in the result."""


class BadRequest(ToolError):
    """The input is malformed: wrong shape, oversized, a malformed id."""

    code = "bad_request"


class UnknownForm(ToolError):
    """No form with that id is registered, or this conversation has no instance of it."""

    code = "unknown_form"


class UnknownInstance(ToolError):
    """No instance with that id exists for this conversation."""

    code = "unknown_instance"


class AmbiguousInstance(ToolError):
    """The conversation holds several open instances of a form; the call must name one."""

    code = "ambiguous_instance"


class FormClosed(ToolError):
    """The instance is completed, terminated or abandoned: it takes no more writes."""

    code = "form_closed"


class UnknownField(ToolError):
    """A field id that no alias resolves."""

    code = "unknown_field"


class UnknownStep(ToolError):
    """A step id that no alias resolves."""

    code = "unknown_step"


class CannotRevise(ToolError):
    """A revision move that cannot apply (undo with nothing to undo, decline a required field)."""

    code = "cannot_revise"


class ToolCallConflict(ToolError):
    """A tool-call id was reused with different input."""

    code = "tool_call_conflict"


class ToolCallExpired(ToolError):
    """The tool-call id was used longer ago than the replay window: its first result is no
    longer replayed, and it is not applied a second time."""

    code = "tool_call_expired"


class MigrationFailed(ToolError):
    """The instance's definition version is gone and its migration failed for this instance
    (a conversion raised, or gave a value the new field does not accept). The instance stays on
    its version, untouched; only this instance is affected."""

    code = "migration_failed"


class VersionMismatch(ToolError):
    """The instance was started on a definition version that is gone and has no migration."""

    code = "version_mismatch"


class NotPublishable(ToolError):
    """A form document (a builder's draft) that does not compile yet; ``problems`` names each
    thing to fix."""

    code = "not_publishable"

    def __init__(self, form_id: str, problems: Sequence[str]) -> None:
        self.problems: tuple[str, ...] = tuple(problems)
        count = len(self.problems)
        super().__init__(
            f"The draft {form_id!r} cannot be published yet ({count} "
            f"problem{'s' if count != 1 else ''}): {'; '.join(self.problems)}",
            "Fix them in the builder (inspect_form shows the draft), then publish again.",
        )


class SizeLimit(ToolError):
    """A write that would make one stored item larger than the store takes
    (``forms.storage.sizes``): it can never land as it is, so nothing was stored and sending
    it again does not help. ``item`` names what is too large (``draft``, ``instance``,
    ``revision``, ``fact``, ``published_version``, ``call_record``), ``size`` is what it would
    be and ``limit`` what it may be, both in bytes of stored JSON; they go back to the caller
    as data beside the code."""

    code = "size_limit"

    def __init__(self, item: str, size: int, limit: int, message: str, hint: str) -> None:
        super().__init__(message, hint)
        self.item = item
        self.size = size
        self.limit = limit

    @property
    def details(self) -> dict[str, str | int]:
        """What a result carries beside the code, message and hint."""
        return {"item": self.item, "size": self.size, "limit": self.limit}


class StoreError(FormworkError):
    """Base of the storage port's errors."""


class NotFound(StoreError):
    """The store holds no instance with that id."""


class AlreadyExists(StoreError):
    """An instance with that id is already stored."""


class CallRecorded(StoreError):
    """The tool-call id is already recorded in this conversation; ``record`` is the first call.

    Raised by a create or commit carrying a call (nothing of it is stored) and by
    ``record_call``."""

    def __init__(self, call_id: str, record: CallRecord) -> None:
        super().__init__(f"tool call {call_id} is already recorded")
        self.call_id = call_id
        self.record = record


class Versioned(Protocol):
    """What a store hands back as current: anything with a compare-and-set ``version``."""

    @property
    def version(self) -> int: ...


Current = TypeVar("Current", bound=Versioned)


class Conflict(StoreError, Generic[Current]):
    """A compare-and-set that lost, in any store: a write planned on version ``expected`` of
    ``subject`` (an instance's id, a draft's form id, a fact's key; ``kind`` says which),
    while ``current`` is what is stored now (None: nothing is, a draft or a fact never
    written), so the caller plans again without another read. Nothing of the write was
    stored. ``ConflictError``, ``DraftConflict`` and ``FactConflict`` are older names of
    this one error."""

    def __init__(
        self, subject: str, expected: int, current: Current | None, *, kind: str = "instance"
    ) -> None:
        found = current.version if current is not None else 0
        super().__init__(f"{kind} {subject!r}: expected version {expected}, found {found}")
        self.subject = subject
        self.kind = kind
        self.expected = expected
        self.current = current

    @property
    def found(self) -> int:
        """The version stored now (0: nothing is)."""
        return self.current.version if self.current is not None else 0


ConflictError = Conflict
"""The instance store's name for ``Conflict`` (kept: the public API exports it)."""


class TooManyConflicts(ToolError):
    """Concurrent writers kept winning; the call was not applied and can be retried."""

    code = "busy"


class Forbidden(ToolError):
    """The caller is not allowed to do this (an approval by someone without the role)."""

    code = "forbidden"


class UnknownApproval(ToolError):
    """No pending approval has that id (never existed, already decided, or expired)."""

    code = "unknown_approval"
