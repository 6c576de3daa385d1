"""Capacity units per tool call on DynamoDB Local, against the length of the instance's history.

DynamoDB bills what a request reads and writes, not what it returns: a Query over an
instance's partition costs its whole history even when the call needs only the answers in
force. ``ReturnConsumedCapacity=TOTAL`` makes AWS's DynamoDB Local report the units every
request consumed (moto does not), so this bench runs there: a travel claim at step 2 with 0,
1,000 and 10,000 prior revisions of one field (seeded with one ``create``), then a one-field
``form_fill`` and a ``form_read``, each from a container that has never seen the instance (a
fresh store: what most Lambda invocations are) and from one that has (the same store again).

Run: ``.venv/bin/python -m bench.backend.capacity`` (needs ``make dynamodb-local``); the
backend bench includes its table.
"""

from __future__ import annotations

import itertools
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from forms import Caller, FormRegistry, FormService
from forms.app.loop import CommitPolicy
from forms.app.service import jittered_backoff, new_instance_id, utc_now
from forms.examples.travel_claim import travel_claim
from forms.instance import FieldHistory, FormInstance, Revision
from forms.storage.dynamodb import DynamoDBFormStore
from formwork.infra.local.dynamodb import client, create_table
from formwork.infra.local.dynamodb_local import DynamoDBLocal

HISTORIES = (0, 1_000, 10_000)
CALLER = Caller("bench", "capacity")
T0 = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass
class Units:
    """The capacity a client's requests consumed, and how many requests, since the last take."""

    read: float = 0.0
    write: float = 0.0
    requests: int = 0
    operations: list[str] = field(default_factory=list)

    def take(self) -> Units:
        taken = Units(self.read, self.write, self.requests, list(self.operations))
        self.read, self.write, self.requests, self.operations = 0.0, 0.0, 0, []
        return taken


WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"})
TAKES_CAPACITY = WRITES | {"GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems"}


def metered(endpoint: str) -> tuple[Any, Units]:
    """A client on ``endpoint`` that asks for the consumed capacity of every request, and the
    running total it adds them to."""
    dynamodb = client(endpoint)
    units = Units()

    def ask(params: dict[str, Any], model: Any, **_: Any) -> None:
        if model.name in TAKES_CAPACITY:
            params.setdefault("ReturnConsumedCapacity", "TOTAL")

    def add(parsed: dict[str, Any], model: Any, **_: Any) -> None:
        units.requests += 1
        units.operations.append(model.name)
        consumed = parsed.get("ConsumedCapacity") or []
        for entry in consumed if isinstance(consumed, list) else [consumed]:
            amount = float(entry.get("CapacityUnits", 0.0))
            if model.name in WRITES:
                units.write += amount
            else:
                units.read += amount

    dynamodb.meta.events.register("provide-client-params.dynamodb.*", ask)
    dynamodb.meta.events.register("after-call.dynamodb.*", add)
    return dynamodb, units


def seeded(revisions: int) -> FormInstance:
    """A travel claim at step 2 whose ``full_name`` has ``revisions`` prior revisions."""
    names = [f"Ada {n}" for n in range(revisions)] + ["Ada Lovelace"]
    log = tuple(
        Revision(kind="value", value=name, by="agent", at=T0 + timedelta(seconds=n), prev=n - 1)
        for n, name in enumerate(names)
    )
    staff = (Revision(kind="value", value="AB1234", by="agent", at=T0),)
    return FormInstance.model_validate(
        {
            "id": f"fi_{uuid.uuid4().hex[:12]}",
            "form_id": travel_claim.id,
            "form_version": travel_claim.version,
            "principal": CALLER.principal,
            "conversation_id": CALLER.conversation_id,
            "created_at": T0,
            "history": {
                "full_name": FieldHistory(revisions=log, cursor=len(log) - 1),
                "staff_id": FieldHistory(revisions=staff, cursor=0),
            },
            "state": {"updated_at": T0},
        }
    )


@dataclass(frozen=True)
class Row:
    revisions: int
    call: str
    container: str
    units: Units


def container(dynamodb: Any, table: str) -> FormService:
    """A service on a store of its own: a container that has seen nothing yet."""
    return FormService(
        FormRegistry([travel_claim]),
        DynamoDBFormStore(dynamodb, table),
        None,
        clock=utc_now,
        new_id=new_instance_id,
        timer=time.monotonic,
        policy=CommitPolicy(backoff=jittered_backoff),
    )


def run(endpoint: str) -> list[Row]:
    rows: list[Row] = []
    calls = itertools.count(1)
    for revisions in HISTORIES:
        dynamodb, units = metered(endpoint)
        table = f"capacity-{uuid.uuid4().hex[:8]}"
        create_table(dynamodb, table)
        caller = Caller(CALLER.principal, f"capacity-{revisions}")
        instance = seeded(revisions).model_copy(update={"conversation_id": caller.conversation_id})
        DynamoDBFormStore(dynamodb, table).create(instance)
        warm = container(dynamodb, table)
        for kind in ("cold", "warm"):
            fill = {"form": travel_claim.id, "values": {"destination": f"Lisbon {kind}"}}
            for tool, payload in (("form_fill", fill), ("form_read", {"form": travel_claim.id})):
                service = container(dynamodb, table) if kind == "cold" else warm
                units.take()
                result = service.call(caller, tool, f"cap-{next(calls)}", payload)
                if not result.get("ok"):
                    raise SystemExit(f"capacity bench: {tool} failed: {result}")
                rows.append(Row(revisions, tool, kind, units.take()))
            if kind == "cold":  # the warm container sees the instance once first
                warm.call(caller, "form_read", f"cap-{next(calls)}", {"form": travel_claim.id})
        dynamodb.delete_table(TableName=table)
    return rows


def report(rows: list[Row]) -> list[str]:
    return [
        "| prior revisions | call | container | requests | read units | write units |",
        "|--:|---|---|--:|--:|--:|",
        *(
            f"| {r.revisions:,} | {r.call} | {r.container} | {r.units.requests} "
            f"({', '.join(r.units.operations)}) | {r.units.read:g} | {r.units.write:g} |"
            for r in rows
        ),
    ]


def main() -> None:
    with DynamoDBLocal() as server:
        rows = run(server.endpoint)
    print("\n".join(report(rows)))


if __name__ == "__main__":
    main()
