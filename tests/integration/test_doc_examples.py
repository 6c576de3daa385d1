"""The docs' HTTP examples, run as a reader runs them, against the local stack.

The client example of ``docs/clients.md`` runs as printed (its address swapped for the
stack's).

Every ``sh`` block of the README and ``docs/`` that calls the API with curl is run by bash, in
document order, on one stack as ``make dev`` starts it (its ``make dev`` line aside, and its
address swapped for the stack's free port). Each curl call's status is recorded: none may be
a 5xx or a refusal of the request's own form (400, 401, 413, 415, 422: a malformed example, a
token the stack does not take, a field the API no longer has), every body is JSON, and a block
answers 2xx throughout unless ``REFUSED`` says which status it meets and why.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from formwork.infra.local.dynamodb_local import DynamoDBLocal
from formwork.infra.local.stack import LocalStack
from tests.integration.stacks import local_stack

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DOC_URL = "http://127.0.0.1:3000"
WEBHOOK_SECRET = "whsec_ZXhhbXBsZSBrZXkgZm9yIHRoZSBkb2NzOiBuZXZlciB1c2UgaXQ="
"""The secret docs/webhooks.md signs with; the stack is given it for the ``crm`` source."""
MALFORMED = {400, 401, 413, 415, 422}

REFUSED: dict[str, tuple[set[int], str]] = {
    "/approvals/fi_1a9cee470be549488a5b": (
        {404},
        "an approval id from another run: the example shows the request's form",
    ),
    "curl -s -X POST -H 'Authorization: Bearer dev:acme:cy;roles=form_publisher' \\\n"
    "  http://127.0.0.1:3000/builder/forms/contact-us/publish\n": (
        {404},
        "publishing alone: no draft of contact-us exists until 'Trying it' builds one",
    ),
}
"""Blocks (by a piece of their text) that meet a refusal as they stand, and why."""

# the shell every block runs in: curl records each status and body, and fails nothing
PREAMBLE = """set -euo pipefail
FW_N=0
curl() {
  FW_N=$((FW_N + 1))
  command curl -sS -o "$FW_OUT/body.$FW_N" -w "%{http_code}\\n" "$@" >> "$FW_OUT/statuses"
}
"""


@dataclass(frozen=True)
class Block:
    where: str
    text: str

    @property
    def script(self) -> str:
        lines = [line for line in self.text.splitlines() if not line.startswith("make ")]
        return "\n".join(lines) + "\n"


def blocks() -> list[Block]:
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for match in re.finditer(r"```sh\n(.*?)```", text, re.S):
            if "curl" in match.group(1) and DOC_URL in match.group(1):
                line = text[: match.start()].count("\n") + 1
                found.append(Block(f"{doc.relative_to(ROOT)}:{line}", match.group(1)))
    return found


BLOCKS = blocks()


@pytest.fixture(scope="module")
def stack(dynamodb_local: DynamoDBLocal) -> Iterator[LocalStack]:
    with local_stack(
        dynamodb_local,
        environment={"FORMWORK_WEBHOOK_SECRETS": json.dumps({"crm": WEBHOOK_SECRET})},
    ) as running:
        yield running


def test_the_client_example_runs_as_printed(stack: LocalStack) -> None:
    # GIVEN docs/clients.md's first example, pointed at this stack (first in the module: it
    # starts the claim in chat-9, as a reader who begins there does)
    text = (ROOT / "docs" / "clients.md").read_text(encoding="utf-8")
    code = next(m for m in re.findall(r"```python\n(.*?)```", text, re.S) if "Formwork(" in m)
    namespace: dict[str, Any] = {}
    # WHEN it runs
    exec(code.replace(DOC_URL, stack.api_url.rstrip("/")), namespace)
    # THEN what its comments say holds
    result = namespace["result"]
    assert result.ok and result.summary.startswith("Started Travel expense claim")
    assert namespace["tools"][0]["type"] == "function"
    assert result.to_dict()["ok"] is True


def test_the_docs_have_shell_examples_of_the_api() -> None:
    # the test below reads them; a change to how the docs mark them would leave it empty
    assert len(BLOCKS) >= 5
    assert {b.where.split(":")[0] for b in BLOCKS} >= {"README.md", "docs/http-api.md"}
    assert all(any(key in b.text for b in BLOCKS) for key in REFUSED)


def test_every_shell_example_runs_as_documented(stack: LocalStack, tmp_path: Path) -> None:
    for n, block in enumerate(BLOCKS):
        out = tmp_path / str(n)
        out.mkdir()
        script = PREAMBLE + block.script.replace(DOC_URL, stack.api_url.rstrip("/"))
        run = subprocess.run(
            ["bash", "-c", script],
            env={**os.environ, "FW_OUT": str(out)},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert run.returncode == 0, f"{block.where}: {run.stderr}"
        statuses = [int(s) for s in (out / "statuses").read_text().split()]
        assert statuses, block.where
        refused = next((r for key, r in REFUSED.items() if key in block.text), None)
        allowed = refused[0] if refused else set()
        for i, status in enumerate(statuses, start=1):
            body = (out / f"body.{i}").read_text()
            assert status < 500 and status not in MALFORMED, f"{block.where} #{i}: {body}"
            assert 200 <= status < 300 or status in allowed, f"{block.where} #{i}: {body}"
            json.loads(body)  # every answer is JSON
