"""A ``form_fill`` over HTTP against the storage work it cannot avoid (issue 26, item 4).

One local stack on AWS's DynamoDB Local (``formwork.infra.local.stack``, no Temporal, one execution
environment per function, the gateway with TCP_NODELAY). Its gateway also serves a bench-only
route, ``POST /bench/bare/{conversation_id}``, with ``bench.backend.bare_storage``: a handler
in an execution environment of its own that parses the body and sends the same ``Query`` and
``TransactWriteItems`` a one-field ``form_fill`` sends, with items of the same size (recorded
from a real fill first, in this process, on the same table), and nothing else.

Timed, in one run, rounds that take turns (the order flips every round), each on its own
keep-alive connection, client-side time:

* **HTTP form_fill**: ``POST /conversations/{id}/tools/form_fill``, a one-field fill on one
  travel claim (the values alternate, so every call commits a revision);
* **HTTP bare**: the bare handler's route on the same gateway, on a claim-sized partition;
* in this process, for where the time goes: ``formwork.aws.api.lambda_handler`` on the API
  Gateway event of the same fill (``tests/events/call_tool.json``), and the bare handler,
  both on the same DynamoDB Local.

The goal is a ratio, HTTP form_fill over HTTP bare, at most ``GOAL`` at p50 and at p99. The
noise: the ratio over ``RESAMPLES`` bootstrap resamples of the rounds (rounds kept whole, so
the pairing holds), 5th to 95th percentile. Nothing is asserted.

``bench.backend_perf`` runs it as its section 5, so ``bench/results/perf.md`` carries it (the
method, both tables and the goal's row). Alone: ``.venv/bin/python -m bench.http_floor_perf
[--rounds N] [--warmup N]`` prints the same tables and writes ``http_floor.md`` to the run's
folder (``bench.runs``); progress goes to stderr.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.backend.inprocess import (
    TENANT_CLAIM,
    body_of,
    check_ok,
    invoke,
    lambda_like_environment,
    quiet_stdout,
    tool_event,
)
from bench.backend.stats import duration, percentile, table
from bench.runs import output_dir

GOAL = 1.3
"""HTTP form_fill over the bare handler, at p50 and at p99 (issue 26)."""
RESAMPLES = 1000
ROUNDS = 600
"""Timed rounds: p99 is then the 6th slowest call of each path."""
WARMUP = 100
"""Untimed rounds first: DynamoDB Local's JVM compiles its hot paths over the first few hundred
requests (its first 20 calls are about 1.5 times its later ones)."""
FORM = "travel-claim"
VALUES = ("Ada Lovelace", "Ada King")
BARE_FUNCTION = "BenchBareFunction"
BARE_HANDLER = "bench.backend.bare_storage.lambda_handler"
HTTP_FILL = "HTTP form_fill"
HTTP_BARE = "HTTP bare (Query + TransactWriteItems)"
IN_FILL = "lambda_handler form_fill, in-process"
IN_BARE = "bare handler, in-process"


def progress(message: str) -> None:
    print(f"[http_floor_perf {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def fill_input(n: int) -> dict[str, Any]:
    return {"form": FORM, "values": {"full_name": VALUES[n % 2]}}


def record(endpoint: str, table_name: str, fills: int) -> dict[str, Any]:
    """The ``Query`` and ``TransactWriteItems`` parameters of a one-field ``form_fill`` after
    ``fills`` others on one claim, from boto3's hooks on an App of this process."""
    from forms.app.conversation import Caller
    from formwork.bootstrap import bootstrap
    from formwork.config import Settings

    app = bootstrap(
        Settings(table_name=table_name, dynamodb_endpoint_url=endpoint, tenant_claim=TENANT_CLAIM)
    )
    seen: dict[str, Any] = {}

    def keep(params: dict[str, Any], model: Any, **_: Any) -> None:
        seen[model.name] = json.loads(json.dumps(params))

    caller = Caller(principal="bench/recrd", conversation_id="floor-r", context=())
    app.service.call(caller, "form_start", "start", {"form": FORM})
    app.dynamodb_client.meta.events.register("provide-client-params.dynamodb.*", keep)
    for n in range(fills + 1):
        seen.clear()
        result = app.service.call(caller, "form_fill", f"fill-{n}", fill_input(n))
        if not result.get("ok"):
            raise SystemExit(f"bench: recording a form_fill failed: {result}")
    if set(seen) != {"Query", "TransactWriteItems"}:
        raise SystemExit(f"bench: a form_fill sent {sorted(seen)}, not a Query and a transaction")
    return {"query": seen["Query"], "transaction": seen["TransactWriteItems"]}


