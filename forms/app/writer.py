"""What the write tools run on (``Writer``) and who writes through a call (``call_author``).

``forms.app.writes`` (fill, revise, abandon), ``forms.app.starts`` (a start) and
``forms.app.after_write`` (what a call answers once its write is stored) share it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from forms.app.calls import CallId
from forms.app.conversation import Caller
from forms.app.loop import CommitLoop
from forms.app.memory import Memory, MemoryCall
from forms.compiled import CompiledForm
from forms.instance import FormInstance, OutboxEntry
from forms.operations import Author

REMEMBERED = frozenset({"agent", "user"})
"""Whose answers memory keeps: the agent's, from the conversation, and the person's own, from
their form page (both a verified principal's); never a webhook's, an executor's or anyone
else's."""


@dataclass(frozen=True, slots=True)
class Writer:
    """What the write tools run on: the commit loop (and its policy: the replay window), the
    hand-off to the dispatcher (returns the instance as in-process hooks left it, None when
    they run elsewhere), new instance ids, and whether hooks run at all (a dispatcher is
    configured)."""

    loop: CommitLoop
    dispatch: Callable[[FormInstance, Sequence[OutboxEntry]], FormInstance | None]
    new_id: Callable[[], str]
    runs_hooks: bool
    memory: Memory | None = None
    """Memory for the deployment (None: none; no fact is read or written)."""

    def memory_call(self, caller: Caller, form: CompiledForm) -> MemoryCall | None:
        """Memory's part of a call on ``form``: only for a verified principal's own writes
        (the agent in their conversation, or the person on their page) on a form whose fields
        declare fact keys."""
        if (
            self.memory is None
            or not form.memory_fields
            or caller.source not in REMEMBERED
            or not caller.principal
        ):
            return None
        return self.memory.call(caller.principal, caller.conversation_id, self.loop.timer)

    def owed_call(self, caller: Caller, instance: FormInstance) -> MemoryCall | None:
        """Memory's part of a later call on ``instance`` whose start's recall came late
        (``recall_owed``), with the read (kept in this process, or again) started: only for
        the agent's conversation, as at the start."""
        if (
            self.memory is None
            or instance.state.recall_owed is None
            or caller.source != "agent"
            or not caller.principal
        ):
            return None
        owed = self.memory.call(caller.principal, caller.conversation_id, self.loop.timer)
        owed.begin_owed(instance)
        return owed


def call_author(caller: Caller, call: CallId) -> Author:
    """Who writes through this call: the caller's source and principal, and the call's id."""
    # every field given in order: the named tuple made in C, not by its Python ``__new__``
    return _tuple_new(Author, (caller.source, caller.principal, call.id))  # type: ignore[no-any-return]


_tuple_new: Any = tuple.__new__
