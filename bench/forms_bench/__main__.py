"""``python -m bench.forms_bench``: run the bench and write ``bench/results/``.

Offline by default (the personas). ``--model bedrock:<model-id>`` or ``--model openai:<model>``
adds a real model as one more agent when its credentials are in the environment, and refuses
politely otherwise; its report goes to ``bench/results/<provider>-<model>/`` so the committed
offline report stays as it is.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from bench.forms_bench.adapters import budget_from_env, model_agent_factory
from bench.forms_bench.personas import PERSONAS
from bench.forms_bench.report import write
from bench.forms_bench.run import AgentFactory, persona_factories, run, validate_graders
from bench.forms_bench.scenarios import all_scenarios

RESULTS = Path(__file__).resolve().parent.parent / "results"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.forms_bench", description=__doc__)
    parser.add_argument("--model", help="bedrock:<model-id> or openai:<model>")
    parser.add_argument("--out", type=Path, help="output folder (default bench/results)")
    parser.add_argument("--scenarios", help="comma-separated scenario ids (default: all)")
    parser.add_argument("--personas", help="comma-separated persona names (default: all)")
    args = parser.parse_args(argv)

    scenarios = all_scenarios()
    if args.scenarios:
        wanted = set(args.scenarios.split(","))
        unknown = wanted - {s.id for s in scenarios}
        if unknown:
            parser.error(f"unknown scenarios: {', '.join(sorted(unknown))}")
        scenarios = tuple(s for s in scenarios if s.id in wanted)
    names = args.personas.split(",") if args.personas else list(PERSONAS)
    unknown_personas = set(names) - set(PERSONAS)
    if unknown_personas:
        parser.error(f"unknown personas: {', '.join(sorted(unknown_personas))}")
    agents: dict[str, AgentFactory] = dict(persona_factories(names))
    out = args.out or RESULTS
    budget = None
    metered: list[str] = []
    if args.model:
        factory, problem = model_agent_factory(args.model)
        budget, budget_problem = budget_from_env(os.environ)
        if factory is None or budget is None:
            print(
                f"Not running {args.model}: {problem or budget_problem}. The offline bench needs "
                "no credentials: run without --model.",
                file=sys.stderr,
            )
            return 2
        agents[args.model] = factory
        metered.append(args.model)
        out = args.out or RESULTS / re.sub(r"[^A-Za-z0-9._-]+", "-", args.model)
    results = run(agents, scenarios, budget, metered)
    report, data = write(results, out)
    problems = validate_graders(results)
    cells = len(results.cells)
    print(f"forms-bench: {cells} cells; wrote {report} and {data}")
    if budget is not None:
        print(f"spent about {budget.spent_usd:.4f} USD of a {budget.max_usd:.2f} USD cap")
    for problem in problems:
        print(f"GRADER PROBLEM: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
