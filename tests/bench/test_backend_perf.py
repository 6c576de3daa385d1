"""The backend bench's own helpers: statistics, request counting, parsing. Nothing is timed."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse, HTTPHeaders
from botocore.config import Config

from bench.backend.client import Reply
from bench.backend.cold_start import (
    Variant,
    direct_imports,
    handler_modules,
    summarise,
    target,
    variants,
    verdict,
)
from bench.backend.counting import RequestLog, Tally, kind_of
from bench.backend.dynamo_requests import RequestRow
from bench.backend.emulator import patched_moto
from bench.backend.inprocess import PRINCIPAL, status_event, tool_event
from bench.backend.load import LoadResult, compare
from bench.backend.stats import Summary, duration, percentile, ratio, table

# ---------------------------------------------------------------------------- statistics


def test_percentile_interpolates_between_closest_ranks() -> None:
    # GIVEN the samples 1..10 (in any order)
    samples = [7.0, 3.0, 10.0, 1.0, 5.0, 2.0, 9.0, 4.0, 8.0, 6.0]
    # WHEN percentiles are taken
    # THEN rank (n - 1) * p / 100 is interpolated linearly (numpy's default definition)
    assert percentile(samples, 0) == 1.0
    assert percentile(samples, 50) == 5.5
    assert percentile(samples, 100) == 10.0
    assert percentile(samples, 99) == pytest.approx(9.91)
    assert percentile(samples, 25) == pytest.approx(3.25)


def test_percentile_of_one_sample_is_that_sample() -> None:
    # GIVEN one sample / WHEN any percentile is taken / THEN it is that sample
    assert percentile([4.2], 99) == 4.2


@pytest.mark.parametrize(("samples", "p"), [([], 50), ([1.0], -1), ([1.0], 101)])
def test_percentile_refuses_what_has_no_answer(samples: list[float], p: float) -> None:
    # GIVEN no samples, or a percentile outside 0-100 / WHEN asked / THEN it refuses
    with pytest.raises(ValueError):
        percentile(samples, p)


def test_summary_holds_median_and_tail_of_the_samples() -> None:
    # GIVEN 100 samples 1..100
    summary = Summary.of([float(n) for n in range(100, 0, -1)])
    # THEN the median and p99 follow the percentile definition, with the extremes and count
    assert (summary.n, summary.median, summary.low, summary.high) == (100, 50.5, 1.0, 100.0)
    assert summary.p99 == pytest.approx(99.01)


def test_durations_and_ratios_read_in_sensible_units() -> None:
    # GIVEN durations across scales / THEN each reads in the unit that suits it
    assert duration(0.000_412) == "412 µs"
    assert duration(0.0123) == "12.3 ms"
    assert duration(0.512) == "512 ms"
    assert duration(12.34) == "12.3 s"
    assert ratio(3.0, 2.0) == "1.50×"
    assert ratio(1.0, 0.0) == "n/a"


def test_table_is_markdown_with_numbers_right_aligned() -> None:
    # GIVEN a text column and a number column
    text = table(["name", "count"], [["a", 5], ["longer", 12]])
    # THEN it is a Markdown table, the number column right-aligned
    assert text.splitlines() == [
        "| name   | count |",
        "|--------|------:|",
        "| a      |     5 |",
        "| longer |    12 |",
    ]


def test_table_treats_text_that_starts_with_a_number_as_text() -> None:
    # GIVEN labels that start with digits, and durations with units
    text = table(["workload", "p50"], [["10 conversations", "4.2 ms"], ["2 writers", "12 ms"]])
    # THEN the labels stay left-aligned and the durations right-aligned
    assert text.splitlines()[1] == "|------------------|-------:|"
    assert text.splitlines()[3] == "| 2 writers        |  12 ms |"


def test_table_refuses_a_ragged_row() -> None:
    with pytest.raises(ValueError):
        table(["a", "b"], [["only one"]])


# ---------------------------------------------------------------------------- counting


def test_operations_are_classed_as_reads_or_writes() -> None:
    assert [kind_of(op) for op in ("Query", "BatchGetItem", "TransactWriteItems", "PutItem")] == [
        "read",
        "read",
        "write",
        "write",
    ]
    assert kind_of("DescribeTable") == "other"


def test_tally_counts_by_kind_and_describes_in_first_seen_order() -> None:
    # GIVEN a conflicted write's requests, with one HTTP retry
    tally = Tally(
        operations=("Query", "Query", "TransactWriteItems", "Query", "TransactWriteItems"),
        refused=("TransactWriteItems:TransactionCanceledException",),
        attempts=6,
    )
    # THEN reads, writes and retries are counted, and the description groups repeats
    assert (tally.reads, tally.writes, tally.retries) == (3, 2, 1)
    assert tally.describe() == "Query×3, TransactWriteItems×2"
    assert Tally().describe() == "-"


WRITE = {"Put": {"TableName": "t", "Item": {"pk": {"S": "I#1"}, "sk": {"S": "STATE"}}}}
CANCELLED = "com.amazonaws.dynamodb.v20120810#TransactionCanceledException"


class _Body:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def stream(self, **_: Any) -> Any:
        yield self.data


class FakeDynamoDB:
    """Answers each HTTP attempt from a queue, at botocore's ``before-send`` (no network)."""

    def __init__(self, client: Any, replies: list[tuple[int, dict[str, Any]]]) -> None:
        self.replies = replies
        client.meta.events.register("before-send.dynamodb.*", self.answer)

    def answer(self, **_: Any) -> AWSResponse:
        status, body = self.replies.pop(0)
        headers = HTTPHeaders.from_dict(
            {"x-amzn-requestid": "r", "content-type": "application/x-amz-json-1.0"}
        )
        return AWSResponse("http://fake", status, headers, _Body(json.dumps(body).encode()))


