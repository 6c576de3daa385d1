"""Logs, metrics: structured, correlated with the request, free of the callers' data."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from formwork.aws.http import LOCAL_LOG_HASH_KEY, _log_hash_key, log_hash
from formwork.aws.routing import logger
from formwork.config import ConfigError
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


# ---------------------------------------------------------------------------- ids in logs

EMAIL = "ana.ferreira@example.com"
"""A conversation id the id format allows, and that names a person."""


def test_a_conversation_id_never_reaches_the_logs(
    api: Api, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    # GIVEN every logger recording at INFO, and a conversation id that is an e-mail address
    caplog.set_level(logging.INFO)
    # WHEN the conversation is used on every route that takes it, succeeding and failing
    api.call("form_start", EMAIL, form="travel-claim", values={"destination": "Lisbon"})
    api.call("form_read", EMAIL, form="no-such-form")
    api.call("no_such_tool", EMAIL)
    api.post(f"/conversations/{EMAIL}/tools/form_list", {"nope": 1})
    api.status(EMAIL)
    api.status(EMAIL, claims={"sub": "bob"})
    out = capfd.readouterr()
    # THEN nothing written anywhere holds the id: not the metrics and prints (stdout), not a
    # log record of any logger (formatted the way Powertools writes them)
    records = [logger.registered_formatter.format(r) for r in caplog.records]
    for text in (out.out, out.err, *records):
        assert EMAIL not in text
        assert "ana.ferreira" not in text
    # AND the tool-call lines carry its keyed hash instead, the same on every line
    lines = [line for line in map(json.loads, records) if line["message"] == "tool call"]
    assert len(lines) == 2
    assert {line["conversation_hash"] for line in lines} == {log_hash(EMAIL)}
    assert all("conversation_id" not in line for line in lines)


@pytest.fixture
def log_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    _log_hash_key.cache_clear()
    yield monkeypatch
    monkeypatch.undo()
    _log_hash_key.cache_clear()


def test_the_hash_is_keyed_by_log_hash_key(log_key: pytest.MonkeyPatch) -> None:
    # GIVEN a deployment's key
    log_key.setenv("LOG_HASH_KEY", "k" * 32)
    ours = log_hash(EMAIL)
    # THEN the hash is HMAC-SHA256 under it: stable, and not the key-less digest of the id
    expected = hmac.new(b"k" * 32, EMAIL.encode(), hashlib.sha256).hexdigest()[:32]
    assert ours == expected == log_hash(EMAIL)
    assert ours != hashlib.sha256(EMAIL.encode()).hexdigest()[:32]
    assert log_hash("other@example.com") != ours
    # AND another deployment's key gives another hash
    log_key.setenv("LOG_HASH_KEY", "z" * 32)
    _log_hash_key.cache_clear()
    assert log_hash(EMAIL) != ours


def test_a_short_log_hash_key_is_a_config_error(log_key: pytest.MonkeyPatch) -> None:
    log_key.setenv("LOG_HASH_KEY", "short")
    with pytest.raises(ConfigError, match="LOG_HASH_KEY"):
        log_hash(EMAIL)


def test_without_a_key_lambda_makes_one_up_and_local_runs_use_the_documented_one(
    log_key: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    log_key.delenv("LOG_HASH_KEY", raising=False)
    # outside Lambda: the public local key, so local logs correlate across restarts
    log_key.delenv("AWS_LAMBDA_FUNCTION_NAME", raising=False)
    local = hmac.new(LOCAL_LOG_HASH_KEY.encode(), EMAIL.encode(), hashlib.sha256)
    assert log_hash(EMAIL) == local.hexdigest()[:32]
    # in Lambda: never the public key (a guessed e-mail could be checked against it)
    _log_hash_key.cache_clear()
    log_key.setenv("AWS_LAMBDA_FUNCTION_NAME", "formwork-tools")
    with caplog.at_level(logging.WARNING):
        deployed = log_hash(EMAIL)
    assert deployed != local.hexdigest()[:32]
    assert any("LOG_HASH_KEY is not set" in r.getMessage() for r in caplog.records)


def test_a_bad_log_hash_key_fails_the_call_before_it_runs(
    api: Api, store: Any, log_key: pytest.MonkeyPatch
) -> None:
    log_key.setenv("LOG_HASH_KEY", "short")
    response = api.call("form_start", EMAIL, form="travel-claim")
    assert response.status == 500
    assert store.writes == 0
