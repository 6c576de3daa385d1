"""Logs, metrics: structured, correlated with the request, free of the callers' data."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from functions.api import logger
from tests.functional.conftest import Api, load_event


def emitted(text: str) -> list[dict[str, Any]]:
    lines = []
    for line in text.splitlines():
        try:
            lines.append(json.loads(line))
        except ValueError:
            continue
    return [line for line in lines if isinstance(line, dict)]


def test_tool_calls_are_counted_by_tool_and_outcome(
    api: Api, capfd: pytest.CaptureFixture[str]
) -> None:
    # WHEN a successful and a failing tool call are made
    api.call("form_start", form="travel-claim")
    api.call("form_read", form="no-such-form")
    out = emitted(capfd.readouterr().out)
    # THEN each emits a ToolCalls metric (EMF) with its tool and outcome as dimensions
    calls = [m for m in out if "ToolCalls" in m]
    assert [(m["tool"], m["outcome"]) for m in calls] == [
        ("form_start", "ok"),
        ("form_read", "unknown_form"),
    ]
    metric = calls[0]["_aws"]["CloudWatchMetrics"][0]
    assert metric["Namespace"] == "Formwork"
    assert [d for d in metric["Dimensions"][0] if d != "service"] == ["tool", "outcome"]


def test_every_response_is_counted_by_route_and_status_class(
    api: Api, capfd: pytest.CaptureFixture[str]
) -> None:
    api.get("/tools")
    api.status("nowhere")
    out = emitted(capfd.readouterr().out)
    counted = [(m["route"], k) for m in out for k in m if k.startswith("Status")]
    assert counted == [("list_tools", "Status2xx"), ("status", "Status4xx")]


def test_logs_carry_the_request_id_and_not_the_input(
    api: Api, caplog: pytest.LogCaptureFixture
) -> None:
    # WHEN the tool-call fixture runs (its input holds a name)
    caplog.set_level(logging.INFO, logger=logger.name)
    api.send(load_event("call_tool"))
    # (formatted as Powertools formats them, with the keys of the invocation)
    logs = [json.loads(logger.registered_formatter.format(r)) for r in caplog.records]
    # THEN the tool-call log line is correlated with API Gateway's request id
    line = next(m for m in logs if m["message"] == "tool call")
    assert line["correlation_id"] == "Hx1AbCdEFiAEJ8g="
    assert (line["tool"], line["outcome"], line["route"]) == ("form_start", "ok", "call_tool")
    # AND no log line repeats what the user said
    assert not any("Ana Ferreira" in json.dumps(m) for m in logs)
