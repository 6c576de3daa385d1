"""Every status the API emits, by kind: each declared once, as a ``Literal`` type.

All are declared here, with nothing but ``typing``: the engine imports its own from this
module (``forms.evaluation`` the field statuses, ``forms.instance`` the instance and entry
statuses), and the Lambda handler's response models import them without loading the engine at
a cold start (tests/functional/test_cold_start.py).
The docs' status tables (docs/engine.md, "Statuses") and the OpenAPI document's enums are held
to these by a test (``tests/unit/test_statuses.py``), so a status added in code and nowhere
else fails it.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "STATUSES",
    "STILL_TO_ASK",
    "EntryStatus",
    "FieldRowStatus",
    "FieldStatus",
    "InstanceStatus",
    "Status",
    "StepState",
    "values",
]

FieldStatus = Literal[
    "answered",
    "pending",
    "optional",
    "held",
    "not_applicable",
    "declined",
    "no_preference",
    "ask_again",
    "invalid",
]
"""A field's status as the engine derives it (docs/engine.md, "Statuses")."""

STILL_TO_ASK: tuple[FieldStatus, ...] = ("pending", "optional", "ask_again", "invalid")
"""The statuses of a field the agent still has to ask about (on an open instance)."""

Status = Literal["open", "completed", "terminated", "abandoned", "handed_over"]
"""An instance's status (``closed`` in a tool result, ``form_status`` of a decision)."""

EntryStatus = Literal["pending", "done", "failed"]
"""An outbox entry's status: a hook occurrence (``hooks`` in a tool result) or an approval."""

InstanceStatus = Status

FieldRowStatus = Literal[FieldStatus, "unanswered"]
"""A field's ``status`` in a read: the engine's, except that on a closed instance a field still
to ask (``STILL_TO_ASK``) reads ``unanswered``: nothing is asked any more."""

StepState = Literal[
    "open",
    "complete",
    "revisit",
    "does not apply with the current answers",
    "closed (completed)",
    "closed (terminated)",
    "closed (abandoned)",
    "closed (handed_over)",
]
"""A step's ``state`` in a read (the outline's steps, a step read): ``closed (<status>)`` on a
closed instance."""

STATUSES: dict[str, object] = {
    "field": FieldRowStatus,
    "step": StepState,
    "instance": InstanceStatus,
    "hook": EntryStatus,
}
"""Each kind of status and its type: what the docs and the schemas list."""


def values(kind: object) -> tuple[str, ...]:
    """The strings a ``Literal`` status type allows, in declaration order."""
    return tuple(str(v) for v in get_args(kind))
