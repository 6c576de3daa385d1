"""``report.md`` (tables) and ``raw.json`` (everything, per cell) from one run."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from bench.forms_bench.harness import MAX_ROUNDS, CallLog, catalog
from bench.forms_bench.ledger import (
    ANCHOR_EAGER,
    ANCHOR_STATUS,
    ANCHOR_TOOLS,
    SERIALISATION,
    TOKENIZER,
    compact,
    eager_form,
    status_at_step_two,
    surface,
    tokens,
)
from bench.forms_bench.metrics import CellMetrics
from bench.forms_bench.personas import FAILURE_MODES, PERSONAS
from bench.forms_bench.run import CellResult, Results, validate_graders
from bench.reports import stamped


def _pct(x: float) -> str:
    return f"{x:.0%}"


def _table(head: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out


def _sum(cells: Sequence[CellResult], attr: str) -> int:
    return sum(int(getattr(c.metrics, attr)) for c in cells)


def _describe(agent: str) -> str:
    persona = PERSONAS.get(agent)
    return str(persona.failure) if persona is not None else "real model"


def _excerpt(call: CallLog) -> str:
    """The failure items of a call's own result (or its summary when nothing failed)."""
    r = call.result
    if "error" in r:
        return f"`{r['error']}`: {r.get('message', '')} (hint: {r.get('hint', '—')})"
    parts = []
    for rej in r.get("rejected", []):
        parts.append(f"{rej['field']}: {rej['error']} (hint: {rej.get('hint', '—')})")
    for unk in r.get("unknown", []):
        parts.append(f"unknown {unk['sent']!r}, did_you_mean: {unk.get('did_you_mean', '—')}")
    parts += [f"replaced the answer on {f}" for f in call.clobbered]
    return "; ".join(parts) or str(r.get("summary", ""))


def _short(value: object, limit: int = 120) -> str:
    text = compact(value)
    return (text if len(text) <= limit else text[: limit - 1] + "…").replace("|", "\\|")


def evidence(results: Results) -> list[dict[str, Any]]:
    """Every retry, whole-call rejection, blank landing and clobbered answer, with its result."""
    found: list[dict[str, Any]] = []
    for cell in results.cells:
        if cell.metrics.agent == "null":
            continue
        for call in cell.transcript.calls:
            kinds = []
            if call.retry_of is not None:
                kinds.append("retry")
            if call.name in ("form_start", "form_fill", "form_revise") and not call.ok:
                kinds.append("rejected by user value" if call.user_value else "rejected entirely")
            if call.blank_landed:
                kinds.append("blank write landed")
            if call.clobbered:
                kinds.append("clobbered an answer")
            if not kinds:
                continue
            found.append(
                {
                    "agent": cell.metrics.agent,
                    "scenario": cell.metrics.scenario,
                    "turn": call.turn,
                    "kind": ", ".join(kinds),
                    "call": f"{call.name} {_short(call.args.get('values', call.args))}",
                    "result": _excerpt(call),
                }
            )
    return found


def render(results: Results) -> str:
    surf = surface()
    status_line = status_at_step_two()
    status_tokens = tokens(status_line)
    lines = _intro(results)
    lines += _targets(results, surf, status_tokens)
    lines += _persona_totals(results)
    lines += _cells(results)
    lines += _evidence(results)
    lines += _ledger(results, surf, status_line, status_tokens)
    model_cells = [c for c in results.cells if c.metrics.agent not in PERSONAS]
    if model_cells or results.skipped:
        lines += ["", "## Real-model cells", ""]
        lines += _table(
            (
                "Scenario",
                "Agent",
                "Input tokens",
                "Output tokens",
                "Truncated",
                "Cost (USD)",
                "Error",
            ),
            (
                (
                    c.metrics.scenario,
                    f"`{c.metrics.agent}`",
                    c.metrics.input_tokens,
                    c.metrics.output_tokens,
                    f"**{c.metrics.truncated}**" if c.metrics.truncated else 0,
                    f"{c.metrics.cost_usd:.4f}",
                    c.metrics.error or "—",
                )
                for c in model_cells
            ),
        )
        for skip in results.skipped:
            lines.append(f"- skipped {skip['scenario']} × {skip['agent']}: {skip['why']}")
    lines += [
        "",
        f"Harness: at most {MAX_ROUNDS} model calls per user turn (a cap hit is reported in "
        "raw.json, never graded).",
        "",
    ]
    return "\n".join(lines)


