"""Section 2, part 1: one ``form_fill`` end to end, in-process and over the local HTTP API.

The workload is the same on every path: a conversation starts a travel claim (not timed), then
four ``form_fill`` calls of two fields each are timed (full name and destination, alternating
values, so every call appends two revisions and none fires a hook). Each conversation is fresh,
so the history an instance carries stays at one to five commits and the figures do not drift
as the run goes on (the DynamoDB store reads an instance's whole history on every call).

Paths, from the inside out: ``FormService.call`` alone; ``formwork.aws.api.lambda_handler`` on an
API Gateway v2 event (Powertools routing and validation, logging, metrics) in this process;
and an HTTP request to the local gateway, which builds the event and runs the handler in a
local execution environment (a child process), over one keep-alive connection. Stores: the
in-memory adapter, and the DynamoDB adapter against moto on loopback. The paths take turns,
one conversation each, so a change in the machine's load during the run reaches all of them.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from bench.backend.client import ApiClient
from bench.backend.inprocess import (
    PRINCIPAL,
    TENANT_CLAIM,
    body_of,
    check_ok,
    invoke,
    quiet_stdout,
    tool_event,
)
from bench.backend.stats import Summary, duration, ratio, table

FORM = "travel-claim"
FILLS: tuple[dict[str, Any], ...] = (
    {"full_name": "Ada Lovelace", "destination": "Lisbon"},
    {"full_name": "Ada King", "destination": "Porto"},
)
FILLS_PER_CONVERSATION = 4

# (conversation, tool, tool_call_id, input) -> seconds the call took; raises if it failed
Call = Callable[[str, str, str, dict[str, Any]], float]


@dataclass(frozen=True, slots=True)
class LatencyRow:
    path: str
    store: str
    summary: Summary
    baseline: str | None = None
    """The ``path`` of the row this one is compared with (same store)."""


def one_conversation(call: Call, conversation: str) -> list[float]:
    """Start a claim (not timed), then the timed fills; their seconds."""
    call(conversation, "form_start", "start", {"form": FORM})
    return [
        call(conversation, "form_fill", f"fill-{k}", {"form": FORM, "values": FILLS[k % 2]})
        for k in range(FILLS_PER_CONVERSATION)
    ]


def fill_samples(call: Call, label: str, conversations: int, warmup: int = 2) -> list[float]:
    """Run the workload over ``conversations`` fresh conversations; the timed fills' seconds."""
    samples: list[float] = []
    for n in range(-warmup, conversations):
        taken = one_conversation(call, f"{label}-{n + warmup:05d}")
        if n >= 0:
            samples.extend(taken)
    return samples


def interleaved(paths: dict[str, tuple[Call, int]], warmup: int = 2) -> dict[str, list[float]]:
    """``fill_samples`` for several paths at once, one conversation each in turn, so a change
    in the machine's load during the run reaches every path alike. ``paths``: label -> (call,
    conversations)."""
    samples: dict[str, list[float]] = {label: [] for label in paths}
    longest = max(rounds for _, rounds in paths.values())
    for n in range(-warmup, longest):
        for label, (call, rounds) in paths.items():
            if n < rounds:
                taken = one_conversation(call, f"{label}-{n + warmup:05d}")
                if n >= 0:
                    samples[label].extend(taken)
    return samples


def service_call(service: Any) -> Call:
    """``FormService.call`` with the principal the event fixtures carry."""
    from forms.app.conversation import Caller

    def call(conversation: str, tool: str, call_id: str, tool_input: dict[str, Any]) -> float:
        caller = Caller(PRINCIPAL, conversation)
        start = time.perf_counter()
        result = service.call(caller, tool, call_id, tool_input)
        seconds = time.perf_counter() - start
        check_ok(result, f"{tool} in {conversation}")
        return seconds

    return call


def handler_call(app: Any) -> Call:
    """``lambda_handler`` serving with ``app``, on a fresh event per call (building the event
    is not timed)."""

    def call(conversation: str, tool: str, call_id: str, tool_input: dict[str, Any]) -> float:
        event = tool_event(conversation, tool, call_id, tool_input)
        start = time.perf_counter()
        response = invoke(event, app)
        seconds = time.perf_counter() - start
        check_ok(body_of(response), f"{tool} in {conversation} (handler)")
        return seconds

    return call


