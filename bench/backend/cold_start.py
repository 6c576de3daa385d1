"""Section 2, part 3: cold start, the import time of each Lambda handler module against
``import boto3``, with bytecode cached and without.

Each figure is measured in a fresh interpreter (``python -c``) that reads its CPU clock, runs the
statement and prints the CPU time it took, so interpreter start-up is not in it. CPU time, not
the wall clock: an import is CPU work (its files are in the page cache after the first round),
and on a machine other work shares the wall clock also counts the time spent waiting for a core,
which a Lambda cold start does not share. The goal (issue
26; issue 11 set 1.5) is a ratio: each handler's import, ``formwork.aws.api``'s and the Bedrock
handler's among them, under ``TARGET`` (1.3) times ``import boto3``, by a margin the noise
cannot flip: a row meets it when the highest of its rounds' ratios is under it, misses it when
its median is over it, and is "within noise" in between. Absolute times do not
carry from one run to the next, and on a shared machine not from one second to the next either:
every figure is timed ``REPEATS`` times in a round, each timing beside one of ``import
boto3`` in the same bytecode mode (B V B V B), and the round's ratio is the least of the
figure's timings over the least of the boto3 timings beside them (the figures in reverse order
every other round); reported as the median over the rounds and the range (lowest-highest) as
the noise.
Never against a boto3 time from another run. The child imports nothing before the clock starts
but ``sys`` and ``time``: a module both sides import (``json``) is in both figures.

Bytecode: *cached* is a warm ``__pycache__`` (one discarded round first writes it), as the Lambda
artifact ships it (``make sam-build``); *none* compiles every module from source, as a deployment
without bytecode does on each cold start (``PYTHONDONTWRITEBYTECODE=1`` and an empty
``PYTHONPYCACHEPREFIX``, so no ``.pyc`` is read or written, the standard library's included).

Environments: *local* is the function's template variables on this machine (Powertools turns
tracing off outside Lambda); *Lambda-like* adds what the Lambda runtime sets (``LAMBDA_TASK_ROOT``
among them, and a sampled ``_X_AMZN_TRACE_ID``), so tracing is on, as ``Tracing: Active`` makes it
in AWS, and ``AWS_LAMBDA_RUNTIME_API``, a stand-in for the Extensions API
(``bench.backend.extensions_api``): the API and Bedrock handlers register their after-response
extension while they initialise, as on Lambda, and the import pays for it. The Tracer imports
the X-Ray SDK on the first invocation, not at import, so the rows that also serve the first
``GET /tools`` show what a traced cold start pays before its first answer; "+ service" also
builds what the first tool call builds (``process.app().service``: boto3, the client, the
forms), before its first DynamoDB request. Last, ``LAYERS``: ``import
formwork.aws.api`` built up one layer at a time (each row imports the layers above it too), so a
missed goal says what it is made of: each layer's increment is the median over the rounds of
its ratio minus the previous layer's, in the same round.

Run alone: ``python -m bench.backend.cold_start [--rounds N]`` prints this section's tables
(``bench.backend_perf`` runs it as its section 3).
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.backend.extensions_api import extensions_api
from bench.backend.inprocess import EVENTS, function_environment
from bench.backend.stats import duration, table
from formwork.infra.local.dynamodb import ROOT, load_template
from formwork.infra.local.runtime import functions_from_template

TARGET = 1.3
PYDANTIC_LAYER = "aws_lambda_powertools.event_handler.openapi.params"
"""The layer after which the import is Powertools and pydantic alone, before Formwork's code."""
BASELINE = "import boto3"
MODES = ("cached", "none")
"""Bytecode modes: a warm ``__pycache__``, or none at all."""
REPEATS = 2
"""Timings of each figure in a round, beside as many of ``import boto3`` and one more: in one run
on this shared machine (load 3-4 on 2 cores), ``import formwork.aws.api``'s rounds spread over
1.10-1.56 with one timing each, 1.11-1.25 with the least of two."""