def item_sizes(recorded: dict[str, Any]) -> list[int]:
    """Each recorded put's item, in bytes of its JSON (for the report)."""
    return [
        len(json.dumps(action["Put"]["Item"], separators=(",", ":")))
        for action in recorded["transaction"]["TransactItems"]
    ]


@dataclass(frozen=True, slots=True)
class Result:
    samples: dict[str, list[float]]
    sizes: list[int]
    rounds: int
    warmup: int


def measure(rounds: int, warmup: int) -> Result:
    from bench.backend.bare_storage import REQUESTS_VARIABLE
    from bench.backend.client import ApiClient
    from formwork.infra.local.gateway import Route
    from formwork.infra.local.runtime import FunctionConfig, ProcessFunction
    from formwork.infra.local.stack import DYNAMODB_LOCAL, LocalStack

    lambda_like_environment()
    with (
        tempfile.TemporaryDirectory(prefix="http-floor-") as folder,
        LocalStack(
            api_port=0, dynamodb_port=0, max_environments=1, quiet=True, dynamodb=DYNAMODB_LOCAL
        ) as stack,
    ):
        assert stack.gateway is not None
        progress("recording a form_fill's requests")
        recorded = record(stack.dynamodb_endpoint, stack.table_name, warmup)
        path = Path(folder) / "requests.json"
        path.write_text(json.dumps(recorded))
        tools = stack.functions["ToolsFunction"].config
        environment = {**stack.environment, REQUESTS_VARIABLE: str(path)}
        bare = ProcessFunction(
            FunctionConfig(
                BARE_FUNCTION, BARE_HANDLER, tools.timeout, tools.memory_mb, tools.environment
            ),
            environment,
            max_environments=1,
            quiet=True,
        ).start()
        try:
            stack.gateway.add_route(
                Route("POST", "/bench/bare/{conversation_id}", BARE_FUNCTION), bare
            )
            return _run(stack, recorded, environment, rounds, warmup, ApiClient)
        finally:
            bare.close()


