"""Section 2, part 4: the local API under concurrent conversations, and every write checked.

(a) ``conversations`` clients at once, each its own principal and keep-alive connection, each
doing ``form_start`` + three ``form_fill`` on its own conversation. (b) ``writers`` clients of
one principal writing to one instance at once, ``rounds`` fills each, every fill a value no
other fill sends, so each must land as its own revision.

Afterwards everything is read back through ``DynamoDBFormStore`` on the stack's table and
compared with what the clients were told was saved. Every request has a timeout and every loop
a fixed count: the run ends by itself. Loopback only.

The stack behind the API: the local gateway (a thread per connection), up to
``max_environments`` execution environments (child processes, one invocation at a time each,
as in Lambda) and moto's DynamoDB served single-threaded, which serialises every request the
environments make. Figures are this machine's, not AWS's.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bench.backend.client import ApiClient, Reply
from bench.backend.stats import Summary, duration, table

if TYPE_CHECKING:
    from forms.storage.port import FormStore

FORM = "travel-claim"
TENANT = "bench"
CONVERSATION_FILLS: tuple[dict[str, Any], ...] = (
    {"staff_id": "AB1234"},
    {"destination": "Lisbon"},
    {"departure_date": "2025-03-10"},
)
START_VALUES = {"full_name": "Ada Lovelace"}


Write = tuple[str, Reply]
"""A write's id (what it must leave in the store) and the reply it got."""


@dataclass(slots=True)
class LoadResult:
    label: str
    clients: int
    wall: float = 0.0
    latencies: list[float] = field(default_factory=list)
    acknowledged: list[str] = field(default_factory=list)
    """Writes answered ``ok``."""
    refused: Counter[str] = field(default_factory=Counter)
    """Writes answered with an error, by error code (or HTTP status)."""
    landed: int = 0
    """Acknowledged writes found in the store exactly once."""
    lost: list[str] = field(default_factory=list)
    """Acknowledged but not in the store."""
    phantom: list[str] = field(default_factory=list)
    """Refused but in the store anyway."""
    duplicated: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def calls(self) -> int:
        return len(self.latencies)

    @property
    def throughput(self) -> float:
        return self.calls / self.wall if self.wall else 0.0

    @property
    def intact(self) -> bool:
        """Every acknowledged write is stored once and no refused write is."""
        return not (self.lost or self.phantom or self.duplicated or self.problems)

    @property
    def all_landed(self) -> bool:
        return self.intact and not self.refused

    def check(self) -> str:
        refused = ", ".join(f"{code} ×{n}" for code, n in self.refused.most_common())
        if self.intact:
            text = f"{self.landed}/{len(self.acknowledged)} acknowledged writes stored once"
            return text + (f"; refused: {refused}, none stored" if refused else "")
        shown = (self.lost[:2], self.phantom[:2], self.duplicated[:2], self.problems[:2])
        return (
            f"FAILED: lost {len(self.lost)}, phantom {len(self.phantom)}, duplicated "
            f"{len(self.duplicated)}; e.g. {shown}"
        )


def compare(result: LoadResult, writes: list[Write], stored: Counter[str]) -> None:
    """Fill ``result`` from what the clients were told and what the store holds."""
    result.latencies = [reply.seconds for _, reply in writes]
    for write_id, reply in writes:
        if reply.ok:
            result.acknowledged.append(write_id)
            if stored[write_id] == 0:
                result.lost.append(write_id)
        else:
            result.refused[str(reply.body.get("error") or reply.status)] += 1
            if stored[write_id]:
                result.phantom.append(write_id)
    known = {write_id for write_id, _ in writes}
    result.duplicated = sorted(k for k, n in stored.items() if n > 1)
    result.problems += sorted(f"unexpected {k}" for k in stored if k not in known)
    result.landed = sum(1 for k in result.acknowledged if stored[k] == 1)


def run_clients(clients: int, work: Callable[[int], list[Write]]) -> tuple[float, list[Write]]:
    """Run ``work(i)`` for every client in its own thread, all released at once; the wall
    time from release to the last reply, and every write with its reply."""
    barrier = threading.Barrier(clients + 1)
    replies: list[list[Write]] = [[] for _ in range(clients)]
    errors: list[BaseException] = []

    def body(i: int) -> None:
        barrier.wait(timeout=60)
        try:
            replies[i] = work(i)
        except BaseException as exc:  # reported below; a thread must not die silently
            errors.append(exc)

    threads = [threading.Thread(target=body, args=(i,), daemon=True) for i in range(clients)]
    for thread in threads:
        thread.start()
    barrier.wait(timeout=60)
    start = time.perf_counter()
    for thread in threads:
        thread.join(timeout=300)
    wall = time.perf_counter() - start
    if errors:
        raise SystemExit(f"bench: {len(errors)} load clients failed, first: {errors[0]!r}")
    if any(thread.is_alive() for thread in threads):
        raise SystemExit("bench: load clients did not finish within 300 s")
    return wall, [write for per_client in replies for write in per_client]


