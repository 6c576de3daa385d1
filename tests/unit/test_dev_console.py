"""The dev console's filter (``formwork.infra.local.console``) on what Powertools really writes."""

from __future__ import annotations

import io
import json
import logging
import uuid
from collections.abc import Iterator

import pytest
from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from formwork.infra.local.console import function_console, readable


@pytest.fixture
def records() -> Iterator[tuple[Logger, io.StringIO]]:
    buffer = io.StringIO()
    # Powertools configures a service's logger once per process: a fresh name per test.
    service = f"console-test-{uuid.uuid4().hex[:8]}"
    logger = Logger(service=service, logger_handler=logging.StreamHandler(buffer))
    yield logger, buffer


def lines(buffer: io.StringIO) -> list[str]:
    return buffer.getvalue().splitlines()


def test_info_and_debug_records_are_left_out(records: tuple[Logger, io.StringIO]) -> None:
    logger, buffer = records
    logger.setLevel("DEBUG")
    logger.debug("details")
    logger.info("tool call", extra={"tool": "form_fill"})
    assert len(lines(buffer)) == 2
    assert [readable("ToolsFunction", line) for line in lines(buffer)] == [None, None]


def test_a_warning_is_one_line_naming_the_function(records: tuple[Logger, io.StringIO]) -> None:
    logger, buffer = records
    logger.warning("could not notify the approval's workflow")
    (line,) = lines(buffer)
    shown = readable("ToolsFunction", line)
    assert shown is not None
    assert shown.startswith("ToolsFunction WARNING could not notify the approval's workflow (")
    assert "\n" not in shown
    assert "timestamp" not in shown


def test_an_error_keeps_its_traceback(records: tuple[Logger, io.StringIO]) -> None:
    logger, buffer = records
    try:
        empty: dict[str, int] = {}
        empty["missing"]
    except KeyError:
        logger.exception("unhandled error in a route")
    (line,) = lines(buffer)
    shown = readable("ToolsFunction", line)
    assert shown is not None
    head, *trace = shown.splitlines()
    assert head.startswith("ToolsFunction ERROR unhandled error in a route [KeyError]")
    assert trace[0] == "    Traceback (most recent call last):"
    assert trace[-1] == "    KeyError: 'missing'"


def test_emf_metrics_are_left_out(capsys: pytest.CaptureFixture[str]) -> None:
    metrics = Metrics(namespace="ConsoleTest", service="console-test")
    metrics.add_metric(name="ToolCalls", unit=MetricUnit.Count, value=1)
    metrics.flush_metrics()
    (line,) = capsys.readouterr().out.splitlines()
    assert "_aws" in json.loads(line)
    assert readable("ToolsFunction", line) is None


@pytest.mark.parametrize(
    "line",
    ["debug: halfway through", "[1, 2, 3]", '{"event": "not a log record"}', '"a string"'],
)
def test_anything_else_is_shown_as_it_is(line: str) -> None:
    assert readable("ToolsFunction", line) == line


def test_blank_lines_are_dropped() -> None:
    assert readable("ToolsFunction", "   ") is None


def test_json_logs_leave_the_stdout_of_functions_alone() -> None:
    assert function_console("ToolsFunction", json_logs=True) is None


def test_the_readable_console_writes_what_it_keeps(
    records: tuple[Logger, io.StringIO], capsys: pytest.CaptureFixture[str]
) -> None:
    logger, buffer = records
    logger.info("tool call")
    logger.warning("slow")
    show = function_console("RelayFunction", json_logs=False)
    assert show is not None
    for line in [*lines(buffer), "plain text"]:
        show(line)
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2
    assert out[0].startswith("RelayFunction WARNING slow (")
    assert out[1] == "plain text"
