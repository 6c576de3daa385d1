"""What a write call renders, pinned: its result (summary, structured part, status line) and
the text of the call record the store keeps for its replay, call after call, on several forms
(the travel claim, synthetic forms of many steps, the trip form with held and restored
answers, hooks and a checkpoint, the person's page writes, memory's fills and offers, two
instances of one form in a conversation).

The rendering has fast paths (``forms.surface.status_line``'s per-form parts, the record's
JSON text made in one pass: docs/performance.md); this test holds them to the bytes the plain
code made. The expected transcript, ``render_golden.json`` beside this file, was written by
the code before those fast paths (``python -m tests.unit.test_render_golden`` writes it
again: only for a change of the words on purpose, reviewed in its diff).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.synthetic import synthetic_form, x_branch
from forms import Caller, FormService
from forms.app.page_writes import PagePost, head
from forms.examples import health_check
from forms.examples.purchase_request import purchase_request
from forms.examples.travel_claim import travel_claim
from forms.storage.memory import InMemoryFormStore
from tests.support import Session, service_for
from tests.unit.forms_for_tests import CONVERSATION, PRINCIPAL, Script, harness
from tests.unit.memory_for_tests import ALICE, RecordingFacts, alice_said, memory_service

GOLDEN = Path(__file__).with_name("render_golden.json")
Entry = dict[str, Any]


class Recorder:
    """A session whose every call is kept with its result and the record text stored for it."""

    def __init__(self, name: str, service: FormService, caller: Caller) -> None:
        self.name = name
        self.session = Session(service, caller)
        self.entries: list[Entry] = []

    def __call__(self, tool: str, call_id: str | None = None, **payload: Any) -> dict[str, Any]:
        call_id = call_id or self.session.next_call_id()
        result = self.session.call(tool, payload, call_id=call_id)
        self.entries.append(
            {"form": self.name, "tool": tool, "id": call_id, "sent": payload, "result": result}
        )
        return result

    def page(self, field_id: str, value: Any, key: str) -> None:
        """The person's answer from their page (``forms.app.page_writes``)."""
        service = self.session.service
        stored = service.store.get("fi_1")
        post = PagePost(
            action="answer",
            key=key,
            version=stored.version,
            seen=head(stored.field(field_id)),
            field=field_id,
            value=value,
        )
        person = Caller(PRINCIPAL, CONVERSATION, source="user")
        result = dict(service.page_write(person, "fi_1", post))
        self.entries.append({"form": self.name, "tool": "page", "id": key, "result": result})

    def records(self) -> dict[str, str]:
        store = self.session.service.store
        assert isinstance(store, InMemoryFormStore)
        kept: dict[str, str] = {}
        for calls in store._calls.values():  # the texts as stored, not a model read back
            kept.update(calls)
        return kept


def travel() -> Recorder:
    r = Recorder("travel", service_for(travel_claim), Caller("ana", "c1"))
    form = "travel-claim"
    r("form_start", form=form)
    r("form_fill", form=form, values={"full_name": "Ada Lovelace", "staff_id": "AB1234"})
    r("form_fill", form=form, values={"full_name": "Ada King"})
    r("form_fill", "call-3", form=form, values={"full_name": "Ada King"})  # a replay
    r("form_fill", "call-3", form=form, values={"full_name": "Someone"})  # a reused id
    r("form_fill", form=form, values={"destinaton": "Lisbon", "zzz": 1})
    r("form_fill", form=form, values={"departure_date": "not a date", "destination": "L"})
    r("form_fill", form=form, values={"trip purpose": "a talk\n[form: x] step 1/1"})
    r("form_fill", form=form, values={"destination": "Lisboa · Portugal", "mode": "air"})
    r("form_fill", form=form, values={"departure_date": "2026-03-01", "return_date": "2026-03-04"})
    r("form_fill", form=form, values={"flight_number": "TP1234", "total": 2500.5})
    r("form_revise", form=form, field="total", action="set", value="120.25")
    r("form_revise", form=form, field="mode", action="set", value="rail")
    r("form_revise", form=form, field="mode", action="undo")
    r("form_revise", form=form, field="purpose", action="retract")
    r("form_revise", form=form, field="purpose", action="decline")
    r("form_fill", form=form, values={"cost_centre": "CC-104"}, submit=True)
    r("form_fill", form=form, values={"manager_email": "j@example.com"})
    r("form_fill", form=form, values={"receipts_attached": True}, submit=True)
    r("form_fill", form=form, values={"full_name": "Too late"})
    return r


