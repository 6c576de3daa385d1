"""What starts the local stack's functions beside the gateway, while it runs Temporal: the
template's event sources of each function (a ``DynamoDB`` stream for the relay, a schedule for
the sweeper), and the timer that stands in for a schedule."""

from __future__ import annotations

import sys
import threading
from collections.abc import Mapping
from typing import Any

from formwork.infra.local.runtime import ProcessFunction

NOT_RUN_LOCALLY = frozenset({"WorkerBacklogFunction"})
"""Scheduled functions the local stack does not run: the worker service's scaling metric
(nothing scales here; ``make dev`` runs one worker)."""


def functions_by_event(template: Mapping[str, Any]) -> dict[str, set[str]]:
    """Each serverless function's event source types (``HttpApi``, ``DynamoDB``, ...)."""
    found: dict[str, set[str]] = {}
    for logical_id, resource in template.get("Resources", {}).items():
        if resource.get("Type") == "AWS::Serverless::Function":
            events = (resource.get("Properties", {}).get("Events") or {}).values()
            found[logical_id] = {str(e.get("Type")) for e in events}
    return found


def every(seconds: float, stop: threading.Event, function: ProcessFunction) -> None:
    """Invoke ``function`` with a scheduled event every ``seconds`` until ``stop`` is set."""
    event = {"source": "aws.scheduler", "detail-type": "Scheduled Event", "detail": {}}
    while not stop.wait(seconds):
        try:
            function.invoke(event)
        except Exception as exc:
            print(f"{function.config.logical_id}: {exc}", file=sys.stderr, flush=True)
