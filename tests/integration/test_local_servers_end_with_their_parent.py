"""A local DynamoDB never outlives what started it: moto's server and DynamoDB Local end when
the process that started them is gone, even when it was killed before it could stop them
(a test session or a stack killed mid-run must not leave servers behind on the machine)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from formwork.infra.local.dynamodb import ROOT

STARTER = """
import sys, time
from formwork.infra.local.dynamodb import LocalDynamoDB
from formwork.infra.local.dynamodb_local import DynamoDBLocal
moto = LocalDynamoDB().start()
local = DynamoDBLocal().start()
print(moto.process.pid, local.process.pid, flush=True)
time.sleep(600)
"""


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (not gone, not a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_both_servers_end_when_their_starter_is_killed() -> None:
    # GIVEN a process that started moto's server and DynamoDB Local
    starter = subprocess.Popen(
        [sys.executable, "-c", STARTER], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert starter.stdout is not None
    servers = [int(pid) for pid in starter.stdout.readline().split()]
    assert len(servers) == 2 and all(running(pid) for pid in servers)
    # WHEN it is killed, with no chance to stop them
    starter.kill()
    starter.wait()
    # THEN both servers end on their own, within a few seconds
    deadline = time.monotonic() + 20
    while any(running(pid) for pid in servers) and time.monotonic() < deadline:
        time.sleep(0.2)  # polling a condition with a deadline, not standing in for one
    left = [pid for pid in servers if running(pid)]
    for pid in left:
        os.kill(pid, 9)
    assert left == []
