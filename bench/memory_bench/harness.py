"""One case played in process: its facts set up, one ``form_start`` measured, and what became
of every field that declares a fact key.

Each case gets a fresh ``FormService`` over an in-memory form store, with memory
(``forms.app.memory.Memory``, its default deadline and decay policy) on a fresh in-memory
fact store that records its requests (``virtual.BenchFacts``). The service's clock ticks a
second per reading and is set to each setup event's time, then to ``model.START`` for the
measured start; instance ids are ``fi_0001``, ``fi_0002``, ...; memory's timer and executor
are virtual (``virtual``), so a slow store costs exactly what memory lets it cost, on the
timer. Nothing here reads the wall clock, so every run is the same.

Facts are set up the way the fact API does it (``functions/memory_routes.py``): the key's head
read, the revision planned by ``forms.memory`` (``plan_statement``, ``plan_confirmation``,
``plan_deletion``) and appended; earlier conversations go through the service itself, so
what memory remembers from answers is what it remembered, not what the bench assumed.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from bench.memory_bench.forms import FORMS
from bench.memory_bench.model import (
    START,
    Answered,
    Case,
    Confirmed,
    Deleted,
    Event,
    Raced,
    Said,
    Start,
    Store,
    Switched,
)
from bench.memory_bench.virtual import BenchFacts, VirtualExecutor, VirtualTimer
from forms import Caller, Commit, FormInstance, FormRegistry, FormService, InMemoryFormStore
from forms.app.hooks import InProcessDispatcher
from forms.app.loop import CommitPolicy
from forms.app.memory import DEFAULT_DEADLINE, Memory
from forms.app.reads import form_read
from forms.compiled import CompiledForm
from forms.compiler import compile_form
from forms.instance import NewCall, Recollection
from forms.memory import (
    DecayPolicy,
    FactHistory,
    FactRevision,
    MemorySettings,
    Refusal,
    Source,
    Statement,
    Vocabulary,
    plan_confirmation,
    plan_deletion,
    plan_statement,
)
from forms.surface.tools import FormReadArgs

DEADLINE = DEFAULT_DEADLINE
"""Memory's deadline on the store: the shipped default."""
CONVERSATION = "conv-now"
"""The measured start's conversation."""
API = Source(kind="api", ref="memory-bench")

COMPILED: Mapping[str, CompiledForm] = {form.id: compile_form(form) for form in FORMS}


class Clock:
    """The service's clock: one second later at each reading, from where it was last set."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


class BenchStore(InMemoryFormStore):
    """The in-memory form store, keeping memory's commits (those that carry no call) and
    running ``then`` once, right after an instance is created: the user's call landing
    right after the start's one write (memory makes no commit of its own at a start, so
    ``memory_commits`` stays empty)."""

    def __init__(self) -> None:
        super().__init__()
        self.then: Callable[[], object] | None = None
        self.memory_commits: list[int] = []

    def create(self, instance: FormInstance, call: NewCall | None = None) -> None:
        super().create(instance, call)
        then, self.then = self.then, None
        if then is not None:
            then()

    def commit(self, commit: Commit) -> FormInstance:
        if commit.call is None:
            self.memory_commits.append(commit.expected_version)
        return super().commit(commit)


@dataclass(frozen=True, slots=True)
class Seen:
    """What became of one field that declares a fact key: the values memory wrote into its
    log, the answer in force and who gave it, what memory recorded doing there (while it still
    stands), and the ``memory`` entry of the field's row in ``form_read``."""

    field_id: str
    written: tuple[Any, ...]
    answer: Any
    answered_by: str | None
    recalled: Recollection | None
    mark: str | None


@dataclass(frozen=True, slots=True)
class Outcome:
    """A case played: the start's result and what it did, field by field."""

    case: Case
    result: dict[str, Any]
    fields: Mapping[str, Seen]
    requests: tuple[tuple[str, str], ...]
    """Every fact-store request the start made, with whose memory it asked."""
    held: float
    """Seconds the start took on memory's timer: all of it is memory's (nothing else waits)."""
    budget: float
    """Seconds memory may hold it: its deadline, once, to read (recording answers never
    waits)."""
    counted: tuple[str, ...]
    """Memory's metrics counted during the start."""
    memory_commits: tuple[int, ...]
    """The version each of memory's commits expected: more than one means it lost a race and
    planned again on what the user wrote."""
    read: str
    """Everything the agent read of the start: its result and the ``form_read`` of each step."""
    kept: tuple[Any, ...]
    """Every value the fact store holds for the case's principals, in any revision."""
    true_on: tuple[Any, ...]
    """For each of ``case.true_on``, the value the history says was true then (None: none)."""
    setup: tuple[str, ...]
    """What went otherwise than the case said while setting it up."""
    later: Mapping[str, Seen]
    """The same fields after the agent's next call on the form (a ``form_read``, the fact
    store answering at once by then): what a recall that came late delivered."""
    due: tuple[str, ...]
    """The fields the same case fills or offers when its store answers at once: what memory
    owes this start, in time or later (empty when not measured: see ``play``; and for a store
    that fails, which answered nothing late: nothing is owed)."""

    @property
    def form(self) -> CompiledForm:
        return COMPILED[self.case.start.form]

    @property
    def ok(self) -> bool:
        return self.result.get("ok") is True and "error" not in self.result


