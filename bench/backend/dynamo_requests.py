"""Section 2, part 2: DynamoDB requests per tool call, by kind, counted from boto3's hooks.

Each tool call goes through ``formwork.aws.api.lambda_handler`` in this process with an App built
by the composition root (``formwork.bootstrap``) over ``DynamoDBFormStore`` on the local
endpoint; a ``RequestLog`` on the App's boto3 client counts what that one call sent. A
"container" is one App with its own client, store and service, as one warm Lambda execution
environment has.

The conflict is made deterministic: container B writes to the instance from inside container
A's ``before-call`` hook of A's ``TransactWriteItems``, i.e. after A has read and before its
write reaches the table, which is the race two writers really run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from bench.backend.counting import RequestLog, Tally
from bench.backend.inprocess import (
    PRINCIPAL,
    TENANT_CLAIM,
    body_of,
    check_ok,
    invoke,
    quiet_stdout,
    status_event,
    tool_event,
)
from bench.backend.stats import table

Kind = Literal["write", "read", "replay", "conflict"]
FORM = "travel-claim"


@dataclass(frozen=True, slots=True)
class RequestRow:
    call: str
    kind: Kind
    tally: Tally
    note: str = ""

    @property
    def target(self) -> tuple[int, int] | None:
        """(most reads, most writes) the issue's target allows; None when it sets none."""
        if self.kind in ("write", "replay"):
            return (1, 1)
        if self.kind == "read":
            return (1, 0)
        return None

    def verdict(self) -> str:
        target = self.target
        if target is None:
            return "no target (conflict)"
        over = [
            f"+{count - limit} {what}"
            for count, limit, what in (
                (self.tally.reads, target[0], "read"),
                (self.tally.writes, target[1], "write"),
            )
            if count > limit
        ]
        return "meets" if not over else "misses: " + ", ".join(over)


class Container:
    """One warm execution environment: its own App (boto3 client, store and service)."""

    def __init__(self, endpoint: str, table_name: str) -> None:
        from formwork.bootstrap import bootstrap
        from formwork.config import Settings

        self.app = bootstrap(
            Settings(
                table_name=table_name, dynamodb_endpoint_url=endpoint, tenant_claim=TENANT_CLAIM
            )
        )
        self.client = self.app.dynamodb_client
        self.log = RequestLog(self.client)
        self.store = self.app.store
        self.service = self.app.service

    def _run(self, event: dict[str, Any], what: str) -> tuple[dict[str, Any], Tally]:
        self.log.take()
        body = body_of(invoke(event, self.app))
        return check_ok(body, what), self.log.take()

    def tool(
        self, conversation: str, tool: str, call_id: str, tool_input: dict[str, Any]
    ) -> tuple[dict[str, Any], Tally]:
        return self._run(tool_event(conversation, tool, call_id, tool_input), tool)

    def status(self, conversation: str) -> tuple[dict[str, Any], Tally]:
        return self._run(status_event(conversation), "status")


def measure(endpoint: str, table_name: str) -> list[RequestRow]:
    with quiet_stdout():
        return _measure(endpoint, table_name)


def _measure(endpoint: str, table_name: str) -> list[RequestRow]:
    a = Container(endpoint, table_name)
    b = Container(endpoint, table_name)
    return [*_one_conversation(a, b), _three_forms(a), _conflict(a, b)]