def _run(
    stack: Any,
    recorded: dict[str, Any],
    environment: dict[str, str],
    rounds: int,
    warmup: int,
    client_type: Callable[..., Any],
) -> Result:
    from bench.backend import bare_storage
    from formwork.bootstrap import bootstrap
    from formwork.config import Settings

    fill_client = client_type(stack.api_url, "floor")
    bare_client = client_type(stack.api_url, "floor")
    app = bootstrap(
        Settings(
            table_name=stack.table_name,
            dynamodb_endpoint_url=stack.dynamodb_endpoint,
            tenant_claim=TENANT_CLAIM,
        )
    )
    os.environ.update(
        {k: v for k, v in environment.items() if k.startswith(("AWS_", "DYNAMODB_", "TABLE_"))}
    )
    os.environ[bare_storage.REQUESTS_VARIABLE] = environment[bare_storage.REQUESTS_VARIABLE]
    check = fill_client.call("floor-1", "form_start", "start", {"form": FORM})
    if not check.ok:
        raise SystemExit(f"bench: form_start over HTTP failed: {check.status} {check.body}")
    with quiet_stdout():
        started = invoke(tool_event("floor-2", "form_start", "start", {"form": FORM}), app)
    check_ok(body_of(started), "form_start")

    def http_fill(n: int) -> float:
        reply = fill_client.call("floor-1", "form_fill", f"fill-{n}", fill_input(n))
        if not reply.ok:
            raise SystemExit(f"bench: form_fill over HTTP failed: {reply.status} {reply.body}")
        return float(reply.seconds)

    def http_bare(n: int) -> float:
        reply = bare_client.request(
            "POST", "/bench/bare/floor-1", {"tool_call_id": f"bare-{n}", "input": fill_input(n)}
        )
        if not reply.ok:
            raise SystemExit(f"bench: the bare handler failed: {reply.status} {reply.body}")
        return float(reply.seconds)

    def in_fill(n: int) -> float:
        event = tool_event("floor-2", "form_fill", f"fill-{n}", fill_input(n))
        start = time.perf_counter()
        response = invoke(event, app)
        taken = time.perf_counter() - start
        check_ok(body_of(response), "form_fill in-process")
        return taken

    def in_bare(n: int) -> float:
        event = {
            "body": json.dumps({"tool_call_id": f"in-{n}", "input": fill_input(n)}),
            "pathParameters": {"conversation_id": "floor-2"},
        }
        start = time.perf_counter()
        bare_storage.lambda_handler(event, None)
        return time.perf_counter() - start

    paths: list[tuple[str, Callable[[int], float]]] = [
        (HTTP_FILL, http_fill),
        (HTTP_BARE, http_bare),
        (IN_FILL, in_fill),
        (IN_BARE, in_bare),
    ]
    samples: dict[str, list[float]] = {name: [] for name, _ in paths}
    progress(f"{warmup} warm-up rounds, then {rounds} timed rounds of {len(paths)} calls")
    try:
        with quiet_stdout():
            for n in range(warmup + rounds):
                if n == warmup:
                    # What the warm-up left (the App, the stack's objects) is kept out of this
                    # process's collections: a pause there would land on a timed call.
                    gc.collect()
                    gc.freeze()
                order = paths if n % 2 == 0 else paths[::-1]
                for name, timed in order:
                    seconds = timed(n)
                    if n >= warmup:
                        samples[name].append(seconds)
    finally:
        gc.unfreeze()
        fill_client.close()
        bare_client.close()
    return Result(samples, item_sizes(recorded), rounds, warmup)


def ratio_noise(
    top: Sequence[float], bottom: Sequence[float], p: float, resamples: int = RESAMPLES
) -> tuple[float, float, float]:
    """``percentile(top, p) / percentile(bottom, p)``, and its 5th and 95th percentile over
    bootstrap resamples of the rounds (the i-th of each kept together)."""
    pick = random.Random(26)
    n = len(top)
    ratios = []
    for _ in range(resamples):
        chosen = [pick.randrange(n) for _ in range(n)]
        ratios.append(
            percentile([top[i] for i in chosen], p) / percentile([bottom[i] for i in chosen], p)
        )
    return percentile(top, p) / percentile(bottom, p), percentile(ratios, 5), percentile(ratios, 95)


@dataclass(frozen=True, slots=True)
class Ratio:
    """One ratio of the run: its value, its bootstrap noise (5th-95th percentile), and its
    value in each half of the rounds (how far it drifted within the run)."""

    label: str
    value: float
    low: float
    high: float
    halves: tuple[float, float]

    def verdict(self) -> str:
        """Against ``GOAL``: *meets* when even the noise's top is at most the goal, *misses*
        when its bottom is over it, else *within noise*."""
        if self.high <= GOAL:
            return "meets"
        return "misses" if self.low > GOAL else "within noise"


