"""Tool-call ids: each is answered once per conversation, whatever its outcome, for a bounded
time, and a retry gets the first result whole (with the status as it stands now)."""

from __future__ import annotations

import hashlib
import importlib
import json
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forms import Caller, FormService
from forms.app import calls
from forms.app.calls import fingerprint
from forms.errors import BadRequest
from forms.examples import EXAMPLES
from tests.support import TickingClock, service_for

ALICE = Caller("alice", "conv-1")
T0 = datetime(2026, 3, 1, 9, tzinfo=UTC)


def service(*, window: timedelta = timedelta(hours=24)) -> tuple[FormService, TickingClock]:
    clock = TickingClock(T0)
    return service_for(*EXAMPLES, clock=clock, replay_window=window), clock


def test_parallel_starts_under_one_call_id_make_one_instance_and_replay_it() -> None:
    # GIVEN ten threads sending the same form_start at once (a client retrying eagerly)
    svc, _ = service()
    barrier = threading.Barrier(10)
    results: list[dict[str, Any]] = []
    payload = {"form": "travel-claim", "values": {"destination": "Lisbon"}}

    def start() -> None:
        barrier.wait()
        results.append(svc.call(ALICE, "form_start", "call-1", payload))

    threads = [threading.Thread(target=start) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # THEN exactly one instance exists; one caller created it and nine got the replay
    (only,) = svc.store.list_conversation("alice", "conv-1")
    assert {r["instance"] for r in results} == {only.id}
    assert sorted(bool(r.get("replayed")) for r in results) == [False] + [True] * 9
    # AND a fill without an instance id is not ambiguous
    fill = svc.call(ALICE, "form_fill", "call-2", {"form": "travel-claim", "values": {}})
    assert fill.get("error") != "ambiguous_instance"


def test_a_replay_returns_the_first_result_whole_with_the_reason() -> None:
    # GIVEN a grant application whose fill makes a hook terminate it
    svc, _ = service()
    svc.call(ALICE, "form_start", "s", {"form": "grant-application"})
    fill = {"form": "grant-application", "values": {"annual_revenue": 2000000}}
    first = svc.call(ALICE, "form_fill", "x", fill)
    assert first.get("closed") == "terminated" and first.get("reason"), first
    # WHEN the client retries it after a lost response
    replay = svc.call(ALICE, "form_fill", "x", fill)
    # THEN it gets the first result, whole, flagged as a replay
    assert replay == {**first, "replayed": True}


def test_a_call_id_is_bound_to_its_first_input_even_when_nothing_was_saved() -> None:
    # GIVEN a fill under id y whose only value is refused
    svc, _ = service()
    svc.call(ALICE, "form_start", "s", {"form": "travel-claim"})
    refused = svc.call(ALICE, "form_fill", "y", {"form": "travel-claim", "values": {"total": -5}})
    assert refused["rejected"]
    # WHEN another input is sent under y
    other = svc.call(ALICE, "form_fill", "y", {"form": "travel-claim", "values": {"total": 100}})
    # THEN it is a conflict and nothing is saved; the first input replays its result
    assert other["error"] == "tool_call_conflict"
    (instance,) = svc.store.list_conversation("alice", "conv-1")
    assert instance.field("total").revisions == ()
    again = svc.call(ALICE, "form_fill", "y", {"form": "travel-claim", "values": {"total": -5}})
    assert again == {**refused, "replayed": True}


def test_a_refused_call_binds_its_id_too() -> None:
    # GIVEN a fill sent before any form was started (refused: unknown form in conversation)
    svc, _ = service()
    first = svc.call(ALICE, "form_fill", "z", {"form": "travel-claim", "values": {"total": 5}})
    assert first["error"] == "unknown_form"
    svc.call(ALICE, "form_start", "s", {"form": "travel-claim"})
    # WHEN the same call is retried after the start
    again = svc.call(ALICE, "form_fill", "z", {"form": "travel-claim", "values": {"total": 5}})
    # THEN it repeats its first answer instead of applying now
    assert again == {**first, "replayed": True}
    (instance,) = svc.store.list_conversation("alice", "conv-1")
    assert instance.field("total").revisions == ()


def test_replays_are_answered_for_the_window_then_expire_without_applying() -> None:
    # GIVEN a value set under an old call id, then changed by a newer call
    svc, clock = service(window=timedelta(hours=24))
    svc.call(ALICE, "form_start", "s", {"form": "travel-claim"})
    old = {"form": "travel-claim", "values": {"destination": "Lisbon"}}
    svc.call(ALICE, "form_fill", "old", old)
    svc.call(ALICE, "form_fill", "new", {"form": "travel-claim", "values": {"destination": "Rome"}})
    # WHEN the old call is retried within the window / THEN it replays and changes nothing
    clock.now += timedelta(hours=23)
    assert svc.call(ALICE, "form_fill", "old", old)["replayed"] is True
    # WHEN it is retried after the window / THEN it expired: refused, not applied again
    clock.now += timedelta(hours=2)
    late = svc.call(ALICE, "form_fill", "old", old)
    assert late["error"] == "tool_call_expired"
    (instance,) = svc.store.list_conversation("alice", "conv-1")
    in_force = instance.field("destination").in_force()
    assert in_force is not None and in_force.value == "Rome"


def test_many_writers_cannot_push_an_old_call_out_of_the_window() -> None:
    # GIVEN one call, then 300 others on the same instance (more than any count-based window)
    svc, _ = service()
    svc.call(ALICE, "form_start", "s", {"form": "travel-claim"})
    old = {"form": "travel-claim", "values": {"destination": "Lisbon"}}
    svc.call(ALICE, "form_fill", "old", old)
    for n in range(300):
        svc.call(
            ALICE, "form_fill", f"c{n}", {"form": "travel-claim", "values": {"purpose": f"p{n}"}}
        )
    svc.call(ALICE, "form_fill", "new", {"form": "travel-claim", "values": {"destination": "Rome"}})
    # WHEN the first call is retried / THEN it is a replay: OLD -> NEW -> OLD cannot happen
    assert svc.call(ALICE, "form_fill", "old", old)["replayed"] is True
    (instance,) = svc.store.list_conversation("alice", "conv-1")
    in_force = instance.field("destination").in_force()
    assert in_force is not None and in_force.value == "Rome"


def test_call_ids_are_per_conversation_and_principal() -> None:
    svc, _ = service()
    bob = Caller("bob", "conv-1")
    other_conversation = Caller("alice", "conv-2")
    a = svc.call(ALICE, "form_start", "same", {"form": "travel-claim"})
    b = svc.call(bob, "form_start", "same", {"form": "travel-claim"})
    c = svc.call(other_conversation, "form_start", "same", {"form": "travel-claim"})
    assert not any(r.get("replayed") for r in (a, b, c))
    assert len({a["instance"], b["instance"], c["instance"]}) == 3


def test_summaries_keep_the_case_of_field_ids() -> None:
    # GIVEN a form whose ids are camelCase
    from forms.definition import FormDef, Step, field

    class Person(Step):
        title = "Person"
        fullName: str = field("Full name")  # noqa: N815
        staffId: str = field("Staff ID")  # noqa: N815

    form = FormDef(id="camel", version=1, title="Camel", steps=[Person])
    svc = service_for(form, dispatch=False)
    svc.call(ALICE, "form_start", "s", {"form": "camel"})
    # WHEN both are filled
    result = svc.call(
        ALICE, "form_fill", "f", {"form": "camel", "values": {"fullName": "A", "staffId": "B"}}
    )
    # THEN the summary names them as declared
    assert result["summary"].startswith("Saved 2 (fullName, staffId)")


def test_knock_on_hooks_appear_in_the_result_of_the_call_that_raised_them() -> None:
    # GIVEN a form whose step executor patches the last required answer, so completing the
    # step completes the form, whose own executor then runs
    from forms.definition import FormDef, Step, field
    from forms.effects import Patch

    class Ask(Step):
        title = "Ask"
        name: str = field("Name")
        on_complete = staticmethod(lambda ctx: Patch({"stamp": "ok"}))

    class Stamp(Step):
        title = "Stamp"
        stamp: str = field("Stamp")

    ran: list[str] = []
    form = FormDef(
        id="knock",
        version=1,
        title="Knock-on",
        steps=[Ask, Stamp],
        on_complete=lambda ctx: ran.append(ctx.key),
        closes_on_complete=True,
    )
    svc = service_for(form)
    svc.call(ALICE, "form_start", "s", {"form": "knock"})
    # WHEN the name is filled
    result = svc.call(ALICE, "form_fill", "f", {"form": "knock", "values": {"name": "Ann"}})
    # THEN the result reports the step's hook and the completion it caused, with their states
    (instance,) = svc.store.list_conversation("alice", "conv-1")
    keys = [h["key"] for h in result["hooks"]]
    assert keys == [
        f"{instance.id}:step.ask.complete:1",
        f"{instance.id}:form.complete:1",
    ]
    assert {h["status"] for h in result["hooks"]} == {"done"}
    assert ran == [f"{instance.id}:form.complete:1"]
    assert result["closed"] == "completed"


def test_an_integer_past_the_digit_limit_in_process_is_a_bad_request_not_a_crash() -> None:
    svc, _ = service()
    svc.call(ALICE, "form_start", "s", {"form": "travel-claim"})
    huge = 10**5000
    result = svc.call(ALICE, "form_fill", "h", {"form": "travel-claim", "values": {"total": huge}})
    assert (result["ok"], result["error"]) == (False, "bad_request")


def test_a_fingerprint_is_the_digest_of_the_calls_canonical_json() -> None:
    # GIVEN inputs of every kind a model (or an in-process caller) may send
    payloads: list[Any] = [
        {"form": "travel-claim", "values": {"destination": "Lisbon", "nights": 3}},
        {"b": [1, 2.5, None, True, {"z": "é", "a": "日本"}], "a": -0.0, "c": 10**30},
        {"서울": "부산 😀", "\\ud800": "a backslash, then ud800: text, not a surrogate"},
        {"when": T0, "tuple": (1, "x"), "nested": {"deep": [[["x"]]]}},
        [],
        "text",
    ]
    for payload in payloads:
        # WHEN it is fingerprinted
        digest = fingerprint("form_fill", payload)
        # THEN it is sha256 of json.dumps(sort_keys=True, default=str): stored records compare it
        text = json.dumps({"tool": "form_fill", "input": payload}, sort_keys=True, default=str)
        assert digest == hashlib.sha256(text.encode()).hexdigest()


@given(st.binary(max_size=300))
def test_the_digest_maker_gives_hashlibs_sha256(data: bytes) -> None:
    # GIVEN the SHA-256 the fingerprint uses (CPython's own where it has one)
    # WHEN it digests any bytes THEN the digest is hashlib's: stored fingerprints still compare
    assert calls._sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()


def test_without_cpythons_own_sha256_the_digest_maker_is_hashlibs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN an interpreter built without its own SHA-256 module
    def missing(name: str) -> object:
        raise ImportError(name)

    monkeypatch.setattr(importlib, "import_module", missing)
    # WHEN the digest maker is chosen THEN it is hashlib's
    assert calls._sha256_maker() is hashlib.sha256


@pytest.mark.parametrize(
    ("tool", "payload"),
    [
        ("form_fill", {"form": "travel-claim", "values": {"nosuch\ud800": "x"}}),
        ("form_fill", {"form": "travel-claim", "values": {"destination": "Lis\udc00bon"}}),
        ("form_start", {"form": "travel-claim", "values": {"purpose": ["a", "\udbff"]}}),
        (
            "form_revise",
            {
                "form": "travel-claim",
                "field": "destination",
                "action": "set",
                "value": "\ud83d alone",
            },
        ),
    ],
)
def test_a_lone_surrogate_in_a_writes_input_is_a_bad_request_that_stores_nothing(
    tool: str, payload: dict[str, Any]
) -> None:
    # GIVEN a claim with one answer (a JSON parser gives a lone surrogate for a lone escape)
    svc, _ = service()
    svc.call(ALICE, "form_start", "s", {"form": "travel-claim"})
    svc.call(ALICE, "form_fill", "f", {"form": "travel-claim", "values": {"destination": "Oslo"}})
    before = svc.call(ALICE, "form_read", "r1", {"form": "travel-claim"})
    # WHEN a write sends one, in a key or a text
    result = svc.call(ALICE, tool, "bad", payload)
    # THEN it is refused as the input's fault, not the server's, and nothing changed
    assert (result["ok"], result["error"]) == (False, "bad_request")
    assert "lone surrogate" in result["message"]
    assert svc.call(ALICE, "form_read", "r2", {"form": "travel-claim"}) == before
    # and the id is free for the call as it was meant
    fixed = {"form": "travel-claim", "values": {"destination": "Lisbon"}}
    assert svc.call(ALICE, "form_fill", "bad", fixed)["ok"] is True


def test_an_input_that_is_not_json_is_refused_when_fingerprinted() -> None:
    # GIVEN a value that refers to itself, and an integer past the digit limit
    circular: dict[str, Any] = {}
    circular["self"] = circular
    for payload in (circular, {"n": 10**5000}):
        # WHEN it is fingerprinted THEN it is a bad request
        with pytest.raises(BadRequest):
            fingerprint("form_fill", payload)