def _intro(results: Results) -> list[str]:
    problems = validate_graders(results)
    lines = [
        "# forms-bench report",
        "",
        "Generated by `python -m bench.forms_bench` (see `bench/README.md` for what each "
        "scenario claims, each persona's failure mode and the metric definitions). Offline "
        "personas are deterministic: this file changes only when the engine, its strings or the "
        "bench change.",
        "",
        f"{len(results.scenarios)} scenarios × {len(results.agents)} agents = "
        f"{len(results.cells)} cells. Tokens: {TOKENIZER}, {SERIALISATION}.",
        "",
        "## Grader validation",
        "",
    ]
    perfect, null = results.of("perfect"), results.of("null")
    lines.append(
        f"- perfect persona: passes {sum(c.metrics.passed == c.metrics.checks for c in perfect)}"
        f" of {len(perfect)} scenarios (must be all)."
    )
    lines.append(
        f"- null persona: fails {sum(c.metrics.passed < c.metrics.checks for c in null)} of "
        f"{len(null)} scenarios (must be all); it passes "
        f"{_sum(null, 'passed')} of {_sum(null, 'checks')} checks."
    )
    if problems:
        lines += ["", "**GRADER PROBLEMS — the numbers below are not evidence until fixed:**", ""]
        lines += [f"- {p}" for p in problems]
    else:
        lines.append("- The graders separate the two: OK.")
    return lines


def _targets(results: Results, surf: dict[str, Any], status_tokens: int) -> list[str]:
    lines: list[str] = []
    lines += ["", "## Targets (issue 5, section 1) and where we stand", ""]
    failing = [c for name in FAILURE_MODES for c in results.of(name)]
    below = [c for c in failing if c.metrics.passed < c.metrics.checks]
    below_state = [c for c in failing if c.metrics.state_passed < c.metrics.state_checks]
    whole = _sum(failing, "writes_rejected_entirely")
    whole_user = _sum(failing, "writes_rejected_user_value")
    landed, tried = _sum(failing, "blank_landed"), _sum(failing, "blank_attempts")
    loops = _sum(failing, "retry_loops")

    def by_persona(attr: str, cells: Sequence[CellResult] = failing) -> str:
        counts = {n: _sum([c for c in cells if c.metrics.agent == n], attr) for n in FAILURE_MODES}
        shown = [f"`{n}` {v}" for n, v in counts.items() if v]
        return f" ({', '.join(shown)})" if shown else ""

    below_names = ", ".join(f"`{c.metrics.agent}`×{c.metrics.scenario}" for c in below)
    agent_whole = [c for c in failing if c.metrics.writes_rejected_by_agent]
    whole_by = {
        n: sum(c.metrics.writes_rejected_by_agent for c in agent_whole if c.metrics.agent == n)
        for n in FAILURE_MODES
    }
    whole_text = ", ".join(f"`{n}` {v}" for n, v in whole_by.items() if v)
    rows = [
        (
            "Failure-mode personas: 100% collection in every scenario",
            f"{len(failing) - len(below)} of {len(failing)} cells at 100% (state checks alone: "
            f"{len(failing) - len(below_state)} of {len(failing)})"
            + (f"; below: {below_names}" if below else ""),
            "met" if not below else f"missed in {len(below)} cells",
        ),
        (
            "0 write calls rejected entirely",
            f"{whole - whole_user} by the agent's habit"
            + (f" ({whole_text})" if whole_text else "")
            + f"; +{whole_user} carrying only the user's own invalid value",
            "met" if whole - whole_user == 0 else f"missed by {whole - whole_user}",
        ),
        (
            "0 destructive blank writes",
            f"{tried} attempted, {landed} landed" + by_persona("blank_landed"),
            "met" if landed == 0 else f"missed: {landed} landed",
        ),
        (
            "0 retry loops caused by our own strings",
            f"{loops} loops" + by_persona("retry_loops"),
            "met" if loops == 0 else f"missed by {loops}",
        ),
        (
            f"Tool surface under the anchor's {ANCHOR_TOOLS:,} tokens",
            f"{surf['total_compact']:,} tokens (all {len(surf['tools'])} tools, compact JSON)",
            "met" if surf["total_compact"] < ANCHOR_TOOLS else "missed",
        ),
        (
            "Status line at step 2/4 under 60 tokens",
            f"{status_tokens} tokens (anchor {ANCHOR_STATUS})",
            "met" if status_tokens < 60 else "missed",
        ),
    ]
    lines += _table(("Target", "Measured", "Verdict"), rows)
    lines += [
        "",
        "Engine, DynamoDB and import-time targets belong to the performance benchmarks "
        "(issue 5, section 2), not to this bench.",
    ]
    return lines