@pytest.fixture
def dynamodb() -> Any:
    # A real botocore client; FakeDynamoDB answers its requests in place of the network.
    return boto3.client(
        "dynamodb",
        region_name="us-east-1",
        endpoint_url="http://fake",
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(retries={"mode": "standard", "max_attempts": 3}),
    )


def test_request_log_counts_calls_refusals_and_attempts(dynamodb: Any) -> None:
    # GIVEN a request log on a client, and a table that answers a Query and refuses a write
    log = RequestLog(dynamodb)
    FakeDynamoDB(
        dynamodb,
        [
            (200, {"Items": [], "Count": 0, "ScannedCount": 0}),
            (400, {"__type": CANCELLED, "message": "cancelled"}),
        ],
    )
    # WHEN the client makes both calls
    dynamodb.query(TableName="t", KeyConditionExpression="pk = :p")
    with pytest.raises(dynamodb.exceptions.TransactionCanceledException):
        dynamodb.transact_write_items(TransactItems=[WRITE])
    # THEN both calls are counted in order, the refused one names its error, and each call
    # was one HTTP attempt (no retries)
    tally = log.take()
    assert tally.operations == ("Query", "TransactWriteItems")
    assert tally.refused == ("TransactWriteItems:TransactionCanceledException",)
    assert (tally.reads, tally.writes, tally.attempts, tally.retries) == (1, 1, 2, 0)
    # AND take() starts afresh
    assert log.take() == Tally()


# ---------------------------------------------------------------------------- verdicts


def test_request_rows_are_judged_against_the_issue_targets() -> None:
    one_and_one = Tally(("Query", "TransactWriteItems"))
    two_and_one = Tally(("Query", "Query", "TransactWriteItems"))
    # A write call: at most one read and one write
    assert RequestRow("start", "write", one_and_one).verdict() == "meets"
    assert RequestRow("fill", "write", two_and_one).verdict() == "misses: +1 read"
    # A read call: one read, no write
    assert RequestRow("read", "read", Tally(("Query",))).verdict() == "meets"
    assert RequestRow("read", "read", one_and_one).verdict() == "misses: +1 write"
    # A conflict has no target
    assert RequestRow("race", "conflict", two_and_one).target is None


def _reply(ok: bool, error: str = "busy") -> Reply:
    return Reply(200, {"ok": True} if ok else {"ok": False, "error": error}, 0.01)


def test_read_back_separates_acknowledged_refused_lost_and_phantom_writes() -> None:
    # GIVEN three acknowledged writes and one refused as busy, and a store holding two of the
    # acknowledged ones (one of them twice) and the refused one
    writes = [("a", _reply(True)), ("b", _reply(True)), ("c", _reply(True)), ("d", _reply(False))]
    stored = Counter({"a": 1, "b": 2, "d": 1})
    # WHEN they are compared
    result = LoadResult("x", 1)
    compare(result, writes, stored)
    # THEN each kind of failure is named
    assert (result.acknowledged, result.refused) == (["a", "b", "c"], Counter({"busy": 1}))
    assert (result.lost, result.phantom, result.duplicated) == (["c"], ["d"], ["b"])
    assert result.landed == 1
    assert not result.intact
    assert result.check().startswith("FAILED")