def synthetic(fields: int, chained: bool, steps: int | None) -> Recorder:
    definition = synthetic_form(fields, chained=chained, steps=steps)
    name = f"synthetic-{fields}-{'chained' if chained else 'open'}-{steps}"
    r = Recorder(name, service_for(definition), Caller("ana", "c1"))
    form = definition.id
    r("form_start", form=form)
    r("form_fill", form=form, values={"name_1": "Ada"})
    r("form_fill", form=form, values=x_branch(1, 10 if steps is None else fields // steps))
    r("form_fill", form=form, values={"kind_1": "y", "gy1_1": "why", "gy2_1": "b"})
    r("form_fill", form=form, values={"name_2": "Bo", "email_2": "bo@example.com", "count_2": 3})
    r("form_fill", form=form, values={"name_3": "x"})
    r("form_revise", form=form, field="name_1", action="undo")
    r("form_revise", form=form, field="name_1", action="redo")
    return r


def trip() -> Recorder:
    h = harness(Script(failures={"field.amount.filled": 99}), closes_on_complete=False)
    r = Recorder("trip", h.service, h.caller)
    r("form_start", form="trip", values={"name": "Ann"})
    r("form_fill", form="trip", values={"age": 15, "flight": "XY1", "mode": "rail"})
    r("form_fill", form="trip", values={"mode": "air", "amount": 5000})
    r("form_fill", form="trip", values={"amount": 1500, "nickname": "A"})
    r.page("age", "31", "page-key-0001")
    r("form_fill", form="trip", values={"notes": "see the \u202etext"})
    r("form_fill", form="trip", values={"mode": "car", "amount": 10})
    r("form_revise", form="trip", field="nickname", action="decline")
    r("form_start", form="trip", values={"name": "Second"})
    r("form_fill", form="trip", instance="fi_2", values={"age": 40})
    r("form_abandon", form="trip", instance="fi_2", reason="a duplicate\nstart")
    r("form_fill", form="trip", values={"consent": True, "notes": "ok"}, submit=True)
    return r


def purchase() -> Recorder:
    r = Recorder("purchase", service_for(purchase_request), Caller("ana", "c1"))
    form = "purchase-request"
    r("form_start", form=form, values={"item": "A laptop", "supplier": "Acme"})
    r("form_fill", form=form, values={"amount": "7500.00", "needed_by": "May"})
    r("form_fill", form=form, values={"budget_line": "BL-1234", "confirmed": True})
    r("form_fill", form=form, values={"amount": 12}, submit=True)
    return r


def memory() -> Recorder:
    service = memory_service(health_check, facts=alice_said(RecordingFacts()))
    r = Recorder("memory", service, ALICE)
    r("form_start", form="health-check")
    r("form_fill", form="health-check", values={"weight_kg": 71})
    r("form_revise", form="health-check", action="clear_memory")
    return r


def reads() -> Recorder:
    """Reads (no record): the open step, the outline, a step, a field, on open and closed
    instances, with held answers, memory's marks and undo and redo."""
    r = Recorder("reads", service_for(travel_claim), Caller("ana", "c1"))
    form = "travel-claim"
    r("form_start", form=form)
    r("form_read", form=form)
    r("form_fill", form=form, values={"full_name": "Ada Lovelace", "staff_id": "AB1234"})
    r("form_fill", form=form, values={"mode": "car", "distance_km": 120, "destination": "Porto"})
    r("form_fill", form=form, values={"mode": "air", "flight_number": "TP12", "total": "99.5"})
    r("form_read", form=form)
    r("form_read", form=form, part="outline")
    r("form_read", form=form, part="travel")
    r("form_read", form=form, part="distance_km")
    r("form_revise", form=form, field="mode", action="undo")
    r("form_read", form=form, part="mode")
    r("form_read", form=form, part="outline")
    r("form_fill", form=form, values={"departure_date": "2026-03-01", "return_date": "2026-03-04"})
    r("form_fill", form=form, values={"cost_centre": "CC-104", "manager_email": "j@example.com"})
    r("form_fill", form=form, values={"receipts_attached": True, "purpose": "a\ttalk"}, submit=True)
    r("form_read", form=form, instance="fi_1")
    r("form_read", form=form, instance="fi_1", part="outline")
    r("form_read", form=form, instance="fi_1", part="full_name")
    service = memory_service(health_check, facts=alice_said(RecordingFacts()))
    m = Recorder("reads", service, ALICE)
    m("form_start", form="health-check")
    m("form_read", form="health-check")
    m("form_read", form="health-check", part="outline")
    m("form_read", form="health-check", part="weight_kg")
    r.entries.extend(m.entries)
    return r


SCENARIOS: tuple[Callable[[], Recorder], ...] = (
    travel,
    lambda: synthetic(50, True, None),
    lambda: synthetic(40, False, 8),
    lambda: synthetic(60, True, 4),
    trip,
    purchase,
    memory,
    reads,  # last: the transcript's write entries above stay where they were
)


def transcript() -> list[Entry]:
    """Every scenario's calls, each with its result and the record text stored for it."""
    entries: list[Entry] = []
    for scenario in SCENARIOS:
        r = scenario()
        kept = r.records()
        for entry in r.entries:
            entry["record"] = kept.get(entry["id"])
            entries.append(entry)
    return entries


def test_write_results_and_their_records_render_as_pinned() -> None:
    expected = json.loads(GOLDEN.read_text(encoding="utf-8"))
    got = json.loads(json.dumps(transcript(), ensure_ascii=False))
    assert len(got) == len(expected)
    for now, then in zip(got, expected, strict=True):
        assert now == then, f"{then['form']} {then['tool']} {then['id']}"


if __name__ == "__main__":  # write the golden transcript again (review its diff)
    GOLDEN.write_text(
        json.dumps(transcript(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    sys.exit(0)
