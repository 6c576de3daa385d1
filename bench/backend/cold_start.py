"""Section 2, part 3: cold start, the import time of each Lambda handler module.

Each figure is measured in a fresh interpreter (``python -c``) that reads the clock, imports
the module and prints how long the import took, so interpreter start-up is not in it. Bytecode
caches are warm (one discarded run first), as they are in a deployed package. Variants run
interleaved and each figure is the median of ``runs``.

Environments: *local* is the function's template variables on this machine (Powertools turns
tracing off outside Lambda); *Lambda-like* adds what the Lambda runtime sets
(``LAMBDA_TASK_ROOT`` among them), so the Tracer is on, as ``Tracing: Active`` makes it in AWS,
and imports and patches the X-Ray SDK at import time. The extra row "+ first service" also
builds what the first tool call builds (``process.app().service``: boto3, the client, the forms),
which a cold invocation pays before its first DynamoDB request.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from bench.backend.inprocess import function_environment
from bench.backend.stats import duration, ratio, table
from infra.local.dynamodb import ROOT, load_template
from infra.local.runtime import functions_from_template

TARGET = 1.5
_HANDLER_DEF = re.compile(r"^def (lambda_handler|handler)\(", re.MULTILINE)
_CHILD = """\
import sys, time
start = time.perf_counter()
{statement}
seconds = time.perf_counter() - start
sys.stdout.write(repr(seconds) + " " + str(int("botocore" in sys.modules)))
"""


@dataclass(frozen=True, slots=True)
class Variant:
    label: str
    statement: str
    lambda_like: bool


@dataclass(frozen=True, slots=True)
class ColdRow:
    label: str
    environment: str
    median: float
    runs: int
    loads_botocore: bool
    is_handler: bool


def handler_modules(root: Path = Path(ROOT)) -> list[str]:
    """Handler modules of the template's functions, plus any ``functions/*.py`` that defines a
    top-level ``lambda_handler`` or ``handler`` (a handler not yet in the template)."""
    modules = [
        config.handler.rsplit(".", 1)[0]
        for config in functions_from_template(load_template()).values()
    ]
    for path in sorted((root / "functions").glob("*.py")):
        if _HANDLER_DEF.search(path.read_text()):
            modules.append(f"functions.{path.stem}")
    return list(dict.fromkeys(modules))


def environment(lambda_like: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "POWERTOOLS_"))}
    env.update(function_environment())
    env["PYTHONPATH"] = str(ROOT)
    env["AWS_REGION"] = env["AWS_DEFAULT_REGION"] = "us-east-1"
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if lambda_like:
        env.update(
            {
                "LAMBDA_TASK_ROOT": str(ROOT),
                "LAMBDA_RUNTIME_DIR": "/var/runtime",
                "AWS_EXECUTION_ENV": "AWS_Lambda_python3.11",
                "AWS_LAMBDA_FUNCTION_NAME": "formwork-ToolsFunction",
                "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "512",
                "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
                "_HANDLER": "functions.api.lambda_handler",
            }
        )
    return env


def time_import(statement: str, env: dict[str, str]) -> tuple[float, bool]:
    """Seconds ``statement`` took in a fresh interpreter, and whether botocore got loaded."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD.format(statement=statement)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"bench: {statement!r} failed in a fresh interpreter:\n{done.stderr}")
    seconds, botocore = done.stdout.split()
    return float(seconds), botocore == "1"


def variants() -> list[Variant]:
    found = [Variant("import boto3", "import boto3", False)]
    for module in handler_modules():
        found.append(Variant(f"import {module}", f"import {module}", False))
        found.append(Variant(f"import {module}", f"import {module}", True))
    if "functions.api" in handler_modules():
        found.append(
            Variant(
                "import functions.api + first service",
                "import functions.api\nfrom formwork import process\nprocess.app().service",
                True,
            )
        )
    return found


def measure(runs: int) -> list[ColdRow]:
    chosen = variants()
    envs = {flag: environment(flag) for flag in (False, True)}
    samples: dict[Variant, list[float]] = defaultdict(list)
    botocore: dict[Variant, bool] = {}
    for round_ in range(runs + 1):
        for variant in chosen:
            seconds, loaded = time_import(variant.statement, envs[variant.lambda_like])
            if round_:  # the first round warms the bytecode caches and is dropped
                samples[variant].append(seconds)
            botocore[variant] = loaded
    return [
        ColdRow(
            v.label,
            "Lambda-like" if v.lambda_like else "local",
            statistics.median(samples[v]),
            runs,
            botocore[v],
            v.statement.startswith("import functions.") and "\n" not in v.statement,
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


def render(rows: list[ColdRow]) -> str:
    base = next(r.median for r in rows if r.label == "import boto3")
    lines = []
    for row in rows:
        verdict = "-"
        if row.is_handler:
            verdict = "meets" if row.median <= TARGET * base else "misses"
        lines.append(
            [
                row.label,
                row.environment,
                duration(row.median),
                ratio(row.median, base),
                "yes" if row.loads_botocore else "no",
                verdict,
            ]
        )
    return table(
        ["import", "environment", f"median of {rows[0].runs}", "vs boto3", "botocore", "≤1.5×"],
        lines,
    )


def render_profile(module: str, profile: list[tuple[str, float]]) -> str:
    total = sum(seconds for _, seconds in profile) or 1.0
    return table(
        [f"imported by {module}", "cumulative", "share"],
        [[name, duration(seconds), f"{seconds / total:.0%}"] for name, seconds in profile],
    )
