"""How the demo prints a turn and checks an outcome: text wrapped to ``WIDTH`` columns under a
prefix (``say``), values as one-line JSON (``compact``), and ``expect``, which stops the run with
a message when an outcome the script relies on does not happen (so the demo doubles as a smoke
test).
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

WIDTH = 96


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def say(prefix: str, text: str, indent: int = 4) -> None:
    print(
        textwrap.fill(
            text,
            WIDTH,
            initial_indent=" " * indent + prefix,
            subsequent_indent=" " * (indent + len(prefix)),
            break_on_hyphens=False,
        )
    )


def expect(condition: object, what: str) -> None:
    if not condition:
        raise SystemExit(f"demo: expected {what}, but it did not happen")
