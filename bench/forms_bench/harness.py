"""Run one cell (a scenario played against an agent) in process and record everything.

Each cell gets its own ``FormService`` over an ``InMemoryFormStore`` and an
``InProcessDispatcher``, with a clock that starts at a fixed moment and ticks one second per
reading, and sequential instance ids, so a cell's transcript is the same on every run.

Per user turn the harness asks the agent to act until it answers with a message (at most
``MAX_ROUNDS`` model calls per turn). Every tool call runs through ``FormService.call``; the
harness looks at the instance before and after each write to count destructive blank writes,
and remembers what failed in this turn to count retries of the same failure.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from bench.forms_bench.model import (
    Agent,
    JsonDict,
    Message,
    MeteredAgent,
    Observation,
    Scenario,
    ToolCall,
    ToolResult,
    Usage,
    UserTurn,
)
from forms import (
    Caller,
    CompiledForm,
    FormInstance,
    FormRegistry,
    FormService,
    InMemoryFormStore,
    InProcessDispatcher,
)
from forms.app.loop import CommitPolicy
from forms.app.service import jittered_backoff
from forms.examples import EXAMPLES
from forms.schema import Accepted

MAX_ROUNDS = 20
"""Model calls per user turn before the harness gives up on the turn (a runaway agent)."""
WRITE_TOOLS = frozenset({"form_start", "form_fill", "form_revise", "form_abandon"})
READ_TOOLS = frozenset({"form_read", "form_list"})
START = datetime(2025, 3, 10, 9, 0, tzinfo=UTC)


class Clock:
    """A fixed start that ticks one second per reading."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def registry() -> FormRegistry:
    return FormRegistry(EXAMPLES)


def catalog() -> dict[str, CompiledForm]:
    """Every example form by id, compiled (what personas know of labels and types)."""
    return {form.id: form for form in registry().forms()}


def new_service() -> FormService:
    ids = iter(range(1, 1_000_000))
    return FormService(
        registry(),
        InMemoryFormStore(),
        InProcessDispatcher(),
        clock=Clock(),
        new_id=lambda: f"fi_{next(ids):04d}",
        timer=time.monotonic,
        policy=CommitPolicy(backoff=jittered_backoff),
    )


def _unmeant(form: CompiledForm, coerced: Mapping[str, Any], said: Mapping[str, Any]) -> list[str]:
    """Coerced fields whose stored value differs (as its type reads both) from what was said."""
    unmeant = []
    for field_id, entry in coerced.items():
        if field_id not in said or field_id not in form.fields:
            continue
        ftype = form.fields[field_id].type
        meant, stored = ftype.validate(said[field_id]), ftype.validate(entry.get("stored"))
        both = isinstance(meant, Accepted) and isinstance(stored, Accepted)
        if not both or _typed(meant) != _typed(stored):
            unmeant.append(field_id)
    return unmeant


def _typed(outcome: object) -> object:
    return outcome.typed if isinstance(outcome, Accepted) else outcome


def canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def blankish(value: object) -> bool:
    """A value a model sends to mean "nothing": null, an empty string, or zero."""
    if value is None:
        return True
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return value == 0
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return True
        try:
            return Decimal(text) == 0
        except InvalidOperation:
            return False
    return False


@dataclass
class CallLog:
    turn: int
    round: int
    name: str
    args: JsonDict
    result: JsonDict
    fields_sent: int = 0
    blank_attempts: int = 0
    blank_landed: int = 0
    retry_of: str | None = None
    """The signature of the failure this call repeats, when it repeats one from this turn."""
    clobbered: list[str] = field(default_factory=list)
    """Fields whose answer in force was replaced by a different value although the user did not
    mention them in this turn (a write that landed on the wrong field)."""
    user_value: bool = False
    """Rejected entirely, and only for values exactly as the user gave them in this turn that the
    field's type rejects as given (the user's mistake, not the agent's)."""
    coerced: int = 0
    """Values the engine read from another encoding (``"yes"`` for true), per ``coerced``."""
    coerced_unmeant: list[str] = field(default_factory=list)
    """Fields whose coerced value is not what the user said for them in this turn."""

    @property
    def ok(self) -> bool:
        return bool(self.result.get("ok"))