_HANDLER_DEF = re.compile(r"^def (lambda_handler|handler)\(", re.MULTILINE)
_WATCHED = {
    "boto3": "boto3",
    "botocore.client": "botocore",
    "aws_xray_sdk": "X-Ray SDK",
    "aws_lambda_powertools.event_handler.openapi.models": "OpenAPI models",
    "aws_lambda_powertools.event_handler.appsync": "Powertools' other resolvers",
}
"""Modules whose presence after the statement is reported (module: label)."""
_CHILD = """\
import sys, time
{setup}
start = time.process_time()
{statement}
seconds = time.process_time() - start
import json
loaded = [name for name in {watched!r} if name in sys.modules]
sys.stdout.write("\\n" + json.dumps({{"seconds": seconds, "loaded": loaded}}) + "\\n")
"""
_FIRST_GET = """\
import formwork.aws.api
from formwork.aws.local import LocalContext
response = formwork.aws.api.lambda_handler(event, LocalContext())
assert response["statusCode"] == 200, response"""
_LOAD_EVENT = f"import json\nevent = json.loads(open({str(EVENTS / 'list_tools.json')!r}).read())"
_TRACE_HEADER = "Root=1-67d0a1b2-0123456789abcdef01234567;Parent=53995c3f42cd8ad8;Sampled=1"


@dataclass(frozen=True, slots=True)
class Variant:
    label: str
    statement: str
    lambda_like: bool
    mode: str
    setup: str = ""
    judged: bool = False
    """Held to the target: an ``import`` of a handler module."""
    part: bool = False
    """A layer of ``import formwork.aws.api`` (``LAYERS``), to say what the whole costs."""
    module: str = "formwork.aws.api"
    """The handler module whose function a Lambda-like row runs as (``_HANDLER``)."""

    @property
    def is_baseline(self) -> bool:
        return self.label == BASELINE


LAYERS = (
    ("formwork.aws", "the handlers' package (the finder of Powertools' re-exporting packages)"),
    ("aws_lambda_powertools", "Powertools' package: its Logger, Metrics and Tracer"),
    ("aws_lambda_powertools.event_handler.api_gateway", "its API Gateway resolver"),
    (PYDANTIC_LAYER, "its OpenAPI params: pydantic"),
    ("forms.surface.formats", "the tool surface (forms.surface: tools, results, formats)"),
    ("formwork.aws.models.tools", "the tool routes' models and the error bodies"),
    ("formwork.process", "the composition root (formwork.bootstrap, config)"),
    ("formwork.aws.tool_routes", "the tool routes (routing, refusals, openapi, http, auth)"),
    ("formwork.aws.api", "the resolver and the after-response extension: formwork.aws.api"),
)
"""``import formwork.aws.api``, one layer at a time: each is timed with the ones above it (bytecode
cached, local), so what a layer adds is the difference to the row before. A layer includes
what it is first to import."""


@dataclass(frozen=True, slots=True)
class ColdRow:
    label: str
    environment: str
    mode: str
    median: float
    """Seconds, median over the rounds (absolute: for reading only, not across runs)."""
    ratios: tuple[float, ...]
    """Per round: this figure over the same round's ``import boto3`` in the same mode."""
    loaded: tuple[str, ...]
    judged: bool
    part: bool = False

    @property
    def ratio(self) -> float:
        return statistics.median(self.ratios) if self.ratios else 1.0

    @property
    def spread(self) -> tuple[float, float]:
        return (min(self.ratios), max(self.ratios)) if self.ratios else (1.0, 1.0)

    @property
    def is_baseline(self) -> bool:
        return self.label == BASELINE


def handler_modules(root: Path = Path(ROOT)) -> list[str]:
    """Handler modules of the template's functions, plus any ``functions/*.py`` that defines a
    top-level ``lambda_handler`` or ``handler`` (a handler not yet in the template)."""
    modules = [
        config.handler.rsplit(".", 1)[0]
        for config in functions_from_template(load_template()).values()
    ]
    for path in sorted((root / "functions").glob("*.py")):
        if _HANDLER_DEF.search(path.read_text()):
            modules.append(f"formwork.aws.{path.stem}")
    return list(dict.fromkeys(modules))


