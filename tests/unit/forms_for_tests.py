"""Compact, test-only form definitions and a harness around ``FormService``.

``trip_form(script)`` is a three-step form built fresh per test:

* ``person``: ``name`` (required, ``on_fill``), ``age`` (required int >= 0), ``nickname``
  (optional);
* ``trip``: ``mode`` (air/rail/car, ``on_fill``), ``flight`` (gated on ``mode == "air"`` in the
  same step), ``amount`` (required int >= 0);
* ``extra`` (applies unless ``mode == "car"``): ``guardian`` (gated on the earlier ``age < 18``),
  ``consent`` (required bool), ``notes`` (optional);
* every step has an ``on_complete``; checkpoint ``over_cap`` holds while ``amount > CAP``; the form
  has an ``on_complete``.

Every executor is ``script.run``: it records the call and returns whatever the test configured
for that hook id (``script.effects``), or raises while ``script.failures`` says so. With
``script=None`` the form has no executors at all (counters still bump).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from dataclasses import field as dc_field
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import Field

from forms import (
    Caller,
    Checkpoint,
    CompiledForm,
    FormDef,
    FormInstance,
    FormService,
    InstanceState,
    Step,
    compile_form,
    field,
)
from forms.engine import Evaluation, Transition, evaluate, transition
from forms.operations import Author, plan_fill, touched_steps
from forms.state import HookContext
from tests.support import Session, TickingClock, service_for

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
CAP = 1000
"""``amount`` above this makes checkpoint ``over_cap`` hold."""

FORM_ID = "trip"
PRINCIPAL = "alice"
CONVERSATION = "conv-1"

HOOK_IDS = (
    "field.name.filled",
    "field.age.filled",
    "field.nickname.filled",
    "field.mode.filled",
    "field.flight.filled",
    "field.amount.filled",
    "field.guardian.filled",
    "field.consent.filled",
    "field.notes.filled",
    "step.person.complete",
    "step.trip.complete",
    "step.extra.complete",
    "checkpoint.over_cap",
    "form.complete",
    "form.closed",
)
EXECUTOR_HOOKS = (
    "field.name.filled",
    "field.mode.filled",
    "step.person.complete",
    "step.trip.complete",
    "step.extra.complete",
    "checkpoint.over_cap",
    "form.complete",
)

ADULT = {"name": "Ann", "age": 30, "mode": "rail", "amount": 100, "consent": True}
"""Every required answer for an adult going by rail, under the cap."""


@dataclass(frozen=True)
class Run:
    """One executor run as the executor saw it."""

    hook_id: str
    key: str
    occurrence: int
    answers: dict[str, Any]
    values: dict[str, Any]


@dataclass
class Script:
    """What the executors do in one test.

    ``effects[hook_id]`` is returned as is, or called with the context when callable.
    ``failures[hook_id]`` is how many more runs of that hook raise ``RuntimeError``.
    """

    effects: dict[str, Any] = dc_field(default_factory=dict)
    failures: dict[str, int] = dc_field(default_factory=dict)
    runs: list[Run] = dc_field(default_factory=list)

    def run(self, ctx: HookContext) -> Any:
        seen = {name: getattr(ctx.values, name) for name in FIELDS}
        self.runs.append(
            Run(ctx.hook_id, ctx.key, ctx.occurrence, dict(ctx.answers), seen),
        )
        left = self.failures.get(ctx.hook_id, 0)
        if left > 0:
            self.failures[ctx.hook_id] = left - 1
            raise RuntimeError(f"{ctx.hook_id} is down")
        behaviour = self.effects.get(ctx.hook_id)
        return behaviour(ctx) if callable(behaviour) else behaviour

    def hooks_run(self) -> list[str]:
        return [r.hook_id for r in self.runs]

    def runs_of(self, hook_id: str) -> list[Run]:
        return [r for r in self.runs if r.hook_id == hook_id]


FIELDS = ("name", "age", "nickname", "mode", "flight", "amount", "guardian", "consent", "notes")


def trip_form(
    script: Script | None = None, *, closes_on_complete: bool = True, version: int = 1
) -> FormDef:
    """A fresh definition whose executors (if ``script``) all run ``script.run``."""
    run: Callable[[HookContext], Any] | None = script.run if script is not None else None

    class Person(Step):
        title = "Person"
        preview = "who is travelling"
        on_complete = run

        name: str = field("Name", on_fill=run)
        age: Annotated[int, Field(ge=0)] = field("Age")
        nickname: str | None = field("Nickname")

    class Trip(Step):
        title = "Trip"
        preview = "how and how much"
        on_complete = run

        mode: Literal["air", "rail", "car"] = field("Mode", on_fill=run)
        flight: str = field("Flight number", when=lambda v: v.mode == "air")
        amount: Annotated[int, Field(ge=0)] = field("Amount")

    class Extra(Step):
        title = "Extra"
        preview = "guardian and consent"
        on_complete = run
        when = staticmethod(lambda v: v.mode != "car")

        guardian: str = field("Guardian", when=lambda v: v.age is not None and v.age < 18)
        consent: bool = field("Consent")
        notes: str | None = field("Notes")

    return FormDef(
        id=FORM_ID,
        version=version,
        title="Trip request",
        steps=[Person, Trip, Extra],
        checkpoints=[
            Checkpoint("over_cap", when=lambda v: v.amount is not None and v.amount > CAP, run=run)
        ],
        on_complete=run,
        closes_on_complete=closes_on_complete,
    )


# ---------------------------------------------------------------------- pure-engine helpers


def new_instance(form: CompiledForm, instance_id: str = "fi_1") -> FormInstance:
    return FormInstance(
        id=instance_id,
        form_id=form.id,
        form_version=form.version,
        principal=PRINCIPAL,
        conversation_id=CONVERSATION,
        created_at=T0,
        state=InstanceState(updated_at=T0),
    )


def at(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


AGENT = Author(source="agent", actor=PRINCIPAL, tool_call_id="call")


def fill(
    form: CompiledForm, instance: FormInstance, values: Mapping[str, Any], now: datetime = T0
) -> Transition:
    """Plan a fill and turn it into a transition, as the service does (without storing)."""
    plan = plan_fill(form, instance, values, AGENT, now)
    return transition(
        form, instance, plan.changes, now, touched_steps=touched_steps(form, plan.changes)
    )


def filled(form: CompiledForm, values: Mapping[str, Any]) -> FormInstance:
    """A new instance after one fill of ``values``."""
    return fill(form, new_instance(form), values).after


# ---------------------------------------------------------------------- service harness


class Harness(Session):
    """A ``FormService`` over one ``trip`` form with an in-memory store and a fixed clock."""

    def __init__(self, service: FormService, form: CompiledForm, script: Script) -> None:
        super().__init__(service, Caller(PRINCIPAL, CONVERSATION))
        self.form = form
        self.script = script
        self.instance_id = ""

    def start(self, values: Mapping[str, Any] | None = None) -> dict[str, Any]:
        payload: dict[str, Any] = {"form": FORM_ID}
        if values is not None:
            payload["values"] = dict(values)
        result = self.call("form_start", payload)
        assert "instance" in result, result
        self.instance_id = result["instance"]
        return dict(result)

    def fill(self, **values: Any) -> dict[str, Any]:
        return dict(self.call("form_fill", {"form": FORM_ID, "values": values}))

    def revise(self, field_id: str, action: str, value: Any = None) -> dict[str, Any]:
        payload: dict[str, Any] = {"form": FORM_ID, "field": field_id, "action": action}
        if value is not None:
            payload["value"] = value
        return dict(self.call("form_revise", payload))

    def read(self, part: str | None = None) -> dict[str, Any]:
        payload: dict[str, Any] = {"form": FORM_ID}
        if part is not None:
            payload["part"] = part
        return dict(self.call("form_read", payload))

    def instance(self) -> FormInstance:
        return self.store.get(self.instance_id)

    def ev(self) -> Evaluation:
        return evaluate(self.form, self.instance())

    def status(self, field_id: str) -> str:
        return self.ev().fields[field_id].status

    def status_line(self) -> str:
        lines = self.service.status(self.caller)
        return lines[0] if lines else ""


def harness(
    script: Script | None = None,
    *,
    executors: bool = True,
    dispatch: bool = True,
    closes_on_complete: bool = True,
) -> Harness:
    """A fresh service; ``executors=False`` builds the form without any executor."""
    script = script if script is not None else Script()
    definition = trip_form(script if executors else None, closes_on_complete=closes_on_complete)
    service = service_for(definition, dispatch=dispatch, clock=TickingClock(T0))
    return Harness(service, compile_form(definition), script)