@dataclass
class Transcript:
    scenario: Scenario
    agent: str
    calls: list[CallLog] = field(default_factory=list)
    messages: list[tuple[int, str]] = field(default_factory=list)
    status_per_round: list[tuple[int, str]] = field(default_factory=list)
    """(turn, status text) for every model call: what the system prompt carried."""
    snapshots: list[list[FormInstance]] = field(default_factory=list)
    """The conversation's instances after each user turn."""
    usage: list[Usage] = field(default_factory=list)
    round_cap_hits: int = 0
    calls_to_close: int | None = None
    rounds_to_close: int | None = None
    error: str | None = None

    def said(self, turn: int) -> str:
        return "\n".join(text for t, text in self.messages if t == turn)

    def instances(self, at: int | None = None) -> list[FormInstance]:
        if not self.snapshots:
            return []
        index = len(self.snapshots) - 1 if at is None else at
        if index >= len(self.snapshots):
            return []
        return self.snapshots[index]


def _values_sent(name: str, args: Mapping[str, Any]) -> dict[str, Any]:
    if name in ("form_start", "form_fill"):
        values = args.get("values")
        return dict(values) if isinstance(values, dict) else {}
    if name == "form_revise" and args.get("action") == "set" and isinstance(args.get("field"), str):
        return {args["field"]: args.get("value")}
    return {}


def _fields_sent(name: str, args: Mapping[str, Any]) -> int:
    if name == "form_revise":
        return 1
    return len(_values_sent(name, args))


