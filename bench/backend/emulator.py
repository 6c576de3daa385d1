"""The bench's DynamoDB emulator: the project's moto server, with a cheaper transaction rollback.

Two costs of stock moto (5.2) grow with everything the table holds, where DynamoDB's do not:
``TransactWriteItems`` deep-copies the whole table once per action (its rollback backup), and a
``Query`` on the base table sorts and filters every item of the table to find one partition.
Measured while writing this bench: a ``form_fill`` (2 Queries + 1 transaction) takes about
17 ms on a table of 11 items and about 300 ms on one of 300; the bench prints its own figures.
A benchmark that writes a few thousand items would time moto instead of our code.

``patched_moto()`` keeps moto's own logic and changes only those two scans. A transaction
snapshots the items it names (a deep copy of each, or "absent"), runs moto's code with the
whole-table copy made a no-op, and puts those items back if moto refuses it. A base-table
Query runs moto's code over the queried partition's items only. Results are the same as stock
moto's; one difference: stream records of a cancelled transaction's partly applied actions
are not taken back (nothing in the bench reads the stream).

``python -m bench.backend.emulator --port N`` serves it exactly as ``formwork.infra.local.dynamodb``
serves stock moto (single-threaded, loopback). ``emulated_stack(...)`` is a ``LocalStack``
whose DynamoDB is this server; everything else in the stack is the project's own.

``request_cost`` times one Query and one transaction on an emulator at several table sizes;
``fill_growth`` times a one-field ``form_fill`` over HTTP on whole local stacks, one per
DynamoDB (stock moto, this emulator, AWS's DynamoDB Local, the local stack's default), at the
start and after a few hundred calls, taking turns call by call so the machine's load reaches
each alike.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import inspect
import logging
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from unittest import mock

from formwork.infra.local.dynamodb import ROOT, LocalDynamoDB, LoopbackServer, serve, wait_for_port

_MARKER = "original_table_state"
"""The name of stock moto's whole-table backup in ``transact_write_items``."""


class _TablesAreNotCopied:
    """Stands in for the ``copy`` module inside moto's DynamoDB backend: a deep copy of a
    whole ``Table`` returns the table itself; anything else is copied as usual."""

    def __init__(self, table_type: type) -> None:
        self._table_type = table_type

    def __getattr__(self, name: str) -> Any:
        return getattr(copy, name)

    def deepcopy(self, value: Any, memo: dict[int, Any] | None = None) -> Any:
        if isinstance(value, self._table_type):
            return value
        return copy.deepcopy(value, memo)


@contextlib.contextmanager
def patched_moto() -> Iterator[bool]:
    """moto's DynamoDB backend patched in this process inside the block; yields False (and
    patches nothing) when this moto's code is not the code the patch was written for."""
    from moto.dynamodb import models
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.table import Table

    transact = DynamoDBBackend.transact_write_items
    query = Table.query
    if not (
        _MARKER in inspect.getsource(transact)
        and "copy.deepcopy(" in inspect.getsource(transact)
        and "for item in self.all_items()" in inspect.getsource(query)
    ):
        yield False
        return
    with (
        mock.patch.object(models, "copy", _TablesAreNotCopied(Table)),
        mock.patch.object(DynamoDBBackend, "transact_write_items", _rollback_touched(transact)),
        mock.patch.object(Table, "query", _query_one_partition(query)),
    ):
        yield True