def play(case: Case, *, policy: DecayPolicy | None = None, twin: bool = True) -> Outcome:
    """``case`` on a fresh service and stores; ``policy``: a decay policy other than
    Formwork's (the tests use a careless one, to see the graders catch it). ``twin``: also
    play it once on a store that answers at once, to know what memory owes the start
    (``Outcome.due``)."""
    timer = VirtualTimer()
    facts = BenchFacts(timer)
    store = BenchStore()
    clock = Clock(START)
    counted: list[str] = []
    ids = itertools.count(1)
    memory = Memory(
        facts,
        policy=policy,
        deadline=DEADLINE,
        timer=timer,
        executor=VirtualExecutor(timer),
        count=counted.append,
    )
    service = FormService(
        FormRegistry(FORMS),
        store,
        InProcessDispatcher(),
        clock=clock,
        new_id=lambda: f"fi_{next(ids):04d}",
        timer=timer,
        policy=CommitPolicy(),  # no wait between attempts
        memory=memory if case.memory else None,
    )
    setup = [
        problem
        for n, event in enumerate(case.facts)
        for problem in _set_up(service, facts, clock, event, n)
    ]

    start = case.start
    caller = Caller(start.who, CONVERSATION, source=start.source)
    raced: list[dict[str, Any]] = []
    if start.race is not None:
        race = start.race
        racing = {"form": start.form, **race.payload}
        store.then = lambda: raced.append(service.call(caller, race.tool, "call-race", racing))
    clock.now = START
    facts.requests.clear()
    counted.clear()
    store.memory_commits.clear()
    facts.latency, facts.fails = case.store.latency, case.store.fails
    before = timer.now
    payload = {"form": start.form, **({"values": dict(start.values)} if start.values else {})}
    result = service.call(caller, "form_start", "call-start", payload)
    held = timer.now - before
    if start.race is not None and [r.get("ok") for r in raced] != [True]:
        setup.append(f"the racing {start.race.tool} did not land: {raced}")
    facts.latency, facts.fails = 0.0, frozenset()
    requests = tuple(facts.requests)
    made = tuple(counted)

    fields, later, reads = _looked(service, caller, start, result)
    due: tuple[str, ...] = ()
    if twin and case.memory and not case.off and not case.store.fails:
        fast = play(replace(case, store=Store()), policy=policy, twin=False)
        due = tuple(
            f for f, seen in fast.fields.items() if seen.answered_by == "memory" or _offer(seen)
        )
    principals = sorted({start.who, *(event.who for event in case.facts)} - {""})
    kept = tuple(r.value for p in principals for r in facts.export(p) if r.value is not None)
    return Outcome(
        case=case,
        result=result,
        fields=fields,
        requests=requests,
        held=held,
        budget=DEADLINE.total_seconds(),
        counted=made,
        memory_commits=tuple(store.memory_commits),
        read=json.dumps(reads, ensure_ascii=False, default=str),
        kept=kept,
        true_on=tuple(_true_on(facts, start.who, check.key, check.at) for check in case.true_on),
        setup=tuple(setup),
        later=later,
        due=due,
    )


def _looked(
    service: FormService, caller: Caller, start: Start, result: dict[str, Any]
) -> tuple[dict[str, Seen], dict[str, Seen], list[dict[str, Any]]]:
    """What the start left in each field that declares a fact key, read as the agent would
    read it but by the read tool itself (a tool call would be the agent's next call, and
    deliver what memory owes); the same fields after that next call (a ``form_read``); and
    everything the agent read."""
    form = COMPILED[start.form]
    instance_id = result.get("instance")
    reads = [result]
    if not isinstance(instance_id, str):
        return {}, {}, reads
    store = service.store
    instance = store.get(instance_id)
    rows: dict[str, dict[str, Any]] = {}
    for step in form.steps:
        args = FormReadArgs(form=start.form, instance=instance_id, part=step)
        shown = form_read(service.loop, caller, args)
        reads.append(shown)
        rows |= {row["id"]: row for row in shown.get("fields", ())}
    fields = {f: _seen(instance, f, rows.get(f, {})) for f in form.memory_fields}
    nxt = {"form": start.form, "instance": instance_id}
    reads.append(service.call(caller, "form_read", "call-next", nxt))
    after = store.get(instance_id)
    return fields, {f: _seen(after, f, {}) for f in form.memory_fields}, reads


