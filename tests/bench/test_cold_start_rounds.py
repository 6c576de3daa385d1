"""The cold start bench's rounds: each figure against the ``import boto3`` timed beside it, and
the Extensions API stand-in the Lambda-like rows register with. Nothing is timed."""

from __future__ import annotations

import http.client
import socket

import pytest

from bench.backend import cold_start
from bench.backend.cold_start import Variant, environment, summarise
from bench.backend.extensions_api import extensions_api


def test_a_figure_is_divided_by_the_mean_of_the_boto3_timings_beside_it() -> None:
    # GIVEN two rounds of B V B W B, where the machine slowed down around W in round 1
    boto3 = Variant("import boto3", "import boto3", False, "cached")
    api = Variant("import formwork.aws.api", "import formwork.aws.api", False, "cached", "", True)
    layer = Variant("layer 0", "import formwork.aws", False, "cached", part=True)
    samples = {
        boto3: [0.10, 0.10, 0.30, 0.10, 0.10, 0.10],
        api: [0.12, 0.12],
        layer: [0.40, 0.01],
    }
    references = {api: [0.10, 0.10], layer: [0.20, 0.10]}
    # WHEN the rows are summarised
    rows = summarise([boto3, api, layer], samples, {}, references)
    # THEN each ratio is to its own reference; the baseline's median is over all its timings,
    # and it counts as many rounds as the figures
    assert rows[1].ratios == pytest.approx((1.2, 1.2))
    assert rows[2].ratios == pytest.approx((2.0, 0.1))
    assert rows[0].median == pytest.approx(0.10)
    assert rows[0].ratios == (1.0, 1.0)


def test_lambda_like_rows_run_as_their_own_function_with_an_extensions_api() -> None:
    # GIVEN the Lambda-like environment of the Bedrock handler, with an Extensions API
    env = environment(True, "cached", "", "127.0.0.1:9", "formwork.aws.bedrock_agent")
    # THEN the handler is the Bedrock function's, and the runtime API is set
    assert env["_HANDLER"] == "formwork.aws.bedrock_agent.lambda_handler"
    assert env["AWS_LAMBDA_RUNTIME_API"] == "127.0.0.1:9"
    # AND the local environment has neither
    local = environment(False, "cached", "", "127.0.0.1:9")
    assert "AWS_LAMBDA_RUNTIME_API" not in local and "_HANDLER" not in local


def test_the_stand_in_registers_and_holds_the_next_event_until_the_caller_leaves() -> None:
    with extensions_api() as address:
        host, port = address.split(":")
        # WHEN an extension registers
        connection = http.client.HTTPConnection(host, int(port), timeout=5)
        connection.request("POST", "/2020-01-01/extension/register", body=b'{"events":[]}')
        answer = connection.getresponse()
        # THEN it is accepted with an identifier, as Lambda accepts it
        assert answer.status == 200
        assert answer.getheader("Lambda-Extension-Identifier")
        answer.read()
        connection.close()
        # AND a next-event request is held open (no answer within the wait)
        waiting = socket.create_connection((host, int(port)), timeout=0.3)
        waiting.sendall(b"GET /2020-01-01/extension/event/next HTTP/1.1\r\nHost: x\r\n\r\n")
        with pytest.raises(TimeoutError):
            waiting.recv(1)
        waiting.close()


def test_a_round_divides_the_least_of_a_figures_timings_by_the_least_of_boto3s_beside_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN one handler and boto3, in the cached mode only, and the timings they will take:
    # the warm-up round (boto3, api), then one round: B V B V B
    boto3 = Variant("import boto3", "import boto3", False, "cached")
    api = Variant("import formwork.aws.api", "import formwork.aws.api", False, "cached", "", True)
    timings = iter([0.1, 0.1, 0.12, 0.30, 0.11, 0.13, 0.10])
    timed: list[str] = []

    def fake_time(variant: Variant, env: dict[str, str]) -> tuple[float, tuple[str, ...]]:
        timed.append(variant.label)
        return next(timings), ()

    monkeypatch.setattr(cold_start, "variants", lambda: [boto3, api])
    monkeypatch.setattr(cold_start, "MODES", ("cached",))
    monkeypatch.setattr(cold_start, "time_statement", fake_time)
    # WHEN one round is measured, two timings each
    rows = cold_start.measure(1, repeats=2)
    # THEN the figure and boto3 alternate, boto3 on both sides
    assert timed[2:] == ["import boto3", api.label, "import boto3", api.label, "import boto3"]
    # AND the round's ratio is the least of the figure's timings (0.30, 0.13) over the least of
    # boto3's (0.12, 0.11, 0.10); the baseline's median is over its timings of the round
    assert rows[1].ratios == pytest.approx((1.3,))
    assert rows[0].median == pytest.approx(0.11)