def _rollback_touched(original: Any) -> Any:
    """``transact_write_items`` restoring, on failure, only the items the transaction names."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    def snapshot(backend: Any, entry: Any) -> tuple[Any, Any, Any, Any] | None:
        try:
            op_type, op = next(iter(entry.items()))
            table = backend.tables.get(op.get("TableName"))
            if table is None:
                return None
            key = op["Item"] if op_type == "Put" else op["Key"]
            hash_value = DynamoType(key[table.hash_key_attr])
            range_value = DynamoType(key[table.range_key_attr]) if table.range_key_attr else None
        except (AttributeError, KeyError, StopIteration, TypeError, ValueError):
            return None  # malformed: moto's own checks refuse it before anything is written
        if range_value is None:
            current = table.items.get(hash_value)
        else:
            current = table.items.get(hash_value, {}).get(range_value)
        return table, hash_value, range_value, copy.deepcopy(current)

    def restore(table: Any, hash_value: Any, range_value: Any, item: Any) -> None:
        if range_value is None:
            if item is None:
                table.items.pop(hash_value, None)
            else:
                table.items[hash_value] = item
            return
        partition = table.items[hash_value]
        if item is None:
            partition.pop(range_value, None)
            if not partition:
                del table.items[hash_value]
        else:
            partition[range_value] = item

    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
        taken = [s for s in (snapshot(self, e) for e in transact_items[:100]) if s is not None]
        try:
            original(self, transact_items)
        except BaseException:
            for table, hash_value, range_value, item in reversed(taken):
                restore(table, hash_value, range_value, item)
            raise

    return transact_write_items


def _query_one_partition(original: Any) -> Any:
    """``Table.query`` that, on the base table, looks at the queried partition only (stock
    moto sorts and filters every item of the table); same items, same order."""
    signature = inspect.signature(original)

    def query(self: Any, *args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(self, *args, **kwargs)
        hash_key = bound.arguments.get("hash_key")
        if bound.arguments.get("index_name") is not None or hash_key is None:
            return original(self, *args, **kwargs)
        partition = self.items.get(hash_key)
        if partition is None:
            items = []
        elif self.range_key_attr:
            items = list(partition.values())
        else:
            items = [partition]

        def all_items() -> list[Any]:
            return sorted(
                items, key=lambda x: (x.hash_key, x.range_key) if x.range_key else x.hash_key
            )

        self.all_items = all_items  # shadows the method for this call only
        try:
            return original(self, *args, **kwargs)
        finally:
            del self.all_items

    return query


class EmulatedDynamoDB(LocalDynamoDB):
    """``LocalDynamoDB`` running this module's server instead of stock moto's."""

    def start(self) -> EmulatedDynamoDB:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bench.backend.emulator", "--port", str(self.port)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=None,
        )
        wait_for_port(self.port, process=self.process)
        return self


@contextlib.contextmanager
def emulated_stack(**options: Any) -> Iterator[Any]:
    """A started ``LocalStack(**options)`` whose DynamoDB is ``EmulatedDynamoDB`` (in the
    place of moto's server)."""
    from formwork.infra.local import stack as stack_module

    local = stack_module.LocalStack(**{**options, "dynamodb": stack_module.MOTO})
    with mock.patch.object(stack_module, "LocalDynamoDB", EmulatedDynamoDB):
        local.start()
    try:
        yield local
    finally:
        local.stop()


@dataclass(frozen=True, slots=True)
class Cost:
    items: int
    """Items in the table when measured."""
    query: float
    """Median seconds of a consistent Query of a three-item partition."""
    transaction: float
    """Median seconds of a ``TransactWriteItems`` of three conditional Puts (a commit's shape)."""


def request_cost(
    emulator: Callable[[], LoopbackServer], sizes: tuple[int, ...], samples: int
) -> list[Cost]:
    """What one Query and one transaction cost on ``emulator`` at each table size."""
    import statistics
    import time

    from formwork.infra.local.dynamodb import client, create_table

    table = "emulator-cost"
    payload = {"S": "x" * 300}
    results: list[Cost] = []
    with emulator() as db:
        dynamodb = client(db.endpoint)
        create_table(dynamodb, table)
        held = 0
        for size in sizes:
            while held < size:
                batch = [
                    {
                        "PutRequest": {
                            "Item": {"pk": {"S": f"F#{n}"}, "sk": {"S": "S"}, "v": payload}
                        }
                    }
                    for n in range(held, min(size, held + 25))
                ]
                dynamodb.batch_write_item(RequestItems={table: batch})
                held += len(batch)
            queries, transactions = [], []
            for n in range(samples):
                pk = {"S": f"T#{size}#{n}"}
                actions = [
                    {
                        "Put": {
                            "TableName": table,
                            "Item": {"pk": pk, "sk": {"S": sk}, "v": payload},
                            "ConditionExpression": "attribute_not_exists(pk)",
                        }
                    }
                    for sk in ("STATE", "R#1", "C#1")
                ]
                start = time.perf_counter()
                dynamodb.transact_write_items(TransactItems=actions)
                transactions.append(time.perf_counter() - start)
                start = time.perf_counter()
                found = dynamodb.query(
                    TableName=table,
                    KeyConditionExpression="pk = :pk",
                    ExpressionAttributeValues={":pk": pk},
                    ConsistentRead=True,
                )
                queries.append(time.perf_counter() - start)
                if found["Count"] != 3:
                    raise SystemExit(f"bench: emulator query found {found['Count']} of 3 items")
                held += 3
            results.append(Cost(size, statistics.median(queries), statistics.median(transactions)))
    return results


@dataclass(frozen=True, slots=True)
class Growth:
    dynamodb: str
    """Which DynamoDB the stack ran on."""
    first: list[float]
    """Seconds of the first timed calls (after the warm-up), in order."""
    last: list[float]
    """Seconds of the last ``len(first)`` calls."""
    calls: int
    """Timed calls in all (the last window ends there)."""


FILL_FORM = "travel-claim"
FILL_VALUES = ("Ada Lovelace", "Ada King")
"""A one-field fill that alternates between two values, so every call commits a revision."""


def fill_growth(calls: int, window: int, warmup: int = 5) -> list[Growth]:
    """A one-field ``form_fill`` over HTTP, ``calls`` times in a row on one claim, on a local
    stack per DynamoDB; the first and the last ``window`` calls' seconds of each.

    The stacks run side by side (no Temporal, one execution environment each) and take turns
    call by call. The gateways turn Nagle's algorithm off (``latency.nodelay_gateway``), so
    the 40 ms delayed-ACK stall of keep-alive responses does not hide the DynamoDB's share.
    """
    from bench.backend.client import ApiClient
    from bench.backend.latency import nodelay_gateway
    from formwork.infra.local.stack import DYNAMODB_LOCAL, MOTO, LocalStack

    if calls < 2 * window:
        raise ValueError("fill_growth needs at least two windows of calls")
    options: dict[str, Any] = {
        "api_port": 0,
        "dynamodb_port": 0,
        "max_environments": 1,
        "quiet": True,
    }
    kinds: list[tuple[str, Callable[[], contextlib.AbstractContextManager[Any]]]] = [
        ("stock moto", lambda: LocalStack(**options, dynamodb=MOTO)),
        ("bench emulator", lambda: emulated_stack(**options)),
        ("DynamoDB Local", lambda: LocalStack(**options, dynamodb=DYNAMODB_LOCAL)),
    ]
    seconds: dict[str, list[float]] = {name: [] for name, _ in kinds}
    with nodelay_gateway(), contextlib.ExitStack() as running:
        clients: dict[str, ApiClient] = {}
        for name, start in kinds:
            stack = running.enter_context(start())
            clients[name] = ApiClient(stack.api_url, "growth")
            running.callback(clients[name].close)
            _check(clients[name].call("growth-1", "form_start", "start", {"form": FILL_FORM}))
        for n in range(warmup + calls):
            values = {"full_name": FILL_VALUES[n % 2]}
            for name, client in clients.items():
                reply = client.call(
                    "growth-1", "form_fill", f"fill-{n}", {"form": FILL_FORM, "values": values}
                )
                _check(reply)
                if n >= warmup:
                    seconds[name].append(reply.seconds)
    return [Growth(name, taken[:window], taken[-window:], calls) for name, taken in seconds.items()]


def _check(reply: Any) -> None:
    if not reply.ok:
        raise SystemExit(f"bench: a tool call over HTTP failed: {reply.status} {reply.body}")


def main() -> None:
    parser = argparse.ArgumentParser(description="moto's DynamoDB with a cheap rollback")
    parser.add_argument("--port", type=int, required=True)
    port = parser.parse_args().port
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    with patched_moto() as patched:
        if not patched:
            print(
                "bench emulator: this moto's transact_write_items is not the one the patch "
                "knows; serving stock moto",
                file=sys.stderr,
            )
        serve(port)


if __name__ == "__main__":
    main()
