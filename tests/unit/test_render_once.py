"""A write call's result is rendered once, for the attempt whose write is made: an attempt
that loses its compare-and-set, or finds its call id taken, renders nothing (issue 25 item 4).

The counts: ``with_status_line`` (the status line the result carries, the costly part of a
result) and ``record_json`` (the record's text, what the store keeps; ``as_json``, the
model's copy of the result, counted apart), as the write tools call them, on an
in-memory store whose real compare-and-set a rival write beats ``lose`` times in a row.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest

from forms import Commit, FormDef, FormInstance, InMemoryFormStore, Step, field
from forms.app import calls, writes
from forms.app.conversation import Caller
from forms.errors import ConflictError
from forms.marked import replaced
from forms.surface.results import as_json, with_status_line
from tests.support import service_for


class Overtaking(InMemoryFormStore):
    """The in-memory store on which, before each of the next ``lose`` commits, a rival write
    lands on the same instance (a real commit), so the store's own compare-and-set refuses
    the commit it was handed (``ConflictError`` carrying the newer instance)."""

    def __init__(self) -> None:
        super().__init__()
        self.lose = 0
        self.commits: Counter[str] = Counter()

    def commit(self, commit: Commit) -> FormInstance:
        if self.lose and commit.call is not None:
            self.lose -= 1
            stored = self.get(commit.instance_id)
            later = replaced(stored.state, updated_at=stored.state.updated_at + timedelta(1))
            super().commit(
                Commit(instance_id=stored.id, expected_version=stored.version, state=later)
            )
            self.commits["rival"] += 1
        try:
            applied = super().commit(commit)
        except ConflictError:
            self.commits["lost"] += 1
            raise
        self.commits["made"] += 1
        return applied


class Trip(Step, title="Trip"):
    city: str = field("City")
    nights: int = field("Nights")


class Notes(Step, title="Notes"):
    note: str | None = field("Note")


TRIP = FormDef(id="trip", version=1, title="Trip", steps=[Trip, Notes])
CALLER = Caller("alice", "conv-1")


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """How many results the write tools rendered, and records they made, since the fixture."""
    counted: Counter[str] = Counter()

    def counting(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            counted[name] += 1
            return real(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(writes, "with_status_line", counting("result", with_status_line))
    # the record a store writes is its text (calls.record_json, one pass); the model's copy
    # of the result (as_json) is made only for a result JSON's own types cannot hold
    monkeypatch.setattr(calls, "record_json", counting("record", calls.record_json))
    monkeypatch.setattr(calls, "as_json", counting("model", as_json))
    yield counted


def started() -> tuple[Any, Overtaking]:
    store = Overtaking()
    service = service_for(TRIP, store=store)
    assert service.call(CALLER, "form_start", "c0", {"form": "trip"})["ok"]
    return service, store


@pytest.mark.parametrize("lose", [0, 1, 5, 30])
def test_a_fill_that_loses_n_races_renders_its_result_once(
    lose: int, renders: Counter[str]
) -> None:
    # GIVEN a started trip whose next commits a rival write beats, ``lose`` times
    service, store = started()
    renders.clear()
    store.lose = lose
    # WHEN a fill is sent
    sent = {"form": "trip", "values": {"city": "Lisbon"}}
    result = service.call(CALLER, "form_fill", "c1", sent)
    # THEN it planned and tried ``lose + 1`` times and landed the last
    assert result["ok"] is True, result
    assert store.commits == Counter({"rival": lose, "lost": lose, "made": 1})
    # AND its result was rendered once, and its record made once, whatever it lost
    assert renders == Counter({"result": 1, "record": 1})
    # AND the record holds that one result: a retry of the id answers it, from the store
    renders.clear()
    again = service.call(CALLER, "form_fill", "c1", sent)
    assert again == {**result, "replayed": True}
    recorded = store.get_call("alice", "conv-1", "c1")
    assert recorded is not None and recorded.result == result
    # AND the retry, whose plan the store refused (the id is taken), rendered nothing of it
    assert renders["result"] == 0 and renders["record"] == 0


def test_each_write_tool_renders_once_under_conflicts(renders: Counter[str]) -> None:
    # GIVEN a started trip and a store that loses three races before each write
    service, store = started()
    calls_sent = [
        ("form_fill", {"form": "trip", "values": {"city": "Porto"}, "submit": True}),
        ("form_revise", {"form": "trip", "field": "city", "action": "set", "value": "Faro"}),
        ("form_revise", {"form": "trip", "field": "city", "action": "retract"}),
        ("form_abandon", {"form": "trip", "reason": "plans changed"}),
        ("form_fill", {"form": "other", "values": {"city": "Porto"}}),  # refused: recorded alone
    ]
    for n, (tool, sent) in enumerate(calls_sent, start=1):
        renders.clear()
        store.lose, store.commits = 3, Counter()
        # WHEN each call is sent
        result = service.call(CALLER, tool, f"w{n}", sent)
        # THEN it lands after three lost races, its result rendered once (a refusal plans
        # nothing, so it races nothing: its answer is recorded on its own)
        if n == len(calls_sent):
            assert result["error"] == "unknown_form" and store.commits == Counter(), result
            assert renders == Counter({"model": 1})  # its record made whole, once
            continue
        assert result["ok"] is True, (tool, result)
        assert store.commits["lost"] == 3 and store.commits["made"] == 1, tool
        assert renders == Counter({"result": 1, "record": 1}), tool
    assert "not_submitted" in service.call(CALLER, "form_fill", "w1", calls_sent[0][1])


def test_a_call_that_changes_nothing_renders_once_and_is_recorded_alone(
    renders: Counter[str],
) -> None:
    # GIVEN a trip with a city saved
    service, _ = started()
    assert service.call(CALLER, "form_fill", "c1", {"form": "trip", "values": {"city": "Rome"}})[
        "ok"
    ]
    renders.clear()
    # WHEN the same value is sent again (nothing to commit)
    sent = {"form": "trip", "values": {"city": "Rome"}}
    result = service.call(CALLER, "form_fill", "c2", sent)
    # THEN its result is rendered once and recorded on its own
    assert result["ok"] is True
    assert renders == Counter({"result": 1, "record": 1})
    assert service.call(CALLER, "form_fill", "c2", sent) == {**result, "replayed": True}