def _persona_totals(results: Results) -> list[str]:
    lines = ["", "## Per-persona totals", ""]
    head = (
        "Agent",
        "Failure mode",
        "Collection",
        "Cells at 100%",
        "Fields/write",
        "Rejected values",
        "Unknown ids",
        "Resolved ids",
        "Whole writes rejected (agent+user)",
        "Blank writes (tried/landed)",
        "Clobbered",
        "Retry loops",
        "Redundant",
        "Tool errors",
        "Tool calls",
        "Round trips",
    )
    persona_rows: list[Sequence[object]] = []
    for agent in results.agents:
        cells = results.of(agent)
        if not cells:
            continue
        checks, passed = _sum(cells, "checks"), _sum(cells, "passed")
        writes, fields = _sum(cells, "write_calls"), _sum(cells, "fields_sent")
        whole_a = _sum(cells, "writes_rejected_entirely")
        whole_u = _sum(cells, "writes_rejected_user_value")
        persona_rows.append(
            (
                f"`{agent}`",
                _describe(agent),
                _pct(passed / checks if checks else 0),
                f"{sum(c.metrics.passed == c.metrics.checks for c in cells)}/{len(cells)}",
                f"{fields / writes:.2f}" if writes else "—",
                _sum(cells, "rejected_values"),
                _sum(cells, "unknown_ids"),
                _sum(cells, "resolved_ids"),
                f"{whole_a - whole_u}+{whole_u}",
                f"{_sum(cells, 'blank_attempts')}/{_sum(cells, 'blank_landed')}",
                _sum(cells, "clobbered"),
                _sum(cells, "retry_loops"),
                _sum(cells, "redundant_writes"),
                _sum(cells, "tool_errors"),
                _sum(cells, "tool_calls"),
                _sum(cells, "round_trips"),
            )
        )
    lines += _table(head, persona_rows)
    return lines


def _cells(results: Results) -> list[str]:
    lines: list[str] = []
    lines += ["", "## Per cell", ""]
    head = (
        "Scenario",
        "Agent",
        "Collection",
        "Failed checks",
        "Writes",
        "Fields/write",
        "Rej.",
        "Unk.",
        "Res.",
        "Whole rej. (agent+user)",
        "Blank (tried/landed)",
        "Clob.",
        "Loops",
        "Redund.",
        "Errors",
        "Calls",
        "Round trips",
        "Calls to close",
    )
    cell_rows: list[Sequence[object]] = []
    for scenario in results.scenarios:
        for agent in results.agents:
            cell = results.cell(scenario.id, agent)
            if cell is None:
                continue
            m = cell.metrics
            cell_rows.append(
                (
                    scenario.id,
                    f"`{agent}`",
                    f"{m.passed}/{m.checks}",
                    ", ".join(f"`{c}`" for c in m.failed_checks) or "—",
                    m.write_calls,
                    f"{m.fields_per_write:.2f}" if m.write_calls else "—",
                    m.rejected_values,
                    m.unknown_ids,
                    m.resolved_ids,
                    f"{m.writes_rejected_by_agent}+{m.writes_rejected_user_value}",
                    f"{m.blank_attempts}/{m.blank_landed}",
                    m.clobbered,
                    m.retry_loops,
                    m.redundant_writes,
                    m.tool_errors,
                    m.tool_calls,
                    m.round_trips,
                    m.calls_to_close if m.calls_to_close is not None else "—",
                )
            )
    lines += _table(head, cell_rows)
    return lines


def _evidence(results: Results) -> list[str]:
    lines: list[str] = []
    found = evidence(results)
    lines += [
        "",
        "## Evidence: every retry, whole-call rejection, blank landing and clobbered answer",
        "",
        "Grouped by agent and by what the call's own result said (its rejected and unknown "
        "entries, or its error; its summary when nothing failed). A *retry* repeats a failure "
        "from earlier in the same turn; *clobbered* means the write replaced a different answer "
        "on a field the user did not mention in that turn.",
        "",
    ]
    if found:
        grouped: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for e in found:
            grouped.setdefault((e["agent"], e["result"]), []).append(e)
        lines += _table(
            ("Agent", "What", "Times", "Scenarios", "First call", "What the result said"),
            (
                (
                    f"`{agent}`",
                    "; ".join(dict.fromkeys(e["kind"] for e in group)),
                    len(group),
                    ", ".join(dict.fromkeys(e["scenario"] for e in group)),
                    f"`{group[0]['call']}`",
                    result.replace("|", "\\|"),
                )
                for (agent, result), group in grouped.items()
            ),
        )
    else:
        lines.append("None.")
    return lines


