"""One commit loop for every aggregate (``forms.app.loop.CommitPolicy``): an instance write, a
draft edit and a fact write ask their stores for the same requests, counted on wrappers over
the in-memory adapters.

The pattern: a call reads what it plans on once and writes once (the call's record in the
same write); a lost race costs one more write and no read (the conflict carries what is
stored now); a call sent again under its id reads once and is answered from the record, never
applied twice. Memory's switch (``settings``) is the deployment's configuration, not the
aggregate, and is counted apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from forms import Caller, FormDef, InMemoryFormStore, Step, field
from forms.app.catalog import Catalog
from forms.app.loop import CommitPolicy
from forms.errors import Conflict
from forms.examples.travel_claim import travel_claim
from forms.memory import DecayPolicy, Vocabulary
from forms.registry import FormRegistry
from forms.storage.documents import InMemoryFormDocumentStore
from forms.storage.drafts import InMemoryDraftStore
from forms.storage.facts import InMemoryFactStore
from tests.support import T0, TickingClock, builder_for, memory_api_for, service_for

INSTANCE_READS = {"get", "list_conversation", "get_call"}
INSTANCE_WRITES = {"create", "commit", "hand_over", "record_call"}
DRAFT_READS = {"get", "history", "list_drafts", "get_call"}
DRAFT_WRITES = {"commit", "record_call"}
FACT_READS = {"head", "heads", "current", "get", "history", "export"}
FACT_WRITES = {"append", "put_settings"}
SWITCH = {"settings"}


def counting(adapter: type[Any], reads: set[str], writes: set[str], races: str) -> Any:
    """``adapter`` counting what its callers ask (``asked``: ``read``, ``write`` or ``switch``,
    outermost calls only) and letting another writer land first before each of the next
    ``rivals`` calls of ``races`` (``rival``, run uncounted)."""

    def wrapped(name: str, kind: str) -> Callable[..., Any]:
        inner = getattr(adapter, name)

        def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            outermost = self.depth == 0
            if outermost:
                self.asked.append(kind)
            self.depth += 1
            try:
                if outermost and name == races and self.rivals:
                    self.rivals -= 1
                    self.rival()
                return inner(self, *args, **kwargs)
            finally:
                self.depth -= 1

        return method

    def setup(self: Any) -> None:
        adapter.__init__(self)
        self.asked, self.depth, self.rivals = [], 0, 0
        self.rival = lambda: None

    kinds = {**{n: "read" for n in reads}, **{n: "write" for n in writes}}
    kinds.update({n: "switch" for n in SWITCH if n in dir(adapter)})
    members: dict[str, Any] = {n: wrapped(n, kind) for n, kind in kinds.items()}
    return type(f"Counting{adapter.__name__}", (adapter,), {**members, "__init__": setup})


def take(store: Any) -> dict[str, int]:
    """What ``store`` was asked since the last take, by kind (the switch left out)."""
    asked, store.asked = store.asked, []
    return {kind: asked.count(kind) for kind in ("read", "write")}


# ---------------------------------------------------------------------------- the three


class Order(Step, title="Order"):
    item: str | None = field("Item")
    note: str | None = field("Note")


ORDER = FormDef(id="order", version=1, title="Order", steps=[Order])
ALICE = Caller("alice", "conv-1")


class Instances:
    """Writes of an order's item; the rival fills its note."""

    def __init__(self) -> None:
        self.store: Any = counting(InMemoryFormStore, INSTANCE_READS, INSTANCE_WRITES, "commit")()
        self.service = service_for(ORDER, store=self.store)
        assert self.service.call(ALICE, "form_start", "start", {"form": "order"})["ok"]
        rivals = iter(range(1_000))
        self.store.rival = lambda: self.service.call(ALICE, "form_fill", *_noted(next(rivals)))

    def write(self, call_id: str, value: str) -> dict[str, Any]:
        payload = {"form": "order", "values": {"item": value}}
        return self.service.call(ALICE, "form_fill", call_id, payload)


class Drafts:
    """Fields added to a draft; the rival adds one too."""

    def __init__(self) -> None:
        self.store: Any = counting(InMemoryDraftStore, DRAFT_READS, DRAFT_WRITES, "commit")()
        catalog = Catalog(FormRegistry([travel_claim]), InMemoryFormDocumentStore(), timer=float)
        self.builder = builder_for(self.store, catalog, clock=TickingClock(T0))
        create = {"title": "Contact us"}
        created = self.builder.call("acme/ana", "contact-us", "create_form", "c0", create, chat="a")
        assert created["ok"], created
        rivals = iter(range(1_000))
        self.store.rival = lambda: self.builder.call(
            "acme/ana", "contact-us", "add_field", f"rival-{next(rivals)}", _field("R"), chat="b"
        )

    def write(self, call_id: str, value: str) -> dict[str, Any]:
        return self.builder.call(
            "acme/ana", "contact-us", "add_field", call_id, _field(value), chat="a"
        )


