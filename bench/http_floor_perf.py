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

Run: ``.venv/bin/python -m bench.http_floor_perf [--rounds N]``; prints the report and
writes ``http_floor.md`` to the run's folder (``bench.runs``); progress goes to stderr.
"""

from __future__ import annotations

import argparse
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
                order = paths if n % 2 == 0 else paths[::-1]
                for name, timed in order:
                    seconds = timed(n)
                    if n >= warmup:
                        samples[name].append(seconds)
    finally:
        fill_client.close()
        bare_client.close()
    return Result(samples, item_sizes(recorded), rounds)


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


def render(result: Result) -> str:
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
    verdicts = []
    for p, label in ((50, "p50"), (99, "p99")):
        value, low, high = ratio_noise(s[HTTP_FILL], s[HTTP_BARE], p)
        verdict = "meets" if high <= GOAL else ("misses" if low > GOAL else "within noise of")
        verdicts.append(
            [
                f"HTTP form_fill ÷ HTTP bare, {label}",
                f"{value:.2f}×",
                f"{low:.2f}-{high:.2f}",
                f"≤{GOAL}×: {verdict}",
            ]
        )
    for p, label in ((50, "p50"), (99, "p99")):
        value, low, high = ratio_noise(s[IN_FILL], s[IN_BARE], p)
        verdicts.append(
            [
                f"in-process form_fill ÷ in-process bare, {label}",
                f"{value:.2f}×",
                f"{low:.2f}-{high:.2f}",
                "-",
            ]
        )
    sizes = ", ".join(f"{size:,}" for size in result.sizes)
    return "\n".join(
        [
            "# A form_fill over HTTP against its storage floor (issue 26, item 4)",
            "",
            f"{result.rounds} rounds on one local stack on DynamoDB Local; each round times "
            "every row once, the order flipping every round. The bare handler sends the "
            "recorded fill's Query and TransactWriteItems (items of "
            f"{sizes} bytes as JSON) and nothing else.",
            "",
            table(["path", "calls", "p50", "p99"], rows),
            "",
            table(["ratio", "this run", "noise (bootstrap 5-95%)", "goal"], verdicts),
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=400)
    parser.add_argument("--warmup", type=int, default=30)
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