def _offer(seen: Seen) -> bool:
    return seen.recalled is not None and seen.recalled.use == "offer"


def _seen(instance: FormInstance, field_id: str, row: Mapping[str, Any]) -> Seen:
    history = instance.field(field_id)
    in_force = history.in_force()
    recalled = instance.state.recalled.get(field_id)
    return Seen(
        field_id=field_id,
        written=tuple(r.value for r in history.revisions if r.by == "memory"),
        answer=in_force.value if in_force is not None and in_force.kind == "value" else None,
        answered_by=in_force.by if in_force is not None and in_force.kind == "value" else None,
        recalled=recalled if recalled is not None and recalled.stands(history) else None,
        mark=row.get("memory"),
    )


def _true_on(facts: BenchFacts, principal: str, key: str, at: datetime) -> Any:
    held = facts.head(principal, key)
    if held is None:
        return None
    fact = FactHistory(facts.history(principal, key)).valid_at(at)
    return fact.value if fact is not None else None


# ---------------------------------------------------------------- setting up


def _set_up(
    service: FormService, facts: BenchFacts, clock: Clock, event: Event, n: int
) -> list[str]:
    """Put ``event`` in place; what went otherwise than it said."""
    vocabulary = Vocabulary.default()
    if isinstance(event, Switched):
        facts.put_settings(event.who, MemorySettings(enabled=event.enabled, changed_at=event.at))
        return []
    if isinstance(event, Answered):
        return _answered(service, clock, event, n)
    if isinstance(event, Raced):
        return _raced(service, clock, event, n)
    head = facts.head(event.who, event.key)
    planned: FactRevision | Refusal
    if isinstance(event, Said):
        statement = Statement(
            key=event.key,
            value=event.value,
            words=event.words,
            source=API,
            stated_at=event.at,
            valid_from=event.valid_from,
            valid_until=event.valid_until,
            correction=event.correction,
        )
        planned = plan_statement(statement, head, vocabulary=vocabulary, now=event.at)
        refused = event.refused
    elif isinstance(event, Confirmed):
        planned, refused = plan_confirmation(head, source=API, now=event.at), None
    else:
        assert isinstance(event, Deleted)
        planned, refused = plan_deletion(head, source=API, now=event.at), None
    if isinstance(planned, Refusal):
        if planned.code == refused:
            return []
        return [f"event {n} ({event.key}) refused: {planned.code}: {planned.message}"]
    if refused is not None:
        return [f"event {n} ({event.key}) was not refused {refused}: {planned.change}"]
    facts.append(event.who, planned)
    return []


def _answered(service: FormService, clock: Clock, event: Answered, n: int) -> list[str]:
    caller = Caller(event.who, f"conv-earlier-{n}")
    clock.now = event.at
    started = service.call(caller, "form_start", f"setup-{n}-start", {"form": event.form})
    filled = service.call(
        caller,
        "form_fill",
        f"setup-{n}-fill",
        {"form": event.form, "instance": started.get("instance"), "values": dict(event.values)},
    )
    return [
        f"event {n} ({call}): {result.get('error')}: {result.get('message')}"
        for call, result in (("form_start", started), ("form_fill", filled))
        if result.get("ok") is not True
    ]


def _raced(service: FormService, clock: Clock, event: Raced, n: int) -> list[str]:
    caller = Caller(event.who, f"conv-earlier-{n}")
    clock.now = event.at
    store = service.store
    assert isinstance(store, BenchStore)
    raced: list[dict[str, Any]] = []
    answer = {"form": event.form, "values": dict(event.answer)}
    store.then = lambda: raced.append(service.call(caller, "form_fill", f"setup-{n}-race", answer))
    started = service.call(
        caller, "form_start", f"setup-{n}-start", {"form": event.form, "values": dict(event.values)}
    )
    return [
        f"event {n} ({call}): {result.get('error')}: {result.get('message')}"
        for call, result in (("form_start", started), *(("form_fill", r) for r in raced))
        if result.get("ok") is not True
    ] + ([] if raced else [f"event {n}: the racing answer did not land"])
