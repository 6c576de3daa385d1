"""What ``make dev`` shows while it runs: one access line per request, unless asked for more.

A deployed function writes JSON to stdout (Powertools log records, CloudWatch EMF metrics) and
CloudWatch keeps it. Locally the same records, two or three per request, bury the one thing a
developer watches: which requests came in and how they ended. So by default the dev console
shows the gateway's access line per request (``POST /conversations/c1/tools/form_fill -> 200
(31 ms)``, on stderr) and, from the functions' stdout, only what needs a look: a record at
``WARNING`` or above, condensed to one line, and anything that is not a JSON record (a stray
``print``). ``python -m formwork.infra.local --json-logs`` passes the functions' stdout through as
it is, JSON, exactly what Lambda would send to CloudWatch.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

QUIET_LEVELS = frozenset({"DEBUG", "INFO"})
"""Log levels the readable console leaves out (``--json-logs`` shows them)."""

_LOCK = threading.Lock()


def emit(text: str, stream: IO[str] | None = None) -> None:
    """Write one line to the console (stdout by default) in one piece, from any thread."""
    out = stream if stream is not None else sys.stdout
    with _LOCK:
        out.write(text + "\n")
        out.flush()


def readable(function: str, line: str) -> str | None:
    """What the readable console shows for one line ``function`` wrote to stdout, or None.

    EMF metric records and log records below ``WARNING`` are left out; a warning or an error
    becomes ``<function> <LEVEL> <message> [<exception>] (<location>)``, followed by the
    record's traceback, indented, when it carries one; a line that is not a JSON object, or an
    object that is neither a log record nor a metric, is shown as it is.
    """
    text = line.rstrip("\r\n")
    if not text.strip():
        return None
    try:
        record: Any = json.loads(text)
    except ValueError:
        return text
    if not isinstance(record, dict):
        return text
    if "_aws" in record:
        return None
    level = record.get("level")
    if not isinstance(level, str):
        return text
    if level.upper() in QUIET_LEVELS:
        return None
    shown = f"{function} {level.upper()} {record.get('message', '')}"
    exception = record.get("exception_name")
    if exception:
        shown += f" [{exception}]"
    location = record.get("location")
    if location:
        shown += f" ({location})"
    trace = record.get("exception")
    if isinstance(trace, str) and trace.strip():
        shown += "".join(f"\n    {row}" for row in trace.strip().splitlines())
    return shown


def function_console(function: str, json_logs: bool) -> Callable[[str], None] | None:
    """Where the stdout lines of ``function``'s environments go: None leaves them on this
    process's stdout untouched (``--json-logs``); otherwise each goes through ``readable``."""
    if json_logs:
        return None

    def show(line: str) -> None:
        shown = readable(function, line)
        if shown is not None:
            emit(shown)

    return show
