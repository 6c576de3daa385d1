"""What the demo tells its reader: a misspelt field id answered with ``did_you_mean``, and,
when it starts a local stack of its own, where that stack listens and that it goes away."""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest

from examples import demo
from infra.local import stack as stacks
from infra.local.stack import LocalStack


def test_the_demo_shows_a_misspelt_id_and_its_did_you_mean(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert demo.main() == 0
    out = capsys.readouterr().out
    call = out.index('"destinaton": "Lisbon"')
    shown = out.index('unknown: [{"sent": "destinaton", "did_you_mean": ["destination"]}]')
    resent = out.index('form_fill {"form": "travel-claim", "values": {"destination": "Lisbon"}}')
    assert call < shown < resent


class FakeStack:
    """Stands in for ``infra.local.stack.LocalStack``: its addresses, and when it stopped."""

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
    monkeypatch.setattr(demo, "run", lambda transport: used.append(transport.api_url) or 0)
    assert demo.run_over_http(None) == 0
    assert used == [stacks.DEFAULT_URL]
    assert "No local stack" not in capsys.readouterr().out
