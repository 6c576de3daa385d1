"""Per-cell metrics, computed from a transcript (definitions: ``bench/README.md``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from bench.forms_bench.graders import Check
from bench.forms_bench.harness import READ_TOOLS, WRITE_TOOLS, CallLog, Transcript, catalog
from bench.forms_bench.ledger import compact, eager_form, surface, tokens


@dataclass
class CellMetrics:
    scenario: str
    agent: str
    checks: int = 0
    passed: int = 0
    state_checks: int = 0
    state_passed: int = 0
    failed_checks: list[str] = field(default_factory=list)
    write_calls: int = 0
    fields_sent: int = 0
    rejected_values: int = 0
    unknown_ids: int = 0
    resolved_ids: int = 0
    writes_rejected_entirely: int = 0
    writes_rejected_user_value: int = 0
    blank_attempts: int = 0
    blank_landed: int = 0
    coerced: int = 0
    coerced_unmeant: int = 0
    clobbered: int = 0
    retry_loops: int = 0
    retries: int = 0
    redundant_writes: int = 0
    held: int = 0
    tool_errors: int = 0
    tool_calls: int = 0
    round_trips: int = 0
    calls_to_close: int | None = None
    rounds_to_close: int | None = None
    round_cap_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    truncated: int = 0
    cost_usd: float = 0.0
    error: str | None = None
    status_tokens: int = 0
    read_tokens: dict[str, int] = field(default_factory=dict)
    write_result_tokens: int = 0
    eager_tokens: int = 0
    schema_tokens: int = 0

    @property
    def collection(self) -> float:
        return self.passed / self.checks if self.checks else 0.0

    @property
    def fields_per_write(self) -> float:
        return self.fields_sent / self.write_calls if self.write_calls else 0.0

    @property
    def writes_rejected_by_agent(self) -> int:
        """Write calls rejected entirely for something the agent did (not the user's value)."""
        return self.writes_rejected_entirely - self.writes_rejected_user_value

    @property
    def lazy_tokens(self) -> int:
        return self.status_tokens + sum(self.read_tokens.values())

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["collection"] = round(self.collection, 4)
        data["fields_per_write"] = round(self.fields_per_write, 3)
        data["lazy_tokens"] = self.lazy_tokens
        data["writes_rejected_by_agent"] = self.writes_rejected_by_agent
        return data


def measure(
    transcript: Transcript,
    checks: Sequence[Check],
    prices: Mapping[str, float] | None = None,
) -> tuple[CellMetrics, list[dict[str, Any]]]:
    """Grade a transcript against ``checks`` and compute every metric of the cell."""
    t = transcript
    m = CellMetrics(t.scenario.id, t.agent, error=t.error, round_cap_hits=t.round_cap_hits)
    graded = _grade(m, t, checks)
    loops: set[str] = set()
    for call in t.calls:
        _count_call(m, call)
        if call.retry_of is not None:
            loops.add(f"{call.turn}:{call.retry_of}")
    m.retry_loops = len(loops)
    m.round_trips = len(t.status_per_round)
    m.calls_to_close, m.rounds_to_close = t.calls_to_close, t.rounds_to_close
    m.status_tokens = sum(tokens(text) for _, text in t.status_per_round if text)
    form = catalog()[t.scenario.form]
    m.eager_tokens = tokens(eager_form(form)) * m.round_trips
    m.schema_tokens = surface()["total_compact"] * m.round_trips
    for usage in t.usage:
        m.input_tokens += usage.input_tokens
        m.output_tokens += usage.output_tokens
        m.truncated += usage.truncated
    if prices:
        m.cost_usd = round(
            m.input_tokens / 1000 * prices.get("input", 0.0)
            + m.output_tokens / 1000 * prices.get("output", 0.0),
            6,
        )
    return m, graded


def _grade(m: CellMetrics, t: Transcript, checks: Sequence[Check]) -> list[dict[str, Any]]:
    graded = []
    for check in checks:
        ok = check.run(t)
        graded.append({"id": check.id, "kind": check.kind, "claim": check.claim, "passed": ok})
        m.checks += 1
        m.passed += ok
        if check.kind == "state":
            m.state_checks += 1
            m.state_passed += ok
        if not ok:
            m.failed_checks.append(check.id)
    return graded


def _count_call(m: CellMetrics, call: CallLog) -> None:
    r = call.result
    m.tool_calls += 1
    if "error" in r:
        m.tool_errors += 1
    # a submit that carries nothing else writes no answer: it does not count as a write
    submit_only = call.args.get("submit") is True and not call.args.get("values")
    if call.name in WRITE_TOOLS and not submit_only:
        m.write_calls += 1
        m.fields_sent += call.fields_sent
        if not r.get("ok"):
            m.writes_rejected_entirely += 1
            m.writes_rejected_user_value += call.user_value
        m.write_result_tokens += tokens(compact(r))
    elif call.name in READ_TOOLS:
        m.read_tokens[call.name] = m.read_tokens.get(call.name, 0) + tokens(compact(r))
    m.rejected_values += len(r.get("rejected", []))
    if r.get("error") == "cannot_revise" and call.args.get("action") == "set":
        m.rejected_values += 1
    m.unknown_ids += len(r.get("unknown", []))
    if r.get("error") == "unknown_field":
        m.unknown_ids += 1
    m.resolved_ids += len(r.get("resolved", {}))
    m.redundant_writes += len(r.get("unchanged", []))
    if call.name == "form_revise" and " was already " in str(r.get("summary", "")):
        m.redundant_writes += 1
    m.held += len(r.get("held", {}))
    m.blank_attempts += call.blank_attempts
    m.blank_landed += call.blank_landed
    m.coerced += call.coerced
    m.coerced_unmeant += len(call.coerced_unmeant)
    m.clobbered += len(call.clobbered)
