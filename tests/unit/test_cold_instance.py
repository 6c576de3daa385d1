"""The instance models build when first used, and build the same whatever uses them first.

``forms.instance``'s models are ``defer_build`` (the stream relay's cold start imports them and
its first batch validates ``InstanceState`` alone). A deferred model is built by whichever
validation, serialisation or schema first needs it, and a model built first builds the parts
it holds inline: these tests hold that the schemas and the JSON are the same in any order, and
the same as the file's order (the order the models were built at import before).

Each case runs a fresh interpreter: a model built once stays built.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from forms.instance import HookState, InstanceState
from forms.storage import sizes

ROOT = Path(__file__).resolve().parents[2]

MODELS = (
    "HookState",
    "OutboxEntry",
    "StepOverride",
    "Rejection",
    "Recollection",
    "RecallOwed",
    "HandoverLink",
    "InstanceState",
    "FormInstance",
    "FieldChange",
    "Commit",
)
"""Every model ``forms.instance`` defines, in the file's order."""

AT = "2026-01-02T03:04:05Z"
STATE = {
    "status": "open",
    "hooks": {"h": {"holds": True, "count": 2, "basis": "b"}},
    "override": {"step": "s", "kind": "focus", "by": "t1"},
    "rejections": [{"key": "i:h:1", "hook_id": "h", "message": "no", "at": AT}],
    "outbox": {
        "i:h:1": {"key": "i:h:1", "hook_id": "h", "occurrence": 1, "created_at": AT},
        "i:a:1": {
            "key": "i:a:1",
            "hook_id": "a",
            "occurrence": 1,
            "kind": "approval",
            "deadline": AT,
            "created_at": AT,
            "subject": {"f": [1, "x", None]},
        },
    },
    "updated_at": AT,
    "recalled": {
        "f": {
            "use": "fill",
            "key": "k",
            "value": 70,
            "shown": "70 kg",
            "entry": 0,
            "fact_revision": 1,
            "stated_at": AT,
        }
    },
    "recall_owed": {"since": AT, "named": ["f"]},
    "page_edits": ["f"],
    "handed_from": {"instance": "i0", "form": "f0", "at": AT, "dropped": {"x": "gone"}},
}
INSTANCE = {
    "id": "i",
    "form_id": "f",
    "form_version": 1,
    "principal": "p",
    "conversation_id": "c",
    "created_at": AT,
    "version": 1,
    "history": {"f": {"revisions": [{"kind": "value", "value": 70, "by": "memory", "at": AT}]}},
    "state": STATE,
}
COMMIT = {
    "instance_id": "i",
    "expected_version": 1,
    "fields": {"f": {"append": [{"kind": "retraction", "by": "agent", "at": AT}], "cursor": 1}},
    "state": STATE,
}

SCRIPT = """
import json, sys
import forms.instance as models
names, samples = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(json.dumps([n for n in names if getattr(models, n).__pydantic_complete__]))
out = {}
for name in names:  # each model's first use, in the order given
    model = getattr(models, name)
    sample = samples.get(name)
    made = model.model_validate_json(json.dumps(sample)) if sample else None
    out[name] = {
        "json": made.model_dump_json() if made else None,
        "python": repr(made.model_dump()) if made else None,
    }
    for mode in ("validation", "serialization"):
        try:
            out[name][mode] = model.model_json_schema(mode=mode)
        except Exception as error:  # Commit's call (NewCall) has no JSON schema
            out[name][mode] = repr(error)
print(json.dumps(out, sort_keys=True))
"""


def _first_used(order: tuple[str, ...]) -> tuple[list[str], dict[str, object]]:
    samples = {"InstanceState": STATE, "FormInstance": INSTANCE, "Commit": COMMIT}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(order), json.dumps(samples)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    built_at_import, results = done.stdout.splitlines()
    return json.loads(built_at_import), json.loads(results)


def test_importing_the_instance_models_builds_none() -> None:
    built, _ = _first_used(MODELS)
    assert built == []


def test_the_models_build_the_same_in_any_order() -> None:
    _, in_file_order = _first_used(MODELS)
    _, outer_first = _first_used(tuple(reversed(MODELS)))
    _, commit_first = _first_used(("Commit", "FormInstance", *MODELS[:8], "FieldChange"))
    assert set(in_file_order) == set(MODELS)
    assert outer_first == in_file_order
    assert commit_first == in_file_order


def test_the_stream_relay_imports_them_unbuilt() -> None:
    script = (
        "import json, formwork.aws.relay, forms.instance as m;"
        f"print(json.dumps([n for n in {MODELS!r} if getattr(m, n).__pydantic_complete__]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert json.loads(done.stdout.splitlines()[-1]) == []


def test_the_sizes_written_out_are_the_models_serialised() -> None:
    hook = sizes._serialised_hook_bytes("", HookState(holds=True, count=0)) - len("true0null")
    empty = InstanceState(updated_at=datetime(2000, 1, 1, tzinfo=UTC))
    assert hook == sizes._HOOK_FIXED
    assert empty.model_dump_json() == sizes._EMPTY_STATE
