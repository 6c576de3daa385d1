"""What the well-kept libraries of issue 24 cost, in one run (``python -m bench.libraries``).

Cold start: each row is a fresh interpreter that has already imported ``formwork.aws.api`` (what a
cold start has loaded before its first request builds anything) and times one statement, as
``bench/backend/cold_start.py`` times its rows: bytecode cached, interpreter start-up left out,
every round timing ``import boto3`` first, each row reported as its ratio to the boto3 of its
own round (median over the rounds, range in brackets). The cold-start goal (issue 11) is
``import formwork.aws.api`` within 1.5 times ``import boto3``.

Per request: in this process, the best of several repeats of many calls.

Rows:

- settings: ``Settings.from_env()`` as written (``formwork.config``), against the same
  settings as one pydantic-settings model (``bench/settings_model.py``: import, class
  definitions, one build), and ``import pydantic_settings`` alone;
- webhooks: ``import standardwebhooks``, and one signature by it against one by ``hmac``;
- claims: reading the principal and the context defaults from an event through Powertools'
  ``APIGatewayProxyEventV2`` (``formwork.aws.auth`` now) against walking the dictionaries by hand
  (the code it replaced, kept here), and the import of the data class (loaded with the
  handler's resolver already).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import os
import statistics
import subprocess
import sys
import timeit
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ENVIRONMENT = {"TABLE_NAME": "forms", "TENANT_CLAIM": "tenant"}
BASELINE = "import boto3"
COLD = {
    BASELINE: ("", BASELINE),
    "Settings.from_env() (hand-written)": (
        "import formwork.aws.api",
        "from formwork.config import Settings\nSettings.from_env()",
    ),
    "pydantic-settings model: import, define, build": (
        "import formwork.aws.api",
        "from bench.settings_model import load\nload()",
    ),
    "import pydantic_settings alone": ("import formwork.aws.api", "import pydantic_settings"),
    "import standardwebhooks": ("import formwork.aws.api", "import standardwebhooks"),
    "import APIGatewayProxyEventV2": (
        "import formwork.aws.api",
        "from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEventV2",
    ),
}
"""``{row: (what is already imported, the statement timed)}``."""
_CHILD = "{before}\nimport time\nstarted = time.perf_counter()\n{statement}\n" + (
    "print((time.perf_counter() - started) * 1000)"
)


def cold_once(before: str, statement: str) -> float:
    """Milliseconds ``statement`` takes in a fresh interpreter that ran ``before``."""
    code = _CHILD.format(before=before, statement=statement)
    env = {**os.environ, **ENVIRONMENT, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return float(done.stdout.strip().splitlines()[-1])


def cold(rounds: int) -> dict[str, list[float]]:
    """Each row's ratio to ``import boto3`` of its round, per round (a discarded round first
    writes the bytecode cache)."""
    for before, statement in COLD.values():
        cold_once(before, statement)
    ratios: dict[str, list[float]] = {row: [] for row in COLD}
    times: dict[str, list[float]] = {row: [] for row in COLD}
    for _ in range(rounds):
        base = cold_once(*COLD[BASELINE])
        for row, (before, statement) in COLD.items():
            took = base if row == BASELINE else cold_once(before, statement)
            times[row].append(took)
            ratios[row].append(took / base)
    return {**{f"{row} ms": times[row] for row in COLD}, **ratios}


def claims_by_hand(event: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """How ``formwork.aws.auth`` read the claims before: the dictionaries walked by hand."""
    node: Any = event
    for key in ("requestContext", "authorizer", "jwt", "claims"):
        node = node.get(key) if isinstance(node, Mapping) else None
        if node is None:
            return None
    return node if isinstance(node, Mapping) else None


def per_call(function: Callable[[], object], number: int = 20_000) -> float:
    """Microseconds per call: the best of seven repeats of ``number`` calls."""
    return min(timeit.repeat(function, number=number, repeat=7)) / number * 1e6


def per_request() -> dict[str, float]:
    from formwork.aws.auth import _claims, context_from_event, principal_from_event

    event = json.loads((ROOT / "tests" / "events" / "call_tool.json").read_text())
    pairs = (
        ("person.locale", "locale"),
        ("person.timezone", "zoneinfo"),
        ("person.currency", "currency"),
    )
    from standardwebhooks import Webhook

    key = bytes(range(32))
    body = json.dumps({"form": "travel-claim", "values": {"a": "b" * 200}})
    moment = datetime(2025, 3, 10, tzinfo=UTC)

    def by_hmac() -> str:
        signed = f"msg_1.{int(moment.timestamp())}.{body}".encode()
        return base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()

    webhook = Webhook(key)
    assert webhook.sign("msg_1", moment, body) == f"v1,{by_hmac()}"
    return {
        "claims: walked by hand": per_call(lambda: claims_by_hand(event)),
        "claims: APIGatewayProxyEventV2 (formwork.aws.auth._claims)": per_call(
            lambda: _claims(event)
        ),
        "principal and context defaults (formwork.aws.auth, as served)": per_call(
            lambda: (principal_from_event(event, "tenant"), context_from_event(event, pairs))
        ),
        "signature: hmac by hand": per_call(by_hmac),
        "signature: standardwebhooks Webhook.sign": per_call(
            lambda: webhook.sign("msg_1", moment, body)
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.libraries", description=__doc__)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args(argv)
    measured = cold(args.rounds)
    print(f"cold start ({args.rounds} rounds; ratio to import boto3 of the same round)")
    print("| row | median ms | ratio to import boto3 (range) |")
    print("| --- | ---: | --- |")
    for row in COLD:
        ratio = measured[row]
        print(
            f"| {row} | {statistics.median(measured[row + ' ms']):.1f} | "
            f"{statistics.median(ratio):.3f}x ({min(ratio):.3f}-{max(ratio):.3f}) |"
        )
    print("\nper call (best of 7 repeats)")
    print("| row | microseconds |")
    print("| --- | ---: |")
    for row, took in per_request().items():
        print(f"| {row} | {took:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
