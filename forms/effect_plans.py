"""What an executor's effects amount to: the field changes and bookkeeping of one run.

An executor returns effects (``forms.effects``); ``plan_effects`` turns one occurrence's effects
into a plan that also marks its outbox entry done, all or nothing, and ``forms.engine.transition``
turns the plan into a commit. Patches are planned as fills by the executor
(``forms.operations.plan_fill``), so they are validated like any other write.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from forms.compiled import CompiledForm
from forms.effects import Complete, Effect, Fail, HandOver, Jump, Patch, Terminate
from forms.instance import FieldChange, FormInstance, InstanceState, OutboxEntry, StepOverride
from forms.instance import Rejection as InstanceRejection
from forms.operations import Author, plan_fill


@dataclass(frozen=True, slots=True)
class EffectPlan:
    """The field changes and bookkeeping an executor's effects amount to."""

    changes: dict[str, FieldChange]
    state: InstanceState
    ignored: tuple[str, ...]
    handover: HandOver | None = None
    """A handover the effects ask for (the last one, unless a terminate beats it): the caller
    plans it on ``state`` (``forms.handover.plan_handover``), closing and starting together."""


class EffectError(ValueError):
    """An executor returned something the engine cannot apply (a bug in the executor)."""


def as_effects(result: object) -> tuple[Effect, ...]:
    """Normalise an executor's return value: None, one effect, or a sequence of effects."""
    if result is None:
        return ()
    items = result if isinstance(result, (list, tuple)) else (result,)
    for item in items:
        if not isinstance(item, (Patch, Jump, Fail, Complete, Terminate, HandOver)):
            raise EffectError(f"executor returned {type(item).__name__}, which is not an effect")
    return tuple(items)


def plan_effects(
    form: CompiledForm,
    instance: FormInstance,
    entry: OutboxEntry,
    effects: tuple[Effect, ...],
    open_step: str | None,
    step_complete: Mapping[str, bool],
    now: datetime,
) -> EffectPlan:
    """Turn one occurrence's effects into a commit plan that also marks its entry done.

    All or nothing: an effect that cannot apply (an unknown field, an invalid patch value, a jump
    to an unknown step) raises ``EffectError`` and the caller records the entry as failed.
    A terminate anywhere in the list beats a handover, and a handover beats a complete. On a
    closed instance only patches on a completed form apply (stamping, say, a reference
    number); the rest are listed as ignored.
    """
    state = instance.state
    author = Author(source="executor", actor=entry.key)
    changes: dict[str, FieldChange] = {}
    ignored: list[str] = []
    override, status, reason = state.override, state.status, state.closed_reason
    rejections = list(state.rejections)
    closed = status != "open"
    handover: HandOver | None = None
    for effect in effects:
        if isinstance(effect, Patch):
            if status in ("terminated", "abandoned"):
                ignored.append("patch")
                continue
            changes.update(_patched(form, instance, effect, author, now))
        elif closed:
            ignored.append(type(effect).__name__.lower())
        elif isinstance(effect, Jump):
            override = _jumped(form, effect, step_complete, entry)
        elif isinstance(effect, Fail):
            rejections.append(_rejection(entry, effect, now))
        elif isinstance(effect, Terminate):
            status, reason = "terminated", effect.reason
        elif isinstance(effect, HandOver):
            handover = _declared(form, effect)
        elif isinstance(effect, Complete) and status != "terminated":
            status, reason = "completed", f"completed by {entry.hook_id}"
    del open_step
    new_state = state.model_copy(
        update={
            "override": override,
            "status": status,
            "closed_reason": reason,
            "rejections": rejections,
            "outbox": {**state.outbox, entry.key: _done(entry, ignored, now)},
            "updated_at": now,
        }
    )
    if status not in ("open", "completed"):  # on a closed form no handover was taken
        handover = None  # a terminate of the same run beats it; it beats a complete
    return EffectPlan(changes=changes, state=new_state, ignored=tuple(ignored), handover=handover)


def _patched(
    form: CompiledForm, instance: FormInstance, patch: Patch, author: Author, now: datetime
) -> dict[str, FieldChange]:
    """A patch's field changes, planned as the executor's fill; ``EffectError`` naming every
    unknown field and refused value when any is."""
    plan = plan_fill(form, instance, dict(patch.values), author, now)
    if plan.unknown or plan.rejected:
        problems = [f"{u.sent!r} is not a field" for u in plan.unknown] + [
            f"{r.field}: {r.message}" for r in plan.rejected
        ]
        raise EffectError("patch rejected: " + "; ".join(problems))
    return plan.changes


def _jumped(
    form: CompiledForm, jump: Jump, step_complete: Mapping[str, bool], entry: OutboxEntry
) -> StepOverride:
    """The override a jump sets: a revisit of a complete step, else a focus."""
    target = jump.step_id
    if target not in form.steps:
        raise EffectError(f"jump to {target!r}, which is not a step")
    kind: Literal["focus", "revisit"] = "revisit" if step_complete.get(target) else "focus"
    return StepOverride(step=target, kind=kind, by=entry.key)


def _rejection(entry: OutboxEntry, fail: Fail, now: datetime) -> InstanceRejection:
    """A failed run's message, kept on the instance under its occurrence's key."""
    return InstanceRejection(key=entry.key, hook_id=entry.hook_id, message=fail.message, at=now)


def _declared(form: CompiledForm, handover: HandOver) -> HandOver:
    """``handover``, when the form declares its target in ``hands_over_to``."""
    if handover.form not in form.definition.hands_over_to:
        raise EffectError(
            f"hand over to {handover.form!r}, which {form.id} does not declare in hands_over_to"
        )
    return handover


def _done(entry: OutboxEntry, ignored: list[str], now: datetime) -> OutboxEntry:
    """The occurrence's entry, done: one more attempt, and what a closed form ignored."""
    return entry.model_copy(
        update={
            "status": "done",
            "attempts": entry.attempts + 1,
            "finished_at": now,
            "error": ("ignored on a closed form: " + ", ".join(ignored)) if ignored else None,
        }
    )