def environment(
    lambda_like: bool,
    mode: str = "cached",
    pycache: str = "",
    runtime_api: str = "",
    module: str = "formwork.aws.api",
) -> dict[str, str]:
    """The child's environment: the function's variables; for Lambda-like, what the runtime
    sets too, ``module``'s function as the handler, and ``runtime_api`` (when given) as the
    Extensions API the handler registers with while it initialises."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "POWERTOOLS_"))}
    env.update(function_environment())
    env["PYTHONPATH"] = str(ROOT)
    env["AWS_REGION"] = env["AWS_DEFAULT_REGION"] = "us-east-1"
    for name in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX", "_X_AMZN_TRACE_ID"):
        env.pop(name, None)
    if mode == "none":
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["PYTHONPYCACHEPREFIX"] = pycache
    if lambda_like:
        env.update(
            {
                "LAMBDA_TASK_ROOT": str(ROOT),
                "LAMBDA_RUNTIME_DIR": "/var/runtime",
                "AWS_EXECUTION_ENV": "AWS_Lambda_python3.11",
                "AWS_LAMBDA_FUNCTION_NAME": "formwork-ToolsFunction",
                "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "512",
                "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
                "_HANDLER": f"{module}.lambda_handler",
                "_X_AMZN_TRACE_ID": _TRACE_HEADER,
            }
        )
        if runtime_api:
            env["AWS_LAMBDA_RUNTIME_API"] = runtime_api
    return env


def time_statement(variant: Variant, env: dict[str, str]) -> tuple[float, tuple[str, ...]]:
    """Seconds ``variant.statement`` took in a fresh interpreter, and which watched modules it
    left loaded."""
    code = _CHILD.format(setup=variant.setup, statement=variant.statement, watched=tuple(_WATCHED))
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"bench: {variant.label!r} failed in a fresh interpreter:\n{done.stderr}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return float(result["seconds"]), tuple(_WATCHED[name] for name in result["loaded"])


def variants(modules: Sequence[str] | None = None) -> list[Variant]:
    """``import boto3`` in each mode, then what is held against it. Bytecode *none* is timed
    for ``formwork.aws.api`` only (each run compiles everything, about a second)."""
    modules = handler_modules() if modules is None else modules
    found: list[Variant] = []
    for mode in MODES:
        found.append(Variant(BASELINE, BASELINE, False, mode))
        for module in modules:
            if mode == "cached" or module == "formwork.aws.api":
                for lambda_like in (False, True):
                    found.append(
                        Variant(
                            f"import {module}",
                            f"import {module}",
                            lambda_like,
                            mode,
                            judged=True,
                            module=module,
                        )
                    )
        if "formwork.aws.api" in modules:
            found.append(
                Variant("formwork.aws.api + first GET /tools", _FIRST_GET, True, mode, _LOAD_EVENT)
            )
            if mode == "cached":
                found.append(
                    Variant(
                        "formwork.aws.api + first GET /tools + service",
                        _FIRST_GET + "\nfrom formwork import process\nprocess.app().service",
                        True,
                        mode,
                        _LOAD_EVENT,
                    )
                )
                found.extend(
                    Variant(
                        f"layer {n}: {label}",
                        "import " + ", ".join(name for name, _ in LAYERS[: n + 1]),
                        False,
                        mode,
                        part=True,
                    )
                    for n, (_, label) in enumerate(LAYERS)
                )
    return found


def measure(runs: int, repeats: int = REPEATS) -> list[ColdRow]:
    """``runs`` rounds. In each round and bytecode mode, every figure is timed ``repeats``
    times, each timing followed by one of ``import boto3``, the first preceded by one too
    (B V B V B for two), and the round's ratio is the least of the figure's timings over the
    least of those boto3 timings. Beside each other, a figure and its reference are timed under
    the same load; the least of a few timings is the one other work on the machine slowed the
    least (it can only add CPU time: cache misses, a shared core), on each side alike, and
    taking it from one more boto3 timing than figure timings errs against the handler. Even
    rounds take the figures in the listed order, odd rounds in reverse, so that no figure
    always has the same place in a round. One round first, of the cached figures only, writes
    the bytecode and is dropped."""
    chosen = variants()
    samples: dict[Variant, list[float]] = defaultdict(list)
    references: dict[Variant, list[float]] = defaultdict(list)
    loaded: dict[Variant, tuple[str, ...]] = {}
    with (
        tempfile.TemporaryDirectory(prefix="cold-start-pycache-") as empty,
        extensions_api() as runtime_api,
    ):

        def timed(variant: Variant) -> float:
            env = environment(variant.lambda_like, variant.mode, empty, runtime_api, variant.module)
            seconds, loaded[variant] = time_statement(variant, env)
            return seconds

        for variant in chosen:
            if variant.mode == "cached":
                timed(variant)
        for number in range(runs):
            for mode in MODES:
                boto3 = next(v for v in chosen if v.is_baseline and v.mode == mode)
                figures = [v for v in chosen if v.mode == mode and v is not boto3]
                beside = [timed(boto3)]
                for variant in figures if number % 2 == 0 else reversed(figures):
                    mine = []
                    for _ in range(repeats):
                        mine.append(timed(variant))
                        beside.append(timed(boto3))
                    samples[variant].append(min(mine))
                    references[variant].append(min(beside))
                    samples[boto3].extend(beside[:-1])
                    beside = beside[-1:]
                samples[boto3].extend(beside)
        if any(Path(empty).iterdir()):
            raise SystemExit("bench: bytecode was written in the no-bytecode mode")
    return summarise(chosen, samples, loaded, references)


def summarise(
    chosen: Sequence[Variant],
    samples: dict[Variant, list[float]],
    loaded: dict[Variant, tuple[str, ...]],
    references: dict[Variant, list[float]] | None = None,
) -> list[ColdRow]:
    """Each variant's median, and its ratio per round to its reference in that round: the
    ``import boto3`` timings beside it (``references``), or without them the same round's
    ``import boto3`` (same mode). The baseline's median is over all its timings."""
    base = {v.mode: samples[v] for v in chosen if v.is_baseline}
    rounds = len(next((r for r in (references or {}).values()), base[chosen[0].mode]))
    return [
        ColdRow(
            v.label,
            "Lambda-like" if v.lambda_like else "local",
            v.mode,
            statistics.median(samples[v]),
            (1.0,) * rounds
            if v.is_baseline
            else tuple(
                mine / boto3
                for mine, boto3 in zip(
                    samples[v],
                    references[v] if references else base[v.mode],
                    strict=True,
                )
            ),
            loaded.get(v, ()),
            v.judged,
            v.part,
        )
        for v in chosen
    ]


