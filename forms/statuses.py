"""Every status the API emits, by kind: each declared once, as a ``Literal`` type.

The engine's own are declared where they are derived (``forms.evaluation.FieldStatus``,
``forms.instance.Status`` and ``EntryStatus``); the ones only a read shows are declared here.
The docs' status tables (docs/engine.md, "Statuses") and the OpenAPI document's enums are held
to these by a test (``tests/unit/test_statuses.py``), so a status added in code and nowhere
else fails it.
"""

from __future__ import annotations

from typing import Literal, get_args

from forms.evaluation import STILL_TO_ASK, FieldStatus
from forms.instance import EntryStatus, Status

__all__ = [
    "STATUSES",
    "STILL_TO_ASK",
    "EntryStatus",
    "FieldRowStatus",
    "FieldStatus",
    "InstanceStatus",
    "StepState",
    "values",
]

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
