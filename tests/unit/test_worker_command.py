"""The worker's command: ``python -m formwork.worker``, and the one of earlier releases.

The process that makes the worker's App (``formwork.bootstrap``) and serves it lives in
``formwork.worker``; ``python -m formwork.temporal.worker`` (what a task definition deployed before
this release runs) starts the same process, so a worker keeps starting during an upgrade.
Neither needs Temporal to say how it is used or to refuse a bad environment.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run(module: str, *args: str, **environment: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TABLE_", "TEMPORAL_"))}
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        env={**env, **environment},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("module", ["formwork.worker", "formwork.temporal.worker"])
def test_both_commands_are_the_one_worker(module: str) -> None:
    # WHEN either command is asked how it is used / THEN it is formwork.worker's answer
    shown = run(module, "--help")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("usage: python -m formwork.worker")
    assert "--alive-file" in shown.stdout and "--grace" in shown.stdout


@pytest.mark.parametrize("module", ["formwork.worker", "formwork.temporal.worker"])
def test_a_worker_without_a_table_refuses_to_start(module: str) -> None:
    # GIVEN no TABLE_NAME / WHEN the worker starts / THEN it exits 2 naming the variable,
    # before connecting to anything
    refused = run(module)
    assert refused.returncode == 2
    assert refused.stderr.startswith("formwork.worker: TABLE_NAME is not set")


def test_a_bad_setting_is_named_before_anything_connects() -> None:
    refused = run("formwork.worker", TABLE_NAME="forms", TEMPORAL_ADDRESS="no port")
    assert refused.returncode == 2
    assert "TEMPORAL_ADDRESS='no port' is not valid" in refused.stderr
