"""What an executor may return: effects the engine applies as a new commit.

An executor returns ``None``, one effect, or a list of effects (applied in order, in one commit).
The engine never performs an effect's side of the world; these only change the instance.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from forms.definition import Step


@dataclass(frozen=True, slots=True)
class Patch:
    """Stamp values on fields, written as executor revisions (validated like any other write)."""

    values: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Jump:
    """Move the conversation to a step.

    To a step that is not complete, the conversation goes there next (a forward move). To a
    step that is already complete, it is a revisit: the step reopens, its answers stay but come
    back flagged to ask again, until the next write into that step.
    """

    step: str | type[Step]

    @property
    def step_id(self) -> str:
        return self.step if isinstance(self.step, str) else self.step.step_id()


@dataclass(frozen=True, slots=True)
class Fail:
    """Record a rejection the agent must relay; the conversation goes on.

    The rejection stays active (and the form cannot complete) while the hook that produced it
    still holds; a correction that makes the condition false clears it.
    """

    message: str


@dataclass(frozen=True, slots=True)
class Complete:
    """Close the instance as completed, whatever is still pending."""


@dataclass(frozen=True, slots=True)
class Terminate:
    """Close the instance for a reason other than success (ineligible, duplicate, withdrawn).

    Every field stops asking, further writes are refused, and a completion landing on the same
    commit loses to it.
    """

    reason: str


@dataclass(frozen=True, slots=True)
class HandOver:
    """Close the instance as ``handed_over`` and start ``form`` in the same conversation,
    carrying the answers across (``forms.handover``) by the mapping the definition declares
    for that form (``FormDef.hands_over_to``, which a handover effect needs: it is what the
    compile check holds the types to). Not a failure: the conversation goes on in the new
    form. The close and the start are stored together or not at all.
    """

    form: str
    reason: str | None = None


Effect = Patch | Jump | Fail | Complete | Terminate | HandOver