def _ledger(
    results: Results, surf: dict[str, Any], status_line: str, status_tokens: int
) -> list[str]:
    lines = [
        "",
        "## Context ledger",
        "",
        f"Tokenizer {TOKENIZER}. Counted: {SERIALISATION} of what a vendor receives in the "
        "request body (how a vendor renders tools into its prompt is not public).",
        "",
        "### Tool schemas (re-sent on every model call)",
        "",
    ]
    rows: list[Sequence[object]] = [
        (f"`{r['tool']}`", r["compact"], r["default_json"], r["description"]) for r in surf["tools"]
    ]
    rows.append(
        ("**all**", surf["total_compact"], surf["total_default_json"], surf["total_descriptions"])
    )
    lines += _table(
        ("Tool", "Compact {name, description, parameters}", "Default json.dumps", "Description"),
        rows,
    )
    envelopes = surf["envelopes"]
    lines += [
        "",
        f"Anchor: {ANCHOR_TOOLS:,} tokens for 8 tools. In each vendor's envelope (compact JSON "
        f"of the whole `tools` list): OpenAI {envelopes['openai']}, Bedrock "
        f"{envelopes['bedrock']}, Anthropic {envelopes['anthropic']}.",
        "",
        f"### Status line at step 2/4 of travel-claim: {status_tokens} tokens "
        f"(anchor {ANCHOR_STATUS}, target < 60)",
        "",
        "```",
        status_line,
        "```",
        "",
        "### Lazy (status line every call + reads on demand) against eager (whole form every "
        "call), perfect persona",
        "",
    ]
    forms = catalog()
    rows = []
    for scenario in results.scenarios:
        cell = results.cell(scenario.id, "perfect")
        if cell is None:
            continue
        m: CellMetrics = cell.metrics
        eager_once = tokens(eager_form(forms[scenario.form]))
        rows.append(
            (
                scenario.id,
                scenario.form,
                m.round_trips,
                m.status_tokens,
                sum(m.read_tokens.values()),
                m.lazy_tokens,
                eager_once,
                m.eager_tokens,
                f"{m.lazy_tokens / m.eager_tokens:.0%}" if m.eager_tokens else "—",
                m.schema_tokens,
            )
        )
    lines += _table(
        (
            "Scenario",
            "Form",
            "Model calls",
            "Status tokens",
            "Read tokens",
            "Lazy total",
            "Eager per call",
            "Eager total",
            "Lazy/eager",
            "Tool schemas (all calls)",
        ),
        rows,
    )
    lines += [
        "",
        "Eager rendering (whole form as compact JSON: steps, field ids, labels, type strings): "
        + ", ".join(f"{f} {tokens(eager_form(form))}" for f, form in forms.items())
        + f" tokens (anchor's whole-form baseline for its four-step claim: {ANCHOR_EAGER}).",
        "",
        "Per persona (all scenarios): status + read tokens against the eager baseline",
        "",
    ]
    rows = []
    for agent in results.agents:
        cells = results.of(agent)
        if not cells:
            continue
        lazy = sum(c.metrics.lazy_tokens for c in cells)
        eager = _sum(cells, "eager_tokens")
        rows.append(
            (
                f"`{agent}`",
                _sum(cells, "round_trips"),
                _sum(cells, "status_tokens"),
                sum(sum(c.metrics.read_tokens.values()) for c in cells),
                _sum(cells, "write_result_tokens"),
                eager,
                f"{lazy / eager:.0%}" if eager else "—",
            )
        )
    lines += _table(
        (
            "Agent",
            "Model calls",
            "Status tokens",
            "Read tokens",
            "Write-result tokens",
            "Eager total",
            "Lazy/eager",
        ),
        rows,
    )
    return lines


def raw(results: Results) -> dict[str, Any]:
    surf = surface()
    status_line = status_at_step_two()
    return {
        "tokenizer": TOKENIZER,
        "serialisation": SERIALISATION,
        "grader_problems": validate_graders(results),
        "surface": surf,
        "status_at_step_two": {"line": status_line, "tokens": tokens(status_line)},
        "scenarios": [
            {
                "id": s.id,
                "form": s.form,
                "claim": s.claim,
                "turns": [t.text for t in s.turns],
                "checks": [{"id": c.id, "kind": c.kind, "claim": c.claim} for c in s.checks],
            }
            for s in results.scenarios
        ],
        "agents": {a: _describe(a) for a in results.agents},
        "skipped": results.skipped,
        "cells": [
            {
                "metrics": c.metrics.to_json(),
                "checks": c.checks,
                "transcript": {
                    "calls": [
                        {
                            "turn": call.turn,
                            "round": call.round,
                            "tool": call.name,
                            "args": call.args,
                            "result": call.result,
                            **({"retry_of": call.retry_of} if call.retry_of else {}),
                            **({"blank_landed": call.blank_landed} if call.blank_landed else {}),
                        }
                        for call in c.transcript.calls
                    ],
                    "messages": [{"turn": t, "text": text} for t, text in c.transcript.messages],
                },
            }
            for c in results.cells
        ],
        "evidence": evidence(results),
    }


def write(results: Results, out: Path) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    report, data = out / "report.md", out / "raw.json"
    report.write_text(stamped("report.md", render(results)), encoding="utf-8")
    data.write_text(
        json.dumps(raw(results), separators=(",", ":"), ensure_ascii=False, default=str) + "\n",
        encoding="utf-8",
    )
    return report, data
