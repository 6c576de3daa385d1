"""The docs' whole Python examples run as printed.

A reader copies these blocks as they stand: the README's in-process use, the form a
definition guide builds, the forms package the deploy guide ships. Each is run in a fresh
namespace, and what it made is checked (the calls' results; the forms compile). Fragments
(a line showing one argument, code that needs a model or AWS) are left to the pages; the
HTTP examples run against the local stack in ``tests/integration/test_doc_examples.py``.
"""

from __future__ import annotations

import importlib
import re
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from forms import FormDef, compile_form

ROOT = Path(__file__).resolve().parents[2]


def block(doc: str, opening: str) -> str:
    """The ``python`` block of ``doc`` whose first line is ``opening``."""
    text = (ROOT / doc).read_text(encoding="utf-8")
    found = [m.group(1) for m in re.finditer(r"```python\n(.*?)```", text, re.S)]
    matching = [code for code in found if code.startswith(opening)]
    assert len(matching) == 1, f"{doc}: one python block opening {opening!r}"
    return matching[0]


def run(code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """``code`` imported as a module of its own, as a reader's file would be (pydantic reads
    a step's annotations in its module)."""
    name = f"doc_example_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(code, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)
    monkeypatch.delitem(sys.modules, name)
    return vars(module)


def test_the_readme_in_process_example_starts_and_fills_a_claim(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = block("README.md", "from forms import Caller, FormRegistry, FormService")
    # the block's last two calls, with their results kept, so what they answered can be read
    lines = code.rstrip().splitlines()
    start, fill = lines[-2], lines[-1]
    assert start.startswith("service.call(") and fill.startswith("service.call(")
    kept = "\n".join([*lines[:-2], f"started = {start}", f"filled = {fill}"])
    namespace = run(kept, tmp_path, monkeypatch)
    assert namespace["started"]["ok"] and namespace["filled"]["ok"]
    assert "travel-claim" in " ".join(namespace["service"].status(namespace["caller"]))


@pytest.mark.parametrize(
    ("doc", "opening", "names"),
    [
        ("docs/defining-forms.md", "from datetime import date", ["travel_claim"]),
        ("docs/deploy.md", "# ../acme/acme_forms/__init__.py", ["leave_request"]),
    ],
)
def test_a_documented_form_compiles(
    doc: str, opening: str, names: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    namespace = run(block(doc, opening), tmp_path, monkeypatch)
    for name in names:
        form = namespace[name]
        assert isinstance(form, FormDef)
        assert compile_form(form).id == form.id


def test_the_chat_loop_example_runs_a_turn_as_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the block as printed, with what a reader brings: a token, boto3's Bedrock client
    # (here answering recorded Converse responses) and the API (here the handler behind the
    # local gateway, wherever the block points its client)
    import boto3

    import formwork.client
    from tests.unit.test_chat_loop import RecordedConverse, recording
    from tests.unit.test_client import LocalApi, travel_service

    code = block("docs/clients.md", "import boto3\nfrom formwork.agents import BedrockConverse")
    converse = RecordedConverse(recording("bedrock_travel_claim")["responses"])
    monkeypatch.setattr(boto3, "client", lambda service, *a, **k: converse)
    with LocalApi(travel_service()) as api:
        real = formwork.client.Formwork
        monkeypatch.setattr(
            formwork.client, "Formwork", lambda url, token: real(api.url, token=token)
        )
        # WHEN it runs
        namespace = run(f"user_jwt = 'dev:alice'\n{code}", tmp_path, monkeypatch)
    # THEN its turn ended with the model's reply, and the transcript to keep is the turn's
    turn = namespace["turn"]
    assert turn.stopped == "reply" and turn.reply
    assert namespace["transcript"] == turn.transcript
    assert "form_start" in [outcome.call.name for outcome in turn.calls]