def test_read_back_of_a_clean_run_with_refusals_is_intact_but_not_all_landed() -> None:
    # GIVEN two acknowledged writes stored once each, and one refused write not stored
    result = LoadResult("x", 1)
    compare(result, [("a", _reply(True)), ("b", _reply(True)), ("c", _reply(False))], Counter("ab"))
    # THEN nothing was lost, but not every write landed, and the check says so
    assert result.intact and not result.all_landed
    assert result.check() == "2/2 acknowledged writes stored once; refused: busy ×1, none stored"
    assert result.calls == 3


# ---------------------------------------------------------------------------- cold start


def test_direct_imports_splits_a_module_total_into_its_own_imports() -> None:
    # GIVEN -X importtime output (children are printed before their parent, indented more)
    output = "\n".join(
        [
            "import time: self [us] | cumulative | imported package",
            "import time:       100 |        100 | sys_thing",
            "import time:        50 |         50 |     deep.leaf",
            "import time:       200 |        250 |   heavy",
            "import time:        30 |         30 |   light",
            "import time:        20 |        300 | app",
        ]
    )
    # WHEN the app's direct imports are ranked
    parts = direct_imports(output, "app", top=1)
    # THEN the largest comes first and the rest (smaller imports, own code) adds up to the total
    assert parts[0] == ("heavy", 250e-6)
    assert parts[1][1] == pytest.approx(50e-6)
    assert sum(seconds for _, seconds in parts) == pytest.approx(300e-6)
    assert direct_imports(output, "absent", top=3) == []


def test_handler_modules_include_the_template_handler() -> None:
    assert "formwork.aws.api" in handler_modules()


def test_cold_start_ratios_are_to_the_boto3_of_the_same_round_and_mode() -> None:
    # GIVEN three rounds where the machine slowed down in round 2, in both bytecode modes
    boto3 = {m: Variant("import boto3", "import boto3", False, m) for m in ("cached", "none")}
    api = {
        m: Variant("import formwork.aws.api", "import formwork.aws.api", False, m, "", True)
        for m in ("cached", "none")
    }
    samples = {
        boto3["cached"]: [0.10, 0.20, 0.10],
        api["cached"]: [0.20, 0.40, 0.30],
        boto3["none"]: [1.0, 1.0, 1.0],
        api["none"]: [1.2, 1.4, 1.3],
    }
    chosen = [boto3["cached"], api["cached"], boto3["none"], api["none"]]
    # WHEN the rows are summarised
    rows = summarise(chosen, samples, {})
    # THEN each ratio pairs a figure with its own round's boto3 in its own mode: median, range
    cached = rows[1]
    assert cached.ratios == pytest.approx((2.0, 2.0, 3.0))
    assert cached.ratio == pytest.approx(2.0)
    assert cached.spread == pytest.approx((2.0, 3.0))
    assert rows[3].ratio == pytest.approx(1.3)
    # AND the goal is judged on every import row: missed by the worst one, the range shown
    measured, said = target(rows)
    assert "formwork.aws.api (local, cached) 2.00× (2.00-3.00)" in measured
    # (the bytecode-less row's median is 1.3, its rounds 1.2-1.4: within noise)
    assert said.startswith("missed: 1 of 2 over 1.3× (1 within noise), worst 2.00×")


def test_cold_start_goal_is_met_only_when_every_round_is_under_it() -> None:
    # GIVEN a handler whose median is under the goal but one round over it
    boto3 = Variant("import boto3", "import boto3", False, "cached")
    api = Variant("import formwork.aws.api", "import formwork.aws.api", False, "cached", "", True)
    noisy = summarise([boto3, api], {boto3: [0.1, 0.1, 0.1], api: [0.12, 0.12, 0.14]}, {})
    # THEN noise could flip it: not met
    assert verdict(noisy[1]) == "within noise"
    assert target(noisy)[1].startswith("missed: 0 of 1 over 1.3× (1 within noise)")
    # AND every round under it meets it
    clear = summarise([boto3, api], {boto3: [0.1, 0.1, 0.1], api: [0.12, 0.12, 0.125]}, {})
    assert verdict(clear[1]) == "meets"
    assert target(clear)[1].startswith("met")


