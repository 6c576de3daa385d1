"""The engine stays pure: no cloud SDKs on import, no clock or randomness inside it."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

FORMS = Path(__file__).resolve().parents[2] / "forms"

HEAVY = ("boto3", "botocore", "temporalio", "aws_lambda_powertools")

IMPORT_EVERYTHING = """
import importlib, json, pkgutil, sys
import forms
names = []
for info in pkgutil.walk_packages(forms.__path__, "forms."):
    if info.name.endswith("contract"):  # the adapters' test suites import pytest
        continue
    importlib.import_module(info.name)
    names.append(info.name)
heavy = sorted(m for m in sys.modules if m.split(".")[0] in {heavy!r})
print(json.dumps({{"imported": names, "heavy": heavy}}))
"""

IMPURE_MODULES = {"uuid", "random", "secrets", "time"}
"""Modules whose import alone means the code reads the clock or randomness."""
IMPURE_CALLS = re.compile(
    r"^(datetime\.(datetime\.)?(now|utcnow|today)|date\.today|time\.\w+|uuid\.\w+"
    r"|random\.\w+|secrets\.\w+|os\.urandom)$"
)
"""Dotted names (as written) that read the clock or randomness."""


def dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def impure_uses(source: str) -> list[str]:
    """Imports of clock/randomness modules and uses of their readers, ignoring strings."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [
                f"{node.lineno}: import {a.name}"
                for a in node.names
                if a.name.split(".")[0] in IMPURE_MODULES
            ]
        elif isinstance(node, ast.ImportFrom) and (node.module or "") in IMPURE_MODULES:
            found.append(f"{node.lineno}: from {node.module} import ...")
        elif isinstance(node, ast.Attribute):
            name = dotted(node)
            if name is not None and IMPURE_CALLS.match(name):
                found.append(f"{node.lineno}: {name}")
    return found


def test_importing_every_forms_module_pulls_in_no_cloud_sdk() -> None:
    # GIVEN a fresh interpreter
    code = IMPORT_EVERYTHING.format(heavy=set(HEAVY))
    # WHEN forms and every module under it are imported
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        cwd=FORMS.parent,
    )
    # THEN it worked, covered the engine, and no SDK module was loaded
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"forms.engine", "forms.app.service", "forms.app.hooks"} <= set(report["imported"])
    assert report["heavy"] == []


def engine_sources() -> list[Path]:
    return sorted(
        p
        for p in FORMS.rglob("*.py")
        if p != FORMS / "app" / "service.py" and (FORMS / "examples") not in p.parents
    )


def test_the_sources_to_check_are_found() -> None:
    names = {p.relative_to(FORMS).as_posix() for p in engine_sources()}
    assert {"engine.py", "operations.py", "app/hooks.py", "instance.py"} <= names
    assert "app/service.py" not in names


@pytest.mark.parametrize("path", engine_sources(), ids=lambda p: p.relative_to(FORMS).as_posix())
def test_no_engine_module_reads_the_clock_or_randomness(path: Path) -> None:
    # GIVEN the source of a module under forms/ (app/service.py, which wires the clock, aside)
    source = path.read_text(encoding="utf-8")
    # WHEN it is searched for clock and randomness reads (code, not strings or comments)
    # THEN there are none
    assert impure_uses(source) == []


@pytest.mark.parametrize(
    "source",
    [
        "import uuid\nx = uuid.uuid4()",
        "from datetime import datetime\nx = datetime.now()",
        "import datetime\nx = datetime.datetime.now()",
        "import time\nx = time.time()",
        "import random\nx = random.random()",
        "from uuid import uuid4",
        "import os\nx = os.urandom(4)",
        "from datetime import date\nx = date.today()",
    ],
)
def test_the_purity_check_catches_clock_and_randomness(source: str) -> None:
    assert impure_uses(source) != []


def test_the_purity_check_ignores_strings_and_datetime_time() -> None:
    source = 'from datetime import time\nFORMATS = {"uuid": "UUID"}\n"""no random here"""'
    assert impure_uses(source) == []