def http_call(client: ApiClient) -> Call:
    def call(conversation: str, tool: str, call_id: str, tool_input: dict[str, Any]) -> float:
        reply = client.call(conversation, tool, call_id, tool_input)
        if not reply.ok:
            raise SystemExit(f"bench: {tool} over HTTP failed: {reply.status} {reply.body}")
        return reply.seconds

    return call


def measure(
    dynamodb_endpoint: str, table_name: str, api_url: str, memory_rounds: int, remote_rounds: int
) -> list[LatencyRow]:
    """All five rows; ``*_rounds`` are conversations (four timed fills each)."""
    from forms.storage import InMemoryFormStore
    from formwork.bootstrap import bootstrap
    from formwork.config import Settings

    memory_app = bootstrap(Settings(tenant_claim=TENANT_CLAIM), store=InMemoryFormStore())
    dynamo_settings = Settings(
        table_name=table_name, dynamodb_endpoint_url=dynamodb_endpoint, tenant_claim=TENANT_CLAIM
    )
    dynamo_app = bootstrap(dynamo_settings)
    memory, dynamo = memory_app.service, dynamo_app.service
    service_path = "FormService.call"
    handler_path = "lambda_handler, in-process"
    http_path = "HTTP, local API (keep-alive)"
    memory_store, dynamo_store = "in-memory", "DynamoDB (moto)"
    client = ApiClient(api_url, "latency")
    try:
        with quiet_stdout():
            samples = interleaved(
                {
                    "mem-svc": (service_call(memory), memory_rounds),
                    "mem-handler": (handler_call(memory_app), memory_rounds),
                    "ddb-svc": (service_call(dynamo), remote_rounds),
                    "ddb-handler": (handler_call(dynamo_app), remote_rounds),
                    "http": (http_call(client), remote_rounds),
                }
            )
    finally:
        client.close()
    rows = [
        LatencyRow(service_path, memory_store, Summary.of(samples["mem-svc"])),
        LatencyRow(handler_path, memory_store, Summary.of(samples["mem-handler"]), service_path),
        LatencyRow(service_path, dynamo_store, Summary.of(samples["ddb-svc"])),
        LatencyRow(handler_path, dynamo_store, Summary.of(samples["ddb-handler"]), service_path),
        LatencyRow(http_path, dynamo_store, Summary.of(samples["http"]), handler_path),
    ]
    if not gateway_nodelay():
        with nodelay_gateway():
            diagnostic = over_http(api_url, "http-nodelay", max(2, remote_rounds // 2))
        rows.append(
            LatencyRow(
                "HTTP, gateway with TCP_NODELAY (diagnostic)",
                dynamo_store,
                Summary.of(diagnostic),
                http_path,
            )
        )
    return rows


def over_http(api_url: str, label: str, rounds: int) -> list[float]:
    client = ApiClient(api_url, label)
    try:
        return fill_samples(http_call(client), label, rounds)
    finally:
        client.close()


def gateway_nodelay() -> bool:
    """Whether the local gateway turns Nagle's algorithm off on its connections.

    With it on, the gateway's response (headers, then body, two small writes) waits for the
    client's delayed ACK, about 40 ms on Linux loopback, on every keep-alive request."""
    from formwork.infra.local import gateway

    return bool(getattr(gateway._RequestHandler, "disable_nagle_algorithm", False))


@contextlib.contextmanager
def nodelay_gateway() -> Iterator[None]:
    """Diagnostic only: new gateway connections get TCP_NODELAY inside the block (the
    ``socketserver`` switch, read when a connection is set up); restored afterwards."""
    from formwork.infra.local import gateway

    handler = gateway._RequestHandler
    own = "disable_nagle_algorithm" in vars(handler)
    previous = handler.disable_nagle_algorithm
    handler.disable_nagle_algorithm = True
    try:
        yield
    finally:
        if own:
            handler.disable_nagle_algorithm = previous
        else:
            del handler.disable_nagle_algorithm


def render(rows: list[LatencyRow]) -> str:
    by_key = {(row.path, row.store): row for row in rows}
    lines = []
    for row in rows:
        base = by_key.get((row.baseline, row.store)) if row.baseline else None
        lines.append(
            [
                row.path,
                row.store,
                row.summary.n,
                duration(row.summary.median),
                duration(row.summary.p99),
                ratio(row.summary.median, base.summary.median) if base else "-",
                base.path if base else "-",
            ]
        )
    return table(["path", "store", "calls", "median", "p99", "median ratio", "ratio to"], lines)