def test_cold_start_times_functions_api_with_bytecode_and_without() -> None:
    chosen = variants(["formwork.aws.api", "formwork.aws.relay"])
    assert {(v.label, v.mode) for v in chosen if v.label == "import boto3"} == {
        ("import boto3", "cached"),
        ("import boto3", "none"),
    }
    judged = {(v.label, v.lambda_like, v.mode) for v in chosen if v.judged}
    assert ("import formwork.aws.api", False, "none") in judged
    assert ("import formwork.aws.api", True, "none") in judged
    assert ("import formwork.aws.relay", False, "cached") in judged
    assert ("import formwork.aws.relay", False, "none") not in judged


# ---------------------------------------------------------------------------- events


def test_tool_event_is_the_fixture_with_path_and_body_replaced() -> None:
    # WHEN a tool event is built
    event = tool_event("conv-9", "form_fill", "call-1", {"form": "travel-claim"})
    # THEN path, path parameters and body name the call, and the verified claims stay
    assert event["rawPath"] == "/conversations/conv-9/tools/form_fill"
    assert event["requestContext"]["http"]["path"] == event["rawPath"]
    assert event["pathParameters"] == {"conversation_id": "conv-9", "tool_name": "form_fill"}
    assert json.loads(event["body"]) == {
        "tool_call_id": "call-1",
        "input": {"form": "travel-claim"},
    }
    assert int(event["headers"]["content-length"]) == len(event["body"].encode())
    claims = event["requestContext"]["authorizer"]["jwt"]["claims"]
    assert f"{claims['tenant']}/{claims['sub']}" == PRINCIPAL
    # AND building one does not change the next (the fixture is copied)
    assert tool_event("conv-1", "form_read", "c", {})["pathParameters"]["tool_name"] == "form_read"
    assert status_event("conv-2")["rawPath"] == "/conversations/conv-2/status"


# ---------------------------------------------------------------------------- emulator

TABLE = "emulated"


@pytest.fixture
def moto_table() -> Any:
    from moto import mock_aws

    from formwork.infra.local.dynamodb import create_table

    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        create_table(client, TABLE)
        yield client


def _put(pk: str, sk: str, value: str) -> dict[str, Any]:
    item = {"pk": {"S": pk}, "sk": {"S": sk}, "v": {"S": value}}
    return {
        "Put": {"TableName": TABLE, "Item": item, "ConditionExpression": "attribute_not_exists(pk)"}
    }


def _all_items(client: Any) -> list[dict[str, Any]]:
    return sorted(client.scan(TableName=TABLE)["Items"], key=lambda i: (i["pk"]["S"], i["sk"]["S"]))


def test_emulator_cancelled_transaction_leaves_the_table_as_it_was(moto_table: Any) -> None:
    # GIVEN the patched emulator and a table holding one item
    with patched_moto() as patched:
        assert patched
        moto_table.transact_write_items(TransactItems=[_put("I#1", "STATE", "v1")])
        before = _all_items(moto_table)
        # WHEN a transaction writes a new item, then fails its condition on the existing one
        with pytest.raises(moto_table.exceptions.TransactionCanceledException):
            moto_table.transact_write_items(
                TransactItems=[_put("I#1", "R#1", "new"), _put("I#1", "STATE", "v2")]
            )
        # THEN nothing of it remains: the new item is gone, the old one unchanged
        assert _all_items(moto_table) == before
        # AND a transaction that passes is applied whole
        moto_table.transact_write_items(
            TransactItems=[_put("I#1", "R#1", "new"), _put("I#2", "STATE", "v1")]
        )
        assert len(_all_items(moto_table)) == 3


def test_emulator_query_returns_what_stock_moto_returns(moto_table: Any) -> None:
    # GIVEN items in several partitions, written in no particular order
    for pk, sk in [("B", "2"), ("A", "1"), ("B", "1"), ("C", "9"), ("B", "3")]:
        moto_table.transact_write_items(TransactItems=[_put(pk, sk, f"{pk}{sk}")])

    def query(**extra: Any) -> Any:
        return moto_table.query(
            TableName=TABLE,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": "B"}},
            **extra,
        )["Items"]

    stock = [query(), query(ScanIndexForward=False), query(Limit=2)]
    # WHEN the same queries run on the patched emulator
    with patched_moto():
        patched = [query(), query(ScanIndexForward=False), query(Limit=2)]
    # THEN the items and their order are the same
    assert patched == stock
    assert [i["sk"]["S"] for i in stock[0]] == ["1", "2", "3"]
