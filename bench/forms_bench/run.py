"""Play every scenario against every agent, grade, measure, and check the graders themselves."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.forms_bench.adapters import Budget
from bench.forms_bench.harness import Transcript, run_cell
from bench.forms_bench.metrics import CellMetrics, measure
from bench.forms_bench.model import Agent, Scenario
from bench.forms_bench.personas import PERSONAS
from bench.forms_bench.scenarios import all_scenarios

AgentFactory = Callable[[], Agent]


@dataclass
class CellResult:
    metrics: CellMetrics
    checks: list[dict[str, Any]]
    transcript: Transcript


@dataclass
class Results:
    scenarios: tuple[Scenario, ...]
    agents: tuple[str, ...]
    cells: list[CellResult] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)

    def cell(self, scenario: str, agent: str) -> CellResult | None:
        return next(
            (c for c in self.cells if c.metrics.scenario == scenario and c.metrics.agent == agent),
            None,
        )

    def of(self, agent: str) -> list[CellResult]:
        return [c for c in self.cells if c.metrics.agent == agent]


def persona_factories(names: Sequence[str] | None = None) -> dict[str, AgentFactory]:
    chosen = names or list(PERSONAS)
    return {name: PERSONAS[name] for name in chosen}


def run(
    agents: Mapping[str, AgentFactory],
    scenarios: Sequence[Scenario] | None = None,
    budget: Budget | None = None,
    metered: Sequence[str] = (),
) -> Results:
    """Every scenario against every agent; cells of ``metered`` agents stop at the spend cap."""
    plays = tuple(scenarios or all_scenarios())
    results = Results(plays, tuple(agents))
    for name, make in agents.items():
        for scenario in plays:
            if name in metered and budget is not None and not budget.allows_another_cell():
                results.skipped.append(
                    {"scenario": scenario.id, "agent": name, "why": "spend cap reached"}
                )
                continue
            transcript = run_cell(scenario, make())
            prices = budget.prices() if budget is not None and name in metered else None
            if budget is not None and name in metered:
                budget.charge(transcript.usage)
            metrics, graded = measure(transcript, scenario.checks, prices)
            results.cells.append(CellResult(metrics, graded, transcript))
    return results


def validate_graders(results: Results) -> list[str]:
    """Problems with the graders: perfect must pass every scenario, null must fail every one."""
    problems = []
    for scenario in results.scenarios:
        perfect = results.cell(scenario.id, "perfect")
        null = results.cell(scenario.id, "null")
        if perfect is not None and perfect.metrics.passed != perfect.metrics.checks:
            failed = ", ".join(perfect.metrics.failed_checks)
            problems.append(f"{scenario.id}: the perfect persona fails {failed}")
        if null is not None and null.metrics.passed == null.metrics.checks:
            problems.append(f"{scenario.id}: the null persona passes every check")
        if not scenario.checks:
            problems.append(f"{scenario.id}: no checks")
    return problems