class Facts:
    """Alice's weight stated; the rival states it from another device."""

    def __init__(self) -> None:
        self.store: Any = counting(InMemoryFactStore, FACT_READS, FACT_WRITES, "append")()
        vocabulary, decay = Vocabulary.default(), DecayPolicy.default()
        self.memory = memory_api_for(self.store, vocabulary, decay, True, TickingClock(T0))
        self.store.rival = lambda: self.memory.state("acme/alice", "person.weight_kg", value=90)

    def write(self, call_id: str, value: str) -> Any:
        # the idempotency key a page's post carries: kept in the same write, refused again
        return self.memory.state("acme/alice", "person.weight_kg", value=int(value), replay=call_id)


def _noted(n: int) -> tuple[str, dict[str, Any]]:
    return f"rival-{n}", {"form": "order", "values": {"note": f"rival {n}"}}


def _field(label: str) -> dict[str, Any]:
    return {"field": {"kind": "short_text", "label": label}}


AGGREGATES: dict[str, Callable[[], Instances | Drafts | Facts]] = {
    "instance": Instances,
    "draft": Drafts,
    "fact": Facts,
}


def landed(outcome: Any) -> bool:
    """Whether a write landed: an ``ok`` result, or a fact ``Written``."""
    return bool(outcome["ok"]) if isinstance(outcome, dict) else outcome is not None


@pytest.mark.parametrize("aggregate", list(AGGREGATES))
def test_a_call_reads_once_and_writes_once(aggregate: str) -> None:
    # GIVEN an instance, a draft and a fact key, each written once before
    made = AGGREGATES[aggregate]()
    assert landed(made.write("w1", "70"))
    take(made.store)
    # WHEN a call writes it
    assert landed(made.write("w2", "71"))
    # THEN it read once, and wrote once
    assert take(made.store) == {"read": 1, "write": 1}


@pytest.mark.parametrize("aggregate", list(AGGREGATES))
def test_each_lost_race_costs_one_write_and_no_read(aggregate: str) -> None:
    # GIVEN another writer that lands first, twice
    made = AGGREGATES[aggregate]()
    assert landed(made.write("w1", "70"))
    made.store.rivals = 2
    take(made.store)
    # WHEN a call writes
    assert landed(made.write("w2", "71"))
    # THEN it was planned again on what each conflict carried: one write per attempt, one read
    assert take(made.store) == {"read": 1, "write": 3}


@pytest.mark.parametrize("aggregate", list(AGGREGATES))
def test_a_call_sent_again_reads_once_and_its_write_is_refused(aggregate: str) -> None:
    # GIVEN a call that landed
    made = AGGREGATES[aggregate]()
    first = made.write("w1", "70")
    assert landed(first)
    take(made.store)
    # WHEN it is sent again under its id
    again = made.write("w1", "70")
    # THEN the store refused its write (the id is recorded) and nothing was applied twice:
    # the first result came back (a fact's use case answers None: applied already)
    assert again == ({**first, "replayed": True} if isinstance(first, dict) else None)
    assert take(made.store) == {"read": 1, "write": 1}


@pytest.mark.parametrize("aggregate", list(AGGREGATES))
def test_one_policy_bounds_every_loop(aggregate: str) -> None:
    # GIVEN one policy: two attempts, whatever the conflicts, waits noted
    waits: list[int] = []
    policy = CommitPolicy.counted(2, waits.append)
    made = AGGREGATES[aggregate]()
    assert landed(made.write("w1", "70"))
    if isinstance(made, Instances):
        made.service.loop.policy = policy
    elif isinstance(made, Drafts):
        made.builder.policy = policy
    else:
        made.memory = replace(made.memory, commits=policy)
    # AND another writer that always lands first
    made.store.rivals = 1_000
    take(made.store)
    # WHEN a call writes
    outcome: Any
    try:
        outcome = made.write("w2", "71")
    except Exception as raised:  # memory's use case raises its refusals
        outcome = raised
    # THEN it tried twice, waited once, and answered busy
    assert take(made.store)["write"] == 2 and waits == [1]
    code = outcome["error"] if isinstance(outcome, dict) else getattr(outcome, "code", None)
    assert code == "busy"


def test_the_conflict_is_one_type_whatever_the_store() -> None:
    from forms.errors import ConflictError
    from forms.memory import FactConflict
    from forms.storage.drafts import DraftConflict

    assert ConflictError is DraftConflict is FactConflict is Conflict


def test_a_start_with_memory_is_one_write() -> None:
    # GIVEN alice's memory (a date of birth, a height, a weight) and a form that recalls them
    from forms.examples import health_check
    from tests.unit.memory_for_tests import RecordingFacts, alice_said, memory_service

    store = counting(InMemoryFormStore, INSTANCE_READS, INSTANCE_WRITES, "commit")()
    service = memory_service(health_check, facts=alice_said(RecordingFacts()), store=store)
    # WHEN the form starts
    result = service.call(ALICE, "form_start", "s1", {"form": "health-check"})
    # THEN the conversation was read once, and the start, what memory filled and offered, and
    # the call's record were one write
    assert result["ok"] and "memory" in result["summary"], result
    assert take(store) == {"read": 1, "write": 1}
    assert store.get("fi_1").state.recalled