class Cell:
    """One conversation: a scenario, an agent, a fresh service."""

    def __init__(self, scenario: Scenario, agent: Agent) -> None:
        self.scenario = scenario
        self.agent = agent
        self.service = new_service()
        self.caller = Caller("bench-user", f"conv-{scenario.id}")
        self.transcript = Transcript(scenario=scenario, agent=agent.name)
        self._calls = 0
        self._rounds = 0

    def run(self) -> Transcript:
        t = self.transcript
        for turn_index, turn in enumerate(self.scenario.turns):
            results: list[ToolResult] = []
            failures: set[str] = set()
            for round_ in range(MAX_ROUNDS):
                status = tuple(self.service.status(self.caller))
                t.status_per_round.append((turn_index, "\n".join(status)))
                self._rounds += 1
                try:
                    action = self.agent.act(Observation(status, tuple(results), turn, turn_index))
                except Exception as exc:  # a provider failure ends the cell, recorded
                    t.error = f"{type(exc).__name__}: {exc}"[:500]
                    break
                finally:
                    if isinstance(self.agent, MeteredAgent):
                        t.usage.extend(self.agent.take_usage())
                if isinstance(action, Message) or not action:
                    text = action.text if isinstance(action, Message) else ""
                    t.messages.append((turn_index, text))
                    break
                for call in action:
                    result = self._run_call(turn_index, round_, call, failures, turn)
                    results.append(ToolResult(call, result))
            else:
                t.round_cap_hits += 1
            t.snapshots.append(self.service.store.list_conversation(*self._conversation()))
            if t.error is not None:
                break
        return t

    def _conversation(self) -> tuple[str, str]:
        return self.caller.principal, self.caller.conversation_id

    def _instance(self, args: Mapping[str, Any]) -> tuple[CompiledForm, FormInstance] | None:
        """The instance a call addresses, as stored now (None when there is none yet)."""
        mine = self.service.store.list_conversation(*self._conversation())
        wanted = args.get("instance")
        try:
            form = self.service.registry.latest(str(args.get("form", "")))
        except Exception:
            return None
        for instance in reversed(mine):
            if (wanted and instance.id == wanted) or (not wanted and instance.form_id == form.id):
                return form, instance
        return None

    @staticmethod
    def _in_force(instance: FormInstance | None) -> dict[str, Any]:
        if instance is None:
            return {}
        out: dict[str, Any] = {}
        for field_id, history in instance.history.items():
            revision = history.in_force()
            if revision is not None and revision.kind == "value":
                out[field_id] = revision.value
        return out

    def _run_call(
        self, turn: int, round_: int, call: ToolCall, failures: set[str], user: UserTurn
    ) -> JsonDict:
        name, args, said = call.name, call.args, user.facts()
        self._calls += 1
        sent = _values_sent(name, args)
        located = self._instance(args) if sent else None
        before = self._in_force(located[1] if located else None)
        result = self.service.call(self.caller, name, f"call_{self._calls:04d}", args)
        log = CallLog(turn, round_, name, args, result, fields_sent=_fields_sent(name, args))
        if located is not None:
            form = located[0]
            now = self._instance(args)
            after = self._in_force(now[1] if now else None)
            for key, value in sent.items():
                field_id = form.resolve_field(key)
                if field_id is None:
                    continue
                changed = field_id in before and after.get(field_id) != before[field_id]
                if changed and field_id not in user.mentions():
                    log.clobbered.append(field_id)
                if not blankish(value):
                    continue
                if field_id in before and not blankish(before[field_id]):
                    log.blank_attempts += 1
                    if field_id in after and blankish(after[field_id]):
                        log.blank_landed += 1
        log.retry_of = self._repeat(name, args, result, sent, located, failures)
        log.user_value = self._users_mistake(result, sent, located, said)
        coerced = result.get("coerced") or {}
        log.coerced = len(coerced)
        if located is not None:
            log.coerced_unmeant = _unmeant(located[0], coerced, said)
        self.transcript.calls.append(log)
        if self.transcript.calls_to_close is None and self._closed():
            self.transcript.calls_to_close = self._calls
            self.transcript.rounds_to_close = self._rounds
        return result

    @staticmethod
    def _users_mistake(
        result: JsonDict,
        sent: Mapping[str, Any],
        located: tuple[CompiledForm, FormInstance] | None,
        said: Mapping[str, Any],
    ) -> bool:
        rejected = result.get("rejected", [])
        if result.get("ok") or located is None or result.get("unknown") or not rejected:
            return False
        form = located[0]
        by_field = {form.resolve_field(k): v for k, v in sent.items()}
        for rejection in rejected:
            field_id = str(rejection.get("field"))
            if field_id not in said or field_id not in by_field:
                return False
            value = by_field[field_id]
            if canonical(value) != canonical(said[field_id]):
                return False
            if isinstance(form.fields[field_id].type.validate(value), Accepted):
                return False
        return True

    def _closed(self) -> bool:
        return any(
            i.form_id == self.scenario.form and i.state.status != "open"
            for i in self.service.store.list_conversation(*self._conversation())
        )

    @staticmethod
    def _repeat(
        name: str,
        args: JsonDict,
        result: JsonDict,
        sent: Mapping[str, Any],
        located: tuple[CompiledForm, FormInstance] | None,
        failures: set[str],
    ) -> str | None:
        """Record this call's failures; return the earlier failure it repeats, if any."""
        form = located[0] if located else None

        def key_of(sent_key: str) -> str:
            resolved = form.resolve_field(sent_key) if form else None
            return resolved or f"?{sent_key}"

        signatures = [f"call {name} {canonical(args)}"]
        signatures += [f"value {key_of(k)}={canonical(v)}" for k, v in sent.items()]
        repeated = next((s for s in signatures if s in failures), None)
        if not result.get("ok"):
            failures.add(signatures[0])
        bad = {str(r.get("field")) for r in result.get("rejected", [])}
        bad |= {f"?{u.get('sent')}" for u in result.get("unknown", [])}
        for k, v in sent.items():
            if key_of(k) in bad or f"?{k}" in bad:
                failures.add(f"value {key_of(k)}={canonical(v)}")
        return repeated


def run_cell(scenario: Scenario, agent: Agent) -> Transcript:
    return Cell(scenario, agent).run()