def _one_conversation(a: Container, b: Container) -> list[RequestRow]:
    conv = "req-main"
    fill = {"form": FORM, "values": {"staff_id": "AB1234"}}
    undo = {"form": FORM, "field": "staff_id", "action": "undo"}
    cap = {"form": FORM, "values": {"mode": "rail", "total": "5000"}}
    start = {"form": FORM, "values": {"full_name": "Ada"}}
    return [
        RequestRow(
            "form_start (new conversation)", "write", a.tool(conv, "form_start", "s1", start)[1]
        ),
        RequestRow(
            "form_fill",
            "write",
            a.tool(conv, "form_fill", "f1", fill)[1],
            "one form in the conversation",
        ),
        RequestRow("form_revise undo", "write", a.tool(conv, "form_revise", "r1", undo)[1]),
        RequestRow("form_read", "read", a.tool(conv, "form_read", "q1", {"form": FORM})[1]),
        RequestRow("GET status", "read", a.status(conv)[1]),
        RequestRow(
            "form_list",
            "read",
            a.tool(conv, "form_list", "l1", {})[1],
            "+ the tenant's published forms (GetItem, kept FORMWORK_CATALOG_TTL_SECONDS)",
        ),
        RequestRow(
            "form_fill replayed (same tool_call_id)",
            "replay",
            a.tool(conv, "form_fill", "f1", fill)[1],
            "returns the first result",
        ),
        RequestRow(
            "form_fill, another container",
            "write",
            b.tool(conv, "form_fill", "f2", {"form": FORM, "values": {"destination": "Lisbon"}})[1],
            "its store never saw the instance",
        ),
        RequestRow(
            "form_revise undo, another container",
            "write",
            b.tool(conv, "form_revise", "r2", {**undo, "field": "full_name"})[1],
            "undo reads the field's log (the home holds heads only)",
        ),
        RequestRow(
            "form_fill over the policy cap",
            "write",
            a.tool(conv, "form_fill", "f3", cap)[1],
            "the checkpoint hook runs and commits",
        ),
    ]


def _three_forms(a: Container) -> RequestRow:
    conv = "req-three"
    instances = [
        a.tool(conv, "form_start", f"s{n}", {"form": FORM})[0]["instance"] for n in range(3)
    ]
    fill = {"form": FORM, "instance": instances[1], "values": {"full_name": "Grace"}}
    return RequestRow(
        "form_fill, 3 forms in the conversation",
        "write",
        a.tool(conv, "form_fill", "f1", fill)[1],
        "one Query reads all three homes",
    )


def _conflict(a: Container, b: Container) -> RequestRow:
    """A's fill, with B's fill landing between A's read and A's write."""
    from forms.app.conversation import Caller

    conv = "req-race"
    a.tool(conv, "form_start", "s1", {"form": FORM})
    armed = [True]

    def other_writer(**_: Any) -> None:
        if armed[0]:
            armed[0] = False
            check_ok(
                b.service.call(
                    Caller(PRINCIPAL, conv),
                    "form_fill",
                    "b1",
                    {"form": FORM, "values": {"staff_id": "CD5678"}},
                ),
                "the other writer's fill",
            )

    event_name = "before-call.dynamodb.TransactWriteItems"
    a.client.meta.events.register(event_name, other_writer)
    try:
        _, tally = a.tool(conv, "form_fill", "a1", {"form": FORM, "values": {"full_name": "Ada"}})
    finally:
        a.client.meta.events.unregister(event_name, other_writer)
    if armed[0] or not tally.refused:
        raise SystemExit(f"bench: the conflict did not happen as staged: {tally}")
    landed = a.store.list_conversation(PRINCIPAL, conv)[0]
    values = {f: h.revisions[h.cursor].value for f, h in landed.history.items() if h.cursor >= 0}
    if values.get("full_name") != "Ada" or values.get("staff_id") != "CD5678":
        raise SystemExit(f"bench: after the conflict, a write is missing: {values}")
    return RequestRow("form_fill, one conflict (two writers)", "conflict", tally, "both landed")


def render(rows: list[RequestRow]) -> str:
    lines = []
    for row in rows:
        target = row.target
        refused = f"; refused: {', '.join(row.tally.refused)}" if row.tally.refused else ""
        retried = f"; {row.tally.retries} retried" if row.tally.retries else ""
        lines.append(
            [
                row.call,
                row.kind,
                row.tally.reads,
                row.tally.writes,
                row.tally.describe() + refused + retried,
                f"≤{target[0]} R, ≤{target[1]} W" if target else "-",
                row.verdict(),
                row.note or "-",
            ]
        )
    headers = ["tool call", "kind", "reads", "writes", "requests", "target", "verdict", "note"]
    return table(headers, lines)
