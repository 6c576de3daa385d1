"""The targets table of ``bench.backend_perf``: each goal, what the run measured, the verdict."""

from __future__ import annotations

from bench import http_floor_perf
from bench.backend import cold_start, dynamo_requests, load
from bench.backend.stats import table


def grouped(rows: list[dynamo_requests.RequestRow]) -> str:
    """``1 R + 1 W: form_start · 2 R + 1 W: form_fill, ...`` (calls grouped by their cost)."""
    groups: dict[str, list[str]] = {}
    for row in rows:
        groups.setdefault(f"{row.tally.reads} R + {row.tally.writes} W", []).append(row.call)
    return " · ".join(f"{cost}: {', '.join(calls)}" for cost, calls in groups.items())


def render(
    cold: list[cold_start.ColdRow],
    requests: list[dynamo_requests.RequestRow],
    loads: list[load.LoadResult],
    floor: http_floor_perf.Result,
) -> str:
    """The targets table: each goal, what this run measured, and the verdict."""
    writes = [r for r in requests if r.kind in ("write", "replay")]
    reads = [r for r in requests if r.kind == "read"]
    met_w = [r.call for r in writes if r.verdict() == "meets"]
    met_r = [r.call for r in reads if r.verdict() == "meets"]
    imports, import_verdict = cold_start.target(cold)
    refused = sum(sum(r.refused.values()) for r in loads)
    calls = sum(r.calls for r in loads)
    if all(r.all_landed for r in loads):
        load_verdict = "met"
    elif all(r.intact for r in loads):
        load_verdict = (
            f"missed: {refused} of {calls} writes refused as busy (conflict retries "
            "exhausted; nothing saved, the model is told to resend); none lost or duplicated"
        )
    else:
        load_verdict = "NOT met: writes lost, duplicated or stored after a refusal"
    rows = [
        [
            "DynamoDB: ≤1 read + ≤1 write per write call without conflict",
            grouped(writes),
            f"met by {len(met_w)} of {len(writes)} ({', '.join(met_w) or 'none'}); the rest "
            "are a hook's own commit when one fires (a second write, by design: commit, then "
            "run), a replay's read of the first record, or an undo in a container that holds "
            "only the heads (it reads that instance's revision log, once)",
        ],
        [
            "DynamoDB: one read per read call",
            grouped(reads),
            f"met by {len(met_r)} of {len(reads)}; form_list also reads the tenant's "
            "catalog of published forms (one GetItem, then kept for "
            "FORMWORK_CATALOG_TTL_SECONDS, 5 s by default)",
        ],
        [
            f"Handler import under {cold_start.TARGET}× `import boto3` in every round (same "
            "rounds; bytecode cached and none)",
            imports,
            import_verdict,
        ],
        [
            f"HTTP form_fill at most {http_floor_perf.GOAL}× a bare handler's Query + "
            "TransactWriteItems on the same gateway, at p50 and p99 (issue 26)",
            *http_floor_perf.target(floor),
        ],
        [
            "Load: every write landed (no target time)",
            "; ".join(f"{r.landed}/{r.calls} landed" for r in loads),
            load_verdict,
        ],
    ]
    return table(["target", "measured", "verdict"], rows)
