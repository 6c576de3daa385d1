"""A local DynamoDB endpoint: moto's server, served single-threaded, and the table from SAM.

The local stack runs on AWS's DynamoDB Local by default (``formwork.infra.local.dynamodb_local``);
moto's server is the other choice (``--dynamodb moto``), the default from an installed
package, and what serves Secrets Manager to the tests. Stock moto copies the whole table on
every ``TransactWriteItems``, so its writes slow down as the table grows.

moto's stock threaded server does not make conditional writes atomic under concurrency (a
read-then-conditional-update race can lose an update that real DynamoDB would refuse). Served
by a single-threaded WSGI server, requests are handled one at a time, so compare-and-set holds.
That is a limit of the emulator, not of DynamoDB.

The table's key schema, attributes, global secondary indexes and stream settings are read
from ``template.yaml`` (the ``FormsTable`` resource), never repeated here.

Run standalone: ``python -m formwork.infra.local.dynamodb --port 8000``.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Self

import yaml

ROOT = Path(__file__).resolve().parents[2]
"""The repository root in a checkout; in an installed package, the folder of the ``formwork``
package."""
TEMPLATE = Path(__file__).with_name("template.yaml")
"""The SAM template: in a checkout a link to the repository's ``template.yaml``, in an
installed package a copy of it (package data), so the local stack runs from either."""
TABLE_RESOURCE = "FormsTable"


class _CfnLoader(yaml.SafeLoader):
    """YAML loader that keeps CloudFormation short-form tags (!Ref, !GetAtt, !Sub) as data."""


def _cfn_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
    name = suffix if suffix in ("Ref", "Condition") else f"Fn::{suffix}"
    return {name: value}


_CfnLoader.add_multi_constructor("!", _cfn_tag)


def load_template(path: Path = TEMPLATE) -> dict[str, Any]:
    with path.open() as handle:
        loaded: dict[str, Any] = yaml.load(handle, Loader=_CfnLoader)
    return loaded


def table_definition(path: Path = TEMPLATE) -> dict[str, Any]:
    """``create_table`` keyword arguments for the template's table (name not included)."""
    props = load_template(path)["Resources"][TABLE_RESOURCE]["Properties"]
    definition: dict[str, Any] = {
        "AttributeDefinitions": props["AttributeDefinitions"],
        "KeySchema": props["KeySchema"],
        "BillingMode": props.get("BillingMode", "PAY_PER_REQUEST"),
    }
    indexes = props.get("GlobalSecondaryIndexes")
    if indexes:
        definition["GlobalSecondaryIndexes"] = indexes
    stream = props.get("StreamSpecification")
    if stream:
        definition["StreamSpecification"] = {
            "StreamEnabled": True,
            "StreamViewType": stream["StreamViewType"],
        }
    return definition


def create_table(client: Any, table_name: str, path: Path = TEMPLATE) -> None:
    """Create the table as the template declares it (no-op if it exists) and wait for it."""
    existing = client.list_tables().get("TableNames", [])
    if table_name not in existing:
        client.create_table(TableName=table_name, **table_definition(path))
    client.get_waiter("table_exists").wait(
        TableName=table_name, WaiterConfig={"Delay": 0.1, "MaxAttempts": 100}
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for_port(
    port: int, timeout: float = 30.0, process: subprocess.Popen[bytes] | None = None
) -> None:
    """Block until something accepts connections on 127.0.0.1:port, or raise."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the server on port {port} exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listening on 127.0.0.1:{port} after {timeout}s")


class LoopbackServer:
    """A server in a child process on a loopback port: ``start`` it (or use it as a context
    manager); ``stop`` ends the process, killing it if it does not exit within ten seconds.
    Both local DynamoDBs are one (``LocalDynamoDB`` here, ``DynamoDBLocal``)."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Self:
        raise NotImplementedError

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class LocalDynamoDB(LoopbackServer):
    """moto's DynamoDB in a child process, single-threaded, on a loopback port."""

    def start(self) -> Self:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "formwork.infra.local.dynamodb", "--port", str(self.port)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.port, process=self.process)
        return self


def client(endpoint: str) -> Any:
    """A boto3 DynamoDB client for a local endpoint (dummy credentials, any region)."""
    import boto3

    return boto3.client(
        "dynamodb",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )


def serve(port: int) -> None:
    """Serve moto's DynamoDB single-threaded on 127.0.0.1:port until interrupted, or until the
    process that started it is gone."""
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import run_simple

    app = DomainDispatcherApplication(create_backend_app)
    exit_with_parent()
    # werkzeug's server binds with SO_REUSEADDR: a port left with connections in TIME_WAIT by
    # a server that just stopped is usable again at once.
    run_simple(
        "127.0.0.1",
        port,
        app,
        threaded=False,
        processes=1,
        request_handler=MotoRequestHandler,
        use_reloader=False,
    )


def exit_with_parent(every: float = 1.0) -> None:
    """End this process when the one that started it is gone, however it ended (a test session
    or a stack killed before it could stop its servers): a local server never outlives what it
    serves. A daemon thread looks every ``every`` seconds."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8000)
    serve(parser.parse_args().port)


if __name__ == "__main__":
    main()