def import_profile(module: str, top: int = 7) -> list[tuple[str, float]]:
    """``python -X importtime -c 'import module'`` (local environment): what each of the
    module's own imports costs, cumulative, largest first (seconds). A dependency shows under
    whichever import loaded it first. ``-X importtime`` adds overhead: read it as shares."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        cwd=ROOT,
        env=environment(False),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return direct_imports(done.stderr, module, top)


def direct_imports(importtime_output: str, module: str, top: int) -> list[tuple[str, float]]:
    """From ``-X importtime`` output: the cumulative time of each import made directly by
    ``module`` (one nesting level below it), the ``top`` largest, then the rest as "other"
    (smaller imports plus the module's own code), so the parts add up to the module's total."""
    parsed: list[tuple[int, str, int]] = []  # (indent, name, cumulative µs), in output order
    for line in importtime_output.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        parts = line[len("import time:") :].split("|")
        if len(parts) != 3:
            continue
        name = parts[2].rstrip()
        parsed.append((len(name) - len(name.lstrip()), name.strip(), int(parts[1])))
    root = next(((i, row) for i, row in enumerate(parsed) if row[1] == module), None)
    if root is None:
        return []
    at, (indent, _, total) = root
    children: list[tuple[str, float]] = []
    # Children are printed before their parent, at one more level of indentation.
    for child_indent, name, cumulative in reversed(parsed[:at]):
        if child_indent <= indent:
            break
        if child_indent == indent + 2:
            children.append((name, cumulative / 1e6))
    ranked = sorted(children, key=lambda item: -item[1])[:top]
    rest = total / 1e6 - sum(seconds for _, seconds in ranked)
    return [*ranked, ("other (smaller imports, own code)", rest)]


def _ratio_cell(row: ColdRow) -> str:
    if row.is_baseline:
        return "1 (baseline)"
    low, high = row.spread
    return f"{row.ratio:.2f}× ({low:.2f}-{high:.2f})"


def verdict(row: ColdRow) -> str:
    """A judged row against ``TARGET``: met only when every round is under it, missed when the
    median is over it, else within noise (a rerun could say either)."""
    if row.spread[1] < TARGET:
        return "meets"
    return "misses" if row.ratio > TARGET else "within noise"


def render(rows: list[ColdRow]) -> str:
    runs = len(rows[0].ratios) if rows else 0
    lines = []
    for row in rows:
        if row.part:
            continue
        lines.append(
            [
                row.label,
                row.environment,
                row.mode,
                duration(row.median),
                _ratio_cell(row),
                ", ".join(row.loaded) or "-",
                verdict(row) if row.judged else "-",
            ]
        )
    return table(
        [
            "timed",
            "environment",
            "bytecode",
            f"median of {runs}",
            "÷ boto3, same round: median (range)",
            "loaded",
            f"<{TARGET}×",
        ],
        lines,
    )


def render_layers(rows: list[ColdRow]) -> str:
    """``LAYERS``: each layer's cumulative ratio (median, range) and what it adds."""
    layers = [row for row in rows if row.part]
    lines = []
    previous: tuple[float, ...] | None = None
    for row in layers:
        added = (
            row.ratios
            if previous is None
            else tuple(now - before for now, before in zip(row.ratios, previous, strict=True))
        )
        lines.append([row.label, _ratio_cell(row), f"+{statistics.median(added):.2f}×"])
        previous = row.ratios
    return table(
        ["import formwork.aws.api, layer by layer", "÷ boto3: median (range)", "adds"], lines
    )


def target(rows: list[ColdRow]) -> tuple[str, str]:
    """The goal's row of the targets table: what was measured, and the verdict."""
    judged = [r for r in rows if r.judged]
    if not judged:
        return "no handler module timed", "not measured"
    measured = "; ".join(
        f"{r.label.removeprefix('import ')} ({r.environment}, {r.mode}) {_ratio_cell(r)}"
        for r in judged
    )
    verdicts = [verdict(r) for r in judged]
    if all(v == "meets" for v in verdicts):
        return measured, "met (every round of every row under it)"
    worst = max(judged, key=lambda r: r.ratio)
    said = (
        f"missed: {verdicts.count('misses')} of {len(judged)} over {TARGET}× "
        f"({verdicts.count('within noise')} within noise), worst {worst.ratio:.2f}× "
        f"({worst.label.removeprefix('import ')}, {worst.environment}, bytecode {worst.mode})"
    )
    layers = [r for r in rows if r.part]
    names = [name for name, _ in LAYERS]
    if len(layers) == len(LAYERS):
        alone = layers[names.index(PYDANTIC_LAYER)]
        said += f"; Powertools' resolver and pydantic alone are {alone.ratio:.2f}× (see the layers)"
    return measured, said


def render_profile(module: str, profile: list[tuple[str, float]]) -> str:
    total = sum(seconds for _, seconds in profile) or 1.0
    return table(
        [f"imported by {module}", "cumulative", "share"],
        [[name, duration(seconds), f"{seconds / total:.0%}"] for name, seconds in profile],
    )


def main(argv: list[str] | None = None) -> int:
    """This section alone: ``rounds`` interleaved rounds, the tables printed."""
    import argparse

    parser = argparse.ArgumentParser(description="Handler import time against import boto3.")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--repeats", type=int, default=REPEATS, help="timings of a figure a round")
    args = parser.parse_args(argv)
    rows = measure(args.rounds, args.repeats)
    said = target(rows)[1]
    print(render(rows), render_layers(rows), f"Goal: {said}.", sep="\n\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