def warm(api_url: str, environments: int) -> int:
    """Start every execution environment the stack may use (each pays its cold start and
    builds its service on its first tool call) before anything is timed: two bursts of
    ``2 * environments`` concurrent calls. Returns how many calls failed (should be 0)."""
    failed = 0
    for burst in range(2):

        def work(i: int, burst: int = burst) -> list[Write]:
            client = ApiClient(api_url, f"warm-{burst}-{i:02d}", TENANT)
            try:
                return [("warm", client.call("warm-up", "form_start", "start", {"form": FORM}))]
            finally:
                client.close()

        _, writes = run_clients(2 * environments, work)
        failed += sum(not reply.ok for _, reply in writes)
    return failed


def conversations(api_url: str, store: FormStore, clients: int) -> LoadResult:
    """(a): ``clients`` conversations, each start + three fills, all at once."""
    result = LoadResult(f"{clients} conversations × (start + 3 fills)", clients)
    conversation = "load-a"
    steps = [("form_start", START_VALUES), *(("form_fill", v) for v in CONVERSATION_FILLS)]

    def work(i: int) -> list[Write]:
        client = ApiClient(api_url, f"conv-{i:03d}", TENANT)
        try:
            writes = []
            for k, (tool, values) in enumerate(steps):
                reply = client.call(conversation, tool, f"c{k}", {"form": FORM, "values": values})
                writes.append((f"conv-{i:03d}.{next(iter(values))}", reply))
            return writes
        finally:
            client.close()

    result.wall, writes = run_clients(clients, work)
    expected = {k: v for _, values in steps for k, v in values.items()}
    stored: Counter[str] = Counter()
    for i in range(clients):
        found = store.list_conversation(f"{TENANT}/conv-{i:03d}", conversation)
        if len(found) > 1:
            result.problems.append(f"conv-{i:03d}: {len(found)} instances")
        for instance in found:
            for field_id, history in instance.history.items():
                for revision in history.revisions:
                    same = expected.get(field_id) == revision.value
                    stored[f"conv-{i:03d}.{field_id}" + ("" if same else "=?")] += 1
    compare(result, writes, stored)
    return result


def one_instance(api_url: str, store: FormStore, writers: int, rounds: int) -> LoadResult:
    """(b): ``writers`` clients, ``rounds`` fills each, on one instance, all at once."""
    result = LoadResult(f"{writers} writers × {rounds} fills, one instance", writers)
    conversation = "load-b"
    sub = "shared"
    opener = ApiClient(api_url, sub, TENANT)
    try:
        started = opener.call(conversation, "form_start", "start", {"form": FORM})
    finally:
        opener.close()
    if not started.ok:
        raise SystemExit(f"bench: could not start the shared instance: {started.body}")

    def work(i: int) -> list[Write]:
        client = ApiClient(api_url, sub, TENANT)
        try:
            writes = []
            for r in range(rounds):
                value = f"Writer {i:02d} round {r}"
                reply = client.call(
                    conversation,
                    "form_fill",
                    f"w{i:02d}-{r}",
                    {"form": FORM, "values": {"full_name": value}},
                )
                writes.append((value, reply))
            return writes
        finally:
            client.close()

    result.wall, writes = run_clients(writers, work)
    found = store.list_conversation(f"{TENANT}/{sub}", conversation)
    stored: Counter[str] = Counter()
    if len(found) != 1:
        result.problems.append(f"{len(found)} instances")
    for instance in found:
        history = instance.history.get("full_name")
        stored.update(str(r.value) for r in (history.revisions if history else ()))
    compare(result, writes, stored)
    commits = 1 + len(result.acknowledged)
    if len(found) == 1 and found[0].version != commits:
        result.problems.append(f"instance version {found[0].version}, expected {commits}")
    return result


def render(results: list[LoadResult], environments: int) -> str:
    lines = []
    for r in results:
        summary = Summary.of(r.latencies)
        lines.append(
            [
                r.label,
                r.calls,
                len(r.acknowledged),
                sum(r.refused.values()),
                duration(r.wall),
                f"{r.throughput:.0f} calls/s",
                duration(summary.median),
                duration(summary.p99),
                r.check(),
            ]
        )
    header = ["workload", "calls", "ok", "refused", "wall", "throughput", "p50", "p99", "read back"]
    return table(header, lines) + f"\n\nExecution environments used: {environments}."
