"""What the demo tells its reader: a misspelt field id answered with ``did_you_mean``; when it
starts a local stack of its own, where that stack listens and that it goes away; and memory
(scene 9), whose fact editor answers in process as the ``/memory`` routes do over HTTP."""

from __future__ import annotations

import inspect
import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from forms.memory import DecayPolicy, Vocabulary
from forms.storage.facts import InMemoryFactStore
from formwork.examples import demo
from formwork.examples.demo import fact_editor
from formwork.examples.demo.fact_editor import InProcessFactEditor
from formwork.infra.local import stack as stacks
from formwork.infra.local.stack import LocalStack


def test_the_demo_shows_a_misspelt_id_and_its_did_you_mean(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert demo.main() == 0
    out = capsys.readouterr().out
    call = out.index('"destinaton": "Lisbon"')
    shown = out.index('unknown: [{"sent": "destinaton", "did_you_mean": ["destination"]}]')
    resent = out.index('form_fill {"form": "travel-claim", "values": {"destination": "Lisbon"}}')
    assert call < shown < resent
    # AND in process there are no pages: the builder scene says so where the person would
    # open the draft's canvas, right after the call that made the draft
    made = out.index('Created form "Job application"')
    assert out.index("(in process there is no canvas: over HTTP the person watches") > made


class FakeStack:
    """Stands in for ``formwork.infra.local.stack.LocalStack``: its addresses, and when it
    stopped."""

    events: list[str]
    options: list[dict[str, Any]]

    def __init__(self, **options: Any) -> None:
        self.options.append(options)
        self.api_url = "http://127.0.0.1:41001"
        self.dynamodb_endpoint = "http://127.0.0.1:41002"
        self.temporal_address = "127.0.0.1:41003"

    def __enter__(self) -> FakeStack:
        self.events.append("started")
        return self

    def __exit__(self, *exc: object) -> None:
        self.events.append("stopped")


def test_a_stack_started_for_the_run_is_announced_with_its_ports(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    events: list[str] = []
    options: list[dict[str, Any]] = []
    monkeypatch.setattr(FakeStack, "events", events, raising=False)
    monkeypatch.setattr(FakeStack, "options", options, raising=False)
    monkeypatch.setattr(stacks, "LocalStack", FakeStack)
    monkeypatch.setattr(stacks, "running_stack", lambda url=None, timeout=2.0: False)

    def run(transport: demo.OverHttp) -> int:
        events.append(f"ran against {transport.api_url}, Temporal {transport.temporal}")
        print("(the conversation)")
        return 0

    monkeypatch.setattr(demo, "run", run)
    assert demo.run_over_http(None) == 0
    (given,) = options  # what the demo asks of a real LocalStack: options it takes, free ports
    assert set(given) <= set(inspect.signature(LocalStack).parameters)
    assert given["api_port"] == given["dynamodb_port"] == given["temporal_port"] == 0
    assert events == [
        "started",
        "ran against http://127.0.0.1:41001, Temporal 127.0.0.1:41003",
        "stopped",
    ]
    out = capsys.readouterr().out
    assert "No local stack answers on 127.0.0.1:3000" in out
    assert "free ports" in out and "stops it at the end" in out
    table = re.findall(r"^  (API|DynamoDB|Temporal)\s+(\S+)$", out, re.MULTILINE)
    assert table == [
        ("API", "http://127.0.0.1:41001"),
        ("DynamoDB", "http://127.0.0.1:41002"),
        ("Temporal", "127.0.0.1:41003"),
    ]
    last = out.strip().splitlines()[-1]
    assert last == (
        "Stopping the local stack this run started (ports: API 41001, DynamoDB 41002, "
        "Temporal 41003)."
    )
    assert out.index("(the conversation)") < out.index("Stopping the local stack")


def test_a_stack_already_running_is_used_without_starting_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def refuse(**options: Any) -> None:
        raise AssertionError("no stack should be started")

    monkeypatch.setattr(stacks, "LocalStack", refuse)
    monkeypatch.setattr(stacks, "running_stack", lambda url=None, timeout=2.0: True)
    used: list[str] = []

    def run(transport: demo.OverHttp) -> int:
        used.append(transport.api_url)
        return 0

    monkeypatch.setattr(demo, "run", run)
    assert demo.run_over_http(None) == 0
    assert used == [stacks.DEFAULT_URL]
    assert "No local stack" not in capsys.readouterr().out


# ---------------------------------------------------------------------------- memory


def test_the_memory_scene_fills_offers_corrects_and_keeps_apart(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # WHEN the demo runs in process
    assert demo.main() == 0
    out = capsys.readouterr().out
    scene = " ".join(out[out.index("9. Memory") :].split())
    # THEN what alice said in her first check-in is kept: the date of birth to fill, the
    # weight to offer
    assert "Date of birth 1990-04-02 (decays: never): fill" in scene
    assert "Weight 70 kg (decays: weeks): offer" in scene
    # AND her next check-in has the date of birth filled and marked, the weight only offered
    later = scene.index("conv-mem-2")
    marked = scene.index(
        "from memory, unconfirmed (resend once confirmed): Date of birth 1990-04-02", later
    )
    offered = scene.index("from memory, confirm: Weight 70 kg", later)
    read = scene.index(
        'Date of birth: answered = "1990-04-02" (from memory, said 2025-03-10; unconfirmed)'
    )
    pending = scene.index("Weight (kg): pending (offered from memory: 70 kg")
    # AND the agent's resend confirms it, before she corrects the weight in her fact editor
    confirmed = scene.index('confirmed: ["date_of_birth"]')
    correction = scene.index(
        'PUT /memory/facts/person.weight_kg {"words": "71.5 kg", "correction": true}'
    )
    assert later < marked < offered < read < pending < confirmed < correction
    # (in process there is no fact editor page: the correction is the route's request)
    assert scene.index("(in process there is no fact editor page") < correction
    assert 'history 0: stated "70"' in scene and 'history 1: corrected "71.5"' in scene
    assert "believed then: 70 kg (before the correction)" in scene
    # AND the next check-in offers the new weight; with memory off nothing is read or recalled
    assert scene.index("from memory, confirm: Weight 71.5 kg") > correction
    off = scene[scene.index('PUT /memory/settings {"enabled": false}') :]
    assert "counted 0 reads of alice's facts for this start" in off
    assert "from memory" not in off[: off.index("(bob,")]
    # AND bob, of the same tenant, has none of her facts
    bob = off[off.index("(bob,") :]
    assert "from memory" not in bob
    assert "GET /memory/facts as acme/bob result: 200, facts: []" in bob
    assert "404 no_fact: no fact person.weight_kg is in force" in bob


class Instant:
    """One clock for the App (Unix seconds) and the demo's fact editor (a datetime), moved on
    only by ``advance``, so both answer with the same times."""

    def __init__(self) -> None:
        self.now = datetime(2026, 9, 3, 10, 0, tzinfo=UTC)

    def seconds(self) -> float:
        return self.now.timestamp()

    def at(self) -> datetime:
        return self.now

    def advance(self) -> None:
        self.now += timedelta(minutes=1)


WEIGHT = "/memory/facts/person.weight_kg"
ASKED: list[tuple[str, str, str, dict[str, Any] | None, str | None]] = [
    # who, method, path, body, as_of; each a minute after the one before
    ("alice", "PUT", WEIGHT, {"words": "70 kg"}, None),
    ("alice", "PUT", WEIGHT, {"words": "71.5 kg", "correction": True}, None),
    ("alice", "PUT", "/memory/facts/person.height_cm", {"words": "5'8\""}, None),
    ("alice", "GET", WEIGHT, None, None),
    ("alice", "GET", WEIGHT, None, "2026-09-03T10:00:30+00:00"),
    ("alice", "GET", "/memory/facts", None, None),
    ("alice", "PUT", WEIGHT, {"words": "about 70"}, None),  # no_rule
    ("alice", "PUT", WEIGHT, {"words": "900 kg"}, None),  # invalid_value
    ("alice", "PUT", "/memory/facts/person.weigth", {"words": "70 kg"}, None),  # unknown key
    ("bob", "GET", WEIGHT, None, None),  # no_fact: alice's is not his
    ("bob", "GET", "/memory/facts", None, None),
    ("alice", "PUT", "/memory/settings", {"enabled": False}, None),
    ("alice", "PUT", WEIGHT, {"words": "72 kg"}, None),  # memory_off
    ("alice", "GET", "/memory/facts", None, None),
]


def test_the_in_process_fact_editor_answers_as_the_memory_routes_do() -> None:
    # GIVEN the memory routes (the Lambda handler on an App) and the demo's fact editor, each
    # on an in-memory fact store of its own, reading one clock
    from forms.surface.facts import REFUSAL_STATUS
    from tests.functional.conftest import SETTINGS, Api, build_event, make_service

    instant = Instant()
    api = Api.over(make_service(), SETTINGS, facts=InMemoryFactStore(), clock=instant.seconds)
    editor = InProcessFactEditor(
        InMemoryFactStore(),
        Vocabulary.default(),
        DecayPolicy.default(),
        instant.at,
        api.app.commit_policy,
    )

    def over_http(
        who: str, method: str, path: str, body: Any, as_of: str | None
    ) -> tuple[int, Any]:
        text = None if body is None else json.dumps(body)
        claims = {"sub": who, "tenant": "acme"}
        query = {"as_of": as_of} if as_of else None
        response = api.send(build_event(method, path, body=text, claims=claims, query=query))
        return response.status, response.json()

    def in_process(
        who: str, method: str, path: str, body: Any, as_of: str | None
    ) -> tuple[int, Any]:
        principal = f"acme/{who}"
        if path == "/memory/settings":
            return editor.switch_memory(principal, body["enabled"])
        if path == "/memory/facts":
            return editor.list_facts(principal)
        key = path.removeprefix("/memory/facts/")
        if method == "PUT":
            return editor.state_fact(principal, key, body)
        return editor.read_fact(principal, key, datetime.fromisoformat(as_of) if as_of else None)

    for request in ASKED:
        # WHEN each is asked the same
        routes, ours = over_http(*request), in_process(*request)
        # THEN both answer alike, status and body
        assert ours == routes, request
        instant.advance()
    # AND the editor's constants are the routes': its statuses theirs
    assert vars(fact_editor)["REFUSAL_STATUS"] is REFUSAL_STATUS  # an import, not an export