def ratios(result: Result, top: str, bottom: str) -> list[Ratio]:
    """``top`` over ``bottom`` at p50 and p99, each with its noise and halves."""
    s = result.samples
    half = len(s[top]) // 2
    found = []
    for p in (50, 99):
        value, low, high = ratio_noise(s[top], s[bottom], p)
        halves = tuple(
            percentile(s[top][part], p) / percentile(s[bottom][part], p)
            for part in (slice(0, half), slice(half, None))
        )
        found.append(Ratio(f"p{p}", value, low, high, (halves[0], halves[1])))
    return found


def tables(result: Result) -> list[str]:
    """The paths' percentiles, then the ratios: HTTP (the goal's) and in-process."""
    s = result.samples
    rows = [
        [
            name,
            str(len(s[name])),
            duration(percentile(s[name], 50)),
            duration(percentile(s[name], 99)),
        ]
        for name in (HTTP_FILL, HTTP_BARE, IN_FILL, IN_BARE)
    ]
    lines = []
    for what, top, bottom, judged in (
        ("HTTP form_fill ÷ HTTP bare", HTTP_FILL, HTTP_BARE, True),
        ("in-process form_fill ÷ in-process bare", IN_FILL, IN_BARE, False),
    ):
        for r in ratios(result, top, bottom):
            lines.append(
                [
                    f"{what}, {r.label}",
                    f"{r.value:.2f}×",
                    f"{r.low:.2f}-{r.high:.2f}",
                    f"{r.halves[0]:.2f}×, {r.halves[1]:.2f}×",
                    f"≤{GOAL}×: {r.verdict()}" if judged else "-",
                ]
            )
    headers = ["ratio", "this run", "noise (bootstrap 5-95%)", "first half, second half", "goal"]
    return [table(["path", "calls", "p50", "p99"], rows), "", table(headers, lines)]


def method(result: Result) -> str:
    """What was timed, how, and what the noise is, in one paragraph."""
    sizes = ", ".join(f"{size:,}" for size in result.sizes)
    return (
        f"{result.rounds} rounds after {result.warmup} untimed ones, on one local stack on "
        "DynamoDB Local (no Temporal, one execution environment per function, the gateway with "
        "TCP_NODELAY); each round times every row once, the order flipping every round, each "
        "HTTP path on its own keep-alive connection, client-side time. *HTTP bare* is a handler "
        "on the same gateway, in an execution environment of its own "
        "(`bench/backend/bare_storage.py`, a route the template does not ship), that sends the "
        "Query and the TransactWriteItems a one-field `form_fill` sends, recorded from a real "
        f"one on the same table (items of {sizes} bytes as JSON), and nothing else. The "
        "in-process rows time `lambda_handler` on the fill's API Gateway event and the bare "
        "handler in this process, for where the time goes. A ratio's noise is its 5th-95th "
        f"percentile over {RESAMPLES:,} bootstrap resamples of the rounds (each round kept "
        "whole); its halves are the same ratio over the first and the last half of the rounds."
    )


def target(result: Result) -> tuple[str, str]:
    """The goal's row of a targets table: what was measured, and the verdict."""
    found = ratios(result, HTTP_FILL, HTTP_BARE)
    measured = "; ".join(f"{r.label} {r.value:.2f}× ({r.low:.2f}-{r.high:.2f})" for r in found)
    verdicts = {r.label: r.verdict() for r in found}
    if all(v == "meets" for v in verdicts.values()):
        return measured, "met at p50 and p99, noise included"
    said = ", ".join(f"{label} {verdict}" for label, verdict in verdicts.items())
    return measured, f"not met throughout: {said} (noise: the bootstrap's 5-95%)"


def render(result: Result) -> str:
    return "\n".join(
        [
            "# A form_fill over HTTP against its storage floor (issue 26, item 4)",
            "",
            method(result),
            "",
            *tables(result),
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--warmup", type=int, default=WARMUP)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    result = measure(args.rounds, args.warmup)
    report = render(result)
    print(report)
    if not args.no_write:
        out = output_dir(False) / "http_floor.md"
        out.write_text(report + "\n")
        progress(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
